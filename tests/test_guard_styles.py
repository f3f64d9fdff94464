"""Guards written in styles the mutation space does not use, right and wrong, each judged by what it does.

A guard here is chapter 10's rules written out as a learner might: its signature (``labkit.signature``,
``json.dumps`` with or without ``sort_keys``, ``repr``, ``str`` of a dict), its books (attributes, one dict,
an object of its own), its lock (a ``threading.Lock``, none, an ``asyncio.Lock``), its shape (``admit``
itself, a decorator around it, a helper with early returns) and how it refuses (a ``str``, labkit's
``StopReason``, an exception of its own). The oracle never asks the checker: it reads the guard's parts.
A part that raises on some call (an ``asyncio.Lock`` in a ``with``, ``json.dumps`` of a Decimal, a refusal
raised) makes ``raised``; a signature whose classes over the course's calls differ from labkit's makes
the signature faults (merged, split); no lock makes a race fault; else the guard is right.
"""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
import json
from decimal import Decimal

import pytest

import labkit
from labkit.teaching.capstone import check_guard
from labkit.teaching.capstone.rules import ALPHABET, LOOKALIKES

KEYS = {
    "labkit": "labkit.signature(call.tool, call.arguments)",
    "json sort_keys": "call.tool + json.dumps(dict(call.arguments), sort_keys=True)",
    "json sort_keys default=str": "call.tool + json.dumps(dict(call.arguments), sort_keys=True, default=str)",
    "json no sort_keys default=str": "call.tool + json.dumps(dict(call.arguments), default=str)",
    "repr": "repr((call.tool, sorted(call.arguments.items())))",
    "str of a dict": "call.tool + str(dict(sorted(call.arguments.items())))",
}

BOOKS = {  # (init lines, budget read, repetition read, reservation lines)
    "attributes": (
        [],
        "self.admitted",
        "self.seen.get(key, 0)",
        ["self.admitted += 1", "self.seen[key] = self.seen.get(key, 0) + 1"],
    ),
    "one dict": (
        ['self.books = {"admitted": 0, "seen": {}}'],
        'self.books["admitted"]',
        'self.books["seen"].get(key, 0)',
        ['self.books["admitted"] += 1', 'self.books["seen"][key] = self.books["seen"].get(key, 0) + 1'],
    ),
    "an object": (
        ["self.books = Books()"],
        "self.books.admitted",
        "self.books.seen.get(key, 0)",
        ["self.books.admitted += 1", "self.books.seen[key] = self.books.seen.get(key, 0) + 1"],
    ),
}

LOCKS = {"threading.Lock": "self.gate = threading.Lock()", "no lock": "", "asyncio.Lock": "self.gate = asyncio.Lock()"}

MEMBERS = {"ToolBudget": "TOOL_BUDGET", "RepeatedCall": "REPEATED_CALL", "PermissionDenied": "PERMISSION_DENIED"}

REFUSE = {
    "str": lambda reason: f'return "{reason}"',
    # no StopReason for a cancellation: it is the caller's, not a rule's
    "StopReason": lambda reason: (
        f"return labkit.StopReason.{MEMBERS[reason]}" if reason in MEMBERS else f'return "{reason}"'
    ),
    "own exception": lambda reason: f'raise Refused("{reason}")',
}

SHAPES = ("admit", "decorator", "helper")


def _checks(budget: str, repetition: str, refuse) -> list[str]:  # type: ignore[no-untyped-def]
    return [
        "if self.cancelled:",
        "    " + refuse("Cancelled"),
        "if call.capability not in self.granted:",
        "    " + refuse("PermissionDenied"),
        f"if {budget} >= self.tool_calls:",
        "    " + refuse("ToolBudget"),
        f"if {repetition} >= self.repetitions:",
        "    " + refuse("RepeatedCall"),
    ]


def source(key: str, books: str, lock: str, refusal: str, shape: str) -> str:
    init, budget, repetition, reserve = BOOKS[books]
    refuse = REFUSE[refusal]
    init = [*init, *([LOCKS[lock]] if LOCKS[lock] else [])]
    decide = _checks(budget, repetition, refuse)
    if shape == "helper":  # the checks in a method of their own, early returns; admit returns what it says
        helper = [
            "def refusal(self, call, key):",
            *("    " + x for x in decide),
            "    return None",
            "",
        ]
        decide = ["refused = self.refusal(call, key)", "if refused is not None:", "    return refused"]
    else:
        helper = []
    locked = [*decide, *reserve]
    if LOCKS[lock]:
        locked = ["with self.gate:", *("    " + x for x in locked)]
    admit = [f"key = {KEYS[key]}", *locked, "result = body()", 'return "Cancelled" if self.cancelled else result']
    lines = [
        "import asyncio",
        "import functools",
        "import json",
        "import threading",
        "",
        "import labkit",
        "from labkit.teaching.capstone import GuardBase",
        "",
        "",
        "class Refused(Exception):",
        "    pass",
        "",
        "",
        "class Books:",
        "    def __init__(self):",
        "        self.admitted = 0",
        "        self.seen = {}",
        "",
        "",
        "def logged(admit):",
        "    @functools.wraps(admit)",
        "    def wrapper(self, call, body):",
        "        return admit(self, call, body)",
        "",
        "    return wrapper",
        "",
        "",
        "class Guard(GuardBase):",
        "    def __init__(self, *args, **kwargs):",
        "        super().__init__(*args, **kwargs)",
        *("        " + x for x in init or ["pass"]),
        "",
        *("    " + x for x in helper),
        *(["    @logged"] if shape == "decorator" else []),
        "    def admit(self, call, body):",
        *("        " + x for x in admit),
    ]
    return "\n".join(lines) + "\n"


