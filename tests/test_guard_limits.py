"""A guard whose budget or repetition limit is right at some values only is named, with the values that showed it.

The space: the right guard with its budget check (or its repetition check) comparing against ``bound(n)``
instead of ``n``, for bounds a learner writes (a ``min``, a ``max``, one more above some value, one less at
some value). The oracle is the bound itself: the values from 0 to 6 (budgets) or 0 to 3 (repetitions) where
``max(bound(n), 0)`` is not ``n`` are the values the why must name, each with the count the bound admits,
and no other.
"""

from __future__ import annotations

import re

import pytest

import labkit
from labkit.teaching.capstone import GuardBase, check_guard

BOUNDS = {
    "min(n, 3)": lambda n: min(n, 3),
    "max(n, 1)": lambda n: max(n, 1),
    "max(n, 2)": lambda n: max(n, 2),
    "n + (n > 2)": lambda n: n + (n > 2),
    "n - (n == 2)": lambda n: n - (n == 2),
    "min(n, 2) + (n > 4)": lambda n: min(n, 2) + (n > 4),
}


def guard_for(which: str, bound_name: str) -> type:
    bound = BOUNDS[bound_name]

    def admit(self, call, body):
        key = labkit.signature(call.tool, call.arguments)
        budget = bound(self.tool_calls) if which == "budget" else self.tool_calls
        repetitions = bound(self.repetitions) if which == "repetition" else self.repetitions
        with self.lock:
            if self.cancelled:
                return "Cancelled"
            if call.capability not in self.granted:
                return "PermissionDenied"
            if self.admitted >= budget:
                return "ToolBudget"
            if self.seen.get(key, 0) >= repetitions:
                return "RepeatedCall"
            self.admitted += 1
            self.seen[key] = self.seen.get(key, 0) + 1
        result = body()
        return "Cancelled" if self.cancelled else result

    return type(f"{which.title()}Bound", (GuardBase,), {"admit": admit})


CASES = [(w, b) for w in ("budget", "repetition") for b in BOUNDS]


@pytest.mark.parametrize(("which", "bound_name"), CASES, ids=[f"{w}-{b}" for w, b in CASES])
def test_a_limit_right_at_some_values_only_is_named_with_those_values(which, bound_name):
    bound = BOUNDS[bound_name]
    probed = range(7) if which == "budget" else range(4)
    wrong = {n: max(bound(n), 0) for n in probed if max(bound(n), 0) != n}
    report = check_guard(guard_for(which, bound_name))
    if not wrong:
        assert report.passed, str(report)
        return
    assert report.faults == (f"{which}_wrong_for_some_limits",), str(report)
    why = " ".join(" ".join(report.problems).split())
    if which == "budget":
        named = {int(n): int(m) for n, m in re.findall(r"with tool_calls=(\d+) it admitted (\d+) calls?", why)}
    else:
        named = {int(n): int(m) for n, m in re.findall(r"with repetitions=(\d+) it ran the same call (\d+) time", why)}
    assert named == wrong, why
    assert any(line.strip().startswith("probed:") for line in report.details), str(report)
