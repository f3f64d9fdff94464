"""The agent loops: iteration cap, batches, errors the model sees, middleware.

Rules from docs/guarantees.md, *Limits are exact*; the middleware is taught in chapters 2 and 8.
"""

from __future__ import annotations

import asyncio

import pytest
from support import asynctest, review_agent, tool_results, triples

from labkit import (
    Call,
    CountingClient,
    ExecutionScope,
    HarnessAgent,
    HarnessCapabilities,
    Limits,
    RunStatus,
    ScriptedTransport,
    SimpleAgent,
    ToolCall,
    ToolInvocation,
    UserError,
    observe_middleware,
    run_agent,
)

BOTH = pytest.mark.parametrize("agent", ["simple", "harness"])


def _read(number: int) -> Call:
    return Call("read_ticket", {"input": number})


async def _run(agent: SimpleAgent, task) -> object:
    return await run_agent(agent, "Please review ticket 42.", is_complete=task.is_complete)


# -- the loop's own cap ------------------------------------------------------------------


@BOTH
def test_iteration_cap_is_the_model_limit_plus_one(agent: str) -> None:
    for model_calls in (0, 1, 6):
        *_, built = review_agent([], limits=Limits(model_calls=model_calls), agent=agent)
        assert built.max_iterations == model_calls + 1


@BOTH
@asynctest
async def test_the_model_budget_stops_before_the_loop_cap(agent: str) -> None:
    scope, task, transport, built = review_agent(
        lambda n, request: _read(n), limits=Limits(model_calls=3, tool_calls=100), agent=agent
    )
    outcome = await _run(built, task)
    assert outcome.status is RunStatus.MODEL_BUDGET
    assert outcome.count("ModelCall") == 3
    assert transport.calls == 3


@asynctest
async def test_a_smaller_loop_cap_ends_the_loop_as_incomplete() -> None:
    scope, task, transport, built = review_agent(
        lambda n, request: _read(n), limits=Limits(tool_calls=100), max_iterations=2
    )
    outcome = await _run(built, task)
    assert outcome.status is RunStatus.INCOMPLETE
    assert outcome.text is None
    assert (outcome.count("ModelCall"), outcome.count("ToolCall")) == (2, 2)


# -- batches -----------------------------------------------------------------------------


@BOTH
@asynctest
async def test_each_call_of_a_batch_goes_through_the_guard(agent: str) -> None:
    scope, task, transport, built = review_agent([[_read(7), _read(8)], "done"], agent=agent)
    outcome = await _run(built, task)
    assert outcome.status is RunStatus.INCOMPLETE
    assert outcome.count("Middleware") == 2
    assert outcome.count("ToolCall") == 2
    assert task.entries["read_ticket"] == 2
    results = tool_results(outcome.transcript)
    assert list(results) == ["call-1-1", "call-1-2"]
    assert all(texts[0].startswith("NotFound") for texts in results.values())


@asynctest
async def test_a_batch_repeating_one_signature_is_stopped_by_the_guard() -> None:
    scope, task, transport, built = review_agent([[_read(42), _read(42)], "done"])
    outcome = await _run(built, task)
    assert outcome.status is RunStatus.REPEATED_CALL
    assert task.entries["read_ticket"] == 1
    assert outcome.count("ToolCall") == 1


@BOTH
@asynctest
async def test_a_halt_mid_batch_leaves_one_result_per_call_id_when_calls_run_concurrently(agent: str) -> None:
    entered = asyncio.Event()

    async def slow(x: int) -> str:
        entered.set()
        await asyncio.Event().wait()  # only cancellation ends it
        return "never"

    scope = ExecutionScope(Limits(), {"lab.read"})
    tools = [
        scope.tool("slow", "lab.read", slow),
        scope.tool("forbidden", "lab.write", _echo),
        scope.tool("fast", "lab.read", _echo),
    ]
    batch = [Call("slow", {"x": 1}, id="a"), Call("forbidden", {"x": 2}, id="b"), Call("fast", {"x": 3}, id="c")]
    cls = HarnessAgent if agent == "harness" else SimpleAgent
    built = cls(
        CountingClient(ScriptedTransport([batch, "done"]), scope),
        tools,
        instructions="test",
        concurrent_tool_calls=True,
    )
    outcome = await run_agent(built, "go", is_complete=lambda: True)
    assert outcome.status is RunStatus.PERMISSION_DENIED
    assert entered.is_set()
    results = tool_results(outcome.transcript)
    assert sorted(results) == ["a", "b", "c"]
    assert all(len(texts) == 1 for texts in results.values())
    assert results["a"][0].startswith("cancelled")
    assert results["b"][0].startswith("refused: PermissionDenied")
    assert results["c"][0].split(":")[0] in {"refused", "cancelled", "3"}
    assert [m.role for m in outcome.transcript[-3:]] == ["tool"] * 3


