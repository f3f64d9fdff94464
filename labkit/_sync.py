"""Running a coroutine from sync code: in a script, in a console, inside a running Jupyter kernel.

Used by :func:`labkit.run` and by direct :meth:`~labkit.GuardedTool.invoke`
of an async tool body. Ctrl+C (or "interrupt kernel") is the caller
cancelling: the coroutine is cancelled on its own loop, awaited, and the
``KeyboardInterrupt`` re-raised, never left running in the background.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to its end from sync code, even when this thread's loop is running.

    With no running loop this is ``asyncio.run``, except that a Ctrl+C while
    the loop is being built is held until the loop exists (a loop interrupted
    half-built cannot be closed cleanly) and then cancels the coroutine. Inside a running loop (a
    Jupyter kernel) the coroutine runs on a fresh loop in a helper thread and
    this call waits for it; if the wait is interrupted (``KeyboardInterrupt``),
    the coroutine is cancelled on its loop, awaited, and the interrupt re-raised.
    """
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
            box["value"] = asyncio.run(main())
        except BaseException as exc:  # handed back to the calling thread below
            box["error"] = exc
        finally:
            done.set()

    thread = threading.Thread(target=target, name="labkit-run")
    try:
        thread.start()  # inside the try: an interrupt may land while the thread starts
        done.wait()  # not Thread.join: an interrupted join marks the thread finished (Python 3.11)
    except BaseException:
        # Interrupted (Ctrl+C / "interrupt kernel" in Jupyter): the caller cancelled, so cancel
        # the run on its loop too, wait for it to unwind, and re-raise. A thread that has not
        # begun yet finds the flag set by _cancel_in_thread and runs nothing.
        _cancel_in_thread(box)
        if thread.ident is not None:
            done.wait()
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]


def _cancel_in_thread(box: dict[str, Any]) -> None:
    box["interrupted"] = True
    loop, task = box.get("loop"), box.get("task")
    if loop is None or task is None:
        return
    try:
        loop.call_soon_threadsafe(task.cancel)
    except RuntimeError:  # the loop already closed: the run is over
        pass


def _run_here(coro: Coroutine[Any, Any, T]) -> T:
    runner = asyncio.Runner()
    held: list[int] = []
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum)) if in_main_thread else None
    try:
        runner.get_loop()  # build the loop now, with Ctrl+C held
    finally:
        if in_main_thread:
            signal.signal(signal.SIGINT, previous)
    with runner:
        if held:
            coro.close()
            raise KeyboardInterrupt
        return runner.run(coro)
