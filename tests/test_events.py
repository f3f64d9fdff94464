"""Events and the closed sets of reasons, kinds and statuses.

Rules from docs/guarantees.md, *Privacy of events* and *Every stop has one name*.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from labkit import ControlEvent, EventKind, RunStatus, StopReason


def test_stop_reasons_are_the_six_of_the_spec() -> None:
    assert {r.value for r in StopReason} == {
        "PermissionDenied",
        "ToolBudget",
        "RepeatedCall",
        "ModelBudget",
        "DeadlineExceeded",
        "ProviderUnavailable",
    }


def test_every_stop_reason_is_an_event_kind_and_a_status() -> None:
    for reason in StopReason:
        assert EventKind(reason.value) == reason
        assert RunStatus(reason.value) == reason
        assert RunStatus(reason.value).is_stop


def test_event_kinds_are_the_stop_reasons_plus_three_observations() -> None:
    assert {k.value for k in EventKind} == {r.value for r in StopReason} | {"ModelCall", "Middleware", "ToolCall"}


def test_statuses_are_the_stop_reasons_plus_two_endings() -> None:
    assert {s.value for s in RunStatus} == {r.value for r in StopReason} | {"Completed", "Incomplete"}
    assert not RunStatus.COMPLETED.is_stop
    assert not RunStatus.INCOMPLETE.is_stop


def test_control_event_has_exactly_kind_name_count() -> None:
    assert set(ControlEvent.model_fields) == {"kind", "name", "count"}
    event = ControlEvent(kind=EventKind.TOOL_CALL, name="read_ticket", count=1)
    assert event.model_dump(mode="json") == {"kind": "ToolCall", "name": "read_ticket", "count": 1}


def test_control_event_is_frozen() -> None:
    event = ControlEvent(kind=EventKind.MODEL_CALL, name="model", count=1)
    with pytest.raises(ValidationError):
        event.count = 2  # type: ignore[misc]
    assert event.count == 1


def test_control_event_kind_is_closed() -> None:
    with pytest.raises(ValidationError):
        ControlEvent(kind="Retry", name="model", count=1)
