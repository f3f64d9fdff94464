"""Randomised concurrency trials: admitted attempts never exceed a limit, refused ones never enter a body.

Three shapes of concurrency, each run over a fixed list of seeds plus one
fresh seed drawn per session (printed; replay it with ``LABKIT_SEED=<n>``):

* parallel tool calls in one model response (run concurrently by the loop);
* threads invoking one guarded tool directly (no loop);
* many runs at once, in one event loop and in several threads, sharing
  nothing but the tool definitions.

Bodies sleep a random short time so that admissions and bodies interleave.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import random
import threading
import time
from collections import Counter
from typing import Any

import pytest
from reliability_kit import CAP, build, go, results

from labkit import (
    Call,
    CountingClient,
    ExecutionScope,
    Limits,
    RunHalted,
    ScriptedTransport,
    SimpleAgent,
    ToolInvocation,
    observe_middleware,
    run_agent,
    run_sync,
)

FRESH_SEED = int(os.environ.get("LABKIT_SEED", random.SystemRandom().randrange(2**32)))
SEEDS = [*range(8), "fresh"]

# The call id a body is running for: set by a middleware in the call's own task.
_CALL_ID: contextvars.ContextVar[str] = contextvars.ContextVar("call_id", default="?")
_RUN_LOG: contextvars.ContextVar[list[tuple[str, int]]] = contextvars.ContextVar("run_log")


def _seed(param: int | str) -> int:
    if param == "fresh":
        print(f"fresh random seed: {FRESH_SEED} (replay with LABKIT_SEED={FRESH_SEED})")
        return FRESH_SEED
    return int(param)


async def _tag_call(invocation: ToolInvocation, next: Any) -> Any:
    _CALL_ID.set(invocation.call.id)
    return await next(invocation)


async def shared_probe(n: int) -> str:
    """One tool definition shared by every run: logs (call id, n) into the running run's log."""
    _RUN_LOG.get().append((_CALL_ID.get(), n))
    await asyncio.sleep(random.uniform(0, 0.001))
    return f"probe {n}"


def _random_limits(rng: random.Random) -> Limits:
    return Limits(
        model_calls=rng.randint(0, 4),
        tool_calls=rng.randint(0, 8),
        repetitions=rng.randint(0, 3),
        deadline_s=30.0,
    )


def _random_script(rng: random.Random, responses: int) -> list[Any]:
    script: list[Any] = []
    for r in range(responses):
        size = rng.randint(1, 8)
        script.append([Call("probe", {"n": rng.randint(1, 3)}, id=f"r{r}c{i}") for i in range(size)])
    return [*script, "done"]


def _check_run(outcome: Any, log: list[tuple[str, int]], limits: Limits, where: str) -> int:
    """Assert the invariants of one run; return how many attempts were admitted."""
    admitted = outcome.count("ToolCall")
    assert admitted <= limits.tool_calls, where
    assert outcome.count("ModelCall") <= limits.model_calls, where
    assert len(log) == admitted, where  # every admitted attempt entered its body, no other did
    per_value = Counter(n for _, n in log)
    assert all(count <= limits.repetitions for count in per_value.values()), where
    by_id = results(outcome)
    assert all(len(texts) == 1 for texts in by_id.values()), where  # one result per call id
    refused = {i for i, (text,) in by_id.items() if text.startswith("refused:")}
    assert not refused & {call_id for call_id, _ in log}, where  # a refused call never entered
    stops = [e for e in outcome.events if e.kind not in ("ModelCall", "Middleware", "ToolCall")]
    assert len(stops) <= 1, where
    if stops:
        assert outcome.events[-1] == stops[0], where  # nothing after the terminal event
    return admitted


async def _one_run(rng: random.Random, trial: int) -> tuple[Any, list[tuple[str, int]], Limits]:
    limits = _random_limits(rng)
    scope = ExecutionScope(limits, {CAP})
    tool = scope.tool("probe", CAP, shared_probe)
    transport = ScriptedTransport(_random_script(rng, limits.model_calls + 1))
    agent = SimpleAgent(
        CountingClient(transport, scope), [tool], instructions="t", middleware=(observe_middleware, _tag_call)
    )
    log: list[tuple[str, int]] = []
    _RUN_LOG.set(log)  # copied into this run's call tasks
    outcome = await run_agent(agent, "go", is_complete=lambda: False)
    return outcome, log, limits


@pytest.mark.parametrize("seed_param", SEEDS)
def test_parallel_calls_in_one_response_never_over_admit(seed_param: int | str) -> None:
    seed = _seed(seed_param)
    rng = random.Random(seed)
    random.seed(seed)
    admitted_total = 0
    for trial in range(40):

        async def trial_run() -> tuple[Any, list[tuple[str, int]], Limits]:
            return await _one_run(rng, trial)

        outcome, log, limits = asyncio.run(trial_run())
        admitted_total += _check_run(outcome, log, limits, f"seed {seed} trial {trial} {limits}")
    assert admitted_total > 0  # the trials did exercise admission


