"""The execution scope and its guard (docs/guarantees.md, *Limits are exact* and *Cancellation*)."""

from __future__ import annotations

import asyncio
import threading

import pytest
from support import FakeClock, asynctest, tool_results, triples

import labkit
from labkit import (
    Call,
    CancelToken,
    ChatRequest,
    CountingClient,
    DuplicateToolError,
    ExecutionScope,
    Limits,
    Message,
    RunHalted,
    RunStatus,
    ScopeStateError,
    ScriptedTransport,
    SimpleAgent,
    StopReason,
    ToolArgumentsError,
    run_agent,
    signature,
)
from labkit.core.rules import GUARD_RULES, Refusal

GRANTED = "lab.read"
NOT_GRANTED = "lab.write"
REQUEST = ChatRequest(messages=(Message.user("hi"),))


class Probe:
    """A sync tool body that counts its entries; fails on demand."""

    def __init__(self, fail: bool = False) -> None:
        self.entries = 0
        self.fail = fail
        self._lock = threading.Lock()

    def body(self, x: int) -> int:
        with self._lock:
            self.entries += 1
        if self.fail:
            raise ValueError("the body failed")
        return x


def _scope(clock: FakeClock | None = None, **limits: object) -> ExecutionScope:
    if clock is None:
        return ExecutionScope(Limits(**limits), {GRANTED})
    return ExecutionScope(Limits(**limits), {GRANTED}, clock=clock)


def _halt(call, *args: object) -> StopReason:
    with pytest.raises(RunHalted) as info:
        call(*args)
    return info.value.reason


# -- guard order --------------------------------------------------------------------


def test_rules_on_a_hand_built_state_report_each_reason() -> None:
    scope = _scope(tool_calls=1, repetitions=1)
    granted = scope.tool("granted", GRANTED, Probe().body)
    refused = scope.tool("refused", NOT_GRANTED, Probe().body)
    granted.invoke({"x": 1})  # now: budget used up and signature granted:{x:1} seen once

    seen_key = signature("granted", {"x": 1})
    attempt = scope._attempt_locked(granted, seen_key)
    reasons = [(r := rule(attempt)) and r.reason for rule in GUARD_RULES]
    assert reasons == [None, StopReason.TOOL_BUDGET, StopReason.REPEATED_CALL]
    attempt = scope._attempt_locked(refused, signature("refused", {"x": 1}))
    reasons = [(r := rule(attempt)) and r.reason for rule in GUARD_RULES]
    assert reasons == [StopReason.PERMISSION_DENIED, StopReason.TOOL_BUDGET, None]


def test_permission_is_checked_before_the_budget() -> None:
    scope = _scope(tool_calls=1)
    scope.tool("granted", GRANTED, Probe().body).invoke({"x": 1})
    body = Probe()
    refused = scope.tool("refused", NOT_GRANTED, body.body)
    assert _halt(refused.invoke, {"x": 2}) is StopReason.PERMISSION_DENIED
    assert body.entries == 0
    assert triples(scope.events)[-1] == ("PermissionDenied", "refused", 1)


def test_budget_is_checked_before_repetition() -> None:
    scope = _scope(tool_calls=1, repetitions=1)
    body = Probe()
    tool = scope.tool("granted", GRANTED, body.body)
    tool.invoke({"x": 1})
    assert _halt(tool.invoke, {"x": 1}) is StopReason.TOOL_BUDGET
    assert body.entries == 1
    assert triples(scope.events) == [("ToolCall", "granted", 1), ("ToolBudget", "granted", 1)]


def test_repetition_refuses_a_seen_signature() -> None:
    scope = _scope(tool_calls=4, repetitions=2)
    body = Probe()
    tool = scope.tool("granted", GRANTED, body.body)
    tool.invoke({"x": 1})
    tool.invoke({"x": 2})
    tool.invoke({"x": 1})
    assert _halt(tool.invoke, {"x": 1}) is StopReason.REPEATED_CALL
    assert body.entries == 3
    assert triples(scope.events)[-1] == ("RepeatedCall", "granted", 2)
    assert scope.usage.repetitions == 2


