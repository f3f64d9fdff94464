"""Ordered control events and the closed sets of stop reasons (chapter 8, *Anatomy of an event*)."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

__all__ = ["ControlEvent", "EventKind", "StopReason"]


class StopReason(StrEnum):
    """Why the host stopped a run. Each one is also an :class:`EventKind` and a run status."""

    PERMISSION_DENIED = "PermissionDenied"
    """The tool's capability is not granted in this scope."""
    TOOL_BUDGET = "ToolBudget"
    """``Limits.tool_calls`` attempts were already admitted."""
    REPEATED_CALL = "RepeatedCall"
    """This signature already had ``Limits.repetitions`` attempts."""
    MODEL_BUDGET = "ModelBudget"
    """``Limits.model_calls`` transport attempts were already made."""
    DEADLINE_EXCEEDED = "DeadlineExceeded"
    """``Limits.deadline_s`` passed before the run ended."""
    PROVIDER_UNAVAILABLE = "ProviderUnavailable"
    """The transport could not reach the model endpoint."""


class EventKind(StrEnum):
    """What a :class:`ControlEvent` records."""

    MODEL_CALL = "ModelCall"
    """A transport attempt was admitted; ``name`` is ``"model"``."""
    MIDDLEWARE = "Middleware"
    """The observing middleware saw a tool invocation, before the guard."""
    TOOL_CALL = "ToolCall"
    """A tool attempt was admitted by the guard and its body is about to run."""
    PERMISSION_DENIED = StopReason.PERMISSION_DENIED.value
    TOOL_BUDGET = StopReason.TOOL_BUDGET.value
    REPEATED_CALL = StopReason.REPEATED_CALL.value
    MODEL_BUDGET = StopReason.MODEL_BUDGET.value
    DEADLINE_EXCEEDED = StopReason.DEADLINE_EXCEEDED.value
    PROVIDER_UNAVAILABLE = StopReason.PROVIDER_UNAVAILABLE.value


class ControlEvent(BaseModel):
    """One step of control, in the order the scope saw it.

    Attributes:
        kind: what happened.
        name: the tool name; ``"model"`` for model calls, model budget and
            provider stops; ``"run"`` for the deadline.
        count: for ``ModelCall``/``ToolCall``, the new number of admitted
            attempts; for ``Middleware``, the number of observations so far;
            for a stop, the counter it read: tool attempts admitted
            (``ToolBudget``, ``PermissionDenied``, ``DeadlineExceeded``),
            the signature's attempts (``RepeatedCall``) or model calls made
            (``ModelBudget``, ``ProviderUnavailable``).

    Arguments and signatures are never part of an event: they stay private
    in the scope's memory.
    """

    model_config = ConfigDict(frozen=True)

    kind: EventKind
    name: str
    count: int

    def __str__(self) -> str:
        return f"{self.kind} {self.name} {self.count}"
