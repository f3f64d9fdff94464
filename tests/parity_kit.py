"""The differential parity kit (issue 19): generated scripts, every loop, one observable outcome.

A script is data (a tuple of steps in the format of
:data:`labkit.adapters.divergences.Step`, plus limits), so a failing example
prints as something a reader can paste. :func:`build` makes it a scenario
with three tools; :func:`observe` runs it under one loop and returns what
the parity test compares (:class:`~labkit.adapters.divergences.Observable`);
:func:`compare` runs it under every loop and returns the differences no
declaration covers.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from types import SimpleNamespace
from typing import Any

from hypothesis import strategies as st

import labkit
from labkit import Call, ChatChunk, Fail, Hang, Reply, ScriptedTransport, Tool
from labkit.adapters import RUNTIMES, available
from labkit.adapters.divergences import Feature, Observable, declared

LOOPS: tuple[str, ...] = ("simple", "harness", *RUNTIMES)
"""Every loop the parity covers: labkit's two and each adapter (a missing framework is skipped by the test)."""

TOOLS = ("count", "note", "secret")
DONE_VALUE = 7


async def count(state: SimpleNamespace, n: int) -> str:
    """Count to n (fails for a negative n)."""
    state.log.append(("count", n))
    if n < 0:
        raise ValueError(f"cannot count to {n}")
    # a body that cancels itself: a failed call, not the run's cancellation (docs/guarantees.md, *Cancellation*)
    if n == 5:
        raise asyncio.CancelledError("five is not counted")
    return f"counted to {n}"


def note(state: SimpleNamespace, text: str) -> str:
    """Write a note (a sync body: it runs on a worker thread)."""
    state.log.append(("note", text))
    return f"noted {len(text)} characters"


async def secret(state: SimpleNamespace, n: int) -> str:
    """Read secret n (its capability is never granted)."""
    state.log.append(("secret", n))
    return "a secret"


def _call(item: Sequence[Any]) -> Call:
    name, arguments, call_id = item
    return Call(name, arguments, id=call_id)


class CuttingTransport(ScriptedTransport):
    """A scripted transport whose replies number ``cut`` end with ``finish_reason: "length"`` (cut at the cap)."""

    def __init__(self, script: Any, cut: set[int]) -> None:
        super().__init__(script)
        self.cut = cut

    async def send(self, request: Any) -> AsyncIterator[ChatChunk]:
        async for chunk in super().send(request):
            yield chunk
        if self.calls in self.cut:
            yield ChatChunk(finish_reason="length")


FAILURES = {
    "down": lambda: ConnectionError("down"),  # ProviderUnavailable
    "cancel": lambda: asyncio.CancelledError("the provider gave up"),  # its own cancellation: ProviderUnavailable
    "bug": lambda: RuntimeError("a bug in the transport"),  # outside the protocol: raised out of the run
}
"""What a ``{"fail": KIND}`` step raises at the transport."""


def to_step(step: Any) -> Any:
    """One data step as a scripted-transport step."""
    if isinstance(step, str):
        return step
    if isinstance(step, dict) and "fail" in step:
        return Fail(FAILURES[str(step["fail"])]())
    if isinstance(step, dict) and "hang" in step:
        return Hang()
    if isinstance(step, dict) and "cut" in step:
        return [_call(c) for c in step["cut"]]  # type: ignore[union-attr]
    if isinstance(step, dict):
        return Reply(str(step["text"]), [_call(c) for c in step["calls"]])  # type: ignore[union-attr]
    return [_call(c) for c in step]


def build(steps: Sequence[Any], limits: dict[str, Any]) -> labkit.Scenario:
    """The scenario of a data script: ``count``/``note`` granted, ``secret`` visible but not granted.

    The script never runs out: past its last step the model says ``"fallback"``.
    Completed means ``count(7)`` ran. A script with a ``{"hang": ...}`` step gets a 0.3 s deadline.
    """
    scripted = [to_step(s) for s in steps]

    def script(number: int, request: Any) -> Any:
        return scripted[number - 1] if number <= len(scripted) else "fallback"

    if any(isinstance(s, dict) and "hang" in s for s in steps):
        limits = {**limits, "deadline_s": 0.3}

    return labkit.scenario(
        "generated",
        tools=[
            Tool("count", "count.run", count),
            Tool("note", "note.write", note),
            Tool("secret", "secret.read", secret),
        ],
        script=script,
        done=lambda state: ("count", DONE_VALUE) in state.log,
        state=lambda: SimpleNamespace(log=[]),
        capabilities=["count.run", "note.write"],
        limits=limits,
    )


