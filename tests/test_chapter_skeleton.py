"""Every chapter follows one skeleton (issue 18): the title; **Time:**; **Prerequisites:**; **What you
will be able to do**; the experiments (predict, run, check); ## Questions, each answer folded right
after its question; ## Key points; ## Instructor notes, after all the material; the navigation cell.
The appendices follow it too.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
APPENDICES = sorted((ROOT / "notebooks").glob("appendix_*.ipynb"))
SECTIONS = ("## Questions", "## Key points", "## Instructor notes")
OPENING = ("**Time:**", "**Prerequisites:**", "**What you will be able to do**")
QUESTION = re.compile(r"^\*\*(\d+)\.\*\* ", re.M)


def _param(path: Path):
    return pytest.param(path, id=path.stem)


def skeleton_problems(cells: list[nbformat.NotebookNode]) -> list[str]:
    """What keeps a chapter's cells from the skeleton (empty when it follows it)."""
    problems = []
    first = cells[0].source if cells else ""
    if not first.startswith("# "):
        problems.append("the first cell does not start with the title")
    at = [first.find(marker) for marker in OPENING]
    if -1 in at or at != sorted(at):
        problems.append(f"the first cell does not hold {', '.join(OPENING)} in this order")
    text = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    if text.count("**Time:**") != 1:
        problems.append(f"**Time:** appears {text.count('**Time:**')} times, not once")
    for old in ("Before this chapter:", "What you will learn", "## Recap", "## Going further", "For the instructor"):
        if old in text:
            problems.append(f"an old name is still used: {old!r}")
    where = {}
    for index, cell in enumerate(cells):
        for name in SECTIONS:
            if cell.cell_type == "markdown" and re.search(rf"^{name}\s*$", cell.source, re.M):
                where.setdefault(name, index)
    missing = [name for name in SECTIONS if name not in where]
    if missing:
        return problems + [f"missing: {', '.join(missing)}"]
    order = [where[name] for name in SECTIONS]
    if order != sorted(order) or len(set(order)) != len(order):
        problems.append(f"the sections are not in the order {', '.join(SECTIONS)}, one cell each")
    nav = cells[-1]
    if nav.get("id") != "navigation":
        problems.append("the last cell is not the navigation")
    if where["## Instructor notes"] != len(cells) - 2:
        problems.append("the instructor notes are not the cell right before the navigation")
    material = [i for i, c in enumerate(cells) if c.cell_type == "code"]
    if material and max(material) > where["## Questions"]:
        problems.append("a code cell comes after ## Questions: the experiments come first")
    for index, cell in enumerate(cells[1:], start=1):
        if "instructor" in cell.metadata.get("tags", []) and index != where["## Instructor notes"]:
            problems.append(f"cell {index} is tagged instructor but is not the instructor notes at the end")
    section = cells[where["## Questions"]].source.split("## Questions", 1)[1]
    numbers = [int(n) for n in QUESTION.findall(section)]
    if not numbers or numbers != list(range(1, len(numbers) + 1)):
        problems.append(f"the questions are not numbered **1.**, **2.**, ...: {numbers}")
    for number, body in re.findall(r"^\*\*(\d+)\.\*\* (.*?)(?=^\*\*\d+\.\*\* |\Z)", section, flags=re.S | re.M):
        fold = re.search(r"<details><summary>Answer</summary>.*?</details>\s*$", body, re.S)
        if not fold or body.count("<details>") != 1:
            problems.append(f"question {number} is not followed right away by its one folded answer")
    return problems


@pytest.mark.parametrize("path", [_param(p) for p in CHAPTERS + APPENDICES])
def test_the_chapter_follows_the_skeleton(path: Path) -> None:
    problems = skeleton_problems(nbformat.read(path, as_version=4).cells)
    assert not problems, f"{path.name}: " + "; ".join(problems)


def test_the_last_chapter_wraps_up_the_course_and_no_chapter_sends_back_to_the_start() -> None:
    last = nbformat.read(CHAPTERS[-1], as_version=4).cells
    key_points = next(c.source for c in last if c.source.startswith("## Key points"))
    assert "### The course, wrapped up" in key_points and "Where to go next" in key_points
    for path in CHAPTERS[:-1]:
        text = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells)
        assert "back to the start" not in text.lower(), f"{path.name} sends the learner back to the start"


md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
GOOD = [
    md("# Chapter 1 — T\n\n**Time:** 5 minutes.\n\n**Prerequisites:** none.\n\n**What you will be able to do**\n\n- x"),
    code("import labkit"),
    md(
        "## Questions\n\n**1.** Why?\n\n<details><summary>Answer</summary>\n\nBecause.\n\n</details>\n\n"
        "**2.** How?\n\n<details><summary>Answer</summary>\n\nSo.\n\n</details>"
    ),
    md("## Key points\n\n- y"),
    md(
        "## Instructor notes\n\n<details><summary>Instructor notes</summary>\n\nz\n\n</details>",
        metadata={"tags": ["instructor"]},
    ),
    md("[Contents](00_contents.md)"),
]
GOOD[-1]["id"] = "navigation"


def test_a_chapter_in_the_skeleton_passes_and_each_departure_is_named() -> None:
    assert skeleton_problems(GOOD) == []
    notes_first = [GOOD[0], GOOD[4], *GOOD[1:4], GOOD[5]]
    assert any("instructor" in p for p in skeleton_problems(notes_first))
    answers_apart = [*GOOD[:2], md("## Questions\n\n**1.** Why?\n\n**2.** How?"), *GOOD[3:]]
    assert "question 1 is not followed right away by its one folded answer" in skeleton_problems(answers_apart)
    old_names = [md(GOOD[0].source.replace("**Prerequisites:**", "**Before this chapter:**")), *GOOD[1:]]
    assert any("order" in p for p in skeleton_problems(old_names))
    two_times = [GOOD[0], md("**Time:** again"), *GOOD[1:]]
    assert "**Time:** appears 2 times, not once" in skeleton_problems(two_times)
    recap_after_notes = [*GOOD[:3], GOOD[4], GOOD[3], GOOD[5]]
    assert any("order" in p for p in skeleton_problems(recap_after_notes))


WIDTH = 100  # characters of code a JupyterLab cell shows at a laptop's width before it scrolls sideways


@pytest.mark.parametrize("path", [_param(p) for p in CHAPTERS + APPENDICES])
def test_every_code_line_fits_a_notebook_cell(path: Path) -> None:
    wide = [
        f"cell {cell.get('id')}: {len(line)} characters"
        for cell in nbformat.read(path, as_version=4).cells
        if cell.cell_type == "code"
        for line in cell.source.splitlines()
        if len(line) > WIDTH
    ]
    assert not wide, f"{path.name}: " + "; ".join(wide)
