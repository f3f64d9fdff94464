"""What each runtime's own limits do without labkit, and the parity labkit restores (issue 12).

"labkit off": the framework alone, its own limits set to labkit's numbers (6
model calls, 4 tool calls), plain bodies counting their entries, a scripted
model counting its calls. "labkit on": the same model through the adapter.
The differences are the framework's documented behaviour, measured here:

* Microsoft Agent Framework: after ``max_iterations`` it makes one more,
  final model call with tools disabled; ``max_function_calls`` is checked
  after a whole batch, so a batch overshoots it; either ending is plain text.
* pydantic-ai: ``tool_calls_limit`` refuses a whole batch that would pass
  it (3 of 4 admitted) and ends by raising ``UsageLimitExceeded``.
* OpenAI Agents SDK: no tool-call limit at all; ``max_turns`` ends by
  raising ``MaxTurnsExceeded`` after every body of every turn ran.
* LangGraph (its prebuilt ReAct agent): no model-call or tool-call limit,
  only ``recursion_limit`` on super-steps; at ``2 * 6 + 1`` it lets 7 model
  calls and every body of 6 batches run (18 for 4), then raises
  ``GraphRecursionError``.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import pytest

import labkit
from labkit import Call, RunStatus, Tool
from labkit.adapters import RUNTIMES, available

LIMITS = labkit.Limits()  # 6 model calls, 4 tool attempts


def needs(runtime: str) -> pytest.MarkDecorator:
    spec = RUNTIMES[runtime]
    return pytest.mark.skipif(
        not available(runtime), reason=f"{spec.distribution} is not installed: pip install 'labkit[{spec.extra}]'"
    )


def one_new_id(n: int) -> list[tuple[str, dict[str, int], str]]:
    return [("read_ticket", {"input": n}, f"call-{n}")]


def three_new_ids(n: int) -> list[tuple[str, dict[str, int], str]]:
    return [("read_ticket", {"input": 10 * n + i}, f"call-{n}-{i}") for i in range(3)]


@dataclass
class Native:
    """What one framework-only run did."""

    model_calls: int = 0
    bodies: int = 0
    ending: str = ""


# -- labkit off: each framework alone --------------------------------------------------------


async def maf_alone(steps: Any, **configuration: int) -> Native:
    from agent_framework import Agent, BaseChatClient, ChatResponse, Content, Message
    from agent_framework._tools import FunctionInvocationLayer

    seen = Native()

    class Scripted(FunctionInvocationLayer[Any], BaseChatClient[Any]):
        def _inner_get_response(self, *, messages: Any, stream: bool, options: Any, **kwargs: Any) -> Any:
            async def reply() -> ChatResponse:
                seen.model_calls += 1
                calls = [
                    Content.from_function_call(i, n, arguments=json.dumps(a)) for n, a, i in steps(seen.model_calls)
                ]
                return ChatResponse(messages=[Message(role="assistant", contents=calls)])

            return reply()

    async def read_ticket(input: int) -> str:
        seen.bodies += 1
        return "NotFound"

    agent = Agent(Scripted(function_invocation_configuration=configuration), "review", tools=[read_ticket])
    seen.ending = f"text: {(await agent.run('go')).text}"
    return seen


async def pydantic_ai_alone(steps: Any, **limits: int) -> Native:
    from pydantic_ai import Agent
    from pydantic_ai.exceptions import UsageLimitExceeded
    from pydantic_ai.messages import ModelResponse, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.usage import UsageLimits

    seen = Native()

    async def model(messages: Any, info: Any) -> ModelResponse:
        seen.model_calls += 1
        parts = [ToolCallPart(n, json.dumps(a), tool_call_id=i) for n, a, i in steps(seen.model_calls)]
        return ModelResponse(parts=parts)

    agent = Agent(FunctionModel(model))

    @agent.tool_plain
    async def read_ticket(input: int) -> str:
        seen.bodies += 1
        return "NotFound"

    try:
        await agent.run("go", usage_limits=UsageLimits(**limits))
    except UsageLimitExceeded as exc:
        seen.ending = f"raised {type(exc).__name__}"
    return seen


async def openai_agents_alone(steps: Any, max_turns: int) -> Native:
    from agents import Agent, MaxTurnsExceeded, ModelResponse, RunConfig, Runner, Usage, function_tool
    from agents.models.interface import Model
    from openai.types.responses import ResponseFunctionToolCall

    seen = Native()

    class Scripted(Model):
        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            seen.model_calls += 1
            output = [
                ResponseFunctionToolCall(id=f"fc-{i}", call_id=i, type="function_call", name=n, arguments=json.dumps(a))
                for n, a, i in steps(seen.model_calls)
            ]
            return ModelResponse(output=output, usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - not used
            raise NotImplementedError

    @function_tool
    async def read_ticket(input: int) -> str:
        seen.bodies += 1
        return "NotFound"

    agent = Agent(name="review", instructions="review", model=Scripted(), tools=[read_ticket])
    try:
        await Runner.run(agent, "go", max_turns=max_turns, run_config=RunConfig(tracing_disabled=True))
    except MaxTurnsExceeded as exc:
        seen.ending = f"raised {type(exc).__name__}"
    return seen


async def langgraph_alone(steps: Any, recursion_limit: int) -> Native:
    import warnings

    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import StructuredTool
    from langgraph.errors import GraphRecursionError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent is deprecated in favour of langchain's create_agent
        from langgraph.prebuilt import create_react_agent

    seen = Native()

    class Scripted(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Scripted:
            return self

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
            seen.model_calls += 1
            calls = [{"name": n, "args": a, "id": i} for n, a, i in steps(seen.model_calls)]
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content="", tool_calls=calls))])

    async def read_ticket(input: int) -> str:
        """Read a ticket."""
        seen.bodies += 1
        return "NotFound"

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = create_react_agent(
            Scripted(), [StructuredTool.from_function(coroutine=read_ticket, name="read_ticket")]
        )
    try:
        await graph.ainvoke({"messages": [("user", "go")]}, {"recursion_limit": recursion_limit})
    except GraphRecursionError as exc:
        seen.ending = f"raised {type(exc).__name__}"
    return seen


# -- labkit on: the same models through the adapters ---------------------------------------


@dataclass
class Entries:
    bodies: int = 0
    ids: list[int] = field(default_factory=list)


async def read_ticket(state: Entries, input: int) -> str:
    """Read a ticket."""
    state.bodies += 1
    return "NotFound"


def with_labkit(steps: Any, agent: str) -> tuple[labkit.RunOutcome, Entries]:
    def script(number: int, request: labkit.ChatRequest) -> list[Call]:
        return [Call(name, arguments, id=call_id) for name, arguments, call_id in steps(number)]

    scenario = labkit.scenario(
        "native", tools=[Tool("read_ticket", "ticket.read", read_ticket)], script=script, done=bool, state=Entries
    )
    setup = labkit.prepare(scenario, agent=agent)  # type: ignore[arg-type]
    return labkit.run(setup), setup.task


def labkit_bounds_hold(agent: str) -> None:
    for steps, model_calls in ((one_new_id, 5), (three_new_ids, 2)):
        outcome, entries = with_labkit(steps, agent)
        assert outcome.status is RunStatus.TOOL_BUDGET
        assert entries.bodies == LIMITS.tool_calls == outcome.count("ToolCall")  # exactly the budget, never more
        assert outcome.count("ModelCall") == model_calls <= LIMITS.model_calls


@needs("maf")
def test_maf_alone_makes_an_extra_final_call_and_overshoots_after_a_batch() -> None:
    alone = asyncio.run(maf_alone(one_new_id, max_iterations=LIMITS.model_calls))
    assert alone.model_calls == LIMITS.model_calls + 1  # the final call with tools disabled
    assert alone.ending.startswith("text: ")  # ends like any answer: no stop status
    batch = asyncio.run(
        maf_alone(three_new_ids, max_iterations=LIMITS.model_calls, max_function_calls=LIMITS.tool_calls)
    )
    assert batch.bodies == 6 > LIMITS.tool_calls  # checked after the whole batch
    labkit_bounds_hold("maf")


@needs("pydantic-ai")
def test_pydantic_ai_alone_refuses_a_whole_batch_and_raises() -> None:
    limits = {"request_limit": LIMITS.model_calls, "tool_calls_limit": LIMITS.tool_calls}
    batch = asyncio.run(pydantic_ai_alone(three_new_ids, **limits))
    assert batch.bodies == 3 < LIMITS.tool_calls  # the second batch of 3 would pass 4: none of it ran
    assert batch.ending == "raised UsageLimitExceeded"  # an exception for the caller, not a status
    labkit_bounds_hold("pydantic-ai")


@needs("openai-agents")
def test_openai_agents_alone_has_no_tool_budget_and_raises_at_max_turns() -> None:
    alone = asyncio.run(openai_agents_alone(three_new_ids, max_turns=LIMITS.model_calls))
    assert alone.model_calls == LIMITS.model_calls and alone.bodies == 3 * LIMITS.model_calls  # 18 bodies
    assert alone.ending == "raised MaxTurnsExceeded"
    labkit_bounds_hold("openai-agents")


@needs("langgraph")
def test_langgraph_alone_has_only_a_recursion_limit_and_raises_at_it() -> None:
    alone = asyncio.run(langgraph_alone(three_new_ids, recursion_limit=2 * LIMITS.model_calls + 1))
    # a model step and a tools step per super-step pair: 7 model calls, 6 batches of 3 bodies, then the error
    assert (alone.model_calls, alone.bodies) == (LIMITS.model_calls + 1, 3 * LIMITS.model_calls)
    assert alone.bodies > LIMITS.tool_calls and alone.ending == "raised GraphRecursionError"
    labkit_bounds_hold("langgraph")
