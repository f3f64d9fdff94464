"""Property-based tests of repetition signatures (docs/guarantees.md, *Signatures*), with hypothesis."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from labkit import ExecutionScope, Limits, RunHalted, StopReason, canonical, signature

scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=20,
)
objects = st.dictionaries(st.text(max_size=5), json_values, max_size=5)


def strict_equal(a: Any, b: Any) -> bool:
    """Equality where a bool is never a number and key order never matters."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(strict_equal, a, b))
    return type(a) is type(b) and a == b


@given(objects, st.randoms(use_true_random=False))
def test_key_order_never_matters(value: dict[str, Any], rnd: Any) -> None:
    items = list(value.items())
    rnd.shuffle(items)
    assert canonical(dict(items)) == canonical(value)
    assert canonical(json.loads(json.dumps(dict(items)))) == canonical(value)


@given(st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1), st.integers(min_value=0, max_value=3))
def test_equal_decimal_values_are_equal_signatures(n: int, zeros: int) -> None:
    shifted = f"{n * 10**zeros}e-{zeros}"  # n written with a different mantissa and exponent (0 -> "0e-1", not "00e-1")
    texts = [str(n), f"{n}.0", f"{n}e0", shifted]
    canon = {canonical(json.loads(text)) for text in texts}
    assert canon == {canonical(n)}
    assert len({signature("f", {"x": json.loads(t)}) for t in texts}) == 1


@given(st.booleans(), st.integers(min_value=-2, max_value=2))
def test_bool_never_equals_a_number(flag: bool, n: int) -> None:
    assert canonical(flag) != canonical(n)
    assert canonical(flag) != canonical(float(n))
    assert canonical({"v": [flag]}) != canonical({"v": [n]})


@given(st.integers(min_value=2**53 - 4, max_value=2**200), st.integers(min_value=1, max_value=10**6))
def test_large_integers_never_collapse(n: int, delta: int) -> None:
    assert canonical(n) != canonical(n + delta)
    assert canonical(json.loads(str(n))) != canonical(json.loads(str(n + delta)))


@given(json_values, json_values)
def test_distinct_values_stay_distinct(a: Any, b: Any) -> None:
    """Strings (case, whitespace), arrays (order) and null all count: canonical is injective."""
    assert (canonical(a) == canonical(b)) == strict_equal(a, b)


@given(st.text(min_size=1, max_size=8))
def test_string_case_and_whitespace_count(text: str) -> None:
    assert canonical(text + " ") != canonical(text)
    if text.upper() != text:
        assert canonical(text.upper()) != canonical(text)
    assert canonical(None) != canonical("null") != canonical(text + "x")


@given(st.lists(st.integers(), min_size=2, max_size=5, unique=True))
def test_array_order_counts(items: list[int]) -> None:
    assert canonical(items) != canonical(list(reversed(items)))


@settings(max_examples=60, deadline=None)
@given(objects)
def test_direct_value_and_model_json_give_one_signature(value: dict[str, Any]) -> None:
    """Invoked directly, then as the model's JSON text: the second attempt is a repetition."""
    scope = ExecutionScope(Limits(tool_calls=10, repetitions=1), {"c"})

    def echo(payload: Any) -> str:
        return "ok"

    echo.__annotations__ = {"payload": Any, "return": str}
    tool = scope.tool("echo", "c", echo)
    assert tool.invoke({"payload": value}) == "ok"
    try:
        tool.invoke(json.dumps({"payload": value}))
    except RunHalted as halt:
        assert halt.reason is StopReason.REPEATED_CALL and halt.refused
    else:
        raise AssertionError("the JSON form was not recognised as the same call")
    assert scope.usage.tool_calls == 1


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1))
def test_typed_int_argument_direct_and_json_float_text(n: int) -> None:
    scope = ExecutionScope(Limits(repetitions=1), {"c"})

    def read(input: int) -> int:
        return input

    read.__annotations__ = {"input": int, "return": int}
    tool = scope.tool("read", "c", read)
    tool.invoke({"input": n})
    try:
        tool.invoke(f'{{"input": {n}.0}}')
    except RunHalted as halt:
        assert halt.reason is StopReason.REPEATED_CALL
    else:
        raise AssertionError("42 and 42.0 were two signatures")


# -- one exact-decimal form for every numeric type (docs/guarantees.md, *Signatures*; issue 11) ------------------------

from decimal import Decimal  # noqa: E402

finite_decimals = st.decimals(allow_nan=False, allow_infinity=False, places=None).filter(
    lambda d: abs(d.as_tuple().exponent) < 400  # type: ignore[operator]
)


def _pad(value: Decimal, zeros: int) -> Decimal:
    """The same value written with ``zeros`` more trailing zeros (``1.1`` -> ``1.100``)."""
    sign, digits, exponent = value.as_tuple()
    return Decimal((sign, digits + (0,) * zeros, int(exponent) - zeros))


@given(finite_decimals, st.integers(min_value=0, max_value=5))
def test_a_decimal_with_trailing_zeros_is_one_value(value: Decimal, zeros: int) -> None:
    padded = _pad(value, zeros)
    assert padded == value
    assert canonical(padded) == canonical(value)


@given(finite_decimals, finite_decimals)
def test_two_decimals_share_a_text_exactly_when_they_are_equal(a: Decimal, b: Decimal) -> None:
    assert (canonical(a) == canonical(b)) == (a == b)


@given(st.integers())
def test_an_int_its_decimal_and_its_exact_float_are_one_value(n: int) -> None:
    assert canonical(Decimal(n)) == canonical(n)
    assert canonical(_pad(Decimal(n), 2)) == canonical(n)  # n.00
    if float(n) == n:
        assert canonical(float(n)) == canonical(n)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_float_is_the_decimal_of_its_shortest_text(x: float) -> None:
    expected = Decimal(int(x)) if x.is_integer() else Decimal(repr(x))
    assert canonical(x) == canonical(expected)
    assert canonical(json.loads(json.dumps(x))) == canonical(x)  # through JSON and back: one value


def test_the_issue_examples() -> None:
    assert canonical(Decimal("1.10")) == canonical(Decimal("1.100")) == canonical(Decimal("1.1")) == canonical(1.1)
    assert (
        canonical(42)
        == canonical(42.0)
        == canonical(4.2e1)
        == canonical(Decimal("42.00"))
        == canonical(Decimal("4.2E+1"))
    )
    assert canonical(Decimal("-0.0")) == canonical(0) == canonical(-0.0)
    assert canonical(True) != canonical(Decimal(1))


@settings(max_examples=50)
@given(
    st.decimals(min_value=-(10**6), max_value=10**6, allow_nan=False, allow_infinity=False, places=3), st.integers(0, 3)
)
def test_a_decimal_argument_resent_with_other_trailing_zeros_is_a_repetition(value: Decimal, zeros: int) -> None:
    def pay(amount: Decimal) -> str:
        return "paid"

    tool = ExecutionScope(Limits(tool_calls=5, repetitions=1), {"pay"}).tool("pay", "pay", pay)
    tool.invoke({"amount": value})
    text = format(value, "f") + ("0" * zeros if "." in format(value, "f") else ("." + "0" * zeros if zeros else ""))
    try:
        tool.invoke('{"amount": ' + text + "}")  # the model resends the amount, written another way
    except RunHalted as halt:
        assert halt.reason is StopReason.REPEATED_CALL
    else:
        raise AssertionError(f"{text} was not a repetition of {value}")
