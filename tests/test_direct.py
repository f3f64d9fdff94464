"""labkit.teaching.direct: direct invocation in turn (invoke_each) and at once (invoke_together), one guard."""

import threading

import pytest

from labkit import ExecutionScope, Limits, ReviewTask, RunHalted, StopReason
from labkit.teaching.direct import invoke_each, invoke_together


def make(limits: Limits):
    scope = ExecutionScope(limits, {"ticket.read", "review.finish"})
    task = ReviewTask()
    read, _ = task.tools(scope)
    return scope, task, read


@pytest.mark.parametrize("threads", [5, 12, 32])
def test_distinct_calls_admit_exactly_the_tool_budget(threads):
    scope, task, read = make(Limits(tool_calls=4))
    attempts = invoke_together(read, [{"input": i} for i in range(1, threads + 1)])
    assert len(attempts) == threads
    kinds = [e.kind for e in scope.events]
    assert kinds == ["ToolCall"] * 4 + ["ToolBudget"]
    assert [e.count for e in scope.events[:4]] == [1, 2, 3, 4]
    assert task.entries["read_ticket"] == 4
    assert sum(a.error is None for a in attempts) <= 4
    assert sum(a.halted for a in attempts) >= threads - 4
    assert scope.stop_reason is StopReason.TOOL_BUDGET


def test_identical_calls_admit_one_per_signature():
    scope, task, read = make(Limits(tool_calls=10, repetitions=1))
    invoke_together(read, ['{"input": 42}', {"input": 42.0}] * 5)
    assert [e.kind for e in scope.events] == ["ToolCall", "RepeatedCall"]
    assert task.reads == 1


def test_a_refusal_is_reported_not_raised():
    scope, task, read = make(Limits(tool_calls=0))
    [attempt] = invoke_together(read, [{"input": 42}])
    assert isinstance(attempt.error, RunHalted) and attempt.halted and attempt.result is None


def test_results_come_back_in_order():
    scope, task, read = make(Limits(tool_calls=3, repetitions=1))
    attempts = invoke_together(read, [{"input": 1}, {"input": 2}])
    assert [a.arguments for a in attempts] == [{"input": 1}, {"input": 2}]
    assert all(a.result.startswith("NotFound") for a in attempts)


def test_empty_and_hanging_are_errors():
    scope, task, read = make(Limits())
    with pytest.raises(ValueError):
        invoke_together(read, [])
    release = threading.Event()
    scope2 = ExecutionScope(Limits(), {"x"})

    def wait_for_release(input: int) -> bool:
        return release.wait()

    stuck = scope2.tool("stuck", "x", wait_for_release)
    try:
        with pytest.raises(TimeoutError, match="did not finish"):
            invoke_together(stuck, [{"input": 1}], timeout_s=0.05)
    finally:
        release.set()


def test_invoke_each_runs_in_order_and_records_refusals():
    scope, task, read = make(Limits(tool_calls=10, repetitions=1))
    attempts = invoke_each(read, ['{"input": 1}', '{"input": 42}', {"input": 42.0}, '{"input": 7}', '{"input": true}'])
    assert [a.error is None for a in attempts] == [True, True, False, False, False]
    assert attempts[0].ended == "returned 'NotFound: only ticket 42 is in scope.'"
    assert attempts[2].ended.startswith("RunHalted: repeated call")
    assert "already stopped" in attempts[3].ended  # a stopped scope admits nothing more
    assert attempts[4].ended.startswith("ToolArgumentsError")  # binding fails before the guard
    assert [e.kind for e in scope.events] == ["ToolCall", "ToolCall", "RepeatedCall"]
