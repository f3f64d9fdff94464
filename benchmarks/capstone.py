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


class Guard(GuardBase):
    """Chapter 10's answer: the rules in order under one lock, the body after, the re-check."""

    def admit(self, call, body):
        with self.lock:
            if self.cancelled:
                return "Cancelled"
            if call.capability not in self.granted:
                return "PermissionDenied"
            if self.admitted >= self.tool_calls:
                return "ToolBudget"
            key = labkit.signature(call.tool, call.arguments)
            if self.seen.get(key, 0) >= self.repetitions:
                return "RepeatedCall"
            self.admitted += 1
            self.seen[key] = self.seen.get(key, 0) + 1
        result = body()
        return "Cancelled" if self.cancelled else result


class SplitGuard(Guard):
    """The same checks, then the lock released, pause(), and the reservation locked again."""

    def admit(self, call, body):
        key = labkit.signature(call.tool, call.arguments)
        with self.lock:
            if self.cancelled:
                return "Cancelled"
            if call.capability not in self.granted:
                return "PermissionDenied"
            if self.admitted >= self.tool_calls:
                return "ToolBudget"
            if self.seen.get(key, 0) >= self.repetitions:
                return "RepeatedCall"
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
    print(json.dumps({"bound": BOUND, "correct": _measure(Guard, args.repeats),
                      "split": _measure(SplitGuard, args.repeats)}))


if __name__ == "__main__":
    main()
