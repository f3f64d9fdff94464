"""Chapter 10's right guard with each mistake a learner makes, alone and two at a time: every one fails
with the fault it makes, and its why names a call that really behaved that way.

The space is :mod:`guard_mutants`: signature (``str()``, ``repr()``, ``json.dumps`` without
``sort_keys``, the raw text, sorted keys only, values only, the tool only, the arguments only,
casefolded, spaces taken out, lists sorted), budget (off by one either way, per tool, per signature,
counted after the body, never counted), repetition (off by one, checked after reserving, counted on
refusals, never counted), capability (after the budget, after the repetition rule, the tool's name
looked up, the chapter's grants instead of the guard's, never asked), refund (budget, signature or
both, on failure or after every body, a place given back on refusal), cancellation, lock (none, check
outside, reserve outside, body inside). The oracle is each mutation's own ids (``Mutation.faults``),
written from what the mutation does. Where two mutations answer every script the same, the checker may
name either (``EQUIVALENT``, and its why says so).

Each why's example is replayed here without the checker: a fresh guard runs the script the report shows,
one call after another, and the call it names must get the answer the report says, not the rules'.
"""

from __future__ import annotations

import re

import guard_mutants as gm
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labkit.teaching.capstone import check_guard
from labkit.teaching.capstone.rules import REFERENCE, REFUSAL, Script

EQUIVALENT = [
    # with the tool name as the signature, a budget per tool is a budget per signature
    ({"signature_per_tool", "budget_per_tool"}, {"budget_per_signature"}),
    ({"signature_per_tool", "budget_per_signature"}, {"budget_per_tool"}),
    # a budget one too loose and given back after every body never refuses: as if never asked
    ({"budget_admits_one_too_many", "given_back_after_every_body"}, {"no_budget_rule"}),
    ({"repetition_admits_one_too_many", "given_back_after_every_body"}, {"no_repetition_rule"}),
    # every call refused for permission: where cancellation comes among the checks never shows
    ({"permission_refuses_granted", "no_cancellation_check"}, {"rules_in_wrong_order"}),
]


INTERACTING = [
    # the budget read from the signature's count, and a repetition refusal that adds to that count: the
    # refusal moves the budget; the checker tries a mistake that shows only in the books (rules.BOOK_FAULTS)
    # with every known fault, so the pair is named (was "unexplained")
    ("budget_per_signature", "repetition_checked_after_reserving"),
    ("budget_per_signature", "repetition_counted_on_refusal"),
]


def allowed(guard: gm.Guard) -> frozenset[str]:
    ids = set(guard.faults)
    for when, same in EQUIVALENT:  # when a guard makes every mistake of `when`, the checker may name `same` too
        if when <= guard.faults:
            ids |= same
    return frozenset(ids)


class _Cancelling:
    def __init__(self, guard: object, behaviour: str) -> None:
        self.guard, self.behaviour, self.entered = guard, behaviour, 0

    def __call__(self) -> object:
        self.entered += 1
        if self.behaviour in ("cancels", "cancels_fails"):
            object.__setattr__(self.guard, "_labkit_cancelled", True)
        if self.behaviour in ("fails", "cancels_fails"):
            raise RuntimeError("the body failed")
        return self


def replay(cls: type, script: Script) -> list[tuple[str, int]]:
    """The guard's answers to ``script`` and the bodies each ran, one call after another, in plain Python
    (no checker)."""
    guard = cls(tool_calls=script.tool_calls, repetitions=script.repetitions, granted=script.granted)
    answers = []
    for step in script.calls:
        if step.cancel_before:
            object.__setattr__(guard, "_labkit_cancelled", True)
        body = _Cancelling(guard, step.body)
        try:
            answer = guard.admit(step.attempt, body)
        except RuntimeError:
            answer = "fails"
        except Exception as exc:
            answer = f"raised {type(exc).__name__}"
        answers.append(("ran" if answer is body else answer, body.entered))
    return answers


def check_the_example(cls: type, report) -> None:  # type: ignore[no-untyped-def]
    """The call the report shows got, replayed, the answer the report says and not the rules'; the calls
    the why names are calls of that script, or of a probe line the report shows."""
    script, k = report.shown
    yours, bodies = replay(cls, script)[k]
    assert (yours, bodies) != REFERENCE.run(script)[k], (yours, bodies, k)
    said = " ".join(" ".join(report.details).split())
    assert str(script.calls[k]) in said, said
    if yours in REFUSAL.values():
        assert f"your guard refused it: {yours}" in said, said
        assert bool(bodies) is (", after running its body" in said), said
    elif yours.startswith("raised"):
        assert "your guard raised" in said
    else:
        assert "your guard ran it" in said, said
    why = " ".join(" ".join(report.problems).split())
    named = set(re.findall(r"(?<![\w.])[a-z_]+\([^()]*\)", why))
    shown = {str(c.attempt) for c in script.calls} | set(re.findall(r"\b[a-z_]+\([^()]*\)", said))
    assert named <= shown, (named, shown)


@pytest.mark.parametrize("mutation", gm.SINGLES, ids=lambda m: m.name)
def test_every_single_mistake_gets_the_fault_it_makes(tmp_path, mutation):
    guard = gm.Guard((mutation,))
    cls = guard.load(tmp_path)
    report = check_guard(cls)
    assert not report.passed
    assert set(report.faults) == set(guard.faults), str(report)
    assert report.found_in == ("alone" if mutation.alone or mutation.name == "lock_body_inside" else "race")
    if report.shown is not None:
        check_the_example(cls, report)


