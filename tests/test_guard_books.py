"""The guard checker reads the guard's books: every way to count wrong while answering right is caught,
and its why names the call that put the books wrong and what that call did.

The space: the right guard, with one bookkeeping mistake injected, of two kinds. A *give-back* undoes
the reservation (of ``admitted``, of ``seen``, or both) after the body, in one situation: the run was
cancelled while the body ran, the body failed after the run was cancelled, or either. A *refused call
counted* adds a refused call (one refusal at a time: Cancelled, PermissionDenied, ToolBudget,
RepeatedCall) to ``admitted``, ``seen`` or both. The oracle is a model of that guard, one call at a
time, written here without the checker: when its answers differ from the rules' on some script, the
checker must fail the guard on its answers; when only its books differ, the checker must say
``miscounted`` and name the first call, in the first script, after which the books differ; else the
guard is right and must pass.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import pytest

import labkit
from labkit.teaching.capstone import GuardBase, check_guard
from labkit.teaching.capstone.rules import REFERENCE, Script, scripts

WHAT = ("admitted", "seen", "both")
GIVE_BACK_WHEN = ("cancelled during the body", "failed after a cancel", "failed or cancelled")
REFUSALS = ("Cancelled", "PermissionDenied", "ToolBudget", "RepeatedCall")


@dataclass(frozen=True)
class Mistake:
    kind: str  # "give back" or "count refused"
    what: str
    when: str  # a GIVE_BACK_WHEN, or the refusal counted

    def gives_back(self, cancelled: bool, failed: bool) -> bool:
        if self.kind != "give back":
            return False
        if self.when == "cancelled during the body":
            return cancelled and not failed
        if self.when == "failed after a cancel":
            return cancelled and failed
        return cancelled or failed


MISTAKES = [
    *(Mistake("give back", w, when) for w, when in itertools.product(WHAT, GIVE_BACK_WHEN)),
    *(Mistake("count refused", w, r) for w, r in itertools.product(WHAT, REFUSALS)),
]


def _book(mistake: Mistake, admitted: int, seen: dict[str, int], key: str, sign: int) -> int:
    if mistake.what in ("seen", "both"):
        seen[key] = seen.get(key, 0) + sign
    if mistake.what in ("admitted", "both"):
        admitted += sign
    return admitted


def model(mistake: Mistake, script: Script) -> tuple[tuple[tuple[str, int], ...], int, list[int]]:
    """The mistaken guard, one call at a time: its answers, and its books after the last call."""
    admitted, seen, cancelled = 0, {}, False
    answers = []
    for step in script.calls:
        call = step.attempt
        key = labkit.signature(call.tool, call.arguments)
        cancelled |= step.cancel_before
        refusal = None
        if cancelled:
            refusal = "Cancelled"
        elif call.capability not in script.granted:
            refusal = "PermissionDenied"
        elif admitted >= script.tool_calls:
            refusal = "ToolBudget"
        elif seen.get(key, 0) >= script.repetitions:
            refusal = "RepeatedCall"
        if refusal is not None:
            if mistake.kind == "count refused" and mistake.when == refusal:
                admitted = _book(mistake, admitted, seen, key, +1)
            answers.append((refusal, 0))
            continue
        admitted += 1
        seen[key] = seen.get(key, 0) + 1
        cancelled |= step.body in ("cancels", "cancels_fails")
        failed = step.body in ("fails", "cancels_fails")
        if mistake.gives_back(cancelled, failed):
            admitted = _book(mistake, admitted, seen, key, -1)
        answers.append(("fails" if failed else "Cancelled" if cancelled else "ran", 1))
    return tuple(answers), admitted, sorted(n for n in seen.values() if n)


def _rules_books(script: Script) -> tuple[int, list[int]]:
    state = REFERENCE.run_with_state(script)[1]
    return state.admitted, sorted(n for n in state.seen.values() if n)


def guard_for(mistake: Mistake) -> type:
    """The right guard with ``mistake`` in it, as a learner would write it."""

    def book(self, key, sign):
        if mistake.what in ("seen", "both"):
            self.seen[key] = self.seen.get(key, 0) + sign
        if mistake.what in ("admitted", "both"):
            self.admitted += sign

    def refuse(self, key, reason):
        if mistake.kind == "count refused" and mistake.when == reason:
            book(self, key, +1)
        return reason

    def admit(self, call, body):
        key = labkit.signature(call.tool, call.arguments)
        with self.lock:
            if self.cancelled:
                return refuse(self, key, "Cancelled")
            if call.capability not in self.granted:
                return refuse(self, key, "PermissionDenied")
            if self.admitted >= self.tool_calls:
                return refuse(self, key, "ToolBudget")
            if self.seen.get(key, 0) >= self.repetitions:
                return refuse(self, key, "RepeatedCall")
            self.admitted += 1
            self.seen[key] = self.seen.get(key, 0) + 1
        try:
            result = body()
        except Exception:
            if mistake.gives_back(self.cancelled, True):
                with self.lock:
                    book(self, key, -1)
            raise
        if self.cancelled:
            if mistake.gives_back(True, False):
                with self.lock:
                    book(self, key, -1)
            return "Cancelled"
        return result

    return type(f"{mistake.kind.title().replace(' ', '')}{mistake.what.title()}", (GuardBase,), {"admit": admit})


def expected(mistake: Mistake) -> tuple[str, object]:
    """What the checker must say: ("answers", None), ("right", None) or ("miscounted", (script, n))."""
    tried = scripts()
    if any(model(mistake, s)[0] != REFERENCE.run(s) for s in tried):
        return "answers", None
    for script in tried:
        if model(mistake, script)[1:] != _rules_books(script):
            for n in range(1, len(script.calls) + 1):
                prefix = Script(script.calls[:n], script.tool_calls, script.repetitions, script.granted)
                if model(mistake, prefix)[1:] != _rules_books(prefix):
                    return "miscounted", (script, n)
    return "right", None


def test_the_space_holds_both_kinds_and_every_kind_of_verdict():
    assert len(MISTAKES) == 21
    kinds = {expected(m)[0] for m in MISTAKES}
    assert kinds == {"answers", "miscounted"}, kinds  # every mistake shows; most only in the books


@pytest.mark.parametrize("mistake", MISTAKES, ids=lambda m: f"{m.kind}-{m.what}-{m.when}".replace(" ", "_"))
def test_a_mistake_in_the_books_is_caught_and_its_why_names_the_call_and_what_it_did(mistake):
    report = check_guard(guard_for(mistake))
    verdict, where = expected(mistake)
    if verdict == "right":
        assert report.passed, str(report)
        return
    assert not report.passed, str(report)
    assert report.found_in == "alone", str(report)
    if verdict == "answers":
        assert "miscounted" not in report.faults, str(report)
        return
    assert report.faults == ("miscounted",), str(report)
    script, n = where
    call = script.calls[n - 1]
    why = report.problems[0]
    assert report.details[0].endswith(", ".join(map(str, script.calls[:n]))), str(report)
    if mistake.kind == "give back":
        assert f"gave back (or never counted) the attempt of {call.attempt}, which it had admitted" in why, why
        assert "an admitted attempt counts whatever happens after it" in why, why
    else:
        assert f"counted {call.attempt}, which it refused ({mistake.when}), as an attempt" in why, why


# -- no known mistake: the books at the failing call, next to the rules' -----------------------------


class SeenSetToOne(GuardBase):
    """Writes ``seen[key] = 1`` instead of adding one (no known fault: it shows with repetitions > 1)."""

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
            self.admitted += 1
            self.seen[key] = 1
        result = body()
        return "Cancelled" if self.cancelled else result


class OwnBooks(SeenSetToOne):
    """The same mistake, kept in books of its own: nothing to show beside the rules'."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.count, self.table = 0, {}

    def admit(self, call, body):
        key = labkit.signature(call.tool, call.arguments)
        with self.lock:
            if self.cancelled:
                return "Cancelled"
            if call.capability not in self.granted:
                return "PermissionDenied"
            if self.count >= self.tool_calls:
                return "ToolBudget"
            if self.table.get(key, 0) >= self.repetitions:
                return "RepeatedCall"
            self.count += 1
            self.table[key] = 1
        result = body()
        return "Cancelled" if self.cancelled else result


def test_an_unexplained_answer_shows_the_guard_s_books_beside_the_rules_at_the_failing_call():
    report = check_guard(SeenSetToOne)
    assert report.faults == ("unexplained",), str(report)
    before = report.details[0].split(", after ", 1)[1].split(", ")  # the calls before the failing one
    admitted = sum(c.endswith((" ran", " fails", " Cancelled")) and "(run cancelled)" not in c for c in before)
    line = next(d for d in report.details if d.startswith("  just before it: "))
    yours, rules = line.removeprefix("  just before it: ").split("; ")
    assert yours.startswith(f"self.admitted is {admitted} and self.seen counts [")
    assert set(re.findall(r"\d+", yours.split("counts")[1])) == {"1"}  # seen[key] = 1: every count is 1
    assert rules.startswith(f"the rules count {admitted} admitted and [")
    assert re.findall(r"\d+", rules.split("and")[1]) != re.findall(r"\d+", yours.split("counts")[1])
    assert not any("just before it" in d for d in check_guard(OwnBooks).details)
