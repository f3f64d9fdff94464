"""``python -m benchmarks.capstone``: one ``check_guard`` call, in seconds, with the bound it explored.

Chapter 10's checker runs a learner's guard alone on its scripts, then under every
schedule of its races with up to ``BOUND`` preemptions. This measures one call on a
correct guard (it explores everything) and on the check–pause–reserve guard (it stops
at the first breaking schedule), each the median of ``--repeats`` calls in this process.
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import labkit
from labkit.teaching.capstone import GuardBase, check_guard, pause
from labkit.teaching.capstone.guard import BOUND


def _refusal(guard: GuardBase, call, key: str) -> str | None:
    """Chapter 10's checks in labkit's order; ``None`` admits the call."""
    if guard.cancelled:
        return "Cancelled"
    if call.capability not in guard.granted:
        return "PermissionDenied"
    if guard.admitted >= guard.tool_calls:
        return "ToolBudget"
    if guard.seen.get(key, 0) >= guard.repetitions:
        return "RepeatedCall"
    return None


class Guard(GuardBase):
    """Chapter 10's answer: the checks and the reservation under one lock, the body after, the re-check."""

    def admit(self, call, body):
        key = labkit.signature(call.tool, call.arguments)
        with self.lock:
            refused = _refusal(self, call, key)
            if refused:
                return refused
            self.admitted += 1
            self.seen[key] = self.seen.get(key, 0) + 1
        result = body()
        return "Cancelled" if self.cancelled else result


class SplitGuard(GuardBase):
    """The same checks, then the lock released, pause(), and the reservation locked again."""

    def admit(self, call, body):
        key = labkit.signature(call.tool, call.arguments)
        with self.lock:
            refused = _refusal(self, call, key)
        if refused:
            return refused
        pause()
        with self.lock:
            self.admitted += 1
            self.seen[key] = self.seen.get(key, 0) + 1
        result = body()
        return "Cancelled" if self.cancelled else result


def _measure(guard: type, repeats: int) -> dict[str, object]:
    walls, cpus = [], []
    report = None
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        report = check_guard(guard)
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    assert report is not None
    return {
        "passed": report.passed,
        "faults": list(report.faults),
        "scripts": report.scripts,
        "schedules": report.schedules,
        "bound": report.bound,
        "wall_s": statistics.median(walls),
        "cpu_s": statistics.median(cpus),
        "wall_range": [min(walls), max(walls)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.capstone")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(
        json.dumps(
            {"bound": BOUND, "correct": _measure(Guard, args.repeats), "split": _measure(SplitGuard, args.repeats)}
        )
    )


if __name__ == "__main__":
    main()
