"""Behaviour the performance work must not change (issue 6).

Every optimisation of the hot path (cached schemas, interned events, fewer
tasks, cheaper messages) is checked here against the table of README.md, *The scenarios* and the
guard protocol of docs/guarantees.md, not against timings: speed lives in ``benchmarks/``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
from typing import Any

import pytest
from pydantic import ValidationError

import labkit
from labkit import ControlEvent, EventKind, ExecutionScope, Limits, RunStatus, StopReason

FAST = {"deadline": Limits(deadline_s=0.05)}

from support import SCENARIO_TABLE as TABLE  # noqa: E402  (README.md, *The scenarios*: scenario -> status, ToolCall, ModelCall)


def _run(name: str, agent: str, stream: bool = False) -> labkit.Setup:
    setup = labkit.prepare(name, agent=agent, limits=FAST.get(name), stream=stream)
    setup.outcome = labkit.run(setup)  # type: ignore[attr-defined]
    return setup


def E(kind: EventKind, name: str, count: int) -> ControlEvent:
    return ControlEvent(kind=kind, name=name, count=count)


M, MW, T = EventKind.MODEL_CALL, EventKind.MIDDLEWARE, EventKind.TOOL_CALL


def test_complete_events_in_spec_order_for_both_agents_and_both_call_styles() -> None:
    expected = (
        E(M, "model", 1),
        E(MW, "read_ticket", 1),
        E(T, "read_ticket", 1),
        E(M, "model", 2),
        E(MW, "finish_review", 2),
        E(T, "finish_review", 2),
        E(M, "model", 3),
    )
    for agent in ("simple", "harness"):
        for stream in (False, True):
            setup = _run("complete", agent, stream)
            outcome = setup.outcome  # type: ignore[attr-defined]
            assert outcome.events == expected
            assert outcome.status is RunStatus.COMPLETED
            assert outcome.text == "Review finished."
            assert setup.task.entries == {"read_ticket": 1, "finish_review": 1}
            assert setup.transport.calls == 3
            assert tuple(outcome.usage)[:3] == (3, 2, 1)


@pytest.mark.parametrize("agent", ["simple", "harness"])
@pytest.mark.parametrize("name", list(TABLE))
def test_every_scenario_matches_the_spec_table(name: str, agent: str) -> None:
    status, tool_calls, model_calls = TABLE[name]
    outcome = _run(name, agent).outcome  # type: ignore[attr-defined]
    assert outcome.status is status
    assert outcome.count("ToolCall") == tool_calls
    assert outcome.count("ModelCall") == model_calls
    assert (outcome.text is None) == status.is_stop
    if status.is_stop:
        assert outcome.events[-1].kind == status.value
        assert sum(1 for e in outcome.events if e.kind == status.value) == 1


def test_the_transcript_pairs_every_tool_call_with_one_result() -> None:
    outcome = _run("complete", "harness").outcome  # type: ignore[attr-defined]
    roles = [m.role.value for m in outcome.transcript]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]
    asked = [c.id for m in outcome.transcript for c in m.tool_calls]
    answered = [m.tool_call_id for m in outcome.transcript if m.role == "tool"]
    assert asked == answered and len(set(asked)) == 2
    assert outcome.transcript[0].text == labkit.loops.review.INSTRUCTIONS
    assert outcome.transcript[1].text == labkit.loops.review.PROMPT


def test_requests_show_each_model_call_the_transcript_so_far_and_the_tool_schemas() -> None:
    setup = _run("complete", "simple")
    requests = setup.transport.requests
    assert [len(r.messages) for r in requests] == [2, 4, 6]
    for request in requests:
        assert [t.name for t in request.tools] == ["read_ticket", "finish_review"]
        for spec, tool in zip(request.tools, setup.agent.tools, strict=True):
            assert spec.parameters == tool.arguments_model.model_json_schema()
            assert spec.parameters["properties"]["input"]["type"] == "integer"


def test_json_schema_is_a_fresh_dict_each_time() -> None:
    scope = ExecutionScope()
    task = labkit.ReviewTask()
    tool = task.tools(scope)[0]
    first = tool.json_schema()
    first["properties"]["input"]["type"] = "string"
    first["mutated"] = True
    second = tool.json_schema()
    assert second == tool.arguments_model.model_json_schema()
    assert "mutated" not in second and second["properties"]["input"]["type"] == "integer"


def test_two_runs_share_no_state() -> None:
    first = _run("complete", "harness").outcome  # type: ignore[attr-defined]
    second = _run("complete", "harness").outcome  # type: ignore[attr-defined]
    assert first.events == second.events
    assert first.status is second.status is RunStatus.COMPLETED


async def _many_runs(n: int) -> list[labkit.Setup]:
    setups = [labkit.prepare("complete", agent="simple" if i % 2 else "harness") for i in range(n)]
    outcomes = await asyncio.gather(*(s.arun() for s in setups))
    for setup, outcome in zip(setups, outcomes, strict=True):
        setup.outcome = outcome  # type: ignore[attr-defined]
    return setups


def test_concurrent_runs_in_one_loop_keep_exact_per_run_counts() -> None:
    setups = asyncio.run(_many_runs(200))
    for setup in setups:
        outcome = setup.outcome  # type: ignore[attr-defined]
        assert outcome.status is RunStatus.COMPLETED
        assert (outcome.count("ModelCall"), outcome.count("ToolCall")) == (3, 2)
        assert setup.task.entries == {"read_ticket": 1, "finish_review": 1}


def test_one_scope_hammered_by_threads_admits_exactly_the_budget() -> None:
    entered = 0
    lock = threading.Lock()

    def body(input: int) -> int:
        nonlocal entered
        with lock:
            entered += 1
        return input

    limit = 50
    scope = ExecutionScope(Limits(tool_calls=limit, repetitions=1000), {"x"})
    tool = scope.tool("echo", "x", body)
    results: list[str] = []

    def worker(i: int) -> None:
        for j in range(10):
            try:
                tool.invoke({"input": i * 100 + j})
                results.append("ok")
            except labkit.RunHalted as halt:
                results.append(halt.reason.value)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count("ok") == limit == entered
    assert scope.stop_reason is StopReason.TOOL_BUDGET
    events = scope.events
    assert [e.count for e in events if e.kind == "ToolCall"] == list(range(1, limit + 1))
    assert sum(1 for e in events if e.kind == "ToolBudget") == 1


def test_events_stay_frozen_and_serialise_as_before() -> None:
    outcome = _run("repeat", "harness").outcome  # type: ignore[attr-defined]
    dumped = [e.model_dump(mode="json") for e in outcome.events]
    assert dumped[-1] == {"kind": "RepeatedCall", "name": "read_ticket", "count": 1}
    with pytest.raises(ValidationError):  # a frozen model
        outcome.events[0].count = 99  # type: ignore[misc]
    assert json.loads(outcome.model_dump_json())["status"] == "RepeatedCall"


def test_a_sync_body_that_ignores_the_deadline_does_not_hold_the_run() -> None:
    release = threading.Event()

    def stubborn(input: int) -> str:
        release.wait(5)
        return "late"

    scope = ExecutionScope(Limits(deadline_s=0.05), {"x"})
    tool = scope.tool("slow", "x", stubborn)
    transport = labkit.ScriptedTransport([labkit.Call("slow", {"input": 1}), "done"])
    agent = labkit.SimpleAgent(labkit.CountingClient(transport, scope), [tool], instructions="go")
    try:
        outcome = labkit.run_sync(labkit.run_agent(agent, "go", is_complete=lambda: False))
    finally:
        release.set()
    assert outcome.status is RunStatus.DEADLINE_EXCEEDED
    assert outcome.count("ToolCall") == 1


def test_a_finished_run_is_not_kept_alive_by_its_cancelled_deadline_timer() -> None:
    import gc
    import weakref

    async def main() -> None:
        setup = labkit.prepare("complete")
        scope_ref = weakref.ref(setup.scope)
        outcome = await setup.arun()
        assert outcome.status is RunStatus.COMPLETED
        del setup
        gc.collect()
        # The loop still holds the cancelled timer handle of the run's deadline here.
        assert scope_ref() is None

    asyncio.run(main())


@pytest.mark.parametrize("name", list(labkit.SCENARIOS))
def test_a_finished_run_is_freed_without_the_garbage_collector(name: str) -> None:
    """A finished run is no cycle, so dropping it frees it at once, whatever ended it.

    The scope lets go of its tools when the run ends (a scope and its tools refer to each
    other), and the run lets go of its loop's task (whose exception, after a provider
    failure, holds the run's frame in its traceback).
    """
    import gc
    import weakref

    async def main() -> None:
        setup = labkit.prepare(name)
        assert len(setup.scope.tools) == 2
        outcome = await setup.arun()
        assert setup.scope.tools == ()
        del outcome
        refs = [weakref.ref(setup.scope), weakref.ref(setup.task)]  # the tools' scope, and their bodies' task
        del setup
        assert [ref() for ref in refs] == [None, None]

    enabled = gc.isenabled()
    gc.disable()  # only reference counting frees objects now
    try:
        asyncio.run(main())
    finally:
        if enabled:
            gc.enable()


def test_a_tool_of_a_finished_scope_still_refuses_every_call() -> None:
    def body(n: int) -> int:
        return n

    scope = ExecutionScope(Limits(), {"x"})
    tool = scope.tool("lookup", "x", body)
    assert scope.tools == (tool,)
    scope._finish()
    assert scope.tools == ()  # the run is over: the scope let go of its tools
    with pytest.raises(labkit.ScopeStateError, match="run has ended"):
        tool.invoke({"n": 1})
    assert scope.events == ()


def test_equal_numbers_still_give_one_signature() -> None:
    assert labkit.signature("t", {"input": 42}) == labkit.signature("t", {"input": 42.0})
    assert labkit.signature("t", {"input": 420}) == labkit.signature("t", {"input": 4.2e2})
    assert labkit.signature("t", {"input": True}) != labkit.signature("t", {"input": 1})


# -- the check after the body is lock-free when nothing happened (the re-check after the body, chapter 4) --------------


def test_the_deadline_passing_during_a_body_drops_its_result_and_records_the_stop() -> None:
    from support import FakeClock

    clock = FakeClock(10.0)
    scope = ExecutionScope(Limits(deadline_s=1.0), {"x"}, clock=clock)

    def slow(input: int) -> int:
        clock.advance(1.0)  # the deadline passes while the body runs
        return input

    tool = scope.tool("slow", "x", slow)
    with pytest.raises(labkit.RunHalted) as info:
        tool.invoke({"input": 1})
    assert info.value.reason is StopReason.DEADLINE_EXCEEDED
    assert info.value.refused is False  # admitted and run: not a refusal
    assert [(e.kind, e.count) for e in scope.events] == [(EventKind.TOOL_CALL, 1), (EventKind.DEADLINE_EXCEEDED, 1)]


def test_a_stop_recorded_while_a_body_runs_drops_its_result_and_keeps_the_first_reason() -> None:
    scope = ExecutionScope(Limits(tool_calls=1), {"x"})
    holder: dict[str, labkit.GuardedTool] = {}

    def body(input: int) -> int:
        with pytest.raises(labkit.RunHalted):
            holder["tool"].invoke({"input": input + 1})  # over budget: ToolBudget is recorded meanwhile
        return input

    holder["tool"] = scope.tool("t", "x", body)
    with pytest.raises(labkit.RunHalted) as info:
        holder["tool"].invoke({"input": 1})
    assert info.value.reason is StopReason.TOOL_BUDGET and info.value.refused is False
    assert [e.kind for e in scope.events] == [EventKind.TOOL_CALL, EventKind.TOOL_BUDGET]
    assert scope.stop_reason is StopReason.TOOL_BUDGET


def test_a_body_finishing_after_its_run_ended_is_not_returned() -> None:
    scope = ExecutionScope(Limits(), {"x"})

    def body(input: int) -> int:
        scope._finish()  # the run ends while the body runs
        return input

    tool = scope.tool("t", "x", body)
    with pytest.raises(labkit.ScopeStateError):
        tool.invoke({"input": 1})


# -- the guard writes scalar signatures directly (docs/guarantees.md, *Signatures*): same text as the general path -----


@pytest.mark.parametrize(
    "arguments",
    [
        {"zeta": 1, "Alpha": "a", "alpha": None, "é": True, "b": False},
        {"zeta": -(10**20), "Alpha": 'q " \\ \n é 日本', "alpha": 0, "é": False, "b": None},
        {"zeta": 420, "Alpha": "", "alpha": 2.5, "é": True, "b": [1, 2.0]},
        {"zeta": 10**15, "Alpha": "x", "alpha": {"k": 1}, "é": True, "b": 1e2},
    ],
)
def test_the_guard_signature_equals_the_signature_of_the_dumped_arguments(arguments: dict) -> None:
    def body(zeta: int, Alpha: str, alpha: Any, é: bool, b: Any = None) -> None:  # noqa: N803
        return None

    tool = ExecutionScope(Limits(), {"x"}).tool("t", "x", body)
    bound = tool.bind(arguments)
    key, kwargs = tool._key_and_kwargs(bound)
    assert key == labkit.signature("t", bound.model_dump(mode="json"))
    assert kwargs == bound.__dict__


def test_recorded_events_equal_fresh_ones_at_any_count() -> None:
    from labkit.core._machinery import shared_events

    for kind in (EventKind.TOOL_CALL, EventKind.MIDDLEWARE):
        for count in (1, 2, 10**6):
            event = shared_events.event(kind.value, "read_ticket", count)
            assert event == ControlEvent(kind=kind, name="read_ticket", count=count)
            assert type(event.kind) is EventKind


# -- tool specs are shared between runs, read-only ------------------------------------------


def test_shared_tool_specs_equal_fresh_ones_and_refuse_changes() -> None:
    import copy
    import pickle

    first, second = labkit.prepare("complete"), labkit.prepare("complete")
    specs = first.agent._specs
    assert specs == tuple(labkit.ToolSpec.of(t) for t in second.agent.tools)
    assert [s.model_dump() for s in specs] == [labkit.ToolSpec.of(t).model_dump() for t in second.agent.tools]
    assert json.loads(specs[0].model_dump_json())["parameters"] == second.agent.tools[0].json_schema()
    assert json.loads(json.dumps(specs[0].parameters)) == second.agent.tools[0].json_schema()
    parameters = specs[0].parameters
    assert isinstance(parameters, dict) and isinstance(parameters["required"], list)
    for change in (
        lambda: parameters.__setitem__("type", "array"),
        lambda: parameters.pop("type"),
        lambda: parameters.update(x=1),
        lambda: parameters["properties"].clear(),
        lambda: parameters["required"].append("other"),
    ):
        with pytest.raises(TypeError):
            change()
    assert second.agent._specs[0].parameters == labkit.ToolSpec.of(second.agent.tools[0]).parameters
    mutable = copy.deepcopy(parameters)
    mutable["required"].append("other")
    assert type(mutable) is dict and "other" not in parameters["required"]
    assert pickle.loads(pickle.dumps(specs[0])) == specs[0]
    fresh = labkit.ToolSpec.of(first.agent.tools[0])
    fresh.parameters["type"] = "changed"  # ToolSpec.of still gives the caller its own copy
    assert labkit.ToolSpec.of(first.agent.tools[0]).parameters["type"] == "object"


# -- messages built through the model's validator are validated like the constructor ---------


def test_message_constructors_validate_like_the_model_constructor() -> None:
    from pydantic import ValidationError

    from labkit import Message, Role, ToolCall

    call = ToolCall(id="c", name="t", arguments="{}")
    assert Message.tool_result("c", "ok") == Message(role=Role.TOOL, text="ok", tool_call_id="c")
    assert Message.assistant(None, (call,)) == Message(role=Role.ASSISTANT, tool_calls=(call,))
    assert Message.system("s").model_fields_set == Message(role=Role.SYSTEM, text="s").model_fields_set
    assert type(Message.user("u").role) is Role
    with pytest.raises(ValidationError):
        Message.tool_result(1, "ok")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        Message.assistant("x", ({"id": 1},))  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        Message.user("u").text = "changed"  # type: ignore[misc]  # still frozen


def test_an_outcome_is_a_validated_frozen_run_outcome() -> None:
    outcome = _run("complete", "harness").outcome  # type: ignore[attr-defined]
    assert type(outcome) is labkit.RunOutcome
    assert outcome.model_fields_set == set(labkit.RunOutcome.model_fields)
    assert isinstance(outcome.usage, labkit.Usage) and isinstance(outcome.transcript, tuple)
    with pytest.raises(ValidationError):  # a frozen model
        outcome.text = "x"  # type: ignore[misc]


# -- the cancel token makes its Event only when a body waits on it --------------------------


def test_a_token_waited_on_from_many_threads_wakes_every_waiter_once_set() -> None:
    token = labkit.CancelToken()
    assert not token.cancelled and token.wait(0) is False
    woke: list[bool] = []
    threads = [threading.Thread(target=lambda: woke.append(token.wait(5))) for _ in range(8)]
    for thread in threads:
        thread.start()
    token._set()
    for thread in threads:
        thread.join(5)
    assert woke == [True] * 8
    late = labkit.CancelToken()
    late._set()  # set before anyone waited: the first wait returns at once
    assert late.cancelled and late.wait(5) is True
    with pytest.raises(asyncio.CancelledError):
        late.raise_if_cancelled()


# -- the live transport and the prediction helpers load on first use -------------------------


def test_live_and_predict_names_load_on_first_use_and_stay_importable() -> None:
    import subprocess
    import sys

    code = (
        "import sys, labkit, labkit.cli\n"
        "before = sorted(m for m in ('labkit.transports.live', 'labkit.teaching.predict') if m in sys.modules)\n"
        "from labkit import LiveProfile, check\n"
        "from labkit.transports.live import LiveProfile as Direct\n"
        "assert LiveProfile is Direct and labkit.LiveTransport.__name__ == 'LiveTransport'\n"
        "assert labkit.Checks is __import__('labkit.teaching.predict').teaching.predict.Checks\n"
        "assert set(labkit.__all__) <= set(dir(labkit))\n"
        "print(before)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
    with pytest.raises(AttributeError):
        labkit.no_such_name  # type: ignore[attr-defined]  # noqa: B018


# -- the guard asks GUARD_RULES in order; the first refusal decides (docs/guarantees.md, *Limits are exact*) -----------


def _echo(input: int) -> int:
    return input


@pytest.mark.parametrize("granted", [True, False])
@pytest.mark.parametrize("budget_left", [True, False])
@pytest.mark.parametrize("new_signature", [True, False])
def test_the_guard_refuses_with_the_first_rule_that_refuses(
    granted: bool, budget_left: bool, new_signature: bool
) -> None:
    from labkit.core.rules import GUARD_RULES

    scope = ExecutionScope(Limits(tool_calls=2 if budget_left else 1, repetitions=1), {"ok"})
    tool = scope.tool("t", "ok" if granted else "missing", _echo)
    key = tool._key_and_kwargs(tool.bind({"input": 1}))[0]
    scope._check_locked()  # start the scope
    scope._tool_calls = 1  # one attempt admitted before (hand-built state, as the rule tests do)
    if not new_signature:
        scope._signatures[key] = 1
    attempt = scope._attempt_locked(tool, key)
    expected = next((stop.reason for rule in GUARD_RULES if (stop := rule(attempt))), None)
    if expected is None:
        assert tool.invoke({"input": 1}) == 1
        assert scope.events[-1] == ControlEvent(kind=EventKind.TOOL_CALL, name="t", count=2)
    else:
        with pytest.raises(labkit.RunHalted) as info:
            tool.invoke({"input": 1})
        assert info.value.reason is expected and scope.stop_reason is expected
        assert scope.usage.tool_calls == 1  # nothing reserved for a refused call


def test_a_call_encodes_its_arguments_once_and_stays_an_equal_value() -> None:
    from labkit import Call

    call = Call("read_ticket", {"input": 42, "note": "é"})
    assert call.text() == json.dumps({"input": 42, "note": "é"})
    assert call.text() is call.text()
    assert call == Call("read_ticket", {"input": 42, "note": "é"})  # the kept text is not compared
    assert "_text" not in repr(call)
    with pytest.raises(dataclasses.FrozenInstanceError):
        call.name = "other"  # type: ignore[misc]  # still frozen
    with pytest.raises(TypeError):
        Call("t", {"x": {1, 2}}).text()  # not JSON: still refused when the model would send it


def test_an_outcome_has_the_scope_events_and_usage_at_the_end() -> None:
    setup = labkit.prepare("changing", agent="simple")
    outcome = labkit.run(setup)
    assert outcome.events == setup.scope.events
    assert tuple(outcome.usage)[:3] == tuple(setup.scope.usage)[:3] == (5, 4, 1)


# -- events are recorded as plain records and read as ControlEvents ------------------------------


def test_events_read_twice_are_the_same_objects_in_the_same_order() -> None:
    scope = ExecutionScope(Limits(tool_calls=100, repetitions=100), {"x"})
    tool = scope.tool("t", "x", _echo)
    for i in range(80):  # past the interned counts
        tool.invoke({"input": i})
        scope.observe_middleware("t")
    first = scope.events
    tool.invoke({"input": 1})
    second = scope.events
    assert second[: len(first)] == first and all(a is b for a, b in zip(first, second, strict=False))
    assert [e.count for e in second if e.kind is EventKind.TOOL_CALL] == list(range(1, 82))
    assert all(type(e) is ControlEvent and type(e.kind) is EventKind for e in second)
    assert second[-1] == ControlEvent(kind=EventKind.TOOL_CALL, name="t", count=81)


def test_a_name_that_is_not_text_is_refused_before_anything_is_counted() -> None:
    scope = ExecutionScope(Limits(), {"x"})
    with pytest.raises(TypeError):
        scope.tool(42, "x", _echo)  # type: ignore[arg-type]
    with pytest.raises(labkit.UserError, match="names a tool by its name"):
        scope.observe_middleware(42)  # type: ignore[arg-type]
    assert scope.events == () and scope.tools == ()


# -- memory after N runs is flat in N (issue 11) ---------------------------------------------------


@pytest.mark.slow
def test_retained_memory_after_10000_runs_with_per_run_closure_bodies_is_flat() -> None:
    """No module-level cache keyed by a body keeps a finished run alive, and no timer piles up.

    Each run makes its tools from closures over 16 KB of per-run state, as a
    notebook or a server building a fresh task per request does. Memory still
    allocated after 10,000 runs (tracemalloc, started after a few warm-up
    runs, read after a collection) must stay under 1 MB: a cache keeping even
    the last 64 runs' closures would hold more, so the bound (independent of
    N) is met only if finished runs are freed.
    """
    import gc
    import tracemalloc

    async def one_run(i: int) -> None:
        state = bytearray(16384)  # what the run's bodies capture

        async def read(input: int) -> str:
            state[0] = input % 256
            return "read"

        def finish(input: int) -> str:
            return f"finished {len(state)}"

        scope = ExecutionScope(Limits(tool_calls=4, repetitions=1), {"r", "f"})
        tools = [scope.tool("read", "r", read), scope.tool("finish", "f", finish)]
        script = [labkit.Call("read", {"input": i}), labkit.Call("finish", {"input": i}), "done"]
        agent = labkit.SimpleAgent(
            labkit.CountingClient(labkit.ScriptedTransport(script), scope), tools, instructions="go"
        )
        outcome = await labkit.run_agent(agent, "go", is_complete=lambda: True)
        assert outcome.status is RunStatus.COMPLETED

    async def runs(start: int, stop: int) -> None:
        for i in range(start, stop):
            await one_run(i)  # back to back in one loop

    async def measure() -> tuple[int, int]:
        await runs(0, 10)  # module-level caches (argument models, specs, messages) fill once
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            await runs(10, 10_010)
            gc.collect()
            return before, tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()

    before, after = asyncio.run(measure())
    assert after - before < 1_000_000, (before, after)
