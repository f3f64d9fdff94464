"""Abandoning a task that ignores its cancellation, so the run (and closing its loop) never waits for it.

A body may ignore its cancellation (there is no forced stop in Python): the run does not wait for
it (docs/guarantees.md, *Cancellation reaches the transport and the bodies*). An abandoned task
keeps running on its loop; what it returns or raises later is dropped, and it is taken out of the
loop's task list so that closing the loop (``asyncio.run``, :func:`labkit.run`) does not wait for it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from .. import cancellation

__all__ = ["cancel_and_abandon"]

_abandoned: set[asyncio.Task[Any]] = set()  # kept referenced until they end (a pending task must not be collected)


async def cancel_and_abandon(*tasks: asyncio.Task[Any]) -> None:
    """Cancel ``tasks``, give them :data:`~labkit.core.cancellation.ABANDON_GRACE_S` to end, then abandon the rest."""
    for task in tasks:
        task.cancel()
    if not tasks:
        return
    try:
        await asyncio.wait(tasks, timeout=cancellation.ABANDON_GRACE_S)
    finally:  # also when the caller cancels during the grace
        for task in tasks:
            if not task.done():
                _abandon(task)


def _abandon(task: asyncio.Task[Any]) -> None:
    _abandoned.add(task)
    task.add_done_callback(_dropped_result)
    unregister = getattr(asyncio.tasks, "_unregister_task", None)  # asyncio's own registry of a loop's tasks
    if unregister is not None:
        unregister(task)


def _dropped_result(task: asyncio.Task[Any]) -> None:
    _abandoned.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved, so nothing is logged: a late result or error is dropped
