"""How a tool body runs, step 3 of every tool call: outside the lock, with the run's cancellation.

Chapter 4, *The guard, step by step*, step 3; docs/guarantees.md, *Every call settles, whatever the
body does*.

* An async body is awaited; it is cancelled at its next ``await`` when the run stops.
* A sync body awaited inside a run runs on a worker thread (:mod:`labkit.core._machinery.workers`:
  daemon threads, reused, never joined) so a deadline can abandon it; called directly from
  plain code it runs in the calling thread.
* Whatever a body raises settles its call; a generator is not a result.
* A run abandons what it still waits for after :data:`ABANDON_GRACE_S`
  (docs/guarantees.md, *Cancellation reaches the transport and the bodies*).

What a body may be, and how its arguments bind, is :mod:`labkit.core.binding`; the guard around
it is :mod:`labkit.core.guarded`.
"""

from __future__ import annotations

import asyncio
import inspect
import types
from collections.abc import Awaitable, Callable
from typing import Any

from ._machinery import workers
from .cancellation import ABANDON_GRACE_S, CancelToken
from .errors import ToolBodyError

__all__ = ["ABANDON_GRACE_S", "CancelToken"]


_PLAIN = frozenset({str, int, float, bool, type(None), dict, list, tuple})
"""The types most bodies return, which are never awaitable nor a generator: the two checks below
answer them at once (asking ``inspect`` about every result cost ~0.5 µs of a tool call)."""


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def _awaitable(result: Any) -> bool:
    """Whether a body's result must be awaited: a body declared sync may return an awaitable."""
    return type(result) not in _PLAIN and inspect.isawaitable(result)


def _not_a_generator(result: Any, tool: str) -> Any:
    """A generator is not a result: the model would read ``<generator object ...>``."""
    if type(result) in _PLAIN:
        return result
    if isinstance(result, (types.GeneratorType, types.AsyncGeneratorType)):  # inspect.isgenerator/isasyncgen, in one
        if isinstance(result, types.GeneratorType):
            result.close()
        raise ToolBodyError(tool, "returned a generator; a tool body returns its result (a value, not an iterator)")
    return result


def _running_loop() -> asyncio.AbstractEventLoop | None:
    """The running loop of this thread, ``None`` outside one (only :meth:`GuardedTool.invoke` asks)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _run_in_daemon_thread(fn: Callable[..., Any], kwargs: dict[str, Any], tool: str) -> Awaitable[Any]:
    """Start a sync body on a worker thread (:mod:`labkit.core._machinery.workers`); the caller awaits what it returns.

    Python cannot stop a thread: a cancelled run stops waiting, the body goes
    on alone and its late result is dropped (why not ``asyncio.to_thread``:
    see :mod:`labkit.core._machinery.workers`).

    Every exception the body raises settles the call: an ``Exception`` or a
    cancellation is handed over as it is; ``StopIteration`` (which a future
    cannot hold) and any other ``BaseException`` (a ``KeyboardInterrupt`` or
    ``SystemExit`` raised in a worker thread is the body's own, never the
    caller's) become :class:`~labkit.ToolBodyError`.
    """

    def body() -> Any:
        try:
            return fn(**kwargs)
        except StopIteration as exc:
            raise _body_error(tool, exc) from exc
        except (Exception, asyncio.CancelledError):
            raise
        except BaseException as exc:  # the body's own KeyboardInterrupt, SystemExit, ...: settle the call
            raise _body_error(tool, exc) from exc

    return workers.run_body(body, {})  # the future itself: the caller awaits it


def _body_error(tool: str, exc: BaseException) -> ToolBodyError:
    error = ToolBodyError(tool, f"raised {type(exc).__name__}: {exc}")
    error.__cause__ = exc
    return error
