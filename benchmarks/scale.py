"""Scale: many concurrent runs in one loop, and one scope hammered by many threads.

``python -m benchmarks.scale [--runs N] [--threads T] [--calls C]`` prints one JSON line.

* ``runs``: N ``complete`` runs (half harness, half simple) started together with
  ``asyncio.gather``, each with its own scope. The transport yields to the loop before
  every model call, so the runs really interleave. Every run must end ``Completed``
  with exactly 3 ``ModelCall`` and 2 ``ToolCall`` events, both bodies entered once and
  3 calls reaching its transport; any other run is counted as miscounted. Also reported:
  CPU µs per run, the part of it spent in the garbage collector, and the collections of
  each generation during the runs (every setup and outcome is kept until the end, so a
  full collection walks every live run).
* ``--gc-sweep N1 N2 ...``: the same CPU and GC figures for each N, in fresh event loops,
  to read how the collector's work per run grows with the number of live runs.
* ``--steady L``: L lanes in one loop, each running 3 ``complete`` runs one after another and
  keeping nothing: about L runs live at any time while finished ones are dropped (a server's
  shape). CPU and GC µs per run; this is where a finished run that only the collector can free
  (a reference cycle) costs most.
* ``threads``: T threads call one guarded sync tool of one scope C times each
  (``tool.invoke``, distinct arguments), with a tool budget of exactly T * C. Every
  call must be admitted, the body entered T * C times, the ToolCall counts must be
  1..T*C in order, and one more call must halt with ``ToolBudget``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import threading
import time
from collections.abc import AsyncIterator

import labkit
from labkit import ChatChunk, ChatRequest, RunStatus


class YieldingTransport:
    """Delegates to a scripted transport, yielding to the event loop before each model call."""

    name = "scripted"

    def __init__(self, inner: labkit.ScriptedTransport) -> None:
        self.inner = inner

    @property
    def calls(self) -> int:
        return self.inner.calls

    async def send(self, request: ChatRequest) -> AsyncIterator[ChatChunk]:
        await asyncio.sleep(0)
        async for chunk in self.inner.send(request):
            yield chunk


def _correct(setup: labkit.Setup, outcome: labkit.RunOutcome) -> bool:
    return (
        outcome.status is RunStatus.COMPLETED
        and outcome.count("ModelCall") == 3
        and outcome.count("ToolCall") == 2
        and setup.task.entries == {"read_ticket": 1, "finish_review": 1}
        and setup.transport.calls == 3
    )


class _CollectorClock:
    """CPU seconds spent in the garbage collector while installed (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.process_time()
        else:
            self.seconds += time.process_time() - self._started


async def concurrent_runs(n: int) -> dict[str, float]:
    scenario = labkit.SCENARIOS["complete"]
    gc.collect()  # the previous measurement's garbage is not this one's work
    start = time.perf_counter()
    setups = [
        labkit.prepare(
            scenario, agent="harness" if i % 2 == 0 else "simple", transport=YieldingTransport(scenario.transport())
        )
        for i in range(n)
    ]
    prepared = time.perf_counter()
    collector, before = _CollectorClock(), [g["collections"] for g in gc.get_stats()]
    gc.callbacks.append(collector)
    cpu = time.process_time()
    try:
        outcomes = await asyncio.gather(*(s.arun() for s in setups))
    finally:
        cpu = time.process_time() - cpu
        gc.callbacks.remove(collector)
    done = time.perf_counter()
    miscounted = sum(1 for s, o in zip(setups, outcomes, strict=True) if not _correct(s, o))
    return {
        "runs": n,
        "miscounted": miscounted,
        "prepare_s": prepared - start,
        "run_s": done - prepared,
        "runs_per_s": n / (done - start),
        "runs_per_s_excluding_prepare": n / (done - prepared),
        "cpu_us_per_run": cpu / n * 1e6,
        "gc_cpu_us_per_run": collector.seconds / n * 1e6,
        "collections": [g["collections"] - b for g, b in zip(gc.get_stats(), before, strict=True)],
    }


async def steady_runs(lanes: int, per_lane: int = 3) -> dict[str, float]:
    scenario = labkit.SCENARIOS["complete"]

    async def lane(index: int) -> int:
        wrong = 0
        for i in range(per_lane):
            agent = "harness" if (index + i) % 2 == 0 else "simple"
            setup = labkit.prepare(scenario, agent=agent, transport=YieldingTransport(scenario.transport()))
            wrong += not _correct(setup, await setup.arun())
        return wrong

    gc.collect()
    collector, before = _CollectorClock(), [g["collections"] for g in gc.get_stats()]
    gc.callbacks.append(collector)
    cpu = time.process_time()
    try:
        miscounted = sum(await asyncio.gather(*(lane(i) for i in range(lanes))))
    finally:
        cpu = time.process_time() - cpu
        gc.callbacks.remove(collector)
    runs = lanes * per_lane
    return {
        "lanes": lanes,
        "runs": runs,
        "miscounted": miscounted,
        "cpu_us_per_run": cpu / runs * 1e6,
        "gc_cpu_us_per_run": collector.seconds / runs * 1e6,
        "collections": [g["collections"] - b for g, b in zip(gc.get_stats(), before, strict=True)],
    }


def hammer(threads: int, calls: int) -> dict[str, float]:
    budget = threads * calls
    entered = 0
    lock = threading.Lock()

    def body(input: int) -> int:
        nonlocal entered
        with lock:
            entered += 1
        return input

    scope = labkit.ExecutionScope(labkit.Limits(tool_calls=budget, repetitions=1, deadline_s=3600), {"x"})
    tool = scope.tool("work", "x", body)
    failures: list[BaseException] = []
    barrier = threading.Barrier(threads + 1)

    def worker(index: int) -> None:
        barrier.wait()
        try:
            for j in range(calls):
                tool.invoke({"input": index * calls + j})
        except BaseException as exc:  # reported below, never swallowed
            failures.append(exc)

    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in pool:
        t.join()
    elapsed = time.perf_counter() - start
    try:
        tool.invoke({"input": -1})
        extra_halted = False
    except labkit.RunHalted as halt:
        extra_halted = halt.reason is labkit.StopReason.TOOL_BUDGET
    counts = [e.count for e in scope.events if e.kind == "ToolCall"]
    exact = not failures and entered == budget and counts == list(range(1, budget + 1)) and extra_halted
    return {
        "threads": threads,
        "calls": budget,
        "exact": exact,
        "failures": len(failures),
        "seconds": elapsed,
        "guarded_calls_per_s": budget / elapsed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale")
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--threads", type=int, default=32)
    parser.add_argument("--calls", type=int, default=2_000, help="guarded calls per thread")
    parser.add_argument("--gc-sweep", type=int, nargs="+", metavar="N", help="only: concurrent runs for each N")
    parser.add_argument("--steady", type=int, metavar="L", help="only: L lanes of 3 runs, nothing kept")
    args = parser.parse_args()
    if args.steady:
        print(json.dumps({"steady": asyncio.run(steady_runs(args.steady))}))
        return
    if args.gc_sweep:
        print(json.dumps({"gc_sweep": [asyncio.run(concurrent_runs(n)) for n in args.gc_sweep]}))
        return
    result = {"concurrent": asyncio.run(concurrent_runs(args.runs)), "threads": hammer(args.threads, args.calls)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
