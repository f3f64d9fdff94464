"""scripts/list_predictions.py: every prediction listed, and none answerable from a scenario's name or repeated.

The rule tests build small chapters in a temp root; the last test runs the
script on this checkout's chapters (and checks docs/predictions.md is current).
"""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.slow  # every test runs the listing script in a subprocess

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
    chapter(
        tmp_path,
        "01_one.ipynb",
        [
            code('mystery = labkit.teaching.predict.mystery("A")\nmystery'),
            predict(),
            code("outcome = mystery.run()"),
            check(),
            md("The model asks for `read_ticket(42)`, then says it is done. The status is `Incomplete` or not?"),
            code('steps = [labkit.Call("read_ticket", {"input": 42}), "Review finished."]'),
            predict(),
            # naming the scenario after the prediction is the way to reveal it
            code('outcome = labkit.run(labkit.prepare("complete", transport=labkit.ScriptedTransport(steps)))'),
            check(),
        ],
    )
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
    chapter(
        tmp_path,
        "01_one.ipynb",
        [
            md("Will it be `Incomplete` or `Completed`? The deadline is far; the budget is complete."),
            code('steps = ["Review finished."]'),
            predict(),
            code("outcome = labkit.run(steps)"),
            check(),
        ],
    )
    done = listing(tmp_path)
    assert done.returncode == 0, done.stdout


def test_a_prediction_that_repeats_an_earlier_one_breaks_the_rule_across_chapters(tmp_path):
    same = 'steps = [labkit.Call("read_ticket", {"input": 42})] * 3'
    chapter(tmp_path, "01_one.ipynb", [code(same), predict(), check()])
    chapter(
        tmp_path,
        "02_two.ipynb",
        [
            code(same.replace(" * 3", "  *  3")),
            predict('my_tool_calls = 1\nmy_status = "RepeatedCall"'),
            check(),
            code(same),
            predict("my_status = 'RepeatedCall'"),
            check(),  # other names: another question
        ],
    )
    done = listing(tmp_path)
    assert done.returncode == 1
    broken = [line for line in done.stdout.splitlines() if "BREAKS THE RULE" in line]
    assert broken == ["    BREAKS THE RULE: repeats the prediction of 01_one.ipynb cell c3 (same setup and names)"]
    assert "1 of 3 predictions break the rule" in done.stdout


def test_prose_only_setups_are_compared_by_their_prose(tmp_path):
    chapter(
        tmp_path,
        "01_one.ipynb",
        [
            code('first = labkit.teaching.predict.mystery("A")'),
            predict(),
            check(),
            md("The model asks for a tool it may not use."),
            predict(),
            check(),
            md("The model never answers."),
            predict(),
            check(),
            md("The model asks for a tool it may not use."),
            predict(),
            check(),
        ],
    )
    done = listing(tmp_path)
    assert done.stdout.count("BREAKS THE RULE") == 1 and "repeats the prediction of 01_one.ipynb cell c6" in done.stdout


def objectives(*bullets: str) -> nbformat.NotebookNode:
    return md("**Time:** 5 minutes.\n\n**What you will be able to do**\n\n" + "\n".join(f"- {b}" for b in bullets))


@pytest.mark.parametrize(
    ("cells", "reason"),
    [
        # the objectives give the answer (ch 3's "how `Incomplete` keeps the text"), or its reason (ch 2's
        # "the loop, the tools, the scope and the guard are the same", ch 8's "counted once, however many pieces")
        (
            [objectives("see why the host stops a repeat with `RepeatedCall`"), md("## Predict"), code("steps = [1]")],
            "the objectives give RepeatedCall",
        ),
        (
            [
                objectives("that a streamed call is counted once, however many pieces it arrives in"),
                md("## Predict"),
                code("steps = [2]"),
                predict("my_calls = 3             # one per reply, however many pieces it arrives in"),
                check(),
            ],
            "the objectives give its reason (arriv, however, many, piec)",
        ),
        # a heading gives it (ch 4's "Predict: the first stop wins")
        (
            [
                md("### Predict: the first stop wins"),
                code("steps = [3]"),
                predict('my_reason = "PermissionDenied"     # the first stop reason stays'),
            ],
            "the heading 'Predict: the first stop wins' gives its reason (first, stop)",
        ),
        ([md("## Predict: a RepeatedCall in one reply"), code("steps = [4]")], "the heading 'Predict: a RepeatedCall"),
        # its own case says it (ch 4: "The scope has stopped with `PermissionDenied`"; ch 7's table two cells above)
        (
            [md("## Two more calls\n\nThe scope has stopped with `RepeatedCall`. Call it twice.")],
            "its own case states the answer before it: 'The scope has stopped with `RepeatedCall`.'",
        ),
        (
            [
                md("## A table"),
                code(
                    "table",
                ),
                code("steps = [5]"),
            ],
            "its own case states the answer before it: 'mystery A RepeatedCall'",
        ),
    ],
)
def test_an_answer_that_can_be_looked_up_breaks_the_rule(tmp_path, cells, reason):
    for c in cells:
        if c.source == "table":
            c["outputs"] = [nbformat.v4.new_output("execute_result", data={"text/plain": "mystery A RepeatedCall"})]
    if not any("solution" in c.metadata.get("tags", []) for c in cells):
        cells = [*cells, predict(), check()]
    chapter(tmp_path, "01_one.ipynb", cells)
    done = listing(tmp_path)
    assert done.returncode == 1 and f"BREAKS THE RULE: looks up: {reason}" in done.stdout, done.stdout


