"""The eight scripted scenarios of the lesson (SPEC §6), written with the scripted transport.

Each scenario is a misbehaving (or well-behaved) model plus what the host
grants: capabilities and limits. Run one with :func:`labkit.run`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .chat import ChatRequest
from .errors import UnknownScenarioError
from .limits import Limits
from .scripted import Call, Fail, Hang, Script, ScriptedTransport, Step

__all__ = ["SCENARIOS", "Scenario", "get_scenario"]

ALL_CAPABILITIES = frozenset({"ticket.read", "review.finish"})

_READ_42 = Call("read_ticket", {"input": 42})
_WELL_BEHAVED: tuple[Step, ...] = (_READ_42, Call("finish_review", {"input": 42}), "Review finished.")


def _read_42_forever(number: int, request: ChatRequest) -> Step:
    return _READ_42


def _read_next_id(number: int, request: ChatRequest) -> Step:
    return Call("read_ticket", {"input": number})


@dataclass(frozen=True)
class Scenario:
    """A scripted model plus the host's grants.

    Attributes:
        name: the seed's scenario name (``repeat``, ``changing``, ...).
        summary: one line: what the model does and what the host grants.
        script: steps or a step function for :class:`~labkit.ScriptedTransport`.
        limits: the limits this scenario runs with by default.
        capabilities: the capabilities granted by the host.
    """

    name: str
    summary: str
    script: Script
    limits: Limits = field(default_factory=Limits)
    capabilities: frozenset[str] = ALL_CAPABILITIES

    def transport(self) -> ScriptedTransport:
        """A fresh scripted transport for one run."""
        return ScriptedTransport(self.script)


_ALL = (
    Scenario(
        "complete",
        "reads ticket 42, finishes the review, then says 'Review finished.'",
        _WELL_BEHAVED,
    ),
    Scenario(
        "incomplete",
        "says 'Review finished.' at once without calling any tool",
        ("Review finished.",),
    ),
    Scenario(
        "forbidden",
        "the well-behaved model, but the host does not grant ticket.read",
        _WELL_BEHAVED,
        capabilities=frozenset({"review.finish"}),
    ),
    Scenario(
        "repeat",
        "the broken record: asks for read_ticket(42) on every call",
        _read_42_forever,
    ),
    Scenario(
        "changing",
        "asks for read_ticket(1), read_ticket(2), ... (a new id on every call)",
        _read_next_id,
    ),
    Scenario(
        "budget",
        "the well-behaved model, with a budget of one model call",
        _WELL_BEHAVED,
        limits=Limits(model_calls=1),
    ),
    Scenario(
        "deadline",
        "the model never answers; the run has a 1 s deadline",
        (Hang(),),
        limits=Limits(deadline_s=1.0),
    ),
    Scenario(
        "unavailable",
        "the transport cannot connect to the model endpoint",
        (Fail(ConnectionError("connection refused by the scripted endpoint")),),
    ),
)

SCENARIOS: Mapping[str, Scenario] = MappingProxyType({s.name: s for s in _ALL})
"""Every scenario by name, in lesson order."""


def get_scenario(name: str | Scenario) -> Scenario:
    """Return the scenario called ``name`` (a :class:`Scenario` is returned as is).

    Raises:
        UnknownScenarioError: no such scenario; the message lists the valid names.
    """
    if isinstance(name, Scenario):
        return name
    try:
        return SCENARIOS[name]
    except (KeyError, TypeError):
        raise UnknownScenarioError(
            f"unknown scenario {name!r}; choose one of: {', '.join(SCENARIOS)}"
        ) from None
