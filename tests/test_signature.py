"""Signatures = tool name + canonical arguments (docs/guarantees.md, *Signatures*), with its worked examples."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import triples

from labkit import ExecutionScope, Limits, RunHalted, StopReason, canonical, signature


@pytest.mark.parametrize("text", ["42", "42.0", "4.2e1", "420e-1", "4.20E+1"])
def test_forty_two_as_parsed_json_is_one_value(text: str) -> None:
    assert canonical(json.loads(text)) == canonical(json.loads("42"))


def test_forty_two_as_python_values_is_one_value() -> None:
    assert canonical(42) == canonical(42.0) == canonical(4.2e1)
    assert signature("read_ticket", {"input": 42}) == signature("read_ticket", {"input": 42.0})


def test_true_is_not_one() -> None:
    assert canonical(True) != canonical(1)
    assert canonical(json.loads("true")) != canonical(json.loads("1"))
    assert canonical(False) != canonical(0)


def test_large_integers_keep_their_exact_value() -> None:
    assert canonical(2**53 + 1) != canonical(2**53)
    assert canonical(json.loads("9007199254740993")) != canonical(json.loads("9007199254740992"))


def test_fractions_stay_apart_from_integers() -> None:
    assert canonical(42.5) != canonical(42)
    assert canonical(0.1) != canonical(0.2)


def test_key_order_is_irrelevant() -> None:
    assert canonical(json.loads('{"a": 1, "b": 2}')) == canonical(json.loads('{"b": 2, "a": 1}'))


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ({"q": "Ticket"}, {"q": "ticket"}),  # case counts
        ({"q": "ticket"}, {"q": "ticket "}),  # whitespace counts
        ({"q": [1, 2]}, {"q": [2, 1]}),  # array order counts
        ({"q": None}, {}),  # null counts
        ({"q": None}, {"q": 0}),
        ({"q": None}, {"q": "null"}),
        ({"q": "1"}, {"q": 1}),
        ({"q": [None]}, {"q": []}),
    ],
)
def test_significant_differences(left: dict[str, object], right: dict[str, object]) -> None:
    assert canonical(left) != canonical(right)


def test_nested_objects_are_canonical_at_every_depth() -> None:
    left = json.loads('{"x": {"b": [1, {"d": 1.0, "c": "s"}], "a": null}, "y": 2}')
    right = json.loads('{"y": 2.0, "x": {"a": null, "b": [1e0, {"c": "s", "d": 1}]}}')
    assert canonical(left) == canonical(right)
    swapped = json.loads('{"y": 2, "x": {"a": null, "b": [{"c": "s", "d": 1}, 1]}}')
    assert canonical(left) != canonical(swapped)


def test_signature_includes_the_tool_name() -> None:
    assert signature("read_ticket", {"input": 42}) != signature("finish_review", {"input": 42})


def test_non_json_values_are_refused() -> None:
    with pytest.raises(TypeError):
        canonical({"q": {1, 2}})


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@given(_json)
def test_round_trip_through_json_text_keeps_the_canonical_text(value: object) -> None:
    assert canonical(json.loads(json.dumps(value))) == canonical(value)


@given(st.dictionaries(st.text(max_size=5), _json, max_size=6))
def test_reversed_key_order_keeps_the_canonical_text(value: dict[str, object]) -> None:
    assert canonical(dict(reversed(list(value.items())))) == canonical(value)


@given(st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1))
def test_integral_floats_equal_their_integers(number: int) -> None:
    assert canonical(float(number)) == canonical(number)


def _int_body(entries: list[object]):
    def lookup(input: int) -> str:
        entries.append(input)
        return "ok"

    return lookup


def _float_body(entries: list[object]):
    def lookup(input: float) -> str:
        entries.append(input)
        return "ok"

    return lookup


@pytest.mark.parametrize("make_body", [_int_body, _float_body], ids=["int", "float"])
def test_model_json_and_python_value_share_a_signature_through_the_guard(make_body) -> None:
    entries: list[object] = []
    scope = ExecutionScope(Limits(repetitions=1), {"ticket.read"})
    tool = scope.tool("lookup", "ticket.read", make_body(entries))
    assert tool.invoke('{"input": 42}') == "ok"  # JSON text, as a model sends it
    with pytest.raises(RunHalted) as info:
        tool.invoke({"input": 42.0})  # a Python value passed directly
    assert info.value.reason is StopReason.REPEATED_CALL
    assert len(entries) == 1
    assert triples(scope.events) == [("ToolCall", "lookup", 1), ("RepeatedCall", "lookup", 1)]


def test_different_arguments_are_different_signatures_through_the_guard() -> None:
    scope = ExecutionScope(Limits(repetitions=1), {"ticket.read"})
    tool = scope.tool("lookup", "ticket.read", lambda_body)
    assert tool.invoke({"input": 42}) == 42
    assert tool.invoke({"input": 43}) == 43
    assert scope.usage.tool_calls == 2


def lambda_body(input: int) -> int:
    return input


def test_a_float_holding_an_integer_equals_that_integer_at_any_magnitude() -> None:
    # 2.0**60 is exactly 2**60; its shortest printed form (1.152921504606847e+18) is not.
    assert canonical(2.0**60) == canonical(2**60)
    assert canonical(2.0**60) != canonical(2**60 + 1)
    assert canonical(-(2.0**70)) == canonical(-(2**70))
