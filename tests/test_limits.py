"""Limits (docs/guarantees.md): defaults, zero as a real limit, strict validation, frozen, with_()."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from labkit import Limits

COUNTS = ("model_calls", "tool_calls", "repetitions")


def _field_of(exc: ValidationError) -> set[str]:
    return {str(error["loc"][0]) for error in exc.errors()}


def test_defaults_are_the_lesson_limits() -> None:
    limits = Limits()
    assert (limits.model_calls, limits.tool_calls, limits.repetitions, limits.deadline_s) == (6, 4, 1, 120.0)


@pytest.mark.parametrize("field", [*COUNTS, "deadline_s"])
def test_zero_is_allowed(field: str) -> None:
    assert getattr(Limits(**{field: 0}), field) == 0


@pytest.mark.parametrize("field", [*COUNTS, "deadline_s"])
def test_negative_value_names_the_field(field: str) -> None:
    with pytest.raises(ValidationError) as info:
        Limits(**{field: -1})
    assert _field_of(info.value) == {field}
    assert field in str(info.value)


@pytest.mark.parametrize("field", COUNTS)
@pytest.mark.parametrize("value", ["3", True, 2.5, 3.0, None])
def test_count_of_wrong_type_names_the_field(field: str, value: object) -> None:
    with pytest.raises(ValidationError) as info:
        Limits(**{field: value})
    assert _field_of(info.value) == {field}
    assert field in str(info.value)


@pytest.mark.parametrize("value", ["1.5", True, float("nan"), float("inf")])
def test_deadline_of_wrong_type_or_non_finite_names_the_field(value: object) -> None:
    with pytest.raises(ValidationError) as info:
        Limits(deadline_s=value)
    assert _field_of(info.value) == {"deadline_s"}


def test_unknown_field_is_rejected_by_name() -> None:
    with pytest.raises(ValidationError) as info:
        Limits(model_call=3)  # a typo of model_calls must not pass silently
    assert _field_of(info.value) == {"model_call"}
    assert "model_call" in str(info.value)


def test_limits_are_frozen() -> None:
    limits = Limits()
    with pytest.raises(ValidationError):
        limits.tool_calls = 10  # type: ignore[misc]
    assert limits.tool_calls == 4
    assert hash(limits) == hash(Limits())


def test_with_returns_a_changed_copy() -> None:
    limits = Limits()
    changed = limits.with_(model_calls=1, deadline_s=0.5)
    assert (changed.model_calls, changed.tool_calls, changed.repetitions, changed.deadline_s) == (1, 4, 1, 0.5)
    assert limits == Limits()


@pytest.mark.parametrize(
    ("changes", "field"),
    [({"model_calls": -1}, "model_calls"), ({"tool_calls": "2"}, "tool_calls"), ({"repetition": 2}, "repetition")],
)
def test_with_validates(changes: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as info:
        Limits().with_(**changes)
    assert _field_of(info.value) == {field}


def test_an_integer_deadline_is_seconds() -> None:
    assert Limits(deadline_s=1).deadline_s == 1.0


def test_str_names_every_limit_with_its_unit() -> None:
    assert str(Limits()) == "model_calls=6 tool_calls=4 repetitions=1 deadline_s=120"


# -- the scope's door checks each value, and a value that cannot change only once ---------------


def test_a_scope_refuses_unvalidated_limits_every_time_even_beside_valid_ones() -> None:
    from labkit import ExecutionScope, LimitsError

    valid = Limits(model_calls=2)
    for _ in range(3):
        assert ExecutionScope(valid).limits is valid
        for bad in (Limits.model_construct(model_calls=-1), Limits.model_construct(deadline_s=float("nan"))):
            with pytest.raises(LimitsError):
                ExecutionScope(bad)
            with pytest.raises(LimitsError):
                ExecutionScope(bad)  # refused again: a value that did not pass is not remembered


def test_grants_that_can_change_are_checked_again_and_fixed_ones_keep_their_names() -> None:
    from labkit import CapabilitiesError, ExecutionScope

    grants: set[object] = {"ticket.read"}
    assert ExecutionScope(capabilities=grants).capabilities == frozenset({"ticket.read"})
    grants.add(42)  # a set can change: the scope reads it again
    with pytest.raises(CapabilitiesError):
        ExecutionScope(capabilities=grants)
    fixed = frozenset({"ticket.read", "review.finish"})
    assert ExecutionScope(capabilities=fixed).capabilities == ExecutionScope(capabilities=fixed).capabilities == fixed
    with pytest.raises(CapabilitiesError):
        ExecutionScope(capabilities=frozenset({"ticket.read", ""}))
