"""OpenAI Agents SDK: a scripted ``Model``, ``max_turns`` set, ``await Runner.run``, tracing off.

Tracing is disabled: with no API key it can only log and drop traces, and a
benchmark must not try the network. The agent is built once.
"""

from __future__ import annotations

from agents import Agent, ModelResponse, Runner, Usage, function_tool, set_tracing_disabled
from agents.models.interface import Model
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from .. import common

NAME = "OpenAI Agents SDK (scripted Model, max_turns)"
STYLE = "async"
IMPORTS = ("agents",)


class ScriptedModel(Model):
    async def get_response(
        self,
        system_instructions,
        input,
        model_settings,
        tools,
        output_schema,
        handoffs,
        tracing,
        *,
        previous_response_id=None,
        conversation_id=None,
        prompt=None,
    ):
        name, text = common.next_step()
        if name:
            n = common.current.get().model_calls
            output = [
                ResponseFunctionToolCall(
                    id=f"fc-{n}", call_id=f"call-{n}", type="function_call", name=name, arguments=common.ARGUMENTS
                )
            ]
        else:
            output = [
                ResponseOutputMessage(
                    id="msg",
                    type="message",
                    role="assistant",
                    status="completed",
                    content=[ResponseOutputText(text=text, type="output_text", annotations=[])],
                )
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


def make():
    set_tracing_disabled(True)
    agent = Agent(
        name="BoundedReviewer",
        instructions=common.INSTRUCTIONS,
        model=ScriptedModel(),
        tools=[function_tool(common.read_ticket), function_tool(common.finish_review)],
    )

    async def run():
        state = common.RunState()
        token = common.current.set(state)
        try:
            result = await Runner.run(agent, common.PROMPT, max_turns=common.MODEL_CALLS)
        finally:
            common.current.reset(token)
        model_calls = len(result.raw_responses)
        return common.reported(state, model_calls, result.final_output)

    return run
