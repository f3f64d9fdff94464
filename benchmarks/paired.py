"""Paired, interleaved ratios in CPU time: the figures the targets of issue 13 are read from.

``python -m benchmarks.paired [--rounds R] [--growth N]`` prints one JSON line.

Each comparison times two variants A and B in the same process, alternating
A, B, A, B ... in blocks of the same number of calls; each round gives one
ratio A/B from adjacent blocks, so load that comes and goes on a shared
machine hits both sides of a pair alike. Reported: the median of the round
ratios and their range, and each side's median µs per call in CPU time
(``time.process_time``: this process, every thread) and wall time.

Comparisons:

* ``sync_run``: ``labkit.run(setup)`` from plain code / ``await setup.arun()`` in a running loop;
* ``sync_run_in_a_loop``: the same ``labkit.run`` called inside a running loop (a notebook
  cell: the run goes to a worker thread's loop) / ``await setup.arun()`` in that loop;
* ``sync_body``: a sync tool body awaited inside a run (worker thread) / the same body ``async``;
  its absolute µs per call is the figure the target names;
* ``thread_handoff``: the floor under ``sync_body``, whatever the pool: a future settled by
  another thread (woken through a lock, waking the loop with ``call_soon_threadsafe``; it runs
  nothing else) / the same future settled by the loop's own thread (``call_soon``). Both
  rows depend on where the scheduler puts the two threads: on a virtual machine, waking a
  thread on another, idle CPU costs more than the rest of the round trip (measured on the
  2-core machine of issue 13: 26 µs CPU with both threads on one CPU, 49 µs CPU / 62 µs wall
  on two); ``taskset -c 0 python -m benchmarks.paired --only sync_body thread_handoff``
  shows the one-CPU figures;
* ``sync_body_handoff``: ``sync_body``'s A / ``thread_handoff``'s A, paired: what labkit's path adds to
  the bare hand-off (issue 21's target: at most 1.3×, both measured in the same run);
* ``closure_tools``: a run whose two tool bodies are closures made for that run / the
  same run with module-level bodies;
* ``floor_harness`` / ``floor_simple``: ``await labkit.prepare("complete", agent=...).arun()`` / the
  reference floor's ``await floor.run(SCENARIOS["complete"])`` (benchmarks/impls/floor.py: the
  smallest honest guarded loop, held to labkit's outcomes by tests/test_reference_floor.py);
* ``growth``: ``--growth`` sequential ``await arun("complete")`` in one task with no
  yield between them: traced memory still held after 1 %, 10 % and 100 % of them, and
  CPU µs per run over the first and the last tenth.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import threading
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import labkit
from labkit import Call, Limits, ScriptedTransport
from labkit.loops.review import INSTRUCTIONS

HUGE = Limits(model_calls=1, tool_calls=10**9, repetitions=10**9, deadline_s=10**6)


def _block(fn: Callable[[], Any], number: int) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(number):
        fn()
    return (time.perf_counter() - wall) / number, (time.process_time() - cpu) / number


def pair(a: Callable[[], Any], b: Callable[[], Any], number: int, rounds: int) -> dict[str, Any]:
    """Time ``a`` and ``b`` (each a block of ``number`` calls) in alternating order; ratios a/b per round."""
    a(), b()  # warm-up
    a_cpu, b_cpu, a_wall, b_wall, ratios, wall_ratios = [], [], [], [], [], []
    for r in range(rounds):
        first, second = (a, b) if r % 2 == 0 else (b, a)  # alternate which side goes first
        one = _block(first, number)
        two = _block(second, number)
        (aw, ac), (bw, bc) = (one, two) if r % 2 == 0 else (two, one)
        a_cpu.append(ac), b_cpu.append(bc), a_wall.append(aw), b_wall.append(bw)
        ratios.append(ac / bc)
        wall_ratios.append(aw / bw)
    return {
        "ratio": statistics.median(ratios),
        "range": [min(ratios), max(ratios)],
        "wall_ratio": statistics.median(wall_ratios),
        "wall_range": [min(wall_ratios), max(wall_ratios)],
        "a_cpu_us": statistics.median(a_cpu) * 1e6,
        "b_cpu_us": statistics.median(b_cpu) * 1e6,
        "a_wall_us": statistics.median(a_wall) * 1e6,
        "b_wall_us": statistics.median(b_wall) * 1e6,
        "rounds": rounds,
        "number": number,
    }


def _per_call(result: dict[str, Any], number: int) -> dict[str, Any]:
    """Turn a pair of blocks of ``number`` calls into µs per call."""
    for side in ("a_cpu_us", "b_cpu_us", "a_wall_us", "b_wall_us"):
        result[side] /= number
    result["number"] = number
    return result


def _sync_blocks(number: int) -> tuple[Callable[[], Any], Callable[[], Any]]:
    def sync_run() -> None:
        outcome = labkit.run(labkit.prepare("complete"))
        assert outcome.status is labkit.RunStatus.COMPLETED

    async def async_runs() -> None:
        for _ in range(number):
            outcome = await labkit.prepare("complete").arun()
            assert outcome.status is labkit.RunStatus.COMPLETED

    loop = asyncio.new_event_loop()  # one running loop for every async block, as in a notebook or a server
    return sync_run, lambda: loop.run_until_complete(async_runs())


def sync_run(rounds: int, number: int = 200) -> dict[str, Any]:
    sync_one, async_block = _sync_blocks(number)

    def sync_block() -> None:
        for _ in range(number):
            sync_one()

    return _per_call(pair(sync_block, async_block, 1, rounds), number)


def sync_run_in_a_loop(rounds: int, number: int = 100) -> dict[str, Any]:
    """``labkit.run`` called where a loop is already running (a notebook cell) / ``await arun()`` there."""
    loop = asyncio.new_event_loop()

    async def sync_cell() -> None:
        for _ in range(number):
            assert labkit.run(labkit.prepare("complete")).status is labkit.RunStatus.COMPLETED

    async def async_cell() -> None:
        for _ in range(number):
            assert (await labkit.prepare("complete").arun()).status is labkit.RunStatus.COMPLETED

    result = pair(
        lambda: loop.run_until_complete(sync_cell()), lambda: loop.run_until_complete(async_cell()), 1, rounds
    )
    return _per_call(result, number)


def _echo_sync(n: int) -> int:
    return n


async def _echo_async(n: int) -> int:
    return n


def sync_body(rounds: int, number: int = 300) -> dict[str, Any]:
    scope = labkit.ExecutionScope(HUGE, {"x"})
    stool = scope.tool("echo_sync", "x", _echo_sync)
    atool = scope.tool("echo_async", "x", _echo_async)
    loop = asyncio.new_event_loop()

    async def calls(tool: labkit.GuardedTool) -> None:
        for i in range(number):
            assert await tool.ainvoke({"n": i}) == i

    result = pair(
        lambda: loop.run_until_complete(calls(stool)), lambda: loop.run_until_complete(calls(atool)), 1, rounds
    )
    return _per_call(result, number)


def _handoff(loop: asyncio.AbstractEventLoop, number: int) -> Callable[[], Any]:
    """``number`` round trips loop -> waiting thread -> loop with nothing else in them (the floor under a sync body)."""
    wake, box = threading.Lock(), []
    wake.acquire()

    def settler() -> None:  # one daemon thread, woken once per call
        while True:
            wake.acquire()
            future = box.pop()
            loop.call_soon_threadsafe(future.set_result, None)

    threading.Thread(target=settler, daemon=True).start()

    async def handed_over() -> None:
        for _ in range(number):
            future = loop.create_future()
            box.append(future)
            wake.release()
            await future

    return handed_over


def sync_body_handoff(rounds: int, number: int = 300) -> dict[str, Any]:
    """A sync body awaited inside a run (the ``sync_body`` row's A) / the bare hand-off (``thread_handoff``'s A)."""
    scope = labkit.ExecutionScope(HUGE, {"x"})
    stool = scope.tool("echo_sync", "x", _echo_sync)
    loop = asyncio.new_event_loop()
    handed_over = _handoff(loop, number)

    async def calls() -> None:
        for i in range(number):
            assert await stool.ainvoke({"n": i}) == i

    result = pair(lambda: loop.run_until_complete(calls()), lambda: loop.run_until_complete(handed_over()), 1, rounds)
    return _per_call(result, number)


def thread_handoff(rounds: int, number: int = 300) -> dict[str, Any]:
    """A round trip loop -> waiting thread -> loop with nothing else in it / the loop settling its own future."""
    loop = asyncio.new_event_loop()
    handed_over = _handoff(loop, number)

    async def same_thread() -> None:
        for _ in range(number):
            future = loop.create_future()
            loop.call_soon(future.set_result, None)
            await future

    result = pair(
        lambda: loop.run_until_complete(handed_over()), lambda: loop.run_until_complete(same_thread()), 1, rounds
    )
    return _per_call(result, number)


def _closure_setup() -> labkit.Setup:
    """``complete`` with its two tools written as closures made for this run, as in a notebook cell."""
    entries: dict[str, int] = {}

    def read_ticket(ticket_id: int) -> str:
        """Read a ticket."""
        entries["read_ticket"] = entries.get("read_ticket", 0) + 1
        return f"ticket {ticket_id}: the export button does nothing"

    def finish_review(ticket_id: int) -> str:
        """Finish the review."""
        entries["finish_review"] = entries.get("finish_review", 0) + 1
        return "review recorded"

    return _tools_setup(read_ticket, finish_review)


def _read_ticket(ticket_id: int) -> str:
    """Read a ticket."""
    return f"ticket {ticket_id}: the export button does nothing"


def _finish_review(ticket_id: int) -> str:
    """Finish the review."""
    return "review recorded"


def _tools_setup(read: Callable[..., str], finish: Callable[..., str]) -> labkit.Setup:
    scope = labkit.ExecutionScope(Limits(model_calls=6, tool_calls=4), {"ticket.read", "review.write"})
    tools = [scope.tool("read_ticket", "ticket.read", read), scope.tool("finish_review", "review.write", finish)]
    script = [Call("read_ticket", {"ticket_id": 42}), Call("finish_review", {"ticket_id": 42}), "Review finished."]
    transport = ScriptedTransport(script)
    agent = labkit.HarnessAgent(labkit.CountingClient(transport, scope), tools, instructions=INSTRUCTIONS)
    return labkit.Setup(labkit.SCENARIOS["complete"], scope, labkit.ReviewTask(), transport, agent)


def closure_tools(rounds: int, number: int = 100) -> dict[str, Any]:
    loop = asyncio.new_event_loop()

    async def runs(make: Callable[[], labkit.Setup]) -> None:
        for _ in range(number):
            setup = make()
            outcome = await labkit.run_agent(setup.agent, "Review ticket 42.", is_complete=lambda: True)
            assert outcome.count("ToolCall") == 2 and outcome.text == "Review finished.", outcome

    result = pair(
        lambda: loop.run_until_complete(runs(_closure_setup)),
        lambda: loop.run_until_complete(runs(lambda: _tools_setup(_read_ticket, _finish_review))),
        1,
        rounds,
    )
    return _per_call(result, number)


def _floor_pair(agent: str, rounds: int, number: int) -> dict[str, Any]:
    """labkit's ``complete`` run with ``agent`` / the reference floor's (benchmarks/impls/floor.py), both per run."""
    from .impls import floor

    complete = labkit.SCENARIOS["complete"]
    loop = asyncio.new_event_loop()

    async def labkit_runs() -> None:
        for _ in range(number):
            outcome = await labkit.prepare("complete", agent=agent).arun()
            assert outcome.status is labkit.RunStatus.COMPLETED

    async def floor_runs() -> None:
        for _ in range(number):
            assert (await floor.run(complete)).status == "Completed"

    result = pair(
        lambda: loop.run_until_complete(labkit_runs()), lambda: loop.run_until_complete(floor_runs()), 1, rounds
    )
    return _per_call(result, number)


def floor_harness(rounds: int, number: int = 200) -> dict[str, Any]:
    return _floor_pair("harness", rounds, number)


def floor_simple(rounds: int, number: int = 200) -> dict[str, Any]:
    return _floor_pair("simple", rounds, number)


def growth(total: int) -> dict[str, Any]:
    marks = sorted({max(total // 100, 1), max(total // 10, 1), total})
    held: dict[str, float] = {}
    tenth = max(total // 10, 1)
    cpu: dict[str, float] = {}

    async def runs() -> None:
        await labkit.arun("complete")  # warm every cache before measuring
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        start = time.process_time()
        for i in range(1, total + 1):
            await labkit.arun("complete")  # no yield to the loop between runs
            if i == tenth:
                cpu["first_tenth_us"] = (time.process_time() - start) / tenth * 1e6
            if i == total - tenth:
                start = time.process_time()
            if i in marks:
                pause = time.process_time()
                gc.collect()
                held[str(i)] = (tracemalloc.get_traced_memory()[0] - base) / 1024
                start += time.process_time() - pause
        cpu["last_tenth_us"] = (time.process_time() - start) / tenth * 1e6
        tracemalloc.stop()

    asyncio.run(runs())
    return {"runs": total, "held_kib": held, **cpu}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.paired")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--growth", type=int, default=100_000)
    parser.add_argument(
        "--only",
        nargs="*",
        default=[
            "sync_run",
            "sync_run_in_a_loop",
            "sync_body",
            "thread_handoff",
            "sync_body_handoff",
            "closure_tools",
            "floor_harness",
            "floor_simple",
            "growth",
        ],
    )
    args = parser.parse_args()
    out: dict[str, Any] = {"rounds": args.rounds}
    for name in args.only:
        out[name] = growth(args.growth) if name == "growth" else globals()[name](args.rounds)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
