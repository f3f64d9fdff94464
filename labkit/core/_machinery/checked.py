"""Door checks remembered for values that cannot change: a Limits and a set of grants are checked once.

A scope checks what it is given at its door (:func:`labkit.core.limits._limits`,
:func:`labkit.core.scope._capabilities`), so that a ``Limits`` built with ``model_construct`` (a
NaN deadline, a negative count) is refused. A ``Limits`` is a frozen model and a ``frozenset`` of
names cannot change either: the same object passes the same check again, run after run. So the
objects that passed are remembered, by identity (each is kept, so its id cannot serve another
object meanwhile), up to :data:`_MAX`; anything else, or a subclass, is checked every time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ..limits import Limits

__all__ = ["checked_once"]

R = TypeVar("R")

_MAX = 256
_PASSED: dict[int, tuple[object, Any]] = {}  # id -> (the value, what its check returned)
_LOCK = threading.Lock()
_UNCHANGING = (Limits, frozenset)


def checked_once(value: object, check: Callable[[Any], R]) -> R:
    """``check(value)``, or what it returned the last time for this very object when it cannot change."""
    entry = _PASSED.get(id(value))
    if entry is not None and entry[0] is value:
        result: R = entry[1]
        return result
    result = check(value)  # raises for a value that does not pass: nothing is remembered
    if type(value) in _UNCHANGING:
        with _LOCK:
            _PASSED[id(value)] = (value, result)
            while len(_PASSED) > _MAX:  # bounded: the oldest goes first
                _PASSED.pop(next(iter(_PASSED)))
    return result
