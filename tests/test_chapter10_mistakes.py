"""The mistakes learners make most in chapter 10 show as one line, never a library traceback.

Chapter 10 calls ``labkit.teaching.short_errors()``: an exception in
``SHORT_ERRORS`` shows as ``one_line(exc)``. Each mistake here must raise one
of those, as a single line that names the mistake, or be reported on its own
line by the checker without raising.
"""

from __future__ import annotations

import pytest

from labkit import Call, Fail, Hang
from labkit.teaching import SHORT_ERRORS, one_line
from labkit.teaching.capstone import GuardBase, ScriptedModel, check_bingo, check_guard

READ_42 = Call("read_ticket", {"input": 42})


class Guard(GuardBase):
    def admit(self, call, body):
        return body()


MISTAKES = {
    "a limit loosened": (lambda: ScriptedModel([READ_42], limits={"model_calls": 9}), "never loosen"),
    "a long deadline for a hanging script": (lambda: ScriptedModel([Hang()], limits={"deadline_s": 30}), "deadline_s"),
    "Hang given a duration": (lambda: Hang(5), "deadline_s"),
    "arguments that are not a mapping": (lambda: ScriptedModel([Call("read_ticket", 42)]), "mapping"),
    "one string as the script": (lambda: ScriptedModel("Review finished."), "list of steps"),
    "one string as the grant": (lambda: ScriptedModel([], grant="ticket.read"), "not one string"),
    "a misspelt capability": (lambda: ScriptedModel([], grant={"ticket.reed"}), "unknown capability"),
    "limits as a list": (lambda: ScriptedModel([], limits=[1]), "mapping"),
    "a misspelt limit": (lambda: ScriptedModel([], limits={"tool_call": 1}), "tool_call"),
    "a negative limit": (lambda: ScriptedModel([], limits={"tool_calls": -1}), "tool_calls"),
    "a number as a step": (lambda: ScriptedModel([42]), "not a script step"),
    "Fail given a string": (lambda: ScriptedModel([Fail("boom")]), "exception"),
    "a guard instance instead of its class": (lambda: check_guard(Guard()), "class itself"),
    "too many threads": (lambda: check_guard(Guard, threads=8), "threads"),
    "a misspelt square": (lambda: check_bingo({"Completd": ...}), "not a status"),
    "a list as the board": (lambda: check_bingo([1]), "dict"),
}


@pytest.mark.parametrize("mistake", MISTAKES, ids=str)
def test_a_usual_mistake_is_one_line_that_names_it(mistake):
    make, words = MISTAKES[mistake]
    with pytest.raises(SHORT_ERRORS) as info:
        make()
    line = one_line(info.value)
    assert "\n" not in line and words in line, line


def test_mistakes_inside_the_work_are_reported_by_the_checkers_not_raised():
    class Unwritten(GuardBase):
        def admit(self, call, body): ...

    report = check_guard(Unwritten)
    assert not report.passed and report.problems[0].startswith("admit is not written yet")
    board = {"Completed": ScriptedModel([Call("read_tickets", {"input": 42}), "Review finished."])}
    square = check_bingo(board)["Completed"]
    assert square.state == "wrong" and "\n" not in square.line
