"""Where a framework's loop, inside labkit's scope, does not give labkit's own outcome: the one table (issue 19).

The generated parity test (``tests/test_parity_generated.py``) runs each
generated script under labkit's simple and harness loops and under every
adapter, plain and streaming, and compares what can be observed
(:class:`Observable`). Any difference must be declared here, by runtime,
mode and script feature (:class:`Feature`); an undeclared one fails the
test, and a declaration no script exhibits fails it too (each carries an
``example``). ``docs/adapters.md``'s section "Declared divergences" is
generated from this table by ``scripts/build_divergences.py`` (a test checks
it is current).

Nothing here is imported by a run: it is data for the tests, the docs and chapter 11.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

__all__ = ["DIVERGENCES", "Divergence", "Feature", "Observable", "declared"]


class Observable(StrEnum):
    """What the parity test compares between a loop and labkit's simple loop (same script, same mode)."""

    STATUS = "status"
    """The run's :class:`~labkit.RunStatus`."""
    EVENTS = "events"
    """The ordered control events (kind, name, count)."""
    BODIES = "bodies"
    """The tool bodies entered, in order, with the arguments they were given."""
    WIRE = "wire"
    """Every request that reached the transport: its messages (roles, texts, calls with their argument
    text, results with their call ids), the tools shown, streaming or not, the output-token cap."""
    RESULTS = "results"
    """The results recorded in the run's transcript for each call id, in order (one per requested id,
    the last reply's calls included: executed, failed, refused or cancelled)."""
    TRANSCRIPT = "transcript"
    """The run's whole transcript (:attr:`~labkit.RunOutcome.transcript`), message for message."""
    TEXT = "text"
    """The outcome's text (``None`` after a stop or an empty last reply)."""
    RAISED = "raised"
    """An exception that came out of :func:`labkit.run` instead of an outcome (its type)."""


class Feature(StrEnum):
    """A property of a generated script a divergence is declared for."""

    UNKNOWN_TOOL = "unknown tool"
    """A call names no tool of the agent."""
    REPEATED_IDS = "repeated call ids"
    """Two calls of one reply share a call id."""
    ID_REUSED_LATER = "call id reused in a later reply"
    """A call id of one reply appears again in a later reply."""
    EMPTY_REPLY = "empty reply"
    """A reply with neither text nor a tool call."""
    EMPTY_ARGUMENTS = "empty argument text"
    """A call whose argument text is ``""``."""
    MALFORMED_ARGUMENTS = "malformed arguments"
    """A call whose argument text is not a JSON object (``{``, ``[]``, ``null``...)."""
    NUMBER_FORMS = "numbers as float, exponent or string"
    """An integer argument written ``1.0``, ``4.2e1`` or ``"3"``."""
    FAILING_BODY = "failing body"
    """A body that raises, ``CancelledError`` of its own included (an error result the model reads)."""
    TEXT_WITH_CALLS = "text with calls"
    """A reply with text and tool calls."""
    PROVIDER_DOWN = "provider down"
    """A model call that cannot connect, or that the provider cancels itself (``ProviderUnavailable``)."""
    TRANSPORT_BUG = "transport bug"
    """A model call whose transport raises an error outside the protocol (it comes out of the run)."""
    CUT_REPLY = "reply cut at the output-token cap"
    """A reply with calls that ends with ``finish_reason: "length"`` (none of its calls may run)."""
    DEADLINE = "deadline"
    """A model call that never answers: the run's deadline ends it."""
    ZERO_LIMIT = "a limit at 0"
    """A run whose model-call, tool-call or repetition limit is 0."""


Step = str | list[tuple[str, str, str | None]] | dict[str, object]
"""An example step: a text, a list of ``(tool, argument text, call id or None)``, or
``{"text": ..., "calls": [...]}`` for text and calls in one reply, ``{"cut": [...]}`` for calls
cut at the output-token cap, ``{"fail": "..."}`` for a provider down, ``{"hang": True}`` for a model
that never answers."""


class Divergence(BaseModel):
    """One declared difference between a framework's loop and labkit's own, with its reason.

    Attributes:
        runtime: the adapter (a key of :data:`labkit.adapters.RUNTIMES`).
        stream: ``True``/``False`` for one mode only, ``None`` for both.
        when: the script feature that brings it out.
        differs: what the parity test may find different (anything else must match).
        framework: what the framework does, in one line.
        labkit: what labkit's own loops do instead, in one line.
        reason: why the adapter does not close it.
        example: a script that shows it (steps as in :data:`Step`), with ``limits``.
        limits: the example's limits (fields of :class:`~labkit.Limits`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    runtime: str
    stream: bool | None = None
    when: Feature
    differs: tuple[Observable, ...]
    framework: str
    labkit: str
    reason: str
    example: tuple[Step, ...]
    limits: dict[str, int] = {}


DIVERGENCES: tuple[Divergence, ...] = ()
"""Every declared divergence; the parity test allows these and nothing else."""


def declared(runtime: str, stream: bool, features: set[Feature]) -> set[Observable]:
    """What may differ for ``runtime`` in that mode on a script with those ``features``."""
    allowed: set[Observable] = set()
    for item in DIVERGENCES:
        if item.runtime == runtime and item.stream in (None, stream) and item.when in features:
            allowed.update(item.differs)
    return allowed
