"""Goal exercises are judged as designs, None is an answer, and a value's form is a verdict, never an error.

* Chapter 7's hosts (and chapter 11's scenario, ``check(..., goal=True)``): the learner designs limits to
  reach an ending. Generated hosts (a space of ``Limits``) run chapter 7's re-reader; the oracle is the run
  itself: a host that reaches its ending gets no ``think:`` line, one that misses gets lines that speak of
  the design (never "you said" or "you counted"), name the limit that refused with the run's own value,
  and say "more" or "fewer" as the run's count stands to the ending's.
* ``None`` where a question offers it (chapter 4's and chapter 9's recorded stop): judged as an answer.
* A guess in any form (a text of digits, a word, a truth value, a fraction) never raises, and two values
  that differ never print alike.
"""

from __future__ import annotations

import functools
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import labkit
from labkit.core.events import StopReason
from labkit.teaching.hosts import check_hosts

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

REREADER = [
    labkit.Call("read_ticket", {"input": 42}),
    labkit.Call("read_ticket", {"input": 42}),
    labkit.Call("finish_review", {"input": 42}),
    "Review finished.",
]
ENDINGS = {"Completed": 3, "RepeatedCall": 1, "ToolBudget": 2, "ModelBudget": 3}  # chapter 7's
LIMIT_OF = {"ToolBudget": "tool_calls", "RepeatedCall": "repetitions", "ModelBudget": "model_calls"}


@functools.cache
def _run(tool_calls: int, repetitions: int, model_calls: int) -> labkit.RunOutcome:
    limits = labkit.Limits(tool_calls=tool_calls, repetitions=repetitions, model_calls=model_calls)
    return labkit.run(labkit.Scenario("re-reader", "reads 42 twice, then finishes", REREADER, limits))


HOSTS = st.tuples(st.integers(0, 4), st.integers(0, 3), st.integers(1, 5))


@FAST
@given(st.dictionaries(st.sampled_from(sorted(ENDINGS)), HOSTS, min_size=1))
def test_a_host_is_judged_by_what_its_limits_let_through_never_as_a_guess(hosts):
    runs = {ending: _run(*limits) for ending, limits in hosts.items()}
    result = check_hosts(runs, ENDINGS)
    for ending, run in runs.items():
        one = result[ending]
        text = one._text()
        think = [line for line in text.splitlines() if line.startswith("think:")]
        reached = run.status.value == ending and run.count("ToolCall") == ENDINGS[ending]
        assert one.right == reached and bool(think) == (not reached), text
        assert "you said" not in text and "you counted" not in text, text
        assert text.splitlines()[0].split()[1:3] == ["aimed", "for"], text
        if reached:
            continue
        if run.status.value != ending:
            assert think[0].startswith(f"think: your design ended {run.status.value}; "), text
            continue
        line, *also = think  # the ending reached, the count missed: one line on the design
        admitted = run.count("ToolCall")
        refused = REREADER[admitted] if admitted < 3 and run.status.is_stop else None  # the call the stop refused
        repeat_too = (
            ending == "ToolBudget"
            and refused is not None
            and REREADER[:admitted].count(refused) >= run.limits.repetitions
        )
        # more attempts wanted, and the repetition rule would also refuse that very call: one line says so
        assert [bool(re.search(r"repetition rule would also have refused that call", a)) for a in also] == (
            [True] if repeat_too and ENDINGS[ending] > admitted else []
        ), text
        assert f" {admitted} tool attempt" in line, line
        rule = LIMIT_OF.get(ending)
        if rule is not None:
            assert f"({rule}={getattr(run.limits, rule)})" in line, line
        assert ("needs more ToolCall events" in line) == (ENDINGS[ending] > admitted), line
        assert ("needs fewer ToolCall events" in line) == (ENDINGS[ending] < admitted), line
        settings_named = set(re.findall(r"(\w+)=(\d+)", line))
        assert settings_named <= {(name, str(getattr(run.limits, name))) for name, _ in settings_named}, line


def test_chapter_7s_tool_budget_host_of_one_attempt_hears_of_its_limit_not_of_a_count():
    """The reviewers' case: Limits(tool_calls=1) for ToolBudget."""
    result = check_hosts({"ToolBudget": _run(1, 1, 6)}, ENDINGS)
    line, also = [line for line in result._text().splitlines() if line.startswith("think:")]
    assert "the repetition rule would also have refused that call" in also, also  # raising tool_calls alone fails
    assert "your run admitted 1 tool attempt before the tool budget refused (tool_calls=1)" in line
    assert "needs more ToolCall events" in line and "records none" not in line