@BOTH
@asynctest
async def test_calls_of_one_reply_run_one_after_another_by_default(agent: str) -> None:
    """As in the seed: call n+1 starts after call n ended; after a halt no body starts.

    From docs/guarantees.md, *Limits are exact*.
    """
    order: list[str] = []

    async def step(x: int) -> str:
        order.append(f"enter {x}")
        await asyncio.sleep(0)  # a concurrent sibling would enter here
        order.append(f"leave {x}")
        return str(x)

    scope = ExecutionScope(Limits(), {"lab.read"})
    tools = [scope.tool("step", "lab.read", step), scope.tool("forbidden", "lab.write", _echo)]
    batch = [
        Call("step", {"x": 1}, id="a"),
        Call("step", {"x": 2}, id="b"),
        Call("forbidden", {"x": 3}, id="c"),
        Call("step", {"x": 4}, id="d"),
    ]
    cls = HarnessAgent if agent == "harness" else SimpleAgent
    built = cls(CountingClient(ScriptedTransport([batch, "done"]), scope), tools, instructions="test")
    assert built.concurrent_tool_calls is False
    outcome = await run_agent(built, "go", is_complete=lambda: True)
    assert outcome.status is RunStatus.PERMISSION_DENIED
    assert order == ["enter 1", "leave 1", "enter 2", "leave 2"]  # in order; nothing after the halt
    results = tool_results(outcome.transcript)
    assert {k: len(v) for k, v in results.items()} == {"a": 1, "b": 1, "c": 1, "d": 1}
    assert (results["a"], results["b"]) == (["1"], ["2"])
    assert results["c"][0].startswith("refused: PermissionDenied")
    assert results["d"][0].startswith("refused: PermissionDenied: the run was already stopped")
    assert [e.kind for e in outcome.events].count("ToolCall") == 2


def _echo(x: int) -> str:
    return str(x)


# -- errors the model sees ---------------------------------------------------------------


@BOTH
@asynctest
async def test_an_unknown_tool_is_a_recorded_error_and_the_run_goes_on(agent: str) -> None:
    scope, task, transport, built = review_agent([Call("delete_ticket", {"input": 42}), "gave up"], agent=agent)
    outcome = await _run(built, task)
    assert outcome.status is RunStatus.INCOMPLETE
    assert outcome.text == "gave up"
    (text,) = tool_results(outcome.transcript)["call-1"]
    assert text.startswith("error: unknown tool 'delete_ticket'")
    assert "read_ticket" in text and "finish_review" in text
    assert triples(outcome.events) == [("ModelCall", "model", 1), ("ModelCall", "model", 2)]


@BOTH
@asynctest
async def test_a_binding_failure_is_a_recorded_error_with_middleware_and_no_tool_call(agent: str) -> None:
    scope, task, transport, built = review_agent(
        [Call("read_ticket", '{"input": "forty-two"}'), Call("read_ticket", "not json"), "gave up"], agent=agent
    )
    outcome = await _run(built, task)
    assert outcome.status is RunStatus.INCOMPLETE
    assert outcome.text == "gave up"
    assert task.entries["read_ticket"] == 0
    results = tool_results(outcome.transcript)
    assert all(texts[0].startswith("error: arguments for 'read_ticket' do not bind") for texts in results.values())
    assert triples(outcome.events) == [
        ("ModelCall", "model", 1),
        ("Middleware", "read_ticket", 1),
        ("ModelCall", "model", 2),
        ("Middleware", "read_ticket", 2),
        ("ModelCall", "model", 3),
    ]


@asynctest
async def test_a_failing_body_is_a_recorded_error_and_still_counts() -> None:
    scope, task, transport, built = review_agent([Call("finish_review", {"input": 42}), "gave up"])
    outcome = await _run(built, task)
    assert outcome.status is RunStatus.INCOMPLETE
    (text,) = tool_results(outcome.transcript)["call-1"]
    assert text.startswith("error: ValueError")
    assert outcome.count("ToolCall") == 1
    assert task.entries["finish_review"] == 1


