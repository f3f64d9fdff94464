"""LangGraph's own graph runtime inside labkit's scope (extra ``labkit[langgraph]``).

* the graph: a ``StateGraph`` over LangGraph's ``MessagesState`` with two
  nodes, ``model`` and ``tools``, and the conditional edge of a ReAct loop
  (``tools`` when the last message asks for tools, else the end); LangGraph's
  Pregel runtime runs it, super-step by super-step;
* model node: one call through labkit's counting client (the scripted model,
  or any transport), the reply as an ``AIMessage`` whose calls are wrapped as
  every adapter wraps them (:mod:`labkit.adapters._calls`);
* tools node: the calls of the last ``AIMessage``, **one after another**, each
  through labkit's guard; LangGraph's prebuilt ``ToolNode`` is not used: it
  validates the arguments against its own schema and runs the calls of one
  message at once, with no sequential setting;
* loop cap: ``recursion_limit = 2 * (model_calls + 1) + 1`` super-steps (a
  model step and a tools step per model call, plus the last model step), so
  labkit's counter stops first;
* middleware: LangGraph has no function middleware, so the ``Middleware``
  event is recorded by the tools node, before the guard;
* streaming: ``graph.astream(..., stream_mode="values")`` and a streaming model call.

A halt raised in the tools node propagates out of LangGraph's runtime (it does
not catch a node's exception), so it stops the graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph

from ..transports.chat import Message
from . import ForeignAgent
from ._calls import model_id, unwrap

__all__ = ["Agent"]


class Agent(ForeignAgent):
    """A LangGraph ``StateGraph`` (model node, tools node) over labkit's guarded tools and counting client."""

    kind = "langgraph"
    framework = "LangGraph"
    distribution = "langgraph"
    settings = (
        "recursion_limit=2*{max_iterations}+1 super-steps; StateGraph(model, tools) over MessagesState; "
        "tool calls of one message: one after another"
    )

    @property
    def recursion_limit(self) -> int:
        """LangGraph's super-step cap: a model step and a tools step per model call, and the last model step."""
        return 2 * self.max_iterations + 1

    async def _model_node(self, state: MessagesState) -> dict[str, Any]:
        request = self.request(_to_labkit(state["messages"]), self.stream)
        if self.stream:
            texts: list[str] = []
            calls: list[Any] = []
            async for piece in self.stream_pieces(request):
                if isinstance(piece, str):
                    texts.append(piece)
                else:
                    calls = piece
            text = "".join(texts)
        else:
            reply = await self.call_model(request)
            text, calls = reply.text or "", self.wrap(reply)
        tool_calls = [{"name": c.name, "args": _args(c.arguments), "id": c.id, "type": "tool_call"} for c in calls]
        return {"messages": [AIMessage(content=text, tool_calls=tool_calls)]}

    async def _tools_node(self, state: MessagesState) -> dict[str, Any]:
        last = state["messages"][-1]
        results: list[ToolMessage] = []
        for call in getattr(last, "tool_calls", None) or ():  # one after another, in the model's order
            text = await self.call_wrapped(call["args"])
            results.append(ToolMessage(content=text, tool_call_id=call["id"], name=call["name"]))
        return {"messages": results}

    async def _run(self, prompt: str) -> str | None:
        graph = StateGraph(MessagesState)
        graph.add_node("model", self._model_node)
        graph.add_node("tools", self._tools_node)
        graph.add_edge(START, "model")
        graph.add_conditional_edges("model", _route, {"tools": "tools", END: END})
        graph.add_edge("tools", "model")
        compiled = graph.compile()
        config: RunnableConfig = {"recursion_limit": self.recursion_limit}
        start: MessagesState = {"messages": [HumanMessage(content=prompt)]}
        if self.stream:
            state: Any = None
            async for state in compiled.astream(start, config, stream_mode="values"):  # noqa: B007
                pass  # only the last state is kept
        else:
            state = await compiled.ainvoke(start, config)
        last = state["messages"][-1] if state and state.get("messages") else None
        return (last.content or None) if isinstance(last, AIMessage) and isinstance(last.content, str) else None


def _route(state: MessagesState) -> str:
    last = state["messages"][-1]
    return "tools" if getattr(last, "tool_calls", None) else END


def _args(arguments: str) -> dict[str, Any]:
    import json

    return json.loads(arguments)  # the envelope (labkit.adapters._calls): always a JSON object


def _to_labkit(messages: Sequence[BaseMessage]) -> list[Message]:
    """LangGraph's messages as labkit messages (a system message is replaced by labkit's instructions)."""
    out: list[Message] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            continue
        if isinstance(message, HumanMessage):
            out.append(Message.user(message.content if isinstance(message.content, str) else str(message.content)))
        elif isinstance(message, AIMessage):
            # a model's tool call always has an id here: labkit's client gives one to every call
            calls = tuple(call for c in message.tool_calls for call in unwrap(cast(str, c["id"]), c["name"], c["args"]))
            text = message.content if isinstance(message.content, str) else ""
            out.append(Message.assistant(text or None, calls))
        elif isinstance(message, ToolMessage):
            content = message.content if isinstance(message.content, str) else str(message.content)
            out.append(Message.tool_result(model_id(message.tool_call_id), content))
    return out
