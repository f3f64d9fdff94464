"""Replay pack 1: twelve loop-bounding faults, each replayed through the real loop and guard.

Each test asserts the status, the body entries (counted in the bodies), the
calls that reached the transport and the whole ordered event list.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time

import pytest
from reliability_kit import CAP, TestProbe, build, ev, go, requested_ids, results, tool_round

from labkit import (
    Call,
    ChatRequest,
    CountingClient,
    ExecutionScope,
    Limits,
    Message,
    RunHalted,
    RunStatus,
    Say,
    ScriptedTransport,
    StopReason,
)
from labkit.cli import main as console


def _parallel_round(tool: str, admitted: int, refused_at: int, halt: str, count: int) -> list:
    """Events of one response whose calls start in order: ``admitted`` pass, call ``refused_at`` halts."""
    events = [ev("ModelCall", "model", 1)]
    for k in range(1, admitted + 1):
        events += [ev("Middleware", tool, k), ev("ToolCall", tool, k)]
    return events + [ev("Middleware", tool, refused_at), ev(halt, tool, count)]


# P1-01 Parallel overshoot ------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(50))
def test_p1_01_parallel_overshoot(seed: int) -> None:
    probe = TestProbe(random.Random(seed), max_delay_s=0.002)
    batch = [Call("probe", {"n": i}, id=str(i)) for i in range(1, 9)]
    agent, transport, scope = build([batch], {"probe": probe.probe}, limits=Limits(tool_calls=6), concurrent=True)

    outcome = asyncio.run(go(agent))

    assert outcome.status is RunStatus.TOOL_BUDGET
    assert sorted(probe.entries) == [1, 2, 3, 4, 5, 6]  # exactly 6 bodies started, never 7
    assert transport.calls == 1
    assert scope.usage.tool_calls == 6
    assert outcome.events == tuple(_parallel_round("probe", 6, 7, "ToolBudget", 6))
    assert outcome.count("ToolBudget") == 1
    by_id = results(outcome)
    assert sorted(by_id, key=int) == [str(i) for i in range(1, 9)]
    assert all(len(texts) == 1 for texts in by_id.values())
    refused = [i for i, (text,) in by_id.items() if text.startswith("refused: ToolBudget")]
    assert sorted(refused) == ["7", "8"]
    assert not set(map(int, refused)) & set(probe.entries)


# P1-02 Orphaned call ids -------------------------------------------------------------------


def test_p1_02_orphaned_call_ids() -> None:
    probe = TestProbe()
    batch = [Call("probe", {"n": i}, id=f"c{i}") for i in (1, 2, 3)]
    agent, transport, scope = build([batch], {"probe": probe.probe}, limits=Limits(tool_calls=1))

    outcome = asyncio.run(go(agent))

    assert outcome.status is RunStatus.TOOL_BUDGET
    assert probe.entries == [1]
    assert transport.calls == 1
    assert outcome.events == tuple(_parallel_round("probe", 1, 2, "ToolBudget", 1))
    by_id = results(outcome)
    assert requested_ids(outcome.transcript) == ["c1", "c2", "c3"]
    assert {k: len(v) for k, v in by_id.items()} == {"c1": 1, "c2": 1, "c3": 1}
    assert by_id["c1"] == ["probe 1 done"]
    for call_id in ("c2", "c3"):
        assert by_id[call_id][0].startswith("refused: ToolBudget")
    assert scope.usage.tool_calls == 1  # refused calls consumed nothing
    assert scope.usage.repetitions == 1


# P1-03 Failed bodies count ------------------------------------------------------------------


def test_p1_03_failed_bodies_count() -> None:
    probe = TestProbe(fail=True)
    agent, transport, _ = build(
        lambda n, request: Call("probe", {"n": n}), {"probe": probe.probe}, limits=Limits(tool_calls=3)
    )

    outcome = asyncio.run(go(agent))

    assert outcome.status is RunStatus.TOOL_BUDGET
    assert probe.entries == [1, 2, 3]
    assert transport.calls == 4
    expected = [e for k in (1, 2, 3) for e in tool_round("probe", k)]
    expected += [ev("ModelCall", "model", 4), ev("Middleware", "probe", 4), ev("ToolBudget", "probe", 3)]
    assert list(outcome.events) == expected
    texts = [t for (t,) in results(outcome).values()]
    assert [t.split(":")[0] for t in texts] == ["error", "error", "error", "refused"]
    assert "RuntimeError" in texts[0]


# P1-04 Exact model budget -------------------------------------------------------------------


@pytest.mark.parametrize("budget", [3, 1, 0])
def test_p1_04_exact_model_budget(budget: int) -> None:
    probe = TestProbe()
    agent, transport, _ = build(
        lambda n, request: Call("probe", {"n": n}), {"probe": probe.probe}, limits=Limits(model_calls=budget)
    )

    outcome = asyncio.run(go(agent))

    assert outcome.status is RunStatus.MODEL_BUDGET
    assert transport.calls == budget  # the refused call never reached the transport
    assert probe.entries == list(range(1, budget + 1))
    expected = [e for k in range(1, budget + 1) for e in tool_round("probe", k)]
    assert list(outcome.events) == [*expected, ev("ModelBudget", "model", budget)]


# P1-05 Zero is zero ------------------------------------------------------------------------

_ZERO_CASES = {
    "model_calls": ([ev("ModelBudget", "model", 0)], RunStatus.MODEL_BUDGET, 0),
    "tool_calls": (
        [ev("ModelCall", "model", 1), ev("Middleware", "probe", 1), ev("ToolBudget", "probe", 0)],
        RunStatus.TOOL_BUDGET,
        1,
    ),
    "repetitions": (
        [ev("ModelCall", "model", 1), ev("Middleware", "probe", 1), ev("RepeatedCall", "probe", 0)],
        RunStatus.REPEATED_CALL,
        1,
    ),
    "deadline_s": ([ev("DeadlineExceeded", "run", 0)], RunStatus.DEADLINE_EXCEEDED, 0),
}


@pytest.mark.parametrize("field", list(_ZERO_CASES))
def test_p1_05_zero_is_zero(field: str) -> None:
    events, status, transport_calls = _ZERO_CASES[field]
    probe = TestProbe()
    agent, transport, _ = build(
        [Call("probe", {"n": 1}), "done"], {"probe": probe.probe}, limits=Limits().with_(**{field: 0})
    )

    outcome = asyncio.run(go(agent))

    assert outcome.status is status
    assert probe.entries == []  # nothing admitted, nothing entered
    assert transport.calls == transport_calls
    assert list(outcome.events) == events


def test_p1_05_all_limits_zero_admit_nothing() -> None:
    probe = TestProbe()
    agent, transport, _ = build(
        [Call("probe", {"n": 1})],
        {"probe": probe.probe},
        limits=Limits(model_calls=0, tool_calls=0, repetitions=0, deadline_s=0),
    )
    outcome = asyncio.run(go(agent))
    assert outcome.status.is_stop
    assert transport.calls == 0 and probe.entries == []
    assert len(outcome.events) == 1


# P1-06 Streaming refused before the first chunk ---------------------------------------------


def test_p1_06_streaming_refused_before_first_chunk_in_the_loop() -> None:
    probe = TestProbe()
    script = [Call("probe", {"n": 1}), Call("probe", {"n": 2}), Say("w " * 99 + "w", chunks=100)]
    agent, transport, _ = build(script, {"probe": probe.probe}, limits=Limits(model_calls=2), stream=True)

    outcome = asyncio.run(go(agent))

    assert outcome.status is RunStatus.MODEL_BUDGET
    assert transport.calls == 2
    assert probe.entries == [1, 2]
    expected = [*tool_round("probe", 1), *tool_round("probe", 2), ev("ModelBudget", "model", 2)]
    assert list(outcome.events) == expected
    assert not any(m.text and m.text.startswith("w w") for m in outcome.transcript)


def test_p1_06_streaming_counts_once_and_refuses_before_any_chunk() -> None:
    async def scenario() -> tuple[list[int], int, ScriptedTransport, ExecutionScope]:
        scope = ExecutionScope(Limits(model_calls=2))
        transport = ScriptedTransport([Say("x" * 100, chunks=100)] * 3)
        client = CountingClient(transport, scope)
        request = ChatRequest(messages=(Message.user("hi"),), stream=True)
        seen: list[int] = []
        chunks = 0
        async for _ in client.stream(request):  # an admitted stream of 100 chunks counts once
            chunks += 1
        seen.append(scope.usage.model_calls)
        abandoned = client.stream(request)
        async for _ in abandoned:  # the consumer leaves after one chunk: still one call
            break
        await abandoned.aclose()
        seen.append(scope.usage.model_calls)
        received = 0
        with pytest.raises(RunHalted) as halted:
            async for _ in client.stream(request):
                received += 1
        assert halted.value.reason is StopReason.MODEL_BUDGET
        seen.append(received)
        return seen, chunks, transport, scope

    seen, chunks, transport, scope = asyncio.run(scenario())
    assert chunks == 100
    assert seen == [1, 2, 0]  # counted once per call; the refused call yielded no chunk
    assert transport.calls == 2
    assert [e.kind for e in scope.events] == ["ModelCall", "ModelCall", "ModelBudget"]


# P1-07 Return, don't raise ------------------------------------------------------------------


def test_p1_07_return_dont_raise() -> None:
    probe = TestProbe()
    agent, transport, _ = build(
        lambda n, request: Call("probe", {"n": n}), {"probe": probe.probe}, limits=Limits(model_calls=3)
    )

    outcome = asyncio.run(go(agent))  # returned, not raised

    assert outcome.status is RunStatus.MODEL_BUDGET
    assert outcome.text is None
    assert outcome.exit_code == 2
    assert [t for (t,) in results(outcome).values()] == ["probe 1 done", "probe 2 done", "probe 3 done"]
    expected = [e for k in (1, 2, 3) for e in tool_round("probe", k)]
    assert list(outcome.events) == [*expected, ev("ModelBudget", "model", 3)]
    assert transport.calls == 3


def test_p1_07_console_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    # `changing` asks for a tool with a fresh argument on every call: an always-tool model.
    code = console(["run", "changing", "--model-calls", "3"])
    out = capsys.readouterr().out
    assert code == 2
    assert "status: ModelBudget (exit 2)" in out
    assert out.count("ToolCall") == 3


# P1-08 Deadline beats a blocking body -------------------------------------------------------


def test_p1_08_deadline_beats_a_blocking_body() -> None:
    entered, release, finished = threading.Event(), threading.Event(), threading.Event()

    def blocking(n: int) -> str:  # sync, ignores cancellation (no CancelToken)
        entered.set()
        release.wait(3)
        finished.set()
        return "LATE RESULT"

    async def scenario():
        agent, transport, scope = build(
            [Call("blocking", {"n": 1}, id="b1"), "never asked"],
            {"blocking": blocking},
            limits=Limits(deadline_s=0.1),
        )
        outcome = await go(agent)
        returned_while_blocked = entered.is_set() and not finished.is_set()
        release.set()  # let the abandoned body finish while this loop still runs
        await asyncio.to_thread(finished.wait, 5)
        for _ in range(3):
            await asyncio.sleep(0)  # give a late result every chance to be delivered
        return outcome, returned_while_blocked, transport, scope

    outcome, returned_while_blocked, transport, scope = asyncio.run(scenario())

    assert outcome.status is RunStatus.DEADLINE_EXCEEDED
    assert returned_while_blocked  # the run did not wait for the body
    assert finished.is_set()
    assert transport.calls == 1
    expected = [*tool_round("blocking", 1), ev("DeadlineExceeded", "run", 1)]
    assert list(outcome.events) == expected
    assert list(scope.events) == expected  # nothing appended after the terminal event
    assert scope.usage.tool_calls == 1 and scope.usage.model_calls == 1
    assert results(outcome) == {"b1": ["cancelled: the run stopped before this call finished"]}
    assert all("LATE RESULT" not in (m.text or "") for m in outcome.transcript)


# P1-09 Caller cancel reaches the tool -------------------------------------------------------


def test_p1_09_caller_cancel_reaches_the_tool() -> None:
    seen: list[str] = []

    async def waiting(n: int) -> str:
        seen.append("entered")
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        return "unreachable"

    async def scenario():
        agent, transport, scope = build(
            [Call("waiting", {"n": 1}), "never asked"], {"waiting": waiting}, limits=Limits(deadline_s=30)
        )
        run = asyncio.create_task(go(agent))
        while "entered" not in seen:
            await asyncio.sleep(0)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        return transport, scope

    transport, scope = asyncio.run(scenario())

    assert seen == ["entered", "cancelled"]
    assert transport.calls == 1  # no further model call
    assert list(scope.events) == tool_round("waiting", 1)  # no stop event: not relabelled
    assert scope.stop_reason is None
    assert scope.cancel_token.cancelled


def test_p1_09_caller_cancel_and_deadline_in_the_same_tick_caller_wins() -> None:
    async def scenario():
        caller = asyncio.current_task()  # the task awaiting the run

        async def waiting(n: int) -> str:
            time.sleep(0.08)  # block the loop: the 0.05 s deadline is now due but has not fired
            caller.cancel()  # the caller cancels in the same tick
            await asyncio.sleep(0)  # the loop now delivers both
            return "unreachable"

        agent, transport, scope = build(
            [Call("waiting", {"n": 1}), "never"], {"waiting": waiting}, limits=Limits(deadline_s=0.05)
        )
        with pytest.raises(asyncio.CancelledError):
            await go(agent)
        return transport

    assert asyncio.run(scenario()).calls == 1


# P1-10 Near-duplicates ---------------------------------------------------------------------


def _search_tool(entries: list[str]):
    async def search(q: str) -> str:
        entries.append(q)
        return f"results for {q!r}"

    return search


def test_p1_10_fourth_identical_call_is_refused() -> None:
    entries: list[str] = []
    agent, transport, _ = build(
        [Call("search", {"q": "x"})] * 4, {"search": _search_tool(entries)}, limits=Limits(repetitions=3)
    )

    outcome = asyncio.run(go(agent))

    assert outcome.status is RunStatus.REPEATED_CALL
    assert entries == ["x", "x", "x"]
    assert transport.calls == 4
    expected = [e for k in (1, 2, 3) for e in tool_round("search", k)]
    assert list(outcome.events) == [
        *expected,
        ev("ModelCall", "model", 4),
        ev("Middleware", "search", 4),
        ev("RepeatedCall", "search", 3),
    ]


@pytest.mark.parametrize("near", ["x ", "X"])
def test_p1_10_near_duplicates_are_other_signatures(near: str) -> None:
    entries: list[str] = []
    script = [Call("search", {"q": "x"})] * 3 + [Call("search", {"q": near}), "done"]
    agent, transport, _ = build(script, {"search": _search_tool(entries)}, limits=Limits(repetitions=3))

    outcome = asyncio.run(go(agent))

    # "x" is at its limit, yet the near-duplicate is admitted: it is another signature.
    assert outcome.status is RunStatus.INCOMPLETE
    assert entries == ["x", "x", "x", near]
    assert transport.calls == 5
    expected = [e for k in (1, 2, 3, 4) for e in tool_round("search", k)]
    assert list(outcome.events) == [*expected, ev("ModelCall", "model", 5)]


# P1-11 Reordered and retyped duplicates -----------------------------------------------------

_VARIANTS = ['{"a": 1, "b": 2}', '{"b": 2, "a": 1}', '{"a": 1.0, "b": 2}']


@pytest.mark.parametrize("annotation", ["int", "float", "any"])
@pytest.mark.parametrize("seed", range(12))
def test_p1_11_reordered_and_retyped_duplicates(seed: int, annotation: str) -> None:
    from typing import Any

    rng = random.Random(seed)
    entered: list[tuple[object, object]] = []
    kind = {"int": int, "float": float, "any": Any}[annotation]

    async def f(a, b):  # annotated below with the parametrised type
        entered.append((a, b))
        await asyncio.sleep(rng.uniform(0, 0.002))
        return "ok"

    f.__annotations__ = {"a": kind, "b": kind, "return": str}

    order = rng.sample(_VARIANTS, k=3)
    batch = [Call("f", text, id=f"f{i}") for i, text in enumerate(order, 1)]
    agent, transport, _ = build([batch], {"f": f}, limits=Limits(repetitions=2), concurrent=True)

    outcome = asyncio.run(go(agent))

    assert outcome.status is RunStatus.REPEATED_CALL
    assert len(entered) == 2  # exactly two bodies ran, whatever the order
    assert transport.calls == 1
    assert list(outcome.events) == _parallel_round("f", 2, 3, "RepeatedCall", 2)
    by_id = results(outcome)
    assert by_id["f3"][0].startswith("refused: RepeatedCall")
    assert all(len(v) == 1 for v in by_id.values()) and len(by_id) == 3


# P1-12 Fast runaway ------------------------------------------------------------------------


def test_p1_12_fast_runaway() -> None:
    cities: list[str] = []

    def get_weather(city: str) -> str:
        cities.append(city)
        return "sunny"

    agent, transport, _ = build(
        lambda n, request: Call("get_weather", {"city": "Lyon"}),
        {"get_weather": get_weather},
        limits=Limits(tool_calls=100, repetitions=3),
    )

    outcome = asyncio.run(go(agent))

    assert outcome.status is RunStatus.REPEATED_CALL
    assert cities == ["Lyon"] * 3
    assert transport.calls == 4
    expected = [e for k in (1, 2, 3) for e in tool_round("get_weather", k)]
    expected += [ev("ModelCall", "model", 4), ev("Middleware", "get_weather", 4), ev("RepeatedCall", "get_weather", 3)]
    assert list(outcome.events) == expected  # short: no per-attempt flood after the stop
    assert CAP  # all probes need the one granted capability
