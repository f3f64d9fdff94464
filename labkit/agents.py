"""The agent loops: ``simple`` and ``harness`` over the same guarded tools (SPEC §5).

Both run the same tool-calling loop: call the model through the counting
client; if the reply asks for tools, run each requested call through the
middleware pipeline and the tool's guard, append one result per call id,
and call the model again; stop when the reply asks for no tool (an empty
reply, with neither text nor tool call, ends the loop too).

The loop's own iteration cap is ``model_calls + 1``, so the scope's model
budget always stops first. Several calls in one reply run concurrently;
when a halt stops the batch, calls still running are cancelled and every
requested call id still gets exactly one result in the transcript. A reply
whose call ids repeat is not run at all: each distinct id gets one error
result and the loop asks the model again.

The harness differs only in what it composes around the loop, and it says
so: :attr:`HarnessAgent.capabilities` lists every optional capability, and
all of them are off.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from .chat import ChatRequest, CountingClient, Message, ToolCall, ToolSpec, assemble
from .errors import DuplicateToolError, RunHalted, ToolArgumentsError, UserError
from .scope import ExecutionScope, GuardedTool, _schema_text

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
    """The lesson's middleware: check cancellation, record ``Middleware``, go on (SPEC §3.5).

    It runs before the guard, so a refused call shows a ``Middleware`` event
    and no ``ToolCall``. It observes; authorisation stays in the guard.
    """
    invocation.scope.observe_middleware(invocation.tool.name)  # checks cancellation first, under the same lock
    return await next(invocation)


def _call_tool(invocation: ToolInvocation) -> Awaitable[Any]:
    return invocation.tool.ainvoke(invocation.call.arguments)  # the awaitable itself: no extra coroutine frame


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
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
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

    Raises:
        UserError: a tool from another scope, or two tools with one name.
    """

    kind: ClassVar[str] = "simple"

    def __init__(
        self,
        client: CountingClient,
        tools: Sequence[GuardedTool],
        *,
        instructions: str,
        max_iterations: int | None = None,
        middleware: Sequence[Middleware] = (observe_middleware,),
        stream: bool = False,
        max_output_tokens: int | None = 800,
        name: str = "BoundedReviewer",
    ) -> None:
        self.client = client
        self.scope = client.scope
        self.name = name
        self.instructions = instructions
        self.max_iterations = self.scope.limits.model_calls + 1 if max_iterations is None else max_iterations
        self.stream = stream
        self.max_output_tokens = max_output_tokens
        self.middleware = tuple(middleware)
        self._tools: dict[str, GuardedTool] = {}
        for tool in tools:
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
            request = _validate_request(  # validated as ChatRequest(...) would, without its Python wrapper
                {
                    "messages": tuple(transcript),
                    "tools": self._specs,
                    "stream": self.stream,
                    "max_output_tokens": self.max_output_tokens,
                }
            )
            if self.stream:
                reply = await assemble(self.client.stream(request))
            else:
                reply = await self.client.complete(request)
            transcript.append(reply)
            if not reply.tool_calls:
                return reply.text
            await self._invoke_all(reply.tool_calls, transcript)
        return None

    async def _invoke_one(self, call: ToolCall) -> Message:
        tool = self._tools.get(call.name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            return Message.tool_result(call.id, f"error: unknown tool {call.name!r}; available tools: {known}")
        cancelling = _cancelling()
        try:
            value = await self._handler(ToolInvocation(call, tool, self.scope))
        except ToolArgumentsError as exc:
            return Message.tool_result(call.id, f"error: {exc}")
        except RunHalted:
            raise
        except asyncio.CancelledError as exc:
            if _cancelling() > cancelling or self.scope.cancel_token.cancelled:  # the run's own cancellation
                raise
            # Raised by the body (or a middleware) on its own: a failure of this call, not the
            # caller's cancellation (SPEC §3.4); the attempt counted, the run goes on.
            return Message.tool_result(call.id, f"error: {_own_cancellation(exc)}")
        except Exception as exc:  # the body failed; the model sees it and the attempt still counted
            return Message.tool_result(call.id, f"error: {type(exc).__name__}: {exc}")
        return Message.tool_result(call.id, _as_text(value))

    async def _invoke_all(self, calls: Sequence[ToolCall], transcript: list[Message]) -> None:
        repeated = _repeated_ids(calls)
        if repeated:
            # A result is matched to its call by id, so a response whose ids repeat cannot keep
            # "one result per requested id": none of its calls runs (nothing reaches a guard),
            # and each distinct id gets one error result; the loop goes on.
            for call_id in dict.fromkeys(call.id for call in calls):
                transcript.append(Message.tool_result(call_id, _repeated_error(call_id, repeated)))
            return
        if len(calls) == 1:
            try:
                transcript.append(await self._invoke_one(calls[0]))
            except RunHalted as halt:
                transcript.append(_refused(calls[0], halt))
                raise
            except asyncio.CancelledError:
                transcript.append(_cancelled(calls[0]))
                raise
            return
        tasks = [asyncio.ensure_future(self._invoke_one(call)) for call in calls]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        finally:
            pending = [t for t in tasks if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending)
            halt: RunHalted | None = None
            for call, task in zip(calls, tasks, strict=True):
                if task.cancelled():
                    transcript.append(_cancelled(call))
                elif isinstance(error := task.exception(), RunHalted):
                    halt = halt or error
                    transcript.append(_refused(call, error))
                elif error is not None:
                    transcript.append(_cancelled(call))
                    raise error
                else:
                    transcript.append(task.result())
        if halt is not None:
            raise halt


_validate_request = ChatRequest.__pydantic_validator__.validate_python


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
    from ._frozen import freeze  # first spec only; not needed to import labkit

    checked = ToolSpec(name=name, description=description, parameters=json.loads(_schema_text(arguments_model)))
    return ToolSpec.model_construct(name=checked.name, description=checked.description, parameters=freeze(checked.parameters))


# Messages are frozen values: the same instructions and prompt, run after run, can share one.
_system_message = lru_cache(maxsize=64)(Message.system)
_user_message = lru_cache(maxsize=64)(Message.user)


def _repeated_ids(calls: Sequence[ToolCall]) -> dict[str, int]:
    seen: dict[str, int] = {}
    for call in calls:
        seen[call.id] = seen.get(call.id, 0) + 1
    return {call_id: n for call_id, n in seen.items() if n > 1}


def _repeated_error(call_id: str, repeated: dict[str, int]) -> str:
    ids = ", ".join(f"{i!r} x{n}" for i, n in repeated.items())
    return f"error: call ids repeat in this response ({ids}); no call of it was run, send each call with its own id"


def _refused(call: ToolCall, halt: RunHalted) -> Message:
    if not halt.refused:  # admitted and run, but the run stopped meanwhile: not a refusal
        return _cancelled(call)
    return Message.tool_result(call.id, f"refused: {halt.reason.value}: {halt}")


def _cancelling() -> int:
    """The current task's pending cancellation requests (``Task.cancelling()``).

    The caller, the deadline, a stop recorded from outside and a batch
    cancelling its sibling calls all go through ``Task.cancel``; the scope's
    token is set the instant a stop is recorded. A ``CancelledError`` with
    neither was raised by the body (or a middleware) itself.
    """
    task = asyncio.current_task()
    return task.cancelling() if task is not None else 0


def _own_cancellation(exc: asyncio.CancelledError) -> str:
    return f"CancelledError raised by the tool itself ({str(exc) or 'no message'}); the run was not cancelled"


def _cancelled(call: ToolCall) -> Message:
    return Message.tool_result(call.id, "cancelled: the run stopped before this call finished")


class HarnessCapabilities(BaseModel):
    """The optional capabilities a harness could compose around the loop; labkit's are all off.

    Each field says whether the capability is active. labkit implements none
    of the optional ones, so asking for any of them raises instead of being
    silently ignored: what is off must be visible, never inferred (SPEC §5;
    the list follows the seed's composition, the external loop evaluator
    included).

    ``telemetry`` on means: the control events, always; and OpenTelemetry
    spans (run, model calls, tool calls; :mod:`labkit.telemetry`) for every
    harness run made by :func:`labkit.prepare`, :func:`labkit.run`,
    :func:`labkit.arun` or the console while a global OpenTelemetry tracer
    provider is set. A hand-built agent passed to :func:`labkit.run_agent`
    gets its spans from :func:`labkit.telemetry.traced_run`.
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
        return super().describe() + ["harness capabilities: " + ", ".join(self.capabilities.lines())]