def test_cancellation_is_checked_first() -> None:
    clock = FakeClock()
    scope = _scope(clock, tool_calls=1, deadline_s=10.0)
    scope.tool("granted", GRANTED, Probe().body).invoke({"x": 1})  # starts the scope at t=0, budget used up
    refused = scope.tool("refused", NOT_GRANTED, Probe().body)
    clock.advance(10.0)
    # permission and budget would both refuse; the deadline is checked before them
    assert _halt(refused.invoke, {"x": 1}) is StopReason.DEADLINE_EXCEEDED
    assert triples(scope.events) == [("ToolCall", "granted", 1), ("DeadlineExceeded", "run", 1)]


# -- reservation, first stop wins, nothing after a stop ------------------------------


def test_reservation_stands_when_the_body_raises() -> None:
    scope = _scope(tool_calls=2, repetitions=1)
    body = Probe(fail=True)
    tool = scope.tool("flaky", GRANTED, body.body)
    with pytest.raises(ValueError, match="the body failed"):
        tool.invoke({"x": 1})
    assert scope.usage.tool_calls == 1
    assert scope.stop_reason is None
    assert _halt(tool.invoke, {"x": 1}) is StopReason.REPEATED_CALL  # the failed attempt counted
    assert body.entries == 1


def test_failed_bodies_use_the_tool_budget() -> None:
    scope = _scope(tool_calls=2, repetitions=5)
    body = Probe(fail=True)
    tool = scope.tool("flaky", GRANTED, body.body)
    for x in (1, 2):
        with pytest.raises(ValueError):
            tool.invoke({"x": x})
    assert _halt(tool.invoke, {"x": 3}) is StopReason.TOOL_BUDGET
    assert body.entries == 2


def _permission_halt(scope: ExecutionScope) -> None:
    scope.tool("refused", NOT_GRANTED, Probe().body).invoke({"x": 9})


def _repetition_halt(scope: ExecutionScope) -> None:
    tool = scope.tool("granted", GRANTED, Probe().body)
    tool.invoke({"x": 1})
    tool.invoke({"x": 1})


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        (_permission_halt, _repetition_halt, StopReason.PERMISSION_DENIED),
        (_repetition_halt, _permission_halt, StopReason.REPEATED_CALL),
    ],
    ids=["permission-then-repetition", "repetition-then-permission"],
)
def test_first_stop_reason_wins(first, second, expected: StopReason) -> None:
    scope = _scope(repetitions=1)
    with pytest.raises(RunHalted):
        first(scope)
    stopped = scope.events
    with pytest.raises(RunHalted) as info:
        second(scope)
    assert info.value.reason is expected
    assert scope.stop_reason is expected
    assert scope.events == stopped
    assert [e.kind for e in scope.events if e.kind in set(StopReason)] == [expected]


def test_model_budget_then_tool_halt_keeps_model_budget() -> None:
    scope = _scope(model_calls=0)
    with pytest.raises(RunHalted):
        scope.before_model_call()
    assert _halt(scope.tool("refused", NOT_GRANTED, Probe().body).invoke, {"x": 1}) is StopReason.MODEL_BUDGET
    assert triples(scope.events) == [("ModelBudget", "model", 0)]


def test_no_event_is_appended_after_a_stop() -> None:
    scope = _scope()
    body = Probe()
    granted = scope.tool("granted", GRANTED, body.body)
    with pytest.raises(RunHalted):
        scope.tool("refused", NOT_GRANTED, Probe().body).invoke({"x": 1})
    stopped = scope.events
    for attempt in (
        lambda: granted.invoke({"x": 2}),
        scope.before_model_call,
        lambda: scope.observe_middleware("granted"),
        scope.check_cancellation,
    ):
        with pytest.raises(RunHalted):
            attempt()
    assert scope.events == stopped
    assert body.entries == 0
    assert scope.usage.tool_calls == 0


# -- binding ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments",
    ['{"x": "abc"}', "{x: 1", "[1]", '{"x": 1, "y": 2}', "{}", '{"x": true}', '{"x": 1.5}', 42],
    ids=["wrong-type", "not-json", "not-object", "extra", "missing", "bool", "fraction", "not-text"],
)
def test_binding_failure_counts_nothing_and_skips_the_body(arguments: object) -> None:
    scope = _scope(repetitions=1)
    body = Probe()
    tool = scope.tool("granted", GRANTED, body.body)
    with pytest.raises(ToolArgumentsError) as info:
        tool.invoke(arguments)  # type: ignore[arg-type]
    assert info.value.tool == "granted"
    assert body.entries == 0
    assert scope.events == ()
    assert scope.usage.tool_calls == 0
    assert tool.invoke({"x": 1}) == 1  # nothing was reserved: the first real attempt is admitted


