"""The agent loops: ``simple`` and ``harness`` over the same guarded tools
(chapter 2, *What the harness turns on — and off*).

Both run the same tool-calling loop: call the model through the counting
client; if the reply asks for tools, run each requested call through the
middleware pipeline and the tool's guard, append one result per call id,
and call the model again; stop when the reply asks for no tool (an empty
reply, with neither text nor tool call, ends the loop too).

The loop's own iteration cap is ``model_calls + 1``, so the scope's model
budget always stops first.

Several calls in one reply run **one after another** by default, as in the
seed's runtime (docs/guarantees.md, *One recorded result per requested call id*);
``concurrent_tool_calls=True`` runs them at once.
In both modes, after a halt no body starts, and every requested call id gets
exactly one result in the transcript: the body's result, ``error: ...`` (the
body or its result failed, or the arguments did not bind), ``refused: ...``
(refused before its body: by the guard, or by the run's stop already
recorded), or ``cancelled: ...`` (the run stopped while it ran, or before it
started). A reply whose call ids repeat is not run at all: each distinct id
gets one error result and the loop asks the model again. A reply cut at the
output-token cap (``Message.truncated``) is not run either: its calls may be
incomplete, so none reaches a guard; each gets a result saying the reply was
cut. A call naming no tool of the agent gets an error result and records
no event; ``RunOutcome.unknown_tool_requests`` lists such calls.

The harness differs only in what it composes around the loop, and it says
so: :attr:`HarnessAgent.capabilities` lists every optional capability, and
all of them are off.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import textwrap
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from ..core._machinery.abandon import cancel_and_abandon
from ..core._machinery.shapes import schema_text
from ..core.cancellation import cancellation_requests, run_cancelled
from ..core.errors import DuplicateToolError, RunHalted, ToolArgumentsError, UserError
from ..core.scope import ExecutionScope, GuardedTool
from ..transports.chat import ChatRequest, CountingClient, Message, ToolCall, ToolSpec, assemble

__all__ = [
    "HarnessAgent",
    "HarnessCapabilities",
    "Middleware",
    "SimpleAgent",
    "ToolInvocation",
    "observe_middleware",
]


@dataclass(frozen=True, slots=True)
class ToolInvocation:
    """What a middleware sees: the model's call, the tool it names and the scope."""

    call: ToolCall
    tool: GuardedTool
    scope: ExecutionScope


Next = Callable[[ToolInvocation], Awaitable[Any]]
Middleware = Callable[[ToolInvocation, Next], Awaitable[Any]]
"""``async def mw(invocation, next) -> result``: call ``await next(invocation)`` to go on."""


async def observe_middleware(invocation: ToolInvocation, next: Next) -> Any:
    """The lesson's middleware: check cancellation, record ``Middleware``, go on
    (chapter 8, *The middleware observes, the guard decides*).

    It runs before the guard, so a refused call shows a ``Middleware`` event
    and no ``ToolCall``. It observes; authorisation stays in the guard.

    Raises:
        UserError: ``invocation`` is not a :class:`ToolInvocation` or ``next``
            is not callable (it is called as a pipeline calls it: ``mw(invocation, next)``).
    """
    if not isinstance(invocation, ToolInvocation) or not callable(next):
        raise UserError(
            "observe_middleware is called as a pipeline calls a middleware: observe_middleware(invocation, next) "
            f"with a labkit.ToolInvocation and the next step; got ({type(invocation).__name__}, {type(next).__name__})"
        )
    invocation.scope.observe_middleware(invocation.tool.name)  # checks cancellation first, under the same lock
    return await next(invocation)


def _call_tool(invocation: ToolInvocation) -> Awaitable[Any]:
    return invocation.tool.ainvoke(invocation.call.arguments)  # the awaitable itself: no extra coroutine frame


