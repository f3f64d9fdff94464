"""Teaching helpers (docs/teaching-helpers.md): pandas tables, the counters chart and prediction checks."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from support import SCENARIO_TABLE, triples  # noqa: E402

import labkit  # noqa: E402
from labkit import Call, Limits, RunStatus, ScriptedTransport, check  # noqa: E402
from labkit.teaching.charts import counters_chart  # noqa: E402
from labkit.teaching.frames import WITHHELD, counters_frame, events_frame, outcomes_frame  # noqa: E402


@pytest.fixture(scope="module")
def repeat() -> labkit.RunOutcome:
    return labkit.run("repeat", agent="simple")


@pytest.fixture(scope="module")
def complete() -> labkit.RunOutcome:
    return labkit.run("complete", agent="simple")


def test_events_frame_shape(repeat) -> None:
    frame = events_frame(repeat)
    assert list(frame.columns) == ["kind", "name", "count"]
    assert frame.index.name == "step"
    assert list(frame.index) == list(range(1, len(repeat.events) + 1))
    assert list(frame.itertuples(index=False, name=None)) == triples(repeat.events)


def test_events_frame_holds_no_argument_value() -> None:
    transport = ScriptedTransport([Call("read_ticket", {"input": 987654}), Call("read_ticket", {"input": 987654})])
    outcome = labkit.run("complete", agent="simple", transport=transport)
    assert outcome.status is RunStatus.REPEATED_CALL
    frame = events_frame(outcome)
    assert "987654" not in frame.to_csv()
    assert "987654" not in counters_frame(outcome).to_csv()


def test_events_frame_of_no_events() -> None:
    outcome = labkit.RunOutcome(status=RunStatus.INCOMPLETE, text=None, events=())
    frame = events_frame(outcome)
    assert frame.empty
    assert list(frame.columns) == ["kind", "name", "count"]


def test_events_frame_side_by_side_shows_blank_cells_not_nan() -> None:
    runs = {"a": labkit.run("repeat"), "b": labkit.run("forbidden")}
    frame = events_frame(runs)
    short = len(runs["b"].events)
    assert len(frame) == len(runs["a"].events) > short
    assert not frame.isna().any().any()  # blank cells are "", not pd.NA (issue 18)
    assert str(frame[("a", "count")].dtype) == "int64"
    assert pd.to_numeric(frame[("b", "count")], errors="coerce").sum() == sum(e.count for e in runs["b"].events)
    assert list(frame[("b", "count")].iloc[:short]) == [e.count for e in runs["b"].events]
    assert all(type(v) is int for v in frame[("b", "count")].iloc[:short])
    for column in ("kind", "name", "count"):
        assert (frame[("b", column)].iloc[short:] == "").all()
    for shown in (repr(frame), frame._repr_html_(), repr(frame.tail(2)), frame.tail(2)._repr_html_()):
        assert "NaN" not in shown and "<NA>" not in shown and "&lt;NA&gt;" not in shown and "nan" not in shown
    last = repr(frame).splitlines()[-1]  # the longer run's last event, the shorter run's blank cells
    assert last.split() == [str(len(frame)), "RepeatedCall", "read_ticket", "1"]
    assert frame._repr_html_().count("<td></td>") == 3 * (len(frame) - short)


def test_counters_frame_reads_used_against_limit(repeat) -> None:
    frame = counters_frame(repeat)
    assert list(frame.index) == ["model calls", "tool attempts", "attempts per signature"]
    assert list(frame.columns) == ["used", "limit", "stopped here"]
    limits = Limits()
    expected = {
        "model calls": (2, limits.model_calls, False),
        "tool attempts": (1, limits.tool_calls, False),
        "attempts per signature": (1, limits.repetitions, True),  # RepeatedCall stopped the run here
    }
    assert {k: tuple(v) for k, v in zip(frame.index, frame.itertuples(index=False, name=None), strict=True)} == expected


def test_counters_frame_at_a_zero_limit() -> None:
    outcome = labkit.run("complete", agent="simple", limits=Limits(tool_calls=0))
    assert outcome.status is RunStatus.TOOL_BUDGET
    frame = counters_frame(outcome)
    assert frame.loc["tool attempts", "used"] == 0
    assert frame["stopped here"].tolist() == [False, True, False]


RULE_ROWS = {
    RunStatus.MODEL_BUDGET: "model calls",
    RunStatus.TOOL_BUDGET: "tool attempts",
    RunStatus.REPEATED_CALL: "attempts per signature",
}


@pytest.mark.parametrize("agent", ["simple", "harness"])
@pytest.mark.parametrize("scenario", list(SCENARIO_TABLE))
def test_counters_frame_marks_only_the_rule_that_stopped_the_run(scenario: str, agent: str) -> None:
    """For all 16 scenario x agent runs the table agrees with the status (and with the chart's rows)."""
    from labkit.teaching.charts import counters_data

    outcome = labkit.run(scenario, agent=agent)
    frame = counters_frame(outcome)
    stopped = frame.index[frame["stopped here"]].tolist()
    assert stopped == ([RULE_ROWS[outcome.status]] if outcome.status in RULE_ROWS else [])
    chart = {row.name: row.highlighted for row in counters_data(outcome)}
    assert {name: bool(frame.loc[name, "stopped here"]) for name in frame.index} == {n: chart[n] for n in frame.index}


def test_outcomes_frame_side_by_side(repeat, complete) -> None:
    frame = outcomes_frame({"repeat": repeat, "complete": complete})
    assert list(frame.index) == ["repeat", "complete"]
    assert list(frame.columns) == ["status", "ToolCall", "ModelCall", "exit code", "text"]
    assert frame.loc["repeat"].tolist()[:4] == ["RepeatedCall", 1, 2, 2]
    assert frame.loc["repeat", "text"] == WITHHELD
    assert frame.loc["complete"].tolist() == ["Completed", 2, 3, 0, "Review finished."]
    pairs = outcomes_frame([("a", repeat), ("b", complete)])
    assert list(pairs.index) == ["a", "b"]
    pd.testing.assert_frame_equal(pairs.reset_index(drop=True), frame.reset_index(drop=True))


def test_counters_chart_has_a_row_per_rule(repeat) -> None:
    fig = counters_chart(repeat)
    assert isinstance(fig, Figure)
    (ax,) = fig.axes
    assert len(ax.patches) == 5  # four counters and the ghost bar of the refused attempt (permission has no bar)
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "model calls",
        "tool attempts",
        "attempts per signature",
        "seconds",
        "permission",
    ]
    assert "RepeatedCall" in ax.get_title()
    assert any(t.get_text().startswith("1 / 1") for t in ax.texts)


