"""The guard checker's "why" for a race names what really happened: a generated space of race mutations.

Each case is the right guard (labkit's order under one lock, the body outside it) with one race
mistake injected, written out as a learner would write it (a module of its own, so the checker
quotes its lines): a check before the lock, a reservation after it, a reservation under a second
lock or in a second locked step, a lock made per call, a stale read before the lock, a copy written
back after the lock, ... Every mistake is crossed with several ways to write the reservation and the
check (``+= 1`` or ``= ... + 1``, ``seen.get`` on one line or two). The oracle is the mutation
itself: the fault id it injects and the state (``admitted`` or ``seen``) and locks it puts in the
wrong place. The witness must name that fault and that state, for every case, and the right guard,
written each of those ways, must stay correct.
"""

from __future__ import annotations

import importlib.util
import itertools
import textwrap
from dataclasses import dataclass

import pytest

from labkit.teaching.capstone import check_guard

# how the two reservations and the two checks may be written (a right guard with any of them is right)
ADMITTED_FORMS = {
    "inc": ["self.admitted += 1"],
    "assign": ["self.admitted = self.admitted + 1"],
}
SEEN_FORMS = {
    "get": ["self.seen[key] = self.seen.get(key, 0) + 1"],
    "two_lines": ["n = self.seen.get(key, 0)", "self.seen[key] = n + 1"],
    "setdefault": ["self.seen.setdefault(key, 0)", "self.seen[key] += 1"],
}
CHECK_FORMS = {
    "get": "self.seen.get(key, 0) >= self.repetitions",
    "in": "(self.seen[key] if key in self.seen else 0) >= self.repetitions",
}

BUDGET = ["if self.admitted >= self.tool_calls:", '    return "ToolBudget"']
FIRST = [
    "if self.cancelled:",
    '    return "Cancelled"',
    "if call.capability not in self.granted:",
    '    return "PermissionDenied"',
]


@dataclass(frozen=True)
class Mutation:
    """Where each piece of the guard goes; the fault it injects, and the states the witness may name."""

    name: str
    fault: str
    states: frozenset[str]
    budget_check: str = "in"  # "in" (under the lock), "before" (before the lock), "first" (a locked step of its own)
    repetition_check: str = "in"  # "in" or "before"
    admitted: str = "in"  # "in", "after" (after the lock, unlocked), "second", "other" (under another lock)
    seen: str = "in"
    lock: str = "self.lock"  # the lock of the main block
    stale: str = ""  # "admitted" / "seen": read into a local before the lock, checked from the copy
    copy_back: bool = False  # admitted read into a local under the lock, written back after it


def _both(*names: str) -> frozenset[str]:
    return frozenset(names)


MUTATIONS = [
    Mutation("budget check before the lock", "check_outside_lock", _both("admitted"), budget_check="before"),
    Mutation(
        "both checks before the lock",
        "check_outside_lock",
        _both("admitted", "seen"),
        budget_check="before",
        repetition_check="before",
    ),
    Mutation(
        "budget outside the lock",
        "check_outside_lock",
        _both("admitted"),
        budget_check="before",
        admitted="after",
    ),
    Mutation("no lock at all", "check_outside_lock", _both("admitted", "seen"), lock=""),
    Mutation("stale read of admitted before the lock", "check_outside_lock", _both("admitted"), stale="admitted"),
    Mutation("stale read of seen before the lock", "check_outside_lock", _both("seen"), stale="seen"),
    Mutation("admitted reserved after the lock", "reservation_outside_lock", _both("admitted"), admitted="after"),
    Mutation(
        "seen reserved after the lock (seen outside the lock)", "reservation_outside_lock", _both("seen"), seen="after"
    ),
    Mutation(
        "both reserved after the lock",
        "reservation_outside_lock",
        _both("admitted", "seen"),
        admitted="after",
        seen="after",
    ),
    Mutation(
        "a copy of admitted written back after the lock", "reservation_outside_lock", _both("admitted"), copy_back=True
    ),
    Mutation("admitted reserved under a second lock", "two_locks", _both("admitted"), admitted="other"),
    Mutation("seen reserved under a second lock", "two_locks", _both("seen"), seen="other"),
    Mutation(
        "both reserved under a second lock", "two_locks", _both("admitted", "seen"), admitted="other", seen="other"
    ),
    Mutation(
        "admitted reserved in a second locked step",
        "check_and_reserve_in_two_steps",
        _both("admitted"),
        admitted="second",
    ),
    Mutation("seen reserved in a second locked step", "check_and_reserve_in_two_steps", _both("seen"), seen="second"),
    Mutation(
        "check and reserve in two locked steps",
        "check_and_reserve_in_two_steps",
        _both("admitted", "seen"),
        admitted="second",
        seen="second",
    ),
    Mutation(
        "the budget checked in a locked step of its own",
        "check_and_reserve_in_two_steps",
        _both("admitted"),
        budget_check="first",
    ),
    Mutation("a fresh lock per call", "lock_per_call", _both("admitted", "seen"), lock="threading.Lock()"),
]
RIGHT = Mutation("the right guard", "", frozenset())


