"""The generated parts of the workbook are current, and the generators do what they say.

* ``scripts/build_navigation.py --check``: the navigation cells and notebooks/00_contents.md.
* ``scripts/build_workbook.py --check``: the learner edition in workbook/.
Both exit non-zero when a run would change a file; the tests below also prove that on a copy.
"""

import ast
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "scripts"


def load(name: str):
    sys.path.insert(0, str(SCRIPTS))
    try:
        spec = importlib.util.spec_from_file_location(f"_scripts_{name}", SCRIPTS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[f"_scripts_{name}"] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(SCRIPTS))


def run(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPTS / script), *args], capture_output=True, text=True, cwd=ROOT, check=False
    )


@pytest.mark.parametrize("script", ["build_navigation.py", "build_workbook.py"])
def test_generated_files_are_current(script):
    result = run(script, "--check")
    # what a learner may read when this fails: name no command that could erase their work
    assert result.returncode == 0, (
        f"generated files differ from what scripts/{script} makes from notebooks/:\n{result.stdout}"
        "Learners: work in my-workbook/ (`make lab` makes it), never in workbook/ or notebooks/.\n"
        "Authors, after editing a chapter in notebooks/: `make notebooks` (it first copies any workbook/ chapter "
        "holding saved work into my-workbook/, so nothing is lost), then commit."
    )


@pytest.fixture
def copy_root(tmp_path):
    for folder in ("notebooks", "workbook"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    return tmp_path


def test_check_mode_reports_a_stale_copy_and_a_rebuild_fixes_it(copy_root):
    chapter = copy_root / "notebooks" / "02_choosing_the_runtime.ipynb"
    nb = nbformat.read(chapter, as_version=4)
    nb.cells[0].source = nb.cells[0].source.replace("Choosing the runtime", "Picking a runtime", 1)
    nbformat.write(nb, chapter)

    nav = run("build_navigation.py", "--check", "--root", str(copy_root))
    assert nav.returncode == 1
    assert "notebooks/00_contents.md" in nav.stdout and "01_a_loop_needs_an_owner.ipynb" in nav.stdout
    book = run("build_workbook.py", "--check", "--root", str(copy_root))
    assert book.returncode == 1 and "workbook/02_choosing_the_runtime.ipynb" in book.stdout

    assert run("build_navigation.py", "--root", str(copy_root)).returncode == 0
    assert run("build_workbook.py", "--root", str(copy_root)).returncode == 0
    assert run("build_navigation.py", "--check", "--root", str(copy_root)).returncode == 0
    assert run("build_workbook.py", "--check", "--root", str(copy_root)).returncode == 0
    assert "Picking a runtime" in (copy_root / "notebooks" / "00_contents.md").read_text()
    assert "Picking a runtime" in (copy_root / "workbook" / "README.md").read_text()


def test_check_mode_reports_a_missing_navigation_cell(copy_root):
    chapter = copy_root / "notebooks" / "05_repetition_vs_progress.ipynb"
    nb = nbformat.read(chapter, as_version=4)
    nb.cells = [c for c in nb.cells if c.get("id") != "navigation"]
    nbformat.write(nb, chapter)
    result = run("build_navigation.py", "--check", "--root", str(copy_root))
    assert result.returncode == 1 and "05_repetition_vs_progress.ipynb" in result.stdout


def test_scaffold_keeps_names_and_hides_values():
    book = load("build_workbook")
    source = 'my_status = "RepeatedCall"   # why\nmy_tool_calls = (\n    1\n)'
    assert book.scaffold(source) == "my_status = ...  # your guess\nmy_tool_calls = ...  # your guess"
    with pytest.raises(SystemExit):
        book.scaffold("print('no guess here')")


@settings(max_examples=60, deadline=None)
@given(labels=st.lists(st.text("abcdefgh-_ ", min_size=1, max_size=16), min_size=1, max_size=8, unique=True))
def test_a_long_guess_per_label_is_one_label_per_line_and_still_reads_as_untouched(labels):
    book = load("build_workbook")
    source = "my_same = {" + ", ".join(f"{label!r}: True" for label in labels) + "}"
    scaffold = book.scaffold(source)
    lines = scaffold.splitlines()
    ast.parse(scaffold)  # valid Python, every value ...
    assert all(len(line) <= book.SCAFFOLD_WIDTH + 20 for line in lines)
    single = "my_same = {" + ", ".join(f'"{label}": ...' for label in labels) + "}  # your guess"
    assert (len(lines) == 1) == (len(single) <= book.SCAFFOLD_WIDTH)
    assert all(f'"{label}"' in scaffold for label in labels) and "True" not in scaffold
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(scaffold, metadata={"tags": ["guess"]}))
    assert not book.holds_saved_work(nb)  # the generated scaffold is not saved work
    nb.cells[0].source = scaffold.replace("...", "True", 1)
    assert book.holds_saved_work(nb)  # one label filled in is


