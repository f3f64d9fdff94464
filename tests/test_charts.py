"""labkit.teaching.charts: the chart data says what stopped the run, and nothing else (issue 9).

Tests read :func:`counters_data` and :func:`timeline_data` (what is drawn),
not pixels; a few structural checks make sure the figures draw those rows.
"""

from __future__ import annotations

import asyncio

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from support import SCENARIO_TABLE  # noqa: E402

import labkit  # noqa: E402
from labkit import Limits, RunStatus, UserError  # noqa: E402
from labkit.teaching.charts import LANES, counters_chart, counters_data, timeline_chart, timeline_data  # noqa: E402

NOT_DECIDED_BY_A_RULE = {RunStatus.COMPLETED, RunStatus.INCOMPLETE, RunStatus.PROVIDER_UNAVAILABLE}
RUNS = [(scenario, agent) for scenario in SCENARIO_TABLE for agent in ("simple", "harness")]


@pytest.fixture(scope="module")
def outcomes() -> dict[tuple[str, str], labkit.RunOutcome]:
    return {(scenario, agent): labkit.run(scenario, agent=agent) for scenario, agent in RUNS}


def _stop(outcome: labkit.RunOutcome) -> labkit.ControlEvent:
    (stop,) = [e for e in outcome.events if e.kind == outcome.status.value]
    return stop


@pytest.mark.parametrize(("scenario", "agent"), RUNS)
def test_only_the_rule_that_stopped_the_run_is_highlighted(outcomes, scenario: str, agent: str) -> None:
    outcome = outcomes[scenario, agent]
    assert outcome.status is SCENARIO_TABLE[scenario][0]
    rows = counters_data(outcome)
    assert [r.name for r in rows] == ["model calls", "tool attempts", "attempts per signature", "seconds", "permission"]
    highlighted = [r.rule for r in rows if r.highlighted]
    if outcome.status in NOT_DECIDED_BY_A_RULE:
        assert highlighted == []
        assert all(r.refused_next is None for r in rows)
    else:
        assert highlighted == [outcome.status.value]


@pytest.mark.parametrize(("scenario", "agent"), RUNS)
def test_the_ghost_bar_is_the_refused_attempt(outcomes, scenario: str, agent: str) -> None:
    outcome = outcomes[scenario, agent]
    ghosts = [r for r in counters_data(outcome) if r.refused_next is not None]
    expected = {  # README.md, *The scenarios*: what the refused attempt would have been, against which limit
        "changing": ("tool attempts", 5, 4),
        "repeat": ("attempts per signature", 2, 1),
        "budget": ("model calls", 2, 1),
        "forbidden": ("permission", 1, 0),
    }
    if scenario not in expected:
        assert ghosts == []
        return
    (ghost,) = ghosts
    name, refused, limit = expected[scenario]
    assert (ghost.name, ghost.refused_next, ghost.limit) == (name, refused, limit)
    if name != "permission":
        assert ghost.label.endswith(f"next would be {refused} of {limit} {name}")  # names its counter
        assert ghost.refused_next == _stop(outcome).count + 1
    else:
        assert ghost.label == "read_ticket refused: permission, capability not granted"


@pytest.mark.parametrize(("scenario", "agent"), RUNS)
def test_the_timeline_holds_every_event_in_order(outcomes, scenario: str, agent: str) -> None:
    outcome = outcomes[scenario, agent]
    rows = timeline_data(outcome)
    events = [r for r in rows if r.kind != "body"]
    assert [(r.step, r.kind) for r in events] == [(i, e.kind.value) for i, e in enumerate(outcome.events, 1)]
    assert all(r.lane in LANES for r in rows)
    lanes = {"ModelCall": "model", "Middleware": "middleware", "ToolCall": "guard"}
    for row in events:
        if not row.stop:
            assert row.lane == lanes[row.kind]
    # every admitted attempt is followed at once by its body, and only admitted ones are
    for before, after in zip(rows, rows[1:], strict=False):
        assert (before.kind == "ToolCall") == (after.kind == "body")
    assert sum(r.kind == "body" for r in rows) == outcome.count("ToolCall")
    admitted = [e for e in outcome.events if e.kind == "ToolCall"]
    # each admission names the counter its number comes from (the run's ToolCall count), not a bare "#n"
    assert [r.label for r in rows if r.kind == "ToolCall"] == [
        f"admits {e.name} (ToolCall {e.count})" for e in admitted
    ]
    stops = [r for r in rows if r.stop]
    if outcome.status.is_stop:
        (stop,) = stops
        assert stop is rows[-1] and stop.kind == outcome.status.value
    else:
        assert stops == []


