"""Guard overhead per tool call: the same tool and binding, through the guard and around it.

``python -m benchmarks.guard`` prints one JSON line. Per call, in µs (median of repeats):

* ``async_guarded``: ``await tool.ainvoke(args)`` (bind, guard, async body, re-check);
* ``async_unguarded``: ``tool.bind(args)`` then ``await body(**fields)``;
* ``sync_guarded`` / ``sync_unguarded``: the same with a sync body and ``tool.invoke``
  called from plain code (the body runs in the calling thread);
* ``sync_in_loop``: a sync body awaited inside a run: it runs in a daemon thread so the
  deadline can abandon it (SPEC §3.4); reported for honesty, not part of the 3 µs target.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from typing import Any

import labkit

ARGS = '{"input": 42}'
HUGE = labkit.Limits(model_calls=0, tool_calls=10**9, repetitions=10**9, deadline_s=10**6)


async def _async_body(input: int) -> int:
    return input


def _sync_body(input: int) -> int:
    return input


CLOCK = time.perf_counter  # wall time; `--cpu` switches to this process's CPU time


def _per_call(fn: Any, number: int, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = CLOCK()
        for _ in range(number):
            fn()
        samples.append((CLOCK() - start) / number)
    return statistics.median(samples) * 1e6


async def _aper_call(fn: Any, number: int, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = CLOCK()
        for _ in range(number):
            await fn()
        samples.append((CLOCK() - start) / number)
    return statistics.median(samples) * 1e6


def measure(repeats: int = 9, number: int = 20000) -> dict[str, float]:
    scope = labkit.ExecutionScope(HUGE, {"x"})
    atool = scope.tool("echo_async", "x", _async_body)
    stool = scope.tool("echo_sync", "x", _sync_body)

    async def guarded() -> Any:
        return await atool.ainvoke(ARGS)

    async def unguarded() -> Any:
        return await _async_body(**atool.bind(ARGS).__dict__)

    async def in_thread() -> Any:
        return await stool.ainvoke(ARGS)

    async def run_async() -> dict[str, float]:
        assert await guarded() == await unguarded() == 42
        out = {"async_guarded": await _aper_call(guarded, number, repeats),
               "async_unguarded": await _aper_call(unguarded, number, repeats),
               "sync_in_loop": await _aper_call(in_thread, max(number // 50, 50), repeats)}
        return out

    result = asyncio.run(run_async())
    assert stool.invoke(ARGS) == _sync_body(**stool.bind(ARGS).__dict__) == 42
    result["sync_guarded"] = _per_call(lambda: stool.invoke(ARGS), number, repeats)
    result["sync_unguarded"] = _per_call(lambda: _sync_body(**stool.bind(ARGS).__dict__), number, repeats)
    admitted = scope.usage.tool_calls
    tool_events = sum(1 for e in scope.events if e.kind == "ToolCall")
    result["admitted_equals_events"] = admitted == tool_events
    result["async_overhead"] = result["async_guarded"] - result["async_unguarded"]
    result["sync_overhead"] = result["sync_guarded"] - result["sync_unguarded"]
    return result


if __name__ == "__main__":
    import sys

    if "--cpu" in sys.argv:
        CLOCK = time.process_time
    print(json.dumps(measure()))