def test_one_guess_per_label_keeps_its_labels_and_hides_its_values():
    book = load("build_workbook")
    source = 'my_calls = {"function": 0, "simple": 3}\nmy_codes = [2, 0]'
    scaffold = book.scaffold(source)
    assert scaffold == 'my_calls = {"function": ..., "simple": ...}  # your guess\nmy_codes = ...  # your guess'
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(scaffold, metadata={"tags": ["guess"]})
    nb.cells.append(cell)
    assert not book.holds_saved_work(nb)  # untouched: the generated scaffold
    cell.source = scaffold.replace('"function": ...', '"function": 0')
    assert book.holds_saved_work(nb)  # one label filled in is the learner's work
    cell.source = scaffold.replace("my_codes = ...", "my_codes = [2, 0]")
    assert book.holds_saved_work(nb)


def test_hint_folds_the_answer_below_the_nudge_and_falls_back_to_a_generic_nudge():
    book = load("build_workbook")
    folded = book.hint('my_status = "RepeatedCall"', "Which guard step looks at a call made before?")
    assert folded.index("Which guard step") < folded.index("<summary>Answer</summary>") < folded.index("RepeatedCall")
    assert folded.count("<details>") == folded.count("</details>") == 2
    assert book.GENERIC_NUDGE in book.hint("my_tool_calls = 1")
    bare = nbformat.v4.new_code_cell("my_tool_calls = 1", metadata={"tags": ["solution"]})
    assert book.nudge_of(bare) is None
    bare.metadata["labkit"] = {"hint": "  Count the admitted attempts.  "}
    assert book.nudge_of(bare) == "Count the admitted attempts."


def test_an_exercise_cell_becomes_its_skeleton_with_the_solved_cell_folded_in_its_hint():
    book = load("build_workbook")
    solved = 'board["Incomplete"] = ScriptedModel(["Review finished."])'
    skeleton = 'board["Incomplete"] = ...  # ScriptedModel([...])'
    cell = nbformat.v4.new_code_cell(
        solved, metadata={"tags": ["exercise"], "labkit": {"hint": "What must still be false?", "skeleton": skeleton}}
    )
    cell["id"] = "square"
    cell.outputs = [nbformat.v4.new_output("stream", text="ran\n")]
    nb = nbformat.v4.new_notebook(cells=[cell])
    learner = book.learner_edition(nb, "nav")
    exercise, help_cell, nav = learner.cells
    assert exercise.source == skeleton and exercise.outputs == [] and exercise.id == "square"
    assert exercise.metadata["tags"] == ["exercise"] and "labkit" not in exercise.metadata
    assert help_cell.id == "square-hint"
    assert help_cell.source == book.hint(solved, "What must still be false?")
    assert nav.id == "navigation"
    for broken in ({"hint": "h"}, {"hint": "h", "skeleton": "   "}, {"hint": "h", "skeleton": "class X(:"}):
        cell.metadata["labkit"] = broken
        with pytest.raises(SystemExit, match="exercise cell square"):
            book.learner_edition(nbformat.v4.new_notebook(cells=[cell]), "nav")


def test_every_exercise_cell_has_a_nudge_and_a_skeleton_that_is_not_its_answer():
    for path in chapters("notebooks"):
        for cell in nbformat.read(path, as_version=4).cells:
            if "exercise" not in cell.metadata.get("tags", []):
                continue
            own = cell.metadata.get("labkit", {})
            assert isinstance(own.get("hint"), str) and own["hint"].strip(), f"{path.name} cell {cell.id}: no hint"
            assert isinstance(own.get("skeleton"), str) and own["skeleton"].strip() != cell.source.strip()


