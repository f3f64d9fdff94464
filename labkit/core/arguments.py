"""What an argument value may be: numbers kept exact, booleans never numbers, at any depth.

docs/guarantees.md, *Signatures*; chapter 5, *The canonical rules, worked*.

* A JSON arguments text is decoded once (:func:`_decode_json`): a number written with a fraction
  or an exponent becomes an exact decimal, so a ``Decimal`` parameter receives every digit the
  model sent, a ``float`` or an untyped (``Any``) one receives a ``float`` as before, and an
  ``int`` one an ``int`` when the number is whole.
* Every declared type is rewritten so that a number never accepts ``true``/``false`` and a
  ``bool`` accepts only them (:func:`_no_bool_numbers`); inside a nested model, dataclass or
  TypedDict, a boolean that became a number is found after validation (:func:`_bool_made_number`).
* Bound arguments become JSON-shaped values for their signature, numbers kept as numbers
  (:func:`_json_shaped`).

:mod:`labkit.core.binding` applies these rules when a tool binds its arguments.
"""

from __future__ import annotations

import collections
import collections.abc
import dataclasses
import functools
import json
import sys
import types
from collections.abc import Mapping
from decimal import Decimal
from enum import Enum
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, BeforeValidator, Strict
from pydantic_core import to_jsonable_python
from typing_extensions import is_typeddict

from .signature import canonical

# -- JSON arguments: one decoding, numbers kept exact (docs/guarantees.md, *Signatures*) --


class _JsonFraction(Decimal):
    """A JSON number written with a fraction or an exponent (``0.1``, ``1e3``), decoded exactly.

    It only lives between :func:`_decode_json` and validation: a ``Decimal``
    parameter takes it as the plain ``Decimal`` of the text the model sent,
    a ``float`` or untyped one as a ``float`` (what ``json.loads`` gives), an
    ``int`` one as an ``int`` when it is whole (``42.0``, ``1e3``).
    """

    __slots__ = ()


_DECODER = json.JSONDecoder(parse_float=_JsonFraction)


def _decode_json(text: str | bytes | bytearray) -> Any:
    """A JSON arguments text as Python values, every number exact
    (chapter 4, *The guard, step by step*; docs/guarantees.md, *Signatures*).

    Integers become ``int`` (of any size up to Python's 4300 digits), numbers
    with a fraction or an exponent :class:`_JsonFraction`; ``NaN`` and
    ``Infinity`` (not JSON, but sent by some encoders) become floats, which
    every parameter then refuses as not finite.

    Raises:
        ValueError: with a one-line message (invalid JSON, a number out of
            range, too deep nesting).
    """
    try:
        if isinstance(text, (bytes, bytearray)):
            text = bytes(text).decode("utf-8")
        return _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"Invalid JSON: {exc}") from None
    except RecursionError:
        raise ValueError("recursion limit exceeded: the arguments are nested too deeply") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"Invalid JSON: not UTF-8 ({exc.reason})") from None
    except ValueError as exc:  # an integer of more than 4300 digits
        raise ValueError(f"number out of range: {exc}") from None


_FLOAT_MAX = Decimal(sys.float_info.max)


def _plain_number(kind: type, value: Any) -> Any:
    """A number for a parameter of type ``kind``: booleans refused, a JSON fraction converted."""
    if isinstance(value, bool):
        raise ValueError("a boolean is not a number")
    if type(value) is not _JsonFraction:
        return value
    if issubclass(kind, Decimal):
        return Decimal(value)  # every digit the model sent
    if issubclass(kind, int) and abs(value) <= _FLOAT_MAX and value == value.to_integral_value():
        return int(value)  # 42.0, 1e3 and 1e30 are whole: that int, exactly
    return float(value)  # a float parameter, or an int one given 42.5 or 1e400 (refused, as a float would be)


def _plain_floats(value: Any, depth: int = 0) -> Any:
    """An untyped value with every JSON fraction as a ``float``, as ``json.loads`` gives it."""
    if type(value) is _JsonFraction:
        return float(value)
    if isinstance(value, (list, dict)):
        if depth > 250:
            raise ValueError("arguments nested too deeply (more than 250 levels)")
        if isinstance(value, list):
            return [_plain_floats(v, depth + 1) for v in value]
        return {k: _plain_floats(v, depth + 1) for k, v in value.items()}
    return value


# -- booleans are not numbers, at any depth (docs/guarantees.md, *Signatures*) --


_ONLY_TRUE_FALSE = Strict()
_AS_INT = BeforeValidator(functools.partial(_plain_number, int))
_AS_FLOAT = BeforeValidator(functools.partial(_plain_number, float))
_AS_DECIMAL = BeforeValidator(functools.partial(_plain_number, Decimal))
_UNTYPED = BeforeValidator(_plain_floats)
_CONTAINERS = {
    list, tuple, set, frozenset, dict, collections.deque,
    collections.abc.Sequence, collections.abc.MutableSequence, collections.abc.Set,
    collections.abc.MutableSet, collections.abc.Mapping, collections.abc.MutableMapping,
    collections.abc.Collection, collections.abc.Iterable,
}  # fmt: skip
_UNIONS = (Union, types.UnionType)


def _numbers_only(values: Any) -> bool:
    """Whether some of ``values`` (a Literal's, an Enum's) are numbers and none is a boolean."""
    numbers = [v for v in values if isinstance(v, (int, float, Decimal)) and not isinstance(v, bool)]
    return bool(numbers) and not any(isinstance(v, bool) for v in values)