def test_binding_happens_before_the_guard() -> None:
    scope = _scope()
    refused = scope.tool("refused", NOT_GRANTED, Probe().body)
    with pytest.raises(ToolArgumentsError):
        refused.invoke('{"x": "abc"}')
    assert scope.stop_reason is None
    assert scope.events == ()


# -- direct invocation ---------------------------------------------------------------


def test_direct_sync_invocation_goes_through_the_guard() -> None:
    scope = _scope()
    body = Probe()
    refused = scope.tool("refused", NOT_GRANTED, body.body)
    assert _halt(refused.invoke, {"x": 1}) is StopReason.PERMISSION_DENIED
    assert body.entries == 0


@asynctest
async def test_direct_async_invocation_goes_through_the_guard() -> None:
    scope = _scope(repetitions=1)
    entries: list[int] = []

    async def body(x: int) -> int:
        entries.append(x)
        return x

    tool = scope.tool("granted", GRANTED, body)
    assert await tool.ainvoke({"x": 1}) == 1
    with pytest.raises(RunHalted) as info:
        await tool.ainvoke('{"x": 1}')
    assert info.value.reason is StopReason.REPEATED_CALL
    assert entries == [1]
    assert triples(scope.events) == [("ToolCall", "granted", 1), ("RepeatedCall", "granted", 1)]


@asynctest
async def test_sync_invoke_works_inside_a_running_loop() -> None:
    scope = _scope()
    body = Probe()
    tool = scope.tool("granted", GRANTED, body.body)
    assert tool.invoke({"x": 5}) == 5  # e.g. a notebook cell calling the tool directly
    assert body.entries == 1
    assert triples(scope.events) == [("ToolCall", "granted", 1)]


def test_sync_invoke_of_an_async_body() -> None:
    scope = _scope()

    async def body(x: int) -> int:
        await asyncio.sleep(0)
        return x * 2

    assert scope.tool("granted", GRANTED, body).invoke({"x": 4}) == 8


def test_32_threads_admit_exactly_the_tool_budget() -> None:
    limit, threads = 10, 32
    scope = _scope(tool_calls=limit, repetitions=100)
    body = Probe()
    tool = scope.tool("granted", GRANTED, body.body)
    start = threading.Barrier(threads)
    results: list[object] = [None] * threads

    def worker(i: int) -> None:
        start.wait()
        try:
            results[i] = tool.invoke({"x": i})
        except RunHalted as halt:
            results[i] = halt

    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()

    halted = [r for r in results if isinstance(r, RunHalted)]
    returned = [r for r in results if not isinstance(r, RunHalted)]
    assert body.entries == limit
    assert len(halted) + len(returned) == threads
    assert len(halted) >= threads - limit
    assert {h.reason for h in halted} == {StopReason.TOOL_BUDGET}
    kinds = [(k, c) for k, _, c in triples(scope.events)]
    assert kinds == [("ToolCall", n) for n in range(1, limit + 1)] + [("ToolBudget", limit)]
    assert scope.usage.tool_calls == limit


# -- deadline -------------------------------------------------------------------------


def test_deadline_with_an_injected_clock_stops_at_the_guard() -> None:
    clock = FakeClock(100.0)
    scope = _scope(clock, deadline_s=5.0)
    body = Probe()
    tool = scope.tool("granted", GRANTED, body.body)
    tool.invoke({"x": 1})  # starts the run at t=100
    clock.advance(4.999)
    assert scope.remaining_s() == pytest.approx(0.001)
    tool.invoke({"x": 2})
    clock.advance(0.001)
    assert _halt(tool.invoke, {"x": 3}) is StopReason.DEADLINE_EXCEEDED
    assert body.entries == 2
    assert triples(scope.events)[-1] == ("DeadlineExceeded", "run", 2)
    assert scope.cancel_token.cancelled


@asynctest
async def test_deadline_with_an_injected_clock_stops_before_a_model_call() -> None:
    clock = FakeClock()
    scope = _scope(clock, deadline_s=5.0)
    transport = ScriptedTransport(["one", "two"])
    client = CountingClient(transport, scope)
    assert (await client.complete(REQUEST)).text == "one"
    clock.advance(5.0)
    with pytest.raises(RunHalted) as info:
        await client.complete(REQUEST)
    assert info.value.reason is StopReason.DEADLINE_EXCEEDED
    assert transport.calls == 1
    assert triples(scope.events) == [("ModelCall", "model", 1), ("DeadlineExceeded", "run", 0)]


