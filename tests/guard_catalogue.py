"""Guards as learners write them, wrong and right: the guard checker's own test suite (chapter 10).

Each wrong guard has one mistake and names the fault id ``check_guard`` must
find (``FAULT``); each right guard is a different way to write a correct one.
The code is written as a learner would, not to suit the checker: no ``pause()``
is needed anywhere, and none decides a verdict.
"""

from __future__ import annotations

import contextlib
import json
import threading
import types
from collections import Counter

import labkit
from labkit.teaching.capstone import GuardBase, pause

_COUNT = 0


class Reference(GuardBase):
    """Right: labkit's order under one lock, the body outside it, the re-check after it."""

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
        if self.cancelled:
            return "Cancelled"
        return result


def _refusal(guard, call, key, admitted=None):
    """The rules in order, for guards that only change where the lock or the reservation is."""
    if guard.cancelled:
        return "Cancelled"
    if call.capability not in guard.granted:
        return "PermissionDenied"
    if (guard.admitted if admitted is None else admitted) >= guard.tool_calls:
        return "ToolBudget"
    if guard.seen.get(key, 0) >= guard.repetitions:
        return "RepeatedCall"
    return None


def _finish(guard, body):
    result = body()
    return "Cancelled" if guard.cancelled else result


# -- wrong: the lock ----------------------------------------------------------------------


class CheckOutsideLock(GuardBase):
    FAULT = "check_outside_lock"

    def admit(self, call, body):
        key = labkit.signature(call.tool, call.arguments)
        refused = _refusal(self, call, key)
        if refused:
            return refused
        with self.lock:
            self.admitted += 1
            self.seen[key] = self.seen.get(key, 0) + 1
        return _finish(self, body)


class ReservationOutsideLock(GuardBase):
    FAULT = "reservation_outside_lock"

    def admit(self, call, body):
        key = labkit.signature(call.tool, call.arguments)
        with self.lock:
            refused = _refusal(self, call, key)
        if refused:
            return refused
        self.admitted += 1
        self.seen[key] = self.seen.get(key, 0) + 1
        return _finish(self, body)


class CheckPauseReserve(GuardBase):
    """The check and the reservation each locked, with a pause between the two steps."""

    FAULT = "check_and_reserve_in_two_steps"

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
        return _finish(self, body)


class StaleCopy(GuardBase):
    """Reads the count under the lock, writes back its own copy after releasing it."""

    FAULT = "reservation_outside_lock"

    def admit(self, call, body):
        key = labkit.signature(call.tool, call.arguments)
        with self.lock:
            count = self.admitted
            refused = _refusal(self, call, key, admitted=count)
        if refused:
            return refused
        self.admitted = count + 1
        with self.lock:
            self.seen[key] = self.seen.get(key, 0) + 1
        return _finish(self, body)


class SecondLock(GuardBase):
    FAULT = "two_locks"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.reserve_lock = threading.Lock()

    def admit(self, call, body):
        key = labkit.signature(call.tool, call.arguments)
        with self.lock:
            refused = _refusal(self, call, key)
        if refused:
            return refused
        with self.reserve_lock:
            self.admitted += 1
            self.seen[key] = self.seen.get(key, 0) + 1
        return _finish(self, body)


class NoLockAtAll(GuardBase):
    FAULT = "check_outside_lock"

    def admit(self, call, body):
        key = labkit.signature(call.tool, call.arguments)
        refused = _refusal(self, call, key)
        if refused:
            return refused
        self.admitted += 1
        self.seen[key] = self.seen.get(key, 0) + 1
        return _finish(self, body)


class TakesTheLockTwice(GuardBase):
    FAULT = "deadlock"

    def admit(self, call, body):
        with self.lock:
            key = labkit.signature(call.tool, call.arguments)
            with self.lock:
                refused = _refusal(self, call, key)
            if refused:
                return refused
            self.admitted += 1
            self.seen[key] = self.seen.get(key, 0) + 1
        return _finish(self, body)


class GlobalCount(GuardBase):
    FAULT = "state_outside_self"

    def admit(self, call, body):
        global _COUNT
        with self.lock:
            if self.tool_calls <= _COUNT:
                return "ToolBudget"
            _COUNT += 1
        return body()


