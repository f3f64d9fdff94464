"""The reference floor (issue 21): the smallest honest guarded loop, written by hand, without labkit's core.

It keeps every promise a ``complete`` run of labkit's harness keeps, in the plainest code:

* the four limits: model calls, tool attempts, attempts per signature, deadline (zero admits nothing);
* one lock around every check and reservation: an attempt is reserved (attempts + 1,
  signature + 1, ``ToolCall``) before its body runs, so concurrent calls never overshoot,
  and an admitted attempt counts even when its body fails;
* typed binding: one pydantic model per tool, built once per tool (not per run); a boolean is
  not a number; arguments that do not bind never reach the guard;
* the control events labkit records, in its order, as ``(kind, name, count)``: ``ModelCall``,
  ``Middleware`` (the lesson's observing step, before the guard), ``ToolCall``, the stop;
* the run in its own asyncio task: at the deadline the stop is recorded at once, the task is
  cancelled, given ``GRACE_S`` to unwind, then abandoned (its late result never reaches the
  transcript); the caller's cancellation propagates;
* typed messages (frozen pydantic models) and the same final status.

What it reads from labkit is scenario data only: the scripted steps, the tools' bodies,
the limits, the host state and its completion condition. tests/test_reference_floor.py holds
it to labkit's outcomes. It leaves out what no seed scenario exercises (so the tests do not
generate them): sync entry points, streaming, truncated replies, a configurable middleware
pipeline, stops recorded from another thread, retries, a body's or a provider's own
``CancelledError``; its signature is the tool name and the bound arguments' JSON with sorted
keys (labkit's exact decimals and booleans inside nested types are not reproduced); a sync
body runs on asyncio's default executor (a stuck one holds up the loop's shutdown, which
labkit's daemon workers do not).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, NamedTuple, get_type_hints

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError, create_model

from labkit import SCENARIOS, Scenario
from labkit.transports.scripted import Call, Fail, Hang, Reply, Say

NAME = "reference floor (hand-written guarded loop)"
STYLE = "async"
IMPORTS = ("asyncio", "pydantic")  # what a hand-written loop imports; labkit lends it scenario data only

GRACE_S = 0.1  # as labkit's ABANDON_GRACE_S
CANCELLED = "cancelled: the run stopped before this call finished"


class Event(NamedTuple):
    kind: str
    name: str
    count: int


class Halt(Exception):
    """The host stopped the run; ``refused``: before the body (else the body ran and its result is dropped)."""

    def __init__(self, reason: str, message: str, refused: bool = True) -> None:
        super().__init__(message)
        self.reason, self.refused = reason, refused


class ProviderDown(Exception):
    """The model endpoint cannot be reached."""


class ToolCall(BaseModel):
    model_config = ConfigDict(frozen=True)
    id: str
    name: str
    arguments: str


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)
    role: str
    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None


def _result(call_id: str, text: str) -> Message:
    return Message(role="tool", text=text, tool_call_id=call_id)


# -- tools: bound once per tool ------------------------------------------------------------


def _not_a_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("a boolean is not a number")
    return value


@dataclass(frozen=True)
class FloorTool:
    name: str
    capability: str
    body: Callable[..., Any]  # body(state, **arguments), as a labkit.Tool declares it
    model: type[BaseModel]
    is_async: bool
    spec: dict[str, Any]  # what the model is shown: name, description, JSON Schema of the arguments


_TOOLS: dict[Any, FloorTool] = {}


def _floor_tool(tool: Any) -> FloorTool:
    """The argument model of a scenario's tool, built on its first use and kept (a pydantic model per tool)."""
    made = _TOOLS.get(tool)
    if made is None:
        hints = get_type_hints(tool.body)
        fields: dict[str, Any] = {}
        for param in list(inspect.signature(tool.body).parameters.values())[1:]:  # the first takes the state
            kind = hints[param.name]
            if kind in (int, float):
                kind = Annotated[kind, BeforeValidator(_not_a_bool)]
            fields[param.name] = (kind, ... if param.default is param.empty else param.default)
        config = ConfigDict(extra="forbid", frozen=True)
        model = create_model(f"{tool.name}_arguments", __config__=config, **fields)
        description = tool.description or inspect.getdoc(tool.body) or tool.name
        spec = {"name": tool.name, "description": description, "parameters": model.model_json_schema()}
        made = _TOOLS[tool] = FloorTool(
            tool.name, tool.capability, tool.body, model, inspect.iscoroutinefunction(tool.body), spec
        )
    return made


