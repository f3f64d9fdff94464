"""Read-only JSON containers, for values labkit shares between runs (a tool's schema in its spec).

:func:`freeze` turns nested dicts and lists into :class:`FrozenDict` and
:class:`FrozenList`: still a ``dict`` and a ``list`` for every reader
(``isinstance``, ``json.dumps``, pydantic serialisation, equality), but any
change raises ``TypeError``, so one run (or a transport) cannot alter what
the next run shows the model. ``copy.deepcopy`` and pickling give ordinary,
mutable containers all the way down; ``copy.copy`` is shallow: the outer
container is mutable, nested values stay read-only.
"""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["FrozenDict", "FrozenList", "freeze", "thaw"]

_MESSAGE = "this JSON value is shared between runs and read-only; change a copy made with copy.deepcopy(value)"


def _refuse(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(_MESSAGE)


class FrozenDict(dict[Any, Any]):
    """A ``dict`` that refuses every change."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __copy__(self) -> dict[Any, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return thaw(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (thaw, (dict(self),))


class FrozenList(list[Any]):
    """A ``list`` that refuses every change."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return thaw(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (thaw, (list(self),))


def freeze(value: Any) -> Any:
    """A read-only deep copy of a JSON value (dicts and lists nested freely)."""
    if isinstance(value, dict):
        return FrozenDict((k, freeze(v)) for k, v in value.items())
    if isinstance(value, list):
        return FrozenList(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """An ordinary, mutable deep copy of a (possibly frozen) JSON value."""
    if isinstance(value, dict):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, list):
        return [thaw(v) for v in value]
    return value  # str, int, float, bool, None: immutable