# -- wrong: the rules ---------------------------------------------------------------------


class _Rules(GuardBase):
    """The reference, with each rule a method a wrong guard can change."""

    def key(self, call):
        return labkit.signature(call.tool, call.arguments)

    def over_budget(self):
        return self.admitted >= self.tool_calls

    def repeated(self, key):
        return self.seen.get(key, 0) >= self.repetitions

    def checks(self, call, key):
        return [
            ("Cancelled", lambda: self.cancelled),
            ("PermissionDenied", lambda: call.capability not in self.granted),
            ("ToolBudget", self.over_budget),
            ("RepeatedCall", lambda: self.repeated(key)),
        ]

    def reserve(self, call, key):
        self.admitted += 1
        self.seen[key] = self.seen.get(key, 0) + 1

    def run(self, call, key, body):
        return _finish(self, body)

    def admit(self, call, body):
        key = self.key(call)
        with self.lock:
            for reason, refuses in self.checks(call, key):
                if refuses():
                    return reason
            self.reserve(call, key)
        return self.run(call, key, body)


class GreaterThan(_Rules):
    FAULT = "budget_admits_one_too_many"

    def over_budget(self):
        return self.admitted > self.tool_calls


class OneTooEarly(_Rules):
    FAULT = "budget_refuses_one_too_early"

    def over_budget(self):
        return self.admitted + 1 >= self.tool_calls


class RepeatGreaterThan(_Rules):
    FAULT = "repetition_admits_one_too_many"

    def repeated(self, key):
        return self.seen.get(key, 0) > self.repetitions


class BudgetBeforePermission(_Rules):
    FAULT = "rules_in_wrong_order"

    def checks(self, call, key):
        cancelled, permission, budget, repetition = super().checks(call, key)
        return [cancelled, budget, permission, repetition]


class CancellationLast(_Rules):
    FAULT = "rules_in_wrong_order"

    def checks(self, call, key):
        cancelled, *rules = super().checks(call, key)
        return [*rules, cancelled]


class NoPermission(_Rules):
    FAULT = "no_permission_rule"

    def checks(self, call, key):
        return [c for c in super().checks(call, key) if c[0] != "PermissionDenied"]


class NoCancellationCheck(_Rules):
    FAULT = "no_cancellation_check"

    def checks(self, call, key):
        return super().checks(call, key)[1:]

    def run(self, call, key, body):
        return body()


class RefundsFailedBody(_Rules):
    FAULT = "failed_body_refunded"

    def run(self, call, key, body):
        try:
            return _finish(self, body)
        except Exception:
            with self.lock:
                self.admitted -= 1
                self.seen[key] -= 1
            raise


class ReservesAfterSuccess(_Rules):
    """Counts an attempt only once its body succeeded (so a failed one is free)."""

    FAULT = "failed_body_refunded"

    def reserve(self, call, key):
        pass

    def run(self, call, key, body):
        result = body()
        with self.lock:
            super().reserve(call, key)
        return "Cancelled" if self.cancelled else result


class CountsRefused(_Rules):
    """Reserves first, then checks, and never gives a refused call's place back."""

    FAULT = "refused_calls_counted"

    def admit(self, call, body):
        key = self.key(call)
        with self.lock:
            self.admitted += 1
            for reason, refuses in self.checks(call, key):
                if reason == "ToolBudget":
                    refuses = lambda: self.admitted > self.tool_calls  # noqa: E731
                if refuses():
                    return reason
            self.seen[key] = self.seen.get(key, 0) + 1
        return self.run(call, key, body)


class RefundsWhenCancelledDuringBody(_Rules):
    """Gives the attempt back when the run was cancelled while the body ran (its answer is right)."""

    FAULT = "miscounted"

    def run(self, call, key, body):
        result = body()
        if self.cancelled:
            with self.lock:
                self.admitted -= 1
                self.seen[key] -= 1
            return "Cancelled"
        return result