# -- the scope: limits, counters, events, one lock -------------------------------------------


class Scope:
    def __init__(self, limits: Any, granted: frozenset[str]) -> None:
        self.model_limit, self.tool_limit = limits.model_calls, limits.tool_calls
        self.repetitions, self.granted = limits.repetitions, granted
        self.deadline_s = limits.deadline_s
        self.deadline_at = time.monotonic() + limits.deadline_s
        self.lock = threading.Lock()
        self.events: list[Event] = []
        self.model_calls = self.tool_calls = self.observed = 0
        self.signatures: dict[str, int] = {}
        self.stop: str | None = None
        self.finished = False

    def record_stop(self, reason: str, name: str, count: int) -> None:
        """The first stop wins; nothing is recorded once the run has finished. Call under the lock."""
        if self.stop is None and not self.finished:
            self.stop = reason
            self.events.append(Event(reason, name, count))

    def _halt(self, reason: str, name: str, count: int, message: str) -> None:
        self.record_stop(reason, name, count)
        raise Halt(self.stop or reason, message)

    def _check(self) -> None:
        if self.stop is not None:
            raise Halt(self.stop, f"the run was already stopped: {self.stop}")
        if self.finished:  # the caller cancelled (or the run ended): nothing more is admitted or recorded
            raise asyncio.CancelledError("the run has ended")
        if time.monotonic() >= self.deadline_at:
            self._halt("DeadlineExceeded", "run", self.tool_calls, f"deadline: {self.deadline_s:g} s passed")

    def check(self) -> None:
        with self.lock:
            self._check()

    def stop_now(self, reason: str, name: str) -> None:
        with self.lock:
            self.record_stop(reason, name, self.tool_calls if name == "run" else self.model_calls)

    def before_model_call(self) -> None:
        with self.lock:
            self._check()
            if self.model_calls >= self.model_limit:
                made, limit = self.model_calls, self.model_limit
                self._halt("ModelBudget", "model", made, f"model budget: {made} of {limit} model calls already made")
            self.model_calls += 1
            self.events.append(Event("ModelCall", "model", self.model_calls))

    def observe(self, name: str) -> None:
        with self.lock:
            self._check()
            self.observed += 1
            self.events.append(Event("Middleware", name, self.observed))

    def admit(self, tool: FloorTool, key: str) -> None:
        """Cancellation, permission, tool budget, repetition, in that order; then reserve. All under the lock."""
        with self.lock:
            self._check()
            admitted, name = self.tool_calls, tool.name
            if tool.capability not in self.granted:
                why = f"capability {tool.capability!r} is not granted for {name!r}"
                self._halt("PermissionDenied", name, admitted, why)
            if admitted >= self.tool_limit:
                why = f"tool budget: {admitted} of {self.tool_limit} tool attempts already admitted"
                self._halt("ToolBudget", name, admitted, why)
            seen = self.signatures.get(key, 0)
            if seen >= self.repetitions:
                why = f"repeated call: {name!r} with these arguments already had {seen} of {self.repetitions} attempts"
                self._halt("RepeatedCall", name, seen, why)
            self.tool_calls += 1
            self.signatures[key] = seen + 1
            self.events.append(Event("ToolCall", tool.name, self.tool_calls))

    def finish(self) -> tuple[Event, ...]:
        with self.lock:
            self.finished = True
            return tuple(self.events)