def source(m: Mutation, admitted_form: str, seen_form: str, check_form: str) -> str:
    """The guard module, as a learner would write it."""
    budget = BUDGET
    repetition = [f"if {CHECK_FORMS[check_form]}:", '    return "RepeatedCall"']
    reserve_admitted = ADMITTED_FORMS[admitted_form]
    reserve_seen = SEEN_FORMS[seen_form]
    pre: list[str] = []
    if m.stale == "admitted":
        pre.append("count = self.admitted")
        budget = ["if count >= self.tool_calls:", '    return "ToolBudget"']
    if m.stale == "seen":
        pre.append("times = self.seen.get(key, 0)")
        repetition = ["if times >= self.repetitions:", '    return "RepeatedCall"']
    if m.copy_back:
        reserve_admitted = ["count = self.admitted"]
    blocks: dict[str, list[str]] = {"before": [], "first": [], "in": [], "second": [], "other": [], "after": []}
    checks_first = "before" if "before" in (m.budget_check, m.repetition_check) else "in"
    blocks[checks_first] += FIRST  # cancellation and permission stay the first checks
    blocks[m.budget_check] += budget
    blocks[m.repetition_check] += repetition
    blocks[m.admitted] += reserve_admitted
    blocks[m.seen] += reserve_seen
    if m.copy_back:
        blocks["after"].append("self.admitted = count + 1")
    if m.budget_check == "first":  # the budget alone first, under the lock; the rest in the next step
        blocks["first"] = [*FIRST, *budget]
        blocks["in"] = [line for line in blocks["in"] if line not in FIRST]

    def locked(lock: str, lines: list[str]) -> list[str]:
        if not lines:
            return []
        if not lock:
            return lines
        return [f"with {lock}:", *(f"    {line}" for line in lines)]

    body = [
        "key = labkit.signature(call.tool, call.arguments)",
        *pre,
        *blocks["before"],
        *locked(m.lock, blocks["first"]),
        *locked(m.lock, blocks["in"]),
        *locked(m.lock, blocks["second"]),
        *locked("self.other_lock", blocks["other"]),
        *blocks["after"],
        "result = body()",
        "if self.cancelled:",
        '    return "Cancelled"',
        "return result",
    ]
    return (
        "import threading\n\nimport labkit\nfrom labkit.teaching.capstone import GuardBase\n\n\n"
        "class Guard(GuardBase):\n"
        "    def __init__(self, *args, **kwargs):\n"
        "        super().__init__(*args, **kwargs)\n"
        "        self.other_lock = threading.Lock()\n\n"
        "    def admit(self, call, body):\n" + textwrap.indent("\n".join(body), " " * 8) + "\n"
    )


FORMS = list(itertools.product(ADMITTED_FORMS, SEEN_FORMS, CHECK_FORMS))
CASES = list(
    {source(m, *forms): (m, *forms) for m in MUTATIONS for forms in FORMS}.values()
)  # a form a mutation does not use (the check it replaces by a stale copy) makes no new case


