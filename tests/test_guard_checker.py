"""Chapter 10's guard checker: it finds every wrong guard of the catalogue for the right reason and passes
every right one, names a fault only when that fault explains every answer, and its reference rules agree
with labkit's own scope.

No timing is asserted and nothing depends on luck: the checker's scheduler runs one thread at a time and
explores every schedule within its bound, so a verdict is the same on every run.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from dataclasses import replace
from decimal import Decimal

import guard_catalogue as catalogue
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import labkit
from labkit import ExecutionScope, Limits, RunHalted, UserError
from labkit.teaching.capstone import GuardBase, check_guard, pause
from labkit.teaching.capstone import guard as guard_module
from labkit.teaching.capstone.guard import _merge
from labkit.teaching.capstone.rules import (
    _CAPABILITY,
    ALPHABET,
    BOOK_FAULTS,
    FAULTS,
    GRANTED,
    REFERENCE,
    SIMPLE_FAULTS,
    Call,
    Rules,
    Script,
    scripts,
)

# -- the catalogue ------------------------------------------------------------------------


def test_the_catalogue_holds_at_least_fifteen_distinct_faults_and_five_right_guards():
    assert len({g.FAULT for g in catalogue.WRONG}) >= 15
    assert len(catalogue.RIGHT) >= 5


@pytest.mark.parametrize("guard", catalogue.WRONG + catalogue.SIMPLE_WRONG, ids=lambda g: g.__name__)
def test_every_wrong_guard_fails_with_its_own_diagnosis(guard):
    report = check_guard(guard)
    assert not report.passed
    assert guard.FAULT in report.faults, str(report)
    text = str(report)
    assert text.startswith(f"{guard.__name__}: not a correct guard")
    assert "why: " in text


@pytest.mark.parametrize("guard", catalogue.ATTACKED_WRONG, ids=lambda g: g.__name__)
def test_guards_that_once_fooled_the_checker_fail(guard):
    """Each of these passed an earlier version of the checker (or got a false diagnosis)."""
    report = check_guard(guard, threads=getattr(guard, "THREADS", 2))
    assert not report.passed
    assert report.faults == (guard.FAULT,), str(report)


@pytest.mark.parametrize(
    "guard", catalogue.RIGHT + catalogue.SIMPLE_RIGHT + catalogue.ATTACKED_RIGHT, ids=lambda g: g.__name__
)
def test_every_right_guard_passes_every_script_and_every_schedule(guard):
    report = check_guard(guard)
    assert report.passed, str(report)
    assert report.faults == () and report.schedules > 0 and report.scripts > 0
    assert str(report).startswith(f"{guard.__name__}: correct")


def test_a_single_fault_is_named_alone():
    """Guards with one mistake get that mistake's id and no other (the scripts tell them all apart)."""
    single = [g for g in catalogue.WRONG if g is not catalogue.NoCancellationCheck]
    for guard in single:
        assert check_guard(guard).faults == (guard.FAULT,), guard.__name__


def test_the_check_pause_reserve_guard_prints_its_breaking_schedule_turn_by_turn():
    report = check_guard(catalogue.CheckPauseReserve)
    lines = str(report).splitlines()
    start = next(i for i, line in enumerate(lines) if "the shortest schedule that breaks it" in line)
    turns = [line.strip()[0] for line in lines[start + 1 :] if line.startswith("    ") and line.strip()[:1] in "AB"]
    assert turns[:3] == ["A", "B", "A"], str(report)  # A checks, B runs through, A reserves anyway
    assert "1 preemption," in lines[start]
    assert all(len(line) <= 100 for line in lines)
    prose = " ".join(line.strip() for line in lines)  # long lines are folded
    assert "A checked admitted = 1 (" in prose and "then B changed it (admitted = 2), then A reserved anyway" in prose
    assert prose.endswith(
        "why: A released self.lock between its check of admitted and its reservation: two locked steps are "
        "not one; check and reserve in one `with` block"
    )
    assert report.admitted == 2 and report.bodies_started == 2  # both threads ran: one over the last place
    assert report.found_in == "race" and report.preemptions == 1


def test_pause_never_decides_a_verdict():
    """The same guard with pause() calls added or removed gets the same verdict and the same fault."""

    class Unpaused(catalogue.CheckPauseReserve):
        def admit(self, call, body):
            key = labkit.signature(call.tool, call.arguments)
            with self.lock:
                refused = catalogue._refusal(self, call, key)
            if refused:
                return refused
            with self.lock:
                self.admitted += 1
                self.seen[key] = self.seen.get(key, 0) + 1
            return catalogue._finish(self, body)

    assert check_guard(Unpaused).faults == check_guard(catalogue.CheckPauseReserve).faults
    assert check_guard(catalogue.PausesEverywhere).passed