_DEFAULT_MIDDLEWARE: tuple[Middleware, ...] = (observe_middleware,)
"""The pipeline an agent gets unless told otherwise: the lesson's observing middleware
(chapter 8, *The middleware observes, the guard decides*)."""


def _check_middleware(middleware: Any) -> tuple[Middleware, ...]:
    """The pipeline as a tuple, each step checked where it is given: a callable taking ``(invocation, next)``.

    Raises:
        UserError: ``middleware`` is not a sequence (a single middleware, ``None``,
            a str, a set: it has no order), or a step is not callable or cannot take
            two positional arguments.
    """
    if middleware is _DEFAULT_MIDDLEWARE:
        return middleware
    if isinstance(middleware, (str, bytes, Mapping, Set)) or not isinstance(middleware, Iterable):
        hint = f"; wrap one middleware in a tuple: middleware=({_label(middleware)},)" if callable(middleware) else ""
        raise UserError(
            f"middleware is a sequence of middleware, outermost first, not {type(middleware).__name__}{hint}"
        )
    steps = tuple(middleware)
    for index, step in enumerate(steps):
        if not callable(step):
            raise UserError(
                f"middleware[{index}] is not callable ({type(step).__name__}); a middleware is "
                "`async def mw(invocation, next)` that returns `await next(invocation)`"
            )
        try:
            signature = inspect.signature(step)
        except (TypeError, ValueError):  # no readable signature (some builtins): it is called as given
            continue
        try:
            signature.bind(None, None)
        except TypeError:
            raise UserError(
                f"middleware[{index}] {_label(step)}({', '.join(signature.parameters)}) "
                "cannot be called as mw(invocation, next)"
            ) from None
    return steps


def _label(value: Any) -> str:
    return str(getattr(value, "__qualname__", None) or type(value).__name__)


def _pipeline(middleware: Sequence[Middleware]) -> Next:
    handler: Next = _call_tool
    for mw in reversed(middleware):
        handler = _bind(mw, handler)
    return handler


def _bind(mw: Middleware, next: Next) -> Next:
    def step(invocation: ToolInvocation) -> Awaitable[Any]:
        return mw(invocation, next)  # the middleware's awaitable, awaited by the caller (one frame less per step)

    return step


def _as_text(value: Any) -> str:
    """A body's result as the text the model reads; raises whatever ``__str__`` raises."""
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return str(value)


