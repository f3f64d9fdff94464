"""Check a learner's prediction against a run: the stop reason and the ToolCall count.

Core-light: no pandas or Jupyter import. The interactive prediction widget
lives in :mod:`labkit.widgets`.

A guess may be left as ``...`` (or ``None``): the learner edition of the
workbook ships predict cells as ``my_status = ...``. Checking such a guess
never fails; it prints a line asking for the guess and keeps the answer hidden.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from .outcome import RunOutcome, RunStatus

__all__ = ["Check", "Checks", "Comparison", "check", "compare"]

_NO_GUESS_TEXT = "no guess yet: fill in your guess in the predict cell above, run it, then run this cell again"


def _no_guess(value: object) -> bool:
    return value is None or value is Ellipsis


def _line(what: str, said: object, was: object) -> str:
    if _no_guess(said):
        return f"{what:<15} {_NO_GUESS_TEXT}"
    mark = "right" if said == was else "not this time"
    return f"{what:<15} you said {said!s:<18} it was {was!s:<18} {mark}"


class Comparison(NamedTuple):
    """One guessed value next to what happened (``said`` is ``None`` when there is no guess yet)."""

    what: str
    said: Any
    was: Any

    @property
    def guessed(self) -> bool:
        """A guess was given (not ``...`` or ``None``)."""
        return not _no_guess(self.said)

    @property
    def right(self) -> bool:
        """The guess equals what happened (``False`` without a guess)."""
        return self.guessed and self.said == self.was

    def __str__(self) -> str:
        return _line(self.what, self.said, self.was)

    def _repr_pretty_(self, printer: object, cycle: bool) -> None:
        printer.text(str(self))  # type: ignore[attr-defined]


class Check(NamedTuple):
    """A prediction next to what happened.

    ``predicted_status`` / ``predicted_tool_calls`` are ``None`` when the
    learner has not guessed yet.
    """

    predicted_status: str | None
    actual_status: str
    predicted_tool_calls: int | None
    actual_tool_calls: int

    @property
    def guessed(self) -> bool:
        """Both guesses were given."""
        return self.predicted_status is not None and self.predicted_tool_calls is not None

    @property
    def right(self) -> bool:
        """Both the status and the ToolCall count were predicted."""
        return (
            self.guessed
            and self.predicted_status == self.actual_status
            and self.predicted_tool_calls == self.actual_tool_calls
        )

    def __str__(self) -> str:
        return "\n".join(
            [
                _line("status", self.predicted_status, self.actual_status),
                _line("ToolCall count", self.predicted_tool_calls, self.actual_tool_calls),
            ]
        )

    def _repr_pretty_(self, printer: object, cycle: bool) -> None:
        printer.text(str(self))  # type: ignore[attr-defined]


class Checks(tuple):
    """Several labelled :class:`Check` results, e.g. one per agent; prints one block per label."""

    __slots__ = ()

    def __new__(cls, items: Mapping[str, Check] | tuple[tuple[str, Check], ...]) -> Checks:
        pairs = tuple(items.items()) if isinstance(items, Mapping) else tuple(items)
        return super().__new__(cls, pairs)

    @property
    def right(self) -> bool:
        """Every labelled check is right."""
        return all(c.right for _, c in self)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            for label, c in self:
                if label == key:
                    return c
            raise KeyError(key)
        return super().__getitem__(key)

    def __str__(self) -> str:
        return "\n".join(f"[{label}]\n{c}" for label, c in self)

    def __repr__(self) -> str:
        return f"Checks({', '.join(f'{label}: right={c.right}' for label, c in self)})"

    def _repr_pretty_(self, printer: object, cycle: bool) -> None:
        printer.text(str(self))  # type: ignore[attr-defined]


def _check_one(outcome: RunOutcome, status: Any, tool_calls: Any) -> Check:
    return Check(
        None if _no_guess(status) else str(status),
        outcome.status.value,
        None if _no_guess(tool_calls) else tool_calls,
        outcome.count("ToolCall"),
    )


def check(
    outcome: RunOutcome | Mapping[str, RunOutcome],
    *,
    status: str | None = None,
    tool_calls: int | None = None,
) -> Check | Checks:
    """Compare a prediction with ``outcome`` (or with each of several labelled outcomes).

    Args:
        outcome: the run, or ``{label: outcome}`` (e.g. one per agent) to
            check one prediction against each.
        status: the predicted status, e.g. ``"RepeatedCall"`` (a :class:`RunStatus`
            value); ``...`` or ``None`` means "no guess yet".
        tool_calls: the predicted number of ``ToolCall`` events; ``...`` or
            ``None`` means "no guess yet".

    Returns:
        A :class:`Check`, or :class:`Checks` for a mapping. Without a guess the
        printed line asks for one and does not reveal the answer.

    Raises:
        ValueError: ``status`` is not a status name (the message lists them),
            or ``tool_calls`` is not a whole number.
    """
    if not _no_guess(status) and status not in RunStatus._value2member_map_:
        raise ValueError(f"{status!r} is not a status; choose one of: {', '.join(RunStatus)}")
    if not _no_guess(tool_calls) and (isinstance(tool_calls, bool) or not isinstance(tool_calls, int)):
        raise ValueError(f"tool_calls must be a whole number of ToolCall events, not {tool_calls!r}")
    if isinstance(outcome, Mapping):
        return Checks({label: _check_one(o, status, tool_calls) for label, o in outcome.items()})
    return _check_one(outcome, status, tool_calls)


def compare(what: str, guess: Any, actual: Any) -> Comparison:
    """Compare any one guessed value with what happened (e.g. admitted attempts).

    Args:
        what: a short label, e.g. ``"admitted"``.
        guess: the learner's guess; ``...`` or ``None`` means "no guess yet".
        actual: the observed value.
    """
    return Comparison(what, None if _no_guess(guess) else guess, actual)
