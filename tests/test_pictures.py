"""Pictures that carry the point (issue 18, item 4): a failed body looks failed, every refusal names its
counter, and no learner-facing table holds NaN, None or <NA>.

Runs are generated (every scenario under both agents, plus runs whose bodies raise); the tests read the
charts' data and their matplotlib artists, never pixels.
"""

from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from support import SCENARIO_TABLE  # noqa: E402

import labkit  # noqa: E402
from labkit import Call, Limits, Role, RunStatus, ScriptedTransport  # noqa: E402
from labkit.teaching.charts import LEGEND, counters_chart, counters_data, timeline_chart, timeline_data  # noqa: E402
from labkit.teaching.frames import (  # noqa: E402
    canonical_frame,
    counters_frame,
    events_frame,
    outcomes_frame,
    requests_frame,
)

AGENTS = ("simple", "harness")
READ = Call("read_ticket", {"input": 42})
FINISH = Call("finish_review", {"input": 42})

FAILING = {
    # finish_review before read_ticket raises in its body; the retry is a repetition (chapter 4)
    "finish first": ([FINISH, READ, FINISH, "Review finished."], Limits()),
    # the same, with room to retry: the failed body, then two that return
    "finish first, retried": ([FINISH, READ, FINISH, "Review finished."], Limits(repetitions=2)),
    # finish_review with the wrong id after a good read raises; then the tool budget refuses
    "wrong id": ([READ, Call("finish_review", {"input": 7}), FINISH, "done"], Limits(tool_calls=2)),
    # two failing bodies in one reply, then the model budget stops the run
    "two failures in one reply": (
        [[Call("finish_review", {"input": 1}), Call("finish_review", {"input": 2})], READ],
        Limits(model_calls=1),
    ),
    # arguments that do not bind never reach a guard: no body row at all
    "no bind": ([Call("read_ticket", {"input": "forty-two"}), READ, FINISH, "done"], Limits()),
}

COUNTER_WORDS = {  # the counter (or rule) each stop kind must name, on the timeline and on the counters chart
    "PermissionDenied": "permission",
    "RepeatedCall": "attempts per signature",
    "ToolBudget": "tool attempts",
    "ModelBudget": "model calls",
    "DeadlineExceeded": "seconds",
}


@pytest.fixture(scope="module")
def runs() -> dict[tuple[str, str], labkit.RunOutcome]:
    found = {(scenario, agent): labkit.run(scenario, agent=agent) for scenario in SCENARIO_TABLE for agent in AGENTS}
    for name, (script, limits) in FAILING.items():
        for agent in AGENTS:
            found[name, agent] = labkit.run("complete", agent=agent, limits=limits, transport=ScriptedTransport(script))
    for key in labkit.mysteries():
        for agent in AGENTS:
            found[f"mystery {key}", agent] = labkit.mystery(key).run(agent)
    return found


def _body_errors(outcome: labkit.RunOutcome) -> list[bool]:
    """Independently of the chart: for each admitted call in order, did its body raise? (from the transcript)"""
    results = {m.tool_call_id: m.text for m in outcome.transcript if m.role is Role.TOOL}
    ran = []
    for message in outcome.transcript:
        for call in message.tool_calls if message.role is Role.ASSISTANT else ():
            text = results[call.id]
            if text.startswith(("refused:", "cancelled:")) or "do not bind" in text:
                continue
            ran.append(text.startswith("error:"))
    return ran


ALL = [
    *((s, a) for s in SCENARIO_TABLE for a in AGENTS),
    *((n, a) for n in FAILING for a in AGENTS),
    *((f"mystery {k}", a) for k in labkit.mysteries() for a in AGENTS),
]


@pytest.mark.parametrize(("run", "agent"), ALL)
def test_a_body_that_raised_is_marked_failed_and_only_then(runs, run: str, agent: str) -> None:
    outcome = runs[run, agent]
    bodies = [row for row in timeline_data(outcome) if row.kind == "body"]
    assert len(bodies) == outcome.count("ToolCall")
    assert [row.failed for row in bodies] == _body_errors(outcome)
    for row in bodies:
        if row.failed:
            assert re.fullmatch(r"\w+ raised \w+", row.label), row.label
        else:
            assert row.label.endswith((" returned", " runs"))
    assert not any(row.failed for row in timeline_data(outcome) if row.kind != "body")


