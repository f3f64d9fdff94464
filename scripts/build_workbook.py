"""Generate the learner edition in ``workbook/`` from the chapter notebooks in ``notebooks/``.

Usage:
    python scripts/build_workbook.py            # rewrite what is out of date
    python scripts/build_workbook.py --check    # exit 1 (and list the files) if anything would change

For each chapter:

* every code cell loses its outputs, execution count and execution timestamps;
* a cell tagged ``solution`` (the predict cells) becomes a scaffold: each
  top-level ``name = value`` keeps its name and gets ``...`` with a
  ``# your guess`` comment (``...`` is valid Python, and ``labkit.check``
  reads it as "no guess yet"); right after it comes a markdown cell with a
  folded ``Hint``: first a nudge, one sentence naming the rule that decides,
  then the answer folded one level deeper (``Answer``). The nudge is the
  predict cell's ``metadata["labkit"]["hint"]``, written with the chapter;
  a predict cell without one gets :data:`GENERIC_NUDGE` (and the workbook
  test fails, so none ships that way);
* a cell tagged ``exercise`` (code the learner writes, e.g. chapter 10's
  scripts and guards) becomes its ``metadata["labkit"]["skeleton"]``, a
  starting point that runs without error; the folded hint after it is made
  as for a predict cell, with the solved cell as the answer;
* the navigation cell links to ``README.md`` instead of the contents page.

The appendices (``notebooks/appendix_*.ipynb``) are made the same way and
listed after the chapters in ``workbook/README.md``.

It also writes ``workbook/README.md`` (how to use the workbook and the
reading order). ``workbook/glossary.md`` and ``workbook/cheatsheet.md`` are written by hand and left alone.

Learners work in their own copy, ``my-workbook/`` (``scripts/lab.py``), never
here. If a chapter in ``workbook/`` holds saved work all the same (outputs, an
execution count, or a filled-in guess), a rebuild first copies it to
``my-workbook/NAME.saved-from-workbook.ipynb`` (the first free name, never over
a file) and says so: no run of this script erases a learner's work.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_navigation as navigation

ROOT = navigation.ROOT
README = "README.md"
GENERIC_NUDGE = (
    "Go through the guard's steps and the limits in their fixed order: the first rule that refuses "
    "names the stop, and only the attempts admitted before it count."
)
"""The nudge for a predict cell that has no ``metadata["labkit"]["hint"]`` of its own."""


SCAFFOLD_WIDTH = 90
"""A scaffold line longer than this (one guess per label) is written one label per line, so none is cut off."""


def scaffold(source: str) -> str:
    """Replace the value of every top-level ``name = value`` with ``...  # your guess``.

    Raises:
        SystemExit: the cell is not valid Python or assigns nothing (a
            solution cell must hold the guesses).
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise SystemExit(f"a solution cell is not valid Python: {exc}") from None
    lines = source.splitlines()
    replaced = False
    for node in reversed(tree.body):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            start, end = node.lineno - 1, (node.end_lineno or node.lineno) - 1
            line = f"{node.targets[0].id} = {_blank(node.value)}  # your guess"
            if len(line) > SCAFFOLD_WIDTH and line.endswith("}  # your guess"):  # one label per line, all in view
                labels = _blank(node.value)[1:-1].split(", ")
                line = "\n".join([f"{node.targets[0].id} = {{  # your guess", *(f"    {lb}," for lb in labels), "}"])
            lines[start : end + 1] = [line]
            replaced = True
    if not replaced:
        raise SystemExit('a solution cell must assign the guesses, e.g. my_status = "RepeatedCall"')
    return "\n".join(lines)


def _blank(value: ast.expr) -> str:
    """``...`` for one guess; ``{"label": ..., ...}`` for one guess per label, so the learner sees the labels."""
    if (
        isinstance(value, ast.Dict)
        and value.keys
        and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in value.keys)
    ):
        return "{" + ", ".join(f"{k.value!r}: ..." for k in value.keys).replace("'", '"') + "}"  # type: ignore[union-attr]
    return "..."


def skeleton_of(cell: nbformat.NotebookNode) -> str:
    """An exercise cell's starting point (``metadata["labkit"]["skeleton"]``).

    Raises:
        SystemExit: the exercise cell has no skeleton, or it is not valid Python.
    """
    text = cell.metadata.get("labkit", {}).get("skeleton")
    if not isinstance(text, str) or not text.strip():
        raise SystemExit(f"exercise cell {cell.get('id')}: metadata labkit.skeleton is missing")
    try:
        ast.parse(text)
    except SyntaxError as exc:
        raise SystemExit(f"exercise cell {cell.get('id')}: its skeleton is not valid Python: {exc}") from None
    return text


