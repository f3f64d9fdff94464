"""A learner's scenario in a file, for `labkit run tests/scenarios/adder.py:ADDER`."""

from dataclasses import dataclass, field

import labkit


@dataclass
class Counter:
    total: int = 0
    entries: dict[str, int] = field(default_factory=lambda: {"add": 0})


def add(state: Counter, x: int) -> int:
    """Add x to the running total."""
    state.entries["add"] += 1
    state.total += x
    return state.total


ADDER = labkit.scenario(
    "adder",
    tools=[labkit.Tool("add", "math.add", add)],
    script=[labkit.Reply("Adding 2 first.", [labkit.Call("add", {"x": 2})]), labkit.Call("add", {"x": 3}), "Done: 5."],
    done=lambda state: state.total == 5,
    state=Counter,
)
NOT_A_SCENARIO = 42
