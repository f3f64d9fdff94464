"""Repetition signatures: tool name + canonical arguments (docs/guarantees.md, *Signatures*).

The canonical text of a JSON value is built so that two values the host
should treat as "the same call" give the same text, and nothing else does:

* object keys are sorted by code point, so key order never matters;
* numbers are exact decimals, whatever their type (``int``, ``float``,
  ``Decimal``): ``42``, ``42.0`` and ``4.2e1`` are one value, ``1.10`` and
  ``1.1`` are one value, while ``2**53 + 1`` and ``2**53`` stay apart (no
  float rounding);
* ``true``/``false`` are never numbers, so ``true`` differs from ``1``;
* strings are compared exactly (case and whitespace count), array order
  counts and ``null`` counts;
* non-finite numbers have no exact decimal (JSON has none either; a parser
  turns ``1e400`` and ``1e500`` alike into infinity), so they have no
  canonical text: :class:`NonFiniteNumber` is raised, and a tool call holding
  one fails binding instead of sharing a signature with another number.

The signature is computed on the arguments *after* typed binding, so JSON
``42`` from a model and a Python ``42`` passed directly give one signature.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from decimal import Decimal
from json.encoder import encode_basestring

__all__ = ["NonFiniteNumber", "canonical", "signature"]


class NonFiniteNumber(ValueError):
    """A NaN or infinite number has no canonical text (it is not an exact decimal)."""


_dumps_str = json.JSONEncoder(ensure_ascii=False).encode
_encode_str = encode_basestring  # what _dumps_str does for a str, without the method's dispatch


def _number(value: int | float | Decimal) -> str:
    """The canonical text of a number: one exact-decimal form whatever its type (docs/guarantees.md, *Signatures*).

    ``int``, ``float`` and ``Decimal`` all become a :class:`~decimal.Decimal`
    first (a float holding an integer as that integer, any other float by
    its shortest round-trip text, so ``0.1`` is ``1e-1`` and not the binary
    value's 55 digits), then trailing zeros move into the
    exponent: ``42``, ``42.0``, ``4.2e1`` and ``Decimal("42.00")`` are all
    ``42``; ``1.10`` and ``1.1`` are both ``11e-1``; ``-0.0`` is ``0``.

    Raises:
        NonFiniteNumber: NaN or an infinity (a float or a Decimal).
    """
    if type(value) is int and -(10**15) < value < 10**15 and value % 10:
        return str(value)  # the common case: an int without trailing zeros is its own canonical text
    if isinstance(value, float):
        if not math.isfinite(value):
            raise NonFiniteNumber(f"{value!r} is not a finite number")
        # a float holding an integer is exactly that integer (2.0**60 is 2**60, whatever repr prints)
        number = Decimal(int(value)) if value.is_integer() else Decimal(repr(value))
    elif isinstance(value, Decimal):
        if not value.is_finite():
            raise NonFiniteNumber(f"{value!r} is not a finite number")
        number = value
    else:
        number = Decimal(value)  # exact for an int of any size
    sign, digits, exponent = number.as_tuple()
    return _decimal_text(sign, digits, int(exponent))


def _decimal_text(sign: int, digits: tuple[int, ...], exponent: int) -> str:
    end = len(digits)
    while end > 1 and digits[end - 1] == 0:
        end -= 1
        exponent += 1
    if end == 1 and digits[0] == 0:
        return "0"
    mantissa = "".join(map(str, digits[:end]))
    text = mantissa if exponent == 0 else f"{mantissa}e{exponent}"
    return "-" + text if sign else text


def canonical(value: object) -> str:
    """Return the canonical text of a JSON-shaped value.

    Args:
        value: ``None``, ``bool``, ``int``, ``float``, ``Decimal``, ``str``,
            a sequence (list/tuple) or a mapping with string keys, nested freely.

    Returns:
        A string; equal strings mean the host treats the values as one.

    Raises:
        TypeError: a value that is not JSON-shaped (e.g. a set or an object).
        NonFiniteNumber: a NaN or infinite float anywhere in the value.
    """
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _dumps_str(value)
    if isinstance(value, (int, float, Decimal)):  # bool was answered above: never a number
        return _number(value)
    if isinstance(value, Mapping):
        items = sorted(value.items())
        return "{" + ",".join(_dumps_str(k) + ":" + canonical(v) for k, v in items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(map(canonical, value)) + "]"
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def signature(tool: str, arguments: Mapping[str, object]) -> str:
    """Return the repetition signature of a call: ``"<tool>:<canonical arguments>"``.

    Args:
        tool: the tool name (one name identifies one implementation per scope).
        arguments: the bound arguments, dumped to JSON-shaped values.
    """
    return tool + ":" + canonical(arguments)
