"""How a run stops: the first stop wins, the caller's cancellation wins over every stop.

docs/guarantees.md, *Every stop has one name, and it is not relabelled* and *Cancellation reaches
the transport and the bodies*; chapter 9, *The caller gives up*.

* A body sees the run's cancellation as a :class:`CancelToken` (async bodies are also cancelled
  at their next ``await``). The token is set the instant a stop is recorded or the caller cancels.
* A stop (a rule's refusal, the deadline, the provider gone) is recorded once: the first one is
  the run's status, and after it nothing more is recorded (:class:`RunStops`).
* The caller's cancellation wins: once the caller has cancelled, every check raises
  :class:`asyncio.CancelledError` before anything else, and a run that was cancelled by its
  caller ends with that error even when a stop raced it (:func:`caller_wins`).
* A ``CancelledError`` nobody asked for is neither the caller nor the deadline: it was raised by
  the provider or a body on its own (:func:`run_cancelled`).
* A body still running when its run stops gets :data:`ABANDON_GRACE_S` to finish, then is
  abandoned (how: :mod:`labkit.core._machinery.abandon`).
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING, Any

from .errors import RunHalted, ScopeStateError
from .events import StopReason
from .rules import Refusal

if TYPE_CHECKING:
    from .limits import Limits

__all__ = ["ABANDON_GRACE_S", "CancelToken", "caller_wins", "cancellation_requests", "run_cancelled"]

ABANDON_GRACE_S = 0.1
"""Seconds a cancelled body (or a run's loop) gets to finish before it is abandoned
(docs/guarantees.md, *Cancellation reaches the transport and the bodies*)."""


class CancelToken:
    """The run's cancellation, as seen by a tool body.

    A body receives it by declaring a parameter annotated ``CancelToken``.
    Async bodies are also cancelled at their next ``await``; a sync body runs
    in a thread and can only stop early by looking at the token.
    """

    __slots__ = ("_cancelled", "_event")

    # A threading.Event costs ~2 µs to make and most runs never wait on their token, so the
    # flag is a plain attribute and the Event is made by the first wait(). It pays: with the Event
    # made in __init__, a complete harness run costs 1.05x-1.08x the CPU (medians of 101-201 interleaved
    # rounds, three invocations; `python -m benchmarks.tricks`, issue 21's 5 % bar). _set() writes the
    # flag before reading _event; wait() publishes _event before reading the flag; so either
    # _set() sees the Event and sets it, or wait() sees the flag (each step is atomic under the GIL).
    _event_lock = threading.Lock()  # only makes the Event, once per token that is waited on

    def __init__(self) -> None:
        self._cancelled = False
        self._event: threading.Event | None = None

    @property
    def cancelled(self) -> bool:
        """True once the run was stopped, cancelled or ran out of time."""
        return self._cancelled

    def raise_if_cancelled(self) -> None:
        """Raise :class:`asyncio.CancelledError` if the run is cancelled."""
        if self._cancelled:
            raise asyncio.CancelledError("the run was cancelled")

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block up to ``timeout_s`` seconds for cancellation; return whether it happened."""
        event = self._event
        if event is None:
            with CancelToken._event_lock:
                if self._event is None:
                    self._event = threading.Event()
                event = self._event
        if self._cancelled:
            event.set()
        return event.wait(timeout_s)

    def _set(self) -> None:
        self._cancelled = True
        event = self._event
        if event is not None:
            event.set()

    def __repr__(self) -> str:
        return f"CancelToken(cancelled={self.cancelled})"


# -- whose cancellation is it? ------------------------------------------------------------------


def cancellation_requests(task: asyncio.Task[Any] | None = None) -> int:
    """How many cancellation requests ``task`` (default: the current task) has pending; 0 outside a task.

    The caller, the run's deadline, a stop recorded from outside and a batch cancelling its
    sibling calls all go through ``Task.cancel``, which ``Task.cancelling()`` counts. Read it
    before an ``await``, compare after it (:func:`run_cancelled`, :func:`caller_wins`).
    """
    if task is None:
        task = asyncio.current_task()
    return task.cancelling() if task is not None else 0


def run_cancelled(requests_before: int, token: CancelToken) -> bool:
    """Whether a ``CancelledError`` that just arrived is the run's own cancellation.

    It is when a cancellation request reached the task since ``requests_before`` was read, or
    when the run's token is set (a stop sets it the instant it is recorded, before its request
    lands). Otherwise the provider, a body or a middleware raised it on its own: the provider's is
    ``ProviderUnavailable``, a body's is a failed call, and the run goes on.
    """
    return cancellation_requests() > requests_before or token.cancelled


def caller_wins(caller: asyncio.Task[Any] | None, requests_before: int) -> bool:
    """Whether the caller cancelled the run it awaits: then it ends with ``CancelledError``, whatever else happened.

    ``caller`` is the task that awaits the run and ``requests_before`` its
    :func:`cancellation_requests` when the run started. A stop recorded at the same time (a rule,
    the deadline) never hides the caller's cancellation: the caller asked, so the caller is told.
    """
    return caller is not None and caller.cancelling() > requests_before


# -- the stops of one run -----------------------------------------------------------------------


current_scope: contextvars.ContextVar[Any] = contextvars.ContextVar("labkit_current_scope", default=None)
"""The scope whose run this context belongs to (set in the run's task, copied into its child tasks and
body threads), so a stop knows whether it is unwinding the run itself or must cancel it from outside."""


class State(Enum):
    """A scope's lifecycle: ``READY -> RUNNING -> FINISHED``."""

    READY = "ready"
    RUNNING = "running"
    FINISHED = "finished"


class RunStops:
    """The stop state of one scope: the first stop, the caller's cancellation, the deadline.

    :class:`~labkit.ExecutionScope` is one; every method here runs under the scope's lock
    (``*_locked``) or takes it. The rules decide *whether* to stop (:mod:`labkit.core.rules`);
    this decides what a stop does: record one event, set the token, refuse what comes after.
    """

    limits: Limits
    _lock: threading.Lock
    _state: State
    _records: list[tuple[str, str, int]]
    _clock: Callable[[], float]
    _tool_calls: int
    _model_calls: int

    def _init_stops(self) -> None:
        self._stop: StopReason | None = None
        self._caller_cancelled = False
        self._token = CancelToken()
        self._started_at: float | None = None
        self._deadline_at: float | None = None
        self._run_loop: asyncio.AbstractEventLoop | None = None
        self._run_expire: Callable[[], None] | None = None

    def _start_locked(self) -> None:
        self._started_at = self._clock()
        self._deadline_at = self._started_at + self.limits.deadline_s
        self._state = State.RUNNING

    def _check_locked(self) -> None:
        """The check before anything is admitted: finished? the caller? an earlier stop? the deadline?"""
        if self._state is not State.RUNNING:  # one Enum read on every call (each costs ~0.1 µs: EnumType.__getattr__)
            if self._state is State.FINISHED:
                raise ScopeStateError("this scope's run has ended; make a new scope for a new run")
            self._start_locked()  # READY: the first use starts the run
        if self._caller_cancelled:  # the caller wins: checked before any stop
            raise asyncio.CancelledError("the caller cancelled the run")
        if self._stop is not None:
            raise RunHalted(self._stop, f"the run was already stopped: {self._stop.value}")
        if self._deadline_at is not None and self._clock() >= self._deadline_at:
            self._halt_locked(self._deadline_stop())

    def _deadline_stop(self) -> Refusal:
        message = f"deadline: {self.limits.deadline_s:g} s passed"
        return Refusal(StopReason.DEADLINE_EXCEEDED, "run", self._tool_calls, message)

    def _halt_locked(self, stop: Refusal) -> None:
        if self._stop is None:
            self._record_stop_locked(stop)
        raise RunHalted(self._stop or stop.reason, stop.message)

    def _record_stop_locked(self, stop: Refusal, *, inside_run: bool = False) -> bool:
        """Record ``stop`` if it is the first (one event, the token set); a stop from outside cancels the run."""
        if self._stop is not None or self._state is State.FINISHED:
            return False
        self._stop = stop.reason
        self._records.append((stop.reason.value, stop.name, stop.count))
        self._token._set()
        if self._run_expire is not None and not inside_run and current_scope.get() is not self:
            loop, expire = self._run_loop, self._run_expire  # stopped from another thread or task
            if loop is not None and not loop.is_closed():
                loop.call_soon_threadsafe(expire)
        return True

    def _stop_for(self, reason: StopReason, name: str) -> StopReason:
        """Record a stop that did not come from a rule (deadline fired, provider down); first wins."""
        with self._lock:
            if reason is StopReason.DEADLINE_EXCEEDED:
                stop = self._deadline_stop()
            else:
                stop = Refusal(reason, name, self._model_calls, reason.value)
            self._record_stop_locked(stop, inside_run=True)
            return self._stop or reason

    def _cancel_by_caller(self) -> None:
        """Mark the caller's cancellation: from now on every check raises ``CancelledError`` first."""
        with self._lock:
            self._caller_cancelled = True
            self._token._set()
