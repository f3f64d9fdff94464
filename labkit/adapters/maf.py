"""Microsoft Agent Framework's own function-invocation loop inside labkit's scope (extra ``labkit[maf]``).

The Python side of the seed's own runtime:

* chat client: a ``BaseChatClient`` with the framework's standard layers
  (function invocation, chat middleware, telemetry) whose inner call goes
  through labkit's counting client: the scripted model, or any transport;
* tools: a ``FunctionTool`` per guarded tool, its input model the guarded
  tool's JSON Schema; the function hands the arguments to labkit's guard;
* loop cap: ``function_invocation_configuration["max_iterations"] = model_calls + 1``;
* tool calls of one reply: ``allow_concurrent_invocation=False`` (one after
  another, as the seed's .NET runtime does by default; the Python framework's
  default is concurrent);
* middleware: labkit's observing middleware is the agent's *function
  middleware*: it records ``Middleware`` before the guard, and turns a halt
  into the framework's ``MiddlewareFailure`` (chained to the halt). The
  framework converts any other exception of a tool into an error result the
  model reads and keeps looping; ``MiddlewareFailure`` is its documented
  fail-closed escape, so the halt stops its loop;
* streaming: ``agent.run(..., stream=True)``, read to its end;
* logging: while the run lasts, the framework's ``agent_framework`` logger
  drops its own "Function NAME failed (RunHalted)." record: a halt is
  labkit's named stop, reported as the run's status, not a tool failure.
  Every other record of that logger (a genuine failure included) passes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, cast

from agent_framework import Agent as _MafAgent
from agent_framework import (
    BaseChatClient,
    ChatMiddlewareLayer,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    FunctionInvocationContext,
    FunctionTool,
    MiddlewareFailure,
    function_middleware,
)
from agent_framework import Message as _MafMessage
from agent_framework._tools import FunctionInvocationLayer
from agent_framework.observability import ChatTelemetryLayer

from ..core.errors import RunHalted
from ..transports.chat import ChatRequest, Message
from . import ForeignAgent
from ._calls import NOT_RUN, SCHEMA, Wrapped, model_id, unwrap

__all__ = ["Agent"]


class Agent(ForeignAgent):
    """The framework's ``Agent.run`` loop over labkit's guarded tools and counting client."""

    kind = "maf"
    framework = "Microsoft Agent Framework"
    distribution = "agent-framework-core"
    settings = (
        "max_iterations={max_iterations}; allow_concurrent_invocation=False (one after another); "
        "labkit's observing middleware as function middleware"
    )

    def _tool(self, name: str) -> FunctionTool:
        # The permissive schema: the framework's own argument check always passes, and the model's
        # text reaches labkit's binding as it was sent (labkit.adapters._calls)
        description = self._tools[name].description if name in self._tools else "labkit: a call that is not run"

        async def invoke(**arguments: Any) -> str:
            return await self.call_wrapped(arguments, observe=False)  # the middleware observed it

        return FunctionTool(name=name, description=description, func=invoke, input_model=SCHEMA)

    async def _run(self, prompt: str) -> str | None:
        quiet = _QuietHalts()
        _FRAMEWORK_LOGGER.addFilter(quiet)  # this run's own filter: a concurrent run adds and removes its own
        try:
            return await self._run_quietly(prompt)
        finally:
            _FRAMEWORK_LOGGER.removeFilter(quiet)

    async def _run_quietly(self, prompt: str) -> str | None:
        client = _CountingChatClient(
            self,
            function_invocation_configuration={
                "max_iterations": self.max_iterations,
                "allow_concurrent_invocation": False,
                # the framework's own error counter never decides a run's end: labkit's tools return
                # every failure as a result, and only a halt (MiddlewareFailure) raises
                "max_consecutive_errors_per_request": _NO_ERROR_CAP,
                "terminate_on_unknown_calls": False,
            },
        )
        scope = self.scope

        @function_middleware
        async def observe(context: FunctionInvocationContext, call_next: Callable[[], Awaitable[None]]) -> None:
            if context.function.name == NOT_RUN:  # a call labkit's loop would not run: no middleware, no guard
                await call_next()
                return
            scope.observe_middleware(context.function.name)  # before the guard (chapter 8)
            try:
                await call_next()
            except RunHalted as halt:
                raise MiddlewareFailure(f"labkit stopped the run: {halt.reason.value}") from halt

        agent = _MafAgent(
            client,
            self.instructions,
            name=self.name,
            tools=[self._tool(n) for n in (*self._tools, NOT_RUN)],
            middleware=[observe],
        )
        if self.stream:
            stream = agent.run(prompt, stream=True)
            async for _ in stream:
                pass
            response = await stream.get_final_response()
        else:
            response = await agent.run(prompt)
        # the text of the model's last reply, as labkit's own loop returns it; `response.text` would
        # join the text of every reply, a reply that also asked for tools included
        last = response.messages[-1] if response.messages else None
        return (last.text if last is not None and last.role == "assistant" else "") or None


_NO_ERROR_CAP = 1_000_000
"""No cap on the framework's consecutive tool errors (its default, 3, would end a run labkit's loop goes on with)."""

_FRAMEWORK_LOGGER = logging.getLogger("agent_framework")
"""The logger the framework's function tools report a failed invocation on."""