class SimpleAgent:
    """A plain tool-calling loop bounded by its scope.

    Args:
        client: the counting client (its scope is the run's scope).
        tools: the guarded tools the model may ask for; all from ``client.scope``.
        instructions: the system message.
        max_iterations: the loop's own cap; defaults to ``model_calls + 1``.
        middleware: the tool-invocation pipeline, outermost first.
        stream: make streaming model calls instead of non-streaming ones.
        max_output_tokens: a per-call provider option (not a budget).
        concurrent_tool_calls: run the calls of one reply at once instead of
            one after another (the default, as in the seed;
            docs/guarantees.md, *One recorded result per requested call id*).

    Raises:
        UserError: a client that is not a :class:`~labkit.CountingClient`, a
            tool that is not a :class:`~labkit.GuardedTool` or belongs to
            another scope, two tools with one name, or an option of the wrong
            type (``max_iterations`` a negative or non-int, ``max_output_tokens``
            not an int >= 1 or None, a flag that is not a bool,
            ``name`` not a str); ``middleware`` that is not a sequence of
            callables each taking ``(invocation, next)`` (the message names the step).
    """

    kind: ClassVar[str] = "simple"

    def __init__(
        self,
        client: CountingClient,
        tools: Sequence[GuardedTool],
        *,
        instructions: str,
        max_iterations: int | None = None,
        middleware: Sequence[Middleware] = _DEFAULT_MIDDLEWARE,
        stream: bool = False,
        max_output_tokens: int | None = 800,
        name: str = "BoundedReviewer",
        concurrent_tool_calls: bool = False,
    ) -> None:
        if not isinstance(client, CountingClient):
            raise UserError(f"client must be a labkit.CountingClient around a transport, not {type(client).__name__}")
        if not isinstance(instructions, str):
            raise UserError(f"instructions is the system message (a str), not {type(instructions).__name__}")
        if not isinstance(name, str):
            raise UserError(f"name is the agent's name (a str), not {type(name).__name__}")
        if max_iterations is not None and (type(max_iterations) is not int or max_iterations < 0):
            raise UserError(f"max_iterations is an int >= 0 (or None for model_calls + 1), not {max_iterations!r}")
        if max_output_tokens is not None and (type(max_output_tokens) is not int or max_output_tokens < 1):
            raise UserError(f"max_output_tokens is an int >= 1 (or None for no cap), not {max_output_tokens!r}")
        for flag, value in (("stream", stream), ("concurrent_tool_calls", concurrent_tool_calls)):
            if not isinstance(value, bool):
                raise UserError(f"{flag} is True or False, not {value!r}")
        if not isinstance(tools, (tuple, list)) and (  # tuple and list first: the others are ABC checks
            isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Iterable)
        ):
            raise UserError(f"tools is a sequence of labkit.GuardedTool, not {type(tools).__name__}")
        self.client = client
        self.scope = client.scope
        self.name = name
        self.instructions = instructions
        self.max_iterations = self.scope.limits.model_calls + 1 if max_iterations is None else max_iterations
        self.stream = stream
        self.concurrent_tool_calls = concurrent_tool_calls
        self.max_output_tokens = max_output_tokens
        self.middleware = _check_middleware(middleware)
        self._tools: dict[str, GuardedTool] = {}
        for tool in tools:
            if not isinstance(tool, GuardedTool):
                raise UserError(f"a tool is a labkit.GuardedTool made by scope.tool(...), not {type(tool).__name__}")
            if tool._scope is not self.scope:
                raise UserError(f"tool {tool.name!r} belongs to another scope; make it with this run's scope")
            if tool.name in self._tools:
                raise DuplicateToolError(f"two tools are named {tool.name!r}")
            self._tools[tool.name] = tool
        self._specs = tuple(_spec(t) for t in self._tools.values())
        self._handler = _pipeline(self.middleware)

    @property
    def tools(self) -> tuple[GuardedTool, ...]:
        return tuple(self._tools.values())

    def describe(self) -> list[str]:
        """Header lines for the console: agent type and loop settings."""
        return [f"agent: {self.kind} ({self.name}, max_iterations={self.max_iterations})"]

    async def respond(self, prompt: str, transcript: list[Message]) -> str | None:
        """Run the loop for one user prompt, appending every message to ``transcript``.

        Returns:
            The text of the model's last reply (a claim, not a proof), or
            ``None`` if the loop's own iteration cap ended it.

        Raises:
            RunHalted: the scope stopped the run.
            ProviderUnavailable: the transport could not reach its endpoint.
            asyncio.CancelledError: the run was cancelled.
        """
        transcript.append(_system_message(self.instructions))
        transcript.append(_user_message(prompt))
        for _ in range(self.max_iterations):
            request = ChatRequest(
                messages=tuple(transcript),
                tools=self._specs,
                stream=self.stream,
                max_output_tokens=self.max_output_tokens,
            )
            if self.stream:
                reply = await assemble(self.client.stream(request))
            else:
                reply = await self.client.complete(request)
            transcript.append(reply)
            if not reply.tool_calls:
                return reply.text
            if reply.truncated:  # cut at the output-token cap: no call of it reaches a guard (docs/live.md)
                transcript.extend(_cut(call_id) for call_id in dict.fromkeys(c.id for c in reply.tool_calls))
                continue
            await self._invoke_all(reply.tool_calls, transcript)
        return None

    async def _invoke_one(self, call: ToolCall) -> Message:
        """One call through the pipeline and its guard; its one result (a halt or cancellation propagates)."""
        tool = self._tools.get(call.name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            return Message.tool_result(call.id, f"{UNKNOWN_TOOL} {call.name!r}; available tools: {known}")
        requests = cancellation_requests()
        try:
            value = await self._handler(ToolInvocation(call, tool, self.scope))
            text = _as_text(value)
        except ToolArgumentsError as exc:
            return Message.tool_result(call.id, f"error: {exc}")
        except RunHalted:
            raise
        except asyncio.CancelledError as exc:
            if run_cancelled(requests, self.scope.cancel_token):
                raise
            # Raised by the body (or a middleware) on its own: a failure of this call, not the
            # caller's cancellation (docs/guarantees.md, *Every stop has one name, and it is not relabelled*);
            # the attempt counted, the run goes on.
            return Message.tool_result(call.id, f"error: {_own_cancellation(exc)}")
        except Exception as exc:  # the body or its result failed; the model sees it and the attempt still counted
            return Message.tool_result(call.id, f"error: {type(exc).__name__}: {_safe_str(exc)}")
        return Message.tool_result(call.id, text)

    async def _invoke_all(self, calls: Sequence[ToolCall], transcript: list[Message]) -> None:
        repeated = _repeated_ids(calls)
        if repeated:
            # A result is matched to its call by id, so a response whose ids repeat cannot keep
            # "one result per requested id": none of its calls runs (nothing reaches a guard),
            # and each distinct id gets one error result; the loop goes on.
            error = _repeated_error(repeated)
            transcript.extend(Message.tool_result(call_id, error) for call_id in dict.fromkeys(c.id for c in calls))
            return
        if self.concurrent_tool_calls and len(calls) > 1:
            await self._invoke_concurrently(calls, transcript)
        else:
            await self._invoke_in_order(calls, transcript)

    async def _invoke_in_order(self, calls: Sequence[ToolCall], transcript: list[Message]) -> None:
        """One call after another (the default): after a halt, the calls left are refused unasked."""
        for index, call in enumerate(calls):
            try:
                transcript.append(await self._invoke_one(call))
            except RunHalted as halt:
                transcript.append(_refused(call, halt))
                stopped = RunHalted(halt.reason, f"the run was already stopped: {halt.reason.value}")
                transcript.extend(_refused(later, stopped) for later in calls[index + 1 :])
                raise
            except BaseException:  # cancellation (or an error outside the protocol): every id still gets its one result
                transcript.extend(_cancelled(later) for later in calls[index:])
                raise

    async def _invoke_concurrently(self, calls: Sequence[ToolCall], transcript: list[Message]) -> None:
        """All calls at once; a halt cancels the calls still running (each abandoned after a short grace)."""
        tasks = [asyncio.ensure_future(self._invoke_one(call)) for call in calls]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        finally:
            await cancel_and_abandon(*(task for task in tasks if not task.done()))
            halt: RunHalted | None = None
            failure: BaseException | None = None
            for call, task in zip(calls, tasks, strict=True):
                if not task.done() or task.cancelled():
                    transcript.append(_cancelled(call))
                elif isinstance(error := task.exception(), RunHalted):
                    halt = halt or error
                    transcript.append(_refused(call, error))
                elif error is not None:
                    failure = failure or error
                    transcript.append(_cancelled(call))
                else:
                    transcript.append(task.result())
        if failure is not None:
            raise failure
        if halt is not None:
            raise halt


def _spec(tool: GuardedTool) -> ToolSpec:
    """The spec shown to the model; shared between runs (read-only schema) for labkit's own tools."""
    if type(tool) is GuardedTool:
        return _shared_spec(tool.name, tool.description, tool.arguments_model)
    return ToolSpec.of(tool)


@lru_cache(maxsize=512)
def _shared_spec(name: str, description: str, arguments_model: type[BaseModel]) -> ToolSpec:
    # Same name, description and argument model give the same spec. Validated once as
    # ToolSpec.of would; the stored schema is then frozen (a read-only dict, nested values too),
    # so neither a run nor a transport can change what another run shows the model.
    from ..core._machinery.frozen import freeze  # first spec only; not needed to import labkit

    checked = ToolSpec(name=name, description=description, parameters=json.loads(schema_text(arguments_model)))
    return ToolSpec.model_construct(
        name=checked.name, description=checked.description, parameters=freeze(checked.parameters)
    )


# Messages are frozen values: the same instructions and prompt, run after run, can share one.
_system_message = lru_cache(maxsize=64)(Message.system)
_user_message = lru_cache(maxsize=64)(Message.user)


def _repeated_ids(calls: Sequence[ToolCall]) -> dict[str, int]:
    seen: dict[str, int] = {}
    for call in calls:
        seen[call.id] = seen.get(call.id, 0) + 1
    return {call_id: n for call_id, n in seen.items() if n > 1}


def _repeated_error(repeated: dict[str, int]) -> str:
    ids = ", ".join(f"{i!r} x{n}" for i, n in repeated.items())
    return f"{REPEATED_IDS} ({ids}); no call of it was run, send each call with its own id"


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # an exception whose own __str__ fails
        return f"<{type(exc).__name__} whose message cannot be shown>"


UNKNOWN_TOOL = "error: unknown tool"
"""How the result of a call naming no tool of the agent starts (no guard, no body, no event)."""

CUT = "error: the reply was cut at the output-token cap"
"""How the result of each call of a reply cut at the cap starts (none of them ran)."""

UNBOUND = "error: arguments for "
"""How the result of a call whose arguments did not bind starts (a :class:`~labkit.ToolArgumentsError`:
it never reached the guard, so it records no ``ToolCall`` event; chapter 4, *The guard, step by step*)."""

REPEATED_IDS = "error: call ids repeat in this response"
"""How the result of each call id of a reply whose ids repeat starts (no call of that reply ran)."""

_NOT_RUN = {UNKNOWN_TOOL: "unknown tool", UNBOUND: "unbound", CUT: "cut", REPEATED_IDS: "repeated ids"}


def result_kind(text: str | None) -> str:
    """How the loop answered one requested call, read from its result text (the one place that reads it).

    Returns:
        ``"unknown tool"``, ``"unbound"`` (arguments that did not bind), ``"cut"`` (a reply cut at
        the output-token cap), ``"repeated ids"``: the call reached no guard and records no event;
        ``"refused"``: refused before its body (by the guard, or by the stop already recorded);
        ``"cancelled"``: the run stopped before it finished (admitted or not); ``"failed"``: admitted,
        its body (or its result) failed; ``"result"``: admitted, its body returned; ``"none"``: no
        result kept.
    """
    if text is None:
        return "none"
    for prefix, kind in _NOT_RUN.items():
        if text.startswith(prefix):
            return kind
    if text.startswith("refused:"):
        return "refused"
    if text.startswith("cancelled:"):
        return "cancelled"
    return "failed" if text.startswith("error:") else "result"


def _cut(call_id: str) -> Message:
    return Message.tool_result(
        call_id, f'{CUT} (finish_reason "length") before this call was complete; it was not run, ask again'
    )


def _refused(call: ToolCall, halt: RunHalted) -> Message:
    """``refused:`` only for a call refused before its body; an admitted call the run stopped is ``cancelled:``."""
    if not halt.refused:  # admitted and run, but the run stopped meanwhile: not a refusal
        return _cancelled(call)
    return Message.tool_result(call.id, f"refused: {halt.reason.value}: {halt}")


def _own_cancellation(exc: asyncio.CancelledError) -> str:
    return f"CancelledError raised by the tool itself ({str(exc) or 'no message'}); the run was not cancelled"


def _answer_open_calls(transcript: list[Message]) -> None:
    """Give every call id of the last reply that has no result yet one ``cancelled`` result.

    Used when the run abandons its loop (docs/guarantees.md, *Cancellation reaches the transport and the bodies*):
    the calls it was running never report, yet each requested id gets exactly one result.
    """
    for index in range(len(transcript) - 1, -1, -1):
        message = transcript[index]
        if message.tool_calls:
            answered = {m.tool_call_id for m in transcript[index + 1 :]}
            transcript.extend(_cancelled(call) for call in message.tool_calls if call.id not in answered)
            return


def _cancelled(call: ToolCall) -> Message:
    return Message.tool_result(call.id, "cancelled: the run stopped before this call finished")


class HarnessCapabilities(BaseModel):
    """The optional capabilities a harness could compose around the loop; labkit's are all off.

    Each field says whether the capability is active. labkit implements none
    of the optional ones, so asking for any of them raises instead of being
    silently ignored: what is off must be visible, never inferred (chapter 2, *What the harness turns on — and off*;
    the list follows the seed's composition, the external loop evaluator
    included).

    ``telemetry`` on means: the control events, always; and OpenTelemetry
    spans (run, model calls, tool calls; :mod:`labkit.loops.telemetry`) for every
    harness run made by :func:`labkit.prepare`, :func:`labkit.run`,
    :func:`labkit.arun` or the console while a global OpenTelemetry tracer
    provider is set. A hand-built agent passed to :func:`labkit.run_agent`
    gets its spans from :func:`labkit.loops.telemetry.traced_run`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    todo_tracking: bool = False
    agent_modes: bool = False
    file_memory: bool = False
    skill_discovery: bool = False
    web_search: bool = False
    tool_auto_approval: bool = False
    shell: bool = False
    shared_file_store: bool = False
    background_agents: bool = False
    external_loop_evaluator: bool = False
    compaction: bool = False
    telemetry: bool = True

    def model_post_init(self, context: Any) -> None:
        on = [name for name, value in self if value and name != "telemetry"]
        if on:
            raise UserError(f"labkit's harness does not provide {', '.join(on)}; these capabilities stay off")

    def lines(self) -> list[str]:
        """One ``name=on|off`` item per capability, in a fixed order; ``on`` says what it means."""
        return [f"{name}={'on' if value else 'off'}{_MEANING.get(name, '') if value else ''}" for name, value in self]


_MEANING = {"telemetry": " (control events; OpenTelemetry spans when a tracer provider is set)"}
"""What an ``on`` capability does, printed after it in the header."""


_HEADER_WIDTH = 88
"""The widest line of the harness's capability listing (a notebook's output area shows about 92 characters)."""

_DEFAULT_CAPABILITIES = HarnessCapabilities()
"""The only composition labkit supports (frozen, so every harness can share it)."""


class HarnessAgent(SimpleAgent):
    """The same loop composed with an explicit, printed capability list (all optional ones off).

    Args:
        capabilities: the composition; the default is the only one labkit
            supports (everything off but telemetry, i.e. the control events).
        **options: as :class:`SimpleAgent`.
    """

    kind: ClassVar[str] = "harness"

    def __init__(
        self,
        client: CountingClient,
        tools: Sequence[GuardedTool],
        *,
        capabilities: HarnessCapabilities | None = None,
        **options: Any,
    ) -> None:
        super().__init__(client, tools, **options)
        self.capabilities = capabilities or _DEFAULT_CAPABILITIES

    def describe(self) -> list[str]:
        # one header entry over several lines, broken at spaces: a notebook's output area would
        # otherwise break the long line mid-word ("tool_auto_|approval")
        listing = "harness capabilities: " + ", ".join(self.capabilities.lines())
        wrapped = textwrap.wrap(listing, _HEADER_WIDTH, subsequent_indent="  ", break_long_words=False)
        return super().describe() + wrapped  # one header line each