@pytest.mark.parametrize("seed_param", SEEDS)
def test_many_runs_sharing_only_tool_definitions(seed_param: int | str) -> None:
    seed = _seed(seed_param)
    rng = random.Random(seed)
    random.seed(seed)

    async def together() -> list[tuple[Any, list[tuple[str, int]], Limits]]:
        async def isolated(trial: int) -> tuple[Any, list[tuple[str, int]], Limits]:
            return await _one_run(random.Random(rng.random()), trial)

        return await asyncio.gather(*(isolated(t) for t in range(12)))

    for index, (outcome, log, limits) in enumerate(asyncio.run(together())):
        _check_run(outcome, log, limits, f"seed {seed} loop-run {index} {limits}")

    # The same, with each run on its own event loop in its own thread.
    found: list[tuple[Any, list[tuple[str, int]], Limits]] = []
    seeds = [rng.random() for _ in range(6)]

    def in_thread(value: float) -> None:
        found.append(run_sync(_one_run(random.Random(value), 0)))

    threads = [threading.Thread(target=in_thread, args=(value,)) for value in seeds]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(found) == len(seeds)
    for index, (outcome, log, limits) in enumerate(found):
        _check_run(outcome, log, limits, f"seed {seed} thread-run {index} {limits}")


@pytest.mark.parametrize("seed_param", SEEDS)
def test_threads_invoking_one_guarded_tool_directly(seed_param: int | str) -> None:
    seed = _seed(seed_param)
    rng = random.Random(seed)
    for trial in range(25):
        limits = Limits(tool_calls=rng.randint(0, 12), repetitions=rng.randint(0, 3), deadline_s=30.0)
        scope = ExecutionScope(limits, {CAP})
        entries: list[tuple[int, int]] = []
        lock = threading.Lock()
        delays = [rng.uniform(0, 0.0005) for _ in range(64)]

        def body(n: int, who: int) -> str:
            with lock:
                entries.append((n, who))
            time.sleep(delays[(n * 7 + who) % len(delays)])
            return "ok"

        tool = scope.tool("probe", CAP, body)
        threads_n = rng.randint(2, 8)
        plans = [[rng.randint(1, 4) for _ in range(rng.randint(1, 4))] for _ in range(threads_n)]
        barrier = threading.Barrier(threads_n)
        outcomes: list[tuple[int, int, str]] = []

        def worker(who: int, plan: list[int]) -> None:
            barrier.wait()
            for n in plan:
                try:
                    tool.invoke({"n": n, "who": who % 2})
                except RunHalted as halt:  # refused before the body, or dropped after it ran
                    outcomes.append((n, who % 2, "refused" if halt.refused else "dropped"))
                else:
                    outcomes.append((n, who % 2, "ok"))

        workers = [threading.Thread(target=worker, args=(i, plan)) for i, plan in enumerate(plans)]
        for thread in workers:
            thread.start()
        for thread in workers:
            thread.join(30)

        where = f"seed {seed} trial {trial} {limits}"
        admitted = [o for o in outcomes if o[2] in ("ok", "dropped")]
        assert len(outcomes) == sum(map(len, plans)), where
        assert len(entries) == len(admitted) == scope.usage.tool_calls <= limits.tool_calls, where
        assert all(c <= limits.repetitions for c in Counter(entries).values()), where
        assert Counter(entries) == Counter((n, w) for n, w, _ in admitted), where  # refused never entered
        kinds = [e.kind for e in scope.events]
        assert kinds.count("ToolCall") == len(admitted), where
        stops = [k for k in kinds if k != "ToolCall"]
        assert len(stops) == (1 if len(admitted) < len(outcomes) else 0), where
        assert all(o[2] != "dropped" for o in outcomes) or stops, where
        if stops:
            assert kinds[-1] == stops[0], where


def test_reproducible_from_a_seed() -> None:
    """The trials replay exactly from a seed (so a failing fresh seed can be investigated)."""

    def summary(seed: int) -> list[tuple[str, ...]]:
        rng = random.Random(seed)
        random.seed(seed)
        out = []
        for trial in range(5):
            outcome, _, _ = asyncio.run(_one_run(rng, trial))
            out.append((outcome.status.value, *(str(e) for e in outcome.events)))
        return out

    assert summary(FRESH_SEED) == summary(FRESH_SEED)


def test_build_helper_uses_the_granted_capability() -> None:
    agent, transport, scope = build(["done"], {"probe": shared_probe})
    _RUN_LOG.set([])
    assert asyncio.run(go(agent)).status == "Incomplete"
    assert CAP in scope.capabilities and transport.calls == 1