# -- the oracle: what each part does, read without the checker -------------------------------------------


def _key_function(key: str):  # type: ignore[no-untyped-def]
    namespace = {"labkit": labkit, "json": json}
    return eval(f"lambda call: {KEYS[key]}", namespace)  # noqa: S307  # the guard's own expression


def _classes(function) -> set[frozenset[int]]:  # type: ignore[no-untyped-def]
    calls = [*ALPHABET, *LOOKALIKES]
    groups: dict[object, set[int]] = {}
    for i, call in enumerate(calls):
        groups.setdefault(function(call), set()).add(i)
    return {frozenset(g) for g in groups.values()}


def expected(key: str, books: str, lock: str, refusal: str, shape: str) -> tuple[frozenset[str], str]:
    """The faults the guard makes and where they show (``"alone"``, ``"race"``, or ``""`` for a right guard)."""
    if lock == "asyncio.Lock":
        try:
            with asyncio.Lock():  # type: ignore[attr-defined]
                pass
        except (TypeError, AttributeError):
            return frozenset({"raised"}), "alone"
    if refusal == "own exception":
        return frozenset({"raised"}), "alone"
    function = _key_function(key)
    try:
        for call in [*ALPHABET, *LOOKALIKES]:
            function(call)
    except TypeError:  # json.dumps of a Decimal
        return frozenset({"raised"}), "alone"
    ours, labkits = _classes(function), _classes(lambda c: labkit.signature(c.tool, c.arguments))
    if ours != labkits:
        same_ours = {frozenset(p) for g in ours for p in itertools.combinations(sorted(g), 2)}
        same_labkit = {frozenset(p) for g in labkits for p in itertools.combinations(sorted(g), 2)}
        faults = set()
        if same_ours - same_labkit:
            faults.add("signature_merges_different_calls")
        if same_labkit - same_ours:
            faults.add("signature_tells_equal_calls_apart")
        return frozenset(faults), "alone"
    if lock == "no lock":
        return frozenset({"check_outside_lock"}), "race"
    return frozenset(), ""


CASES = list(itertools.product(KEYS, BOOKS, LOCKS, REFUSE, SHAPES))
FAST = CASES[::17]


def _load(tmp_path, case) -> type:  # type: ignore[no-untyped-def]
    name = "style_" + "_".join("".join(ch if ch.isalnum() else "_" for ch in part) for part in case)
    path = tmp_path / f"{name}.py"
    path.write_text(source(*case))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Guard


def test_the_space_holds_right_and_wrong_guards_of_every_kind():
    kinds = {expected(*case) for case in CASES}
    assert (frozenset(), "") in kinds and (frozenset({"raised"}), "alone") in kinds
    assert any(where == "race" for _f, where in kinds)
    assert any("signature_tells_equal_calls_apart" in f for f, _w in kinds)
    for case in CASES:
        compile(source(*case), "guard", "exec")
    assert Decimal("1.10") == Decimal("1.1")  # the course's two texts of one value (the split the oracle sees)


def _check(tmp_path, case) -> None:  # type: ignore[no-untyped-def]
    faults, where = expected(*case)
    report = check_guard(_load(tmp_path, case))
    if not faults:
        assert report.passed, str(report)
        return
    assert set(report.faults) == faults, str(report)
    assert report.found_in == where, str(report)


@pytest.mark.parametrize("case", FAST, ids=lambda c: "-".join(c).replace(" ", "_"))
def test_a_guard_in_another_style_gets_the_verdict_its_parts_make(tmp_path, case):
    _check(tmp_path, case)


@pytest.mark.slow
@pytest.mark.parametrize("case", [c for c in CASES if c not in FAST], ids=lambda c: "-".join(c).replace(" ", "_"))
def test_every_guard_of_the_style_space_gets_the_verdict_its_parts_make(tmp_path, case):
    _check(tmp_path, case)
