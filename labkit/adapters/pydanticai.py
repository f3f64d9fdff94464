"""pydantic-ai's own agent loop inside labkit's scope (extra ``labkit[pydantic-ai]``).

* model: a ``FunctionModel`` whose function (and stream function) makes one
  call through labkit's counting client: the scripted model, or any transport;
* tools: ``Tool.from_schema`` per guarded tool, with the guarded tool's own
  JSON Schema; pydantic-ai skips its validation, labkit's guard binds;
* loop cap: ``UsageLimits(request_limit=model_calls + 1)``, no
  ``tool_calls_limit`` (the guard is the tool bound);
* tool calls of one reply: ``'sequential'`` (``Agent.parallel_tool_call_execution_mode``);
  pydantic-ai's default is ``'parallel'``;
* middleware: pydantic-ai has no function middleware, so the ``Middleware``
  event is recorded by the tool function, before the guard;
* streaming: ``agent.run(..., event_stream_handler=...)`` makes every model
  call a streaming one.

pydantic-ai lets an exception raised by a tool function propagate out of
``agent.run`` (only ``ModelRetry`` is turned into a message to the model),
so a halt stops its loop.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

from pydantic_ai import Agent as _PydanticAgent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.tools import Tool
from pydantic_ai.usage import UsageLimits

from ..transports.chat import ChatRequest, Message
from . import ForeignAgent
from ._calls import NOT_RUN, SCHEMA, model_id, unwrap

__all__ = ["Agent"]


class Agent(ForeignAgent):
    """pydantic-ai's ``Agent.run`` loop over labkit's guarded tools and counting client."""

    kind = "pydantic-ai"
    framework = "pydantic-ai"
    distribution = "pydantic-ai-slim"
    settings = "UsageLimits(request_limit={max_iterations}); tool calls of one reply: 'sequential' (one after another)"

    def _request(self, messages: list[ModelMessage], stream: bool) -> ChatRequest:
        return self.request(_to_labkit(messages), stream)

    async def _complete(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        reply = await self.call_model(self._request(messages, False))
        parts: list[Any] = [TextPart(reply.text)] if reply.text else []
        parts.extend(ToolCallPart(c.name, c.arguments, tool_call_id=c.id) for c in self.wrap(reply))
        return ModelResponse(parts=parts, model_name="labkit-counting-client")

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        empty = True
        async for piece in self.stream_pieces(self._request(messages, True)):
            empty = False
            if isinstance(piece, str):
                yield piece
            else:
                yield {
                    i: DeltaToolCall(name=c.name, json_args=c.arguments, tool_call_id=c.id) for i, c in enumerate(piece)
                }
        if empty:  # an empty reply (no text, no call): a stream function must yield something; "" is no text
            yield ""

    def _tool(self, name: str) -> Tool[Any]:
        # The permissive schema, validation skipped (Tool.from_schema): labkit's binding is the only
        # argument check, on the model's text as it was sent (labkit.adapters._calls)
        description = self._tools[name].description if name in self._tools else "labkit: a call that is not run"

        async def invoke(**arguments: Any) -> str:
            return await self.call_wrapped(arguments)

        return Tool.from_schema(invoke, name=name, description=description, json_schema=SCHEMA)

    async def _run(self, prompt: str) -> str | None:
        agent = _PydanticAgent(
            FunctionModel(self._complete, stream_function=self._stream, model_name="labkit-counting-client"),
            instructions=self.instructions,
            tools=[self._tool(name) for name in (*self._tools, NOT_RUN)],
            # an empty reply ends the run with no text, as in labkit's loop (not a retry); pydantic-ai types a
            # union output as a TypeForm, which mypy does not yet accept for `str | None`
            output_type=str | None,  # type: ignore[arg-type]
        )
        limits = UsageLimits(request_limit=self.max_iterations)
        with _PydanticAgent.parallel_tool_call_execution_mode("sequential"):
            if self.stream:
                result = await agent.run(prompt, usage_limits=limits, event_stream_handler=_drain)
            else:
                result = await agent.run(prompt, usage_limits=limits)
        return result.output


async def _drain(ctx: Any, events: AsyncIterable[Any]) -> None:
    async for _ in events:  # reading the events is what makes pydantic-ai stream each model call
        pass


def _to_labkit(messages: list[ModelMessage]) -> list[Message]:
    """pydantic-ai's history as labkit messages (its system parts are replaced by labkit's instructions)."""
    out: list[Message] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart):
                    out.append(Message.user(part.content if isinstance(part.content, str) else str(part.content)))
                elif isinstance(part, ToolReturnPart):
                    out.append(Message.tool_result(model_id(part.tool_call_id), part.model_response_str()))
                elif isinstance(part, RetryPromptPart):
                    if part.tool_name:
                        out.append(Message.tool_result(model_id(part.tool_call_id), part.model_response()))
                    else:
                        out.append(Message.user(part.model_response()))
        elif isinstance(message, ModelResponse):
            texts = [p.content for p in message.parts if isinstance(p, TextPart)]
            calls = tuple(
                call
                for p in message.parts
                if isinstance(p, ToolCallPart)
                for call in unwrap(p.tool_call_id, p.tool_name, p.args)  # the model's own call, text for text
            )
            out.append(Message.assistant("".join(texts) or None, calls))
    return out
