"""labkit.teaching.runtimes: one review under a function, a workflow and both agents, through the same guard."""

from __future__ import annotations

import subprocess
import sys

import pytest

import labkit
from labkit.teaching.runtimes import RUNTIMES, guard_events, run_all, run_function, run_loop, run_workflow

READ, FINISH = labkit.Call("read_ticket", {"input": 42}), labkit.Call("finish_review", {"input": 42})
REVIEWER = [READ, FINISH, "Review finished."]


def by_rule(tools):
    tools.read_ticket(42)
    return tools.finish_review(42)


def triage(tools, ask):
    ticket = tools.read_ticket(42)
    if ask(f"Ticket text: {ticket}\nDoes it ask for a change?", ("yes", "no")) == "no":
        return tools.finish_review(42)
    return "left open for a person"


def triples(outcome):
    return [(e.kind.value, e.name, e.count) for e in outcome.events]


def test_the_four_runtimes_complete_the_review_and_only_the_model_calls_differ():
    runs = run_all(function=by_rule, workflow=triage, workflow_model=["no"], model=REVIEWER)
    assert tuple(runs) == RUNTIMES
    assert {name: run.status.value for name, run in runs.items()} == dict.fromkeys(RUNTIMES, "Completed")
    assert {name: run.count("ModelCall") for name, run in runs.items()} == {
        "function": 0,
        "workflow": 1,
        "simple": 3,
        "harness": 3,
    }
    assert triples(runs["function"]) == [("ToolCall", "read_ticket", 1), ("ToolCall", "finish_review", 2)]
    assert triples(runs["workflow"]) == [
        ("ToolCall", "read_ticket", 1),
        ("ModelCall", "model", 1),
        ("ToolCall", "finish_review", 2),
    ]
    assert runs["simple"].events == runs["harness"].events == labkit.run("complete", agent="simple").events
    assert len({guard_events(run) for run in runs.values()}) == 1
    assert runs["function"].text == runs["workflow"].text and runs["function"].exit_code == 0


def test_one_grant_withdrawn_the_same_guard_refuses_the_same_call_in_all_four():
    runs = run_all(function=by_rule, workflow=triage, workflow_model=["no"], model=REVIEWER, granted={"ticket.read"})
    for run in runs.values():
        assert run.status == labkit.RunStatus.PERMISSION_DENIED and run.text is None and run.exit_code == 2
        assert [(e.kind.value, e.name, e.count) for e in guard_events(run)] == [
            ("ToolCall", "read_ticket", 1),
            ("PermissionDenied", "finish_review", 1),
        ]


def test_a_workflow_never_runs_a_tool_its_model_asks_for_and_takes_its_own_path():
    run = run_workflow(triage, [FINISH])
    assert run.status == labkit.RunStatus.INCOMPLETE and run.text == "left open for a person"
    assert triples(run) == [("ToolCall", "read_ticket", 1), ("ModelCall", "model", 1)]
    assert run_workflow(triage, ["  No. "]).status == labkit.RunStatus.COMPLETED  # case, spaces, full stop
    assert run_workflow(triage, ["no, nothing to change"]).status == labkit.RunStatus.INCOMPLETE


def test_the_host_code_is_bounded_like_an_agent():
    assert run_function(by_rule, limits=labkit.Limits(tool_calls=1)).status == labkit.RunStatus.TOOL_BUDGET
    assert run_workflow(triage, ["no"], limits=labkit.Limits(model_calls=0)).status == labkit.RunStatus.MODEL_BUDGET
    assert run_workflow(triage, [labkit.Fail(ConnectionError("down"))]).status == labkit.RunStatus.PROVIDER_UNAVAILABLE
    slow = run_workflow(triage, [labkit.Hang()], limits=labkit.Limits(deadline_s=0.2))
    assert slow.status == labkit.RunStatus.DEADLINE_EXCEEDED and slow.text is None


def test_a_function_that_never_finishes_is_incomplete_and_a_body_error_it_does_not_catch_is_raised():
    assert run_function(lambda tools: tools.read_ticket(42)).status == labkit.RunStatus.INCOMPLETE
    with pytest.raises(ValueError, match="read ticket 42 before"):
        run_function(lambda tools: tools.finish_review(42))
    assert run_function(lambda tools: tools.read_ticket(input=7)).events[0].name == "read_ticket"


def test_run_loop_is_labkit_run_for_the_same_script():
    for agent in ("simple", "harness"):
        assert triples(run_loop([READ, READ], agent=agent)) == triples(labkit.run("repeat", agent=agent))


def test_bad_inputs_are_one_line_errors():
    with pytest.raises(labkit.InputError, match="host's code"):
        run_function("by_rule")
    with pytest.raises(labkit.InputError, match="one string"):
        run_function(by_rule, granted="ticket.read")
    with pytest.raises(labkit.InputError, match="'simple' or 'harness'"):
        run_loop(REVIEWER, agent="maf")
    with pytest.raises(labkit.InputError, match="choices"):
        run_workflow(lambda tools, ask: ask("Close it?", "yes"), ["yes"])
    with pytest.raises(AttributeError, match="no tool 'delete_ticket'"):
        run_function(lambda tools: tools.delete_ticket(42))
    with pytest.raises(labkit.InputError, match="RunOutcome"):
        guard_events("a run")


def test_importing_the_helper_loads_no_pandas():
    code = "import sys, labkit.teaching.runtimes; print('pandas' in sys.modules)"
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
        == "False"
    )


def test_values_beside_outcomes_follow_each_outcome_by_identity_and_go_with_it():
    """Two runs that compare equal keep their own values; a freed outcome's entry is dropped."""
    import gc

    from labkit.loops.running import BesideOutcomes

    beside = BesideOutcomes()
    first = labkit.run("incomplete")
    second = first.model_copy()
    assert first == second and hash(first) == hash(second) and first is not second, "a dict would merge them"
    beside.put(first, "function")
    beside.put(second, "workflow")
    assert (beside.get(first), beside.get(second)) == ("function", "workflow")
    del first
    gc.collect()
    assert len(beside._entries) == 1 and beside.get(second) == "workflow"
