"""Control events shared between runs: a recorded ``(kind, name, count)`` becomes one cached event.

A scope records plain tuples (text and a number, which the garbage collector does not track) and
makes a :class:`~labkit.ControlEvent` when its events are read. The event is a frozen value, and run
after run records the same few (``ModelCall`` 1-3, ``ToolCall`` 1-2...), so runs share them instead
of validating seven new models each (about 1 µs each).
"""

from __future__ import annotations

import functools

from ..events import ControlEvent

__all__ = ["event"]


@functools.lru_cache(maxsize=256)
def event(kind: str, name: str, count: int) -> ControlEvent:
    """The :class:`ControlEvent` of a record (cached: see the module's docstring)."""
    return ControlEvent(kind=kind, name=name, count=count)