# -- middleware --------------------------------------------------------------------------


@asynctest
async def test_middleware_runs_outermost_first() -> None:
    order: list[str] = []

    def recorder(label: str):
        async def mw(invocation: ToolInvocation, next) -> object:
            order.append(f"{label}>{invocation.tool.name}")
            result = await next(invocation)
            order.append(f"{label}<")
            return result

        return mw

    scope, task, transport, built = review_agent([_read(42), "done"], middleware=(recorder("outer"), recorder("inner")))
    outcome = await _run(built, task)
    assert order == ["outer>read_ticket", "inner>read_ticket", "inner<", "outer<"]
    assert outcome.count("Middleware") == 0  # observe_middleware was not in this pipeline


@asynctest
async def test_observe_middleware_records_before_the_guard() -> None:
    scope, task, transport, built = review_agent(
        [_read(42), "done"], capabilities={"review.finish"}, middleware=(observe_middleware,)
    )
    outcome = await _run(built, task)
    assert outcome.status is RunStatus.PERMISSION_DENIED
    assert triples(outcome.events) == [
        ("ModelCall", "model", 1),
        ("Middleware", "read_ticket", 1),
        ("PermissionDenied", "read_ticket", 0),
    ]


@asynctest
async def test_middleware_sees_the_call_and_the_scope() -> None:
    seen: list[tuple[str, str, object]] = []

    async def spy(invocation: ToolInvocation, next) -> object:
        seen.append((invocation.call.id, invocation.call.arguments, invocation.scope))
        return await next(invocation)

    scope, task, transport, built = review_agent([_read(42), "done"], middleware=(spy, observe_middleware))
    await _run(built, task)
    assert seen == [("call-1", '{"input": 42}', scope)]


async def _one_arg(invocation) -> object:  # forgot `next`
    return None


async def _three_args(invocation, next, extra) -> object:
    return await next(invocation)


class _Counted:
    """A middleware object: an instance whose ``__call__`` takes ``(invocation, next)``."""

    def __init__(self) -> None:
        self.seen = 0

    async def __call__(self, invocation: ToolInvocation, next) -> object:
        self.seen += 1
        return await next(invocation)


@BOTH
@pytest.mark.parametrize(
    ("middleware", "message"),
    [
        ([42], r"middleware\[0\] is not callable \(int\)"),
        ((observe_middleware, "observe"), r"middleware\[1\] is not callable \(str\)"),
        (observe_middleware, r"not function; wrap one middleware in a tuple: middleware=\(observe_middleware,\)"),
        (None, "middleware is a sequence of middleware, outermost first, not NoneType"),
        ("observe_middleware", "not str"),
        ({observe_middleware}, "outermost first, not set"),
        ((_one_arg,), r"middleware\[0\] _one_arg\(invocation\) cannot be called as mw\(invocation, next\)"),
        ((observe_middleware, _three_args), r"middleware\[1\] _three_args\(invocation, next, extra\) cannot"),
    ],
    ids=["int", "str-step", "bare-function", "none", "str", "set", "one-arg", "three-args"],
)
def test_bad_middleware_is_a_user_error_when_the_agent_is_made(agent: str, middleware: object, message: str) -> None:
    with pytest.raises(UserError, match=message):
        review_agent([_read(42), "done"], agent=agent, middleware=middleware)


@asynctest
async def test_a_middleware_object_and_a_generator_of_middleware_are_accepted() -> None:
    counted = _Counted()
    pipeline = (m for m in (counted, observe_middleware))
    scope, task, transport, built = review_agent([_read(42), "done"], middleware=pipeline)
    outcome = await _run(built, task)
    assert built.middleware == (counted, observe_middleware)
    assert counted.seen == 1 and outcome.count("Middleware") == 1


@BOTH
def test_a_name_that_is_not_a_str_is_a_user_error(agent: str) -> None:
    with pytest.raises(UserError, match="name is the agent's name \\(a str\\), not int"):
        review_agent([], agent=agent, name=42)


@BOTH
@pytest.mark.parametrize("value", ["800", 1.5, True, 0, -1])
def test_a_max_output_tokens_that_is_not_a_positive_int_is_a_user_error(agent: str, value: object) -> None:
    # was: "800" and True quietly became 800 and 1, 0 and -1 went on the wire, 1.5 failed mid-run
    with pytest.raises(UserError, match=f"max_output_tokens is an int >= 1 \\(or None for no cap\\), not {value!r}"):
        review_agent([], agent=agent, max_output_tokens=value)


