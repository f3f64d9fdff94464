"""What a tool body may be, and how every call of it settles (docs/guarantees.md, *Limits are exact*; issue 11).

* A table of callable shapes: each is either run in a defined way (sync in a
  daemon thread, async awaited, an awaitable returned by a sync callable
  awaited) or refused at registration with :class:`ToolDefinitionError`.
* A table of exceptions a sync body can raise: each settles its call, in a
  run, in direct ``ainvoke``, in ``invoke`` and in ``invoke`` inside a
  running loop (as in Jupyter); nothing hangs.
* ``refused`` means refused by the guard before the body; a result that
  cannot become text is that call's error; the fixture's raw bodies are private.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

import pytest
from reliability_kit import CAP, build, go, results

import labkit
from labkit import (
    Call,
    CapabilitiesError,
    CountingClient,
    ExecutionScope,
    Limits,
    LimitsError,
    RunHalted,
    RunStatus,
    ScopeStateError,
    ScriptedTransport,
    SimpleAgent,
    StopReason,
    ToolBodyError,
    ToolDefinitionError,
    run_agent,
)

# -- callable shapes -------------------------------------------------------------------------


def _sync(x: int) -> str:
    """Sync function."""
    return f"sync {x}"


async def _async(x: int) -> str:
    """Async function."""
    return f"async {x}"


async def _async_two(x: int, suffix: str) -> str:
    return f"async {x}{suffix}"


class _Methods:
    def sync(self, x: int) -> str:
        return f"method {x}"

    async def asynchronous(self, x: int) -> str:
        return f"async method {x}"

    @staticmethod
    def static(x: int) -> str:
        return f"static {x}"

    @classmethod
    def klass(cls, x: int) -> str:
        return f"classmethod {x}"


class _SyncCall:
    def __call__(self, x: int) -> str:
        return f"sync call {x}"


class _AsyncCall:
    async def __call__(self, x: int) -> str:
        return f"async call {x}"


def _sync_wrapper_of_async(x: int) -> Any:  # declared sync, returns a coroutine
    return _async(x)


@functools.wraps(_async)
def _wraps_async(*args: Any, **kwargs: Any) -> Any:  # a decorator that forgot to be async
    return _async(*args, **kwargs)


def _generator(x: int) -> Any:
    yield x


async def _async_generator(x: int) -> Any:
    yield x


class _GeneratorCall:
    def __call__(self, x: int) -> Any:
        yield x


class _Model:
    def __init__(self, x: int) -> None:
        self.x = x


RUN = {
    "function": (_sync, "sync 7"),
    "async function": (_async, "async 7"),
    "bound method": (_Methods().sync, "method 7"),
    "async bound method": (_Methods().asynchronous, "async method 7"),
    "staticmethod": (_Methods.static, "static 7"),
    "classmethod": (_Methods.klass, "classmethod 7"),
    "partial of async": (functools.partial(_async_two, suffix="!"), "async 7!"),
    "partial of sync": (functools.partial(_Methods.sync, _Methods()), "method 7"),
    "object with sync __call__": (_SyncCall(), "sync call 7"),
    "object with async __call__": (_AsyncCall(), "async call 7"),
    "sync returning a coroutine": (_sync_wrapper_of_async, "async 7"),
    "functools.wraps around async": (_wraps_async, "async 7"),
    "lambda with annotations": (
        functools.update_wrapper(lambda x: f"lambda {x}", _sync, assigned=("__annotations__",), updated=()),
        "lambda 7",
    ),
}

REFUSE = {
    "class": (_Model, "a class is not a tool body"),
    "generator function": (_generator, "generator function"),
    "async generator function": (_async_generator, "async generator function"),
    "object whose __call__ is a generator": (_GeneratorCall(), "generator function"),
    "lambda without annotations": (lambda x: x, "needs a type annotation"),
    "builtin": (len, "positional-only"),
    "builtin without signature": (print, "*args/**kwargs"),
    "not callable": (42, "must be callable"),
    "*args": (lambda *xs: xs, "*args/**kwargs"),
}


@pytest.mark.parametrize("shape", list(RUN))
@pytest.mark.parametrize("way", ["run", "ainvoke", "invoke", "invoke in a loop"])
def test_every_accepted_body_shape_runs_its_code(shape: str, way: str) -> None:
    body, expected = RUN[shape]
    scope = ExecutionScope(Limits(), {CAP})
    tool = scope.tool("t", CAP, body)
    assert list(tool.json_schema()["properties"]) == ["x"]  # a partial's fixed keyword is not an argument
    if way == "run":
        agent = SimpleAgent(
            CountingClient(ScriptedTransport([Call("t", {"x": 7}, id="c"), "done"]), scope), [tool], instructions="t"
        )
        outcome = asyncio.run(run_agent(agent, "go", is_complete=lambda: True))
        assert results(outcome) == {"c": [expected]}
        assert outcome.status is RunStatus.COMPLETED
    elif way == "ainvoke":
        assert asyncio.run(tool.ainvoke({"x": 7})) == expected
    elif way == "invoke":
        assert tool.invoke({"x": 7}) == expected
    else:

        async def in_a_loop() -> Any:
            return tool.invoke({"x": 7})

        assert asyncio.run(in_a_loop()) == expected
    assert scope.usage.tool_calls == 1


@pytest.mark.parametrize("shape", list(REFUSE))
def test_a_body_that_cannot_run_as_a_tool_is_refused_at_registration(shape: str) -> None:
    body, fragment = REFUSE[shape]
    scope = ExecutionScope(Limits(), {CAP})
    with pytest.raises(ToolDefinitionError, match=fragment.replace("*", r"\*")):
        scope.tool("t", CAP, body)
    assert scope.tools == () and scope.events == ()


def test_a_body_returning_a_generator_is_that_calls_error_and_the_run_goes_on() -> None:
    def hidden(x: int) -> Any:  # not a generator function, but gives one
        return (i for i in range(x))

    agent, transport, scope = build([Call("hidden", {"x": 2}, id="c"), "done"], {"hidden": hidden})
    outcome = asyncio.run(go(agent))
    (text,) = results(outcome)["c"]
    assert text.startswith("error: ToolBodyError: the body of 'hidden' returned a generator")
    assert outcome.status is RunStatus.INCOMPLETE and transport.calls == 2
    assert scope.usage.tool_calls == 1  # admitted: the attempt counts


# -- every exception a sync body raises settles its call ----------------------------------------


class _Custom(BaseException):
    pass


class _Plain(Exception):
    pass


RAISED = {
    "StopIteration": (StopIteration("s"), ToolBodyError),
    "KeyboardInterrupt": (KeyboardInterrupt("k"), ToolBodyError),
    "SystemExit": (SystemExit(3), ToolBodyError),
    "GeneratorExit": (GeneratorExit(), ToolBodyError),
    "a BaseException subclass": (_Custom("c"), ToolBodyError),
    "an Exception": (_Plain("p"), _Plain),
    "RuntimeError": (RuntimeError("r"), RuntimeError),
}


def _raising_body(exc: BaseException) -> Any:
    def body(x: int) -> str:
        raise exc

    return body


@pytest.mark.parametrize("name", list(RAISED))
def test_any_exception_of_a_sync_body_is_an_error_result_in_a_run(name: str) -> None:
    exc, expected = RAISED[name]
    agent, transport, scope = build([Call("boom", {"x": 1}, id="c"), "done"], {"boom": _raising_body(exc)})
    outcome = asyncio.run(asyncio.wait_for(go(agent), 10))  # a hang fails here instead of waiting out the deadline
    (text,) = results(outcome)["c"]
    assert text.startswith(f"error: {expected.__name__}:")
    assert outcome.status is RunStatus.INCOMPLETE  # the run went on to its next model call
    assert transport.calls == 2 and scope.usage.tool_calls == 1


@pytest.mark.parametrize("name", list(RAISED))
@pytest.mark.parametrize("way", ["ainvoke", "invoke in a loop"])
def test_any_exception_of_a_sync_body_settles_a_direct_call(name: str, way: str) -> None:
    exc, expected = RAISED[name]
    tool = ExecutionScope(Limits(), {CAP}).tool("boom", CAP, _raising_body(exc))

    async def call() -> Any:
        if way == "ainvoke":
            return await tool.ainvoke({"x": 1})
        return tool.invoke({"x": 1})  # as in Jupyter: the body runs on a private loop, in a thread

    with pytest.raises(expected) as info:
        asyncio.run(asyncio.wait_for(call(), 10))
    if expected is ToolBodyError:
        assert info.value.__cause__ is exc


@pytest.mark.parametrize("name", ["StopIteration", "an Exception", "RuntimeError"])
def test_a_sync_body_called_from_plain_code_raises_in_the_calling_thread(name: str) -> None:
    exc, expected = RAISED[name]
    tool = ExecutionScope(Limits(), {CAP}).tool("boom", CAP, _raising_body(exc))
    with pytest.raises(expected):
        tool.invoke({"x": 1})


def test_an_async_body_raising_a_base_exception_settles_its_call() -> None:
    async def body(x: int) -> str:
        raise SystemExit(2)

    agent, transport, _ = build([Call("boom", {"x": 1}, id="c"), "done"], {"boom": body})
    outcome = asyncio.run(go(agent))
    assert results(outcome)["c"][0].startswith("error: ToolBodyError: the body of 'boom' raised SystemExit")
    assert transport.calls == 2


# -- results that cannot become text -------------------------------------------------------------


class _Unprintable:
    def __str__(self) -> str:
        raise ValueError("no text for you")


def test_a_result_whose_str_raises_is_that_calls_error_and_the_run_goes_on() -> None:
    def body(x: int) -> Any:
        return _Unprintable()

    batch = [Call("odd", {"x": 1}, id="a"), Call("odd", {"x": 2}, id="b")]
    agent, transport, scope = build([batch, "done"], {"odd": body}, limits=Limits(repetitions=2))
    outcome = asyncio.run(go(agent))
    by_id = results(outcome)
    assert {k: len(v) for k, v in by_id.items()} == {"a": 1, "b": 1}
    assert all(texts[0] == "error: ValueError: no text for you" for texts in by_id.values())
    assert outcome.status is RunStatus.INCOMPLETE and transport.calls == 2
    assert scope.usage.tool_calls == 2


# -- refused means refused before the body ---------------------------------------------------


@pytest.mark.parametrize("concurrent", [False, True], ids=["in-order", "concurrent"])
def test_a_refusal_inside_an_admitted_body_is_not_a_refusal_of_that_call(concurrent: bool) -> None:
    tools: dict[str, labkit.GuardedTool] = {}
    entered: list[int] = []

    async def outer(x: int) -> str:
        entered.append(x)
        return await tools["outer"].ainvoke({"x": x})  # the same call again: refused RepeatedCall

    agent, transport, scope = build([Call("outer", {"x": 1}, id="o"), "never"], {"outer": outer}, concurrent=concurrent)
    tools.update({t.name: t for t in agent.tools})
    outcome = asyncio.run(go(agent))
    assert outcome.status is RunStatus.REPEATED_CALL
    assert entered == [1]
    (text,) = results(outcome)["o"]
    assert not text.startswith("refused")  # the outer call was admitted and its body ran
    assert text.startswith("cancelled:")
    assert scope.usage.tool_calls == 1


def test_a_direct_call_whose_body_is_refused_inside_reports_refused_false() -> None:
    holder: dict[str, labkit.GuardedTool] = {}

    def body(x: int) -> int:
        return holder["t"].invoke({"x": x})  # same signature: refused inside

    holder["t"] = ExecutionScope(Limits(tool_calls=5), {CAP}).tool("t", CAP, body)
    with pytest.raises(RunHalted) as info:
        holder["t"].invoke({"x": 1})
    assert info.value.reason is StopReason.REPEATED_CALL and info.value.refused is False
    assert isinstance(info.value.__cause__, RunHalted) and info.value.__cause__.refused is True


# -- the fixture's raw bodies are private ------------------------------------------------------


def test_the_review_fixture_exposes_no_raw_body() -> None:
    task = labkit.ReviewTask()
    public = [name for name in dir(task) if not name.startswith("_")]
    assert "read_ticket" not in public and "finish_review" not in public
    for name in public:
        value = getattr(task, name)
        assert not asyncio.iscoroutinefunction(value), name
    scope = ExecutionScope(Limits(), set())  # the forbidden scenario: nothing granted
    read, finish = task.tools(scope)
    with pytest.raises(RunHalted) as info:
        read.invoke({"input": 42})
    assert info.value.reason is StopReason.PERMISSION_DENIED
    assert (task.read, task.reads, task.entries["read_ticket"]) == (False, 0, 0)


# -- validation at the door ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"name": 42}, "a tool name is a non-empty str"),
        ({"name": ""}, "a tool name is a non-empty str"),
        ({"capability": ["ticket.read"]}, "a capability is a non-empty str"),
        ({"capability": None}, "a capability is a non-empty str"),
        ({"description": 3}, "a description is a str"),
    ],
)
def test_a_tool_with_arguments_of_the_wrong_type_is_refused(kwargs: dict[str, Any], fragment: str) -> None:
    scope = ExecutionScope(Limits(), {CAP})
    given = {"name": "t", "capability": CAP, "body": _sync, **kwargs}
    with pytest.raises(ToolDefinitionError, match=fragment):
        scope.tool(given.pop("name"), given.pop("capability"), given.pop("body"), **given)
    assert scope.tools == ()


@pytest.mark.parametrize(
    ("capabilities", "fragment"),
    [
        ("ticket.read", "not one string"),
        ({"ticket.read": False}, "not a mapping"),
        ({"ticket.read": True}, "not a mapping"),
        (42, "not int"),
        (["ticket.read", 3], "not 3"),
        ([""], "non-empty str"),
        ([["ticket.read"]], "non-empty str"),
    ],
)
def test_capabilities_that_are_not_a_collection_of_names_are_refused(capabilities: Any, fragment: str) -> None:
    with pytest.raises(CapabilitiesError, match=fragment):
        ExecutionScope(Limits(), capabilities)


@pytest.mark.parametrize(
    ("limits", "field"),
    [
        (Limits.model_construct(deadline_s=float("nan")), "deadline_s"),
        (Limits.model_construct(deadline_s=float("inf")), "deadline_s"),
        (Limits.model_construct(model_calls=-1), "model_calls"),
        (Limits.model_construct(tool_calls="3"), "tool_calls"),
        (Limits.model_construct(repetitions=True), "repetitions"),
        ({"deadline_s": -1}, "deadline_s"),
        ({"tool_call": 3}, "tool_call"),
    ],
)
def test_limits_are_validated_at_the_door_of_a_scope_and_a_run(limits: Any, field: str) -> None:
    with pytest.raises(LimitsError, match=field):
        ExecutionScope(limits, {CAP})
    with pytest.raises(LimitsError, match=field):
        labkit.run("complete", limits=limits)
    with pytest.raises(LimitsError, match="not int"):
        ExecutionScope(5, {CAP})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda a: run_agent("agent", "go", is_complete=lambda: True), "agent must be"),  # type: ignore[arg-type]
        (lambda a: run_agent(a, 42, is_complete=lambda: True), "prompt"),  # type: ignore[arg-type]
        (lambda a: run_agent(a, "go", is_complete=True), "is_complete"),  # type: ignore[arg-type]
    ],
)
def test_run_agent_refuses_arguments_of_the_wrong_type_and_leaves_the_scope_fresh(call: Any, fragment: str) -> None:
    agent, _, scope = build(["done"], {})
    with pytest.raises(labkit.UserError, match=fragment):
        asyncio.run(call(agent))
    assert asyncio.run(go(agent)).status is RunStatus.INCOMPLETE  # the scope still serves its one run


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"concurrent_tool_calls": "yes"}, "concurrent_tool_calls"),
        ({"stream": 1}, "stream"),
        ({"max_iterations": -1}, "max_iterations"),
        ({"instructions": None}, "instructions"),
    ],
)
def test_an_agent_refuses_options_of_the_wrong_type(options: dict[str, Any], fragment: str) -> None:
    scope = ExecutionScope(Limits(), {CAP})
    given = {"instructions": "t", **options}
    with pytest.raises(labkit.UserError, match=fragment):
        SimpleAgent(CountingClient(ScriptedTransport([]), scope), [], **given)
    with pytest.raises(labkit.UserError, match="GuardedTool"):
        SimpleAgent(CountingClient(ScriptedTransport([]), scope), [_sync], instructions="t")  # type: ignore[list-item]


# -- lifecycle: only the refused caller is affected ---------------------------------------------


def test_a_second_run_on_a_busy_scope_is_refused_and_the_first_run_is_unharmed() -> None:
    async def scenario() -> tuple[labkit.RunOutcome, ScopeStateError]:
        gate = asyncio.Event()

        class Slow:
            name = "slow"

            async def send(self, request: labkit.ChatRequest) -> Any:
                await gate.wait()
                yield labkit.ChatChunk(text="done")

        scope = ExecutionScope(Limits(), {CAP})
        first = SimpleAgent(CountingClient(Slow(), scope), [], instructions="t")
        second = SimpleAgent(CountingClient(Slow(), scope), [], instructions="t")
        run = asyncio.ensure_future(run_agent(first, "go", is_complete=lambda: True))
        await asyncio.sleep(0.01)
        with pytest.raises(ScopeStateError) as info:
            await run_agent(second, "go", is_complete=lambda: True)
        gate.set()
        return await run, info.value

    outcome, refused = asyncio.run(scenario())
    assert "exactly one run" in str(refused)
    assert outcome.status is RunStatus.COMPLETED and outcome.text == "done"
    assert [e.kind for e in outcome.events] == ["ModelCall"]


def test_a_finished_scope_refuses_a_new_run() -> None:
    agent, _, _ = build(["done"], {})
    assert asyncio.run(go(agent)).status is RunStatus.INCOMPLETE
    with pytest.raises(ScopeStateError):
        asyncio.run(go(agent))


# -- booleans are never numbers, at any depth (docs/guarantees.md, *Signatures*): a generated table --------------------

import itertools  # noqa: E402
import json  # noqa: E402
from collections.abc import Mapping, Sequence  # noqa: E402
from decimal import Decimal  # noqa: E402
from typing import Annotated, Literal, Optional, Union  # noqa: E402

from pydantic import Field, PositiveInt  # noqa: E402

_WRAPPERS: dict[str, tuple[Any, Any]] = {  # name: (wrap the annotation, wrap a JSON value to match)
    "Optional": (lambda t: Optional[t], lambda v: v),  # noqa: UP045
    "Union[str, _]": (lambda t: Union[str, t], lambda v: v),  # noqa: UP007
    "_ | None": (lambda t: t | None, lambda v: v),
    "Annotated": (lambda t: Annotated[t, Field(description="n")], lambda v: v),
    "list": (lambda t: list[t], lambda v: [v]),
    "tuple[_, ...]": (lambda t: tuple[t, ...], lambda v: [v, v]),
    "tuple[str, _]": (lambda t: tuple[str, t], lambda v: ["a", v]),
    "dict[str, _]": (lambda t: dict[str, t], lambda v: {"k": v}),
    "Sequence": (lambda t: Sequence[t], lambda v: [v]),
    "Mapping": (lambda t: Mapping[str, t], lambda v: {"k": v}),
    "frozenset": (lambda t: frozenset[t], lambda v: [v]),
}
_NUMBERS = {"int": int, "float": float, "Decimal": Decimal, "PositiveInt": PositiveInt, "Literal[1, 2]": Literal[1, 2]}


def _annotation_table(bases: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """Every base, alone and inside every chain of one or two wrappers: (id, annotation, value wrapper)."""
    table = []
    chains = [()] + [(w,) for w in _WRAPPERS] + list(itertools.product(_WRAPPERS, repeat=2))
    for (base_name, base), chain in itertools.product(bases.items(), chains):
        annotation, wrap = base, (lambda v: v)
        for name in chain:
            make, shape = _WRAPPERS[name]
            if name == "frozenset" and get_origin_name(annotation) in {"dict", "list", "Mapping", "Sequence"}:
                break  # an unhashable member type: not a valid annotation
            annotation, wrap = make(annotation), (lambda v, shape=shape, inner=wrap: shape(inner(v)))
        else:
            table.append(("/".join((*reversed(chain), base_name)), annotation, wrap))
    return table


def get_origin_name(annotation: Any) -> str:
    from typing import get_origin

    origin = get_origin(annotation)
    return getattr(origin, "__name__", "") if origin is not None else ""


NUMBER_TABLE = _annotation_table(_NUMBERS)
BOOL_TABLE = _annotation_table({"bool": bool})


def _tool_for(annotation: Any) -> labkit.GuardedTool:
    def body(n: Any) -> str:
        return "ok"

    body.__annotations__ = {"n": annotation, "return": str}
    return ExecutionScope(Limits(), {CAP}).tool("t", CAP, body)


def test_the_generated_tables_are_large_and_reach_two_levels() -> None:
    assert len(NUMBER_TABLE) > 500 and len(BOOL_TABLE) > 100
    assert any(name.count("/") == 2 for name, _, _ in NUMBER_TABLE)


@pytest.mark.parametrize(("name", "annotation", "wrap"), NUMBER_TABLE, ids=[row[0] for row in NUMBER_TABLE])
def test_true_never_binds_to_a_number_at_any_depth(name: str, annotation: Any, wrap: Any) -> None:
    tool = _tool_for(annotation)
    tool.bind(json.dumps({"n": wrap(1)}))  # the number itself binds
    for raw in (json.dumps({"n": wrap(True)}), {"n": wrap(True)}, {"n": wrap(False)}):
        with pytest.raises(labkit.ToolArgumentsError):
            tool.bind(raw)


@pytest.mark.parametrize(("name", "annotation", "wrap"), BOOL_TABLE, ids=[row[0] for row in BOOL_TABLE])
def test_a_bool_accepts_only_true_and_false_at_any_depth(name: str, annotation: Any, wrap: Any) -> None:
    tool = _tool_for(annotation)
    assert tool.bind(json.dumps({"n": wrap(True)})) is not None
    assert tool.bind({"n": wrap(False)}) is not None
    wrong = [json.dumps({"n": wrap(1)}), json.dumps({"n": wrap(0)}), {"n": wrap(1)}]
    if "Union[str" not in name:  # where a str is allowed, "true" is that str
        wrong.append(json.dumps({"n": wrap("true")}))
    for raw in wrong:
        with pytest.raises(labkit.ToolArgumentsError):
            tool.bind(raw)


def test_true_and_1_for_an_optional_int_are_not_one_signature() -> None:
    def body(n: int | None) -> str:  # noqa: UP007
        return "ok"

    tool = ExecutionScope(Limits(), {CAP}).tool("t", CAP, body)
    with pytest.raises(labkit.ToolArgumentsError, match="a boolean is not a number"):
        tool.invoke('{"n": true}')
    assert tool.invoke('{"n": 1}') == "ok"


# -- nothing keeps a finished run's bodies alive (issue 11; issue 13 item 3) ------------------------


@pytest.mark.parametrize("holds", ["closure", "bound method", "object with __call__", "partial"])
def test_a_finished_runs_body_and_what_it_captured_are_freed(holds: str) -> None:
    import gc
    import time
    import weakref

    class State:
        def read(self, x: int) -> str:
            return "read"

        def __call__(self, x: int) -> str:
            return "called"

    def make(state: State) -> Any:
        if holds == "closure":

            def body(x: int) -> str:
                return f"read {state}"

            return body
        if holds == "bound method":
            return state.read
        if holds == "object with __call__":
            return state
        return functools.partial(State.read, state)

    state = State()
    ref = weakref.ref(state)
    agent, _, scope = build([Call("t", {"x": 1}, id="c"), "done"], {"t": make(state)})
    outcome = asyncio.run(go(agent))
    assert outcome.status is RunStatus.INCOMPLETE and results(outcome)["c"][0].startswith(("read", "called"))
    del state, agent, scope, outcome
    # a sync body's worker thread lets go of the call a moment after the body returns: wait (bounded) for that
    waited_until = time.monotonic() + 10
    gc.collect()
    while ref() is not None and time.monotonic() < waited_until:
        time.sleep(0.01)
        gc.collect()
    assert ref() is None


# Defaults that Python calls equal are different defaults ---------------------------------


def _body_with_default(default: Any) -> Any:
    def body(n: Any = default) -> str:
        return repr(n)

    return body


@pytest.mark.parametrize(
    "defaults",
    [
        (1, True, 1.0),
        (0.0, -0.0, 0, False),
        (Decimal("1.0"), Decimal("1.00"), 1),
        ((1, 2), (True, 2), (1.0, 2)),
        (frozenset({1}), frozenset({True})),
    ],
    ids=["one", "zero", "decimal", "tuple", "frozenset"],
)
def test_closures_whose_defaults_are_equal_but_not_the_same_keep_their_own_default(defaults: tuple) -> None:
    """Argument models are shared by what a body is made of; ``1 == True == 1.0``, yet each body keeps its default."""
    seen = []
    for default in defaults:
        scope = ExecutionScope(Limits(), {CAP})
        tool = scope.tool("probe", CAP, _body_with_default(default))
        seen.append(tool.invoke({}))
    assert seen == [repr(d) for d in defaults]
