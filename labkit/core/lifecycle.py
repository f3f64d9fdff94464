"""One owner for a run's lifecycle: the scope runs the loop, and decides how the run ended.

docs/guarantees.md, *Every stop has one name, and it is not relabelled* and *Cancellation reaches
the transport and the bodies*; chapter 6, *One deadline for the whole run*; chapter 9, *The
caller gives up*.

:meth:`RunLifecycle.run` (``await scope.run(work)``) is the whole lifecycle, as ``asyncio.timeout``
or a trio cancel scope own theirs:

1. **enter**: a scope serves one run; a second is refused before it touches the first;
2. the loop runs in **a task of its own** (so the run can end without it), in a context that
   knows its scope;
3. the **deadline** is recorded the instant it fires, before the run unwinds, and ends the run;
   so does a **stop recorded from outside** (another thread or task);
4. a loop still running then is cancelled and, after
   :data:`~labkit.core.cancellation.ABANDON_GRACE_S`, **abandoned**;
5. **the caller wins**: a caller's cancellation is marked before the loop unwinds and raised
   after the run, even when a stop raced it;
6. **finish**: one locked step that freezes the events and the usage; nothing is recorded after it.

What the loop did comes back as one :class:`Ended`; the runner (:func:`labkit.run_agent`) only
turns it into a status.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

from ._machinery.abandon import cancel_and_abandon
from .cancellation import RunStops, State, caller_wins, cancellation_requests, current_scope
from .errors import ProviderUnavailable, RunHalted, ScopeStateError
from .events import ControlEvent, StopReason

if TYPE_CHECKING:
    from .limits import Usage

__all__ = ["Ended", "RunLifecycle"]

T = TypeVar("T")

_LOOP_WATCHES_UNAWAITED_TASKS = sys.platform == "emscripten"
"""Pyodide's event loop (its WebLoop) reports as unhandled the exception of a task that ends with no
done callback but the loop's own. :meth:`RunLifecycle.run` reads its loop's task itself, after waking
on ``stopped``; there that task gets one callback more, so that a halt is not printed as an unhandled
error. (CPython's loop reports only an exception that is never read.)"""


def _read_below(task: asyncio.Task[Any]) -> None:
    """Nothing to do: :meth:`RunLifecycle.run` reads the task (see :data:`_LOOP_WATCHES_UNAWAITED_TASKS`)."""


class Ended(NamedTuple, Generic[T]):
    """How a run ended, as its scope saw it.

    Attributes:
        value: what the loop returned; ``None`` when it did not return.
        stop: the run's stop reason (the first one recorded), or ``None``.
        provider_error: the message of the ``ProviderUnavailable`` that ended the run, or ``None``.
        abandoned: the loop was still running when the run ended, and was left behind.
        events: the run's control events, final.
        usage: the run's counters, final.
    """

    value: T | None
    stop: StopReason | None
    provider_error: str | None
    abandoned: bool
    events: tuple[ControlEvent, ...]
    usage: Usage


class RunLifecycle(RunStops):
    """The run of one scope: :meth:`run` owns it from entering to finishing (an :class:`~labkit.ExecutionScope`)."""

    if TYPE_CHECKING:  # the scope's own (labkit.core.scope)

        def _finish(self) -> tuple[tuple[ControlEvent, ...], Usage]: ...

        def remaining_s(self) -> float: ...

    def _enter_run(self, loop: asyncio.AbstractEventLoop, expire: Callable[[], None]) -> None:
        """Start the run, or refuse a second one (:class:`~labkit.ScopeStateError`) before it touches the first."""
        with self._lock:
            if self._run_expire is not None or self._state is State.FINISHED:
                raise ScopeStateError("a scope serves exactly one run; make a new scope for a new run")
            if self._state is State.READY:
                self._start_locked()
            self._run_loop, self._run_expire = loop, expire

    async def run(self, work: Callable[[], Awaitable[T]]) -> Ended[T]:
        """Run ``work()`` as this scope's one run; return how it ended.

        Raises:
            asyncio.CancelledError: the caller cancelled (even if a stop raced it); the run is finished.
            ScopeStateError: the scope already served a run, or serves one now (that run is not affected).
            RuntimeError: the loop raised ``CancelledError`` while nobody cancelled the run.
            Exception: whatever else the loop raised, outside the protocol (the run is finished).
        """
        loop = asyncio.get_running_loop()
        caller = asyncio.current_task()
        requests_before = cancellation_requests(caller)
        stopped = loop.create_future()  # done when the loop ends, or the run must end now

        def stop_now() -> None:
            if not stopped.done():
                stopped.set_result(None)

        self._enter_run(loop, stop_now)
        task: asyncio.Task[T] | None = None
        value: T | None = None
        halted: StopReason | None = None
        provider_error: str | None = None
        try:
            task = self._start_loop(loop, work, stop_now)
            await self._until_it_ends(loop, task, stopped, stop_now)
            value = self._what_the_loop_did(task)
        except RunHalted as halt:
            halted = halt.reason  # the recorded stop names the end; this one only if none was recorded
        except ProviderUnavailable as exc:
            self._stop_for(StopReason.PROVIDER_UNAVAILABLE, "model")
            provider_error = str(exc)
        finally:
            events, usage = self._finish()  # one locked step; nothing is recorded after it
            abandoned = task is not None and not task.done()
            task = None  # the task holds its exception, whose traceback holds this frame: no cycle
        if caller_wins(caller, requests_before):
            self._cancel_by_caller()
            raise asyncio.CancelledError("the caller cancelled the run")  # the caller wins over a racing stop
        return Ended(value, self._stop or halted, provider_error, abandoned, events, usage)

    def _start_loop(
        self, loop: asyncio.AbstractEventLoop, work: Callable[[], Awaitable[T]], stop_now: Callable[[], None]
    ) -> asyncio.Task[T]:
        """The loop's own task, in a context that knows its scope; it wakes the run when it ends."""

        async def the_loop() -> T:
            try:
                return await work()
            finally:
                stop_now()  # wakes the run in the same step (a done callback would take one more loop turn)

        context = contextvars.copy_context()
        context.run(current_scope.set, self)  # the loop's task and its bodies know their run
        task = loop.create_task(the_loop(), context=context)
        if _LOOP_WATCHES_UNAWAITED_TASKS:
            task.add_done_callback(_read_below)
        return task

    async def _until_it_ends(
        self,
        loop: asyncio.AbstractEventLoop,
        task: asyncio.Task[T],
        stopped: asyncio.Future[None],
        stop_now: Callable[[], None],
    ) -> None:
        """Wait for the loop, the deadline or a stop from outside; abandon the loop if the run ends first."""

        def deadline_reached() -> None:
            # Recorded the instant the deadline fires, before the run unwinds: a sibling call or a
            # body's cleanup running during the unwinding then finds the run stopped.
            self._stop_for(StopReason.DEADLINE_EXCEEDED, "run")
            stop_now()

        deadline = loop.call_later(self.remaining_s(), deadline_reached)
        try:
            await stopped  # the loop ended, or the run must end now
            if not task.done():  # the deadline, or a stop from outside: the loop stops now
                await cancel_and_abandon(task)
        except asyncio.CancelledError:  # the caller cancelled: the loop unwinds
            deadline.cancel()  # the caller was first: no deadline stop after it
            # Marked before the loop unwinds: a body's cleanup that calls a tool now is refused with
            # the caller's cancellation, records nothing, runs nothing.
            self._cancel_by_caller()
            await cancel_and_abandon(task)
            raise
        finally:
            deadline.cancel()

    def _what_the_loop_did(self, task: asyncio.Task[T]) -> T | None:
        """The loop's value if it returned and the run is still on; its halt or its error otherwise."""
        if task.done() and not task.cancelled() and task.exception() is None:
            value = task.result()
            with self._lock:
                self._check_locked()  # a stop recorded from outside, or the deadline just passed
            return value
        if self._stop is not None:  # cancelled, or ended by a halt: the stop names the end
            return None
        try:
            if task.cancelled():  # nobody cancelled or stopped the run: the loop's own code raised CancelledError
                try:
                    task.result()
                except asyncio.CancelledError as exc:  # not the caller's: outside the protocol
                    raise RuntimeError(
                        f"the agent's loop raised CancelledError ({exc or 'no message'}) while nobody cancelled the run"
                    ) from exc
            raise task.exception()  # type: ignore[misc]
        finally:
            del task  # the task holds the exception, whose traceback holds this frame: no cycle