def nudge_of(cell: nbformat.NotebookNode) -> str | None:
    """The predict cell's own nudge (``metadata["labkit"]["hint"]``), or ``None``."""
    text = cell.metadata.get("labkit", {}).get("hint")
    return text.strip() if isinstance(text, str) and text.strip() else None


LABELS = ("Hint", "Answer")
"""The two folds' labels; the French edition passes its own (scripts/build_french.py)."""


def hint(source: str, nudge: str | None = None, labels: tuple[str, str] = LABELS) -> str:
    """A folded hint: the nudge first, then the answer (the solution cell) folded one level deeper."""
    return (
        f"<details><summary>{labels[0]}</summary>\n\n"
        + (nudge or GENERIC_NUDGE)
        + f"\n\n<details><summary>{labels[1]}</summary>\n\n```python\n"
        + source
        + "\n```\n\n</details>\n\n</details>"
    )


def learner_edition(nb: nbformat.NotebookNode, nav: str, labels: tuple[str, str] = LABELS) -> nbformat.NotebookNode:
    out = nbformat.v4.new_notebook(metadata=nb.metadata)
    for cell in nb.cells:
        if cell.get("id") == navigation.NAV_ID:
            continue
        if cell.cell_type != "code":
            out.cells.append(cell)
            continue
        tags = list(cell.metadata.get("tags", []))
        # execution timestamps belong to the stored run of the instructor edition, not to the learner's copy
        metadata = {k: v for k, v in cell.metadata.items() if k != "execution"}
        new = nbformat.v4.new_code_cell(cell.source, metadata=metadata)
        new["id"] = cell["id"]
        if "solution" in tags or "exercise" in tags:
            if "solution" in tags:
                new.source = scaffold(cell.source)
                new.metadata["tags"] = [t for t in tags if t != "solution"] + ["guess"]
            else:
                new.source = skeleton_of(cell)
            new.metadata.pop("labkit", None)  # the nudge is in the hint cell below
            help_cell = nbformat.v4.new_markdown_cell(hint(cell.source, nudge_of(cell), labels))
            help_cell["id"] = f"{cell['id']}-hint"[:64]
            out.cells.extend([new, help_cell])
        else:
            out.cells.append(new)
    return navigation.with_navigation(out, nav)


def readme(chapters: list[navigation.Chapter], appendices: list[navigation.Appendix] = ()) -> str:
    lines = [
        "# The workbook",
        "",
        "<!-- generated by scripts/build_workbook.py, do not edit -->",
        "",
        "This is the **learner edition** of the chapters. The chapters come in two editions:",
        "",
        "- the learner edition, for learners: the same notebooks with no stored outputs, and every",
        "  prediction left for you. Each predict cell says `...  # your guess`; below it a folded",
        "  **Hint** gives a nudge first, and inside it the **Answer** is folded once more. Each chapter",
        "  ends, after its questions and key points, with folded **Instructor notes** (the usual",
        "  misconceptions and some discussion prompts): read them once the chapter is done.",
        "- `notebooks/`, for instructors: the answers filled in and the outputs stored. The tests",
        "  re-run these chapters and compare every stored output, and `workbook/` is generated from",
        "  them by `scripts/build_workbook.py`.",
        "",
        "In every chapter you predict, before each run, how the run will stop and how many `ToolCall`",
        "events it will record. Write your guesses, run the run, read its events and its counters, then",
        "run the check cell. Open the hint only when you are stuck, and the answer only after that.",
        "",
        "## Start",
        "",
        "Work in **your own copy**, `my-workbook/`. `make lab` makes it from `workbook/` the first time",
        "and opens its chapter 1; it is not tracked by git, the tests never read it, and no command of",
        "the project overwrites it. `workbook/` is the edition the project ships and tests: save nothing",
        "there. From a clone of the repository (Python 3.11 or newer and `make`):",
        "",
        "```sh",
        "make lab              # creates .venv, installs labkit, makes my-workbook/ once, opens its chapter 1",
        "make update-workbook  # new or changed chapters into my-workbook/, beside yours, never over them",
        "make test             # runs every test, the chapters and workbook/ included (never my-workbook/)",
        "```",
        "",
        "`make update-workbook` adds a chapter you do not have, refreshes one you never changed, and puts",
        "the new version of one you did change beside it as `NAME.updated.ipynb`. On Binder the link",
        "opens chapter 1 of `my-workbook/` too.",
        "",
        "## Reading order",
        "",
        "Read the chapters in order; each runs top to bottom and builds on the one before.",
        "",
    ]
    for chapter in chapters:
        lines.append(f"{chapter.number}. [{chapter.title}]({chapter.path.name})")
    if appendices:
        lines += ["", "Outside that order, when you need them:", ""]
        lines += [f"- Appendix {a.letter}. [{a.title}]({a.path.name})" for a in appendices]
    lines += [
        "",
        "The [glossary](glossary.md) pairs the terms of the original French course with the ones used",
        "here, and the [cheat sheet](cheatsheet.md) fits the guard order, the statuses, the exit codes",
        "and the event kinds on one page.",
    ]
    return "\n".join(lines) + "\n"


