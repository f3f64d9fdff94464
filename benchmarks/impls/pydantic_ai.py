"""pydantic-ai: ``FunctionModel`` scripting the model, usage limits set, ``await agent.run``.

The agent is built once (pydantic-ai's idiomatic use); each run passes fresh
usage limits (6 requests, 4 tool calls) and gets fresh per-run state.
"""

from __future__ import annotations

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import UsageLimits

from .. import common

NAME = "pydantic-ai (FunctionModel, UsageLimits)"
STYLE = "async"
IMPORTS = ("pydantic_ai", "pydantic_ai.models.function")


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    name, text = common.next_step()
    if name:
        return ModelResponse(parts=[ToolCallPart(name, common.ARGUMENTS, tool_call_id=f"call-{len(messages)}")])
    return ModelResponse(parts=[TextPart(text)])


def make():
    agent = Agent(FunctionModel(scripted), instructions=common.INSTRUCTIONS)
    agent.tool_plain(common.read_ticket)
    agent.tool_plain(common.finish_review)

    async def run():
        state = common.RunState()
        token = common.current.set(state)
        try:
            limits = UsageLimits(request_limit=common.MODEL_CALLS, tool_calls_limit=common.TOOL_CALLS)
            result = await agent.run(common.PROMPT, usage_limits=limits)
        finally:
            common.current.reset(token)
        return common.reported(state, result.usage.requests, result.output)

    return run
