"""Hints name only rules that refused, or would have refused, in the run they explain (issue 17, item 3).

The oracle (:func:`verdict_kit.oracle`, shared with test_verdicts_generated) is
independent of labkit.teaching.explain: a rule R "would have refused" in a run
when a run of the same script, with every *other* rule loosened (the other
budgets raised by far more than the engine's room, every capability granted
unless R is the permission rule), ends with R's status. Loosening the other
rules changes nothing before their first refusal, so any rule the engine finds
by loosening one rule after another refuses there too. The deadline counts
only when that run (with the run's own small deadline) measured it.

Every scenario (both agents) and every mystery (both agents) is checked with
every wrong status guess and several wrong ToolCall counts; generated bingo
squares (hypothesis) are checked the same way.
"""

from __future__ import annotations

import dataclasses
import functools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from verdict_kit import RULES, WATCHED_S, named_rules, oracle  # the oracle, shared with test_verdicts_generated

import labkit
from labkit import Call, Hang, RunOutcome, RunStatus, Say
from labkit.loops.scenarios import ALL_CAPABILITIES, Scenario
from labkit.teaching.capstone import AGENTS, ScriptedModel, check_bingo, new_board

FAST_DEADLINE_S = 0.05  # the deadline scenario, made fast


# -- the subjects: every scenario and every mystery, under both agents -------------------------------


def _scenario(name: str) -> Scenario:
    scenario = labkit.SCENARIOS[name]
    if scenario.limits.deadline_s > WATCHED_S and any(isinstance(s, Hang) for s in _steps(scenario)):
        scenario = dataclasses.replace(scenario, limits=scenario.limits.with_(deadline_s=FAST_DEADLINE_S))
    return scenario


def _steps(scenario: Scenario) -> tuple:
    return tuple(scenario.script) if not callable(scenario.script) else ()


SUBJECTS = [
    *((f"scenario {name}", agent) for name in labkit.SCENARIOS for agent in ("simple", "harness")),
    *((f"mystery {key}", agent) for key in labkit.mysteries() for agent in ("simple", "harness")),
]


@functools.cache
def subject(label: str, agent: str) -> tuple[RunOutcome, frozenset[str]]:
    kind, _, key = label.partition(" ")
    scenario = _scenario(key) if kind == "scenario" else labkit.mystery(key).scenario()
    outcome = labkit.run(scenario, agent=agent)
    return outcome, frozenset(oracle(scenario, agent, outcome))


def _wrong_counts(actual: int) -> list[int]:
    return sorted({actual + 1, actual + 2, 0, max(actual - 1, 0)} - {actual})


CASES = [
    *((label, agent, status.value, None) for label, agent in SUBJECTS for status in RunStatus),
    *((label, agent, None, n) for label, agent in SUBJECTS for n in range(5)),
]


def test_the_oracle_sees_the_guard_order_case_and_the_changing_case():
    """The oracle itself: D's fifth call is refused by both budget and repetition; `changing` never repeats."""
    _, d_rules = subject("mystery D", "harness")
    assert {"ToolBudget", "RepeatedCall"} <= d_rules
    _, changing_rules = subject("scenario changing", "harness")
    assert "ToolBudget" in changing_rules and "RepeatedCall" not in changing_rules


@pytest.mark.parametrize(("label", "agent", "said", "count"), CASES)
def test_a_hint_names_only_rules_that_refused_or_would_have(label, agent, said, count):
    outcome, rules = subject(label, agent)
    actual_count = outcome.count("ToolCall")
    if said is not None:
        result = labkit.check(outcome, status=said, tool_calls=actual_count)
        right = said == outcome.status.value
    else:
        result = labkit.check(outcome, status=outcome.status.value, tool_calls=count)
        right = count == actual_count
    text = " ".join(result.feedback)
    if right:
        assert result.right and result.feedback == (), "a right guess gets no hint"
        return
    assert result.feedback, "a wrong guess gets a hint"
    assert named_rules(text) <= rules, f"{label} / {agent}: the hint names {named_rules(text) - rules}: {text}"
    if said is not None and outcome.status.value in RULES:
        assert outcome.status.value in named_rules(text), "the rule that decided is named"
        assert text.count("SPEC") == 0


def test_every_wrong_guess_of_every_subject_is_covered():
    wrong_status = sum(1 for _, _, said, _ in CASES if said is not None)
    assert wrong_status == len(SUBJECTS) * len(RunStatus)
    assert len(SUBJECTS) == 2 * (len(labkit.SCENARIOS) + len(labkit.mysteries()))


