"""Running an agent in its scope and turning every ending into a :class:`RunOutcome` (SPEC §4).

* :func:`run_agent` — the async core: any agent, any prompt, any host condition.
* :func:`prepare` — builds a scenario's scope, task, transport and agent.
* :func:`arun` / :func:`run` — a scenario end to end, async or sync. The sync
  one also works inside a running Jupyter kernel, where ``asyncio.run``
  refuses to start.

Endings: a halt, the deadline or an unreachable provider give their stop
status and withhold the text; otherwise the host condition decides between
``Completed`` and ``Incomplete``. Caller cancellation is never an outcome:
it propagates as :class:`asyncio.CancelledError`, and it wins over a stop
that happened at the same time.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from ._sync import run_sync
from .agents import HarnessAgent, SimpleAgent
from .chat import CountingClient, Message, Transport
from .errors import ProviderUnavailable, RunHalted, UserError
from .events import StopReason
from .limits import Limits
from .outcome import RunOutcome, RunStatus
from .review import PROMPT
from .scenarios import Scenario, get_scenario
from .scope import ExecutionScope, _current_scope

__all__ = ["AgentKind", "Setup", "arun", "prepare", "run", "run_agent"]

AgentKind = Literal["simple", "harness", "maf", "pydantic-ai", "openai-agents"]
"""labkit's two agents, or a foreign runtime's own loop inside the same scope (:mod:`labkit.adapters`)."""
T = TypeVar("T")


async def run_agent(
    agent: SimpleAgent,
    prompt: str,
    *,
    is_complete: Callable[[], bool],
) -> RunOutcome:
    """Run ``agent`` once in its scope and classify the ending.

    Args:
        agent: a :class:`SimpleAgent` or :class:`HarnessAgent`; its scope must be fresh.
        prompt: the user message.
        is_complete: the host condition, read after the loop ends.

    Returns:
        The :class:`RunOutcome`; every controlled stop is returned, not raised.

    Raises:
        asyncio.CancelledError: the caller cancelled (even if a stop raced it).
        ScopeStateError: the scope already served a run.
        Exception: programming errors outside the protocol (e.g. ``ScriptExhausted``).
    """
    scope = agent.scope
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    already_cancelling = task.cancelling() if task is not None else 0
    transcript: list[Message] = []
    timeout = asyncio.timeout(None)
    status: RunStatus | None = None
    text: str | None = None

    def expire_now() -> None:  # a stop recorded outside the run cancels it through its timeout
        try:
            timeout.reschedule(loop.time())
        except RuntimeError:  # the run has already left its timeout
            pass

    def deadline_reached() -> None:
        # Record the stop the instant the deadline fires, before the run unwinds: a sibling
        # call or a body's cleanup running during the unwinding then finds the run stopped
        # (first stop wins, no event after it) and sync bodies see their token set now.
        scope._stop_for(StopReason.DEADLINE_EXCEEDED, "run")
        expire_now()

    deadline: asyncio.TimerHandle | None = None
    try:
        async with timeout:
            scope._enter_run(loop, expire_now)
            # Schedule the deadline before the run's context variable is set: a cancelled
            # timer handle stays in the loop's heap for a while with the context it was
            # scheduled in, and that context must not keep the finished run (scope, events,
            # tools) alive.
            deadline = loop.call_later(scope.remaining_s(), deadline_reached)
            context_token = _current_scope.set(scope)
            try:
                text = await agent.respond(prompt, transcript)
                scope.check_cancellation()  # a stop recorded from outside, or the deadline just passed
            finally:
                if deadline is not None:
                    deadline.cancel()
                _current_scope.reset(context_token)
    except RunHalted as halt:
        status = RunStatus(scope.stop_reason or halt.reason)
    except ProviderUnavailable:
        status = RunStatus(scope._stop_for(StopReason.PROVIDER_UNAVAILABLE, "model"))
    except TimeoutError:
        if not timeout.expired():
            raise
        status = RunStatus(scope._stop_for(StopReason.DEADLINE_EXCEEDED, "run"))
    except asyncio.CancelledError:
        scope._cancel_by_caller()
        raise
    finally:
        events, usage = scope._finish()  # one locked step; nothing is recorded after it
    if task is not None and task.cancelling() > already_cancelling:
        scope._cancel_by_caller()
        raise asyncio.CancelledError("the caller cancelled the run")  # caller wins over a racing stop
    if status is None:
        status = RunStatus.COMPLETED if is_complete() else RunStatus.INCOMPLETE
    return _validate_outcome(  # validated as RunOutcome(...) would, without its Python wrapper
        {
            "status": status,
            "text": None if status.is_stop else text,
            "events": events,
            "transcript": tuple(transcript),
            "usage": usage,
            "limits": scope.limits,
        }
    )


_validate_outcome = RunOutcome.__pydantic_validator__.validate_python


@dataclass
class Setup:
    """Everything one scenario run needs, built fresh by :func:`prepare`.

    Attributes:
        scenario: the scenario.
        scope: the run's execution scope.
        task: the run's host state (a :class:`ReviewTask` for the seed scenarios); the
            scenario's ``done(task)`` is the completion condition.
        transport: the transport the agent talks to.
        agent: the simple or harness agent.
        prompt: the user message.
    """

    scenario: Scenario
    scope: ExecutionScope
    task: Any
    transport: Transport
    agent: SimpleAgent
    prompt: str = PROMPT

    def header(self) -> list[str]:
        """What the console prints before the events: agent, transport, grants, limits, condition."""
        describe = getattr(self.transport, "describe", None)
        if callable(describe):  # e.g. a live transport: the scenario lends its grants and limits, not its script
            transport = f"transport: {describe()} (scenario {self.scenario.name}: its grants and limits)"
        else:
            transport = f"transport: {self.transport.name} (scenario {self.scenario.name}: {self.scenario.summary})"
        return [
            *self.agent.describe(),
            transport,
            "capabilities granted: " + (", ".join(sorted(self.scope.capabilities)) or "none"),
            f"tools visible to the model: {', '.join(t.name for t in self.agent.tools)}",
            f"limits: {self.scope.limits}",
            f"completion: {self.scenario.condition}",
        ]

    async def arun(self) -> RunOutcome:
        """Run this setup once (a setup, like its scope, serves one run)."""
        return await run_agent(self.agent, self.prompt, is_complete=self.is_complete)

    def is_complete(self) -> bool:
        """The scenario's completion condition on this run's host state."""
        return self.scenario.is_complete(self.task)


def prepare(
    scenario: str | Scenario,
    *,
    agent: AgentKind = "harness",
    limits: Limits | None = None,
    transport: Transport | None = None,
    stream: bool = False,
) -> Setup:
    """Build a fresh scope, task, transport and agent for one run of ``scenario``.

    Args:
        scenario: a name from :data:`labkit.SCENARIOS` or a :class:`Scenario`.
        agent: ``"harness"`` (default) or ``"simple"``; or ``"maf"``, ``"pydantic-ai"``,
            ``"openai-agents"``: that runtime's own loop in the same scope
            (needs the extra ``labkit[maf]``, ``labkit[pydantic-ai]``, ``labkit[openai-agents]``).
        limits: replaces the scenario's own limits when given (a
            :class:`Limits` or a mapping of its fields).
        transport: replaces the scenario's scripted transport (e.g. a live one).
        stream: make streaming model calls.

    Returns:
        The :class:`Setup`; for the harness agent while a global
        OpenTelemetry tracer provider is set, a
        :class:`labkit.telemetry.TracedSetup` whose run makes spans (the
        harness's ``telemetry=on``).

    Raises:
        UnknownScenarioError: no such scenario.
        UserError: an unknown agent kind, limits of another type, or a
            transport without a ``send`` method.
        MissingExtraError: an adapter's runtime is not installed (the message names the extra).
        pydantic.ValidationError: a mapping of limits that does not validate.
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
        from .adapters import make_agent  # the runtime is imported only now

        built = make_agent(agent, client, tools, instructions=chosen.instructions, stream=stream)
    else:
        cls = HarnessAgent if agent == "harness" else SimpleAgent
        built = cls(client, tools, instructions=chosen.instructions, stream=stream)
    setup = Setup(chosen, scope, task, used, built, chosen.prompt)
    if agent == "harness" and "opentelemetry.trace" in sys.modules:  # telemetry=on: spans if a tracer is set
        from .telemetry import configured_tracer, instrument

        tracer = configured_tracer()
        if tracer is not None:
            return instrument(setup, tracer=tracer)
    return setup


_RUNTIMES = ("maf", "pydantic-ai", "openai-agents")


async def arun(
    scenario: str | Scenario,
    *,
    agent: AgentKind = "harness",
    limits: Limits | None = None,
    transport: Transport | None = None,
    stream: bool = False,
) -> RunOutcome:
    """Run a scenario once and return its outcome (arguments as :func:`prepare`)."""
    setup = prepare(scenario, agent=agent, limits=limits, transport=transport, stream=stream)
    return await setup.arun()


def run(
    scenario: str | Scenario | Setup,
    *,
    agent: AgentKind = "harness",
    limits: Limits | None = None,
    transport: Transport | None = None,
    stream: bool = False,
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
        if agent != "harness" or limits is not None or transport is not None or stream:
            raise UserError("a prepared Setup already has its agent, limits and transport; pass them to prepare()")
        return run_sync(scenario.arun())
    return run_sync(arun(scenario, agent=agent, limits=limits, transport=transport, stream=stream))
