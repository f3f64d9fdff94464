"""Running an agent in its scope and turning every ending into a :class:`RunOutcome`
(docs/guarantees.md, *Every stop has one name, and it is not relabelled*).

* :func:`run_agent` — the async core: any agent, any prompt, any host condition.
* :class:`Setup` — what one scenario run is made of, and its :class:`Origin`
  kept beside the outcome.

:mod:`labkit.loops.runner` builds setups from scenarios (``prepare``, ``arun``,
``run``) and re-exports these names; :mod:`labkit.loops.telemetry` wraps them in
spans. Both sit above this module, which imports neither.

Endings: a halt, the deadline or a provider failure (unreachable, or
cancelling its own request) give their stop status and withhold the text;
otherwise the host condition decides between ``Completed`` and
``Incomplete``. Caller cancellation is never an outcome: it propagates as
:class:`asyncio.CancelledError`, and it wins over a stop that happened at
the same time (docs/guarantees.md, *Every stop has one name, and it is not relabelled*).

The run itself belongs to the scope (``await scope.run(...)``, :mod:`labkit.core.lifecycle`): the
loop's own task, the deadline, a stop from outside, the caller's cancellation, abandonment and the
finish. :func:`run_agent` runs the agent inside it and classifies the ending.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..core.errors import UserError
from ..core.scope import ExecutionScope, GuardedTool
from ..transports.chat import Message, Transport
from ..transports.scripted import ScriptedTransport
from .agents import HarnessAgent, SimpleAgent, _answer_open_calls
from .outcome import RunOutcome, RunStatus
from .review import PROMPT
from .scenarios import Scenario

__all__ = ["Agent", "Origin", "Setup", "origin_of", "register_agent_type", "run_agent"]


class Agent(Protocol):
    """What :func:`run_agent` and :class:`Setup` use of an agent: labkit's two, or an adapter's."""

    name: str
    max_iterations: int

    @property
    def kind(self) -> str: ...

    @property
    def scope(self) -> ExecutionScope: ...

    @property
    def tools(self) -> tuple[GuardedTool, ...]: ...

    def describe(self) -> list[str]: ...

    async def respond(self, prompt: str, transcript: list[Message]) -> str | None: ...


_AGENT_TYPES: tuple[type, ...] = (SimpleAgent,)
"""The agents :func:`run_agent` accepts: labkit's own, and those a higher layer registers
(:mod:`labkit.adapters` registers its ``ForeignAgent`` when it is imported, i.e. before any exists)."""


def register_agent_type(kind: type) -> None:
    """Let :func:`run_agent` accept instances of ``kind`` (idempotent); called by :mod:`labkit.adapters`."""
    global _AGENT_TYPES
    if kind not in _AGENT_TYPES:
        _AGENT_TYPES = (*_AGENT_TYPES, kind)


async def run_agent(
    agent: Agent,
    prompt: str,
    *,
    is_complete: Callable[[], bool],
) -> RunOutcome:
    """Run ``agent`` once inside its scope (:meth:`~labkit.ExecutionScope.run`) and classify the ending.

    The scope runs the loop in its own task. The run ends when that task ends, or at
    the deadline (or at a stop recorded from outside the run): then the task
    is cancelled and given ``ABANDON_GRACE_S`` (0.1 s) to unwind; a body
    that ignores its cancellation, sync or async (even in its cleanup), is
    abandoned, and whatever it does later is never recorded
    (docs/guarantees.md, *Cancellation reaches the transport and the bodies*).

    Args:
        agent: a :class:`SimpleAgent` or :class:`HarnessAgent`, or an adapter's agent
            (:mod:`labkit.adapters`); its scope must be fresh.
        prompt: the user message (a ``str``).
        is_complete: the host condition, read after the loop ends.

    Returns:
        The :class:`RunOutcome`; every controlled stop is returned, not raised.

    Raises:
        asyncio.CancelledError: the caller cancelled (even if a stop raced it).
        ScopeStateError: the scope already served a run, or serves one now
            (that run is not affected).
        UserError: an agent, prompt or condition of the wrong type.
        RuntimeError: the agent's loop raised ``CancelledError`` while nobody
            cancelled the run (a body's or the provider's own cancellation is
            handled before: a failed call, ``ProviderUnavailable``).
        Exception: programming errors outside the protocol (e.g. ``ScriptExhausted``).
    """
    if not _is_agent(agent):
        raise UserError(
            f"agent must be a labkit.SimpleAgent, HarnessAgent or an adapter's agent (labkit.adapters), "
            f"not {type(agent).__name__}"
        )
    if not isinstance(prompt, str):
        raise UserError(f"prompt is the user message (a str), not {type(prompt).__name__}")
    if not callable(is_complete):
        raise UserError("is_complete is the host condition: a function of no arguments returning a bool")
    transcript: list[Message] = []
    ended = await agent.scope.run(lambda: agent.respond(prompt, transcript))
    if ended.abandoned:  # what the loop does later is not this run's record
        transcript = [*transcript]
        _answer_open_calls(transcript)
    if ended.stop is not None:
        status = RunStatus(ended.stop)
    else:
        status = RunStatus.COMPLETED if is_complete() else RunStatus.INCOMPLETE
    return RunOutcome(
        status=status,
        text=None if status.is_stop else ended.value,
        events=ended.events,
        transcript=tuple(transcript),
        usage=ended.usage,
        limits=agent.scope.limits,
        hint=ended.provider_error if status is RunStatus.PROVIDER_UNAVAILABLE else None,
    )


def _is_agent(agent: object) -> bool:
    """labkit's own agents, or a foreign runtime's adapter (registered once :mod:`labkit.adapters` is loaded)."""
    return isinstance(agent, _AGENT_TYPES)


@dataclass
class Setup:
    """Everything one scenario run needs, built fresh by :func:`prepare`.

    Attributes:
        scenario: the scenario.
        scope: the run's execution scope.
        task: the run's host state (a :class:`ReviewTask` for the seed scenarios); the
            scenario's ``done(task)`` is the completion condition.
        transport: the transport the agent talks to.
        agent: the simple or harness agent, or an adapter's agent.
        prompt: the user message.
    """

    scenario: Scenario
    scope: ExecutionScope
    task: Any
    transport: Transport
    agent: Agent
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
        outcome = await run_agent(self.agent, self.prompt, is_complete=self.is_complete)
        _remember(outcome, self)
        return outcome

    def is_complete(self) -> bool:
        """The scenario's completion condition on this run's host state."""
        return self.scenario.is_complete(self.task)


@dataclass(frozen=True)
class Origin:
    """What a run of a :class:`Setup` was made of, light enough to keep beside its outcome.

    The teaching helpers (:mod:`labkit.teaching.explain`) read it to run the
    same script again with other limits or grants. Nothing of the run itself
    (scope, host state, agent) is kept, so a finished run is still freed at once.

    Attributes:
        scenario: the scenario the run came from (its limits and grants are the run's own).
        script: the script the scripted transport replayed (the scenario's, or the one of a
            ``ScriptedTransport`` given to :func:`prepare`); ``None`` for any other transport
            (a live model cannot be replayed).
        agent: ``"simple"`` or ``"harness"``; ``None`` for a foreign runtime's agent.
        stream: the run made streaming model calls.
        concurrent_tool_calls: the calls of one reply ran at once.
    """

    scenario: Scenario
    script: Any
    agent: str | None
    stream: bool
    concurrent_tool_calls: bool


class BesideOutcomes:
    """Values kept beside run outcomes, by identity, for as long as each outcome lives (weakly).

    An outcome is a pydantic model that compares by value, so a ``WeakKeyDictionary`` would merge
    two equal runs: each entry is keyed by the outcome's id and holds a weak reference to it.
    """

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref, Any]] = {}
        self._lock = threading.RLock()  # re-entrant: a collection inside the lock may free an outcome

    def put(self, outcome: RunOutcome, value: Any) -> None:
        with self._lock:
            key = id(outcome)
            self._entries[key] = (weakref.ref(outcome, functools.partial(self._forget, key)), value)

    def get(self, outcome: RunOutcome) -> Any:
        """The value kept beside ``outcome``, or ``None``."""
        with self._lock:
            entry = self._entries.get(id(outcome))
        if entry is None or entry[0]() is not outcome:
            return None
        return entry[1]

    def _forget(self, key: int, ref: weakref.ref) -> None:
        """An outcome was freed: drop its entry (only its own: the id may serve a new outcome later)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0] is ref:
                del self._entries[key]


_origins = BesideOutcomes()  # per outcome alive: its Origin's fields


def _remember(outcome: RunOutcome, setup: Setup) -> None:
    """Keep ``setup``'s :class:`Origin` beside ``outcome`` for as long as the outcome lives (weakly)."""
    transport = setup.transport
    script = transport._script if isinstance(transport, ScriptedTransport) else None
    agent = setup.agent
    kind = "harness" if isinstance(agent, HarnessAgent) else "simple" if isinstance(agent, SimpleAgent) else None
    fields = (
        setup.scenario,
        script,
        kind,
        bool(getattr(agent, "stream", False)),
        bool(getattr(agent, "concurrent_tool_calls", False)),
    )  # the Origin itself is made when it is asked for: most outcomes are never asked
    _origins.put(outcome, fields)


def origin_of(outcome: RunOutcome) -> Origin | None:
    """The :class:`Origin` of ``outcome`` if it came from a run of a :class:`Setup`, else ``None``.

    ``None`` too for an outcome built by hand or returned by :func:`run_agent` directly.
    """
    fields = _origins.get(outcome)
    return None if fields is None else Origin(*fields)