# -- the scripted model ----------------------------------------------------------------------


class Request(NamedTuple):
    messages: tuple[Message, ...]
    tools: tuple[dict[str, Any], ...]


async def _model(script: Any, number: int, request: Request) -> Message:
    """Model call ``number`` of a labkit script (its steps are data), as a typed assistant message."""
    step = script(number, request) if callable(script) else script[number - 1]
    if isinstance(step, Hang):
        await asyncio.get_running_loop().create_future()  # never answers; the run's cancellation ends it
    if isinstance(step, Fail):
        if isinstance(step.error, ConnectionError):
            raise ProviderDown(str(step.error))
        raise step.error
    if isinstance(step, (str, Say)):
        return Message(role="assistant", text=(step if isinstance(step, str) else step.text) or None)
    text, calls = (step.text, step.calls) if isinstance(step, Reply) else ("", step)
    if isinstance(calls, Call):
        made = (ToolCall(id=calls.id or f"call-{number}", name=calls.name, arguments=calls.text()),)
    else:
        made = tuple(
            ToolCall(id=c.id or f"call-{number}-{i}", name=c.name, arguments=c.text()) for i, c in enumerate(calls, 1)
        )
    return Message(role="assistant", text=text or None, tool_calls=made)


# -- the loop ------------------------------------------------------------------------------


async def _invoke(scope: Scope, tools: dict[str, FloorTool], state: Any, call: ToolCall) -> str:
    tool = tools.get(call.name)
    if tool is None:
        return f"error: unknown tool {call.name!r}; available tools: {', '.join(tools)}"
    scope.observe(tool.name)  # the Middleware event, before binding and the guard, as labkit's pipeline
    try:
        bound = tool.model.model_validate_json(call.arguments)
    except ValidationError as exc:
        detail = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors())
        return f"error: arguments for {tool.name!r} do not bind: {detail}"
    kwargs = dict(bound)
    scope.admit(tool, tool.name + ":" + json.dumps(bound.model_dump(mode="json"), sort_keys=True))
    try:
        if tool.is_async:
            value = await tool.body(state, **kwargs)
        else:
            value = await asyncio.to_thread(tool.body, state, **kwargs)
    except Halt as halt:  # a call the body made was refused: this attempt was admitted, not refused
        raise Halt(halt.reason, str(halt), refused=False) from halt
    except Exception as exc:  # the attempt still counts; the model reads the error
        return f"error: {type(exc).__name__}: {exc}"
    try:
        scope.check()  # the run may have stopped while the body ran: its result is dropped
    except Halt as halt:
        raise Halt(halt.reason, str(halt), refused=False) from None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


async def _calls(scope: Scope, tools: dict[str, FloorTool], state: Any, calls: Sequence[ToolCall], out: list) -> None:
    """One call after another; every call id gets exactly one result, whatever stops the run."""
    ids = Counter(c.id for c in calls)
    if len(ids) < len(calls):  # results are matched by id: none of these calls runs
        repeated = ", ".join(f"{i!r} x{n}" for i, n in ids.items() if n > 1)
        why = f"error: call ids repeat in this response ({repeated}); no call of it was run, "
        why += "send each call with its own id"
        out.extend(_result(i, why) for i in ids)
        return
    for index, call in enumerate(calls):
        try:
            out.append(_result(call.id, await _invoke(scope, tools, state, call)))
        except Halt as halt:
            out.append(_result(call.id, f"refused: {halt.reason}: {halt}" if halt.refused else CANCELLED))
            later = f"refused: {halt.reason}: the run was already stopped: {halt.reason}"
            out.extend(_result(c.id, later) for c in calls[index + 1 :])
            raise
        except BaseException:
            out.extend(_result(c.id, CANCELLED) for c in calls[index:])
            raise


