"""Chapter 10's checks: they pass on right answers and fail, saying why, on wrong ones.

Status bingo runs real scripted models under both agents. The guard checker
is tested in tests/test_guard_checker.py.
"""

from __future__ import annotations

import asyncio
import builtins
import re
import subprocess
import sys

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from labkit import Call, Fail, Hang, Limits, RunStatus, Say, UserError
from labkit.teaching.capstone import (
    BINGO_LIMITS,
    ScriptedModel,
    check_bingo,
    new_board,
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
    assert "no script yet" in result["Completed"].line and "raised an error" in result["Completed"].line
    assert str(result).splitlines()[-1] == "0 of 8 squares right"
    assert check_bingo({}).passed is False  # a missing key is a missing script


@pytest.mark.parametrize(
    ("status", "wrong", "got", "hint"),
    [
        # every call different: the budget fires, not the repetition rule
        (
            "RepeatedCall",
            ScriptedModel([Call("read_ticket", {"input": n}) for n in range(1, 6)]),
            "ToolBudget (ModelCall 5/6, ToolCall 4/4, most attempts of one signature 1/1)",
            "the tool budget decided: it refused read_ticket(input=5), 4 of 4 attempts already admitted",
        ),
        # 1 and 1.0 are one signature: the repetition rule fires before the budget
        (
            "ToolBudget",
            ScriptedModel([Call("read_ticket", {"input": 1}), Call("read_ticket", {"input": 1.0})]),
            "RepeatedCall",
            "the repetition rule decided: it refused read_ticket(input=1.0), same signature",
        ),
        # the model says it is done: the host condition decides
        (
            "Completed",
            ScriptedModel(["Review finished."]),
            "Incomplete",
            "the host condition (finish_review succeeded) is false",
        ),
        ("Incomplete", ScriptedModel([READ_42, FINISH_42, "ok"]), "Completed", "the host condition holds"),
        # not granted, but the budget is zero: permission comes first
        (
            "ToolBudget",
            ScriptedModel([READ_42], grant={"review.finish"}, limits={"tool_calls": 0}),
            "PermissionDenied",
            "the tool budget would also have refused that call (0 of 0 attempts already admitted), but the guard "
            "asks the permission rule first",
        ),
        ("ModelBudget", ScriptedModel([READ_42, FINISH_42, "ok"]), "Completed", "no rule refused anything"),
        ("DeadlineExceeded", ScriptedModel(["ok"]), "Incomplete", "no rule refused anything"),
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


def test_a_square_keyed_by_its_status_in_another_case_is_that_statuss_square():
    board = right_board()
    loose = {f" {status.lower()}": model for status, model in board.items()}
    assert [square.line for square in check_bingo(loose)] == [square.line for square in check_bingo(board)]


def test_a_square_may_tighten_the_limits_but_never_loosen_them():
    assert ScriptedModel(["ok"]).limits == BINGO_LIMITS
    assert ScriptedModel(["ok"], limits={"model_calls": 1}).limits == BINGO_LIMITS.with_(model_calls=1)
    with pytest.raises(UserError, match=r"never loosen them: model_calls=7 > 6"):
        ScriptedModel(["ok"], limits={"model_calls": 7})
    with pytest.raises(UserError, match=r"deadline_s=120 > 0.5"):
        ScriptedModel(["ok"], limits=Limits())  # the lesson's 120 s deadline would slow the chapter
    with pytest.raises(UserError, match=r"deadline_s=0.6 > 0.5"):
        ScriptedModel(["ok"], limits={"deadline_s": 0.6})  # the starting deadline is the ceiling too
    assert ScriptedModel(["ok"], limits={"deadline_s": 0.5}).limits == BINGO_LIMITS
    with pytest.raises(UserError, match="limits do not validate: model_calls"):
        ScriptedModel(["ok"], limits={"model_calls": "1"})
    with pytest.raises(UserError, match="tool_budget: not a limit; the limits are model_calls, tool_calls, "):
        ScriptedModel(["ok"], limits={"tool_budget": 1})
    with pytest.raises(UserError, match=r"deadline: not a limit \(did you mean deadline_s\?\)"):
        ScriptedModel(["ok"], limits={"deadline": 0.1})
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


# The guard exercise's checker has its own tests: tests/test_guard_checker.py (with tests/guard_catalogue.py).


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


def test_a_printed_bingo_is_folded_with_the_hint_on_its_own_lines():
    board = right_board()
    board["Completed"] = ScriptedModel([Call("read_ticket", {"input": 42}), "Review finished."])
    board["ToolBudget"] = ...
    result = check_bingo(board)
    printed = str(result).splitlines()
    assert all(len(line) <= 110 for line in printed), max(printed, key=len)
    wrong = result["Completed"]
    folded = wrong.text.splitlines()
    assert folded[0].startswith("Completed           not yet, both agents: Incomplete")
    hint_at = next(i for i, line in enumerate(folded) if line.lstrip().startswith("Hint: "))
    assert hint_at >= 1 and all(line.startswith(" " * 20) for line in folded[1:])
    # folding only moves spaces: the printed words are the one line's words, in order
    assert " ".join(wrong.text.split()) == " ".join(wrong.line.split())
    assert " ".join(result["ToolBudget"].text.split()) == " ".join(result["ToolBudget"].line.split())
    assert result["Incomplete"].text == result["Incomplete"].line  # a right square fits on one line


def _error_classes() -> list[type[BaseException]]:
    """Every built-in exception class a script can raise with one message, and asyncio's CancelledError."""
    classes = []
    for error in vars(builtins).values():
        if isinstance(error, type) and issubclass(error, Exception) and not issubclass(error, Warning):
            try:
                error("network unreachable")
            except TypeError:  # UnicodeDecodeError and its kin need more arguments
                continue
            classes.append(error)
    return sorted([*classes, asyncio.CancelledError], key=lambda e: e.__name__)


def _assert_the_hint_is_true_of(error: type[BaseException], wanted: str, square) -> None:
    """What a ProviderUnavailable hint claims of ``error``, held against each agent's run and the class raised."""
    mapped = issubclass(error, (ConnectionError, asyncio.CancelledError))
    # PEP 479: a StopIteration raised in a coroutine comes out as a RuntimeError, and the hint speaks of that
    raised = RuntimeError if issubclass(error, StopIteration) else error
    for agent, outcome in square.outcomes.items():  # each agent: the status, or the error itself
        if mapped:
            assert outcome.status is RunStatus.PROVIDER_UNAVAILABLE, agent
        else:
            assert type(outcome) is raised, agent
    assert square.right == (mapped and wanted == "ProviderUnavailable"), square.line
    if mapped:
        return
    line = " ".join(square.line.split())
    assert f"raised {raised.__name__}: {square.outcomes['simple']}" in line
    assert "ConnectionError or a subclass" in line and "Fail(asyncio.CancelledError())" in line
    assert f"(here: {raised.__name__}" in line
    assert ("an OSError but not a connection error" in line) == (
        issubclass(raised, OSError) and not issubclass(raised, TimeoutError)
    )
    assert ("a scripted TimeoutError is raised as it is" in line) == issubclass(raised, TimeoutError)
    assert ("mapped to ProviderUnavailable by the live transport" in line) == issubclass(raised, TimeoutError)
    assert "connection failure" not in line


@pytest.mark.parametrize("error", _error_classes(), ids=lambda e: e.__name__)
@pytest.mark.parametrize("wanted", ["ProviderUnavailable", "Completed"])
def test_what_the_provider_unavailable_hint_says_of_an_error_is_true_of_its_class(error, wanted):
    """Every built-in error a Fail step can raise, under both agents: a connection error or the provider's own
    cancellation fills the square (chapter 9), any other is raised, and the hint calls it an OSError only when
    it is one, and says why a scripted TimeoutError is not mapped."""
    square = check_bingo({wanted: ScriptedModel([READ_42, Fail(error("network unreachable"))])})[wanted]
    _assert_the_hint_is_true_of(error, wanted, square)


_BASES = [ConnectionError, OSError, TimeoutError, ValueError, RuntimeError, LookupError, ConnectionResetError]


@given(bases=st.lists(st.sampled_from(_BASES), min_size=1, max_size=3, unique=True))
@settings(max_examples=25, deadline=None)
def test_the_hint_is_true_of_an_error_class_of_the_learners_own(bases):
    """A class of the learner's own, from one to three bases (a TimeoutError that is also a ValueError...)."""
    try:
        error = type("LearnersError", tuple(bases), {})
    except TypeError:  # an inconsistent order of bases, or a layout conflict: Python refuses the class
        assume(False)
    square = check_bingo({"ProviderUnavailable": ScriptedModel([Fail(error("network unreachable"))])})[
        "ProviderUnavailable"
    ]
    _assert_the_hint_is_true_of(error, "ProviderUnavailable", square)


def test_a_step_function_that_returns_no_step_is_named_a_usage_error_not_a_provider_failure():
    square = check_bingo({"Completed": ScriptedModel(lambda n, request: 42)})["Completed"]
    line = " ".join(square.line.split())
    assert "raised ScriptStepError" in line and "the script itself is wrong" in line
    assert "ProviderUnavailable" not in line


def test_a_square_whose_scripted_model_raised_says_so_instead_of_no_script_yet():
    """The reviewer's square: limits loosened. The assignment never happened, yet the board names its error;
    a later right assignment clears it, and a later failing one is not hidden behind the older script."""
    board = new_board()
    with pytest.raises(UserError, match="never loosen them") as raised:
        board["ToolBudget"] = ScriptedModel([READ_42], limits={"tool_calls": 10})
    square = check_bingo(board)["ToolBudget"]
    assert square.state == "invalid" and "no script yet" not in square.line
    assert f"your square's cell raised UserError: {raised.value}" in square.line
    assert "run that cell again" in square.line and "still holds" not in square.line
    assert check_bingo(board)["Completed"].state == "missing"  # the other squares are untouched

    board["ToolBudget"] = ScriptedModel(
        [Call("read_ticket", {"input": n}) for n in (1, 2, 3)], limits={"tool_calls": 2}
    )
    assert check_bingo(board)["ToolBudget"].right

    with pytest.raises(UserError, match="unknown capability"):
        board["ToolBudget"] = ScriptedModel([READ_42], grant={"ticket.write"})
    square = check_bingo(board)["ToolBudget"]
    assert square.state == "invalid" and "unknown capability 'ticket.write'" in square.line
    assert "the board still holds the script before it" in square.line

    assert check_bingo(new_board())["ToolBudget"].state == "missing"  # a new board forgets the old errors


def test_a_failed_square_in_a_dict_literal_is_named_too_and_a_plain_variable_is_not_guessed():
    new_board()
    with pytest.raises(UserError):
        board = {"Completed": ScriptedModel(["ok"]), "ModelBudget": ScriptedModel(["ok"], limits={"model_calls": 9})}
        print(board)  # never reached: the statement raised
    assert "model_calls=9 > 6" in check_bingo({})["ModelBudget"].line
    assert check_bingo({})["Completed"].state == "missing"  # its ScriptedModel was fine
    new_board()
    with pytest.raises(UserError):
        model = ScriptedModel(["ok"], limits={"model_calls": 9})
        print(model)  # never reached
    assert all(square.state == "missing" for square in check_bingo({}))


def test_no_french_message_writes_a_plural_as_s_in_brackets():
    """« tentative(s) admise(s) » is not French prose: a plural agrees through ngettext or is avoided
    (« tentatives déjà admises : 4 sur 4 »). ``(s)`` after a space is the unit, seconds."""
    from pathlib import Path

    from babel.messages.pofile import read_po

    import labkit.teaching

    path = Path(labkit.teaching.__file__).parent / "locale" / "fr" / "LC_MESSAGES" / "labkit.po"
    with path.open("rb") as f:
        catalogue = read_po(f, locale="fr")
    bracketed = [
        text
        for message in catalogue
        if message.id
        for text in (message.string if isinstance(message.string, tuple) else (message.string,))
        if re.search(r"\w\(s\)|\w\(e\)", text)
    ]
    assert bracketed == []