class RefundOnFailureWhenCancelled(_Rules):
    """Gives a failed body's budget place back, but only when the run was cancelled meanwhile (its answers
    are right: once cancelled, every later call is refused anyway). Passed before the scripts had a body
    that fails after the run was cancelled during it (review C10-1)."""

    FAULT = "miscounted"

    def run(self, call, key, body):
        try:
            return _finish(self, body)
        except Exception:
            if self.cancelled:
                with self.lock:
                    self.admitted -= 1
            raise


class CountsCancelledRefusal(_Rules):
    """Counts a call refused because the run is cancelled as an attempt."""

    FAULT = "miscounted"

    def admit(self, call, body):
        with self.lock:
            if self.cancelled:
                self.admitted += 1
                return "Cancelled"
        return super().admit(call, body)


class SignatureOfBudgetRefusal(_Rules):
    """Counts the signature of a call the tool budget refused."""

    FAULT = "miscounted"

    def admit(self, call, body):
        key = self.key(call)
        with self.lock:
            if not self.cancelled and call.capability in self.granted and self.over_budget():
                self.seen[key] = self.seen.get(key, 0) + 1
                return "ToolBudget"
        return super().admit(call, body)


class BudgetPerTool(_Rules):
    FAULT = "budget_per_tool"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.per_tool = Counter()

    def over_budget(self):
        return False

    def checks(self, call, key):
        cancelled, permission, _, repetition = super().checks(call, key)
        return [cancelled, permission, ("ToolBudget", lambda: self.per_tool[call.tool] >= self.tool_calls), repetition]

    def reserve(self, call, key):
        super().reserve(call, key)
        self.per_tool[call.tool] += 1


class SignaturePerTool(_Rules):
    FAULT = "signature_per_tool"

    def key(self, call):
        return call.tool


class SignatureFromRawText(_Rules):
    FAULT = "signature_from_raw_text"

    def key(self, call):
        return call.tool + call.raw


class SignatureFromParsedText(_Rules):
    FAULT = "signature_from_parsed_text"

    def key(self, call):
        return labkit.signature(call.tool, json.loads(call.raw))  # "42" stays a string: not bound


class SignatureWithoutTool(_Rules):
    FAULT = "signature_ignores_tool"

    def key(self, call):
        return labkit.canonical(dict(call.arguments))


class NoRecheck(_Rules):
    FAULT = "no_recheck_after_body"

    def run(self, call, key, body):
        return body()


class BodyFirst(_Rules):
    FAULT = "body_before_check"

    def admit(self, call, body):
        result = body()
        key = self.key(call)
        with self.lock:
            for reason, refuses in self.checks(call, key):
                if refuses():
                    return reason
            self.reserve(call, key)
        return result


WRONG = [
    CheckOutsideLock,
    ReservationOutsideLock,
    CheckPauseReserve,
    StaleCopy,
    SecondLock,
    NoLockAtAll,
    TakesTheLockTwice,
    GlobalCount,
    GreaterThan,
    OneTooEarly,
    RepeatGreaterThan,
    BudgetBeforePermission,
    CancellationLast,
    NoPermission,
    NoCancellationCheck,
    RefundsFailedBody,
    ReservesAfterSuccess,
    CountsRefused,
    BudgetPerTool,
    RefundsWhenCancelledDuringBody,
    RefundOnFailureWhenCancelled,
    CountsCancelledRefusal,
    SignatureOfBudgetRefusal,
    SignaturePerTool,
    SignatureFromRawText,
    SignatureFromParsedText,
    SignatureWithoutTool,
    NoRecheck,
    BodyFirst,
]


# -- right ----------------------------------------------------------------------------------


class WithRLock(Reference):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.lock = threading.RLock()


class WithCondition(GuardBase):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.changed = threading.Condition()

    def admit(self, call, body):
        key = labkit.signature(call.tool, call.arguments)
        with self.changed:
            refused = _refusal(self, call, key)
            if refused:
                return refused
            self.admitted += 1
            self.seen[key] = self.seen.get(key, 0) + 1
            self.changed.notify_all()
        return _finish(self, body)