# -- generated wrong guards: a fault is named only when it is the one made -------------------


class RulesGuard(GuardBase):
    """A guard that follows ``RULES`` for one call at a time, all under one lock (the lock is never the question)."""

    RULES = REFERENCE

    def admit(self, call, body):
        rules = self.RULES
        key = {
            "raw": call.tool + ":" + call.raw,
            "parsed": labkit.signature(call.tool, json.loads(call.raw)),
            "tool": call.tool,
            "arguments": labkit.canonical(dict(call.arguments)),
        }.get(rules.key) or labkit.signature(call.tool, call.arguments)
        with self.lock:
            per_tool = self.__dict__.setdefault("per_tool", {})
            for check in rules.order:
                refused = {
                    "cancelled": lambda: self.cancelled,
                    "permission": lambda: (
                        (call.tool if rules.permission == "tool" else call.capability) not in self.granted
                    ),
                    "tool_budget": lambda: (
                        (
                            self.seen.get(key, 0)
                            if rules.budget_per_signature
                            else per_tool.get(call.tool, 0)
                            if rules.budget_per_tool
                            else self.admitted
                        )
                        >= self.tool_calls + rules.budget_slack
                    ),
                    "repetition": lambda: self.seen.get(key, 0) >= self.repetitions + rules.repeat_slack,
                }[check]()
                if refused:
                    counted = int(rules.count_refused) + dict(rules.refusal_counts).get(check, 0)
                    self.admitted += counted
                    per_tool[call.tool] = per_tool.get(call.tool, 0) + counted
                    if check in rules.refusal_seen:
                        self.seen[key] = self.seen.get(key, 0) + 1
                    return {
                        "cancelled": "Cancelled",
                        "permission": "PermissionDenied",
                        "tool_budget": "ToolBudget",
                        "repetition": "RepeatedCall",
                    }[check]
            if rules.counts != "seen":
                self.admitted += 1
                per_tool[call.tool] = per_tool.get(call.tool, 0) + 1
            if rules.counts != "admitted":
                self.seen[key] = self.seen.get(key, 0) + 1
        try:
            result = body()
        except Exception:
            if rules.refund and not rules.refund_always:
                self.give_back(rules, call, key, per_tool)
            raise
        finally:
            if rules.refund_always:
                self.give_back(rules, call, key, per_tool)
        if rules.recheck and self.cancelled:
            return "Cancelled"
        return result

    def give_back(self, rules, call, key, per_tool):
        with self.lock:
            if rules.refund in ("budget", "both"):
                self.admitted -= 1
                per_tool[call.tool] = per_tool.get(call.tool, 0) - 1
            if rules.refund in ("signature", "both"):
                self.seen[key] = self.seen.get(key, 0) - 1  # a count never added to goes below 0, as the rules


_CHANGES = st.sampled_from([f for f in FAULTS if not f.rules.body_first])  # RulesGuard runs the body after


_NO_PERMISSION_ONLY_CANCELLED = next(
    f for f in FAULTS if f.id == "no_permission_rule" and f.rules.order == ("cancelled",)
)
_REFUSED_COUNTED = next(f for f in FAULTS if f.id == "refused_calls_counted" and f.rules.count_refused)


# derandomized: the same 40 pairs on every run (the 770 of tests/test_guard_mutations.py cover the space)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True, database=None)
@given(first=_CHANGES, second=st.one_of(st.none(), _CHANGES))
@example(first=_NO_PERMISSION_ONLY_CANCELLED, second=_REFUSED_COUNTED)  # a books-only look-alike (miscounted)
def test_a_generated_wrong_guard_is_caught_and_only_the_faults_made_are_named(first, second):
    _caught_and_named(first, second)


def test_two_faults_a_look_alike_pair_could_explain_are_named_by_the_books_held_in_bodies():
    """budget_never_counted with a refused repetition counted: the budget count is above 0 in later bodies (the
    refusals), as given_back_after_every_body with the same would hold it; only the count held *in* each body
    (one less) tells which was made, and the checker names that one."""
    first = next(f for f in FAULTS if f.id == "refused_calls_counted" and f.rules.refusal_seen == ("repetition",))
    second = next(f for f in FAULTS if f.id == "budget_never_counted")
    _caught_and_named(first, second)