async def _loop(scope: Scope, scenario: Scenario, tools: dict[str, FloorTool], state: Any, out: list) -> str | None:
    out += [Message(role="system", text=scenario.instructions), Message(role="user", text=scenario.prompt)]
    specs = tuple(t.spec for t in tools.values())
    for number in range(1, scope.model_limit + 2):  # the loop's own cap: the model budget stops first
        scope.before_model_call()
        reply = await _model(scenario.script, number, Request(tuple(out), specs))
        out.append(reply)
        if not reply.tool_calls:
            return reply.text
        await _calls(scope, tools, state, reply.tool_calls, out)
    return None


# -- the run: its own task, the deadline, abandonment ----------------------------------------


class Outcome(NamedTuple):
    status: str
    text: str | None
    events: tuple[Event, ...]
    transcript: tuple[Message, ...]
    state: Any


_abandoned: set[asyncio.Task[Any]] = set()  # kept referenced until they end; their late result is dropped


def _drop(task: asyncio.Task[Any]) -> None:
    _abandoned.discard(task)
    if not task.cancelled():
        task.exception()


async def _cancel_and_abandon(task: asyncio.Task[Any]) -> None:
    task.cancel()
    await asyncio.wait([task], timeout=GRACE_S)
    if not task.done():
        _abandoned.add(task)
        task.add_done_callback(_drop)


def _start(scenario: Scenario, limits: Any) -> tuple[Scope, Any, dict[str, FloorTool]]:
    """One run's scope, fresh host state and tools (each tool's model was built once, on its first run)."""
    return Scope(limits, scenario.capabilities), scenario.state(), {t.name: _floor_tool(t) for t in scenario.tools}


async def run(scenario: Scenario, limits: Any = None) -> Outcome:
    """Run ``scenario`` once (with its own limits unless ``limits`` is given) and classify the ending."""
    limits = scenario.limits if limits is None else limits
    scope, state, tools = _start(scenario, limits)
    transcript: list[Message] = []
    loop = asyncio.get_running_loop()
    stopped = loop.create_future()

    def wake(_: object = None) -> None:
        if not stopped.done():
            stopped.set_result(None)

    def deadline() -> None:
        scope.stop_now("DeadlineExceeded", "run")  # recorded at once: the unwinding finds the run stopped
        wake()

    timer = loop.call_later(limits.deadline_s, deadline)
    work = loop.create_task(_loop(scope, scenario, tools, state, transcript))
    work.add_done_callback(wake)
    try:
        await stopped
    except asyncio.CancelledError:  # the caller cancelled: the loop unwinds, the cancellation propagates
        scope.finish()  # the caller wins: no stop is recorded after it
        await _cancel_and_abandon(work)
        raise
    finally:
        timer.cancel()
    if not work.done():  # the deadline
        await _cancel_and_abandon(work)
    text = None
    if work.done() and not work.cancelled():
        error = work.exception()
        if error is None:
            text = work.result()
            with contextlib.suppress(Halt):
                scope.check()  # the deadline may have passed as the loop ended
        elif isinstance(error, ProviderDown):
            scope.stop_now("ProviderUnavailable", "model")
        elif not isinstance(error, Halt):
            raise error
    events = scope.finish()
    answered = list(transcript)  # an abandoned loop may still append: the run keeps what it had
    if not work.done():  # every call id of the last reply still gets its one result
        last = max((i for i, m in enumerate(answered) if m.tool_calls), default=None)
        if last is not None:
            done = {m.tool_call_id for m in answered[last + 1 :]}
            answered += [_result(c.id, CANCELLED) for c in answered[last].tool_calls if c.id not in done]
    status = scope.stop or ("Completed" if scenario.is_complete(state) else "Incomplete")
    return Outcome(status, None if scope.stop else text, events, tuple(answered), state)


def make():
    scenario = SCENARIOS["complete"]

    async def run_once():
        outcome = await run(scenario)
        model_calls = sum(1 for e in outcome.events if e.kind == "ModelCall")
        return outcome.state.entries, outcome.state.is_complete(), model_calls, outcome.text

    return run_once
