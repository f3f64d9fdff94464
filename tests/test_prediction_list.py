"""scripts/list_predictions.py: every prediction listed, and none answerable from a scenario's name or repeated.

The rule tests build small chapters in a temp root; the last test runs the
script on this checkout's chapters (and checks docs/predictions.md is current).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "list_predictions.py"
md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell


def predict(source: str = 'my_status = "RepeatedCall"\nmy_tool_calls = 1') -> nbformat.NotebookNode:
    return code(source, metadata={"tags": ["solution"], "labkit": {"hint": "Which rule looks at identical calls?"}})


def check() -> nbformat.NotebookNode:
    return code("labkit.check(outcome, status=my_status, tool_calls=my_tool_calls)")


def chapter(root: Path, name: str, cells: list[nbformat.NotebookNode]) -> None:
    (root / "notebooks").mkdir(parents=True, exist_ok=True)
    nb = nbformat.v4.new_notebook(cells=[md(f"# Chapter {name[:2]} — Test"), code("import labkit"), *cells])
    for index, cell in enumerate(nb.cells):
        cell["id"] = f"c{index}"
    nbformat.write(nb, root / "notebooks" / name)


def listing(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(root), *args], capture_output=True, text=True)


def test_a_mystery_and_a_script_described_by_its_steps_pass_and_the_list_is_written(tmp_path):
    chapter(tmp_path, "01_one.ipynb", [
        code('mystery = labkit.teaching.predict.mystery("A")\nmystery'), predict(),
        code("outcome = mystery.run()"), check(),
        md("The model asks for `read_ticket(42)`, then says it is done. The status is `Incomplete` or not?"),
        code('steps = [labkit.Call("read_ticket", {"input": 42}), "Review finished."]'), predict(),
        # naming the scenario after the prediction is the way to reveal it
        code('outcome = labkit.run(labkit.prepare("complete", transport=labkit.ScriptedTransport(steps)))'), check(),
    ])
    done = listing(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("01_one.ipynb")]
    assert lines == [
        "01_one.ipynb  cell c3  predicts my_status, my_tool_calls  "
        'setup: mystery = labkit.teaching.predict.mystery("A"); mystery',
        "01_one.ipynb  cell c8  predicts my_status, my_tool_calls  "
        'setup: steps = [labkit.Call("read_ticket", {"input": 42}), "Review finished."]',
    ]
    doc = (tmp_path / "docs" / "predictions.md").read_text()
    assert "2 predictions, 0 breaking the rule." in doc and "| 01 | `c3` | my_status, my_tool_calls |" in doc
    assert listing(tmp_path, "--check").returncode == 0
    (tmp_path / "docs" / "predictions.md").write_text("stale")
    stale = listing(tmp_path, "--check")
    assert stale.returncode == 1 and "out of date: docs/predictions.md" in stale.stdout
    assert (tmp_path / "docs" / "predictions.md").read_text() == "stale"  # --check writes nothing


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        ([md("Predict what `deadline` does.")], "its setup names the scenario 'deadline'"),
        ([md('The "complete" scenario, with a twist.')], "its setup names the scenario 'complete'"),
        ([code("setup = labkit.prepare('repeat')")], "by name before the prediction: prepare('repeat')"),
        ([code('outcome = labkit.run(scenario="changing")')], "run('changing')"),
    ],
)
def test_a_setup_that_names_its_scenario_breaks_the_rule(tmp_path, setup, reason):
    chapter(tmp_path, "01_one.ipynb", [*setup, predict(), code("outcome = labkit.run(setup)"), check()])
    done = listing(tmp_path)
    assert done.returncode == 1
    assert "BREAKS THE RULE" in done.stdout and reason in done.stdout
    assert "1 of 1 predictions break the rule" in done.stdout
    assert reason.split(": ")[-1] in (tmp_path / "docs" / "predictions.md").read_text()


def test_statuses_and_words_that_are_not_quoted_names_do_not_break_it(tmp_path):
    chapter(tmp_path, "01_one.ipynb", [
        md("Will it be `Incomplete` or `Completed`? The deadline is far; the budget is complete."),
        code('steps = ["Review finished."]'), predict(), code("outcome = labkit.run(steps)"), check(),
    ])
    done = listing(tmp_path)
    assert done.returncode == 0, done.stdout


def test_a_prediction_that_repeats_an_earlier_one_breaks_the_rule_across_chapters(tmp_path):
    same = 'steps = [labkit.Call("read_ticket", {"input": 42})] * 3'
    chapter(tmp_path, "01_one.ipynb", [code(same), predict(), check()])
    chapter(tmp_path, "02_two.ipynb", [
        code(same.replace(" * 3", "  *  3")), predict('my_tool_calls = 1\nmy_status = "RepeatedCall"'), check(),
        code(same), predict("my_status = 'RepeatedCall'"), check(),  # other names: another question
    ])
    done = listing(tmp_path)
    assert done.returncode == 1
    broken = [line for line in done.stdout.splitlines() if "BREAKS THE RULE" in line]
    assert broken == ["    BREAKS THE RULE: repeats the prediction of 01_one.ipynb cell c3 (same setup and names)"]
    assert "1 of 3 predictions break the rule" in done.stdout


def test_prose_only_setups_are_compared_by_their_prose(tmp_path):
    chapter(tmp_path, "01_one.ipynb", [
        code('first = labkit.teaching.predict.mystery("A")'), predict(), check(),
        md("The model asks for a tool it may not use."), predict(), check(),
        md("The model never answers."), predict(), check(),
        md("The model asks for a tool it may not use."), predict(), check(),
    ])
    done = listing(tmp_path)
    assert done.stdout.count("BREAKS THE RULE") == 1 and "repeats the prediction of 01_one.ipynb cell c6" in done.stdout


def test_the_chapters_follow_the_rule_and_the_list_in_the_docs_is_current():
    done = listing(ROOT, "--check")
    assert done.returncode == 0, done.stdout
