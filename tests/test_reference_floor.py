"""The reference floor of ``benchmarks/impls/floor.py`` keeps labkit's promises, so its ratio is a fair one (issue 21).

The benchmark page divides a labkit run by the floor's; a floor that skipped a check would
make labkit look slow for nothing. So every seed scenario, and generated scripts (limits from
zero, repeated signatures, batches, failing bodies, arguments that do not bind, unknown tools,
repeated call ids), run in the floor and in labkit's harness (and simple agent), and must give
the same status, the same control events as ``(kind, name, count)``, the same body entries,
and the same tool results in the transcript. The floor words its refusals as labkit does, so
results are compared as text, with one exception said where it is made: a call whose
arguments do not bind is compared by kind only (labkit decodes the JSON itself and words the
error its own way; the floor lets pydantic read the JSON). The generated scripts leave out what
the floor does not implement on purpose, as its docstring lists (a body's own ``CancelledError``,
streaming, numbers other than integers in signatures, stops recorded from another thread): it is
a yardstick for the ``complete`` run and the stops, not a second labkit.
"""

from __future__ import annotations

import ast
import asyncio
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import labkit
from benchmarks.impls import floor
from labkit import Call, Hang, Limits, Reply, RunStatus, Tool
from labkit.loops.agents import result_kind

ROOT = Path(__file__).resolve().parent.parent


def _tool_results(transcript: Any) -> list[tuple[str | None, str, str | None]]:
    """``(call id, kind, text)`` per tool result; the text of an unbound call is left out (see the docstring)."""
    out = []
    for message in transcript:
        if message.role == "tool":
            kind = result_kind(message.text)
            out.append((message.tool_call_id, kind, None if kind == "unbound" else message.text))
    return out


def _entries(state: Any) -> Any:
    return state.entries if hasattr(state, "entries") else list(state.log)


async def _labkit(scenario: Any, agent: str, limits: Any = None) -> tuple[Any, ...]:
    setup = labkit.prepare(scenario, agent=agent, limits=limits)
    outcome = await setup.arun()
    events = [(str(e.kind), e.name, e.count) for e in outcome.events]
    return str(outcome.status), outcome.text, events, _entries(setup.task), _tool_results(outcome.transcript)


async def _floor(scenario: Any, limits: Any = None) -> tuple[Any, ...]:
    outcome = await floor.run(scenario, limits)
    events = [tuple(e) for e in outcome.events]
    return outcome.status, outcome.text, events, _entries(outcome.state), _tool_results(outcome.transcript)


def _same(scenario: Any, limits: Any = None, agents: tuple[str, ...] = ("harness", "simple")) -> str:
    """Run ``scenario`` in the floor and in each labkit agent; assert one observable outcome; return the status."""

    async def both() -> list[tuple[Any, ...]]:
        return [await _floor(scenario, limits)] + [await _labkit(scenario, agent, limits) for agent in agents]

    seen, *theirs = asyncio.run(both())
    for agent, expected in zip(agents, theirs, strict=True):
        for what, mine, its in zip(
            ("status", "text", "events", "entries", "tool results"), seen, expected, strict=True
        ):
            assert mine == its, f"{what} differ from labkit {agent}: floor {mine!r}, labkit {its!r}"
    return str(seen[0])


# -- every seed scenario, every stop reason ---------------------------------------------------


def test_the_floor_gives_every_seed_scenario_labkit_s_outcome_and_reaches_every_status() -> None:
    statuses = {name: _same(scenario) for name, scenario in labkit.SCENARIOS.items()}
    assert set(statuses.values()) == {s.value for s in RunStatus}, statuses  # every stop reason, both endings


def test_the_floor_reads_only_scenario_data_from_labkit() -> None:
    """No guard, scope, binding or loop of labkit's: only the scripts' step types, the scenarios and their type."""
    tree = ast.parse((ROOT / "benchmarks" / "impls" / "floor.py").read_text())
    borrowed = {
        (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("labkit")
        for alias in node.names
    }
    allowed = {("labkit", "SCENARIOS"), ("labkit", "Scenario")}
    allowed |= {("labkit.transports.scripted", name) for name in ("Call", "Fail", "Hang", "Reply", "Say")}
    assert borrowed <= allowed, borrowed - allowed
    assert not any(isinstance(node, ast.Import) and "labkit" in ast.unparse(node) for node in ast.walk(tree))


# -- generated scripts ----------------------------------------------------------------------


async def count(state: SimpleNamespace, n: int) -> str:
    """Count to n (fails for a negative n)."""
    state.log.append(("count", n))
    if n < 0:
        raise ValueError(f"cannot count to {n}")
    return f"counted to {n}"


def note(state: SimpleNamespace, text: str) -> str:
    """Write a note (a sync body)."""
    state.log.append(("note", text))
    return f"noted {len(text)} characters"


async def secret(state: SimpleNamespace, n: int) -> str:
    """Read secret n (its capability is never granted)."""
    state.log.append(("secret", n))
    return "a secret"


TOOLS = (Tool("count", "math.count", count), Tool("note", "notes.write", note), Tool("secret", "secret.read", secret))
GRANTED = frozenset({"math.count", "notes.write"})

_arguments = st.one_of(
    st.fixed_dictionaries({"n": st.integers(-2, 3)}),  # small: the same signature comes back often
    st.sampled_from(['{"n": true}', '{"n": 2.0}', '{"n": "2"}', '{"n": 2.5}', "{}", '{"n": 1, "m": 2}', "not json"]),
)
_call = st.one_of(
    st.builds(Call, st.sampled_from(["count", "secret", "missing"]), _arguments),
    st.builds(Call, st.just("note"), st.fixed_dictionaries({"text": st.sampled_from(["a", "bb"])})),
)
_batch = st.lists(_call, min_size=2, max_size=3)
_step = st.one_of(
    _call,
    _batch,
    st.builds(Reply, st.just("Working."), _batch),
    st.lists(st.builds(Call, st.just("count"), st.just({"n": 1}), id=st.just("same")), min_size=2, max_size=2),
)
_script = st.tuples(st.lists(_step, max_size=5), st.sampled_from(["Done.", ""])).map(lambda s: (*s[0], s[1]))
_limits = st.builds(Limits, model_calls=st.integers(0, 5), tool_calls=st.integers(0, 5), repetitions=st.integers(0, 2))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=_script, limits=_limits)
def test_the_floor_gives_a_generated_script_labkit_s_outcome(script: tuple[Any, ...], limits: Limits) -> None:
    generated = labkit.scenario(
        "generated",
        tools=TOOLS,
        script=script,
        done=lambda state: ("count", 3) in state.log,
        state=lambda: SimpleNamespace(log=[]),
        capabilities=GRANTED,
    )
    _same(generated, limits)


