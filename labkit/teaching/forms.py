"""The forms a learner's value comes in, read once for every judging helper, and shown so two values never look alike.

One rule for every check cell: a value's *form* is never an error. A count written as a text of
digits (``"2"``, as a widget or ``input()`` gives it) is that number; a status name is read as
:func:`~labkit.teaching.reasons.same` reads texts. A value that cannot be read (``"two"`` for a
count, ``"Complete"`` for a status) is kept as an :class:`Unreadable` guess: the check shows it and
says why it cannot be the answer (a ``think:`` line), and the cell, and "Run All", go on. A truth
value is never a number, in either direction; the text ``"True"`` or ``"false"`` is that truth value
where the answer is one, as ``"2"`` is a number where the answer is one.

Values are shown by :func:`shown`: a text is quoted (its ``repr``) whenever the other side of the
line is not a text, so ``'2'`` and ``2`` never print alike.

Core-light: the standard library and labkit's core only.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Sequence
from enum import Enum
from typing import Any

from ..core.events import ControlEvent, EventKind, StopReason
from ..loops.outcome import RunStatus
from .i18n import _

__all__ = [
    "ABSENT",
    "Unreadable",
    "count_form",
    "events_form",
    "number_in_text",
    "shown",
    "status_form",
    "truth_in_text",
    "whole",
]

_DIGITS = re.compile(r"\s*[+-]?\d+\s*")


class Unreadable:
    """A learner's value that cannot be the answer in the form it came in, with why (one clause).

    Shown as the value itself (its ``repr``, so ``'two'`` reads as the text it is); never equal to an answer.
    """

    __slots__ = ("problem", "value")

    def __init__(self, value: object, problem: str) -> None:
        self.value = value
        self.problem = problem

    def __str__(self) -> str:
        return repr(self.value)

    def __repr__(self) -> str:
        return f"Unreadable({self.value!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Unreadable) and (self.value, self.problem) == (other.value, other.problem)

    def __hash__(self) -> int:
        return hash(self.problem)


class _Absent:
    """The place of a value one side has not (a label or an item the other side has): shown as ``-``."""

    __slots__ = ()

    def __str__(self) -> str:
        return "-"

    __repr__ = __str__


ABSENT = _Absent()


def _truth(value: object) -> bool:
    kind = type(value)
    return isinstance(value, bool) or (kind.__module__ == "numpy" and kind.__name__ in ("bool", "bool_"))


def number_in_text(value: object) -> int | None:
    """The whole number a text of digits writes (``" 2 "``, ``"-1"``), else ``None``."""
    if isinstance(value, str) and not isinstance(value, Enum) and _DIGITS.fullmatch(value):
        return int(value)
    return None


def truth_in_text(value: object) -> bool | None:
    """The truth value a text writes (``"True"``, ``" false "``, ``"'True'"``: case, spaces and one pair of
    quotes aside), else ``None``."""
    if isinstance(value, str) and not isinstance(value, Enum):
        return {"true": True, "false": False}.get(unquoted(value).casefold())
    return None


def whole(value: Any) -> int | None:
    """``value`` as an ``int`` when it is a whole number of any number type (a numpy count from a table,
    ``2.0``) or a text of digits (``"2"``); ``None`` for a truth value, a fraction, NaN or anything else."""
    if _truth(value):
        return None
    written = number_in_text(value)
    if written is not None:
        return written
    if not isinstance(value, numbers.Real):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    number = float(value)
    return int(number) if number.is_integer() else None


def count_form(value: Any) -> int | Unreadable:
    """A guessed ToolCall count as the number it means, or :class:`Unreadable` (never an error)."""
    count = whole(value)
    if count is not None and count >= 0:
        return count
    if _truth(value):
        problem = _("a count is a whole number of ToolCall events; {value!r} is a truth value, not a number")
    elif count is not None:
        problem = _("a count is a whole number of ToolCall events; {value!r} is below zero")
    else:
        problem = _("a count is a whole number of ToolCall events, written in digits such as 2, not {value!r}")
    return Unreadable(value, problem.format(value=value))


def unquoted(text: str) -> str:
    """``text`` stripped, without one pair of quotes around it (``"'ToolBudget'"``: a learner who types the
    quotes inside the text still names the status)."""
    text = text.strip()
    if len(text) > 1 and text[0] == text[-1] and text[0] in "\"'`":
        return text[1:-1].strip()
    return text


def status_form(value: Any) -> str | Unreadable:
    """A guessed status as the status it names, read loosely (case, spaces or underscores around or inside it,
    one pair of quotes around it: as :func:`~labkit.teaching.reasons.same` reads a name), or :class:`Unreadable`."""
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, str):
        text = re.sub(r"[\s_]", "", unquoted(value)).casefold()  # "Permission Denied" names PermissionDenied
        for status in RunStatus:
            if text == status.value.casefold():
                return status.value
    return Unreadable(
        value,
        _("{value!r} is not a status; the statuses are: {statuses}").format(value=value, statuses=", ".join(RunStatus)),
    )


def events_form(value: Any) -> tuple[tuple[str, str, int], ...] | Unreadable:
    """Guessed events as ``(kind, name, count)`` triples, or :class:`Unreadable` naming the first that is not one."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        return Unreadable(
            value, _("the events are a list of (kind, name, count) tuples, e.g. [('ModelCall', 'model', 1)]")
        )
    guess: list[tuple[str, str, int]] = []
    for step, item in enumerate(value, start=1):
        if isinstance(item, ControlEvent):
            guess.append((item.kind.value, item.name, item.count))
            continue
        if not isinstance(item, (tuple, list)) or len(item) != 3:
            problem = _(
                "event {step} must be a (kind, name, count) tuple such as ('ModelCall', 'model', 1), not {item!r}"
            )
            return Unreadable(value, problem.format(step=step, item=item))
        kind, name, count = item
        if isinstance(kind, Enum):
            kind = kind.value
        written = unquoted(kind).casefold() if isinstance(kind, str) else None  # read as a status is read
        known = next((k.value for k in EventKind if written == k.value.casefold()), None)
        if known is None:
            problem = _("event {step}: {kind!r} is not an event kind; the kinds are: {kinds}")
            return Unreadable(value, problem.format(step=step, kind=kind, kinds=", ".join(EventKind)))
        if not isinstance(name, str):
            problem = _("event {step}: the name is a tool name or 'model'/'run', not {name!r}")
            return Unreadable(value, problem.format(step=step, name=name))
        number = whole(count)
        if number is None:
            problem = _("event {step}: the count is a whole number, not {count!r}")
            return Unreadable(value, problem.format(step=step, count=count))
        guess.append((known, unquoted(name), number))
    return tuple(guess)


def _plain(value: object) -> object:
    if isinstance(value, Unreadable):
        return value.value
    if isinstance(value, type) and issubclass(value, BaseException):
        return value.__name__
    return type(value).__name__ if isinstance(value, BaseException) else value


def shown(value: object, other: object) -> str:
    """``value`` as a verdict line shows it beside ``other``: a text is quoted when ``other`` is not a text
    (``'2'`` beside ``2``), so two values that differ never print alike; an exception class or instance
    shows as its name, a status, stop reason or event kind as its name (unquoted: a name, not a text typed);
    the text ``'None'`` is quoted beside a text too, so it never prints as ``None``."""
    if isinstance(value, (Unreadable, _Absent)):
        return str(value)
    value, other = _plain(value), _plain(other)
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, str) and value in _CLOSED_NAMES:
        return value  # a name that no number or other value prints as: shown as the name it is
    if isinstance(value, str) and (not isinstance(other, str) or value.strip() == "None"):
        return repr(value)  # the text 'None' never prints as the value None
    return str(value)


_CLOSED_NAMES = frozenset(name for enum in (RunStatus, StopReason, EventKind) for name in enum._value2member_map_)