def test_the_issues_examples_say_what_ran():
    """The two lies of issue 17, item 3, now measured."""
    read_42 = Call("read_ticket", {"input": 42})
    board = new_board()
    board["RepeatedCall"] = ScriptedModel([read_42, read_42], limits={"tool_calls": 1})
    line = check_bingo(board)["RepeatedCall"].line
    assert "every call you asked for was different" not in line
    assert "the tool budget decided" in line and "1 of 1 attempts already admitted" in line
    assert "the repetition rule would also have refused that call" in line and "asks the tool budget first" in line
    feedback = " ".join(labkit.check(labkit.run("changing"), status="RepeatedCall", tool_calls=4).feedback)
    assert "RepeatedCall" not in named_rules(feedback)


def test_an_outcome_without_a_known_origin_names_only_the_deciding_rule():
    from labkit.teaching.explain import explain

    ran = labkit.run("changing")
    copy = RunOutcome(status=ran.status, text=ran.text, events=ran.events, transcript=ran.transcript, limits=ran.limits)
    explanation = explain(copy)
    assert not explanation.replayed and explanation.rules == {"ToolBudget"}
    assert explain(ran).rules == {"ToolBudget", "ModelBudget"} and explain(ran).replayed


# -- generated bingo squares ------------------------------------------------------------------------

_ARGUMENT = st.sampled_from([42, 42.0, 1, 7])
_CALL = st.builds(
    lambda name, value: Call(name, {"input": value}), st.sampled_from(["read_ticket", "finish_review"]), _ARGUMENT
)
_STEP = st.one_of(
    _CALL,
    _CALL,
    st.lists(_CALL, min_size=2, max_size=3),
    st.sampled_from(["Review finished.", Say("done")]),
    st.just(Hang()),
)


@st.composite
def squares(draw):
    steps = draw(st.lists(_STEP, min_size=1, max_size=6))
    grant = draw(st.sets(st.sampled_from(sorted(ALL_CAPABILITIES))))
    limits = {
        "model_calls": draw(st.integers(0, 6)),
        "tool_calls": draw(st.integers(0, 4)),
        "repetitions": draw(st.integers(0, 1)),
        "deadline_s": FAST_DEADLINE_S,
    }
    wanted = draw(st.sampled_from(list(RunStatus)))
    return ScriptedModel(steps, grant=grant, limits=limits), wanted


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(squares())
def test_a_bingo_hint_never_names_a_rule_that_neither_refused_nor_would_have(square):
    model, wanted = square
    board = new_board()
    board[wanted.value] = model
    result = check_bingo(board)[wanted.value]
    assert "\n" not in result.line
    if result.state == "right":
        assert "Hint:" not in result.line
        return
    assert result.state == "wrong"
    agent, wrong = next(
        (a, r) for a, r in result.outcomes.items() if not (isinstance(r, RunOutcome) and r.status is wanted)
    )
    assert list(result.outcomes) == list(AGENTS)
    hint = result.line.split("Hint: ", 1)[1]
    if not isinstance(wrong, RunOutcome):
        assert named_rules(hint) == set(), hint  # a script that ran out or raised: no rule is a cause
        return
    rules = oracle(model.scenario(f"bingo-{wanted.value}"), agent, wrong)
    assert named_rules(hint) <= rules, f"the hint names {named_rules(hint) - rules}: {hint}"
    if wrong.status.value in RULES:
        assert wrong.status.value in named_rules(hint)


def test_a_later_refusal_says_which_stops_were_lifted_to_find_it():
    """After an "also" line, the next counterfactual lifted both rules, and names both, never one."""
    feedback = labkit.check(labkit.mystery("D").run(), status="ModelBudget", tool_calls=4).feedback
    assert any("but the guard asks the tool budget first" in line for line in feedback)
    lifted = "think: without the tool budget and the repetition rule, the model-call budget"
    assert any(line.startswith(lifted) for line in feedback)
    alone = labkit.check(labkit.run("changing"), status="ModelBudget", tool_calls=4).feedback
    assert any(line.startswith("think: without the tool budget, the model-call budget") for line in alone)


@pytest.mark.parametrize("name", ["changing", "repeat", "forbidden", "budget"])
def test_a_frameworks_run_gets_the_hints_labkits_own_loop_gets(name):
    """Chapter 11 checks one guess against six loops: a framework's run is replayed in labkit's harness
    (no divergence is declared), so its hints are the harness's, not a counters-only line of their own."""
    from labkit.adapters import RUNTIMES

    limits = labkit.Limits(model_calls=3, tool_calls=5)
    wanted = labkit.run(name, agent="harness", limits=limits)
    for guess in ("ToolBudget", "RepeatedCall", "Completed"):
        expected = labkit.check(wanted, status=guess, tool_calls=9).feedback
        for runtime in RUNTIMES:
            outcome = labkit.run(name, agent=runtime, limits=limits)
            assert labkit.check(outcome, status=guess, tool_calls=9).feedback == expected, (runtime, guess)