def _message(m: labkit.Message) -> tuple[Any, ...]:
    return (m.role.value, m.text, tuple((c.id, c.name, c.arguments) for c in m.tool_calls), m.tool_call_id)


def transport(scenario: labkit.Scenario, steps: Sequence[Any]) -> CuttingTransport:
    cut = {n for n, s in enumerate(steps, 1) if isinstance(s, dict) and "cut" in s}
    return CuttingTransport(scenario.script, cut)


def observe(steps: Sequence[Any], limits: dict[str, int], loop: str, stream: bool) -> dict[Observable, Any]:
    """Run the script once under ``loop``; what the parity test compares."""
    scenario = build(steps, limits)
    setup = labkit.prepare(scenario, agent=loop, stream=stream, transport=transport(scenario, steps))  # type: ignore[arg-type]
    try:
        outcome = labkit.run(setup)
    except Exception as exc:  # what escaped labkit.run: a divergence by itself (RAISED)
        first_line = (str(exc).splitlines() or [""])[0][:300]
        return {Observable.RAISED: f"{type(exc).__module__}.{type(exc).__name__}: {first_line}"}
    requests = setup.transport.requests
    results: dict[str, list[str | None]] = {}
    for m in outcome.transcript:
        if m.role is labkit.Role.TOOL:
            results.setdefault(m.tool_call_id or "", []).append(m.text)
    return {
        Observable.STATUS: outcome.status.value,
        Observable.EVENTS: [(e.kind.value, e.name, e.count) for e in outcome.events],
        Observable.BODIES: list(setup.task.log),
        Observable.WIRE: [
            ([_message(m) for m in r.messages], tuple(t.name for t in r.tools), r.stream, r.max_output_tokens)
            for r in requests
        ],
        Observable.RESULTS: results,
        Observable.TRANSCRIPT: [_message(m) for m in outcome.transcript],
        Observable.TEXT: outcome.text,
        Observable.RAISED: None,
    }


# -- what a script has ------------------------------------------------------------------------

_NUMBER_FORMS = (".0", "e", '"')


def features(steps: Sequence[Any], limits: dict[str, int]) -> set[Feature]:
    """The :class:`Feature` set of a data script."""
    found: set[Feature] = set()
    if any(limits.get(k, 1) == 0 for k in ("model_calls", "tool_calls", "repetitions")):
        found.add(Feature.ZERO_LIMIT)
    seen_ids: set[str] = set()
    for number, step in enumerate(steps, 1):
        if isinstance(step, str):
            if not step:
                found.add(Feature.EMPTY_REPLY)
            continue
        if isinstance(step, dict) and "fail" in step:
            found.add(Feature.PROVIDER_DOWN if step["fail"] != "bug" else Feature.TRANSPORT_BUG)
            continue
        if isinstance(step, dict) and "hang" in step:
            found.add(Feature.DEADLINE)
            continue
        if isinstance(step, dict) and "cut" in step:
            found.add(Feature.CUT_REPLY)
        calls = step.get("calls", step.get("cut")) if isinstance(step, dict) else step
        if isinstance(step, dict):
            found.add(Feature.TEXT_WITH_CALLS)
        ids = [c[2] or f"call-{number}-{i}" for i, c in enumerate(calls, 1)]
        if len(set(ids)) < len(ids):
            found.add(Feature.REPEATED_IDS)
        if seen_ids & set(ids):
            found.add(Feature.ID_REUSED_LATER)
        seen_ids |= set(ids)
        for name, arguments, _ in calls:
            if name not in TOOLS:
                found.add(Feature.UNKNOWN_TOOL)
            if arguments == "":
                found.add(Feature.EMPTY_ARGUMENTS)
                continue
            try:
                value = json.loads(arguments)
            except ValueError:
                found.add(Feature.MALFORMED_ARGUMENTS)
                continue
            if not isinstance(value, dict):
                found.add(Feature.MALFORMED_ARGUMENTS)
                continue
            n = value.get("n")
            if isinstance(n, (int, float)) and not isinstance(n, bool) and (n < 0 or n == 5) and name == "count":
                found.add(Feature.FAILING_BODY)
            raw = arguments.split('"n":', 1)[1] if '"n":' in arguments else ""
            if any(mark in raw.split(",")[0] for mark in _NUMBER_FORMS):
                found.add(Feature.NUMBER_FORMS)
    return found


