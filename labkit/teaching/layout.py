"""The one place a learner-facing text is cut to the width of a notebook's output area.

JupyterLab's output area (about 1300 px wide) wraps a plain-text line longer
than :data:`LINE_WIDTH` characters wherever the line reaches its edge, in the
middle of a word when it comes to that ("... run this ce" / "ll again"). Every
verdict, hint and note the teaching helpers print (:func:`labkit.check`,
:func:`labkit.compare`, ``check_hosts``, :func:`labkit.progress`) goes through
:func:`fit` first, which wraps such a line at word boundaries
(:mod:`textwrap`), in English as in French. A continuation line is indented
under the text it continues: past a label column (``"status          "``), past
a ``think:`` or ``réfléchissez :`` opening, else two spaces past the line's own indent.

Standard library only.
"""

from __future__ import annotations

import re
import textwrap

__all__ = ["LINE_WIDTH", "fit"]

LINE_WIDTH = 92
"""The widest line a notebook's output area shows on one line (JupyterLab at 1300 px), in characters."""

_COLUMN = re.compile(r"^(\s*\S(?:\S| (?! ))*? {2,})(?=\S)")
"""A label column: the line's first words, then two spaces or more (``"status          "``)."""

_OPENING = re.compile(r"^(\s*(?:think|réfléchissez|note) ?: )")
"""A line's opening word and colon (``"think: "``, ``"réfléchissez : "``, ``"note: "``)."""

_KEEP = "\ue000"
"""Stands for a space no line may break at while a line is wrapped (a private-use character)."""

_FRENCH_SPACE = re.compile(r" (?=[:;?!»])|(?<=«) ")
"""The space before French ``: ; ? !`` and ``»`` and after ``«``: a line never starts with ``:``."""

_MAX_INDENT = 40
"""A continuation is never indented further than this, so a wide label column still leaves room for words."""


def _indent(line: str) -> str:
    for pattern in (_COLUMN, _OPENING):
        match = pattern.match(line)
        if match and len(match.group(1)) <= _MAX_INDENT:
            return " " * len(match.group(1))
    lead = len(line) - len(line.lstrip(" "))
    return " " * min(lead + 2, _MAX_INDENT)


def fit(text: str, width: int = LINE_WIDTH) -> str:
    """``text`` with every line longer than ``width`` wrapped at word boundaries.

    Args:
        text: one or more lines (``"\\n"``-separated), as a helper would print them.
        width: the widest line kept, in characters (:data:`LINE_WIDTH`).

    Returns:
        The same words in the same order, each line at most ``width`` characters unless one word
        alone is longer (a word is never cut: a long value stays whole on a line of its own). A
        line that fits is left exactly as it was (aligned columns keep their spaces).
    """
    lines: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            lines.append(line)
            continue
        kept = _FRENCH_SPACE.sub(_KEEP, line)
        wrapped = textwrap.wrap(
            kept,
            width,
            subsequent_indent=_indent(line),
            break_long_words=False,
            break_on_hyphens=False,
            replace_whitespace=False,
            drop_whitespace=True,
        )
        lines.extend(part.replace(_KEEP, " ") for part in wrapped or [kept])
    return "\n".join(lines)
