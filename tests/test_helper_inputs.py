"""Every public teaching helper x every kind of value a learner may hand it (issue 17, item 4).

Each helper declares the kinds its signature admits; for those it must return
a result, and for every other kind it must raise one of labkit's own errors
(a LabkitError: the notebooks show it as one line via
``labkit.teaching.short_errors()``) with a one-line message. Never another
exception (a bare traceback), never a silent success on a value it cannot use.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import labkit  # noqa: E402
from labkit import Call, LabkitError, Limits, Reply, RunOutcome, RunStatus  # noqa: E402
from labkit.teaching import charts, direct, frames, predict, spans, widgets  # noqa: E402
from labkit.teaching.capstone import ScriptedModel, check_bingo  # noqa: E402
from labkit.teaching.explain import explain  # noqa: E402


def _add(state, x: int) -> int:
    state.total = getattr(state, "total", 0) + x
    return state.total


@functools.cache
def declared() -> labkit.Scenario:
    return labkit.scenario(
        "adder",
        tools=[labkit.Tool("add", "math.add", _add)],
        script=[Reply("Adding.", [Call("add", {"x": 2})]), "Done."],
        done=lambda state: getattr(state, "total", 0) == 2,
    )


_FAST = {"deadline": Limits(deadline_s=0.05)}


@functools.cache
def outcome_of(name: str) -> RunOutcome:
    return labkit.run(name, limits=_FAST.get(name))


@functools.cache
def huge() -> RunOutcome:
    return labkit.run("changing", limits=Limits(model_calls=3001, tool_calls=3000))


def guarded_tool() -> labkit.GuardedTool:
    def echo(input: int) -> int:
        return input

    scope = labkit.ExecutionScope(Limits(tool_calls=100, repetitions=100), {"ticket.read"})
    return scope.tool("echo", "ticket.read", echo)


OUTCOME_KINDS = [f"outcome {name}" for name in labkit.SCENARIOS]

KINDS = {
    **{f"outcome {name}": functools.partial(outcome_of, name) for name in labkit.SCENARIOS},
    "outcome empty": lambda: RunOutcome(status=RunStatus.INCOMPLETE, text="", events=()),
    "outcome huge": huge,
    "outcome of Reply steps": lambda: labkit.run(declared()),
    "declared scenario": declared,
    "scenario name": lambda: "repeat",
    "prepared setup": lambda: labkit.prepare("repeat"),
    "mystery": lambda: labkit.mystery("D"),
    "empty mapping": dict,
    "mapping of outcomes": lambda: {"simple": outcome_of("repeat"), "harness": outcome_of("changing")},
    "events": lambda: outcome_of("repeat").events,
    "mapping of events": lambda: {"a scope": outcome_of("repeat").events, "another": ()},
    "guarded tool": guarded_tool,
    "steps with Reply": lambda: [Reply("Reading.", [Call("read_ticket", {"input": 42})]), "Done."],
    "empty steps": list,
    "board with an empty script": lambda: {"Completed": ScriptedModel([])},
    "None": lambda: None,
    "a number": lambda: 42,
    "an object": SimpleNamespace,
}
"""Every kind of value, made fresh per case (a Setup serves one run)."""

OUTCOMES = {*OUTCOME_KINDS, "outcome empty", "outcome huge", "outcome of Reply steps"}
SCENARIOS = {"declared scenario", "scenario name"}


def _frame_of_events(value):
    frame = frames.events_frame(value)
    assert isinstance(frame, pd.DataFrame)
    return frame


HELPERS = {
    # name: (call, kinds it admits)
    "events_frame": (
        _frame_of_events,
        OUTCOMES | {"mapping of outcomes", "events", "mapping of events", "empty steps"},
    ),
    "counters_frame": (frames.counters_frame, OUTCOMES),
    "requests_frame": (frames.requests_frame, OUTCOMES),
    "outcomes_frame": (frames.outcomes_frame, {"empty mapping", "mapping of outcomes", "empty steps"}),
    "canonical_frame": (frames.canonical_frame, {"empty mapping"}),
    "counters_data": (charts.counters_data, OUTCOMES),
    "counters_chart": (charts.counters_chart, OUTCOMES | {"mapping of outcomes"}),
    "timeline_data": (charts.timeline_data, OUTCOMES),
    "timeline_chart": (charts.timeline_chart, OUTCOMES),
    "check": (lambda v: predict.check(v, status="RepeatedCall", tool_calls=1), OUTCOMES | {"mapping of outcomes"}),
    "explain": (explain, OUTCOMES | {"prepared setup"}),
    "widgets.predict": (widgets.predict, SCENARIOS | {"mystery"}),
    "widgets.explorer": (widgets.explorer, SCENARIOS),
    "run_traced": (lambda v: spans.run_traced(v), SCENARIOS | {"prepared setup"}),
    "spans_frame": (spans.spans_frame, {"empty mapping", "empty steps"}),
    "invoke_each": (lambda v: direct.invoke_each(v, [{"input": 1}]), {"guarded tool"}),
    "invoke_together": (lambda v: direct.invoke_together(v, [{"input": 1}, {"input": 2}]), {"guarded tool"}),
    "check_bingo": (check_bingo, {"empty mapping", "board with an empty script"}),
    "ScriptedModel": (ScriptedModel, {"steps with Reply", "empty steps"}),
}

CASES = [(helper, kind) for helper in HELPERS for kind in KINDS]


@pytest.mark.parametrize(("helper", "kind"), CASES)
def test_a_helper_takes_what_its_signature_admits_and_reports_the_rest_on_one_line(helper, kind):
    call, admitted = HELPERS[helper]
    value = KINDS[kind]()
    if kind in admitted:
        result = call(value)
        assert result is not None
        return
    with pytest.raises(Exception) as caught:
        call(value)
    error = caught.value
    assert isinstance(error, LabkitError), f"{helper}({kind}) raised {type(error).__name__}: {error}"
    message = str(error)
    assert message and "\n" not in message and len(message) < 400, message


def test_every_helper_meets_every_kind():
    assert len(CASES) == len(HELPERS) * len(KINDS)
    for _, admitted in HELPERS.values():
        assert admitted <= set(KINDS)


def test_a_bingo_square_with_an_empty_script_is_reported_on_its_line():
    result = check_bingo({"Completed": ScriptedModel([])})
    square = result["Completed"]
    assert square.state == "invalid" and "the script is empty" in square.line and "\n" not in square.line
    assert not result.passed


def test_a_declared_scenario_with_reply_steps_is_checked_and_explained():
    outcome = labkit.run(declared())
    assert outcome.status is RunStatus.COMPLETED
    feedback = labkit.check(outcome, status="Incomplete", tool_calls=1).feedback
    assert feedback[0].startswith("think: you said Incomplete, but the run ended by itself")  # no stop was guessed
    assert "host condition holds" in feedback[0] and "no rule refused" not in feedback[0]


def test_a_long_runs_timeline_is_cut_and_says_so():
    outcome = huge()
    assert len(outcome.events) > 8000
    figure = charts.timeline_chart(outcome)
    (ax,) = figure.axes
    marks = [line for line in ax.get_lines() if line.get_marker() in ("o", "X")]
    assert len(marks) <= charts.TIMELINE_MAX_EVENTS + charts.TIMELINE_MAX_EVENTS // 2  # plus bodies of a few ToolCalls
    assert len(ax.patches) + len(ax.texts) < 4 * charts.TIMELINE_MAX_EVENTS
    title = ax.get_title()
    assert f"of {len(outcome.events):,} events drawn" in title
    assert any("not drawn" in text.get_text() for text in ax.texts)
    assert len(charts.timeline_data(outcome)) > len(outcome.events)  # the data keeps every row


def test_a_short_runs_timeline_is_not_cut():
    figure = charts.timeline_chart(outcome_of("repeat"))
    (ax,) = figure.axes
    assert "drawn" not in ax.get_title()
    assert not any("not drawn" in text.get_text() for text in ax.texts)


def test_teaching_hints_cite_no_spec_section():
    """Hints point to files that exist (docs/guarantees.md, a chapter), never to SPEC sections."""
    for name in ("repeat", "changing", "forbidden", "budget", "unavailable", "complete"):
        outcome = outcome_of(name)
        for status in RunStatus:
            text = str(labkit.check(outcome, status=status.value, tool_calls=outcome.count("ToolCall") + 1))
            assert "SPEC" not in text
    board = {status.value: ScriptedModel(["Review finished."]) for status in RunStatus}
    assert "SPEC" not in str(check_bingo(board))


def test_a_mapping_with_one_bad_value_names_its_label():
    with pytest.raises(LabkitError, match="'broken'"):
        labkit.check({"fine": outcome_of("repeat"), "broken": 42}, status="RepeatedCall", tool_calls=1)


def test_a_prepared_setup_is_explained_by_running_it():
    setup = labkit.prepare("changing")
    explanation = explain(setup)
    assert explanation.outcome.status is RunStatus.TOOL_BUDGET and "ToolBudget" in explanation.rules
    with pytest.raises(LabkitError):
        explain(setup)  # a setup serves one run


def test_a_declared_scenario_outside_the_seed_list_can_be_explored():
    panel = widgets.explorer(declared())
    assert panel.scenario.value == "adder"
    outcome = panel.run()
    assert outcome.status is RunStatus.COMPLETED


def test_explain_of_a_run_does_not_change_with_an_unrelated_limit():
    """The explanation reads the run's own limits: a roomier model budget changes nothing in `repeat`."""
    base = explain(labkit.run("repeat"))
    roomy = explain(labkit.run("repeat", limits=Limits(model_calls=50)))
    assert base.decided.rule == roomy.decided.rule == "RepeatedCall"
    assert "ModelBudget" in base.rules


def test_an_outcome_kept_while_many_runs_happen_is_still_explained_from_its_run():
    """The runner remembers an outcome's origin for as long as the outcome lives, however many runs follow."""
    kept = labkit.run("repeat")
    for _ in range(300):
        labkit.run("complete")
    explanation = explain(kept)
    assert explanation.replayed and {"RepeatedCall", "ToolBudget"} <= explanation.rules


def test_a_pair_holding_the_outcome_points_at_it():
    pair = spans.run_traced("repeat")  # (outcome, spans): a learner passes the pair
    for helper in (lambda v: predict.check(v, status="RepeatedCall"), charts.timeline_chart, frames.counters_frame):
        with pytest.raises(LabkitError, match=r"not tuple; its item \[0\] is one: pass that") as info:
            helper(pair)
        assert "\n" not in str(info.value)