def test_counters_chart_title(repeat) -> None:
    assert counters_chart(repeat, title="mine").axes[0].get_title() == "mine"


def test_check_right_prediction(repeat) -> None:
    result = check(repeat, status="RepeatedCall", tool_calls=1)
    assert result.right
    assert "right" in str(result)


@pytest.mark.parametrize(("status", "tool_calls"), [("ToolBudget", 1), ("RepeatedCall", 2), ("Completed", 0)])
def test_check_wrong_prediction(repeat, status: str, tool_calls: int) -> None:
    result = check(repeat, status=status, tool_calls=tool_calls)
    assert not result.right
    assert "not this time" in str(result)
    assert (result.actual_status, result.actual_tool_calls) == ("RepeatedCall", 1)


def test_check_calls_an_unknown_status_wrong_and_lists_the_statuses(repeat) -> None:
    result = check(repeat, status="Stopped", tool_calls=1)
    (line,) = [line for line in result._text().splitlines() if "'Stopped'" in line and line.startswith("think:")]
    assert not result.right and all(status.value in line for status in RunStatus)


def test_compact_events_are_one_column_per_run_with_blanks_after_a_shorter_run():
    runs = {"complete": labkit.run("complete"), "repeat": labkit.run("repeat"), "incomplete": labkit.run("incomplete")}
    table = events_frame(runs, compact=True)
    assert list(table.columns) == list(runs) and table.index.name == "step" and len(table) == 7
    for label, outcome in runs.items():
        written = [f"{e.kind} {e.name} {e.count}" for e in outcome.events]
        assert table[label].tolist() == written + [""] * (7 - len(written))
    assert not table.isna().any().any()


def test_compact_events_of_one_run_or_of_a_scope_are_one_column():
    outcome = labkit.run("forbidden")
    assert events_frame(outcome, compact=True)["event"].tolist() == [
        f"{e.kind} {e.name} {e.count}" for e in outcome.events
    ]
    assert events_frame(outcome.events, compact=True).equals(events_frame(outcome, compact=True))