def test_the_chapter_4_run_shows_its_failed_finish(runs) -> None:
    outcome = runs["finish first", "harness"]
    assert outcome.status is RunStatus.REPEATED_CALL
    bodies = [(row.label, row.failed) for row in timeline_data(outcome) if row.kind == "body"]
    assert bodies == [("finish_review raised ValueError", True), ("read_ticket returned", False)]
    retried = [
        (row.label, row.failed) for row in timeline_data(runs["finish first, retried", "simple"]) if row.kind == "body"
    ]
    assert retried == [
        ("finish_review raised ValueError", True),
        ("read_ticket returned", False),
        ("finish_review returned", False),
    ]


def _marks(ax) -> dict[str, list]:
    found: dict[str, list] = {}
    for line in ax.get_lines():
        if line.get_gid():
            found.setdefault(line.get_gid(), []).append(line)
    return found


@pytest.mark.parametrize(("run", "agent"), ALL)
def test_the_timeline_draws_failed_bodies_apart_with_a_legend_entry(runs, run: str, agent: str) -> None:
    outcome = runs[run, agent]
    rows = timeline_data(outcome)
    (ax,) = timeline_chart(outcome).axes
    marks = _marks(ax)
    failed = sum(row.failed for row in rows)
    unknown = sum(row.unknown for row in rows)
    returned = sum(row.kind == "body" and not row.failed and not row.unknown for row in rows)
    assert len(marks.get("body-failed", [])) == failed
    assert len(marks.get("body-unknown", [])) == unknown
    assert len(marks.get("body", [])) == returned
    assert len(marks.get("stop", [])) == sum(row.stop for row in rows)
    styles = {(line.get_marker(), line.get_color()) for gid in ("body", "event") for line in marks.get(gid, [])}
    for line in marks.get("body-failed", []):  # not a shape and colour of a body that returned, nor of the stop
        assert (line.get_marker(), line.get_color()) not in styles
        assert line.get_marker() != "X"
    legend = ax.get_legend()
    texts = [t.get_text() for t in legend.get_texts()]
    assert (LEGEND["body-failed"] in texts) == bool(failed)
    assert (LEGEND["body"] in texts) == bool(returned)
    assert (LEGEND["body-unknown"] in texts) == bool(unknown)
    assert (LEGEND["stop"] in texts) == outcome.status.is_stop
    drawn = [t.get_text() for t in ax.texts]
    for row in rows:
        if row.failed:
            assert row.label in drawn


@pytest.mark.parametrize(("run", "agent"), ALL)
def test_every_refusal_label_names_its_counter(runs, run: str, agent: str) -> None:
    outcome = runs[run, agent]
    word = COUNTER_WORDS.get(outcome.status.value)
    stops = [row for row in timeline_data(outcome) if row.stop]
    highlighted = [row for row in counters_data(outcome) if row.highlighted]
    if word is None:  # Completed, Incomplete, ProviderUnavailable: no rule refused
        assert highlighted == []
        return
    (stop,) = stops
    (row,) = highlighted
    assert word in stop.label, stop.label
    assert word in row.label, row.label
    assert row.name == word
    # the ambiguous "N of M attempts used" of old is gone: "attempts" always says whose
    assert not re.search(r"\d+ of \d+ attempts", stop.label)
    limits = outcome.limits
    expected = {
        "ToolBudget": f"tool attempts {limits.tool_calls} of {limits.tool_calls} used",
        "RepeatedCall": f"attempts per signature {limits.repetitions} of {limits.repetitions} used",
        "ModelBudget": f"model calls {limits.model_calls} of {limits.model_calls} made",
        "PermissionDenied": "permission, capability not granted",
        "DeadlineExceeded": f" of {limits.deadline_s:g}",
    }[outcome.status.value]
    assert expected in stop.label
    (ax,) = timeline_chart(outcome).axes
    assert f"{stop.kind}: {stop.label}" in [t.get_text() for t in ax.texts]
    (ax,) = counters_chart(outcome).axes
    drawn = [" ".join(t.get_text().split()) for t in ax.texts]  # the label as drawn, its lines joined
    shown = " ".join(row.label.replace(" · ", " ").split())
    assert any(text.endswith(shown) for text in drawn), (shown, drawn)


def test_the_chapter_4_order_run_says_which_counter_is_at_1_of_1() -> None:
    """The run built to show both counters at 1 of 1: the label says the tool attempts decided."""
    order = labkit.run("complete", limits=Limits(tool_calls=1), transport=ScriptedTransport([[READ, READ], "done"]))
    assert order.status is RunStatus.TOOL_BUDGET
    (stop,) = [row for row in timeline_data(order) if row.stop]
    assert stop.label == "refuses read_ticket: tool attempts 1 of 1 used"
    rows = {row.name: row for row in counters_data(order)}
    assert rows["tool attempts"].label == "1 / 1 · next would be 2 of 1 tool attempts"
    assert rows["attempts per signature"].label == "1 / 1" and not rows["attempts per signature"].highlighted