def _no_bool_numbers(annotation: Any) -> Any:
    """``annotation`` with every number refusing booleans and every ``bool`` taking only true/false.

    Reaches through ``Optional``/unions, ``Annotated``, ``Literal``, enums of numbers and the
    standard containers (list, tuple, set, dict, the ``collections.abc``
    ones), at any depth. Each number also takes a JSON fraction as its own
    type (:func:`_plain_number`), and an untyped place (``Any``, ``object``, a
    bare ``list`` or ``dict``) takes it as a ``float``. A nested pydantic
    model, dataclass or TypedDict validates its own fields by its own rules
    (a ``Decimal`` field there still receives every digit); a boolean that
    became a number there is found after validation by :func:`_bool_made_number`.
    """
    if annotation is bool:
        return Annotated[bool, _ONLY_TRUE_FALSE]
    if isinstance(annotation, type) and issubclass(annotation, (int, float, Decimal)):
        if issubclass(annotation, Decimal):
            return Annotated[annotation, _AS_DECIMAL]
        return Annotated[annotation, _AS_INT if issubclass(annotation, int) else _AS_FLOAT]
    if annotation is Any or annotation is object:
        return Annotated[annotation, _UNTYPED]
    if isinstance(annotation, type) and issubclass(annotation, Enum):  # an enum of numbers is looked up by number
        return Annotated[annotation, _AS_FLOAT] if _numbers_only([m.value for m in annotation]) else annotation
    origin, args = get_origin(annotation), get_args(annotation)
    if not args:
        return Annotated[annotation, _UNTYPED] if annotation in _CONTAINERS else annotation
    if origin is Annotated:
        return Annotated[(_no_bool_numbers(args[0]), *annotation.__metadata__)]
    if origin is Literal:
        return Annotated[annotation, _AS_FLOAT] if _numbers_only(args) else annotation
    if origin in _UNIONS:
        return Union[tuple(_no_bool_numbers(a) for a in args)]  # noqa: UP007  (built from a tuple)
    if origin in _CONTAINERS:
        inner = tuple(a if a is Ellipsis else _no_bool_numbers(a) for a in args)
        try:
            return origin[inner if len(inner) > 1 else inner[0]]
        except TypeError:
            return annotation
    return annotation


def _holds_nested_type(annotation: Any) -> bool:
    """Whether a pydantic model, dataclass or TypedDict appears anywhere in ``annotation``."""
    if isinstance(annotation, type) and (
        issubclass(annotation, BaseModel) or dataclasses.is_dataclass(annotation) or is_typeddict(annotation)
    ):
        return True
    return any(_holds_nested_type(a) for a in get_args(annotation) if a is not Ellipsis)


def _bool_made_number(raw: Any, bound: Any, where: str = "") -> str | None:
    """Where a boolean the caller sent became a number inside a nested type, or ``None``
    (docs/guarantees.md, *Signatures*).

    A nested model, dataclass or TypedDict validates its fields by its own
    (lax) rules, in which ``true`` is the int ``1``; :func:`_no_bool_numbers`
    cannot reach inside it. This walks what was sent beside what was bound,
    after validation, and finds a boolean that arrived as a number.
    """
    if isinstance(raw, bool):
        value = bound.value if isinstance(bound, Enum) else bound  # an enum member looked up by 1 or 0
        is_number = isinstance(value, (int, float, Decimal)) and not isinstance(value, bool)
        return (where or "arguments") if is_number else None
    if isinstance(bound, BaseModel) and isinstance(raw, Mapping):
        pairs = [(raw.get(f.alias or n, raw.get(n)), getattr(bound, n), n) for n, f in type(bound).model_fields.items()]
    elif dataclasses.is_dataclass(bound) and not isinstance(bound, type) and isinstance(raw, Mapping):
        pairs = [(raw.get(f.name), getattr(bound, f.name), f.name) for f in dataclasses.fields(bound)]
    elif isinstance(bound, Mapping) and isinstance(raw, Mapping):
        pairs = [(v, bound[k], str(k)) for k, v in raw.items() if k in bound]
    elif isinstance(bound, (list, tuple)) and isinstance(raw, (list, tuple)) and len(raw) == len(bound):
        pairs = [(r, b, str(i)) for i, (r, b) in enumerate(zip(raw, bound, strict=True))]
    elif isinstance(bound, (set, frozenset)) and isinstance(raw, (list, tuple, set, frozenset)):
        sent_bool = any(isinstance(r, bool) for r in raw)  # no positions: did a boolean vanish into the numbers?
        return (where or "arguments") if sent_bool and not any(isinstance(b, bool) for b in bound) else None
    else:
        return None
    for r, b, key in pairs:
        found = _bool_made_number(r, b, f"{where}.{key}" if where else key)
        if found:
            return found
    return None


def _json_shaped(value: Any, depth: int = 0) -> Any:
    """Bound arguments dumped in Python mode, as JSON-shaped values with numbers kept as numbers.

    ``model_dump(mode="json")`` writes a ``Decimal`` as a string, which would
    make ``1.10`` and ``1.1`` two signatures; here ``int``, ``float`` and
    ``Decimal`` stay numbers for :func:`~labkit.signature` (docs/guarantees.md, *Signatures*), a set
    or frozenset becomes a list in the order of its items' canonical texts
    (so ``{1, 9}`` and ``{9, 1}`` are one value), and any other value (a date,
    a UUID, an enum...) takes its JSON form.
    """
    if depth > 250:
        raise ValueError("more than 250 levels")
    if value is None or isinstance(value, (bool, int, float, str, Decimal)):
        return value
    if isinstance(value, dict):
        return {str(k) if not isinstance(k, str) else k: _json_shaped(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_shaped(v, depth + 1) for v in value]
    if isinstance(value, (set, frozenset)):  # no order of its own: one canonical order (docs/guarantees.md)
        return sorted((_json_shaped(v, depth + 1) for v in value), key=canonical)
    return _json_shaped(to_jsonable_python(value), depth + 1)  # its JSON form: text, a list, an object
