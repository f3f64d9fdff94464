"""Running an agent and classifying every ending (docs/guarantees.md, *Cancellation* and *Every stop has one name*)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from support import FakeClock, asynctest, review_agent, tool_results, triples

import labkit
from labkit import (
    Call,
    ChatChunk,
    ChatRequest,
    CountingClient,
    ExecutionScope,
    Fail,
    Hang,
    Limits,
    RunHalted,
    RunStatus,
    ScopeStateError,
    ScriptedTransport,
    ScriptExhausted,
    SimpleAgent,
    StopReason,
    ToolInvocation,
    UnknownScenarioError,
    UserError,
    observe_middleware,
    prepare,
    run_agent,
)

PROMPT = "Please review ticket 42."
WELL_BEHAVED = [Call("read_ticket", {"input": 42}), Call("finish_review", {"input": 42}), "Review finished."]


async def _run(agent, task) -> labkit.RunOutcome:
    return await run_agent(agent, PROMPT, is_complete=task.is_complete)


# -- endings -----------------------------------------------------------------------------


@asynctest
async def test_completed_keeps_the_text() -> None:
    scope, task, transport, agent = review_agent(WELL_BEHAVED)
    outcome = await _run(agent, task)
    assert outcome.status is RunStatus.COMPLETED
    assert outcome.text == "Review finished."
    assert outcome.exit_code == 0
    assert outcome.usage.model_calls == 3 and outcome.usage.tool_calls == 2
    assert outcome.limits == Limits()
    assert [m.role for m in outcome.transcript][:2] == ["system", "user"]


@asynctest
async def test_incomplete_keeps_the_text_and_is_not_success() -> None:
    scope, task, transport, agent = review_agent(["Review finished."])
    outcome = await _run(agent, task)
    assert outcome.status is RunStatus.INCOMPLETE
    assert outcome.text == "Review finished."
    assert outcome.exit_code == 2


@asynctest
async def test_the_host_condition_decides_not_the_text() -> None:
    scope, task, transport, agent = review_agent(["I could not do it."])
    outcome = await run_agent(agent, PROMPT, is_complete=lambda: True)
    assert outcome.status is RunStatus.COMPLETED  # the condition, whatever the model said


@asynctest
async def test_a_halt_withholds_the_text() -> None:
    scope, task, transport, agent = review_agent([Call("read_ticket", {"input": 42})] * 2 + ["Review finished."])
    outcome = await _run(agent, task)
    assert outcome.status is RunStatus.REPEATED_CALL
    assert outcome.text is None
    assert outcome.exit_code == 2


@asynctest
async def test_a_deadline_passed_during_the_last_reply_withholds_its_text() -> None:
    clock = FakeClock()

    class SlowToAnswer:
        name = "test"

        async def send(self, request: ChatRequest) -> AsyncIterator[ChatChunk]:
            clock.advance(10.0)  # the reply arrives after the deadline
            yield ChatChunk(text="Review finished.")

    scope = ExecutionScope(Limits(deadline_s=10.0), {"ticket.read"}, clock=clock)
    agent = SimpleAgent(CountingClient(SlowToAnswer(), scope), [], instructions="test")
    outcome = await run_agent(agent, PROMPT, is_complete=lambda: True)
    assert outcome.status is RunStatus.DEADLINE_EXCEEDED
    assert outcome.text is None
    assert triples(outcome.events) == [("ModelCall", "model", 1), ("DeadlineExceeded", "run", 0)]


@asynctest
async def test_a_tiny_deadline_stops_a_hanging_transport() -> None:
    scope, task, transport, agent = review_agent([Hang()], limits=Limits(deadline_s=0.05))
    outcome = await _run(agent, task)
    assert outcome.status is RunStatus.DEADLINE_EXCEEDED
    assert triples(outcome.events) == [("ModelCall", "model", 1), ("DeadlineExceeded", "run", 0)]


@asynctest
async def test_an_unreachable_provider_is_an_outcome() -> None:
    scope, task, transport, agent = review_agent([Fail(ConnectionRefusedError("nobody home"))])
    outcome = await _run(agent, task)
    assert outcome.status is RunStatus.PROVIDER_UNAVAILABLE
    assert outcome.text is None
    assert triples(outcome.events) == [("ModelCall", "model", 1), ("ProviderUnavailable", "model", 1)]


@asynctest
async def test_a_programming_error_stays_an_error() -> None:
    scope, task, transport, agent = review_agent([Call("read_ticket", {"input": 42})])
    with pytest.raises(ScriptExhausted):
        await _run(agent, task)
    with pytest.raises(ScopeStateError):
        scope.check_cancellation()  # the scope still ended


# -- caller cancellation -----------------------------------------------------------------


@asynctest
async def test_caller_cancellation_propagates() -> None:
    entered = asyncio.Event()

    def script(number: int, request: ChatRequest) -> object:
        entered.set()
        return Hang()

    scope, task, transport, agent = review_agent(script)
    run = asyncio.ensure_future(_run(agent, task))
    await entered.wait()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert scope.stop_reason is None
    assert scope.cancel_token.cancelled
    assert triples(scope.events) == [("ModelCall", "model", 1)]


@asynctest
async def test_caller_cancels_first_then_an_internal_halt_the_caller_wins() -> None:
    entered = asyncio.Event()
    scope = ExecutionScope(Limits(), {"lab.read"})

    async def stubborn(x: int) -> str:
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await forbidden.ainvoke({"x": x})  # halts PermissionDenied while the cancel unwinds
        return "never"

    tools = [scope.tool("stubborn", "lab.read", stubborn), forbidden := scope.tool("forbidden", "lab.write", _echo)]
    transport = ScriptedTransport([Call("stubborn", {"x": 1}), "done"])
    agent = SimpleAgent(CountingClient(transport, scope), tools, instructions="test")
    run = asyncio.ensure_future(run_agent(agent, PROMPT, is_complete=lambda: True))
    await entered.wait()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    # the cleanup's call is refused with the caller's cancellation before the guard's rules: no halt after it
    assert scope.stop_reason is None
    assert "PermissionDenied" not in [e.kind for e in scope.events]


async def _hold_after_halt(invocation: ToolInvocation, next) -> object:
    try:
        return await next(invocation)
    except RunHalted:
        HALTED.set()
        await asyncio.Event().wait()  # the caller cancels while the halt unwinds
        raise


CALLER: dict[str, asyncio.Future] = {}


async def _cancel_after_halt(invocation: ToolInvocation, next) -> object:
    try:
        return await next(invocation)
    except RunHalted:
        CALLER["task"].cancel()  # the caller cancels, with no await between the halt and the end of the run
        raise


HALTED: asyncio.Event


@pytest.mark.parametrize("middleware", [_hold_after_halt, _cancel_after_halt], ids=["await", "no-await"])
@asynctest
async def test_internal_halt_first_then_caller_cancels_the_caller_wins(middleware) -> None:
    global HALTED
    HALTED = asyncio.Event()
    scope, task, transport, agent = review_agent(
        [Call("read_ticket", {"input": 42}), "done"],
        capabilities={"review.finish"},
        middleware=(middleware, observe_middleware),
    )
    run = asyncio.ensure_future(_run(agent, task))
    CALLER["task"] = run
    if middleware is _hold_after_halt:
        await HALTED.wait()
        run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert run.cancelled()
    assert scope.stop_reason is StopReason.PERMISSION_DENIED


@asynctest
async def test_a_transport_cancelling_itself_is_not_relabelled_a_deadline() -> None:
    class GivesUp:
        name = "test"

        async def send(self, request: ChatRequest) -> AsyncIterator[ChatChunk]:
            raise asyncio.CancelledError("the provider's own cancellation")
            yield  # pragma: no cover

    scope = ExecutionScope(Limits(deadline_s=5.0))
    agent = SimpleAgent(CountingClient(GivesUp(), scope), [], instructions="test")
    outcome = await run_agent(agent, PROMPT, is_complete=lambda: True)  # not raised: the caller did not cancel
    assert outcome.status is RunStatus.PROVIDER_UNAVAILABLE
    assert scope.stop_reason is StopReason.PROVIDER_UNAVAILABLE
    assert "DeadlineExceeded" not in [e.kind for e in scope.events]


# -- the sync entry point and the scope's single run --------------------------------------


def test_run_works_inside_a_running_event_loop() -> None:
    async def kernel_cell() -> tuple[labkit.RunOutcome, labkit.RunOutcome]:
        asyncio.get_running_loop()  # as in a Jupyter kernel: a loop is running
        setup = prepare("complete", agent="simple")
        return labkit.run("complete"), labkit.run(setup)

    by_name, by_setup = asyncio.run(kernel_cell())
    assert by_name.status is RunStatus.COMPLETED
    assert by_setup.status is RunStatus.COMPLETED


def test_run_outside_a_loop() -> None:
    outcome = labkit.run("incomplete", agent="simple")
    assert (outcome.status, outcome.text) == (RunStatus.INCOMPLETE, "Review finished.")


def test_a_scope_serves_one_run() -> None:
    setup = prepare("incomplete")
    assert labkit.run(setup).status is RunStatus.INCOMPLETE
    with pytest.raises(ScopeStateError):
        labkit.run(setup)


@asynctest
async def test_an_agent_cannot_run_twice() -> None:
    scope, task, transport, agent = review_agent(["one", "two"])
    await _run(agent, task)
    with pytest.raises(ScopeStateError):
        await _run(agent, task)
    assert transport.calls == 1


def test_run_of_a_setup_refuses_other_arguments() -> None:
    with pytest.raises((UserError, TypeError)):
        labkit.run(prepare("complete"), limits=Limits(model_calls=1))


# -- prepare -------------------------------------------------------------------------------


def test_prepare_refuses_an_unknown_scenario_listing_the_names() -> None:
    with pytest.raises(UnknownScenarioError) as info:
        prepare("nope")
    assert all(name in str(info.value) for name in labkit.SCENARIOS)


def test_prepare_refuses_an_unknown_agent() -> None:
    with pytest.raises(UserError, match="simple"):
        prepare("complete", agent="clever")  # type: ignore[arg-type]


def test_prepare_uses_given_limits_and_transport() -> None:
    transport = ScriptedTransport(["custom"])
    setup = prepare("complete", agent="simple", limits=Limits(model_calls=2), transport=transport)
    assert setup.scope.limits == Limits(model_calls=2)
    assert setup.transport is transport
    outcome = labkit.run(setup)
    assert (outcome.status, outcome.text) == (RunStatus.INCOMPLETE, "custom")
    assert setup.agent.max_iterations == 3


@pytest.mark.parametrize("agent", ["simple", "harness"])
def test_streaming_runs_give_the_same_outcome(agent: str) -> None:
    streamed = labkit.run("complete", agent=agent, stream=True)
    assert streamed.status is RunStatus.COMPLETED
    assert streamed.text == "Review finished."
    assert streamed.count("ModelCall") == 3


def _echo(x: int) -> str:
    return str(x)


def test_tool_results_helper_sees_refusals() -> None:  # keeps the transcript shape honest
    outcome = labkit.run("forbidden", agent="simple")
    (text,) = tool_results(outcome.transcript)["call-1"]
    assert text.startswith("refused: PermissionDenied")


@asynctest
async def test_a_halt_recorded_outside_the_run_stops_it() -> None:
    entered = asyncio.Event()

    def script(number: int, request: ChatRequest) -> object:
        entered.set()
        return Hang()

    scope, task, transport, agent = review_agent(script, capabilities={"review.finish"})
    read_ticket = next(t for t in agent.tools if t.name == "read_ticket")
    run = asyncio.ensure_future(_run(agent, task))
    await entered.wait()
    with pytest.raises(RunHalted):
        await asyncio.to_thread(read_ticket.invoke, {"input": 42})  # e.g. a direct call from another thread
    outcome = await run
    assert outcome.status is RunStatus.PERMISSION_DENIED
    assert triples(outcome.events) == [("ModelCall", "model", 1), ("PermissionDenied", "read_ticket", 0)]
    assert task.entries["read_ticket"] == 0


def test_a_zero_deadline_admits_no_model_call() -> None:
    outcome = labkit.run("complete", agent="simple", limits=Limits(deadline_s=0))
    assert outcome.status is RunStatus.DEADLINE_EXCEEDED
    assert triples(outcome.events) == [("DeadlineExceeded", "run", 0)]


class SulkingAgent(SimpleAgent):
    """An agent whose own loop raises CancelledError while nobody cancelled the run."""

    async def respond(self, prompt: str, transcript: list) -> str | None:
        raise asyncio.CancelledError("the loop gave up by itself")


@asynctest
async def test_a_loop_cancelling_itself_is_an_error_not_the_callers_cancellation() -> None:
    # docs/guarantees.md, *Cancellation*: a cancellation nobody asked for is never reported as the
    # caller's (which the console would show as exit 130); outside the protocol, it stays an error
    # (docs/guarantees.md, *Every stop has one name*).
    scope = ExecutionScope()
    agent = SulkingAgent(CountingClient(ScriptedTransport(["never"]), scope), [], instructions="i")
    with pytest.raises(RuntimeError, match="nobody cancelled the run") as caught:
        await run_agent(agent, "p", is_complete=lambda: True)
    assert isinstance(caught.value.__cause__, asyncio.CancelledError)
    assert scope.stop_reason is None and scope.events == ()
