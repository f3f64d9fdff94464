"""Where a labkit ``complete`` run spends the CPU time the reference floor does not (issue 21).

``python -m benchmarks.floor_profile [--runs N]`` prints one JSON line.

Both runs are profiled with cProfile (``await labkit.prepare("complete", agent=...).arun()`` and
``await floor.run(SCENARIOS["complete"])``, N runs each in one event loop). Each function's own
time goes to the file it is written in (pydantic-core's compiled validators to pydantic); any
other builtin's (``len``, a lock's ``__enter__``...) goes to the files that called it, in
proportion to the time spent in it from each. Each side's shares are then scaled to that
side's CPU µs per run measured without the profiler, in alternating blocks: the figures per file
are estimates (cProfile's cost grows with the number of calls, so code made of many small calls
is overstated), the totals are measured.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import time
from collections import defaultdict
from collections.abc import Callable, Coroutine
from typing import Any

import labkit

from .impls import floor


def _layer(filename: str) -> str:
    if "/labkit/" in filename:
        return "labkit/" + filename.rsplit("/labkit/", 1)[1]
    if filename.endswith("benchmarks/impls/floor.py"):
        return "benchmarks/impls/floor.py"
    if "/pydantic" in filename:
        return "pydantic"
    if "/asyncio/" in filename:
        return "asyncio"
    return "other (standard library)"


def _by_layer(stats: pstats.Stats) -> dict[str, float]:
    """Own time per layer, in seconds; a builtin's time goes to the layers of its callers."""
    out: dict[str, float] = defaultdict(float)
    for (filename, _, name), (_, _, own, _, callers) in stats.stats.items():  # type: ignore[attr-defined]
        if filename != "~" or "pydantic_core" in name:  # compiled validation is pydantic's own time
            out["pydantic" if filename == "~" else _layer(filename)] += own
            continue
        spent = sum(c[2] for c in callers.values())
        for (caller_file, _, _), caller in callers.items():
            share = caller[2] / spent if spent else 1 / len(callers)
            out["other (standard library)" if caller_file == "~" else _layer(caller_file)] += own * share
    return dict(out)


STAGES = {
    "labkit": {
        "prepare: scope, tools, transport, agent": [("labkit/loops/runner.py", "prepare")],
        "of which the run's tools": [("labkit/loops/scenarios.py", "start")],
        "model calls (counted, sent, answered)": [("labkit/transports/chat.py", "complete")],
        "tool calls (observed, bound, guarded, run, answered)": [("labkit/loops/agents.py", "_invoke_one")],
        "the run around its loop: task, deadline, finish, outcome": [("labkit/loops/running.py", "run_agent")],
        "the origin kept beside the outcome": [("labkit/loops/running.py", "_remember")],
    },
    "floor": {
        "prepare: scope, tools, transport, agent": [("benchmarks/impls/floor.py", "_start")],
        "model calls (counted, sent, answered)": [
            ("benchmarks/impls/floor.py", "before_model_call"),
            ("benchmarks/impls/floor.py", "_model"),
        ],
        "tool calls (observed, bound, guarded, run, answered)": [
            ("benchmarks/impls/floor.py", "_invoke"),
            ("benchmarks/impls/floor.py", "_result"),
        ],
        "the run around its loop: task, deadline, finish, outcome": [
            ("benchmarks/impls/floor.py", "run"),
            ("benchmarks/impls/floor.py", "_start", -1),  # run() starts the run itself: shown above
        ],
    },
}
"""Stages read as cumulative time (the functions and everything they call; a loop's task runs outside
``run_agent`` and ``run``), ``(file, function[, sign])`` each, on both sides where both have one."""


def _stages(stats: pstats.Stats, wanted: dict[str, list[tuple[Any, ...]]]) -> dict[str, float]:
    out = dict.fromkeys(wanted, 0.0)
    for (filename, _, name), (_, _, _, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        for label, functions in wanted.items():
            for suffix, function, *sign in functions:
                if name == function and filename.endswith(suffix):
                    out[label] += cumulative * (sign[0] if sign else 1)
    return out


def _runs(make: Callable[[], Coroutine[Any, Any, Any]], number: int) -> Callable[[], Coroutine[Any, Any, None]]:
    async def block() -> None:
        for _ in range(number):
            await make()

    return block


def profile(runs: int, agent: str) -> dict[str, Any]:
    complete = labkit.SCENARIOS["complete"]
    sides = {
        "labkit": _runs(lambda: labkit.prepare("complete", agent=agent).arun(), runs),
        "floor": _runs(lambda: floor.run(complete), runs),
    }
    loop = asyncio.new_event_loop()
    cpu: dict[str, list[float]] = {side: [] for side in sides}
    for block in sides.values():  # warm-up
        loop.run_until_complete(block())
    for _ in range(5):  # unprofiled, alternating: the totals the shares are scaled to
        for side, block in sides.items():
            start = time.process_time()
            loop.run_until_complete(block())
            cpu[side].append((time.process_time() - start) / runs * 1e6)
    out: dict[str, Any] = {"runs": runs, "agent": agent}
    for side, block in sides.items():
        profiler = cProfile.Profile()
        profiler.enable()
        loop.run_until_complete(block())
        profiler.disable()
        stats = pstats.Stats(profiler)
        layers = _by_layer(stats)
        scale = sorted(cpu[side])[len(cpu[side]) // 2] / sum(layers.values())  # µs per profiled second
        out[side] = {
            "cpu_us": sorted(cpu[side])[len(cpu[side]) // 2],
            "layers_us": {k: v * scale for k, v in layers.items()},
            "stages_us": {k: v * scale for k, v in _stages(stats, STAGES[side]).items()},
        }
    loop.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.floor_profile")
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--agent", default="harness")
    args = parser.parse_args()
    print(json.dumps(profile(args.runs, args.agent)))


if __name__ == "__main__":
    main()
