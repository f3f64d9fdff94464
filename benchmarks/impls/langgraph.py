"""LangGraph: ``create_react_agent`` over a scripted LangChain chat model, ``recursion_limit`` set.

The graph is compiled once; each run is ``await graph.ainvoke(...)``. The
recursion limit bounds the super-steps (model + tools nodes): 2 * 6 + 1.
"""

from __future__ import annotations

import warnings
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import StructuredTool

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from langgraph.prebuilt import create_react_agent

from .. import common

NAME = "LangGraph (create_react_agent, recursion_limit)"
STYLE = "async"
IMPORTS = ("langgraph.prebuilt", "langchain_core.language_models.chat_models")


class ScriptedChatModel(BaseChatModel):
    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        name, text = common.next_step()
        if name:
            n = common.current.get().model_calls
            message = AIMessage(content="", tool_calls=[{"name": name, "args": {"input": 42}, "id": f"call-{n}"}])
        else:
            message = AIMessage(content=text)
        return ChatResult(generations=[ChatGeneration(message=message)])

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        return self._generate(messages, stop, run_manager, **kwargs)


def make():
    tools = [
        StructuredTool.from_function(coroutine=common.read_ticket, name="read_ticket"),
        StructuredTool.from_function(coroutine=common.finish_review, name="finish_review"),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = create_react_agent(ScriptedChatModel(), tools, prompt=common.INSTRUCTIONS)
    config = {"recursion_limit": 2 * common.MODEL_CALLS + 1}

    async def run():
        state = common.RunState()
        token = common.current.set(state)
        try:
            result = await graph.ainvoke({"messages": [("user", common.PROMPT)]}, config)
        finally:
            common.current.reset(token)
        messages = result["messages"]
        model_calls = sum(1 for m in messages if isinstance(m, AIMessage))
        text = messages[-1].content
        return common.reported(state, model_calls, text)

    return run