# -- registration and lifecycle ------------------------------------------------------


def test_duplicate_tool_name_is_refused() -> None:
    scope = _scope()
    first = scope.tool("lookup", GRANTED, Probe().body)
    with pytest.raises(DuplicateToolError, match="lookup"):
        scope.tool("lookup", NOT_GRANTED, Probe().body)
    assert scope.tools == (first,)


@asynctest
async def test_a_finished_scope_refuses_everything() -> None:
    scope = _scope()
    body = Probe()
    tool = scope.tool("granted", GRANTED, body.body)
    agent = SimpleAgent(CountingClient(ScriptedTransport(["done"]), scope), [tool], instructions="test")
    outcome = await run_agent(agent, "go", is_complete=lambda: False)
    assert outcome.status is RunStatus.INCOMPLETE
    for attempt in (
        lambda: tool.invoke({"x": 1}),
        scope.before_model_call,
        scope.check_cancellation,
        lambda: scope.observe_middleware("granted"),
    ):
        with pytest.raises(ScopeStateError):
            attempt()
    assert body.entries == 0
    assert scope.events == outcome.events


# -- zero limits ----------------------------------------------------------------------


def test_zero_tool_calls_admits_no_body() -> None:
    scope = _scope(tool_calls=0)
    body = Probe()
    assert _halt(scope.tool("granted", GRANTED, body.body).invoke, {"x": 1}) is StopReason.TOOL_BUDGET
    assert body.entries == 0
    assert triples(scope.events) == [("ToolBudget", "granted", 0)]


def test_zero_repetitions_admits_no_body() -> None:
    scope = _scope(repetitions=0)
    body = Probe()
    assert _halt(scope.tool("granted", GRANTED, body.body).invoke, {"x": 1}) is StopReason.REPEATED_CALL
    assert body.entries == 0


@asynctest
async def test_zero_model_calls_never_reaches_the_transport() -> None:
    scope = _scope(model_calls=0)
    transport = ScriptedTransport(["never"])
    with pytest.raises(RunHalted) as info:
        await CountingClient(transport, scope).complete(REQUEST)
    assert info.value.reason is StopReason.MODEL_BUDGET
    assert transport.calls == 0
    assert triples(scope.events) == [("ModelBudget", "model", 0)]


def test_zero_deadline_admits_nothing() -> None:
    scope = _scope(deadline_s=0.0)
    body = Probe()
    assert _halt(scope.tool("granted", GRANTED, body.body).invoke, {"x": 1}) is StopReason.DEADLINE_EXCEEDED
    assert body.entries == 0


# -- bodies and cancellation -----------------------------------------------------------


@asynctest
async def test_a_blocking_sync_body_does_not_hold_the_run() -> None:
    release = threading.Event()
    finished = threading.Event()

    def slow(x: int) -> str:
        release.wait(10)
        finished.set()
        return "LATE RESULT"

    scope = ExecutionScope(Limits(deadline_s=0.05), {GRANTED})
    tool = scope.tool("slow", GRANTED, slow)
    transport = ScriptedTransport([Call("slow", {"x": 1}, id="c1"), "done"])
    agent = SimpleAgent(CountingClient(transport, scope), [tool], instructions="test")
    try:
        outcome = await run_agent(agent, "go", is_complete=lambda: True)
    finally:
        release.set()
    assert outcome.status is RunStatus.DEADLINE_EXCEEDED
    assert outcome.text is None
    assert triples(outcome.events) == [
        ("ModelCall", "model", 1),
        ("Middleware", "slow", 1),
        ("ToolCall", "slow", 1),
        ("DeadlineExceeded", "run", 1),
    ]
    results = tool_results(outcome.transcript)
    assert list(results) == ["c1"]
    assert results["c1"][0].startswith("cancelled")
    assert all("LATE RESULT" not in (m.text or "") for m in outcome.transcript)
    assert transport.calls == 1
    assert finished.wait(10)  # the abandoned body ran to its end...
    assert scope.events == outcome.events  # ...and its late result changed nothing


