"""Guard overhead per tool call: the same tool and binding, through the guard and around it.

``python -m benchmarks.guard`` prints one JSON line. Per call, in µs, in wall and CPU time
(``cpu_`` keys); guarded and unguarded blocks alternate, and the overhead is the median of
each round's difference (with its range):

* ``async_guarded``: ``await tool.ainvoke(args)`` (bind, guard, async body, re-check);
* ``async_unguarded``: ``tool.bind(args)`` then ``await body(**fields)``;
* ``sync_guarded`` / ``sync_unguarded``: the same with a sync body and ``tool.invoke``
  called from plain code (the body runs in the calling thread);
* ``sync_in_loop``: a sync body awaited inside a run: it runs in a daemon thread so the
  deadline can abandon it (docs/guarantees.md, *Cancellation reaches the transport and the bodies*);
  reported for honesty, not part of the 3 µs target.
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


def _block(fn: Any, number: int) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(number):
        fn()
    return (time.perf_counter() - wall) / number * 1e6, (time.process_time() - cpu) / number * 1e6


async def _ablock(fn: Any, number: int) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(number):
        await fn()
    return (time.perf_counter() - wall) / number * 1e6, (time.process_time() - cpu) / number * 1e6


def _paired(rounds: list[tuple[tuple[float, float], tuple[float, float]]], prefix: str) -> dict[str, Any]:
    """Per round: guarded and unguarded blocks side by side; the overhead is their difference in that round."""
    out: dict[str, Any] = {}
    for index, clock in ((0, ""), (1, "cpu_")):
        guarded = [g[index] for g, _ in rounds]
        unguarded = [u[index] for _, u in rounds]
        overhead = [g - u for g, u in zip(guarded, unguarded, strict=True)]
        out[f"{clock}{prefix}_guarded"] = statistics.median(guarded)
        out[f"{clock}{prefix}_unguarded"] = statistics.median(unguarded)
        out[f"{clock}{prefix}_overhead"] = statistics.median(overhead)
        out[f"{clock}{prefix}_overhead_range"] = [min(overhead), max(overhead)]
    return out


def measure(repeats: int = 9, number: int = 20000) -> dict[str, Any]:
    scope = labkit.ExecutionScope(HUGE, {"x"})
    atool = scope.tool("echo_async", "x", _async_body)
    stool = scope.tool("echo_sync", "x", _sync_body)

    async def guarded() -> Any:
        return await atool.ainvoke(ARGS)

    async def unguarded() -> Any:
        return await _async_body(**atool.bind(ARGS).__dict__)

    async def in_thread() -> Any:
        return await stool.ainvoke(ARGS)

    async def run_async() -> dict[str, Any]:
        assert await guarded() == await unguarded() == 42
        rounds = []
        for r in range(repeats):  # alternate which side goes first
            if r % 2 == 0:
                g = await _ablock(guarded, number)
                u = await _ablock(unguarded, number)
            else:
                u = await _ablock(unguarded, number)
                g = await _ablock(guarded, number)
            rounds.append((g, u))
        in_loop = [await _ablock(in_thread, max(number // 50, 50)) for _ in range(repeats)]
        return _paired(rounds, "async") | {
            "sync_in_loop": statistics.median(w for w, _ in in_loop),
            "cpu_sync_in_loop": statistics.median(c for _, c in in_loop),
        }

    result = asyncio.run(run_async())
    assert stool.invoke(ARGS) == _sync_body(**stool.bind(ARGS).__dict__) == 42
    sync_rounds = []
    for r in range(repeats):
        sides = [
            lambda: _block(lambda: stool.invoke(ARGS), number),
            lambda: _block(lambda: _sync_body(**stool.bind(ARGS).__dict__), number),
        ]
        if r % 2:
            u, g = sides[1](), sides[0]()
        else:
            g, u = sides[0](), sides[1]()
        sync_rounds.append((g, u))
    result |= _paired(sync_rounds, "sync")
    admitted = scope.usage.tool_calls
    tool_events = sum(1 for e in scope.events if e.kind == "ToolCall")
    result["admitted_equals_events"] = admitted == tool_events
    return result


if __name__ == "__main__":
    print(json.dumps(measure()))
