"""Time one implementation in this (fresh) process and print one JSON line.

``python -m benchmarks.worker KEY [--repeats R] [--seconds S]``

The run is verified before any timing (both bodies ran once, 3 model calls,
final text) and again after the last repeat. Async implementations are
awaited inside one running event loop; sync ones are called from plain code.
Reported: microseconds per run (median of the repeats, and min/max; wall time, and
this process's CPU time, which a busy shared machine disturbs less), the
peak of memory allocated during one run (tracemalloc), and this process's
peak resident memory.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import json
import resource
import statistics
import sys
import time
import tracemalloc
import warnings
from typing import Any

from . import common
from .impls import IMPLS


def _measure_sync(run: Any, repeats: int, seconds: float) -> tuple[list[float], list[float], int]:
    common.verify(*run())
    for _ in range(20):  # warm-up
        run()
    start = time.perf_counter()
    run()
    one = max(time.perf_counter() - start, 1e-7)
    number = max(1, int(seconds / one))
    samples, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        for _ in range(number):
            run()
        samples.append((time.perf_counter() - start) / number)
        cpu.append((time.process_time() - start_cpu) / number)
    common.verify(*run())
    gc.collect()
    tracemalloc.start()
    run()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return samples, cpu, peak


async def _measure_async(run: Any, repeats: int, seconds: float) -> tuple[list[float], list[float], int]:
    common.verify(*await run())
    for _ in range(20):
        await run()
    start = time.perf_counter()
    await run()
    one = max(time.perf_counter() - start, 1e-7)
    number = max(1, int(seconds / one))
    samples, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        for _ in range(number):
            await run()
        samples.append((time.perf_counter() - start) / number)
        cpu.append((time.process_time() - start_cpu) / number)
    common.verify(*await run())
    gc.collect()
    tracemalloc.start()
    await run()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return samples, cpu, peak


def measure(key: str, repeats: int, seconds: float) -> dict[str, Any]:
    module = importlib.import_module(IMPLS[key])
    result: dict[str, Any] = {"key": key, "name": module.NAME, "style": module.STYLE}
    try:
        run = module.make()
        if module.STYLE == "async":
            samples, cpu, peak = asyncio.run(_measure_async(run, repeats, seconds))
        else:
            samples, cpu, peak = _measure_sync(run, repeats, seconds)
    except common.Incorrect as exc:
        result["error"] = f"incorrect run: {exc}"
        return result
    result.update(
        us=statistics.median(samples) * 1e6,
        us_min=min(samples) * 1e6,
        us_max=max(samples) * 1e6,
        cpu_us=statistics.median(cpu) * 1e6,
        peak_kib=peak / 1024,
        rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.worker")
    parser.add_argument("key", choices=list(IMPLS))
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=0.1, help="target seconds per repeat")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    try:
        result = measure(args.key, args.repeats, args.seconds)
    except ImportError as exc:
        result = {"key": args.key, "error": f"not installed: {exc}"}
    print(json.dumps(result))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
