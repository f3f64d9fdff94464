"""Run statuses, the run outcome and exit codes (docs/guarantees.md,
*Every stop has one name, and it is not relabelled*)."""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from ..core.events import ControlEvent, EventKind, StopReason
from ..core.limits import Limits, Usage
from ..transports.chat import Message, Role, ToolCall
from .agents import UNKNOWN_TOOL

__all__ = [
    "EXIT_CANCELLED",
    "EXIT_CONFIG",
    "EXIT_OUTPUT",
    "EXIT_PROTOCOL",
    "EXIT_USAGE",
    "RunOutcome",
    "RunStatus",
    "ToolRequest",
    "exit_code",
]


class RunStatus(StrEnum):
    """The closed set of run statuses: two endings and the six stop reasons."""

    COMPLETED = "Completed"
    """The host condition holds (``finish_review`` succeeded)."""
    INCOMPLETE = "Incomplete"
    """The loop ended but the host condition is false; the text is kept, and is not success."""
    PERMISSION_DENIED = StopReason.PERMISSION_DENIED.value
    REPEATED_CALL = StopReason.REPEATED_CALL.value
    TOOL_BUDGET = StopReason.TOOL_BUDGET.value
    MODEL_BUDGET = StopReason.MODEL_BUDGET.value
    DEADLINE_EXCEEDED = StopReason.DEADLINE_EXCEEDED.value
    PROVIDER_UNAVAILABLE = StopReason.PROVIDER_UNAVAILABLE.value

    @property
    def is_stop(self) -> bool:
        """True for the six statuses where the host stopped the run (text withheld)."""
        return self not in (RunStatus.COMPLETED, RunStatus.INCOMPLETE)


EXIT_CANCELLED = 130
"""Console exit code when the caller cancelled the run (Ctrl+C)."""

EXIT_USAGE = 64
"""Console exit code for a usage error (unknown scenario, bad flag), never a controlled stop."""

EXIT_OUTPUT = 74
"""Console exit code when the output could not be written (stdout failed: a full disk, an I/O error).

A reader that leaves early (a closed pipe) is not this: the console then exits
with the run's own code. With 74, one line on stderr names the error and the
run's status and exit code.
"""

EXIT_PROTOCOL = 76
"""Console exit code when a live endpoint answers with something that is not a usable chat completion."""

EXIT_CONFIG = 78
"""Console exit code for a live profile that cannot work (bad URL, unknown model, key variable unset, ...)."""


def exit_code(status: RunStatus) -> int:
    """0 for ``Completed``; 2 for ``Incomplete`` and every controlled stop (chapter 7, *Experiment 4 — exit codes from
    the console*)."""
    return 0 if status is RunStatus.COMPLETED else 2


class ToolRequest(NamedTuple):
    """One tool call a model reply asked for, with the result the loop gave it.

    Attributes:
        reply: the number of the model reply that asked (1 for the first reply).
        call: the call as the model sent it.
        result: the text of its result, or ``None`` when the transcript kept none.
    """

    reply: int
    call: ToolCall
    result: str | None


def _tool_requests(transcript: tuple[Message, ...]) -> tuple[ToolRequest, ...]:
    """Each call of each reply with its result: the results that follow *that* reply, by call id.

    A call id is unique within one reply only (real servers reuse ids across replies: docs/live.md), so a
    result is looked up among the results after its own reply, never in the whole transcript.
    """
    found: list[ToolRequest] = []
    replies = 0
    for index, message in enumerate(transcript):
        if message.role is not Role.ASSISTANT:
            continue
        replies += 1
        results: dict[str | None, str] = {}
        for later in transcript[index + 1 :]:
            if later.role is Role.ASSISTANT:
                break
            if later.role is Role.TOOL:
                results.setdefault(later.tool_call_id, later.text or "")
        found.extend(ToolRequest(replies, call, results.get(call.id)) for call in message.tool_calls)
    return tuple(found)


class RunOutcome(BaseModel):
    """What one run ended with.

    Attributes:
        status: the closed :class:`RunStatus`.
        text: the model's last text for ``Completed``/``Incomplete``; ``None``
            after a stop (withheld: it is not a result).
        events: the ordered control events.
        transcript: every message of the run, for debugging (tool results
            included); not needed to read the outcome.
        usage: the counters at the end.
        limits: the limits the run had.
        hint: for ``ProviderUnavailable`` only, why the provider failed: the
            message of the :class:`~labkit.ProviderUnavailable` that ended the
            run (the console prints it as its ``hint:`` line), e.g. the URL
            tried, or that the provider cancelled its own request while nobody
            cancelled the run (docs/guarantees.md, *Every stop has one name, and it is not relabelled*);
            ``None`` for every other status.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    status: RunStatus
    text: str | None
    events: tuple[ControlEvent, ...]
    transcript: tuple[Message, ...] = ()
    usage: Usage = Usage(0, 0, 0, 0.0)
    limits: Limits = Limits()
    hint: str | None = None

    @property
    def exit_code(self) -> int:
        """The console exit code of this outcome."""
        return exit_code(self.status)

    def count(self, kind: str) -> int:
        """How many events of ``kind`` (e.g. ``"ToolCall"``) the run recorded.

        Raises:
            ValueError: ``kind`` is not an :class:`~labkit.EventKind` value (a typo
                would otherwise count zero); the message lists the kinds.
        """
        if kind not in EventKind._value2member_map_:
            raise ValueError(f"{kind!r} is not an event kind; choose one of: {', '.join(EventKind)}")
        return sum(1 for e in self.events if e.kind == kind)

    @property
    def unknown_tool_requests(self) -> tuple[ToolCall, ...]:
        """The tool calls that named no tool of the agent, in the order the model asked.

        Such a call reaches no middleware, guard or body, so it records no
        event (the seed's event kinds stay as they are); its result tells the
        model the tool does not exist. A model that keeps asking for one burns
        model calls: this list (the console prints it) shows why.
        """
        return tuple(r.call for r in self.tool_requests if (r.result or "").startswith(UNKNOWN_TOOL))

    @property
    def tool_requests(self) -> tuple[ToolRequest, ...]:
        """Every tool call the model asked for, in order, each with its reply's number and its result.

        A result is matched to its call within the reply that asked for it: a model may send the
        same call id again in a later reply, and that later call has a result of its own.
        """
        return _tool_requests(self.transcript)

    def __str__(self) -> str:
        return f"{self.status.value}: {self.text!r}" if self.text is not None else self.status.value

    def __repr__(self) -> str:
        return (
            f"RunOutcome(status={self.status.value!r}, text={self.text!r}, "
            f"events={len(self.events)}, exit_code={self.exit_code})"
        )
