"""Microsoft Agent Framework (agent-framework-core): a scripted chat client with the standard layers.

The client composes the layers every real client has (function invocation,
chat middleware, telemetry) over ``BaseChatClient``; ``max_iterations`` (6)
and ``max_function_calls`` (4) bound the loop. The agent is built once; each
run is ``await agent.run(...)``.
"""

from __future__ import annotations

from typing import Any

from agent_framework import Agent, BaseChatClient, ChatMiddlewareLayer, ChatResponse, Content, Message
from agent_framework._tools import FunctionInvocationLayer
from agent_framework.observability import ChatTelemetryLayer

from .. import common

NAME = "Microsoft Agent Framework (agent-framework-core)"
STYLE = "async"
IMPORTS = ("agent_framework",)


class ScriptedChatClient(
    FunctionInvocationLayer[Any], ChatMiddlewareLayer[Any], ChatTelemetryLayer[Any], BaseChatClient[Any]
):
    OTEL_PROVIDER_NAME = "scripted"

    def _inner_get_response(self, *, messages, stream, options, **kwargs):
        if stream:
            raise NotImplementedError
        return self._respond()

    async def _respond(self) -> ChatResponse:
        name, text = common.next_step()
        if name:
            n = common.current.get().model_calls
            content = Content.from_function_call(f"call-{n}", name, arguments=common.ARGUMENTS)
        else:
            content = Content.from_text(text)
        return ChatResponse(messages=[Message(role="assistant", contents=[content])])


def make():
    client = ScriptedChatClient(
        function_invocation_configuration={
            "max_iterations": common.MODEL_CALLS,
            "max_function_calls": common.TOOL_CALLS,
        }
    )
    agent = Agent(client, common.INSTRUCTIONS, tools=[common.read_ticket, common.finish_review])

    async def run():
        state = common.RunState()
        token = common.current.set(state)
        try:
            response = await agent.run(common.PROMPT)
        finally:
            common.current.reset(token)
        model_calls = sum(1 for m in response.messages if m.role == "assistant")
        return common.reported(state, model_calls, response.text)

    return run
