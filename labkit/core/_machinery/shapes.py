"""Shapes, signature keys and schemas kept between runs, so a body is read once, not once per run.

Reading a body (its parameters, its annotations, a pydantic model built for them) costs far more
than a run: a closure made again for every run would pay it every time. A shape is shared by
bodies made of the same parts (the same kind of callable, the same code, annotations and
defaults); the key holds a code object's id and annotation values, never a body, so nothing here
keeps a body, or what it captured, alive.
"""

from __future__ import annotations

import functools
import json
import threading
import types
from collections.abc import Callable
from decimal import Decimal
from enum import Enum
from typing import Any, TypeVar

from pydantic import BaseModel

from ..signature import _dumps_str

__all__ = ["schema_text", "shared_shape", "signature_keys"]

S = TypeVar("S")

_SHAPES: dict[Any, tuple[types.CodeType, Any]] = {}
_SHAPES_MAX = 512
_SHAPES_LOCK = threading.Lock()
_MISSING = object()


def shared_shape(body: Any, code_owner: Any, tool: str, read: Callable[[], S]) -> S:
    """The shape of ``body`` made by ``read()``, or the one already made for a body of the same parts."""
    key = _shape_key(body, code_owner, tool)
    try:
        entry = _SHAPES.get(key) if key is not None else None
    except TypeError:  # unhashable parts (e.g. a list default): not shared
        key = None
    if key is None:
        return read()
    if entry is not None and entry[0] is code_owner.__code__:  # the key holds the code's id: same code?
        shape: S = entry[1]
        return shape
    shape = read()
    with _SHAPES_LOCK:
        _SHAPES[key] = (code_owner.__code__, shape)
        while len(_SHAPES) > _SHAPES_MAX:  # bounded: the oldest goes first
            _SHAPES.pop(next(iter(_SHAPES)))
    return shape


def _shape_key(body: Any, code_owner: Any, tool: str) -> Any:
    """What a body's shape is made of, or ``None`` when it cannot be told (then it is not shared)."""
    partial = body if isinstance(body, functools.partial) else None
    try:
        key = (
            tool,
            type(body),  # a function, a bound method, a partial, an object with __call__...
            None if partial is None else (type(partial.func), len(partial.args), tuple(sorted(partial.keywords))),
            id(code_owner.__code__),  # hashing a code object costs a walk of its fields; the entry checks identity
            tuple(code_owner.__annotations__.items()),
            # string annotations (``from __future__ import annotations``) resolve in the module
            tuple(
                code_owner.__globals__.get(a, _MISSING)
                for a in code_owner.__annotations__.values()
                if isinstance(a, str)
            ),
        )
    except AttributeError:  # no code object (a builtin)
        return None
    if code_owner.__defaults__ or code_owner.__kwdefaults__:
        defaults = (*(code_owner.__defaults__ or ()), *(code_owner.__kwdefaults__ or {}).items())
        if not all(_plain_value(d) for d in defaults):  # e.g. a per-run object as a default: kept out of the cache
            return None
        key += tuple(_default_key(d) for d in defaults)
    return key


def _default_key(value: Any) -> Any:
    """A default as the key holds it: with its type, so ``1``, ``1.0`` and ``True`` (equal in Python) stay apart.

    ``-0.0`` and ``0.0``, or ``Decimal("1.0")`` and ``Decimal("1.00")``, are equal too: those are told apart by
    their repr.
    """
    if isinstance(value, tuple):
        return (tuple, tuple(_default_key(v) for v in value))
    if isinstance(value, frozenset):
        return (frozenset, frozenset(_default_key(v) for v in value))
    return (type(value), repr(value) if isinstance(value, (float, Decimal)) else value)


def _plain_value(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, float, str, bytes, Decimal, Enum)):
        return True
    if isinstance(value, (tuple, frozenset)):
        return all(_plain_value(v) for v in value)
    return False


@functools.lru_cache(maxsize=512)
def signature_keys(model: type[BaseModel]) -> tuple[tuple[str, str], ...]:
    """``(field, '"field":')`` pairs of a model's fields in code-point order, as canonical() writes object keys."""
    return tuple((field, _dumps_str(field) + ":") for field in sorted(model.model_fields))


@functools.lru_cache(maxsize=512)
def schema_text(model: type[BaseModel]) -> str:
    """A model's JSON Schema as text: generating it costs about 0.5 ms, decoding the text a few µs."""
    return json.dumps(model.model_json_schema())
