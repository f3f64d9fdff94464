"""Every chapter of the instructor edition opens like a lesson and answers its own questions (issue 9)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

CHAPTERS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9][0-9]_*.ipynb"))
QUESTION = re.compile(r"^(?:\*\*(\d+)\.\*\*|(\d+)\. )", re.M)


def _markdown(path: Path) -> list[str]:
    return [cell.source for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "markdown"]


def _questions(cells: list[str]) -> list[int]:
    (section,) = [cell.split("## Questions", 1)[1] for cell in cells if "## Questions" in cell]
    section = re.split(r"\n#{1,3} ", section)[0]  # up to the next heading
    section = re.sub(r"<details>.*?</details>", "", section, flags=re.S)  # an answer folded under its question
    return [int(a or b) for a, b in QUESTION.findall(section)]


def _answered(cells: list[str], questions: list[int]) -> set[int]:
    text = "\n".join(cells)
    answered = {int(n) for n in re.findall(r"<summary>Answer to question (\d+)</summary>", text)}
    for block in re.findall(r"<summary>Answers to the questions</summary>(.*?)</details>", text, flags=re.S):
        answered |= {int(a or b) for a, b in QUESTION.findall(block)}
    (section,) = [cell.split("## Questions", 1)[1] for cell in cells if "## Questions" in cell]
    # a fold right after a question answers it: "**1.** ... <details><summary>Answer</summary>"
    for number, fold in re.findall(r"^\*\*(\d+)\.\*\*(.*?)(?=^\*\*\d+\.\*\*|\Z)", section, flags=re.S | re.M):
        if "<summary>Answer</summary>" in fold:
            answered.add(int(number))
    return answered & set(questions)


def test_there_are_chapters() -> None:
    assert len(CHAPTERS) >= 10


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_a_chapter_states_its_time_prerequisites_and_objectives(path: Path) -> None:
    opening = "\n".join(_markdown(path)[:3])
    assert "**Time:**" in opening, f"{path.name}: no time estimate near the top"
    assert re.search(r"\*\*(Prerequisites|Before this chapter):\*\*", opening), f"{path.name}: no prerequisites"
    # the skeleton's own spelling is checked by tests/test_chapter_skeleton.py
    assert re.search(r"What you will (be able to do|learn)", opening), f"{path.name}: no objectives"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_question_has_an_answer_and_the_chapter_has_instructor_notes(path: Path) -> None:
    cells = _markdown(path)
    questions = _questions(cells)
    assert questions == list(range(1, len(questions) + 1)) and questions, f"{path.name}: questions {questions}"
    missing = set(questions) - _answered(cells, questions)
    assert not missing, f"{path.name}: questions without an answer: {sorted(missing)}"
    assert any(re.search(r"^#+ *(For the instructor|Instructor notes)", cell, re.M) for cell in cells), (
        f"{path.name}: no instructor section"
    )
