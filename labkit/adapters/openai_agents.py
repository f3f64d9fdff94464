"""The OpenAI Agents SDK's own runner inside labkit's scope (extra ``labkit[openai-agents]``).

* model: a ``Model`` whose ``get_response`` / ``stream_response`` make one call
  through labkit's counting client (the scripted model, or any transport);
* tools: a ``FunctionTool`` per guarded tool, with the guarded tool's JSON
  Schema (not strict); its ``on_invoke_tool`` hands the model's raw JSON text
  to labkit's guard, which binds it;
* loop cap: ``max_turns = model_calls + 1``;
* tool calls of one reply: one after another,
  ``RunConfig(tool_execution=ToolExecutionConfig(max_function_tool_concurrency=1))``;
  the SDK's default starts them all at once;
* middleware: the SDK has no function middleware, so the ``Middleware``
  event is recorded by the tool, before the guard;
* tracing off (``RunConfig(tracing_disabled=True)``): no network;
* streaming: ``Runner.run_streamed``; the model streams through labkit's
  counting client and hands the SDK the finished response.

The SDK wraps an exception raised by a tool in its own ``UserError`` (the
original as ``__cause__``) and stops the run; the adapter re-raises labkit's
halt from that chain, so the run ends with labkit's status.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from agents import Agent as _SdkAgent
from agents import FunctionTool, ModelResponse, RunConfig, Runner, Usage
from agents.models.interface import Model
from agents.run_config import ToolExecutionConfig
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseCreatedEvent,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from ..transports.chat import ChatRequest, Message, assemble
from . import ForeignAgent
from ._calls import NOT_RUN, SCHEMA, Wrapped, model_id, unwrap

__all__ = ["Agent"]


class Agent(ForeignAgent):
    """The SDK's ``Runner`` loop over labkit's guarded tools and counting client."""

    kind = "openai-agents"
    framework = "OpenAI Agents SDK"
    distribution = "openai-agents"
    settings = "max_turns={max_iterations}; max_function_tool_concurrency=1 (one after another); tracing off"

    def _tool(self, name: str) -> FunctionTool:
        # The permissive schema: labkit's binding is the only argument check, on the model's text as
        # it was sent (labkit.adapters._calls)
        description = self._tools[name].description if name in self._tools else "labkit: a call that is not run"

        async def invoke(context: Any, arguments: str) -> str:
            return await self.call_wrapped(arguments)

        return FunctionTool(
            name=name,
            description=description,
            params_json_schema=SCHEMA,
            on_invoke_tool=invoke,
            strict_json_schema=False,
        )

    async def _run(self, prompt: str) -> str | None:
        agent = _SdkAgent(
            name=self.name,
            instructions=self.instructions,
            model=_CountingModel(self),
            tools=[self._tool(name) for name in (*self._tools, NOT_RUN)],
        )
        config = RunConfig(
            tracing_disabled=True,
            tool_execution=ToolExecutionConfig(max_function_tool_concurrency=1),
        )
        if self.stream:
            streamed = Runner.run_streamed(agent, prompt, max_turns=self.max_iterations, run_config=config)
            async for _ in streamed.stream_events():
                pass
            return streamed.final_output or None
        result = await Runner.run(agent, prompt, max_turns=self.max_iterations, run_config=config)
        return result.final_output or None  # an empty reply: no text, as labkit's loop returns it


class _CountingModel(Model):
    """The SDK's model interface over labkit's counting client: one counted call per turn."""

    def __init__(self, owner: Agent) -> None:
        self.owner = owner

    def _request(self, input: str | list[Any], stream: bool) -> ChatRequest:
        return self.owner.request(_to_labkit(input), stream)

    # The SDK's Model interface: ``input`` is its second parameter, by position or by name; every
    # other parameter (and any a later release adds) is accepted and not used (issue 19)
    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        reply = await self.owner.call_model(self._request(_input(args, kwargs), False))
        return ModelResponse(output=_output(reply, self.owner.wrap(reply)), usage=Usage(requests=1), response_id=None)

    async def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        reply = await assemble(self.owner.stream_model(self._request(_input(args, kwargs), True)))
        response = Response(
            id="labkit-response",
            created_at=0,
            model="labkit-counting-client",
            object="response",
            output=_output(reply, self.owner.wrap(reply)),
            tool_choice="auto",
            tools=[],
            top_p=None,
            parallel_tool_calls=False,
            status="completed",
        )
        started = response.model_copy(update={"output": [], "status": "in_progress"})
        yield ResponseCreatedEvent(type="response.created", response=started, sequence_number=0)
        yield ResponseCompletedEvent(type="response.completed", response=response, sequence_number=1)


def _input(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The ``input`` argument of a ``Model`` method (``system_instructions, input, ...``)."""
    if "input" in kwargs:
        return kwargs["input"]
    if len(args) >= 2:
        return args[1]
    raise TypeError("the SDK called the model without its 'input' argument")


def _output(reply: Message, calls: list[Wrapped]) -> list[Any]:
    output: list[Any] = []
    if reply.text:
        text = ResponseOutputText(text=reply.text, type="output_text", annotations=[])
        output.append(
            ResponseOutputMessage(id="msg", type="message", role="assistant", status="completed", content=[text])
        )
    for call in calls:
        output.append(
            ResponseFunctionToolCall(
                id=f"fc-{call.id}", call_id=call.id, type="function_call", name=call.name, arguments=call.arguments
            )
        )
    return output


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def _to_labkit(input: str | list[Any]) -> list[Message]:
    """The SDK's input items (Responses format) as labkit messages."""
    if isinstance(input, str):
        return [Message.user(input)]
    out: list[Message] = []
    for item in input:
        kind, role = _field(item, "type"), _field(item, "role")
        if kind == "function_call":
            calls = tuple(unwrap(_field(item, "call_id"), _field(item, "name"), _field(item, "arguments")))
            if out and out[-1].role == "assistant":  # the calls of one response follow its text
                out[-1] = Message.assistant(out[-1].text, (*out[-1].tool_calls, *calls))
            else:
                out.append(Message.assistant(None, calls))
        elif kind == "function_call_output":
            output = _field(item, "output")
            out.append(
                Message.tool_result(
                    model_id(_field(item, "call_id")), output if isinstance(output, str) else str(output)
                )
            )
        elif role in ("user", "assistant", "system", "developer"):
            content = _field(item, "content")
            if not isinstance(content, str):
                content = "".join(str(_field(part, "text") or "") for part in content or ())
            if role == "user":
                out.append(Message.user(content))
            elif role == "assistant":
                out.append(Message.assistant(content or None))
    return out