def test_a_status_offered_as_a_choice_or_named_in_another_section_is_no_look_up(tmp_path):
    chapter(
        tmp_path,
        "01_one.ipynb",
        [
            objectives("read a run's events and name the rule that stopped it"),
            md("## The broken record\n\nIt ended `RepeatedCall`."),  # another section's case
            md("## Predict: a new script\n\nWill it be `RepeatedCall` or `ToolBudget`? Or `RepeatedCall`?"),
            code('steps = ["x"]'),
            predict(),
            check(),
        ],
    )
    done = listing(tmp_path)
    assert done.returncode == 0, done.stdout


def test_the_same_case_as_an_earlier_prediction_or_folded_answer_breaks_the_rule(tmp_path):
    chapter(
        tmp_path,
        "01_one.ipynb",
        [
            md(
                "## Questions\n\n**1.** With 5 attempts per signature, how does the broken record end?\n\n"
                "<details><summary>Answer</summary>\n\n`ToolBudget` after 4: the tool budget admits only 4 attempts "
                "and the fifth attempt is refused.\n\n</details>"
            ),
        ],
    )
    chapter(
        tmp_path,
        "02_two.ipynb",
        [
            md("## Predict: a new id every call\n\nIt asks for `read_ticket(1)`, then `read_ticket(2)`, and so on."),
            predict('my_status = "ToolBudget"   # 4 attempts admitted, the 5th refused\nmy_tool_calls = 4'),
            check(),
            md(
                "## Predict: elsewhere\n\nA model that asks for `read_ticket(1)`, then `read_ticket(2)`, in another "
                "loop."
            ),
            code("other_loop = True"),
            predict('my_status = "ToolBudget"\nmy_tool_calls = 4'),
            check(),
        ],
    )
    done = listing(tmp_path)
    assert "repeats a folded answer of 01_one.ipynb" in done.stdout
    assert "repeats the case of 02_two.ipynb cell c3 (same calls, same answer)" in done.stdout


@pytest.mark.parametrize(
    ("comments", "broken"),
    [
        (["# model call 1 asks for this", "# model call 2", "# model call 3: text"], True),
        (["", "", "# text, no tool call"], False),
        (["# model call 1", "# model call 2", ""], False),  # numbered up to 2, the count asked is 3
    ],
)
def test_setup_comments_that_number_the_model_calls_up_to_the_count_break_the_rule(tmp_path, comments, broken):
    steps = ['labkit.Call("read_ticket", {"input": 42}),', 'labkit.Call("finish_review", {"input": 42}),', '"Done.",']
    script = "\n".join(f"    {step}  {note}".rstrip() for step, note in zip(steps, comments, strict=True))
    chapter(
        tmp_path,
        "01_one.ipynb",
        [
            code(f"reviewer = [\n{script}\n]"),
            predict('my_status = "Completed"\nmy_model_calls = {"simple": 3, "harness": 3}'),
            check(),
        ],
    )
    done = listing(tmp_path)
    found = "looks up: a setup comment numbers the model calls up to 3" in done.stdout
    assert found is broken, done.stdout
    assert (done.returncode == 1) is broken, done.stdout


def test_the_chapters_follow_the_rule_and_the_list_in_the_docs_is_current():
    done = listing(ROOT, "--check")
    assert "out of date" not in done.stdout, done.stdout
    assert "BREAKS THE RULE" not in done.stdout, done.stdout
    assert done.returncode == 0, done.stdout


# -- a hint that gives the answer -----------------------------------------------------------------

import importlib.util  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_spec = importlib.util.spec_from_file_location("list_predictions", SCRIPT)
lp = importlib.util.module_from_spec(_spec)
sys.modules["list_predictions"] = lp  # its dataclasses look their module up
_spec.loader.exec_module(lp)

REASON_WORDS = ["refused", "attempt", "budget", "signature", "reservation", "caller", "guard", "record"]
NUDGE_WORDS = ["walk", "steps", "order", "picture", "instant", "count", "read", "think"]
VALUES = st.sampled_from([("RepeatedCall", 3), ("ToolBudget", 4), ("PermissionDenied", 2), ("ModelBudget", 6)])