# -- generating scripts ------------------------------------------------------------------------


def _number(n: int) -> st.SearchStrategy[str]:
    return st.sampled_from([str(n), f"{n}.0", f"{n / 10}e1" if n else "0e0", f'"{n}"'])


_COUNT_ARGS = st.integers(-2, 8).flatmap(_number).map(lambda text: f'{{"n": {text}}}')
_NOTE_ARGS = st.sampled_from(['{"text": "a"}', '{"text": ""}', '{"text": 5}', '{"text": "b", "n": 1}'])
_ODD_ARGS = st.sampled_from(
    ["", "", "{", "[]", "null", "{}", '{"n": true}', '{"n": 1e400}', '{"n": 1, "extra": 2}', "7"]
)

ARGUMENTS = st.one_of(_COUNT_ARGS, _COUNT_ARGS, _NOTE_ARGS, _ODD_ARGS, _ODD_ARGS)
CALL = st.tuples(
    st.sampled_from(["count", "count", "count", "note", "secret", "nope"]),
    ARGUMENTS,
    st.sampled_from([None, None, None, "dup", "x"]),
)
TEXT = st.sampled_from(["", "done", "Working on it.", "fallback", "Two  spaces and\na line"])
CALLS = st.lists(CALL, min_size=1, max_size=3)
REPLY = st.builds(
    lambda text, calls: {"text": text or "hm", "calls": calls}, TEXT, st.lists(CALL, min_size=1, max_size=2)
)
DOWN = st.sampled_from([{"fail": "down"}, {"fail": "down"}, {"fail": "cancel"}, {"fail": "bug"}])
CUT = st.builds(lambda calls: {"cut": calls}, CALLS)
# weighted by repetition (one_of picks a branch uniformly): mostly calls, some text, rarely a provider
# down or a reply cut at the output-token cap
STEP = st.one_of(TEXT, TEXT, CALLS, CALLS, CALLS, CALLS, CALLS, REPLY, REPLY, REPLY, DOWN, CUT)
# A model that never answers ({"hang": True}) is left out of the generated scripts: every one would
# wait for its deadline under each loop; the deadline's parity is tests/test_adapters.py's (scenario
# `deadline`, and a body that never returns).
STEPS = st.lists(STEP, max_size=5).map(tuple)
LIMITS = st.fixed_dictionaries(
    {
        # mostly room to run the whole script; now and then a limit at 0 or 1 (limits from 0 up)
        "model_calls": st.sampled_from([6, 6, 6, 4, 3, 2, 1, 0]),
        "tool_calls": st.sampled_from([4, 4, 4, 6, 3, 2, 1, 0]),
        "repetitions": st.sampled_from([1, 1, 2, 2, 3, 0]),
    }
)


# -- comparing --------------------------------------------------------------------------------


def installed_loops() -> list[str]:
    return [loop for loop in LOOPS if loop in ("simple", "harness") or available(loop)]


def differences(reference: dict[Observable, Any], other: dict[Observable, Any]) -> set[Observable]:
    return {key for key in Observable if reference.get(key) != other.get(key)}


def compare(steps: Sequence[Any], limits: dict[str, int], loops: Sequence[str]) -> list[str]:
    """Run the script under every loop, plain and streaming; one line per undeclared difference."""
    problems: list[str] = []
    found = features(steps, limits)
    for stream in (False, True):
        reference = observe(steps, limits, "simple", stream)
        for loop in loops:
            if loop == "simple":
                continue
            got = observe(steps, limits, loop, stream)
            differ = differences(reference, got)
            allowed = declared(loop, stream, found) if loop in RUNTIMES else set()
            undeclared = differ - allowed
            if got[Observable.RAISED] is not None and got[Observable.RAISED] != reference[Observable.RAISED]:
                undeclared.add(Observable.RAISED)  # never allowed: no framework exception escapes labkit.run
            if undeclared:
                detail = "; ".join(
                    f"{key.value}: labkit {reference.get(key)!r} != {got.get(key)!r}" for key in sorted(undeclared)
                )
                problems.append(
                    f"{loop} ({'stream' if stream else 'plain'}) differs [{', '.join(sorted(undeclared))}]: "
                    f"{detail[:1500]}"
                )
    return problems
