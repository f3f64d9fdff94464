"""Worker threads a stuck job cannot hold: sync tool bodies awaited inside a run
(docs/guarantees.md, *Cancellation reaches the transport and the bodies*), and sync runs
started where a loop is already running (a Jupyter cell, see :mod:`labkit.core._machinery.sync`).

A sync body cannot be interrupted: Python cannot stop a thread. So a body
awaited inside a run runs on a worker thread, and the run awaits a future
that the worker settles. If the run stops first (deadline, halt, caller),
it stops waiting; the body goes on alone and its late result is dropped.

Why not ``asyncio.to_thread`` or anyio's worker threads: their threads are
joined when the loop or the interpreter shuts down, so a body that ignores
its deadline would hold the run, or the console's exit, until it returns.

The pool here keeps that guarantee while reusing threads (starting a thread
per call costs ~100 µs):

* every worker is a daemon thread, never joined;
* a call is handed to a worker that is idle *now*, or to a new worker; a
  worker becomes idle again only when its body returns, so a stuck worker is
  simply never idle again and nothing ever waits behind it;
* a worker idle for ``IDLE_S`` seconds ends, so a burst of calls does not
  leave threads behind;
* whatever a body raises settles its call, every exception class included.

Where the platform has no threads (Pyodide, CPython compiled to WebAssembly in a browser:
``sys.platform == "emscripten"``), a sync body runs inline, on the run's own thread: it
returns or raises exactly as on a worker, but nothing can stop waiting for it, so a sync body
that blocks past the deadline holds the run until it returns (docs/guarantees.md). Everything
that awaits (model calls, async bodies) still meets the deadline.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import queue
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["IDLE_S", "run_body", "start"]

IDLE_S = 30.0
"""Seconds an idle worker waits for a call before it ends."""

THREADS = sys.platform != "emscripten"
"""Whether this platform can start threads (Pyodide cannot: sync bodies then run inline)."""

_jobs: queue.SimpleQueue[Callable[[], object]] = queue.SimpleQueue()
_lock = threading.Lock()
_idle = 0  # workers waiting for a job, minus the jobs already handed to them (under _lock)


def _forget_workers() -> None:  # a forked child has none of its parent's threads
    global _jobs, _lock, _idle
    _jobs, _lock, _idle = queue.SimpleQueue(), threading.Lock(), 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_workers)


def run_body(fn: Callable[..., Any], kwargs: dict[str, Any]) -> asyncio.Future[Any]:
    """Start ``fn(**kwargs)`` on a worker thread, in a copy of the caller's context; await the future it returns.

    The future gives what ``fn`` returned, or raises what ``fn`` raised (a ``StopIteration``
    arrives as a ``RuntimeError`` caused by it, since it cannot travel through a future; an
    ``asyncio.CancelledError`` cancels the call). If the awaiting task is cancelled, it stops
    waiting at once and the body's late result is dropped. A plain function, not a coroutine: the
    caller awaits the future itself, and with :mod:`labkit.core.bodies` doing the same, a sync body
    in a run costs ~8,000 of ~136,000 instructions less, 6 % (callgrind, every thread, the calls of
    ``benchmarks.paired``'s ``sync_body_handoff``). Call it where a loop is running (a coroutine).
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()
    if THREADS:
        start(lambda: _run(context, fn, kwargs, loop, future))
    else:  # no thread to hand it to: run it here, and settle the future exactly as a worker would
        _run(context, fn, kwargs, loop, future)()
    return future


def start(job: Callable[[], object]) -> None:
    """Call ``job()`` on a worker thread idle now, or on a new one; never wait behind a busy worker.

    ``job`` must not raise (it runs on a bare thread: an escaping exception is
    printed by :func:`threading.excepthook` and the worker ends). It may
    return a function of no arguments: the worker calls it once it counts
    itself idle again, so whoever that function wakes finds the worker free.
    """
    global _idle
    with _lock:
        spare = _idle > 0
        if spare:
            _idle -= 1  # that worker is now spoken for: the next call will not count on it
    if not spare:  # the worker first, then the job: interrupted in between, a worker waits with no job (harmless)
        threading.Thread(target=_work, name="labkit-worker", daemon=True).start()
    _jobs.put(job)


def _work() -> None:
    global _idle
    while True:
        try:
            job = _jobs.get(timeout=IDLE_S)
        except queue.Empty:
            with _lock:
                if _idle > 0:  # another idle worker can take any job handed out meanwhile
                    _idle -= 1
                    return
            continue  # a job was handed to this worker as it timed out: take it
        then = job()
        del job  # drop the call's arguments and result before waiting for the next one
        with _lock:
            _idle += 1
        if callable(then):  # e.g. hand the result back: the awaiting run may call again at once
            then()
        del then


def _run(
    context: contextvars.Context,
    fn: Callable[..., Any],
    kwargs: dict[str, Any],
    loop: asyncio.AbstractEventLoop,
    future: asyncio.Future[Any],
) -> Callable[[], None]:
    try:
        value = context.run(fn, **kwargs)
    except BaseException as exc:  # handed to the awaiting task below, never swallowed here
        ok, value = False, exc
    else:
        ok = True

    def deliver() -> None:  # called by the worker once it is idle again
        # once per sync body: a plain try costs nothing when nothing is raised, contextlib.suppress a context manager
        try:  # noqa: SIM105
            loop.call_soon_threadsafe(_settle, future, ok, value)
        except RuntimeError:  # the loop is closed: the run ended long ago
            pass

    return deliver


def _settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.done():  # the run stopped waiting: a late result is dropped
        return
    if ok:
        future.set_result(value)
    elif isinstance(value, asyncio.CancelledError):  # the body's own: its message goes with it
        future.cancel(msg=str(value) or None)
    elif isinstance(value, StopIteration):  # a future refuses it (it would end the awaiting coroutine)
        error = RuntimeError(f"the tool body raised {type(value).__name__}")
        error.__cause__ = value
        future.set_exception(error)
    else:
        future.set_exception(value)
