"""Check a learner's prediction against a run: the stop reason and the ToolCall count.

Core-light: no pandas or Jupyter import. The interactive prediction widget
lives in :mod:`labkit.widgets`.
"""

from __future__ import annotations

from typing import NamedTuple

from .outcome import RunOutcome, RunStatus

__all__ = ["Check", "check"]


class Check(NamedTuple):
    """A prediction next to what happened."""

    predicted_status: str
    actual_status: str
    predicted_tool_calls: int
    actual_tool_calls: int

    @property
    def right(self) -> bool:
        """Both the status and the ToolCall count were predicted."""
        return self.predicted_status == self.actual_status and self.predicted_tool_calls == self.actual_tool_calls

    def __str__(self) -> str:
        def line(what: str, said: object, was: object) -> str:
            mark = "right" if said == was else "not this time"
            return f"{what:<15} you said {said!s:<18} it was {was!s:<18} {mark}"

        return "\n".join(
            [
                line("status", self.predicted_status, self.actual_status),
                line("ToolCall count", self.predicted_tool_calls, self.actual_tool_calls),
            ]
        )

    def _repr_pretty_(self, printer: object, cycle: bool) -> None:
        printer.text(str(self))  # type: ignore[attr-defined]


def check(outcome: RunOutcome, *, status: str, tool_calls: int) -> Check:
    """Compare a prediction with ``outcome``.

    Args:
        outcome: the run.
        status: the predicted status, e.g. ``"RepeatedCall"`` (a :class:`RunStatus` value).
        tool_calls: the predicted number of ``ToolCall`` events.

    Raises:
        ValueError: ``status`` is not a status name (the message lists them).
    """
    if status not in RunStatus._value2member_map_:
        raise ValueError(f"{status!r} is not a status; choose one of: {', '.join(RunStatus)}")
    return Check(status, outcome.status.value, tool_calls, outcome.count("ToolCall"))