@BOTH
@pytest.mark.parametrize("value", [None, 1, 800])
def test_max_output_tokens_reaches_the_request(agent: str, value: int | None) -> None:
    scope, task, transport, built = review_agent(["done"], agent=agent, max_output_tokens=value)
    asyncio.run(_run(built, task))
    assert transport.requests[0].max_output_tokens == value


@asynctest
async def test_observe_middleware_called_with_the_wrong_arguments_is_a_user_error() -> None:
    async def next_step(invocation) -> str:
        return "ran"

    scope, task, transport, built = review_agent([])
    with pytest.raises(UserError, match=r"observe_middleware\(invocation, next\).*got \(str, function\)"):
        await observe_middleware("read_ticket", next_step)  # type: ignore[arg-type]
    call = ToolCall(id="c1", name="read_ticket", arguments='{"input": 42}')
    invocation = ToolInvocation(call, built.tools[0], scope)
    with pytest.raises(UserError, match=r"got \(ToolInvocation, NoneType\)"):
        await observe_middleware(invocation, None)  # type: ignore[arg-type]
    with pytest.raises(UserError, match=r"names a tool by its name \(a str\), not int"):
        scope.observe_middleware(42)  # type: ignore[arg-type]
    assert scope.events == ()  # nothing was recorded


# -- harness -----------------------------------------------------------------------------

OPTIONAL = [
    "todo_tracking",
    "agent_modes",
    "file_memory",
    "skill_discovery",
    "web_search",
    "tool_auto_approval",
    "shell",
    "shared_file_store",
    "background_agents",
    "external_loop_evaluator",
    "compaction",
]


def test_harness_describe_lists_every_capability_off_but_telemetry() -> None:
    *_, built = review_agent([], agent="harness")
    lines = built.describe()
    assert lines[0].startswith("agent: harness")
    start = next(i for i, line in enumerate(lines) if line.startswith("harness capabilities: "))
    end = next(i for i in range(start + 1, len(lines) + 1) if i == len(lines) or not lines[i].startswith("  "))
    assert all(len(line) <= 88 for line in lines[start:end])  # wrapped at spaces, never mid-word
    listing = " ".join(" ".join(lines[start:end]).split())
    items = dict(item.split("=", 1) for item in listing.removeprefix("harness capabilities: ").split(", "))
    on = "on (control events; OpenTelemetry spans when a tracer provider is set)"  # says what "on" means
    assert items == {**{name: "off" for name in OPTIONAL}, "telemetry": on}


def test_the_harness_lists_every_component_the_seed_leaves_out() -> None:
    # The seed's composition switches off todo tracking, agent modes, file memory, skill
    # discovery, web search and permanent tool auto-approval, and configures no shell, no shared
    # file store, no background agent, no external loop evaluator and no compaction window.
    assert list(HarnessCapabilities.model_fields) == [*OPTIONAL, "telemetry"]


def test_simple_describe_has_no_harness_line() -> None:
    *_, built = review_agent([], agent="simple")
    assert built.describe()[0].startswith("agent: simple")
    assert not any("harness" in line for line in built.describe())


@pytest.mark.parametrize("name", OPTIONAL)
def test_enabling_an_optional_capability_is_a_user_error(name: str) -> None:
    with pytest.raises(UserError, match=name):
        HarnessCapabilities(**{name: True})


def test_an_unknown_capability_is_refused() -> None:
    with pytest.raises(Exception, match="sandbox"):
        HarnessCapabilities(sandbox=False)


@BOTH
def test_a_tool_from_another_scope_is_refused(agent: str) -> None:
    mine, other = ExecutionScope(), ExecutionScope()
    foreign = other.tool("echo", "lab.read", _echo)
    cls = HarnessAgent if agent == "harness" else SimpleAgent
    with pytest.raises(UserError, match="another scope"):
        cls(CountingClient(ScriptedTransport([]), mine), [foreign], instructions="test")


def test_two_tools_with_one_name_are_refused() -> None:
    scope = ExecutionScope()
    tool = scope.tool("echo", "lab.read", _echo)
    with pytest.raises(UserError, match="echo"):
        SimpleAgent(CountingClient(ScriptedTransport([]), scope), [tool, tool], instructions="test")
