"""The chapters' prose fits a reader's editor: no markdown source line of notebooks/*.ipynb is over 100 characters.

Left as they are, because breaking them would break what they are: a table row (one row is one
line), a line inside a fenced block, and a line holding a link target or a URL (the generated
navigation line, a link whose address cannot be split).
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
WIDTH = 100
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def long_lines(source: str, width: int = WIDTH) -> list[str]:
    """The prose lines of a markdown source longer than ``width`` (tables, fenced blocks, links left out)."""
    found, fenced = [], False
    for line in source.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.lstrip().startswith("|") or "](" in line or "://" in line:
            continue
        if len(line) > width:
            found.append(line)
    return found


def test_the_rule_catches_a_long_prose_line_and_leaves_what_cannot_be_wrapped():
    prose = "word " * 25  # 125 characters
    assert long_lines(prose) == [prose]
    assert long_lines("- " + "x" * 99) == ["- " + "x" * 99]
    assert long_lines("x" * WIDTH) == []
    assert long_lines("| a | " + "b " * 60 + "|") == []
    assert long_lines("```\n" + prose + "\n```") == []
    assert long_lines("```\ncode\n```\n" + prose) == [prose]  # a fence closes
    assert long_lines(f"see [the docs](https://example.org/{'a' * 100})") == []


def test_there_are_chapters_to_read():
    assert len(NOTEBOOKS) >= 11


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_prose_line_of_a_chapter_is_over_100_characters(path):
    cells = nbformat.read(path, as_version=4).cells
    found = [(c.get("id"), line) for c in cells if c.cell_type == "markdown" for line in long_lines(c.source)]
    assert not found, f"rewrap to {WIDTH} characters: {found}"
