"""What each private trick kept in labkit/core buys a complete run, paired and interleaved in CPU time.

``python -m benchmarks.tricks [--rounds R] [--runs N]`` prints one JSON line: for each trick, the ratio
"trick off / trick on" of blocks of ``N`` complete harness runs (``await prepare("complete").arun()``),
alternating in one process as :func:`benchmarks.paired.pair` does, median and range over ``R`` rounds.
A trick stays when it buys at least 5 % of a run (a ratio of 1.05 or more); its figure is written
beside it in the code.

* ``lazy_token_event``: :class:`labkit.CancelToken` makes its ``threading.Event`` on the first
  ``wait()`` (off: in ``__init__``, one per run).
* ``shared_events``: a scope's recorded ``(kind, name, count)`` becomes one cached
  :class:`labkit.ControlEvent` (:mod:`labkit.core._machinery.shared_events`; off: a new event each).
* ``shared_shapes``: a body's shape (its argument model) is reused by bodies made of the same parts
  (:mod:`labkit.core._machinery.shapes`; off: every tool reads its body and builds its model anew,
  so ``declared_tools`` is off too).
* ``declared_tools``: a :class:`labkit.Tool` reads its body once, when it is declared, and each run
  binds that reading (off: each run's tool looks its shape up again, ``scope.tool`` as before).
* ``door_checks_once``: a ``Limits`` and a ``frozenset`` of grants pass the scope's door checks once
  per object (:mod:`labkit.core._machinery.checked`; off: checked at every scope).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import threading
from collections.abc import Callable
from types import MethodType
from typing import Any

import labkit
from labkit.core import binding, bodies, scope
from labkit.core.events import ControlEvent
from labkit.loops.scenarios import Tool

from .paired import pair


def _eager_init(self: bodies.CancelToken) -> None:
    self._cancelled = False
    self._event = threading.Event()


def _switches() -> dict[str, Callable[[bool], None]]:
    lazy_init = bodies.CancelToken.__init__

    def token(off: bool) -> None:
        bodies.CancelToken.__init__ = _eager_init if off else lazy_init  # type: ignore[method-assign]

    cached_event = scope.event
    shared_shape = binding.shared_shape

    def events(off: bool) -> None:
        scope.event = _new_event if off else cached_event  # type: ignore[assignment]

    declared_bind = Tool.bind
    checked_once = scope.checked_once

    def declared(off: bool) -> None:
        Tool.bind = _bind_by_reading if off else declared_bind  # type: ignore[method-assign]

    def shapes(off: bool) -> None:
        declared(off)
        binding.shared_shape = _read_again if off else shared_shape  # type: ignore[assignment]

    def door(off: bool) -> None:
        scope.checked_once = _check_again if off else checked_once  # type: ignore[assignment]

    return {
        "lazy_token_event": token,
        "shared_events": events,
        "shared_shapes": shapes,
        "declared_tools": declared,
        "door_checks_once": door,
    }


def _bind_by_reading(self: Tool, scope: Any, state: object) -> Any:
    return scope.tool(self.name, self.capability, MethodType(self.body, state), description=self.description)


def _check_again(value: Any, check: Callable[[Any], Any]) -> Any:
    return check(value)


def _new_event(kind: str, name: str, count: int) -> ControlEvent:
    return ControlEvent(kind=kind, name=name, count=count)  # type: ignore[arg-type]


def _read_again(body: Any, code_owner: Any, tool: str, read: Callable[[], Any]) -> Any:
    return read()


def measure(rounds: int, runs: int) -> dict[str, Any]:
    loop = asyncio.new_event_loop()

    async def complete_runs() -> None:
        for _ in range(runs):
            assert (await labkit.prepare("complete").arun()).status is labkit.RunStatus.COMPLETED

    def trick_on() -> None:
        loop.run_until_complete(complete_runs())

    out: dict[str, Any] = {"rounds": rounds, "runs_per_block": runs}
    for name, switch in _switches().items():

        def trick_off(switch: Callable[[bool], None] = switch) -> None:
            switch(True)
            try:
                trick_on()
            finally:
                switch(False)

        result = pair(trick_off, trick_on, 1, rounds)
        out[name] = {
            "off_over_on_cpu": result["ratio"],
            "range": result["range"],
            "off_over_on_wall": result["wall_ratio"],
            "on_cpu_us_per_run": result["b_cpu_us"] / runs,
            "off_cpu_us_per_run": result["a_cpu_us"] / runs,
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.tricks")
    parser.add_argument("--rounds", type=int, default=201)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    print(json.dumps(measure(args.rounds, args.runs)))


if __name__ == "__main__":
    main()