# -- the deadline, abandonment, the caller ----------------------------------------------------


async def stubborn(state: SimpleNamespace, n: int) -> str:
    """Ignores its cancellation until the test releases it, then returns late."""
    state.log.append(("entered", n))
    try:
        await asyncio.get_running_loop().create_future()
    except asyncio.CancelledError:
        await state.release.wait()
        state.ended.set()
        return "a late result"
    return "never"


def test_a_body_still_running_at_the_deadline_is_abandoned_and_its_late_result_never_reaches_the_transcript() -> None:
    hanging = labkit.scenario(
        "stubborn",
        tools=(Tool("stubborn", "wait", stubborn), Tool("count", "math.count", count)),
        script=[[Call("count", {"n": 1}), Call("stubborn", {"n": 1}), Call("count", {"n": 2})], "Done."],
        done=lambda state: False,
        state=lambda: SimpleNamespace(log=[], release=asyncio.Event(), ended=asyncio.Event()),
        limits=Limits(deadline_s=0.2),
    )

    async def observe(run: Any) -> tuple[Any, ...]:
        outcome, state = await run()
        still_running = not state.ended.is_set()  # the run returned while the body had not ended
        state.release.set()
        await state.ended.wait()  # the body now ends; the run's record must not change
        return still_running, outcome

    async def in_floor() -> tuple[Any, Any]:
        outcome = await floor.run(hanging)
        return outcome, outcome.state

    async def in_labkit() -> tuple[Any, Any]:
        setup = labkit.prepare(hanging)
        return await setup.arun(), setup.task

    async def both() -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        return await observe(in_floor), await observe(in_labkit)

    (floor_abandoned, mine), (labkit_abandoned, its) = asyncio.run(both())
    assert floor_abandoned and labkit_abandoned
    assert mine.status == str(its.status) == "DeadlineExceeded"
    assert [tuple(e) for e in mine.events] == [(str(e.kind), e.name, e.count) for e in its.events]
    assert mine.events[-1] == ("DeadlineExceeded", "run", 2)
    assert _tool_results(mine.transcript) == _tool_results(its.transcript)
    assert [kind for _, kind, _ in _tool_results(mine.transcript)] == ["result", "cancelled", "cancelled"]
    assert all("late" not in (m.text or "") for m in mine.transcript)


def test_the_caller_s_cancellation_propagates_out_of_the_floor_as_out_of_labkit() -> None:
    hang = labkit.scenario(
        "hang", tools=TOOLS, script=[Hang()], done=lambda state: False, state=lambda: SimpleNamespace(log=[])
    )

    async def cancelled_while_the_model_hangs(run: Any) -> str:
        task = asyncio.ensure_future(run())
        await asyncio.sleep(0.05)  # the model hangs; the deadline is two minutes away
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return "cancelled"
        return "returned"

    async def both() -> list[str]:
        return [
            await cancelled_while_the_model_hangs(lambda: floor.run(hang)),
            await cancelled_while_the_model_hangs(lambda: labkit.arun(hang)),
        ]

    assert asyncio.run(both()) == ["cancelled", "cancelled"]


# -- the locked reservation, the binding built once -------------------------------------------


def test_concurrent_attempts_never_overshoot_the_floor_s_tool_budget() -> None:
    budget, threads = 40, 64
    scope = floor.Scope(Limits(tool_calls=budget, repetitions=1), GRANTED)
    tool = floor._floor_tool(TOOLS[0])
    start, refused = threading.Barrier(threads), []

    def attempt(i: int) -> None:
        start.wait()
        try:
            scope.admit(tool, f"count:{i}")
        except floor.Halt as halt:
            refused.append(halt.reason)

    workers = [threading.Thread(target=attempt, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    admitted = [e for e in scope.events if e.kind == "ToolCall"]
    assert [e.count for e in admitted] == list(range(1, budget + 1))
    assert scope.tool_calls == budget and len(refused) == threads - budget
    assert set(refused) == {"ToolBudget"} and [e.kind for e in scope.events].count("ToolBudget") == 1


def test_the_floor_builds_each_tool_s_argument_model_once_not_per_run() -> None:
    complete = labkit.SCENARIOS["complete"]
    first = [floor._floor_tool(t).model for t in complete.tools]
    asyncio.run(floor.run(complete))
    asyncio.run(floor.run(complete))
    assert [floor._floor_tool(t).model for t in complete.tools] == first
    assert all(a is b for a, b in zip(first, [floor._floor_tool(t).model for t in complete.tools], strict=True))