def _item(values: tuple[object, ...], reason: str) -> object:
    return lp.Prediction(
        "01_one.ipynb", "c3", 3, ("my_status", "my_tool_calls"), "", "", "", values, lp.content_words(reason)
    )


@settings(max_examples=60, deadline=None)
@given(values=VALUES, words=st.lists(st.sampled_from(REASON_WORDS), min_size=3, max_size=5, unique=True))
def test_a_hint_that_states_its_reason_breaks_the_rule_and_the_same_words_asked_do_not(values, words):
    item = _item(values, " ".join(REASON_WORDS))
    stated = f"Think it through. The {' and the '.join(words)} decide it."
    assert lp._hint_lookups(item, stated), stated
    asked = f"Does the {' or the '.join(words)} decide it? Which comes first?"
    assert lp._hint_lookups(item, asked) == [], asked


@settings(max_examples=60, deadline=None)
@given(
    values=VALUES,
    words=st.lists(st.sampled_from(REASON_WORDS), min_size=3, max_size=5, unique=True),
    mark=st.sampled_from([":", ";"]),
)
def test_a_reason_stated_before_a_question_s_colon_breaks_the_rule(values, words, mark):
    """Found in chapter 9: "The body never checks its token ...: which limit ...?" states the answer, then asks."""
    item = _item(values, " ".join(REASON_WORDS))
    stated = f"The {' and the '.join(words)} decide it{mark} which comes first?"
    assert lp._hint_lookups(item, stated), stated
    asked = f"Which comes first{mark} the {' or the '.join(words)}?"  # the reason words are what it asks about
    assert lp._hint_lookups(item, asked) == [], asked


@settings(max_examples=60, deadline=None)
@given(values=VALUES, which=st.integers(0, 1), question=st.booleans(), filler=st.lists(st.sampled_from(NUDGE_WORDS)))
def test_a_hint_holding_a_value_breaks_the_rule_even_asked(values, which, question, filler):
    item = _item(values, " ".join(REASON_WORDS))
    text = f"{' '.join(filler)} is it {values[which]}{'?' if question else '.'}"
    found = lp._hint_lookups(item, text)
    assert found and f"its hint gives {values[which]}" in found[0], text


@settings(max_examples=60, deadline=None)
@given(
    values=VALUES,
    words=st.lists(st.sampled_from(REASON_WORDS), max_size=2, unique=True),
    filler=st.lists(st.sampled_from(NUDGE_WORDS), min_size=1),
)
def test_a_hint_that_nudges_passes(values, words, filler):
    """Two reason words stated, any number asked, no value: a nudge."""
    item = _item(values, " ".join(REASON_WORDS))
    text = f"{' '.join(filler)} the {' '.join(words)}. Which {' '.join(REASON_WORDS)} comes first?"
    assert lp._hint_lookups(item, text) == [], text


def test_a_chapter_s_hint_that_gives_the_answer_is_reported(tmp_path):
    cell = predict('my_status = "RepeatedCall"  # the signature already had its one attempt\nmy_tool_calls = 1')
    cell.metadata["labkit"]["hint"] = "Each signature gets one attempt; this one already had it."
    chapter(tmp_path, "01_one.ipynb", [code('steps = ["x"]'), cell, check()])
    done = listing(tmp_path)
    assert done.returncode == 1 and "looks up: its hint gives its reason (already, attempt, signature)" in done.stdout


@pytest.mark.parametrize("shown", [0, 1, 2])
def test_a_cell_that_shows_the_run_between_the_guess_and_the_check_breaks_the_rule(tmp_path, shown):
    # under Run All, what a cell shows after the guess and before the check is the answer, read first
    table = code("events_frame(outcome)")
    table.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "kind name count"})]
    chart = code("counters_chart(outcome)")
    chart.outputs = [nbformat.v4.new_output("display_data", {"text/plain": "<Figure>"})]
    steps = code('steps = [labkit.Call("read_ticket", {"input": 42}), "Review finished."]')
    quiet = code("outcome = labkit.run(labkit.prepare(labkit.Scenario('s', 'd', steps)))")
    shows = [copy.deepcopy(cell) for cell in (table, chart)][:shown]
    chapter(tmp_path, "01_one.ipynb", [steps, predict(), quiet, *shows, check(), table, chart])
    done = listing(tmp_path)
    broken = [line for line in done.stdout.splitlines() if "shows the run before its check" in line]
    if shown:
        ids = ", ".join(f"c{5 + k}" for k in range(shown))
        rule = f"shows the run before its check (cell {ids}): check first, then show the tables"
        assert broken == [f"    BREAKS THE RULE: {rule}"]
        assert done.returncode == 1
    else:  # a quiet run between them, and the tables after the check: nothing on screen before the verdict
        assert broken == [] and done.returncode == 0, done.stdout
