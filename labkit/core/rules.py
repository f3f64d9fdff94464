"""The rules that can refuse a call, each a plain function of what the scope knows
(docs/guarantees.md, *Limits are exact*; chapter 4, *The guard, step by step*).

On every tool call the guard asks the three rules of :data:`GUARD_RULES`, in that order, after the
cancellation check and under the scope's one lock; the first that refuses decides, and its
:class:`Refusal` becomes the run's stop. Before every model call the counting client asks
:func:`model_budget` the same way. A rule reads one frozen :class:`Attempt` (or two numbers for
the model budget) and changes nothing: counting and recording stay with the scope
(:mod:`labkit.core.scope`), so these functions read as the rules themselves.

Budgets ask "would the next attempt exceed the limit?" with ``>=``, so a limit of zero admits
nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from .events import StopReason
from .limits import Limits

__all__ = ["GUARD_RULES", "Attempt", "Refusal", "model_budget", "permission", "repetition", "tool_budget"]


class Attempt(NamedTuple):
    """One tool call as the guard sees it, before its reservation.

    Attributes:
        tool: the tool's name, e.g. ``"read_ticket"``.
        capability: the capability the tool needs, e.g. ``"ticket.read"``.
        granted: the capabilities the host granted for this run.
        limits: the run's :class:`~labkit.Limits`.
        admitted: tool attempts already admitted in this run, all tools.
        signature_attempts: attempts this call's signature (tool + canonical arguments) already had.
    """

    tool: str
    capability: str
    granted: frozenset[str]
    limits: Limits
    admitted: int
    signature_attempts: int


class Refusal(NamedTuple):
    """What a rule refused: the stop the scope records.

    Attributes:
        reason: the stop reason, which becomes the run's status.
        name: the event's name: the tool, ``"model"`` or ``"run"``.
        count: the event's count: the counter the rule read (chapter 8 lists each).
        message: one line for the refused call's result and the raised ``RunHalted``.
    """

    reason: StopReason
    name: str
    count: int  # type: ignore[assignment]  # the event's count; shadows tuple.count, as the event's field does
    message: str


def permission(attempt: Attempt) -> Refusal | None:
    """Refuse a tool whose capability the host did not grant (the count: attempts admitted before it)."""
    if attempt.capability in attempt.granted:
        return None
    return Refusal(
        StopReason.PERMISSION_DENIED,
        attempt.tool,
        attempt.admitted,
        f"capability {attempt.capability!r} is not granted for {attempt.tool!r}",
    )


def tool_budget(attempt: Attempt) -> Refusal | None:
    """Refuse a tool attempt once ``tool_calls`` attempts were admitted, failed bodies included."""
    limit = attempt.limits.tool_calls
    if attempt.admitted < limit:
        return None
    return Refusal(
        StopReason.TOOL_BUDGET,
        attempt.tool,
        attempt.admitted,
        f"tool budget: {attempt.admitted} of {limit} tool attempts already admitted",
    )


def repetition(attempt: Attempt) -> Refusal | None:
    """Refuse a signature that already had ``repetitions`` attempts (the count: that signature's attempts)."""
    seen, limit = attempt.signature_attempts, attempt.limits.repetitions
    if seen < limit:
        return None
    return Refusal(
        StopReason.REPEATED_CALL,
        attempt.tool,
        seen,
        f"repeated call: {attempt.tool!r} with these arguments already had {seen} of {limit} attempts",
    )


GUARD_RULES: tuple[Callable[[Attempt], Refusal | None], ...] = (permission, tool_budget, repetition)
"""The guard's rules after cancellation, in order: the first that refuses decides.

Chapter 4, *The guard, step by step*, steps 2.2-2.4.

The scope reads this tuple on every call, so replacing it (e.g. with an extra rule) changes what
every later call is asked."""


def model_budget(limits: Limits, made: int) -> Refusal | None:
    """Refuse a model call once ``model_calls`` calls were made (``made``: calls admitted so far)."""
    if made < limits.model_calls:
        return None
    return Refusal(
        StopReason.MODEL_BUDGET,
        "model",
        made,
        f"model budget: {made} of {limits.model_calls} model calls already made",
    )
