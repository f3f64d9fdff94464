"""One generated table of argument types: binding keeps every value, the signature follows
docs/guarantees.md, *Signatures* (issue 20).

For each annotation a tool may declare, hypothesis generates values (at least
200 each) and every row checks, through the guard itself (no private field):

(a) the body receives a value equal to the one sent as JSON, of the same type;
(b) the value passed directly and its JSON are one call: with one attempt per
    signature, the second is refused as a repeat;
(c) two values share a signature exactly when docs/guarantees.md, *Signatures*, calls them equal
    (decided here by :func:`spec_key`, written apart from labkit's canonical form);
(d) a boolean put where a number was, at any depth, does not bind.

The JSON texts are written by :func:`to_json`, which keeps every digit of a
``Decimal`` (``json.dumps`` cannot), as a model that sends exact numbers would.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from decimal import Decimal
from typing import Annotated, Any, Literal, NamedTuple, Optional, Union

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from labkit import ExecutionScope, Limits, RunHalted, StopReason, ToolArgumentsError

CAP = "table.use"
EXAMPLES = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)


# -- the argument types --------------------------------------------------------------------------------


class Color(enum.Enum):
    RED = "red"
    ONE = 1
    HALF = 1.5


class Point(TypedDict):
    x: int
    y: Decimal


@dataclasses.dataclass(frozen=True)
class Item:
    name: str
    qty: int


class Money(BaseModel):
    amount: Decimal
    currency: str


class Owner(BaseModel):
    name: str
    ratio: float


class Order(BaseModel):
    lines: list[Money]
    owner: Owner | None = None
    tags: frozenset[int] = frozenset()
    item: Item | None = None


INTS = st.integers(min_value=-(10**30), max_value=10**30)
FLOATS = st.floats(allow_nan=False, allow_infinity=False)
DECIMALS = st.decimals(allow_nan=False, allow_infinity=False)
TEXT = st.text(max_size=8)
MONEY = st.builds(Money, amount=DECIMALS, currency=st.sampled_from(["EUR", "USD", "eur"]))
OWNER = st.builds(Owner, name=TEXT, ratio=FLOATS)
ITEM = st.builds(Item, name=TEXT, qty=INTS)


class Row(NamedTuple):
    annotation: Any
    values: st.SearchStrategy[Any]


TABLE = {
    "int": Row(int, INTS),
    "float": Row(float, FLOATS),
    "Decimal": Row(Decimal, DECIMALS),
    "bool": Row(bool, st.booleans()),
    "str": Row(str, st.text()),
    "None": Row(type(None), st.none()),
    "Literal": Row(Literal[1, 2.5, "a"], st.sampled_from([1, 2.5, "a"])),
    "Enum": Row(Color, st.sampled_from(Color)),
    "list": Row(list[int], st.lists(INTS, max_size=5)),
    "tuple": Row(tuple[int, str, Decimal], st.tuples(INTS, TEXT, DECIMALS)),
    "set": Row(set[int], st.sets(st.integers(-50, 50), max_size=6)),
    "frozenset": Row(frozenset[Decimal], st.frozensets(DECIMALS, max_size=4)),
    "dict": Row(dict[str, float], st.dictionaries(TEXT, FLOATS, max_size=4)),
    "TypedDict": Row(Point, st.fixed_dictionaries({"x": INTS, "y": DECIMALS})),
    "dataclass": Row(Item, ITEM),
    "pydantic model": Row(Money, MONEY),
    "nested models": Row(
        Order,
        st.builds(
            Order,
            lines=st.lists(MONEY, max_size=3),
            owner=st.none() | OWNER,
            tags=st.frozensets(st.integers(-9, 9), max_size=4),
            item=st.none() | ITEM,
        ),
    ),
    "Optional": Row(Optional[Decimal], st.none() | DECIMALS),  # noqa: UP045 - the typing form is the row
    "Union": Row(Union[int, str, list[float]], INTS | TEXT | st.lists(FLOATS, max_size=3)),  # noqa: UP007 - idem
    "Annotated": Row(
        Annotated[Decimal, Field(ge=0, max_digits=12, decimal_places=4)],
        st.decimals(min_value=0, max_value=10**7, places=4, allow_nan=False, allow_infinity=False),
    ),
}


# -- JSON with every digit, and the equality of docs/guarantees.md, *Signatures*, written apart from labkit ------------


def shaped(value: Any) -> Any:
    """A value as the JSON tree a model would send: numbers kept as they are (a Decimal exact)."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, BaseModel):
        return {name: shaped(getattr(value, name)) for name in type(value).model_fields}
    if dataclasses.is_dataclass(value):
        return {f.name: shaped(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {k: shaped(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [shaped(v) for v in value]
    return value


def encode(tree: Any) -> str:
    if tree is None or isinstance(tree, (bool, str, int, float)):
        return json.dumps(tree)
    if isinstance(tree, Decimal):
        return str(tree)  # '1.10', '1E+2', '-0.000': valid JSON numbers, every digit kept
    if isinstance(tree, dict):
        return "{" + ",".join(json.dumps(k) + ":" + encode(v) for k, v in tree.items()) + "}"
    return "[" + ",".join(encode(v) for v in tree) + "]"


def to_json(value: Any) -> str:
    return encode({"value": shaped(value)})


def spec_key(value: Any) -> Any:
    """What *Signatures* compares: exact decimals of any type, booleans apart, sets and keys unordered."""
    if isinstance(value, enum.Enum):
        return spec_key(value.value)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, Decimal)):
        return ("number", Decimal(value))  # Decimal equality is exact: 1.10 == 1.1, 2**53 + 1 != 2**53
    if isinstance(value, float):
        return ("number", Decimal(repr(value)))
    if value is None or isinstance(value, str):
        return ("value", value)
    if isinstance(value, (set, frozenset)):
        return ("set", frozenset(spec_key(v) for v in value))
    if isinstance(value, (list, tuple)):
        return ("array", tuple(spec_key(v) for v in value))
    if isinstance(value, BaseModel):
        return ("object", frozenset((k, spec_key(getattr(value, k))) for k in type(value).model_fields))
    if dataclasses.is_dataclass(value):
        return ("object", frozenset((f.name, spec_key(getattr(value, f.name))) for f in dataclasses.fields(value)))
    return ("object", frozenset((k, spec_key(v)) for k, v in value.items()))


def equal_variant(value: Any, data: st.DataObject) -> Any:
    """Another value *Signatures* calls equal: another Decimal exponent, an int as a float, a set or dict reordered."""
    if isinstance(value, Decimal):
        sign, digits, exponent = value.as_tuple()
        zeros = data.draw(st.integers(0, 3))  # 1.1 -> 1.100: the same number, more trailing zeros
        return Decimal((sign, digits + (0,) * zeros, exponent - zeros))
    if isinstance(value, dict):
        return dict(reversed([(k, equal_variant(v, data)) for k, v in value.items()]))
    if isinstance(value, frozenset):
        return frozenset(reversed([equal_variant(v, data) for v in value]))
    if isinstance(value, BaseModel):
        return value.model_copy(update={k: equal_variant(getattr(value, k), data) for k in type(value).model_fields})
    return value


# -- one tool per row, one fresh scope per example ------------------------------------------------------


def make_tool(annotation: Any, received: list[Any], repetitions: int = 1):  # type: ignore[no-untyped-def]
    def body(value: Any) -> str:
        received.append(value)
        return "ok"

    body.__annotations__ = {"value": annotation, "return": str}
    scope = ExecutionScope(Limits(tool_calls=10, repetitions=repetitions), {CAP})
    return scope.tool("t", CAP, body)


def refused_as_repeat(tool: Any, arguments: Any) -> bool:
    try:
        tool.invoke(arguments)
    except RunHalted as halt:
        assert halt.reason is StopReason.REPEATED_CALL and halt.refused
        return True
    return False


def numbers_in(tree: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The paths of every number leaf (not a boolean) in a JSON tree."""
    if isinstance(tree, (int, float, Decimal)) and not isinstance(tree, bool):
        return [path]
    if isinstance(tree, dict):
        return [p for k, v in tree.items() for p in numbers_in(v, (*path, k))]
    if isinstance(tree, list):
        return [p for i, v in enumerate(tree) for p in numbers_in(v, (*path, i))]
    return []


def replaced(tree: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(tree, dict):
        return {k: replaced(v, rest, new) if k == head else v for k, v in tree.items()}
    return [replaced(v, rest, new) if i == head else v for i, v in enumerate(tree)]


# -- the table -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("row", list(TABLE))
def test_the_body_receives_what_was_sent_and_its_json_is_the_same_call(row: str) -> None:
    annotation, values = TABLE[row]

    @EXAMPLES
    @given(value=values)
    def check(value: Any) -> None:
        received: list[Any] = []
        tool = make_tool(annotation, received)
        assert tool.invoke(to_json(value)) == "ok"  # (a) sent as JSON, every digit
        (got,) = received
        assert got == value and type(got) is type(value)
        if isinstance(value, Decimal):
            assert got.as_tuple() == value.as_tuple()  # not only equal: the very digits and exponent
        assert refused_as_repeat(tool, {"value": value})  # (b) the same value passed directly: one signature
        assert received == [value]

    check()


@pytest.mark.parametrize("row", list(TABLE))
def test_two_values_share_a_signature_exactly_when_spec_calls_them_equal(row: str) -> None:
    annotation, values = TABLE[row]

    @EXAMPLES
    @given(first=values, data=st.data())
    def check(first: Any, data: st.DataObject) -> None:
        second = equal_variant(first, data) if data.draw(st.booleans()) else data.draw(values)
        tool = make_tool(annotation, [])
        tool.invoke(to_json(first))
        assert refused_as_repeat(tool, to_json(second)) == (spec_key(first) == spec_key(second))  # (c)

    check()


NUMERIC_ROWS = [name for name in TABLE if name not in ("bool", "str", "None")]


@pytest.mark.parametrize("row", NUMERIC_ROWS)
def test_a_boolean_in_place_of_a_number_never_binds_at_any_depth(row: str) -> None:
    annotation, values = TABLE[row]
    hit = []

    @EXAMPLES
    @given(value=values, data=st.data())
    def check(value: Any, data: st.DataObject) -> None:
        tree = {"value": shaped(value)}
        places = numbers_in(tree)
        if not places:
            return
        hit.append(1)
        place = data.draw(st.sampled_from(places))
        received: list[Any] = []
        tool = make_tool(annotation, received)
        with pytest.raises(ToolArgumentsError, match="boolean|valid|should be"):  # (d)
            tool.invoke(encode(replaced(tree, place, data.draw(st.booleans()))))
        assert received == []

    check()
    assert hit  # the row did hold numbers to replace


def test_the_examples_of_issue_20() -> None:
    received: list[Any] = []
    tool = make_tool(Decimal, received)
    tool.invoke('{"value": 12345678901234567890.123}')
    tool.invoke('{"value": 12345678901234567000}')  # another amount: not a repeat
    tool.invoke('{"value": 0.10000000000000000000001}')
    assert received == [
        Decimal("12345678901234567890.123"),
        Decimal("12345678901234567000"),
        Decimal("0.10000000000000000000001"),
    ]
    tags = make_tool(set[int], [])
    tags.invoke('{"value": [1, 9]}')
    assert refused_as_repeat(tags, '{"value": [9, 1]}')


def test_a_float_and_an_untyped_number_stay_floats() -> None:
    received: list[Any] = []
    make_tool(float, received).invoke('{"value": 0.1}')
    make_tool(Any, received).invoke('{"value": [0.1, {"x": 2.5}, 3]}')
    make_tool(dict, received).invoke('{"value": {"x": 1e2}}')
    make_tool(int, received).invoke('{"value": 1e3}')
    assert received == [0.1, [0.1, {"x": 2.5}, 3], {"x": 100.0}, 1000]
    assert [type(v) for v in (received[0], received[1][0], received[1][1]["x"], received[2]["x"], received[3])] == [
        float,
        float,
        float,
        float,
        int,
    ]
