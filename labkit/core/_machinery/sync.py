"""Running a coroutine from sync code: in a script, in a console, inside a running Jupyter kernel.

Used by :func:`labkit.run` and by direct :meth:`~labkit.GuardedTool.invoke`
of an async tool body. Ctrl+C (or "interrupt kernel") is the caller
cancelling: the coroutine is cancelled on its own loop, awaited, and the
``KeyboardInterrupt`` re-raised, never left running in the background.

In a browser (Pyodide, ``sys.platform == "emscripten"``) there are no threads and the page's own
event loop is always running: the coroutine runs on that loop through Pyodide's
``pyodide.ffi.run_sync``, which suspends the calling WebAssembly stack until the coroutine is done
(JavaScript Promise Integration: every current browser; Node.js needs
``--experimental-wasm-stack-switching``). Where that is unavailable, the sync entry raises one
clear error pointing to the async one.
"""

from __future__ import annotations

import _signal
import asyncio
import contextlib
import contextvars
import signal
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from . import workers as _workers

__all__ = ["run_sync"]

T = TypeVar("T")

SIGINT, default_int_handler = signal.SIGINT.value, signal.default_int_handler


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to its end from sync code, even when this thread's loop is running.

    With no running loop this is ``asyncio.run`` on an event loop kept open
    for this thread's next run (see :func:`_run_here`): a fresh context per
    run, leftover tasks cancelled after it, Ctrl+C cancelling the run. Inside
    a running loop (a Jupyter kernel) the coroutine runs on the kept loop of a
    worker thread (:mod:`labkit.core._machinery.workers`) and this call waits for it; if the
    wait is interrupted (``KeyboardInterrupt``), the coroutine is cancelled
    on its loop, awaited, and the interrupt re-raised.

    Raises:
        RuntimeError: in a browser without stack switching (see the module's docstring): use
            the async entry (``await labkit.arun(...)``) there.
    """
    if not _workers.THREADS:
        return _run_in_browser(coro)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run_here(coro)
    box: dict[str, Any] = {}

    async def main() -> T:
        box["loop"], box["task"] = asyncio.get_running_loop(), asyncio.current_task()
        if box.get("interrupted"):  # interrupted before the loop was known
            coro.close()
            raise asyncio.CancelledError("the caller cancelled the run before it started")
        return await coro

    done = threading.Event()

    def target() -> None:
        try:
            box["value"] = _run_here(main())  # on the worker thread's own kept loop
        except BaseException as exc:  # handed back to the calling thread below
            box["error"] = exc
        finally:
            done.set()

    started = False
    try:
        _workers.start(target)  # inside the try: an interrupt may land while the job is handed over
        started = True
        done.wait()
    except BaseException:
        # Interrupted (Ctrl+C / "interrupt kernel" in Jupyter): the caller cancelled, so cancel
        # the run on its loop too, wait for it to unwind, and re-raise. A job that has not
        # begun yet finds the flag set by _cancel_in_thread and runs nothing.
        _cancel_in_thread(box)
        if started:
            done.wait()
        raise
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value


def _run_in_browser(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on the browser's event loop, suspending this call until it is done (Pyodide)."""
    from pyodide.ffi import can_run_sync, run_sync  # type: ignore[import-not-found]  # Pyodide only

    if not can_run_sync():
        coro.close()
        raise RuntimeError(
            "this browser's Python cannot wait for a run from sync code here: use `await labkit.arun(...)`"
            " instead of `labkit.run(...)` (Pyodide's run_sync needs JavaScript Promise Integration)"
        )
    return run_sync(coro)  # type: ignore[no-any-return]  # Pyodide's run_sync is untyped


def _cancel_in_thread(box: dict[str, Any]) -> None:
    box["interrupted"] = True
    loop, task = box.get("loop"), box.get("task")
    if loop is None or task is None:
        return
    with contextlib.suppress(RuntimeError):  # the loop already closed: the run is over
        loop.call_soon_threadsafe(task.cancel)


class _HeldRunner:
    """A thread's :class:`asyncio.Runner`, kept open between runs; its loop is closed when the thread ends."""

    __slots__ = ("loop", "runner")

    def __init__(self, runner: asyncio.Runner) -> None:
        self.runner, self.loop = runner, runner.get_loop()

    def __del__(self) -> None:  # the thread's locals are being cleared: it ended, or the interpreter is exiting
        if not self.loop.is_running() and not self.loop.is_closed():
            self.loop.close()


_local = threading.local()  # .held: this thread's _HeldRunner, made by its first run


def _run_here(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on this thread's event loop, made by the first run and kept open for the next.

    Making and closing a loop costs about as much as a whole scripted run, so
    the loop outlives the run; nothing else does. Each run gets a copy of the
    caller's context (as :func:`asyncio.run`), and a task the run left behind
    is cancelled and awaited before this returns. Ctrl+C cancels the run and
    ``KeyboardInterrupt`` is raised once the run has unwound (see
    :func:`_run_task`), as with :func:`asyncio.run`. A run ending in
    anything but its result or an ``Exception`` (an interrupt, ``SystemExit``)
    closes the loop, so the next run starts on a fresh one.
    """
    held: _HeldRunner | None = getattr(_local, "held", None)
    if held is None:
        runner = _new_runner()
        if runner is None:  # Ctrl+C while the loop was being built
            coro.close()
            raise KeyboardInterrupt
        held = _local.held = _HeldRunner(runner)
    runner, loop = held.runner, held.loop
    try:
        result = _run_task(loop, coro)
    except Exception:
        _cancel_leftovers(loop)
        raise
    except BaseException:
        _local.held = None
        runner.close()  # as asyncio.run does: cancel what is left, close generators and the loop
        raise
    _cancel_leftovers(loop)
    return result


def _run_task(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` as a task on ``loop`` in a copy of the caller's context, as :meth:`asyncio.Runner.run` does.

    In the main thread, while Python's own Ctrl+C handler is in place, a first
    Ctrl+C cancels the task and the run unwinds, then ``KeyboardInterrupt`` is
    raised; a second one raises at once. Written out rather than calling
    ``Runner.run`` because that one installs a handler holding the task, and
    restoring the previous handler formats the task's ``repr`` (about half
    the cost of a whole scripted run, measured).

    The handler is swapped through ``_signal``, the C module that
    :mod:`signal` wraps: the same two functions, without the wrapper's
    conversion of every handler into an enum member, which fails for a Python
    handler by formatting a ``ValueError`` (~10 µs a run, ~8 % of a sync run, measured).
    """
    task = loop.create_task(coro, context=contextvars.copy_context())
    interrupts = 0

    def on_sigint(signum: int, frame: object) -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts == 1 and not task.done():
            task.cancel()
            loop.call_soon_threadsafe(lambda: None)  # wake the loop so it sees the cancellation
            return
        raise KeyboardInterrupt

    install = threading.current_thread() is threading.main_thread() and _signal.getsignal(SIGINT) is default_int_handler
    if install:
        _signal.signal(SIGINT, on_sigint)
    try:
        return loop.run_until_complete(task)
    except asyncio.CancelledError:
        if interrupts and task.uncancel() == 0:  # cancelled by Ctrl+C, not by the coroutine itself
            raise KeyboardInterrupt from None
        raise
    finally:
        if install and _signal.getsignal(SIGINT) is on_sigint:
            _signal.signal(SIGINT, default_int_handler)


def _new_runner() -> asyncio.Runner | None:
    """A runner with its loop built, or ``None`` if Ctrl+C came while building it.

    The loop is built with Ctrl+C held (a loop interrupted half-built cannot be
    closed cleanly). ``loop_factory`` keeps the runner from installing its
    loop as the thread's current event loop, which would outlive the run.
    """
    runner = asyncio.Runner(loop_factory=asyncio.new_event_loop)
    held: list[int] = []
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum)) if in_main_thread else None
    try:
        runner.get_loop()
    finally:
        if in_main_thread:
            signal.signal(signal.SIGINT, previous)
    if held:
        runner.close()
        return None
    return runner


def _cancel_leftovers(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel and await the tasks a finished run left on ``loop`` (what :func:`asyncio.run` does on closing)."""
    leftovers = asyncio.all_tasks(loop)
    if not leftovers:
        return
    for task in leftovers:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*leftovers, return_exceptions=True))
    for task in leftovers:
        if not task.cancelled() and task.exception() is not None:
            loop.call_exception_handler(
                {
                    "message": "a task left behind by a labkit run failed while it was cancelled",
                    "exception": task.exception(),
                    "task": task,
                }
            )