def _caught_and_named(first, second):
    changes = {
        name: getattr(first.rules, name)
        for name in Rules.__dataclass_fields__
        if getattr(first.rules, name) != getattr(REFERENCE, name)
    }
    made = {first.id}
    if second is not None:
        extra = {
            name: getattr(second.rules, name)
            for name in Rules.__dataclass_fields__
            if getattr(second.rules, name) != getattr(REFERENCE, name)
        }
        if not set(extra) & set(changes):
            changes.update(extra)
            made.add(second.id)
    rules = replace(REFERENCE, **changes)
    guard = type("Generated", (RulesGuard,), {"RULES": rules})
    report = check_guard(guard)
    differs = any(rules.run(s) != REFERENCE.run(s) for s in scripts())
    assert report.passed is not differs, str(report)
    named = set(report.faults) - {"unexplained"}
    alike = {x for x in named - made if _answers_alike(x, rules)}  # no script tells them apart: said so
    assert named <= made | alike, (made, report.faults)
    if alike:
        assert "no script tells this from another mistake" in " ".join(report.problems)
    if differs and second is None:
        assert report.faults == (first.id,), str(report)


def _answers_alike(fault_id: str, rules: Rules) -> bool:
    """Whether a fault with this id, alone or with one other fault, answers every script as ``rules`` do; the
    faults include the books-only ones (``miscounted``: rules.BOOK_FAULTS), which the checker pairs too."""
    tried = scripts()
    answers = [rules.run(s) for s in tried]
    for f in (f for f in (*FAULTS, *BOOK_FAULTS) if f.id == fault_id):
        for g in (None, *FAULTS, *BOOK_FAULTS):
            merged = f.rules if g is None else _merge(f.rules, g.rules)
            if merged is not None and [merged.run(s) for s in tried] == answers:
                return True
    return False


def test_the_scripts_tell_every_known_fault_from_the_rules_and_from_each_other():
    for simple, faults in ((False, FAULTS), (True, SIMPLE_FAULTS)):
        tried = scripts(simple=simple)
        reference = tuple(REFERENCE.run(s) for s in tried)
        answers: dict[tuple, set[str]] = {}
        for fault in faults:
            result = tuple(fault.rules.run(s) for s in tried)
            assert result != reference, fault.id
            answers.setdefault(result, set()).add(fault.id)
        alike = [ids for ids in answers.values() if len(ids) > 1]
        assert all(ids in ANSWER_ALIKE for ids in alike), alike


ANSWER_ALIKE = [
    # a count never added to, and one given back after every body, answer every script the same: the
    # guard's books tell them apart (the count held while the body ran: test_guard_mutations.py)
    {"budget_never_counted", "given_back_after_every_body"},
    {"repetition_never_counted", "given_back_after_every_body"},
]


# -- the reference rules against labkit's own scope ----------------------------------------------

_scripts = st.builds(
    lambda calls, tool_calls, repetitions, granted: Script(tuple(calls), tool_calls, repetitions, granted),
    st.lists(st.builds(Call, st.sampled_from(ALPHABET), st.sampled_from(["ok", "fails"])), min_size=1, max_size=7),
    st.integers(0, 4),
    st.integers(0, 3),
    st.sampled_from([GRANTED, frozenset({"ticket.read"}), frozenset({"review.finish"}), frozenset()]),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=_CHANGES, second=st.one_of(st.none(), _CHANGES), script=_scripts)
def test_the_books_the_rules_hold_in_each_body_are_those_a_guard_following_them_holds(first, second, script):
    """The checker tells look-alikes apart by the books held as each body started (Rules.books_in_bodies):
    the oracle is a guard written from the rules, run call by call as the checker runs a learner's."""
    rules = first.rules if second is None else _merge(first.rules, second.rules)
    assume(rules is not None)
    cls = type("Generated", (RulesGuard,), {"RULES": rules})
    subject = guard_module._Subject(cls, False, guard_module._learner_files(cls))
    inside: list = []
    with guard_module._module_locks(cls) as reset:
        subject.reset = reset
        answers = guard_module._alone(subject, script, subject.files, [], inside)
    assert answers == rules.run(script)
    assert tuple(inside) == rules.books_in_bodies(script)


@settings(max_examples=300, deadline=None)
@given(script=_scripts)
def test_the_reference_rules_answer_as_labkit_scope_until_its_first_halt(script):
    """labkit's scope halts the run at its first refusal; up to there, every answer is the rules' answer."""
    scope = ExecutionScope(Limits(tool_calls=script.tool_calls, repetitions=script.repetitions), script.granted)
    behaviour = iter(call.body for call in script.calls)

    def act() -> str:
        if next(behaviour) == "fails":
            raise RuntimeError("the body failed")
        return "done"

    def one(input: int) -> str:
        return act()

    def tag(input: int, tags: list[str]) -> str:
        return act()

    def priority(level: Decimal) -> str:
        return act()

    bodies = {"read_ticket": one, "finish_review": one, "tag_ticket": tag, "set_priority": priority}
    tools = {name: scope.tool(name, _CAPABILITY[name], body) for name, body in bodies.items()}
    expected = REFERENCE.run(script)
    for call, (answer, _bodies) in zip(script.calls, expected, strict=False):
        try:
            tools[call.attempt.tool].invoke(call.attempt.raw)
        except RunHalted as halt:
            if halt.refused:
                assert answer == halt.reason.value, (call, answer, halt)
                return
            raise
        except Exception:
            got = "fails"
        else:
            got = "ran"
        assert answer == got, (call, answer, got)


