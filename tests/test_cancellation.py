"""Cancellation and deadline races, each order forced deterministically (docs/guarantees.md, *Cancellation*).

Rules under test: the caller wins over a halt or a deadline, in either order;
between a halt and the deadline the first one wins; the run's cancellation
reaches the transport and the bodies; nothing is appended after the terminal
event; caller cancellation surfaces as cancellation (console exit 130).
Races are forced with events and with blocking the loop past a small
deadline, never by asserting durations.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from reliability_kit import CAP, build, ev, go, results, tool_round
from support import sigint_as_in_a_terminal

from labkit import (
    Call,
    CancelToken,
    ChatChunk,
    ChatRequest,
    CountingClient,
    ExecutionScope,
    HarnessAgent,
    Limits,
    RunHalted,
    RunStatus,
    ScriptedTransport,
    SimpleAgent,
    StopReason,
    run_agent,
)

DEADLINE_S = 0.05
PAST_DEADLINE_S = 0.08


class TestWaitingTransport:
    """A transport whose call waits until cancelled, recording what it saw."""

    __test__ = False
    name = "waiting"

    def __init__(self) -> None:
        self.calls = 0
        self.started = asyncio.Event()
        self.cancelled = False

    async def send(self, request: ChatRequest) -> AsyncIterator[ChatChunk]:
        self.calls += 1
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        yield ChatChunk(text="never")


def _agent_for(transport: Any, limits: Limits) -> tuple[SimpleAgent, ExecutionScope]:
    scope = ExecutionScope(limits, {CAP})
    return SimpleAgent(CountingClient(transport, scope), [], instructions="t"), scope


# -- caller vs halt ----------------------------------------------------------------------


@pytest.mark.parametrize("tool_calls", [1, 2], ids=["would-halt", "would-be-admitted"])
def test_after_the_caller_cancels_a_call_from_a_body_s_cleanup_is_refused_and_records_nothing(tool_calls: int) -> None:
    """Caller cancels first; the body's cleanup then calls another tool. Over budget it would halt
    (ToolBudget), within budget it would be admitted: either way it is refused with the caller's
    cancellation, runs nothing and records nothing (caller wins, docs/guarantees.md, *Cancellation*)."""
    seen: dict[str, Any] = {"entered": 0}

    async def scenario() -> ExecutionScope:
        tools: dict[str, Any] = {}

        async def waiting(n: int) -> str:
            seen["entered"] += 1
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                try:  # during the caller's unwinding
                    await tools["other"].ainvoke({"n": 2})
                except BaseException as exc:
                    seen["refused_with"] = type(exc)
                raise
            return "unreachable"

        agent, _, scope = build(
            [Call("waiting", {"n": 1}), "never"],
            {"waiting": waiting, "other": waiting},
            limits=Limits(tool_calls=tool_calls),
        )
        tools.update({t.name: t for t in agent.tools})
        run = asyncio.create_task(go(agent))
        while not seen["entered"]:
            await asyncio.sleep(0)
        run.cancel()  # the caller first
        with pytest.raises(asyncio.CancelledError):
            await run
        return scope

    scope = asyncio.run(scenario())
    assert seen["refused_with"] is asyncio.CancelledError
    assert seen["entered"] == 1  # the other body never ran
    assert scope.stop_reason is None  # no halt recorded after the caller's cancel
    assert [e.kind for e in scope.events if e.kind != "Middleware"] == ["ModelCall", "ToolCall"]
    assert scope.cancel_token.cancelled


def test_halt_then_caller_cancel_caller_wins() -> None:
    holder: dict[str, asyncio.Task[Any]] = {}

    async def waiting(n: int) -> str:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:  # cancelled because a sibling halted the run ...
            holder["run"].cancel()  # ... and now the caller cancels too, before the run returns
            await asyncio.sleep(0)
            raise
        return "unreachable"

    async def scenario() -> ExecutionScope:
        batch = [Call("waiting", {"n": 1}, id="a"), Call("waiting", {"n": 2}, id="b")]
        agent, _, scope = build([batch, "never"], {"waiting": waiting}, limits=Limits(tool_calls=1), concurrent=True)
        holder["run"] = asyncio.create_task(go(agent))
        with pytest.raises(asyncio.CancelledError):
            await holder["run"]
        return scope

    scope = asyncio.run(scenario())
    assert scope.stop_reason is StopReason.TOOL_BUDGET  # recorded first, yet the caller wins
    assert scope.events[-1] == ev("ToolBudget", "waiting", 1)


# -- caller vs deadline ------------------------------------------------------------------


def test_deadline_then_caller_cancel_caller_wins() -> None:
    holder: dict[str, asyncio.Task[Any]] = {}

    async def waiting(n: int) -> str:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:  # the deadline fired first ...
            holder["run"].cancel()  # ... and the caller cancels in the same tick
            raise
        return "unreachable"

    async def scenario() -> ExecutionScope:
        agent, _, scope = build(
            [Call("waiting", {"n": 1}), "never"], {"waiting": waiting}, limits=Limits(deadline_s=DEADLINE_S)
        )
        holder["run"] = asyncio.create_task(go(agent))
        with pytest.raises(asyncio.CancelledError):
            await holder["run"]
        return scope

    scope = asyncio.run(scenario())
    assert scope.stop_reason is StopReason.DEADLINE_EXCEEDED  # recorded, but not returned: the caller wins


def test_caller_cancel_then_deadline_caller_wins() -> None:
    caller: dict[str, asyncio.Task[Any]] = {}

    async def waiting(n: int) -> str:
        time.sleep(PAST_DEADLINE_S)  # block the loop: the deadline is due but has not fired
        caller["task"].cancel()  # the caller cancels first, in the same tick
        await asyncio.sleep(0)
        return "unreachable"

    async def scenario() -> ExecutionScope:
        caller["task"] = asyncio.current_task()  # the task awaiting the run
        agent, _, scope = build(
            [Call("waiting", {"n": 1}), "never"], {"waiting": waiting}, limits=Limits(deadline_s=DEADLINE_S)
        )
        with pytest.raises(asyncio.CancelledError):
            await go(agent)
        return scope

    scope = asyncio.run(scenario())
    assert scope.stop_reason is None  # not relabelled DeadlineExceeded
    assert [e.kind for e in scope.events] == ["ModelCall", "Middleware", "ToolCall"]


# -- halt vs deadline --------------------------------------------------------------------


def test_halt_then_deadline_first_wins() -> None:
    async def waiting(n: int) -> str:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:  # a sibling halted the run; the cleanup outlives the deadline
            time.sleep(PAST_DEADLINE_S)
            for _ in range(3):
                await asyncio.sleep(0)
            raise
        return "unreachable"

    batch = [Call("waiting", {"n": 1}, id="a"), Call("waiting", {"n": 2}, id="b")]
    agent, _, scope = build(
        [batch, "never"], {"waiting": waiting}, limits=Limits(tool_calls=1, deadline_s=DEADLINE_S), concurrent=True
    )

    outcome = asyncio.run(go(agent))

    assert outcome.status is RunStatus.TOOL_BUDGET
    assert outcome.count("DeadlineExceeded") == 0
    assert outcome.events[-1] == ev("ToolBudget", "waiting", 1)
    assert list(scope.events) == list(outcome.events)


def test_deadline_then_halt_first_wins() -> None:
    seen: dict[str, Any] = {}
    tools: dict[str, Any] = {}

    async def waiting(n: int) -> str:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:  # the deadline fired; the cleanup tries an attempt over budget
            try:
                await tools["other"].ainvoke({"n": 2})
            except RunHalted as halt:
                seen["halt"] = (halt.reason, halt.refused)
            raise
        return "unreachable"

    agent, _, _ = build(
        [Call("waiting", {"n": 1}), "never"],
        {"waiting": waiting, "other": waiting},
        limits=Limits(tool_calls=1, deadline_s=DEADLINE_S),
    )
    tools.update({t.name: t for t in agent.tools})

    outcome = asyncio.run(go(agent))

    assert outcome.status is RunStatus.DEADLINE_EXCEEDED
    assert seen["halt"] == (StopReason.DEADLINE_EXCEEDED, True)  # refused, and not relabelled ToolBudget
    assert outcome.count("ToolBudget") == 0
    assert list(outcome.events) == [*tool_round("waiting", 1), ev("DeadlineExceeded", "run", 1)]


# -- deadline vs bodies ------------------------------------------------------------------


@pytest.mark.parametrize("swallow", [False, True], ids=["reraises", "swallows-and-returns"])
@pytest.mark.parametrize("how", ["await run_agent", "run_sync"])
def test_the_deadline_does_not_wait_for_an_async_body_whose_cleanup_ignores_cancellation(
    swallow: bool, how: str
) -> None:
    """docs/guarantees.md, *Cancellation*: the run returns within the grace after its deadline; the body is abandoned.

    The cleanup waits on a threading.Event that is set only after the run has
    returned: a run that waited for the cleanup would never return (the
    outer ``wait_for`` turns such a hang into a failure, not a timing check).
    """
    release = threading.Event()
    cleaned: list[str] = []

    async def stubborn(n: int) -> str:
        try:
            await asyncio.sleep(30)
        finally:
            while not release.is_set():  # a cleanup that ignores every cancellation
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.sleep(0.005)
            cleaned.append("done")
        return "LATE RESULT" if swallow else "unreachable"

    agent, transport, scope = build(
        [Call("slow", {"n": 1}, id="s1"), "never"], {"slow": stubborn}, limits=Limits(deadline_s=DEADLINE_S)
    )
    try:
        if how == "run_sync":  # labkit.run's path: closing the run's loop does not wait for the body either
            outcome = run_sync_with_hang_guard(go(agent))
        else:
            outcome = asyncio.run(asyncio.wait_for(go(agent), 10))
        assert cleaned == []  # the run returned while the cleanup was still running
    finally:
        release.set()
    assert outcome.status is RunStatus.DEADLINE_EXCEEDED
    assert results(outcome) == {"s1": ["cancelled: the run stopped before this call finished"]}
    assert list(outcome.events) == [*tool_round("slow", 1), ev("DeadlineExceeded", "run", 1)]
    assert transport.calls == 1


def test_an_abandoned_body_finishing_later_records_nothing() -> None:
    release = asyncio.Event()
    finished: list[str] = []

    async def stubborn(n: int) -> str:
        try:
            await asyncio.sleep(30)
        finally:
            await asyncio.shield(release.wait())  # ignores cancellation until released
            finished.append("late")
        return "LATE RESULT"

    async def scenario() -> tuple[Any, Any, ExecutionScope]:
        agent, transport, scope = build(
            [Call("slow", {"n": 1}, id="s1"), "answer after the late result"],
            {"slow": stubborn},
            limits=Limits(deadline_s=DEADLINE_S),
        )
        outcome = await asyncio.wait_for(go(agent), 10)
        events_then, usage_then = scope.events, scope.usage
        release.set()
        for _ in range(20):  # the abandoned loop now finishes its body and tries to go on
            await asyncio.sleep(0.005)
        assert finished == ["late"]
        assert scope.events == events_then == outcome.events  # nothing recorded after the run
        assert scope.usage[:3] == usage_then[:3]
        assert transport.calls == 1  # the abandoned loop made no further model call
        return outcome, transport, scope

    outcome, _, _ = asyncio.run(scenario())
    assert outcome.status is RunStatus.DEADLINE_EXCEEDED
    assert "LATE RESULT" not in str(outcome.transcript)


def test_a_halt_does_not_wait_for_a_concurrent_sibling_whose_cleanup_ignores_cancellation() -> None:
    release = threading.Event()

    async def stubborn(n: int) -> str:
        try:
            await asyncio.sleep(30)
        finally:
            while not release.is_set():
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.sleep(0.005)
        return "late"

    async def forbidden(n: int) -> str:
        await asyncio.sleep(0)
        return "never"

    scope = ExecutionScope(Limits(), {CAP})
    tools = [scope.tool("slow", CAP, stubborn), scope.tool("forbidden", "not.granted", forbidden)]
    batch = [Call("slow", {"n": 1}, id="a"), Call("forbidden", {"n": 2}, id="b")]
    agent = SimpleAgent(
        CountingClient(labkit_scripted(batch), scope), tools, instructions="t", concurrent_tool_calls=True
    )
    try:
        outcome = asyncio.run(asyncio.wait_for(run_agent(agent, "go", is_complete=lambda: True), 10))
    finally:
        release.set()
    assert outcome.status is RunStatus.PERMISSION_DENIED
    assert results(outcome) == {
        "a": ["cancelled: the run stopped before this call finished"],
        "b": [results(outcome)["b"][0]],
    }
    assert results(outcome)["b"][0].startswith("refused: PermissionDenied")


def labkit_scripted(batch: list[Call]) -> Any:
    from labkit import ScriptedTransport

    return ScriptedTransport([batch, "never"])


def run_sync_with_hang_guard(coro: Any) -> Any:
    """labkit.run_sync in a thread, failing (not hanging) if it does not return in 10 s."""
    from labkit import run_sync

    box: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: box.update(value=run_sync(coro)), daemon=True)
    thread.start()
    thread.join(10)
    assert "value" in box, "the run waited for the abandoned body"
    return box["value"]


@pytest.mark.parametrize("who", ["deadline", "caller"])
def test_sync_body_sees_the_token(who: str) -> None:
    saw: list[bool] = []
    entered, done = threading.Event(), threading.Event()

    def polite(n: int, token: CancelToken) -> str:
        entered.set()
        saw.append(token.wait(10))  # returns True as soon as the run is stopped or cancelled
        done.set()
        return "stopped early"

    async def scenario() -> Any:
        limits = Limits(deadline_s=DEADLINE_S if who == "deadline" else 30)
        agent, _, _ = build([Call("polite", {"n": 1}), "never"], {"polite": polite}, limits=limits)
        run = asyncio.create_task(go(agent))
        if who == "caller":
            await asyncio.to_thread(entered.wait, 10)
            run.cancel()
            with pytest.raises(asyncio.CancelledError):
                await run
            outcome = None
        else:
            outcome = await run
        await asyncio.to_thread(done.wait, 10)
        return outcome

    outcome = asyncio.run(scenario())
    assert saw == [True]
    if who == "deadline":
        assert outcome.status is RunStatus.DEADLINE_EXCEEDED


# -- the transport -----------------------------------------------------------------------


@pytest.mark.parametrize("who", ["deadline", "caller"])
def test_cancellation_reaches_the_transport(who: str) -> None:
    async def scenario() -> tuple[TestWaitingTransport, Any]:
        transport = TestWaitingTransport()
        limits = Limits(deadline_s=DEADLINE_S if who == "deadline" else 30)
        agent, _ = _agent_for(transport, limits)
        run = asyncio.create_task(run_agent(agent, "go", is_complete=lambda: False))
        if who == "deadline":
            return transport, await run
        await transport.started.wait()
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        return transport, None

    transport, outcome = asyncio.run(scenario())
    assert transport.cancelled and transport.calls == 1
    if outcome is not None:
        assert outcome.status is RunStatus.DEADLINE_EXCEEDED
        assert list(outcome.events) == [ev("ModelCall", "model", 1), ev("DeadlineExceeded", "run", 0)]


# -- a CancelledError nobody asked for: not the caller, not the deadline (docs/guarantees.md, *Cancellation*) -------


class TestGivesUpTransport:
    """A transport whose client library cancels its own request (nobody cancelled the run)."""

    __test__ = False
    name = "gives-up"

    async def send(self, request: ChatRequest) -> AsyncIterator[ChatChunk]:
        raise asyncio.CancelledError("the provider's client cancelled its own request")
        yield  # pragma: no cover


AGENT_KINDS = {"simple": SimpleAgent, "harness": HarnessAgent}


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
@pytest.mark.parametrize("kind", list(AGENT_KINDS))
def test_a_provider_cancelling_its_own_request_is_provider_unavailable(kind: str, stream: bool) -> None:
    scope = ExecutionScope(Limits(deadline_s=30), {CAP})
    client = CountingClient(TestGivesUpTransport(), scope)
    agent = AGENT_KINDS[kind](client, [], instructions="t", stream=stream)
    outcome = asyncio.run(run_agent(agent, "go", is_complete=lambda: True))  # returns: the caller was not cancelled
    assert outcome.status is RunStatus.PROVIDER_UNAVAILABLE  # neither DeadlineExceeded nor the caller's 130
    assert list(outcome.events) == [ev("ModelCall", "model", 1), ev("ProviderUnavailable", "model", 1)]
    assert outcome.text is None
    assert "the provider cancelled its own request" in str(client.last_error)
    assert "nobody cancelled the run" in str(client.last_error)


@pytest.mark.parametrize("body_kind", ["async", "sync"])
@pytest.mark.parametrize("kind", list(AGENT_KINDS))
def test_a_body_raising_cancelled_error_itself_is_a_tool_error_and_the_run_goes_on(kind: str, body_kind: str) -> None:
    entered: list[int] = []

    async def async_body(n: int) -> str:
        entered.append(n)
        raise asyncio.CancelledError("the body gave up")

    def sync_body(n: int) -> str:
        entered.append(n)
        raise asyncio.CancelledError("the body gave up")

    scope = ExecutionScope(Limits(deadline_s=30), {CAP})
    tool = scope.tool("t", CAP, async_body if body_kind == "async" else sync_body)
    transport = ScriptedTransport([Call("t", {"n": 1}, id="c1"), "done"])
    agent = AGENT_KINDS[kind](CountingClient(transport, scope), [tool], instructions="t")
    outcome = asyncio.run(run_agent(agent, "go", is_complete=lambda: True))
    assert outcome.status is RunStatus.COMPLETED and outcome.text == "done"  # the run went on to its end
    assert entered == [1]
    [result] = results(outcome)["c1"]
    assert result.startswith("error: CancelledError raised by the tool itself (")
    assert result.endswith("); the run was not cancelled")
    if body_kind == "async":  # a sync body's exception crosses a thread: asyncio keeps only its class
        assert "(the body gave up)" in result
    assert list(outcome.events) == [*tool_round("t", 1), ev("ModelCall", "model", 2)]


def test_the_run_cancelled_during_a_body_is_still_the_caller() -> None:
    """The counter-case: a body's CancelledError after the caller cancelled is the caller's."""

    async def scenario() -> None:
        started = asyncio.Event()

        async def waits(n: int) -> str:
            started.set()
            await asyncio.Event().wait()
            return "never"

        scope = ExecutionScope(Limits(deadline_s=30), {CAP})
        tool = scope.tool("t", CAP, waits)
        agent = HarnessAgent(CountingClient(ScriptedTransport([Call("t", {"n": 1})]), scope), [tool], instructions="t")
        run = asyncio.ensure_future(run_agent(agent, "go", is_complete=lambda: True))
        await started.wait()
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run

    asyncio.run(scenario())


# -- the console and Jupyter ---------------------------------------------------------------


def _spawn(args: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, preexec_fn=sigint_as_in_a_terminal
    )


def _read_until(proc: subprocess.Popen[str], marker: str) -> list[str]:
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)
        if line.startswith(marker):
            return lines
    pytest.fail(f"the process ended before printing {marker!r}: {lines}")


def test_console_sigint_during_a_hanging_run_exits_130() -> None:
    proc = _spawn([sys.executable, "-m", "labkit", "run", "deadline", "--deadline-s", "30"])
    try:
        header = _read_until(proc, "completion:")  # the header is printed when the run starts
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert "cancelled by the caller" in err
    assert "Traceback" not in err
    assert "status:" not in out and "DeadlineExceeded" not in out + err
    assert any(line.startswith("limits:") and "deadline_s=30" in line for line in header)


_NOTEBOOK_CELL = textwrap.dedent(
    """
    import asyncio
    import labkit
    from labkit import ChatChunk, Limits, prepare, run

    class Waiting:
        name = "waiting"
        cancelled = False

        async def send(self, request):
            print("ready", flush=True)
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                Waiting.cancelled = True
                raise
            yield ChatChunk(text="never")

    async def cell():  # like a notebook cell: sync labkit.run inside a running loop
        setup = prepare("deadline", limits=Limits(deadline_s=30), transport=Waiting())
        try:
            run(setup)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
        print(f"transport cancelled={Waiting.cancelled} stop={setup.scope.stop_reason}", flush=True)

    asyncio.new_event_loop().run_until_complete(cell())
    """
)


def test_interrupting_a_run_inside_a_running_loop_cancels_it() -> None:
    proc = _spawn([sys.executable, "-c", _NOTEBOOK_CELL])
    try:
        _read_until(proc, "ready")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "interrupted" in out
    assert "transport cancelled=True stop=None" in out  # cancelled at once, not left to its deadline


def test_a_body_outliving_its_run_cannot_act_through_the_scope() -> None:
    release, finished = threading.Event(), threading.Event()
    late: list[str] = []
    tools: dict[str, Any] = {}

    def blocking(n: int) -> str:
        release.wait(10)
        try:
            tools["blocking"].invoke({"n": 2})  # the abandoned body tries another attempt
        except Exception as exc:  # ScopeStateError: the run is over
            late.append(type(exc).__name__)
        finished.set()
        return "late"

    agent, _, scope = build(
        [Call("blocking", {"n": 1}), "never"], {"blocking": blocking}, limits=Limits(deadline_s=DEADLINE_S)
    )
    tools.update({t.name: t for t in agent.tools})
    outcome = asyncio.run(go(agent))
    release.set()
    assert finished.wait(10)
    assert late == ["ScopeStateError"]
    assert outcome.status is RunStatus.DEADLINE_EXCEEDED
    assert list(scope.events) == list(outcome.events) and scope.usage.tool_calls == 1
