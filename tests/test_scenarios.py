"""The eight scenarios under both agents (README.md, *The scenarios*): whole event lists and the scenario table."""

from __future__ import annotations

import asyncio

import pytest
from support import SCENARIO_TABLE, triples

import labkit
from labkit import SCENARIOS, RunOutcome, RunStatus

AGENTS = ("simple", "harness")
M, MW, T = "ModelCall", "Middleware", "ToolCall"


def _model(n: int) -> tuple[str, str, int]:
    return (M, "model", n)


def _changing() -> list[tuple[str, str, int]]:
    # model call n asks read_ticket(n): a new signature each time, 4 admitted, the 5th refused
    events = []
    for n in range(1, 5):
        events += [_model(n), (MW, "read_ticket", n), (T, "read_ticket", n)]
    return [*events, _model(5), (MW, "read_ticket", 5), ("ToolBudget", "read_ticket", 4)]


# scenario -> (status, text, ordered events), written from README.md, *The scenarios* (scripts and counts)
EXPECTED: dict[str, tuple[RunStatus, str | None, list[tuple[str, str, int]]]] = {
    "complete": (
        RunStatus.COMPLETED,
        "Review finished.",
        [
            _model(1),
            (MW, "read_ticket", 1),
            (T, "read_ticket", 1),
            _model(2),
            (MW, "finish_review", 2),
            (T, "finish_review", 2),
            _model(3),
        ],
    ),
    "incomplete": (RunStatus.INCOMPLETE, "Review finished.", [_model(1)]),
    "forbidden": (
        RunStatus.PERMISSION_DENIED,
        None,
        [_model(1), (MW, "read_ticket", 1), ("PermissionDenied", "read_ticket", 0)],
    ),
    "repeat": (
        RunStatus.REPEATED_CALL,
        None,
        [
            _model(1),
            (MW, "read_ticket", 1),
            (T, "read_ticket", 1),
            _model(2),
            (MW, "read_ticket", 2),
            ("RepeatedCall", "read_ticket", 1),
        ],
    ),
    "changing": (RunStatus.TOOL_BUDGET, None, _changing()),
    "budget": (
        RunStatus.MODEL_BUDGET,
        None,
        [_model(1), (MW, "read_ticket", 1), (T, "read_ticket", 1), ("ModelBudget", "model", 1)],
    ),
    "deadline": (RunStatus.DEADLINE_EXCEEDED, None, [_model(1), ("DeadlineExceeded", "run", 0)]),
    "unavailable": (RunStatus.PROVIDER_UNAVAILABLE, None, [_model(1), ("ProviderUnavailable", "model", 1)]),
}


def test_the_spec_lists_every_scenario_in_lesson_order() -> None:
    assert list(SCENARIOS) == list(SCENARIO_TABLE) == list(EXPECTED)


@pytest.fixture(scope="module")
def outcomes() -> dict[tuple[str, str, bool], RunOutcome]:
    """Every scenario x agent x (non-)streaming, run once and concurrently (the two deadlines overlap)."""
    keys = [(s, a, stream) for s in SCENARIOS for a in AGENTS for stream in (False, True)]

    async def all_runs() -> list[RunOutcome]:
        return await asyncio.gather(*(labkit.arun(s, agent=a, stream=stream) for s, a, stream in keys))

    return dict(zip(keys, asyncio.run(all_runs()), strict=True))


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("scenario", list(EXPECTED))
def test_scenario_events_status_and_text(outcomes, scenario: str, agent: str) -> None:
    outcome = outcomes[scenario, agent, False]
    status, text, events = EXPECTED[scenario]
    assert (outcome.status, outcome.text, triples(outcome.events)) == (status, text, events)


@pytest.mark.parametrize("stream", [False, True], ids=["complete()", "stream()"])
@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("scenario", list(SCENARIO_TABLE))
def test_spec_table(outcomes, scenario: str, agent: str, stream: bool) -> None:
    outcome = outcomes[scenario, agent, stream]
    assert (outcome.status.value, outcome.count("ToolCall"), outcome.count("ModelCall")) == SCENARIO_TABLE[scenario]
    assert outcome.exit_code == (0 if scenario == "complete" else 2)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_simple_and_harness_agree(outcomes, scenario: str) -> None:
    simple, harness = outcomes[scenario, "simple", False], outcomes[scenario, "harness", False]
    assert (simple.status, simple.text, simple.events) == (harness.status, harness.text, harness.events)


def test_arguments_never_appear_in_events(outcomes) -> None:
    for outcome in outcomes.values():
        for event in outcome.events:
            assert event.name in {"model", "run", "read_ticket", "finish_review"}
            assert set(event.model_dump()) == {"kind", "name", "count"}