SCAFFOLD_LINE = "= ...  # your guess"
GUESS = "your guess"
"""The scaffold's comment (the French edition shows its translation, scripts/build_french.py)."""


def untouched(guess: str = GUESS) -> re.Pattern[str]:
    """An untouched scaffold line: `name = ...` or, for one guess per label, `name = {"a": ..., "b": ...}`,
    with the comment ``# guess``."""
    comment = re.escape(f"  # {guess}")
    return re.compile(
        rf'\w+ = (\.\.\.|\{{"[^"]*": \.\.\.(, "[^"]*": \.\.\.)*\}}){comment}'  # one line
        rf'|\w+ = \{{{comment}|    "[^"]*": \.\.\.,|\}}'  # or one label per line
    )


UNTOUCHED = untouched()
LEARNER_COPY = "my-workbook"


def holds_saved_work(nb: nbformat.NotebookNode, guess: str = GUESS) -> bool:
    """True if a learner-edition notebook was run or had a guess filled in (the generated one never is);
    ``guess`` is the scaffold's comment in the notebook's language."""
    scaffolded = UNTOUCHED if guess == GUESS else untouched(guess)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if cell.get("outputs") or cell.get("execution_count") is not None:
            return True
        if "guess" in cell.metadata.get("tags", []) and any(
            not scaffolded.fullmatch(line) for line in cell.source.splitlines() if line.strip()
        ):
            return True
    return False


def keep_saved_work(path: Path, root: Path, copy: str = LEARNER_COPY) -> Path:
    """Copy ``path`` into the learner's copy ``copy`` under the first free ``NAME.saved-from-workbook[-N].ipynb``."""
    folder = root / copy
    folder.mkdir(exist_ok=True)
    n = 1
    while True:
        tag = "saved-from-workbook" if n == 1 else f"saved-from-workbook-{n}"
        kept = folder / f"{path.stem}.{tag}{path.suffix}"
        if not kept.exists():
            kept.write_bytes(path.read_bytes())
            return kept
        n += 1


def build(root: Path, check: bool) -> list[str]:
    source = root / "notebooks"
    target = root / "workbook"
    target.mkdir(exist_ok=True)
    if not check:
        for path in sorted(target.glob("[0-9][0-9]_*.ipynb")) + navigation.appendix_paths(target):
            if holds_saved_work(nbformat.read(path, as_version=4)):
                kept = keep_saved_work(path, root)
                where = kept.relative_to(root)
                print(f"{path.relative_to(root)} held saved work: copied to {where} before the rebuild")
    chapters = [navigation.read_chapter(p) for p in navigation.chapter_paths(source)]
    stale: list[str] = []
    expected = {README, "glossary.md", "cheatsheet.md"}

    def write(source_path: Path, nav: str) -> None:
        edition = learner_edition(nbformat.read(source_path, as_version=4), nav)
        path = target / source_path.name
        expected.add(path.name)
        if not path.exists():
            stale.append(str(path.relative_to(root)))
            if not check:
                nbformat.write(edition, path)
        else:
            navigation.sync(path, edition, check, stale, root)

    appendices = [navigation.read_appendix(p) for p in navigation.appendix_paths(source)]
    for index, chapter in enumerate(chapters):
        write(chapter.path, navigation.nav_source(chapters, index, README, appendices))
    for appendix in appendices:
        write(appendix.path, navigation.appendix_nav_source(chapters, README))
    navigation.sync_text(target / README, readme(chapters, appendices), check, stale, root)
    for extra in sorted(target.glob("[0-9][0-9]_*.ipynb")) + navigation.appendix_paths(target):
        if extra.name not in expected:  # a chapter that no longer exists
            stale.append(str(extra.relative_to(root)))
            if not check:
                extra.unlink()
    return stale


def main(argv: list[str] | None = None) -> int:
    return navigation.command(build, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    sys.exit(main())
