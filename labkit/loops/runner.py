"""A scenario end to end: :func:`prepare` builds its run, :func:`arun` / :func:`run` run it
(docs/guarantees.md, *Every stop has one name, and it is not relabelled*).

* :func:`prepare` — builds a scenario's scope, task, transport and agent.
* :func:`arun` / :func:`run` — a scenario end to end, async or sync. The sync
  one also works inside a running Jupyter kernel, where ``asyncio.run``
  refuses to start.
* :func:`run_agent`, :class:`Setup`, :class:`Origin`, :func:`origin_of` — the
  run itself, from :mod:`labkit.loops.running` (re-exported here).

This module sits above :mod:`labkit.loops.running` and
:mod:`labkit.loops.telemetry` (imported when a tracer is set) and below
:mod:`labkit.adapters`: a foreign runtime's agent is built by the factory
``labkit/__init__.py`` puts in :data:`_make_foreign_agent`, so no arrow here
points up.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Literal

from ..core._machinery.sync import run_sync
from ..core.errors import UserError
from ..core.limits import Limits
from ..core.scope import ExecutionScope
from ..transports.chat import CountingClient, Transport
from .agents import HarnessAgent, SimpleAgent
from .outcome import RunOutcome
from .running import Agent, Origin, Setup, origin_of, run_agent
from .scenarios import Scenario, get_scenario

__all__ = ["AgentKind", "Origin", "Setup", "arun", "origin_of", "prepare", "run", "run_agent"]

AgentKind = Literal["simple", "harness", "maf", "pydantic-ai", "openai-agents", "langgraph"]
"""labkit's two agents, or a foreign runtime's own loop inside the same scope (:mod:`labkit.adapters`)."""

_RUNTIMES = ("maf", "pydantic-ai", "openai-agents", "langgraph")

_make_foreign_agent: Callable[..., Any] | None = None
"""Builds a foreign runtime's agent (:func:`labkit.adapters.make_agent`, which imports the runtime on first
use). ``labkit/__init__.py``, the one module above both the loops and the adapters, puts it here: the
runner never imports :mod:`labkit.adapters` itself."""


def prepare(
    scenario: str | Scenario,
    *,
    agent: AgentKind = "harness",
    limits: Limits | None = None,
    transport: Transport | None = None,
    stream: bool = False,
    concurrent_tool_calls: bool = False,
) -> Setup:
    """Build a fresh scope, task, transport and agent for one run of ``scenario``.

    Args:
        scenario: a name from :data:`labkit.SCENARIOS` or a :class:`Scenario`.
        agent: ``"harness"`` (default) or ``"simple"``; or ``"maf"``, ``"pydantic-ai"``,
            ``"openai-agents"``, ``"langgraph"``: that runtime's own loop in the same scope
            (needs the extra ``labkit[maf]``, ``labkit[pydantic-ai]``, ``labkit[openai-agents]``,
            ``labkit[langgraph]``).
        limits: replaces the scenario's own limits when given (a
            :class:`Limits` or a mapping of its fields).
        transport: replaces the scenario's scripted transport (e.g. a live one).
        stream: make streaming model calls.
        concurrent_tool_calls: run the calls of one model reply at once
            instead of one after another (the default, as in the seed;
            docs/guarantees.md, *One recorded result per requested call id*).

    Returns:
        The :class:`Setup`; for the harness agent while a global
        OpenTelemetry tracer provider is set, a
        :class:`labkit.loops.telemetry.TracedSetup` whose run makes spans (the
        harness's ``telemetry=on``).

    Raises:
        UnknownScenarioError: no such scenario.
        UserError: an unknown agent kind, a transport without a ``send``
            method, or a flag that is not a bool.
        LimitsError: limits of another type, or that do not validate.
        MissingExtraError: an adapter's runtime is not installed (the message names the extra).
    """
    chosen = get_scenario(scenario)
    if agent not in ("simple", "harness", *_RUNTIMES):
        raise UserError(f"unknown agent {agent!r}; choose 'simple', 'harness' or a runtime: {', '.join(_RUNTIMES)}")
    scope = ExecutionScope(limits if limits is not None else chosen.limits, chosen.capabilities)
    task, tools = chosen.start(scope)
    if transport is not None and not callable(getattr(transport, "send", None)):
        raise UserError(
            f"transport must have a send(request) method (a labkit.Transport), not {type(transport).__name__}"
        )
    used = transport if transport is not None else chosen.transport()
    client = CountingClient(used, scope)
    if agent in _RUNTIMES:
        if concurrent_tool_calls:
            raise UserError(
                f"the {agent} adapter runs the calls of one reply one after another; "
                "concurrent_tool_calls applies to labkit's own agents"
            )
        if _make_foreign_agent is None:  # pragma: no cover - labkit/__init__.py sets it while labkit is imported
            raise RuntimeError("no adapter factory registered: import labkit first")
        built: Agent = _make_foreign_agent(agent, client, tools, instructions=chosen.instructions, stream=stream)
        built.name = chosen.agent_name
    else:
        cls = HarnessAgent if agent == "harness" else SimpleAgent
        built = cls(
            client,
            tools,
            instructions=chosen.instructions,
            stream=stream,
            concurrent_tool_calls=concurrent_tool_calls,
            name=chosen.agent_name,
        )
    setup = Setup(chosen, scope, task, used, built, chosen.prompt)
    if agent == "harness" and "opentelemetry.trace" in sys.modules:  # telemetry=on: spans if a tracer is set
        from .telemetry import configured_tracer, instrument

        tracer = configured_tracer()
        if tracer is not None:
            return instrument(setup, tracer=tracer)
    return setup


async def arun(
    scenario: str | Scenario,
    *,
    agent: AgentKind = "harness",
    limits: Limits | None = None,
    transport: Transport | None = None,
    stream: bool = False,
    concurrent_tool_calls: bool = False,
) -> RunOutcome:
    """Run a scenario once and return its outcome (arguments as :func:`prepare`)."""
    setup = prepare(
        scenario,
        agent=agent,
        limits=limits,
        transport=transport,
        stream=stream,
        concurrent_tool_calls=concurrent_tool_calls,
    )
    return await setup.arun()


def run(
    scenario: str | Scenario | Setup,
    *,
    agent: AgentKind = "harness",
    limits: Limits | None = None,
    transport: Transport | None = None,
    stream: bool = False,
    concurrent_tool_calls: bool = False,
) -> RunOutcome:
    """Run a scenario (or a prepared :class:`Setup`) once, synchronously; works inside Jupyter too.

    Args:
        scenario: a scenario name, a :class:`Scenario`, or a :class:`Setup`
            from :func:`prepare` (then the other arguments must be left out,
            and the setup's task can be inspected after the run).

    Returns:
        The :class:`RunOutcome`.

    Raises:
        KeyboardInterrupt / asyncio.CancelledError: the caller cancelled.
        UnknownScenarioError: no such scenario.
        UserError: bad arguments (as :func:`prepare`), or arguments given with a Setup.
        ScopeStateError: the Setup already served a run.
        ScriptExhausted: a scripted model ran out of steps.
    """
    if isinstance(scenario, Setup):
        if agent != "harness" or limits is not None or transport is not None or stream or concurrent_tool_calls:
            raise UserError("a prepared Setup already has its agent, limits and transport; pass them to prepare()")
        return run_sync(scenario.arun())
    return run_sync(
        arun(
            scenario,
            agent=agent,
            limits=limits,
            transport=transport,
            stream=stream,
            concurrent_tool_calls=concurrent_tool_calls,
        )
    )