def _guard(tmp_path_factory: pytest.TempPathFactory, m: Mutation, *forms: str) -> type:
    folder = tmp_path_factory.mktemp("guards")
    path = folder / "learner_guard.py"
    path.write_text(source(m, *forms))
    spec = importlib.util.spec_from_file_location(f"learner_guard_{folder.name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Guard


def test_the_space_is_every_mutation_written_every_way():
    assert len(MUTATIONS) == 18 and len(FORMS) == 12
    assert len(CASES) == 16 * 12 + 2 * 6  # the stale copies of seen and of admitted use half the forms
    assert {m for m, *_forms in CASES} == set(MUTATIONS)
    for m, *forms in CASES:
        compile(source(m, *forms), "guard", "exec")


def _slow_unless(fast: bool) -> list[pytest.MarkDecorator]:
    return [] if fast else [pytest.mark.slow]


# `make test-fast` tries each mutation written one way (the ways taken in turn, so every way is tried by some
# mutation) and the right guard four ways; `make test` tries every case.
_WAYS = {m: [tuple(f) for n, *f in CASES if n == m] for m in MUTATIONS}
FAST = {m: _WAYS[m][i % len(_WAYS[m])] for i, m in enumerate(MUTATIONS)}


@pytest.mark.parametrize(
    "forms", [pytest.param(f, marks=_slow_unless(i % 3 == 0)) for i, f in enumerate(FORMS)], ids=lambda f: "-".join(f)
)
def test_the_right_guard_written_every_way_is_correct(tmp_path_factory, forms):
    report = check_guard(_guard(tmp_path_factory, RIGHT, *forms))
    assert report.passed, str(report)


def _named(why: str, m: Mutation) -> set[str]:
    """The states the why names, in the words each fault's why uses."""
    patterns = {
        "check_outside_lock": "check of {state} held no lock",
        "reservation_outside_lock": "reservation of {state} was made outside it",
        "two_locks": "checked {state} under self.lock and reserved it under self.other_lock",
        "check_and_reserve_in_two_steps": "released self.lock between its check of {state} and its reservation",
        "lock_per_call": "admit makes a new lock each time it runs",
    }
    pattern = patterns[m.fault]
    return {state for state in ("admitted", "seen") if pattern.format(state=state) in why}


@pytest.mark.parametrize(
    ("mutation", "admitted_form", "seen_form", "check_form"),
    [pytest.param(m, *f, marks=_slow_unless(tuple(f) == FAST[m])) for m, *f in CASES],
    ids=[f"{m.name}-{'-'.join(f)}".replace(" ", "_") for m, *f in CASES],
)
def test_every_race_mutation_gets_its_own_witness_naming_the_state_it_misplaced(
    tmp_path_factory, mutation, admitted_form, seen_form, check_form
):
    report = check_guard(_guard(tmp_path_factory, mutation, admitted_form, seen_form, check_form))
    assert not report.passed
    assert report.found_in == "race", str(report)
    assert report.faults == (mutation.fault,), str(report)
    why = report.problems[0]
    if mutation.fault == "lock_per_call":
        assert _named(why, mutation) == {"admitted", "seen"}, why
    else:
        named = _named(why, mutation)
        assert len(named) == 1 and named <= mutation.states, why


# -- the verdict does not depend on how busy the machine is ------------------------------------------


@pytest.fixture
def slow_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every schedule takes longer than the checker's time limit, as on a machine busy with other work."""
    from labkit.teaching.capstone import explore

    made = explore.Execution.__init__

    def init(self, functions, prefix, files, max_steps, timeout_s, lines=False):  # type: ignore[no-untyped-def]
        made(self, functions, prefix, files, max_steps, 1e-6, lines)

    monkeypatch.setattr(explore.Execution, "__init__", init)


@pytest.mark.parametrize("case", [CASES[0], CASES[len(CASES) // 2], CASES[-1]], ids=lambda c: c[0].name)
def test_a_witness_is_the_same_when_every_schedule_outlasts_the_time_limit(tmp_path_factory, slow_machine, case):
    mutation, *forms = case
    report = check_guard(_guard(tmp_path_factory, mutation, *forms))
    assert report.faults == (mutation.fault,), str(report)


def test_the_right_guard_stays_correct_when_every_schedule_outlasts_the_time_limit(tmp_path_factory, slow_machine):
    report = check_guard(_guard(tmp_path_factory, RIGHT, *FORMS[0]))
    assert report.passed, str(report)


def test_a_guard_that_waits_for_what_the_checker_does_not_control_is_still_reported():
    import threading

    from labkit.teaching.capstone import GuardBase

    class WaitsForAnEvent(GuardBase):
        def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            super().__init__(*args, **kwargs)
            self.ready = threading.Event()  # never set: no one else can wake it

        def admit(self, call, body):  # type: ignore[no-untyped-def]
            self.ready.wait()
            return body()

    report = check_guard(WaitsForAnEvent)
    assert report.faults == ("hang",), str(report)
    assert "waiting for something the checker does not control" in " ".join(report.problems), str(report)
