"""A right answer written another way is right; a wrong one is wrong, however it is written.

A learner types an answer in Python, and Python gives many spellings of one
answer: ``2, 0, 64`` is a tuple where the chapter built a list, a pandas
expression gives ``numpy.True_`` or ``numpy.int64(2)``, a count may come as
``2.0``, a status name may carry a stray space or another case, and
``asyncio.CancelledError`` names the exception chapter 9 asks about. Every
judging helper (:func:`labkit.compare`, :func:`labkit.check`,
:func:`labkit.teaching.hosts.check_hosts`) must give the verdict the answer's
meaning deserves.

The guesses are generated (hypothesis) from answers read off real runs, by
rewrites that keep the meaning (the oracle: right, no ``think:`` line) and
rewrites that change it (the oracle: wrong, at least one ``think:`` line).
"""

from __future__ import annotations

import asyncio
import functools
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import labkit
from labkit.core.errors import InputError
from labkit.core.events import EventKind, StopReason
from labkit.teaching.hosts import check_hosts

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EDITIONS = settings(
    FAST, max_examples=60, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
"""The edition is set once per test (the language a message is shown in is read at each message)."""


@functools.cache
def runs() -> dict[str, labkit.RunOutcome]:
    return {
        f"{name}/{agent}": labkit.run(name, agent=agent) for name in labkit.SCENARIOS for agent in ("simple", "harness")
    }


def _think(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("think:")]


# -- rewrites that keep the meaning, and rewrites that change it ------------------------------------------


class _Int(int):
    """An int subclass (an IntEnum, a count type of a learner's own): a number like any other."""


@st.composite
def same_answer(draw, answer: object) -> object:
    """``answer`` written another way a learner may write it."""
    if isinstance(answer, bool):  # a text True/False for a truth value is that value (labkit.teaching.forms)
        before, after = draw(st.sampled_from(["", " "])), draw(st.sampled_from(["", " ", "\n"]))
        case = draw(st.sampled_from([str, str.lower, str.upper]))
        quote = draw(st.sampled_from(["", "'", '"']))
        return draw(st.sampled_from([answer, np.bool_(answer), before + quote + case(str(answer)) + quote + after]))
    if isinstance(answer, int):  # a text of digits for a number is that number (labkit.teaching.forms)
        spaced = draw(st.sampled_from(["", " "]))
        forms = [answer, float(answer), np.int64(answer), np.float64(answer), _Int(answer), f"{spaced}{answer}"]
        return draw(st.sampled_from(forms))
    if isinstance(answer, str):
        members = [
            enum(answer) for enum in (labkit.RunStatus, StopReason, EventKind) if answer in enum._value2member_map_
        ]
        if members and draw(st.booleans()):  # labkit's own member (chapter 4's scope.stop_reason)
            return draw(st.sampled_from(members))
        before, after = draw(st.sampled_from(["", " ", "\t"])), draw(st.sampled_from(["", " ", "\n"]))
        case = draw(st.sampled_from([str, str.lower, str.upper, str.swapcase]))
        quote = draw(st.sampled_from(["", "", "'", '"'])) if members else ""  # the quotes typed inside the text
        if members and draw(st.booleans()):  # "Permission Denied", "tool_budget": a name's words apart
            answer = re.sub(r"(?<=[a-z])(?=[A-Z])", draw(st.sampled_from([" ", "_"])), answer)
        return before + quote + case(answer) + quote + after
    if isinstance(answer, (list, tuple)):
        if answer and all(type(item) is int for item in answer) and draw(st.booleans()):
            return draw(st.sampled_from([np.array, pd.Series]))(list(answer))  # a column of a chapter's table
        kind = draw(st.sampled_from([list, tuple]))
        return kind(draw(same_answer(item)) for item in answer)
    raise AssertionError(answer)


@st.composite
def other_answer(draw, answer: object) -> object:
    """An answer that means something else than ``answer`` (then maybe written another way too)."""
    if isinstance(answer, bool):
        wrong: object = draw(st.sampled_from([not answer, int(answer), str(not answer), str(int(answer)), None]))
    elif isinstance(answer, int):
        wrong = draw(st.sampled_from([answer + 1, answer - 1, answer + 0.5, str(answer + 1), f"{answer} calls", None]))
        if answer in (0, 1):
            wrong = draw(st.sampled_from([wrong, bool(answer), np.bool_(answer)]))
    elif isinstance(answer, str):
        others = [s.value for s in labkit.RunStatus if s.value.casefold() != answer.casefold()]
        wrong = draw(st.sampled_from([*others, answer + "s", answer[:-1], None]))
    else:
        items = list(answer)
        how = draw(st.sampled_from(["item", "short", "long"] if items else ["long"]))
        if how == "item":
            at = draw(st.integers(0, len(items) - 1))
            items[at] = draw(other_answer(items[at]))
        elif how == "short":
            del items[draw(st.integers(0, len(items) - 1))]
        else:
            items.append(items[0] if items else 0)
        wrong = draw(st.sampled_from([list, tuple]))(items)
    return wrong


def _answers(run: labkit.RunOutcome) -> list[object]:
    """Values a chapter compares, read off the run: its status, counts, a truth value, lists of them."""
    counts = [run.count(kind) for kind in ("ModelCall", "ToolCall")]
    return [
        run.status.value,
        run.count("ToolCall"),
        run.exit_code,
        run.text is not None,
        counts,
        [run.status.value, run.exit_code],
        [e.kind.value for e in run.events][:5],
    ]


# -- compare -------------------------------------------------------------------------------------------------


@FAST
@given(st.data())
def test_compare_calls_an_answer_written_another_way_right_without_a_reason(data):
    run = runs()[data.draw(st.sampled_from(sorted(runs())))]
    answer = data.draw(st.sampled_from(_answers(run)))
    guess = data.draw(same_answer(answer))
    result = labkit.compare("answer", guess, answer)
    assert result.right, (guess, answer, str(result))
    assert "not this time" not in str(result) and _think(str(result)) == [], str(result)


@FAST
@given(st.data())
def test_compare_calls_another_answer_wrong_with_a_reason(data):
    run = runs()[data.draw(st.sampled_from(sorted(runs())))]
    answer = data.draw(st.sampled_from(_answers(run)))
    guess = data.draw(other_answer(answer))
    result = labkit.compare("answer", guess, answer)
    assert not result.right, (guess, answer, str(result))
    assert _think(str(result)), str(result)


def test_an_exception_is_judged_by_its_name_and_printed_as_it():
    for guess in (asyncio.CancelledError, asyncio.CancelledError(), "CancelledError "):
        result = labkit.compare("caller gets", guess, "CancelledError")
        assert result.right and "you said CancelledError " in str(result), str(result)
    wrong = labkit.compare("caller gets", asyncio.CancelledError, "an outcome")
    assert not wrong.right and "not 'CancelledError'" in str(wrong), str(wrong)


def test_a_truth_value_inside_a_list_is_still_not_a_number():
    """``[2, False]`` is not ``[2, 0]``, though Python holds ``False == 0``."""
    result = labkit.compare("exit codes", [2, False, 64], [2, 0, 64], meaning="exit code")
    assert not result.right and len(_think(str(result))) == 1, str(result)


# -- check ----------------------------------------------------------------------------------------------


@FAST
@given(st.data())
def test_check_calls_a_status_and_count_written_another_way_right(data):
    run = runs()[data.draw(st.sampled_from(sorted(runs())))]
    status = data.draw(same_answer(run.status.value))
    count = data.draw(same_answer(run.count("ToolCall")))
    result = labkit.check(run, status=status, tool_calls=count)
    assert result.right, (status, count, str(result))
    assert _think(str(result)) == [], str(result)


@FAST
@given(st.data())
def test_check_calls_another_count_wrong_and_a_fraction_or_text_wrong_with_a_reason(data):
    run = runs()[data.draw(st.sampled_from(sorted(runs())))]
    count = run.count("ToolCall")
    wrong = data.draw(st.sampled_from([count + 1, float(count + 1), np.int64(count + 2)]))
    assert not labkit.check(run, status=run.status.value, tool_calls=wrong).right
    assert labkit.check(run, status=run.status.value, tool_calls=str(count)).right  # digits: the number
    for bad in (count + 0.5, f"{count} calls", True):
        result = labkit.check(run, status=run.status.value, tool_calls=bad)  # a verdict, never an error
        assert not result.right and "think: a count is a whole number of ToolCall events" in str(result)


@pytest.mark.parametrize("field", ["tool_calls", "events"])
def test_a_learners_none_is_no_guess_yet_never_a_check_left_out(field):
    """``my_tool_calls = None`` (or ``my_events = None``) passed on is asked and not answered: the check is
    not right, and it says no guess yet; leaving the argument out is what leaves the count out."""
    run = runs()["repeat/harness"]
    result = labkit.check(run, status=run.status.value, **{field: None})
    assert not result.right and "no guess yet" in str(result), str(result)
    assert labkit.check(run, status=run.status.value).right


def test_a_status_name_that_is_no_status_even_loosely_is_a_verdict_saying_so():
    run = runs()["repeat/harness"]
    for bad in ("RepeatedCalls", "Repeat", "Repeated-Call", 3):
        result = labkit.check(run, status=bad)
        assert not result.right and f"think: {bad!r} is not a status" in str(result)
    for spaced in ("Repeated Call", "repeated_call"):  # a name's words apart: the name, as compare reads it
        assert labkit.check(run, status=spaced).right


# -- check_hosts ---------------------------------------------------------------------------------------------


def test_a_host_named_after_no_ending_is_an_input_error_naming_it():
    endings = {"Completed": 2, "RepeatedCall": 2}
    run = labkit.run("complete")
    for hosts in ({"Complete": run}, {"Completed": run, "Repeated": run}):
        with pytest.raises(InputError, match="none of the endings: Completed, RepeatedCall") as raised:
            check_hosts(hosts, endings)
        assert repr(next(name for name in hosts if name not in endings)) in str(raised.value)


def test_a_host_keyed_by_its_ending_in_another_case_is_that_endings_host(capsys):
    endings = {"Completed": 2, "RepeatedCall": 2}
    loose = check_hosts({"completed ": labkit.run("complete"), "'repeatedcall'": labkit.run("repeat")}, endings)
    exact = check_hosts({"Completed": labkit.run("complete"), "RepeatedCall": labkit.run("repeat")}, endings)
    assert str(loose) == str(exact)


# -- both editions; unordered answers ------------------------------------------------------------------------


@pytest.fixture(params=["en", "fr"])
def edition(request, monkeypatch):
    monkeypatch.setenv("LABKIT_LANGUAGE", request.param)
    return request.param


@EDITIONS
@given(data=st.data())
def test_every_form_is_judged_alike_in_both_editions(edition, data):
    """A rewrite that keeps the meaning is right, one that changes it is wrong with a reason, in French too."""
    run = runs()[data.draw(st.sampled_from(sorted(runs())))]
    answer = data.draw(st.sampled_from(_answers(run)))
    right = labkit.compare("answer", data.draw(same_answer(answer)), answer)
    assert right.right and _think(str(right)) == [], str(right)
    wrong = labkit.compare("answer", data.draw(other_answer(answer)), answer)
    think = "réfléchissez" if edition == "fr" else "think"
    assert not wrong.right and any(line.startswith(think) for line in str(wrong).splitlines()), str(wrong)


@EDITIONS
@given(data=st.data())
def test_a_status_guess_in_any_form_of_its_name_is_judged_by_the_name(edition, data):
    run = runs()[data.draw(st.sampled_from(sorted(runs())))]
    status = data.draw(same_answer(run.status.value))
    assert labkit.check(run, status=status, tool_calls=run.count("ToolCall")).right, repr(status)
    other = data.draw(st.sampled_from([s for s in labkit.RunStatus if s is not run.status]))
    form = data.draw(st.sampled_from([other, other.value, f"'{other.value}'", f" {other.value.lower()}"]))
    checked = labkit.check(run, status=form, tool_calls=run.count("ToolCall"))
    assert not checked.right and checked.predicted_status == other.value and checked.feedback, repr(form)


ITEMS = st.lists(st.sampled_from(["ticket.read", "review.finish", "audit.log", "shelf.write"]), unique=True)


@EDITIONS
@given(ITEMS, st.data())
def test_an_unordered_answer_is_any_order_of_its_items_and_nothing_else(edition, items, data):
    """An answer given as a set (the capabilities a host grants) has no order: any list, tuple or set of
    its items, each once, is right; one left out, one more or one twice is wrong, with a reason naming it."""
    answer = set(items)
    shuffled = data.draw(st.permutations(items))
    for guess in (list(shuffled), tuple(shuffled), set(shuffled), frozenset(shuffled)):
        result = labkit.compare("granted", guess, answer)
        assert result.right and _think(str(result)) == [], (guess, answer)
    how = data.draw(st.sampled_from(["left out", "one more", "twice"] if items else ["one more"]))
    wrong = list(shuffled)
    if how == "left out":
        gone = wrong.pop(data.draw(st.integers(0, len(wrong) - 1)))
    elif how == "one more":
        wrong.append("net.send")
    else:
        wrong.append(wrong[0])
    result = labkit.compare("granted", wrong, answer)
    lines = [line for line in result._text().splitlines() if "granted:" in line or "granted :" in line]
    assert not result.right and len(lines) == 1, (wrong, answer, str(result))
    if how == "left out":
        assert repr(gone) in lines[0], lines
    if how == "one more":
        assert "'net.send'" in lines[0], lines


def test_a_list_answer_is_not_matched_by_a_set_which_has_no_order(edition):
    result = labkit.compare("order", {"a", "b"}, ["a", "b"])
    assert not result.right and len(result._text().splitlines()) == 2, str(result)