def test_every_predict_cell_has_its_own_nudge_that_does_not_name_the_answer():
    for path in chapters("notebooks"):
        for cell in nbformat.read(path, as_version=4).cells:
            if "solution" not in cell.metadata.get("tags", []):
                continue
            nudge = cell.metadata.get("labkit", {}).get("hint")
            assert isinstance(nudge, str) and nudge.strip(), f"{path.name} cell {cell.id}: predict cell without a hint"
            for node in ast.parse(cell.source).body:  # a nudge never spells out a guessed status or name
                if (
                    isinstance(node, ast.Assign)
                    and isinstance(node.value, ast.Constant)
                    and isinstance(node.value.value, str)
                ):
                    assert node.value.value not in nudge, f"{path.name} cell {cell.id}: the hint names the answer"


def chapters(folder: str) -> list[Path]:
    return sorted((ROOT / folder).glob("[0-9][0-9]_*.ipynb"))


def test_the_learner_edition_has_every_guess_scaffolded_with_its_hint_and_no_outputs():
    assert [p.name for p in chapters("workbook")] == [p.name for p in chapters("notebooks")]
    for reference, learner in zip(chapters("notebooks"), chapters("workbook"), strict=True):
        ref = nbformat.read(reference, as_version=4)
        book = nbformat.read(learner, as_version=4)
        solutions = [c for c in ref.cells if {"solution", "exercise"} & set(c.metadata.get("tags", []))]
        hints = [c.source for c in book.cells if c.cell_type == "markdown" and c.source.startswith("<details>")]
        assert solutions, f"{reference.name} has no predict cell"
        assert len(hints) == len(solutions)
        for solution, hint in zip(solutions, hints, strict=True):
            nudge = solution.metadata["labkit"]["hint"].strip()
            # the nudge first, then the answer folded one level deeper
            assert hint.startswith(
                "<details><summary>Hint</summary>\n\n" + nudge + "\n\n<details><summary>Answer</summary>"
            )
            assert hint.index(solution.source) > hint.index("<summary>Answer</summary>")
            assert hint.endswith("</details>\n\n</details>")
        skeletons = {c.id: c.metadata["labkit"]["skeleton"] for c in solutions if "exercise" in c.metadata["tags"]}
        for cell in book.cells:  # an exercise is left for the learner: its skeleton, not its answer
            if cell.get("id") in skeletons:
                assert cell.source == skeletons[cell.id], learner.name
        for cell in book.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, learner.name
                assert "solution" not in cell.metadata.get("tags", [])
        guesses = [c.source for c in book.cells if "guess" in c.metadata.get("tags", [])]
        untouched = load("build_workbook").UNTOUCHED
        assert all(untouched.fullmatch(line) for g in guesses for line in g.splitlines())
        assert "[Contents](README.md)" in book.cells[-1].source


def test_every_chapter_has_the_required_shape():
    for path in chapters("notebooks"):
        nb = nbformat.read(path, as_version=4)
        cells = nb.cells
        # the skeleton itself (issue 18) is checked by tests/test_chapter_skeleton.py
        assert cells[0].source.startswith("# Chapter ") and "**What you will be able to do**" in cells[0].source
        code = [c for c in cells if c.cell_type == "code"]
        assert "import labkit" in code[0].source
        assert sum("import labkit" in c.source for c in code) == 1, f"{path.name}: imports in one cell"
        text = "\n".join(c.source for c in cells if c.cell_type == "markdown")
        for heading in ("## Questions", "## Key points", "## Instructor notes", "## Explore"):
            assert heading in text, f"{path.name}: missing {heading}"
        panels = [c for c in code if "explorer(" in c.source]
        assert len(panels) == 1 and "nbval-ignore-output" in panels[0].metadata.get("tags", [])
        for c in code:  # nbval markers are cell tags, never comments a learner would read
            assert "NBVAL_" not in c.source, f"{path.name}: use the nbval cell tags, not a marker comment"
        # every check follows a predict cell (or an exercise: the learner's code, e.g. chapter 7's hosts),
        # with no other check in between; every predict cell is checked (an exercise may have its own checker)
        waiting = predicted = False
        for c in code:
            tags = c.metadata.get("tags", [])
            if "solution" in tags or "exercise" in tags:
                assert not predicted, f"{path.name}: a predict cell that is never checked"
                waiting, predicted = True, "solution" in tags
            elif "labkit.check(" in c.source or "labkit.compare(" in c.source:
                assert waiting, f"{path.name}: a check cell without a predict cell before it"
                waiting = predicted = False
        assert not predicted, f"{path.name}: a predict cell that is never checked"
        assert cells[-1].get("id") == "navigation"