def test_timeline_lanes_of_the_stops(outcomes) -> None:
    lane = {scenario: timeline_data(outcomes[scenario, "harness"])[-1].lane for scenario in SCENARIO_TABLE}
    assert lane["forbidden"] == lane["repeat"] == lane["changing"] == "guard"
    assert lane["budget"] == lane["unavailable"] == "model"
    assert lane["deadline"] == "model"  # the model call was still waiting when time ran out


def test_a_counter_at_its_limit_is_not_a_stop() -> None:
    outcome = labkit.run("complete", limits=Limits(model_calls=3, tool_calls=2))  # every budget exactly big enough
    assert outcome.status is RunStatus.COMPLETED
    rows = {r.name: r for r in counters_data(outcome)}
    assert rows["model calls"].used == rows["model calls"].limit == 3
    assert rows["tool attempts"].used == rows["tool attempts"].limit == 2
    assert not any(r.highlighted for r in rows.values())


def test_the_guard_order_decides_which_rule_is_highlighted() -> None:
    outcome = labkit.mystery("D").run()  # call 5 is refused by both the budget and the repetition rule
    rows = {r.name: r for r in counters_data(outcome)}
    assert rows["tool attempts"].highlighted and rows["tool attempts"].refused_next == 5
    assert rows["attempts per signature"].used == rows["attempts per signature"].limit == 2
    assert not rows["attempts per signature"].highlighted


def test_a_zero_limit_refuses_the_first_attempt() -> None:
    outcome = labkit.run("complete", limits=Limits(tool_calls=0))
    (ghost,) = [r for r in counters_data(outcome) if r.refused_next is not None]
    assert (ghost.name, ghost.used, ghost.refused_next, ghost.limit) == ("tool attempts", 0, 1, 0)
    assert "next would be 1 of 0" in ghost.label
    counters_chart(outcome)  # draws a bar for a zero limit without dividing by it


def test_the_counters_chart_draws_its_rows(outcomes) -> None:
    changing = outcomes["changing", "harness"]
    (ax,) = counters_chart(changing).axes
    assert ax.get_title() == "ToolBudget: stopped by the tool budget"
    assert [t.get_text() for t in ax.get_yticklabels()] == [r.name for r in counters_data(changing)]
    assert len([p for p in ax.patches if p.get_hatch()]) == 1  # the ghost bar
    assert any("next would be 5 of 4" in t.get_text() for t in ax.texts)
    (ax,) = counters_chart(outcomes["complete", "harness"]).axes
    assert ax.get_title().startswith("Completed: ")
    assert not [p for p in ax.patches if p.get_hatch()]


def test_the_timeline_chart_draws_every_lane_and_the_stop(outcomes) -> None:
    outcome = outcomes["repeat", "simple"]
    (ax,) = timeline_chart(outcome).axes
    assert [t.get_text() for t in ax.get_yticklabels()] == list(LANES)
    assert ax.get_title() == "RepeatedCall: stopped by the repetition rule"
    stop_texts = [t.get_text() for t in ax.texts if t.get_text().startswith("RepeatedCall:")]
    assert stop_texts == ["RepeatedCall: refuses read_ticket: same call, attempts per signature 1 of 1 used"]
    assert timeline_chart(outcome, title="mine").axes[0].get_title() == "mine"


@pytest.mark.parametrize("helper", [counters_data, timeline_data, counters_chart, timeline_chart])
def test_something_that_is_not_an_outcome_is_a_clear_error(helper) -> None:
    with pytest.raises(UserError, match="RunOutcome"):
        helper("repeat")


@pytest.mark.parametrize(
    "error",
    [ConnectionError("refused"), asyncio.CancelledError("the client gave up")],
    ids=["unreachable", "provider-cancelled-itself"],
)
def test_a_provider_failure_is_titled_truthfully_whether_unreachable_or_cancelled_by_itself(error) -> None:
    """Both ways to ProviderUnavailable get a title and labels true for both: no "unreachable".

    The two ways: docs/guarantees.md, *Cancellation*.
    """
    from labkit.transports.scripted import Fail, ScriptedTransport

    outcome = labkit.run("complete", transport=ScriptedTransport([Fail(error)]))
    assert outcome.status is RunStatus.PROVIDER_UNAVAILABLE
    title = counters_chart(outcome).axes[0].get_title()
    assert title == "ProviderUnavailable: the provider failed; no limit decided"
    texts = [title, *(r.label for r in counters_data(outcome)), *(r.label for r in timeline_data(outcome))]
    assert not any("unreachable" in text for text in texts)
    (stop,) = [r for r in timeline_data(outcome) if r.stop]
    assert (stop.lane, stop.label) == ("model", "provider failed")
    assert not any(r.highlighted for r in counters_data(outcome))  # an external failure: no rule decided
