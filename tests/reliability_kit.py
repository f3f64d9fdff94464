"""Shared test doubles for the reliability tests: probe tools that count body entries, one-call runs.

Not a test module (no ``test_`` prefix). Every helper drives the real loop, the
real guard and the real counting client; only the model is scripted.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from typing import Any

from labkit import (
    ControlEvent,
    CountingClient,
    EventKind,
    ExecutionScope,
    Limits,
    Message,
    Role,
    RunOutcome,
    ScriptedTransport,
    SimpleAgent,
    run_agent,
)

CAP = "probe.run"


class TestProbe:
    """Async tool bodies that record every entry, with an optional random delay before returning.

    Attributes:
        entries: the arguments each entered body received, in entry order.
        finished: how many bodies returned normally.
    """

    __test__ = False

    def __init__(self, rng: random.Random | None = None, max_delay_s: float = 0.0, fail: bool = False) -> None:
        self.rng = rng
        self.max_delay_s = max_delay_s
        self.fail = fail
        self.entries: list[Any] = []
        self.finished = 0

    async def probe(self, n: int) -> str:
        """Echo ``n`` after a short random delay."""
        self.entries.append(n)
        if self.rng is not None and self.max_delay_s:
            await asyncio.sleep(self.rng.uniform(0, self.max_delay_s))
        if self.fail:
            raise RuntimeError(f"the probe body failed on {n}")
        self.finished += 1
        return f"probe {n} done"


def build(
    script: Any,
    tools: dict[str, Callable[..., Any]],
    *,
    limits: Limits | None = None,
    capabilities: Sequence[str] = (CAP,),
    stream: bool = False,
    concurrent: bool = False,
) -> tuple[SimpleAgent, ScriptedTransport, ExecutionScope]:
    """A simple agent over a scripted transport with tools ``name -> body`` (all needing ``CAP``).

    ``concurrent`` runs the calls of one response at once (``concurrent_tool_calls``);
    by default they run one after another, as in the seed (docs/guarantees.md, *Limits are exact*).
    """
    scope = ExecutionScope(limits or Limits(), capabilities)
    guarded = [scope.tool(name, CAP, body) for name, body in tools.items()]
    transport = ScriptedTransport(script)
    agent = SimpleAgent(
        CountingClient(transport, scope), guarded, instructions="test", stream=stream, concurrent_tool_calls=concurrent
    )
    return agent, transport, scope


async def go(agent: SimpleAgent, is_complete: Callable[[], bool] = lambda: False) -> RunOutcome:
    return await run_agent(agent, "go", is_complete=is_complete)


def results(outcome: RunOutcome) -> dict[str, list[str]]:
    """Tool results of the transcript by call id (a list, so a repeated id shows)."""
    found: dict[str, list[str]] = {}
    for message in outcome.transcript:
        if message.role is Role.TOOL:
            found.setdefault(message.tool_call_id or "", []).append(message.text or "")
    return found


def requested_ids(transcript: Sequence[Message]) -> list[str]:
    return [call.id for m in transcript if m.role is Role.ASSISTANT for call in m.tool_calls]


def ev(kind: str, name: str, count: int) -> ControlEvent:
    return ControlEvent(kind=EventKind(kind), name=name, count=count)


def tool_round(tool: str, number: int, model_call: int | None = None) -> list[ControlEvent]:
    """The three events of one admitted single-call round: ModelCall, Middleware, ToolCall."""
    return [
        ev("ModelCall", "model", model_call or number),
        ev("Middleware", tool, number),
        ev("ToolCall", tool, number),
    ]