def _check_pair(tmp_path, guard: gm.Guard) -> None:  # type: ignore[no-untyped-def]
    cls = guard.load(tmp_path)
    report = check_guard(cls)
    assert not report.passed
    assert "unexplained" not in report.faults, str(report)
    assert set(report.faults) <= allowed(guard), (sorted(allowed(guard)), str(report))
    if report.shown is not None:
        check_the_example(cls, report)


@pytest.mark.parametrize("names", INTERACTING, ids="+".join)
def test_two_mistakes_where_one_moves_the_count_the_other_reads_get_both_faults(tmp_path, names):
    by_name = {m.name: m for m in gm.SINGLES}
    guard = gm.combine(by_name[names[0]], by_name[names[1]])
    assert guard is not None
    report = check_guard(guard.load(tmp_path))
    assert set(report.faults) == set(guard.faults), str(report)
    check_the_example(guard.load(tmp_path), report)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(guard=st.sampled_from(gm.PAIRS))
def test_two_mistakes_of_different_kinds_get_their_faults_and_nothing_unexplained(tmp_path, guard):
    _check_pair(tmp_path, guard)


@pytest.mark.slow
@pytest.mark.parametrize("guard", gm.PAIRS, ids=lambda g: "+".join(m.name for m in g.mutations))
def test_every_pair_of_mistakes_gets_their_faults(tmp_path, guard):
    _check_pair(tmp_path, guard)


RIGHT_STYLES = {
    "early returns in a helper": (
        [
            "def refusal(self, call, key):",
            "    if self.cancelled:",
            '        return "Cancelled"',
            "    if call.capability not in self.granted:",
            '        return "PermissionDenied"',
            "    if self.admitted >= self.tool_calls:",
            '        return "ToolBudget"',
            "    if self.seen.get(key, 0) >= self.repetitions:",
            '        return "RepeatedCall"',
            "    return None",
        ],
        [
            "key = labkit.signature(call.tool, call.arguments)",
            "with self.lock:",
            "    refused = self.refusal(call, key)",
            "    if refused:",
            "        return refused",
            "    self.admitted += 1",
            "    self.seen[key] = self.seen.get(key, 0) + 1",
            "result = body()",
            'return "Cancelled" if self.cancelled else result',
        ],
        [],
    ),
    "an RLock and a Counter": (
        [],
        [
            "key = labkit.signature(call.tool, call.arguments)",
            "with self.lock:",
            "    if self.cancelled:",
            '        return "Cancelled"',
            "    if call.capability not in self.granted:",
            '        return "PermissionDenied"',
            "    if self.used >= self.tool_calls:",
            '        return "ToolBudget"',
            "    if self.counts[key] >= self.repetitions:",
            '        return "RepeatedCall"',
            "    self.used += 1",
            "    self.counts[key] += 1",
            "result = body()",
            'return "Cancelled" if self.cancelled else result',
        ],
        ["self.lock = threading.RLock()", "self.counts = Counter()", "self.used = 0"],
    ),
    "a tuple key and a list of reasons": (
        [],
        [
            "key = (call.tool, labkit.canonical(dict(call.arguments)))",
            "with self.lock:",
            "    reasons = [",
            '        ("Cancelled", self.cancelled),',
            '        ("PermissionDenied", call.capability not in self.granted),',
            '        ("ToolBudget", self.admitted >= self.tool_calls),',
            '        ("RepeatedCall", self.seen.get(key, 0) >= self.repetitions),',
            "    ]",
            "    for reason, refuses in reasons:",
            "        if refuses:",
            "            return reason",
            "    self.admitted += 1",
            "    self.seen[key] = self.seen.get(key, 0) + 1",
            "result = body()",
            'return "Cancelled" if self.cancelled else result',
        ],
        [],
    ),
    "a JSON key with sort_keys, acquire and release": (
        [],
        [
            "key = call.tool + json.dumps(json.loads(labkit.canonical(dict(call.arguments))), sort_keys=True)",
            "self.lock.acquire()",
            "try:",
            "    if self.cancelled:",
            '        return "Cancelled"',
            "    if call.capability not in self.granted:",
            '        return "PermissionDenied"',
            "    if len(self.log) >= self.tool_calls:",
            '        return "ToolBudget"',
            "    if self.log.count(key) >= self.repetitions:",
            '        return "RepeatedCall"',
            "    self.log.append(key)",
            "finally:",
            "    self.lock.release()",
            "outcome = body()",
            "if self.cancelled:",
            '    return "Cancelled"',
            "return outcome",
        ],
        ["self.log = []"],
    ),
}


def _right_source(helpers: list[str], admit: list[str], init: list[str]) -> str:
    lines = [
        "import json",
        "import threading",
        "from collections import Counter",
        "",
        "import labkit",
        "from labkit.teaching.capstone import GuardBase",
        "",
        "",
        "class Guard(GuardBase):",
    ]
    if init:
        lines += [
            "    def __init__(self, *args, **kwargs):",
            "        super().__init__(*args, **kwargs)",
            *("        " + line for line in init),
            "",
        ]
    lines += [*("    " + line for line in helpers), "", "    def admit(self, call, body):"]
    lines += ["        " + line for line in admit]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("style", RIGHT_STYLES)
def test_a_right_guard_written_in_another_style_passes(tmp_path, style):
    import importlib.util

    path = tmp_path / f"right_{abs(hash(style))}.py"
    path.write_text(_right_source(*RIGHT_STYLES[style]))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    report = check_guard(module.Guard)
    assert report.passed, str(report)


def test_the_right_guard_of_the_space_passes(tmp_path):
    report = check_guard(gm.Guard(()).load(tmp_path))
    assert report.passed, str(report)