class _QuietHalts(logging.Filter):
    """Drops the framework's record of a tool invocation that ended in labkit's :class:`~labkit.RunHalted`.

    The framework logs ``"Function %s failed (%s)."`` (name, exception type
    name) or, with sensitive data on, ``"Function failed. Error: %s"`` (the
    exception) at ERROR level for every exception a tool raises. A halt is
    not a failure; every other record passes unchanged.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        if any(isinstance(arg, RunHalted) for arg in args):
            return False
        return not (record.msg == "Function %s failed (%s)." and args[-1:] == (RunHalted.__name__,))


class _CountingChatClient(
    FunctionInvocationLayer[Any], ChatMiddlewareLayer[Any], ChatTelemetryLayer[Any], BaseChatClient[Any]
):
    """A chat client with the framework's standard layers whose every call is one counted labkit model call."""

    OTEL_PROVIDER_NAME = "labkit"

    def __init__(self, owner: Agent, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._owner = owner

    def _request(self, messages: Sequence[_MafMessage], stream: bool) -> ChatRequest:
        return self._owner.request(_to_labkit(messages), stream)

    def _inner_get_response(
        self, *, messages: Sequence[_MafMessage], stream: bool, options: Mapping[str, Any], **kwargs: Any
    ) -> Any:
        request = self._request(messages, stream)
        if stream:
            return self._build_response_stream(self._stream(request))
        return self._complete(request)

    async def _complete(self, request: ChatRequest) -> ChatResponse:
        reply = await self._owner.call_model(request)
        contents = _contents(reply.text, self._owner.wrap(reply))
        return ChatResponse(messages=[_MafMessage(role="assistant", contents=contents)])

    async def _stream(self, request: ChatRequest) -> AsyncIterator[ChatResponseUpdate]:
        async for piece in self._owner.stream_pieces(request):
            contents = _contents(piece, ()) if isinstance(piece, str) else _contents(None, piece)
            yield ChatResponseUpdate(role="assistant", contents=contents)


def _contents(text: str | None, calls: Sequence[Wrapped]) -> list[Content]:
    contents = [Content.from_text(text)] if text else []
    contents.extend(Content.from_function_call(c.id, c.name, arguments=c.arguments) for c in calls)
    return contents


def _to_labkit(messages: Sequence[_MafMessage]) -> list[Message]:
    """The framework's messages as labkit messages (its system messages are replaced by labkit's instructions)."""
    out: list[Message] = []
    for message in messages:
        role = str(getattr(message.role, "value", message.role))
        texts = [c.text for c in message.contents if c.type == "text" and c.text]
        if role == "user":
            out.append(Message.user("".join(texts)))
        elif role == "assistant":
            calls = tuple(
                call
                for c in message.contents
                if c.type == "function_call"
                # the model's own call, text for text (a function_call content always has an id and a name)
                for call in unwrap(cast(str, c.call_id), cast(str, c.name), c.arguments)
            )
            out.append(Message.assistant("".join(texts) or None, calls))
        for c in message.contents:
            if c.type == "function_result":
                result = c.result if isinstance(c.result, str) else json.dumps(c.result, default=str)
                out.append(Message.tool_result(model_id(cast(str, c.call_id)), result))
    return out
