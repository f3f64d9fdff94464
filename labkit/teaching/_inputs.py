"""What the teaching helpers accept, checked at their door: a learner's mistake is one line.

Each check raises :class:`~labkit.InputError` (a :class:`~labkit.UserError`,
shown as one line by :func:`labkit.teaching.short_errors`) naming the helper,
what it needs and, for a value that would do once run (a prepared Setup, a
scenario, a mystery), how to run it first. Core-light: no third-party import.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.errors import InputError
from ..core.scope import GuardedTool
from ..loops.outcome import RunOutcome
from .i18n import _

__all__ = ["guarded_tool", "outcome", "outcomes", "what"]

_RUNNABLE = {"Setup", "TracedSetup", "Scenario", "Mystery"}


def what(value: object) -> str:
    """A value's kind in an error message: its type's name, never its (possibly huge) repr."""
    return "None" if value is None else type(value).__name__


def _run_first(value: object) -> str:
    if isinstance(value, str) or type(value).__name__ in _RUNNABLE:
        return " (run it first: labkit.run(...), or .run() for a mystery)"
    return ""


def _holds_one(value: object) -> str:
    """A pointer to the RunOutcome inside a tuple or list (``run_traced`` returns ``(outcome, spans)``), or ``""``."""
    if isinstance(value, (tuple, list)):
        for index, item in enumerate(value[:4]):
            if isinstance(item, RunOutcome):
                return _("; its item [{index}] is one: pass that (e.g. outcome, spans = run_traced(...))").format(
                    index=index
                )
    return ""


def outcome(value: Any, helper: str, where: str = "") -> RunOutcome:
    """``value`` if it is a :class:`~labkit.RunOutcome`, else :class:`~labkit.InputError` (one line)."""
    if isinstance(value, RunOutcome):
        return value
    raise InputError(
        f"{helper} needs the RunOutcome of a run (what labkit.run returns){where}, not {what(value)}"
        f"{_run_first(value)}{_holds_one(value)}"
    )


def outcomes(value: Any, helper: str, *, empty_ok: bool = False) -> list[tuple[str, RunOutcome]]:
    """``{label: outcome}`` (or ``(label, outcome)`` pairs) as a list of pairs, every value checked."""
    if isinstance(value, Mapping):
        pairs = list(value.items())
    elif isinstance(value, (list, tuple)) and all(isinstance(p, tuple) and len(p) == 2 for p in value):
        pairs = list(value)
    else:
        raise InputError(
            f"{helper} needs {{label: outcome}}, e.g. {{'simple': labkit.run(...)}}, "
            f"not {what(value)}{_run_first(value)}"
        )
    if not pairs and not empty_ok:
        raise InputError(f"{helper} got no outcome: give {{label: outcome}} with at least one run")
    for label, one in pairs:
        outcome(one, helper, f" for {label!r}")
    return pairs


def guarded_tool(value: Any, helper: str) -> GuardedTool:
    """``value`` if it is a :class:`~labkit.GuardedTool`, else :class:`~labkit.InputError` (one line)."""
    if isinstance(value, GuardedTool):
        return value
    raise InputError(f"{helper} needs a guarded tool (made by scope.tool(name, capability, body)), not {what(value)}")