# -- what a learner can get wrong around the guard -----------------------------------------------


def test_the_unfinished_exercise_is_reported_not_raised():
    class Skeleton(GuardBase):
        def admit(self, call, body): ...

    class Dots(GuardBase):
        def admit(self, call, body):
            return ...

    assert "not a refusal" in str(check_guard(Dots))
    for unfinished in (Skeleton, GuardBase):
        report = check_guard(unfinished)
        assert not report.passed and report.problems[0].startswith("admit is not written yet"), str(report)
        assert report.found_in == "alone"


def test_an_endless_admit_is_reported_with_the_step_cap():
    class Spins(GuardBase):
        def admit(self, call, body):
            while self.admitted >= 0:
                pass

    report = check_guard(Spins)
    assert report.faults == ("hang",) and "endless loop" in report.problems[0]


def test_a_constructor_that_fails_and_bad_arguments_are_one_line_usage_errors():
    class Broken(GuardBase):
        def __init__(self, *args):
            raise ValueError("no")

        def admit(self, call, body):
            return body()

    for call in (
        lambda: check_guard(Broken),
        lambda: check_guard(catalogue.Reference()),
        lambda: check_guard(catalogue.Reference, threads=1),
        lambda: check_guard(catalogue.Reference, bound=9),
        lambda: check_guard(catalogue.Reference, limit=True),
    ):
        with pytest.raises(UserError) as info:
            call()
        assert "\n" not in str(info.value)


def test_a_python_without_threads_gets_one_line_saying_where_to_check(monkeypatch: pytest.MonkeyPatch):
    """Pyodide (JupyterLite) cannot start a thread: no verdict, right or wrong, and no bare RuntimeError."""
    import threading

    def cannot_start(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")  # what Pyodide's threading raises

    monkeypatch.setattr(threading.Thread, "start", cannot_start)
    for guard in (catalogue.Reference, catalogue.CheckOutsideLock):  # a right one and a wrong one alike
        with pytest.raises(UserError, match="cannot start one") as info:
            check_guard(guard)
        assert "\n" not in str(info.value) and "JupyterLab" in str(info.value)
    monkeypatch.undo()
    assert check_guard(catalogue.CheckOutsideLock).passed is False, "with threads, the check runs again"


@pytest.mark.parametrize("late", ["PermissionDenied", "ToolBudget", "RepeatedCall"])
def test_a_check_made_after_the_body_is_named_so_not_unexplained(late: str):
    """One rule checked after ``body()`` instead of before: the answer is the rules' refusal, but the body ran."""

    def refusal(guard, call, key, rule):
        if rule == "PermissionDenied":
            return call.capability not in guard.granted
        if rule == "ToolBudget":
            return guard.admitted >= guard.tool_calls
        return guard.seen.get(key, 0) >= guard.repetitions

    class CheckAfterBody(GuardBase):
        def admit(self, call, body):
            key = labkit.signature(call.tool, call.arguments)
            with self.lock:
                if self.cancelled:
                    return "Cancelled"
                for rule in ("PermissionDenied", "ToolBudget", "RepeatedCall"):
                    if rule != late and refusal(self, call, key, rule):
                        return rule
                refused_late = refusal(self, call, key, late)
                if not refused_late:
                    self.admitted += 1
                    self.seen[key] = self.seen.get(key, 0) + 1
            if refused_late:  # the late rule's answer comes after the body ran
                with contextlib.suppress(Exception):
                    body()
                return late
            result = body()
            return "Cancelled" if self.cancelled else result

    report = check_guard(CheckAfterBody)
    assert not report.passed
    text = str(report)
    assert f"your guard refused it: {late}, after running its body; the rules: refused it:" in " ".join(text.split())
    assert f"got the rules' answer, {late}, but only after its body ran" in " ".join(text.split()), text


def test_notebooks_written_for_the_earlier_harness_still_run():
    report = check_guard(catalogue.SimpleRight, limit=3, threads=2, rounds=3, pause_timeout_s=0.5)
    assert report.passed
    assert GuardBase(3).limit == 3


def test_pause_and_the_hooks_do_nothing_outside_the_checker():
    guard = catalogue.Reference()
    pause()
    assert guard.admit(ALPHABET[0], lambda: "ok") == "ok"
    assert guard.admitted == 1 and guard.seen == {labkit.signature("read_ticket", {"input": 42}): 1}


def test_the_checker_imports_nothing_heavy():
    code = (
        "import sys, labkit.teaching.capstone as c; "
        "print(sorted(m for m in ('pandas', 'matplotlib', 'ipywidgets', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
