"""Invoke a guarded tool directly, outside any loop: one call after another, or many at once.

Direct invocation goes through the same guard as the loop (chapter 4), so
these helpers are how chapters 4, 5 and 8 test the guard with no model:
:func:`invoke_each` calls in turn and records what each call ended with;
:func:`invoke_together` races many threads against one guard.

The guard takes one lock for its checks and its reservation (docs/guarantees.md, "Limits are exact"; chapter 8), so
however many threads race, it admits exactly as many attempts as the limits
allow and records one stop. This module only starts the race; the proof is
in the scope's events and the body's own counters.

Which thread wins a slot is up to the scheduler, and an admitted attempt
whose body is still running when another thread's refusal stops the run
raises too (the guard re-checks cancellation after the body). So read the
counts, not which thread got what.

Example::

    attempts = invoke_together(tool, [{"input": i} for i in range(1, 11)])
    sum(e.kind == "ToolCall" for e in scope.events)   # == limits.tool_calls
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.errors import InputError, RunHalted
from ..core.scope import GuardedTool
from . import _inputs
from .i18n import _

__all__ = ["Attempt", "invoke_each", "invoke_together"]


@dataclass(frozen=True, slots=True)
class Attempt:
    """What one thread's ``tool.invoke(arguments)`` ended with.

    Attributes:
        arguments: what this thread passed.
        result: the body's return value, or ``None`` if it raised.
        error: the exception raised (``RunHalted`` for a refusal), or ``None``.
    """

    arguments: Any
    result: Any = None
    error: BaseException | None = None

    @property
    def ended(self) -> str:
        """One line: the result, or the exception's type and message."""
        if self.error is None:
            return _("returned {result}").format(result=repr(self.result))
        return f"{type(self.error).__name__}: {self.error}"

    @property
    def halted(self) -> bool:
        """This thread got a :class:`~labkit.RunHalted` (refused, or stopped after its body)."""
        return isinstance(self.error, RunHalted)


def _attempt(tool: GuardedTool, args: Mapping[str, Any] | str) -> Attempt:
    try:
        return Attempt(args, result=tool.invoke(args))
    except (Exception, asyncio.CancelledError) as exc:  # a refusal, a failing body, a cancelled run
        return Attempt(args, error=exc)


def invoke_each(tool: GuardedTool, arguments: Sequence[Mapping[str, Any] | str]) -> list[Attempt]:
    """Call ``tool.invoke`` once per item, in order, in this thread; record each ending instead of raising.

    Once the guard has stopped the scope, every later call is refused too
    (a stopped run admits nothing), and its :class:`Attempt` says so.

    Args:
        tool: a guarded tool.
        arguments: raw argument objects (mappings, or JSON text as a model sends it).

    Returns:
        One :class:`Attempt` per item, in order (none for an empty list).

    Raises:
        InputError: ``tool`` is not a :class:`~labkit.GuardedTool`, or ``arguments`` is not a list.
    """
    tool = _inputs.guarded_tool(tool, "invoke_each")
    return [_attempt(tool, args) for args in _arguments(arguments, "invoke_each")]


def _arguments(arguments: object, helper: str) -> list[Any]:
    if isinstance(arguments, (str, bytes, Mapping)) or not isinstance(arguments, Sequence):
        raise InputError(
            f"{helper} needs a list of argument objects, one per call, e.g. [{{'input': 1}}, {{'input': 2}}],"
            f" not {_inputs.what(arguments)}"
        )
    return list(arguments)


def invoke_together(
    tool: GuardedTool,
    arguments: Sequence[Mapping[str, Any] | str],
    *,
    timeout_s: float = 30.0,
) -> list[Attempt]:
    """Call ``tool.invoke`` once per item of ``arguments``, each in its own thread, all released at once.

    Every thread waits at one :class:`threading.Barrier` and then calls
    :meth:`~labkit.GuardedTool.invoke` directly (no loop, no model), so the
    guard sees the attempts as close together as Python allows.

    Args:
        tool: a guarded tool (its scope's limits and grants apply).
        arguments: one raw argument object per thread (a mapping or JSON text).
        timeout_s: how long to wait for all threads; a body that never
            returns makes this raise rather than hang.

    Returns:
        One :class:`Attempt` per item, in the order given.

    Raises:
        InputError: ``tool`` is not a :class:`~labkit.GuardedTool`, or ``arguments`` is not a
            non-empty list (an ``InputError`` is a ``ValueError``).
        TimeoutError: some thread did not finish within ``timeout_s``.
    """
    tool = _inputs.guarded_tool(tool, "invoke_together")
    arguments = _arguments(arguments, "invoke_together")
    if not arguments:
        raise InputError("give at least one argument object: one thread is started per item")
    barrier = threading.Barrier(len(arguments))
    attempts: list[Attempt | None] = [None] * len(arguments)

    def worker(index: int, args: Mapping[str, Any] | str) -> None:
        barrier.wait()
        attempts[index] = _attempt(tool, args)

    threads = [
        threading.Thread(target=worker, args=(i, a), name=f"labkit-together-{i}", daemon=True)
        for i, a in enumerate(arguments)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout_s)
        if thread.is_alive():
            raise TimeoutError(f"a thread calling {tool.name!r} did not finish within {timeout_s:g} s")
    assert all(a is not None for a in attempts), "every thread records its attempt"
    return attempts  # type: ignore[return-value]
