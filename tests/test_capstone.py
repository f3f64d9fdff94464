"""Chapter 10's checks: they pass on right answers and fail, saying why, on wrong ones.

Status bingo runs real scripted models under both agents; the guard harness
races real threads. No timing is asserted: the harness's pause makes the
races deterministic (every thread reaches it before any reserves), and a
racy guard is tried several times to show that it is caught every time.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from labkit import Call, Fail, Hang, Limits, RunStatus, Say, UserError
from labkit.teaching.capstone import (
    BINGO_LIMITS,
    GuardBase,
    ScriptedModel,
    check_bingo,
    check_guard,
    new_board,
    pause,
)

READ_42 = Call("read_ticket", {"input": 42})
FINISH_42 = Call("finish_review", {"input": 42})


def right_board() -> dict[str, ScriptedModel]:
    board = new_board()
    board["Completed"] = ScriptedModel([READ_42, FINISH_42, "Review finished."])
    board["Incomplete"] = ScriptedModel([READ_42, Say("Review finished.")])
    board["PermissionDenied"] = ScriptedModel([READ_42], grant={"review.finish"})
    board["RepeatedCall"] = ScriptedModel([READ_42, Call("read_ticket", {"input": 42.0})])
    board["ToolBudget"] = ScriptedModel(lambda n, request: Call("read_ticket", {"input": n}))
    board["ModelBudget"] = ScriptedModel([READ_42, FINISH_42, "done"], limits={"model_calls": 2})
    board["DeadlineExceeded"] = ScriptedModel([Hang()], limits={"deadline_s": 0.05})
    board["ProviderUnavailable"] = ScriptedModel([Fail(ConnectionError("refused"))])
    return board


# -- status bingo -------------------------------------------------------------------


def test_a_right_board_passes_with_one_right_line_per_status_in_order():
    result = check_bingo(right_board())
    assert result.passed
    assert [square.status for square in result] == list(RunStatus)
    lines = str(result).splitlines()
    assert len(lines) == 9 and lines[-1] == "8 of 8 squares right: bingo!"
    for status, line in zip(RunStatus, lines, strict=False):
        assert line.startswith(status.value) and "right under both agents" in line
    assert "ModelCall 2/2, ToolCall 2/4" in result["ModelBudget"].line
    assert set(result["Completed"].outcomes) == {"simple", "harness"}


def test_an_empty_board_fails_and_asks_for_every_script_without_running_anything():
    result = check_bingo(new_board())
    assert not result.passed
    assert all(square.state == "missing" and not square.outcomes for square in result)
    assert "no script yet" in result["Completed"].line
    assert str(result).splitlines()[-1] == "0 of 8 squares right"
    assert check_bingo({}).passed is False  # a missing key is a missing script


@pytest.mark.parametrize(
    ("status", "wrong", "got", "hint"),
    [
        # every call different: the budget fires, not the repetition rule
        (
            "RepeatedCall",
            ScriptedModel([Call("read_ticket", {"input": n}) for n in range(1, 6)]),
            "ToolBudget (ModelCall 5/6, ToolCall 4/4, signature peak 1/1)",
            "the repetition rule only looks at identical calls",
        ),
        # 1 and 1.0 are one signature: the repetition rule fires before the budget
        (
            "ToolBudget",
            ScriptedModel([Call("read_ticket", {"input": 1}), Call("read_ticket", {"input": 1.0})]),
            "RepeatedCall",
            "42 and 42.0 are one value",
        ),
        # the model says it is done: the host condition decides
        ("Completed", ScriptedModel(["Review finished."]), "Incomplete", "finish_review(42) never succeeded"),
        ("Incomplete", ScriptedModel([READ_42, FINISH_42, "ok"]), "Completed", "the host condition holds"),
        # not granted, but the budget is zero: permission comes first
        (
            "ToolBudget",
            ScriptedModel([READ_42], grant={"review.finish"}, limits={"tool_calls": 0}),
            "PermissionDenied",
            "permission is checked before the budget",
        ),
        ("ModelBudget", ScriptedModel([READ_42, FINISH_42, "ok"]), "Completed", "model-call budget"),
        ("DeadlineExceeded", ScriptedModel(["ok"]), "Incomplete", "one deadline bounds the whole run"),
        ("PermissionDenied", ScriptedModel([READ_42]), "ScriptExhausted", "the script ran out"),
        (
            "ProviderUnavailable",
            ScriptedModel([Fail(ValueError("bad"))]),
            "raised ValueError: bad",
            "programming error",
        ),
    ],
)
def test_a_wrong_square_says_what_came_instead_and_names_the_rule(status, wrong, got, hint):
    board = right_board()
    board[status] = wrong
    result = check_bingo(board)
    assert not result.passed
    square = result[status]
    assert square.state == "wrong"
    assert square.line.startswith(f"{status:<20}not yet, both agents: ")
    assert got in square.line and "Hint: " in square.line and hint in square.line
    assert [s.status.value for s in result if not s.right] == [status]  # the others stay right
    assert str(result).splitlines()[-1] == "7 of 8 squares right"


def test_a_square_that_is_not_a_scripted_model_is_reported_on_its_line():
    board = right_board()
    board["Incomplete"] = ["Review finished."]
    result = check_bingo(board)
    assert result["Incomplete"].state == "invalid" and "ScriptedModel([...])" in result["Incomplete"].line
    assert not result.passed


def test_a_board_with_a_key_that_is_not_a_status_is_a_usage_error():
    with pytest.raises(UserError, match="not a status: 'Complete'"):
        check_bingo({"Complete": ScriptedModel(["ok"])})
    with pytest.raises(UserError, match="dict of status name"):
        check_bingo([ScriptedModel(["ok"])])


def test_a_square_may_tighten_the_limits_but_never_loosen_them():
    assert ScriptedModel(["ok"]).limits == BINGO_LIMITS
    assert ScriptedModel(["ok"], limits={"model_calls": 1}).limits == BINGO_LIMITS.with_(model_calls=1)
    with pytest.raises(UserError, match=r"never loosen them: model_calls=7 > 6"):
        ScriptedModel(["ok"], limits={"model_calls": 7})
    with pytest.raises(UserError, match=r"deadline_s=120 > 1"):
        ScriptedModel(["ok"], limits=Limits())  # the lesson's 120 s deadline would slow the chapter
    with pytest.raises(UserError, match="limits do not validate: model_calls"):
        ScriptedModel(["ok"], limits={"model_calls": "1"})
    with pytest.raises(UserError, match="limits do not validate"):
        ScriptedModel(["ok"], limits={"tool_budget": 1})
    with pytest.raises(UserError, match="limits must be a mapping"):
        ScriptedModel(["ok"], limits=3)


def test_a_scripted_model_refuses_a_misspelt_capability_and_a_bad_step():
    with pytest.raises(UserError, match="unknown capability 'ticket_read'"):
        ScriptedModel([READ_42], grant={"ticket_read"})
    with pytest.raises(UserError, match="not one string"):
        ScriptedModel([READ_42], grant="ticket.read")
    with pytest.raises(UserError, match="step 2 is not a script step"):
        ScriptedModel([READ_42, 42])
    assert ScriptedModel([READ_42], grant=()).grant == frozenset()


# -- break the guard ----------------------------------------------------------------


class UnlockedGuard(GuardBase):
    """Checks, pauses, reserves: no lock at all."""

    def admit(self, body):
        if self.admitted >= self.limit:
            return False
        pause()
        self.admitted += 1
        body()
        return True


class BodyFirstGuard(GuardBase):
    """Runs the body, then checks and reserves under the lock."""

    def admit(self, body):
        body()
        with self.lock:
            if self.admitted >= self.limit:
                return False
            pause()
            self.admitted += 1
        return True


class SplitLockGuard(GuardBase):
    """Checks under the lock, then reserves under it again: two steps."""

    def admit(self, body):
        with self.lock:
            if self.admitted >= self.limit:
                return False
        pause()
        with self.lock:
            self.admitted += 1
        body()
        return True


class CheckOutsideGuard(GuardBase):
    """Checks with no lock, then pauses and reserves under it."""

    def admit(self, body):
        if self.admitted >= self.limit:
            return False
        with self.lock:
            pause()
            self.admitted += 1
        body()
        return True


class PauseFirstGuard(GuardBase):
    """Pauses before an unlocked check-and-reserve."""

    def admit(self, body):
        pause()
        if self.admitted >= self.limit:
            return False
        self.admitted += 1
        body()
        return True


class NoPauseGuard(GuardBase):
    """Locked and right, but never pauses: the harness cannot show its race, so it does not pass."""

    def admit(self, body):
        with self.lock:
            if self.admitted >= self.limit:
                return False
            self.admitted += 1
        body()
        return True


class Guard(GuardBase):
    """Check and reserve in one step under the lock, then the body outside it."""

    def admit(self, body):
        with self.lock:
            if self.admitted >= self.limit:
                return False
            pause()
            self.admitted += 1
        body()
        return True


class BodyInsideGuard(Guard):
    """Also correct: the body runs under the lock (slower, never wrong)."""

    def admit(self, body):
        with self.lock:
            if self.admitted >= self.limit:
                return False
            pause()
            self.admitted += 1
            body()
        return True


@pytest.mark.parametrize("guard", [Guard, BodyInsideGuard])
def test_a_correct_guard_passes_every_round(guard):
    report = check_guard(guard, limit=3, threads=8, rounds=3)
    assert report.passed and report.problems == ()
    for r in report.rounds:
        assert (r.admitted, r.refused, r.bodies_started, r.most_at_pause, r.pauses) == (3, 5, 3, 1, 3)
    assert str(report).splitlines()[-1].startswith("correct:")


@pytest.mark.parametrize("attempt", range(5))
def test_an_unlocked_guard_over_admits_every_thread_in_every_round(attempt):
    report = check_guard(UnlockedGuard, limit=3, threads=8, rounds=2)
    assert not report.passed
    for r in report.rounds:  # every thread read the count before any reserved
        assert (r.admitted, r.bodies_started, r.most_at_pause) == (8, 8, 8)
    assert "8 threads were between their check and their reservation at once" in report.problems[0]
    text = str(report)
    assert "admitted          8   5 over the limit of 3" in text and "not a correct guard:" in text


def test_a_guard_that_runs_the_body_before_its_check_starts_a_body_for_every_thread():
    report = check_guard(BodyFirstGuard, limit=3, threads=8, rounds=2)
    assert not report.passed
    for r in report.rounds:
        assert (r.admitted, r.refused, r.bodies_started) == (3, 5, 8)
    assert report.problems == (
        (
            "5 bodies ran for calls the guard refused: the check came after the body; "
            "check and reserve first, then run the body"
        ),
    )


@pytest.mark.parametrize("guard", [SplitLockGuard, CheckOutsideGuard, PauseFirstGuard])
@pytest.mark.parametrize("attempt", range(3))
def test_every_other_racy_guard_is_caught_every_time(guard, attempt):
    report = check_guard(guard, limit=3, threads=8, rounds=2)
    assert not report.passed
    assert report.admitted > 3 or report.most_at_pause > 1


def test_a_guard_that_never_pauses_does_not_pass_and_is_told_why():
    report = check_guard(NoPauseGuard, limit=3, threads=8, rounds=1)
    assert not report.passed
    assert report.admitted == 3
    assert any("pause() was not called" in p for p in report.problems)


def test_the_unfinished_exercise_is_reported_not_raised():
    class Skeleton(GuardBase):
        def admit(self, body): ...

    report = check_guard(Skeleton, rounds=1)
    assert not report.passed
    assert report.problems == (
        "admit returned None, not True (admitted, body ran) or False (refused) (8 of 8 threads)",
    )
    base = check_guard(GuardBase, rounds=1)
    assert base.problems == (
        "admit raised NotImplementedError: GuardBase.admit(body) is not written yet (8 of 8 threads)",
    )


def test_guards_that_admit_too_few_or_skip_the_body_fail():
    class Stingy(Guard):
        def admit(self, body):
            return False

    class Liar(Guard):
        def admit(self, body):
            with self.lock:
                if self.admitted >= self.limit:
                    return False
                pause()
                self.admitted += 1
            return True  # the body never ran

    assert "only 0 admitted" in check_guard(Stingy, rounds=1).problems[0]
    assert "never ran their body" in check_guard(Liar, rounds=1).problems[0]


def test_a_guard_that_deadlocks_is_reported_after_the_join_timeout(monkeypatch):
    import labkit.teaching.capstone.guard as harness

    class TwiceLocked(Guard):
        def admit(self, body):
            with self.lock, self.lock:  # a plain Lock taken twice never returns
                return False

    monkeypatch.setattr(harness, "_JOIN_TIMEOUT_S", 0.2)
    report = check_guard(TwiceLocked, rounds=1)
    assert not report.passed
    assert report.problems[0].startswith("admit did not return within 0.2 s (a deadlock?")
    assert report.problems[0].endswith("(8 of 8 threads)")


def test_the_harness_restores_the_switch_interval_and_pause_does_nothing_outside_it():
    before = sys.getswitchinterval()
    check_guard(Guard, rounds=1)
    assert sys.getswitchinterval() == before
    pause()  # no harness running: returns at once


def test_bad_harness_arguments_are_usage_errors():
    with pytest.raises(UserError, match="the guard class itself"):
        check_guard(Guard(3))
    with pytest.raises(UserError, match="threads \\(3\\) must be more than the limit \\(3\\)"):
        check_guard(Guard, limit=3, threads=3)
    with pytest.raises(UserError, match="rounds must be a whole number"):
        check_guard(Guard, rounds=0)

    class NeedsTwo(GuardBase):
        def __init__(self, limit, other):
            super().__init__(limit)

    with pytest.raises(UserError, match=r"NeedsTwo\(3\) failed: TypeError"):
        check_guard(NeedsTwo)


def test_the_capstone_module_imports_nothing_heavy():
    code = (
        "import sys, labkit.teaching.capstone; "
        "print([m for m in ('pandas', 'matplotlib', 'ipywidgets', 'IPython') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_polite_model_fills_six_squares_by_a_grant_or_a_limit_alone():
    """Chapter 10's question 2: only Incomplete and ProviderUnavailable need another model."""
    polite = [READ_42, FINISH_42, "Review finished."]
    board = {
        "Completed": ScriptedModel(polite),
        "ModelBudget": ScriptedModel(polite, limits={"model_calls": 2}),
        "ToolBudget": ScriptedModel(polite, limits={"tool_calls": 1}),
        "PermissionDenied": ScriptedModel(polite, grant={"ticket.read"}),
        "RepeatedCall": ScriptedModel(polite, limits={"repetitions": 0}),
        "DeadlineExceeded": ScriptedModel(polite, limits={"deadline_s": 0}),
        "Incomplete": ScriptedModel(polite, grant=()),  # a denial stops it instead
    }
    result = check_bingo(board)
    assert [s.status.value for s in result if s.right] == [
        "Completed",
        "PermissionDenied",
        "RepeatedCall",
        "ToolBudget",
        "ModelBudget",
        "DeadlineExceeded",
    ]
    assert "not yet, both agents: PermissionDenied" in result["Incomplete"].line