def test_make_lab_opens_chapter_one_of_the_learners_copy_and_the_readme_names_both_editions():
    lab = load("lab")
    assert lab.default_url(ROOT) == f"/lab/tree/my-workbook/{chapters('workbook')[0].name}"
    makefile = (ROOT / "Makefile").read_text().splitlines()
    assert makefile[makefile.index("lab: $(LAB_STAMP)") + 1].strip().startswith("$(BIN)/python scripts/lab.py")
    assert "my-workbook/" in (ROOT / ".gitignore").read_text().splitlines()
    readme = (ROOT / "workbook" / "README.md").read_text()
    assert "`workbook/`" in readme and "`notebooks/`" in readme and "`my-workbook/`" in readme


def save_a_guess(path: Path) -> bytes:
    """Fill the first guess of a learner-edition chapter and store an output, as JupyterLab would save it."""
    nb = nbformat.read(path, as_version=4)
    guess = next(c for c in nb.cells if "guess" in c.metadata.get("tags", []))
    name = guess.source.split("=", 1)[0].strip()
    guess.source = f'{name} = "RepeatedCall"  # my own guess'
    guess.execution_count = 1
    guess.outputs = [nbformat.v4.new_output("stream", name="stdout", text="my note\n")]
    nbformat.write(nb, path)
    return path.read_bytes()


def test_a_rebuild_copies_a_workbook_chapter_holding_saved_work_into_the_learners_copy_first(copy_root):
    book = load("build_workbook")
    chapter = copy_root / "workbook" / "03_a_full_cycle.ipynb"
    assert not book.holds_saved_work(nbformat.read(chapter, as_version=4))
    saved = save_a_guess(chapter)
    assert book.holds_saved_work(nbformat.read(chapter, as_version=4))
    (copy_root / "my-workbook").mkdir()
    (copy_root / "my-workbook" / "03_a_full_cycle.saved-from-workbook.ipynb").write_text("an older rescue")

    result = run("build_workbook.py", "--root", str(copy_root))
    assert result.returncode == 0, result.stdout + result.stderr
    kept = copy_root / "my-workbook" / "03_a_full_cycle.saved-from-workbook-2.ipynb"
    assert kept.read_bytes() == saved and str(kept.relative_to(copy_root)) in result.stdout
    assert (copy_root / "my-workbook" / "03_a_full_cycle.saved-from-workbook.ipynb").read_text() == "an older rescue"
    assert not book.holds_saved_work(nbformat.read(chapter, as_version=4))  # workbook/ is the generated edition again
    assert run("build_workbook.py", "--check", "--root", str(copy_root)).returncode == 0


def test_the_appendix_is_in_both_editions_and_its_live_cells_compare_no_output():
    """Appendix A: outside the chapters' numbering, listed on both contents pages.

    What a server says is not compared.
    """
    appendices = sorted((ROOT / "notebooks").glob("appendix_*.ipynb"))
    assert [p.name for p in appendices] == ["appendix_a_real_model.ipynb"]
    assert [p.name for p in sorted((ROOT / "workbook").glob("appendix_*.ipynb"))] == [p.name for p in appendices]
    for path in appendices:
        assert path.name in (ROOT / "notebooks" / "00_contents.md").read_text()
        assert path.name in (ROOT / "workbook" / "README.md").read_text()
        ref = nbformat.read(path, as_version=4)
        assert (
            ref.cells[0].source.startswith("# Appendix A — ")
            and "**What you will be able to do**" in ref.cells[0].source
        )
        assert ref.cells[-1].get("id") == "navigation" and "[Contents](00_contents.md)" in ref.cells[-1].source
        code = [c for c in ref.cells if c.cell_type == "code"]
        assert all("NBVAL_" not in c.source for c in code)
        for c in code:  # a cell whose output is what a server (or the environment) says is never compared
            if re.search(r"\b(live|streamed|run_live|os\.environ)\b", c.source) and not c.source.startswith("def "):
                assert "nbval-ignore-output" in c.metadata.get("tags", []), f"{path.name} cell {c.id}"
        stored = "".join(o.get("text", "") for c in code for o in c.outputs)
        from labkit.loops.review import INSTRUCTIONS, PROMPT

        assert f"system: {INSTRUCTIONS}\nuser: {PROMPT}\n" in stored  # the model's instructions, shown as sent
        book = nbformat.read(ROOT / "workbook" / path.name, as_version=4)
        assert all(c.outputs == [] and c.execution_count is None for c in book.cells if c.cell_type == "code")
        assert "[Contents](README.md)" in book.cells[-1].source