class WithContextManager(GuardBase):
    @contextlib.contextmanager
    def deciding(self):
        self.lock.acquire()
        try:
            yield
        finally:
            self.lock.release()

    def admit(self, call, body):
        key = labkit.signature(call.tool, call.arguments)
        with self.deciding():
            refused = _refusal(self, call, key)
            if refused:
                return refused
            self.admitted += 1
            self.seen[key] = self.seen.get(key, 0) + 1
        return _finish(self, body)


class OtherLayout(GuardBase):
    """Its own names: a private lock, a state dict and a Counter."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._mutex = threading.Lock()
        self.state = {"used": 0, "by_signature": Counter()}

    def admit(self, call, body):
        sig = labkit.signature(call.tool, call.arguments)
        with self._mutex:
            if self.cancelled:
                return "Cancelled"
            if call.capability not in self.granted:
                return "PermissionDenied"
            if self.state["used"] >= self.tool_calls:
                return "ToolBudget"
            if self.state["by_signature"][sig] >= self.repetitions:
                return "RepeatedCall"
            self.state["used"] += 1
            self.state["by_signature"][sig] += 1
        outcome = body()
        return "Cancelled" if self.cancelled else outcome


class BodyInsideLock(GuardBase):
    """Every answer right, but the body runs under the lock: a slow body holds every other call up."""

    FAULT = "body_under_lock"

    def admit(self, call, body):
        key = labkit.signature(call.tool, call.arguments)
        with self.lock:
            refused = _refusal(self, call, key)
            if refused:
                return refused
            self.admitted += 1
            self.seen[key] = self.seen.get(key, 0) + 1
            return _finish(self, body)


class BodyInLockReserveAfter(GuardBase):
    """Runs the body inside the lock and reserves after it, in ``finally``: with the body inside the lock no
    other call can run until the reservation is made, and a failed body is counted too, so no answer and
    no count shows the order; the body started under the lock does (review C10-1's edge case)."""

    FAULT = "body_under_lock"

    def admit(self, call, body):
        key = labkit.signature(call.tool, call.arguments)
        with self.lock:
            refused = _refusal(self, call, key)
            if refused:
                return refused
            try:
                result = body()
            finally:
                self.admitted += 1
                self.seen[key] = self.seen.get(key, 0) + 1
            return "Cancelled" if self.cancelled else result


class ReserveThenRollBack(GuardBase):
    """Reserves first and gives the place back on refusal, all under the lock: right."""

    def admit(self, call, body):
        key = labkit.signature(call.tool, call.arguments)
        with self.lock:
            self.admitted += 1
            refused = _refusal(self, call, key, admitted=self.admitted - 1)
            if refused:
                self.admitted -= 1
                return refused
            self.seen[key] = self.seen.get(key, 0) + 1
        return _finish(self, body)


class PausesEverywhere(Reference):
    """Right, with pause() between every step: a hint changes nothing."""

    def admit(self, call, body):
        pause()
        with self.lock:
            pause()
            refused = _refusal(self, call, labkit.signature(call.tool, call.arguments))
            pause()
            if refused:
                return refused
            key = labkit.signature(call.tool, call.arguments)
            self.admitted += 1
            pause()
            self.seen[key] = self.seen.get(key, 0) + 1
        pause()
        return _finish(self, body)


WRONG += [BodyInsideLock, BodyInLockReserveAfter]  # every answer right: the body ran under the lock

RIGHT = [
    Reference,
    WithRLock,
    WithCondition,
    WithContextManager,
    OtherLayout,
    ReserveThenRollBack,
    PausesEverywhere,
]


# -- the one-budget form, admit(body) -> bool ---------------------------------------------------


class SimpleUnlocked(GuardBase):
    FAULT = "check_outside_lock"

    def admit(self, body):
        if self.admitted >= self.limit:
            return False
        pause()
        self.admitted += 1
        body()
        return True


class SimpleSplit(GuardBase):
    FAULT = "check_and_reserve_in_two_steps"

    def admit(self, body):
        with self.lock:
            if self.admitted >= self.limit:
                return False
        with self.lock:
            self.admitted += 1
        body()
        return True


class SimpleBodyFirst(GuardBase):
    FAULT = "body_before_check"

    def admit(self, body):
        body()
        with self.lock:
            if self.admitted >= self.limit:
                return False
            self.admitted += 1
        return True


class SimpleGreaterThan(GuardBase):
    FAULT = "budget_admits_one_too_many"

    def admit(self, body):
        with self.lock:
            if self.admitted > self.limit:
                return False
            self.admitted += 1
        body()
        return True


class SimpleRight(GuardBase):
    def admit(self, body):
        with self.lock:
            if self.admitted >= self.limit:
                return False
            self.admitted += 1
        body()
        return True


SIMPLE_WRONG = [SimpleUnlocked, SimpleSplit, SimpleBodyFirst, SimpleGreaterThan]
SIMPLE_RIGHT = [SimpleRight]


# -- found by attacking the checker (each was once judged wrongly) ----------------------------------


class NoLockLog(GuardBase):
    """No lock; the budget is the length of a list appended in place through a local name."""

    FAULT = "check_outside_lock"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.log = []

    def admit(self, call, body):
        key = labkit.signature(call.tool, call.arguments)
        log, limit, reps = self.log, self.tool_calls, self.repetitions
        if self.cancelled:
            return "Cancelled"
        if call.capability not in self.granted:
            return "PermissionDenied"
        if len(log) >= limit:
            return "ToolBudget"
        if log.count(key) >= reps:
            return "RepeatedCall"
        log.append(key)
        return _finish(self, body)


class NoLockSideObject(GuardBase):
    """No lock; the counts live in an object of the guard's own (no hook sees them: every line is a switch)."""

    FAULT = "check_outside_lock"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.box = types.SimpleNamespace(n=0, seen={})

    def admit(self, call, body):
        key = labkit.signature(call.tool, call.arguments)
        box = self.box
        if self.cancelled:
            return "Cancelled"
        if call.capability not in self.granted:
            return "PermissionDenied"
        if box.n >= self.tool_calls:
            return "ToolBudget"
        if box.seen.get(key, 0) >= self.repetitions:
            return "RepeatedCall"
        box.n += 1
        box.seen[key] = box.seen.get(key, 0) + 1
        return _finish(self, body)


class NoLockThroughDict(GuardBase):
    """No lock; the count read and written through self.__dict__ (past the attribute hooks)."""

    FAULT = "check_outside_lock"

    def admit(self, call, body):
        key = labkit.signature(call.tool, call.arguments)
        state = self.__dict__
        if self.cancelled:
            return "Cancelled"
        if call.capability not in self.granted:
            return "PermissionDenied"
        if state["admitted"] >= self.tool_calls:
            return "ToolBudget"
        if self.seen.get(key, 0) >= self.repetitions:
            return "RepeatedCall"
        state["admitted"] += 1
        self.seen[key] = self.seen.get(key, 0) + 1
        return _finish(self, body)


class SeenCopyOnWrite(Reference):
    """Builds a new table from a copy taken before the lock: one thread's entry is lost."""

    FAULT = "check_outside_lock"

    def admit(self, call, body):
        key = labkit.signature(call.tool, call.arguments)
        snapshot = self.seen
        with self.lock:
            refused = _refusal(self, call, key)
            if refused:
                return refused
            self.admitted += 1
            self.seen = {**snapshot, key: self.seen.get(key, 0) + 1}
        return _finish(self, body)


class AnswerThatEqualsAnything(_Rules):
    """The rules in the wrong order, hidden behind a str whose == says yes to every str: judged by its text
    (was "unexplained", as "not a refusal")."""

    FAULT = "rules_in_wrong_order"

    class Refusal(str):
        def __eq__(self, other):
            return isinstance(other, str)

        __hash__ = str.__hash__

    def checks(self, call, key):
        cancelled, permission, budget, repetition = super().checks(call, key)
        return [(self.Refusal(r), f) for r, f in (cancelled, budget, permission, repetition)]


class KeyFromStr(_Rules):
    """The signature as tool + str(arguments): Decimal('1.10') and Decimal('1.1') become two (was
    "unexplained": the checker now probes the guard's signature and names the pair it splits)."""

    FAULT = "signature_tells_equal_calls_apart"

    def key(self, call):
        return call.tool + str(call.arguments)


class KeyCasefolded(_Rules):
    """The signature casefolded: tags ["A", "b"] repeat ["a", "b"] (passed while no script had a capital)."""

    FAULT = "signature_merges_different_calls"

    def key(self, call):
        return labkit.signature(call.tool, call.arguments).casefold()


class KeyWithoutSpaces(_Rules):
    """The signature with its spaces taken out: tags ["a ", "b"] repeat ["a", "b"] (passed too)."""

    FAULT = "signature_merges_different_calls"

    def key(self, call):
        return labkit.signature(call.tool, call.arguments).replace(" ", "")


class KeySortsLists(_Rules):
    """Sorts a list argument before the signature: tags ["b", "a"] repeat ["a", "b"] (was "unexplained")."""

    FAULT = "signature_merges_different_calls"

    def key(self, call):
        arguments = {k: sorted(v) if isinstance(v, list) else v for k, v in call.arguments.items()}
        return labkit.signature(call.tool, arguments)


class KeyFromJsonDumps(_Rules):
    """json.dumps of the arguments, which cannot write a Decimal: admit raises (was "unexplained")."""

    FAULT = "raised"

    def key(self, call):
        return call.tool + json.dumps(call.arguments)


class BudgetPerSignature(_Rules):
    """The budget read from the signature's count (was "unexplained")."""

    FAULT = "budget_per_signature"

    def over_budget(self):
        return False

    def checks(self, call, key):
        cancelled, permission, _, repetition = super().checks(call, key)
        return [cancelled, permission, ("ToolBudget", lambda: self.seen.get(key, 0) >= self.tool_calls), repetition]


class NeverCountsTheBudget(_Rules):
    """Asks the budget but never adds to self.admitted (was "unexplained")."""

    FAULT = "budget_never_counted"

    def reserve(self, call, key):
        self.seen[key] = self.seen.get(key, 0) + 1


class RefundsTheSignatureOnly(_Rules):
    """A failed body gives back its signature's count but keeps its budget place (was "unexplained")."""

    FAULT = "failed_body_refunded"

    def run(self, call, key, body):
        try:
            return _finish(self, body)
        except Exception:
            with self.lock:
                self.seen[key] -= 1
            raise


class GivesBackAfterEveryBody(_Rules):
    """Gives the budget place back in ``finally``, after every body (was "unexplained")."""

    FAULT = "given_back_after_every_body"

    def run(self, call, key, body):
        try:
            return _finish(self, body)
        finally:
            with self.lock:
                self.admitted -= 1


class RefundsARefusal(_Rules):
    """Gives a budget place back when the repetition rule refuses a call (was "unexplained")."""

    FAULT = "refusal_gives_back"

    def repeated(self, key):
        if self.seen.get(key, 0) >= self.repetitions:
            self.admitted -= 1
            return True
        return False


class GrantsLookedUpByToolName(_Rules):
    """Looks the tool's name up in the grants, which hold capabilities (was "unexplained")."""

    FAULT = "permission_refuses_granted"

    def checks(self, call, key):
        cancelled, _, budget, repetition = super().checks(call, key)
        return [cancelled, ("PermissionDenied", lambda: call.tool not in self.granted), budget, repetition]


class BudgetRightOnlyUpToThree(_Rules):
    """A budget of 4 at most: right up to tool_calls=4, one call short and more above (was "unexplained")."""

    FAULT = "budget_wrong_for_some_limits"

    def over_budget(self):
        return self.admitted >= min(self.tool_calls, 3) + (self.tool_calls > 3)


class ZeroBudgetAdmitsOne(_Rules):
    """A budget of 0 admits one call: right at every other budget (was "unexplained")."""

    FAULT = "budget_wrong_for_some_limits"

    def over_budget(self):
        return self.admitted >= max(self.tool_calls, 1)


class RepetitionsCappedAtTwo(_Rules):
    """A signature runs twice at most, even with repetitions=3 (no known fault: the repetition probe)."""

    FAULT = "repetition_wrong_for_some_limits"

    def repeated(self, key):
        return self.seen.get(key, 0) >= min(self.repetitions, 2)


class PeeksWithoutTheLock(Reference):
    """Skips the budget check when an unlocked look saw room for two more: only three threads break it."""

    FAULT = "check_outside_lock"
    THREADS = 3

    def admit(self, call, body):
        key = labkit.signature(call.tool, call.arguments)
        plenty = self.admitted + 2 <= self.tool_calls
        with self.lock:
            if self.cancelled:
                return "Cancelled"
            if call.capability not in self.granted:
                return "PermissionDenied"
            if not plenty and self.admitted >= self.tool_calls:
                return "ToolBudget"
            if self.seen.get(key, 0) >= self.repetitions:
                return "RepeatedCall"
            self.admitted += 1
            self.seen[key] = self.seen.get(key, 0) + 1
        return _finish(self, body)


ATTACKED_WRONG = [
    NoLockLog,
    NoLockSideObject,
    NoLockThroughDict,
    SeenCopyOnWrite,
    AnswerThatEqualsAnything,
    KeyFromStr,
    KeyCasefolded,
    KeyWithoutSpaces,
    KeySortsLists,
    KeyFromJsonDumps,
    BudgetPerSignature,
    NeverCountsTheBudget,
    RefundsTheSignatureOnly,
    GivesBackAfterEveryBody,
    RefundsARefusal,
    GrantsLookedUpByToolName,
    BudgetRightOnlyUpToThree,
    ZeroBudgetAdmitsOne,
    RepetitionsCappedAtTwo,
    PeeksWithoutTheLock,
]

MODULE_LOCK = threading.Lock()


class WithModuleLock(GuardBase):
    def admit(self, call, body):
        key = labkit.signature(call.tool, call.arguments)
        with MODULE_LOCK:
            refused = _refusal(self, call, key)
            if refused:
                return refused
            self.admitted += 1
            self.seen[key] = self.seen.get(key, 0) + 1
        return _finish(self, body)


class WithSemaphore(WithModuleLock):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.gate = threading.BoundedSemaphore(1)

    def admit(self, call, body):
        key = labkit.signature(call.tool, call.arguments)
        with self.gate:
            refused = _refusal(self, call, key)
            if refused:
                return refused
            self.admitted += 1
            self.seen[key] = self.seen.get(key, 0) + 1
        return _finish(self, body)


class SpinsOnTryLock(GuardBase):
    def admit(self, call, body):
        key = labkit.signature(call.tool, call.arguments)
        while not self.lock.acquire(blocking=False):
            pass
        try:
            refused = _refusal(self, call, key)
            if refused:
                return refused
            self.admitted += 1
            self.seen[key] = self.seen.get(key, 0) + 1
        finally:
            self.lock.release()
        return _finish(self, body)


class OwnConstructor(GuardBase):
    """Sets its own attributes, keyword-only, without super().__init__()."""

    def __init__(self, *, tool_calls=3, repetitions=1, granted=()):
        self.tool_calls, self.repetitions, self.granted = tool_calls, repetitions, frozenset(granted)
        self.admitted, self.seen, self.lock = 0, {}, threading.Lock()

    admit = Reference.admit


class ReturnsStopReasons(GuardBase):
    """Right: the reference's rules, answering with labkit's own StopReason members (chapter 4's
    ``scope.stop_reason``) instead of their names; once refused as "not a refusal"."""

    def admit(self, call, body):
        with self.lock:
            if self.cancelled:
                return "Cancelled"  # no StopReason: a cancellation is the caller's, not a rule's
            if call.capability not in self.granted:
                return labkit.StopReason.PERMISSION_DENIED
            if self.admitted >= self.tool_calls:
                return labkit.StopReason.TOOL_BUDGET
            key = labkit.signature(call.tool, call.arguments)
            if self.seen.get(key, 0) >= self.repetitions:
                return labkit.StopReason.REPEATED_CALL
            self.admitted += 1
            self.seen[key] = self.seen.get(key, 0) + 1
        result = body()
        return "Cancelled" if self.cancelled else result


ATTACKED_RIGHT = [WithModuleLock, WithSemaphore, SpinsOnTryLock, OwnConstructor, ReturnsStopReasons]