def test_a_scenario_checked_as_a_goal_speaks_of_the_design():
    run = labkit.run("complete")
    text = labkit.check(run, status="PermissionDenied", goal=True)._text()
    assert "you said" not in text and "aimed for PermissionDenied" in text
    assert "think: your design ended Completed; " in text and "PermissionDenied needs a call of a tool" in text


# -- None is an answer -------------------------------------------------------------------------------------

STOPS = st.sampled_from(list(StopReason))


@FAST
@given(STOPS, st.sampled_from(["stop kept", "status"]), st.booleans())
def test_none_where_a_question_offers_it_is_judged_as_an_answer(stop, meaning, as_text):
    was = stop.value if as_text or meaning == "stop kept" else stop
    text = labkit.compare("recorded stop", None, was, meaning=meaning)._text()
    (think,) = [line for line in text.splitlines() if line.startswith("think:")]
    assert "you said None (no stop recorded); it was" in think and stop.value in think, think
    assert "no value" not in think and "you gave" not in think, think
    back = labkit.compare("recorded stop", stop.value, None, meaning=meaning)._text()
    assert f"it was None (no stop recorded), not {stop.value}" in back, back
    assert "the guard refused" not in back, back  # no stop was recorded: no refusal is said to have come first


@FAST
@given(STOPS, st.sampled_from([s.value for s in labkit.RunStatus]))
def test_a_scopes_stop_reason_names_its_cause_the_first_stop_stays(stop, said):
    text = labkit.compare("stop reason", said, stop, meaning="status")._text()
    if said == stop.value:
        assert "think:" not in text
        return
    assert "the scope keeps the first stop it records" in text and f"the reason stays {stop.value}" in text
    assert ("is a run's status, never a stop a scope records" in text) == (said not in set(StopReason)), text


# -- a value's form is a verdict --------------------------------------------------------------------------

FORMS = st.one_of(
    st.integers(-2, 6),
    st.integers(-2, 6).map(str),
    st.integers(0, 6).map(lambda n: f" {n} "),
    st.sampled_from(["two", "", "2.0", "1 call", 2.5, True, False, None, ..., [2]]),
)


@FAST
@given(FORMS, st.sampled_from(["budget", "repeat", "complete"]))
def test_a_check_cell_never_raises_for_a_counts_form(count, name):
    run = labkit.run(name)
    result = labkit.check(run, status=run.status.value, tool_calls=count)  # never an InputError
    actual = run.count("ToolCall")
    digits = isinstance(count, str) and count.strip().lstrip("-").isdigit()
    number = int(count) if digits else count
    whole = digits or (isinstance(number, (int, float)) and not isinstance(number, bool) and number == int(number))
    if count is None or count is ...:
        assert "no guess yet" in result._text()
        return
    assert result.right == (whole and int(number) == actual), (count, result._text())
    if not (whole and int(number) >= 0):
        assert "think: a count is a whole number of ToolCall events" in result._text(), result._text()


@FAST
@given(st.one_of(st.integers(0, 3), st.integers(0, 3).map(str), st.sampled_from([None, "None", True, 2.0, "2.0"])))
def test_a_value_and_its_answer_that_differ_never_print_alike(guess):
    for actual in (2, "2", None, True):
        line = labkit.compare("v", guess, actual)._text().splitlines()[0]
        said, was = re.match(r"v\s+you said (.*?)\s+it was (.*?)\s+(?:right|not this time)$", line).groups()
        if type(guess) is not type(actual) or guess != actual:
            assert said != was, line


# -- a call no rule judged is said so, and only then -------------------------------------------------------


def _stamp(state: list, ticket: int) -> str:
    state.append(ticket)
    return "stamped"


@pytest.mark.parametrize(
    ("call", "said"),
    [
        (labkit.Call("stamp", {"ticket": "x"}), "its arguments did not bind"),
        (labkit.Call("stmp", {"ticket": 42}), "it named a tool the agent does not have"),
        (labkit.Call("stamp", {"ticket": 42}), None),
    ],
)
def test_a_design_whose_call_reached_no_guard_is_told_so(call, said):
    scenario = labkit.scenario(
        "stamp",
        tools=[labkit.Tool("stamp", "ticket.stamp", _stamp)],
        script=[call, "Done."],
        capabilities={"ticket.stamp"},
        done=lambda stamped: bool(stamped),
        state=list,
    )
    text = labkit.check(labkit.run(scenario), status="PermissionDenied", goal=True)._text()
    unguarded = [line for line in text.splitlines() if "never reached the guard" in line]
    assert (said in unguarded[0]) if said else unguarded == [], text