# -- no NaN, None or <NA> in a learner-facing table ------------------------------------------------------


MISSING = ("NaN", "<NA>", "&lt;NA&gt;", "None", "nan")


def _no_missing(frame: pd.DataFrame) -> None:
    assert not frame.isna().any().any(), frame
    assert not any(value is None for column in frame.columns for value in frame[column])
    for shown in (frame.to_string(), frame._repr_html_()):
        for word in MISSING:
            assert not re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", shown), (word, shown)


@pytest.mark.parametrize(("run", "agent"), ALL)
def test_the_frames_of_every_run_hold_no_missing_values(runs, run: str, agent: str) -> None:
    outcome = runs[run, agent]
    for frame in (
        events_frame(outcome),
        counters_frame(outcome),
        requests_frame(outcome),
        outcomes_frame({run: outcome}),
        events_frame(outcome.events),
    ):
        _no_missing(frame)


def test_side_by_side_frames_of_runs_of_different_lengths_hold_no_missing_values(runs) -> None:
    side = events_frame({name: runs[name, "simple"] for name in SCENARIO_TABLE})  # 1 to 12 events
    _no_missing(side)
    _no_missing(side.tail(3))
    short = len(runs["incomplete", "simple"].events)
    assert list(side[("incomplete", "count")].iloc[short:]) == [""] * (len(side) - short)
    _no_missing(outcomes_frame({f"{n} / {a}": o for (n, a), o in runs.items()}))
    _no_missing(canonical_frame({"same": ('{"input": 42}', '{"input": 42.0}'), "null": ('{"a": null}', '{"a": 0}')}))


@pytest.mark.parametrize("scenario", list(SCENARIO_TABLE))
def test_the_spans_table_holds_no_missing_values(scenario: str) -> None:
    pytest.importorskip("opentelemetry.sdk")
    from labkit.teaching.spans import run_traced

    for agent in AGENTS:
        _, frame = run_traced(scenario, agent=agent)
        _no_missing(frame)
        chat = frame[frame["operation"] == "chat"]
        tools = frame[frame["operation"] == "execute_tool"]
        assert (chat["tool calls"] == "").all()  # a counter the span does not carry: blank
        assert (tools["model calls"] == "").all()
        run_row = frame.iloc[0]
        assert pd.api.types.is_integer(run_row["model calls"]) and pd.api.types.is_integer(run_row["tool calls"])
        _, timed = run_traced(scenario, agent=agent, timings=True)
        _no_missing(timed)


def test_the_chapter_8_spans_table_shows_blanks() -> None:
    pytest.importorskip("opentelemetry.sdk")
    from labkit.teaching.spans import run_traced

    _, spans = run_traced("forbidden")
    assert "<NA>" not in repr(spans) and "&lt;NA&gt;" not in spans._repr_html_()
    assert list(spans["model calls"]) == [1, 1, ""]
    assert list(spans["tool calls"]) == [0, "", 0]


def test_a_body_still_running_at_the_deadline_is_not_drawn_as_one_that_returned() -> None:
    """Chapter 9's stubborn body: the run ended while the body ran, so the outcome holds no result."""
    slow = labkit.ExecutionScope(Limits(deadline_s=0.2), capabilities={"ticket.read"})
    import threading

    release = threading.Event()

    def slow_read(ticket: int) -> str:
        release.wait(timeout=5)
        return "late"

    tool = slow.tool("slow_read", "ticket.read", slow_read)
    agent = labkit.SimpleAgent(
        labkit.CountingClient(ScriptedTransport([Call("slow_read", {"ticket": 1}), "done"]), slow),
        [tool],
        instructions="x",
    )
    try:
        stuck = labkit.run_sync(labkit.run_agent(agent, "x", is_complete=lambda: False))
    finally:
        release.set()
    assert stuck.status is RunStatus.DEADLINE_EXCEEDED
    (body,) = [row for row in timeline_data(stuck) if row.kind == "body"]
    assert body.unknown and not body.failed and body.label == "slow_read runs"
    (ax,) = timeline_chart(stuck).axes
    assert len(_marks(ax).get("body-unknown", [])) == 1 and not _marks(ax).get("body")
    assert LEGEND["body-unknown"] in [t.get_text() for t in ax.get_legend().get_texts()]