def test_a_body_sees_cancellation_through_its_token() -> None:
    seen: list[bool] = []
    entered = threading.Event()

    def watcher(x: int, token: CancelToken) -> str:
        seen.append(token.cancelled)
        entered.set()
        seen.append(token.wait(10))
        seen.append(token.cancelled)
        return "watched"

    scope = _scope()
    tool = scope.tool("watcher", GRANTED, watcher)
    assert "token" not in tool.json_schema().get("properties", {})
    errors: list[BaseException] = []

    def call() -> None:
        try:
            tool.invoke({"x": 1})
        except RunHalted as halt:
            errors.append(halt)

    thread = threading.Thread(target=call)
    thread.start()
    assert entered.wait(10)
    with pytest.raises(RunHalted):
        scope.tool("refused", NOT_GRANTED, Probe().body).invoke({"x": 1})
    thread.join(10)
    assert seen == [False, True, True]
    assert [e.reason for e in errors] == [StopReason.PERMISSION_DENIED]  # re-checked after the body


def test_repr_shows_state_and_counters() -> None:
    scope = _scope(tool_calls=3)
    scope.tool("granted", GRANTED, Probe().body).invoke({"x": 1})
    text = repr(scope)
    assert "running" in text
    assert "tool_calls=1/3" in text


def test_a_rule_added_to_guard_rules_is_asked_on_every_call(monkeypatch) -> None:
    import labkit.core.rules as rules

    def closed_on_mondays(attempt):
        return Refusal(labkit.StopReason.PERMISSION_DENIED, attempt.tool, 0, "closed")  # rules run under the lock

    monkeypatch.setattr(rules, "GUARD_RULES", (*rules.GUARD_RULES, closed_on_mondays))
    scope = ExecutionScope(Limits(tool_calls=5, repetitions=5), {"ticket.read"})
    entered: list[int] = []

    def read(input: int) -> str:
        entered.append(input)
        return "ok"

    tool = scope.tool("read", "ticket.read", read)
    with pytest.raises(RunHalted) as info:
        tool.invoke({"input": 1})  # every built-in rule admits; the added one refuses
    assert info.value.reason is labkit.StopReason.PERMISSION_DENIED
    assert entered == []
    assert [e.kind for e in scope.events] == ["PermissionDenied"]


# -- step 4's re-check, read without the lock when nothing happened (labkit/core/_machinery/unlocked.py) --


def _body_that(act: object) -> object:
    def body(x: int) -> int:
        act()  # type: ignore[operator]
        return x

    return body


def test_the_recheck_after_a_body_sees_every_way_the_run_can_stop_while_it_ran() -> None:
    """Each stop made *while a body runs* drops its result, though the re-check reads without the lock."""
    from labkit.core._machinery.unlocked import nothing_happened

    clock = FakeClock()
    scope = _scope(clock, deadline_s=10)
    assert not nothing_happened(scope)  # not started: no deadline yet, so the locked check starts the run
    scope.check_cancellation()
    assert scope.usage.elapsed_s == 0.0 and nothing_happened(scope)
    late = scope.tool("late", GRANTED, _body_that(lambda: clock.advance(10)))  # the deadline passes in the body
    with pytest.raises(RunHalted) as info:
        late.invoke({"x": 1})
    assert info.value.reason is StopReason.DEADLINE_EXCEEDED and not info.value.refused
    assert triples(scope.events)[-1] == ("DeadlineExceeded", "run", 1)

    scope = _scope()
    other = scope.tool("other", GRANTED, Probe().body)

    def stop_from_another_thread() -> None:  # a stop recorded elsewhere while this body runs
        thread = threading.Thread(target=lambda: pytest.raises(RunHalted, other.invoke, {"x": 1}))
        with scope._lock:
            scope._record_stop_locked(Refusal(StopReason.TOOL_BUDGET, "other", 1, "stopped"))
        thread.start()
        thread.join()

    stopper = scope.tool("stopper", GRANTED, _body_that(stop_from_another_thread))
    with pytest.raises(RunHalted) as info:
        stopper.invoke({"x": 2})
    assert info.value.reason is StopReason.TOOL_BUDGET and not info.value.refused

    scope = _scope()
    caller = scope.tool("caller", GRANTED, _body_that(lambda: scope._cancel_by_caller()))
    with pytest.raises(asyncio.CancelledError):
        caller.invoke({"x": 3})

    scope = _scope()
    ended = scope.tool("ended", GRANTED, _body_that(lambda: scope._finish()))
    with pytest.raises(ScopeStateError):
        ended.invoke({"x": 4})
    assert not nothing_happened(scope)
