"""Every wrong guess :func:`labkit.compare` judges gets exactly one true reason per wrong item.

Guesses are generated (hypothesis) against values taken from real runs (the
eight scenarios under both agents, and chapter 2's four runtimes): counts,
exit codes, statuses, truth values, lists of them and one value per label. Each
guess is the answer itself or the answer written another way (spaces around a
text, another case, ``2.0`` or ``numpy.int64(2)`` for ``2``, ``numpy.True_``
for ``True``, a tuple for a list: all right), or wrong by one, of another type
(``"3"`` for ``3``, ``True`` for ``1``), or a list reordered, cut short or
made longer. The oracle here never imports
:mod:`labkit.teaching.reasons`: it knows which items differ, by position, and
what each reason may claim:

* a right or unguessed value gets no ``think:`` line; a wrong one exactly one,
  and a wrong list one line per group of wrong items, every wrong position named
  once and no right one named;
* a number's reason says how many too many or too few, and that number is the
  difference; an exit code's reason names only the two codes and what the
  console's closed set says of them; a type is named only when that is what
  differs, and spaces or case never (a text differing only so is right);
* with ``meaning="ModelCall"``/``"ToolCall"`` and the run, the reason names only
  what happened in that run (a refused call, a failed body, the runtime).
"""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import labkit
from labkit.teaching.direct import invoke_each
from labkit.teaching.runtimes import run_all


def shown(verdict: object) -> str:
    """What a verdict prints, before its lines are wrapped to the output area (tests/test_message_width.py)."""
    return verdict._text()  # type: ignore[attr-defined]


FAST = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

EXIT_CODES = {0: "Completed", 2: "controlled stop", 64: "usage error", 70: "framework", 74: "output"}
EXIT_CODES |= {76: "chat completion", 78: "configuration", 130: "Ctrl+C"}
"""The console's exit codes (labkit.cli's docstring) and a word each one's meaning must hold."""


@functools.cache
def scenario_runs() -> dict[str, labkit.RunOutcome]:
    runs = {}
    for name in labkit.SCENARIOS:
        for agent in ("simple", "harness"):
            runs[f"{name}/{agent}"] = labkit.run(name, agent=agent)
    for name in ("complete", "changing", "budget"):
        runs[f"{name}/harness/streamed"] = labkit.run(name, stream=True)
    return runs


def _by_rule(tools):
    tools.read_ticket(42)
    return tools.finish_review(42)


def _triage(tools, ask):
    tools.read_ticket(42)
    if ask("Does this ticket ask for a change?", choices=("yes", "no")) == "no":
        return tools.finish_review(42)
    return "left open for a person"


REVIEWER = [labkit.Call("read_ticket", {"input": 42}), labkit.Call("finish_review", {"input": 42}), "Done."]


@functools.cache
def runtime_runs(granted: frozenset[str] | None, answer: str) -> dict[str, labkit.RunOutcome]:
    return run_all(function=_by_rule, workflow=_triage, workflow_model=[answer], model=REVIEWER, granted=granted)


def _reasons(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("think: ")]


def _truth(value: object) -> bool:
    return isinstance(value, (bool, np.bool_))


_QUOTES = "'\"`"
_CLOSED_NAMES = {
    name.lower() for enum in (labkit.RunStatus, labkit.StopReason, labkit.EventKind) for name in enum._value2member_map_
}


def _inside_quotes(text: str) -> str:
    text = text.strip()
    return text[1:-1].strip() if len(text) > 1 and text[0] == text[-1] and text[0] in _QUOTES else text


def _wrong(said: object, was: object) -> bool:
    """The oracle's rule, written apart from labkit's: a truth value is never a number, and a text True/False
    beside one is it; texts differ only when they differ once stripped, lowered and taken out of one pair
    of quotes (unless the answer is quoted itself), a closed name also with its spaces and underscores
    out, an exception's name also with a module before it; a text beside a one-item list is that item;
    lists and tuples, item by item; dicts, per key (a key read as a text is)."""
    if isinstance(said, str) and isinstance(was, (list, tuple)) and len(was) == 1:
        return _wrong(said, was[0])
    if isinstance(said, (list, tuple)) and isinstance(was, (list, tuple)):
        return len(said) != len(was) or any(_wrong(a, b) for a, b in zip(said, was, strict=True))
    if isinstance(said, dict) and isinstance(was, dict):
        loose = {k.strip().lower(): k for k in was if isinstance(k, str)}
        said = {loose.get(_inside_quotes(k).lower(), k) if isinstance(k, str) else k: v for k, v in said.items()}
        return said.keys() != was.keys() or any(_wrong(said[k], was[k]) for k in was)
    if _truth(was) and isinstance(said, str) and _inside_quotes(said).lower() in ("true", "false"):
        said = _inside_quotes(said).lower() == "true"
    if _truth(said) != _truth(was):
        return True
    if isinstance(said, str) and isinstance(was, str):
        answer = was.strip().lower()
        text = (said.strip() if was.strip()[:1] in _QUOTES else _inside_quotes(said)).lower()
        if answer in _CLOSED_NAMES:
            text = text.replace(" ", "").replace("_", "")
        if re.fullmatch(r"[a-z_.]+\.[a-z]+(error|exception)", text):
            text = text.rsplit(".", 1)[1]
        return text != answer
    said, was = _digits(said, was), _digits(was, said)
    return bool(said != was)


def _digits(value: object, other: object) -> object:
    """A text of digits beside a number is that number (the course's one rule for a count's form)."""
    number = isinstance(other, (int, float, np.integer, np.floating)) and not _truth(other)
    if number and isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        return int(value)
    return value


# -- guesses ------------------------------------------------------------------------------------------


@st.composite
def wrong_or_right(draw, answer: object) -> object:
    """A guess for ``answer``: itself, one off, another type, spaces, another case."""
    options: list[object] = [answer]
    if isinstance(answer, bool):
        options += [not answer, int(answer), str(answer), str(answer).lower(), f"'{not answer}'", np.bool_(answer)]
        options += [np.bool_(not answer), str(int(answer))]
    elif isinstance(answer, int):
        options += [answer + 1, answer - 1, str(answer), str(answer + 1), float(answer) + 0.5, np.int64(answer)]
        if answer in (0, 1):
            options.append(bool(answer))
    elif isinstance(answer, str):
        options += [f" {answer}", f"{answer} ", answer.lower(), answer.upper(), "Completed", "Incomplete", None]
        spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", answer)  # "Tool Budget" for ToolBudget
        options += [f"'{answer}'", f'"{answer.lower()}"', spaced, f"'{spaced}'", f"{answer}s", f"x.{answer}"]
    return draw(st.sampled_from(options))


@st.composite
def list_guess(draw, answer: list) -> list:
    """A list guess: item by item as above, or the answer reordered, cut short or made longer."""
    how = draw(st.sampled_from(["items", "reordered", "short", "long", "right"]))
    if how == "right" or not answer:
        return draw(st.sampled_from([list, tuple]))(answer)  # a tuple of the same items is the same answer
    if how == "reordered":
        return draw(st.permutations(answer))
    if how == "short":
        cut = draw(st.integers(0, len(answer) - 1))
        return answer[:cut] + answer[cut + 1 :]
    if how == "long":
        at = draw(st.integers(0, len(answer)))
        return [*answer[:at], draw(wrong_or_right(answer[0])), *answer[at:]]
    return draw(st.sampled_from([list, tuple]))(draw(wrong_or_right(item)) for item in answer)


# -- the oracle ---------------------------------------------------------------------------------------


def _positions(reason: str, what: str) -> list[int]:
    head = reason.removeprefix(f"think: {what} ").split(": ", 1)[0]
    return [int(n) for n in re.findall(r"\[(\d+)\]", head)]


def scalar_problems(reason: str, said: object, was: object, meaning: str | None) -> list[str]:
    """What a reason about one value claims that is not so."""
    problems = []
    if "has spaces" in reason or "upper and lower case" in reason:
        problems.append("spaces or case named: a text differing only so is right")
    if "print alike" in reason and str(said) != str(was):
        problems.append("'print alike' for values that print otherwise")
    if "a truth value (True/False) and a number" in reason and not (said == was and type(said) is not type(was)):
        problems.append("bool/int named, not the difference")
    said, was = _digits(said, was), _digits(was, said)  # a text of digits beside a number is the number
    gap = re.search(r"(\d+(?:\.\d+)?) too (many|few)", reason)
    if gap:
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (said, was))
        if not numbers:
            problems.append("a difference for values that are not numbers")
        else:
            n, which = float(gap.group(1)), gap.group(2)
            if n != abs(said - was) or (which == "many") != (said > was):  # type: ignore[operator]
                problems.append(f"'{gap.group(0)}' for {said!r} against {was!r}")
    elif all(isinstance(v, int) and not isinstance(v, bool) for v in (said, was)) and meaning != "exit code":
        problems.append("two numbers, and the difference is not said")
    type_only = "print alike" in reason or "a truth value (True/False) and a number" in reason
    if meaning == "exit code" and not type_only:
        named = {int(n) for n in re.findall(r"(?<![\[\w.])(-?\d+) (?:would )?means?\b", reason)}
        if not named <= {said, was}:
            problems.append(f"names codes {named} that were neither guessed nor the answer")
        if was not in named and isinstance(was, int):
            problems.append("does not say what the code that happened means")
        for code in named:
            if code not in EXIT_CODES:
                if f"{code} would mean no exit code of labkit's console" not in reason:
                    problems.append(f"{code} is not said to be no exit code of the console")
            elif EXIT_CODES[code] not in reason:
                problems.append(f"what {code} means is not said")
    return problems


def compare_problems(what: str, guess: object, answer: object, meaning: str | None = None, runs=None) -> list[str]:
    """Every way the printed comparison breaks the rules of this module's docstring."""
    result = labkit.compare(what, guess, answer, meaning=meaning, runs=runs)
    text = shown(result)
    reasons = _reasons(text)
    problems: list[str] = []
    if guess is ... or not _wrong(guess, answer):
        return [f"a reason after a right or unguessed value: {reasons}"] if reasons else []
    if result.right:
        problems.append("a wrong guess judged right")
    if isinstance(guess, dict) and isinstance(answer, dict):
        for label in answer:
            if label not in guess or guess[label] is ...:
                continue
            mine = [r for r in reasons if r.startswith(f"think: {what} [{label}]")]
            problems += [
                f"[{label}] {p}"
                for p in _value_problems(f"{what} [{label}]", guess[label], answer[label], mine, meaning)
            ]
        return problems
    return problems + _value_problems(what, guess, answer, reasons, meaning)


def _left_over(short: list, long: list) -> list[int] | None:
    """The positions (from 1) of ``long`` that ``short``'s items, matched first to first in order, leave
    over; None when ``short`` is not ``long`` with items taken out."""
    taken, j = [], 0
    for item in short:
        while j < len(long) and _wrong(item, long[j]):
            j += 1
        if j == len(long):
            return None
        taken.append(j)
        j += 1
    return [i + 1 for i in range(len(long)) if i not in taken]


def _wrong_positions(said: list, was: list) -> list[int]:
    """Which positions a list's reasons must name: an empty guess, every item of the answer; a guess that
    is the answer with items left out (or added), those items' places; otherwise each position that differs."""
    if not said:
        return list(range(1, len(was) + 1))
    if len(said) < len(was) and (left := _left_over(said, was)) is not None:
        return left
    if len(said) > len(was) and (added := _left_over(was, said)) is not None:
        return added
    return [
        i + 1 for i in range(max(len(said), len(was))) if i >= len(said) or i >= len(was) or _wrong(said[i], was[i])
    ]


def _value_problems(what: str, said: object, was: object, reasons: list[str], meaning: str | None) -> list[str]:
    if not _wrong(said, was):
        return [f"a reason for a right value: {reasons}"] if reasons else []
    if isinstance(said, (list, tuple)) and isinstance(was, (list, tuple)):
        wrong = _wrong_positions(list(said), list(was))
        named = [p for reason in reasons for p in _positions(reason, what)]
        problems = [] if sorted(named) == wrong else [f"positions {named} named, {wrong} are wrong: {reasons}"]
        one_answer_each = meaning in ("exit code", "status", "signatures")  # an item per command, per call
        if len(said) == len(was) and (one_answer_each or sorted(map(repr, said)) != sorted(map(repr, was))):
            for reason in reasons:
                if "another order" in reason:
                    problems.append(
                        "'another order' for a list of one answer per item"
                        if one_answer_each
                        else "'another order' for lists with other items"
                    )
                positions = _positions(reason, what)
                if len(positions) == 1 and "left out" not in reason:
                    i = positions[0] - 1
                    problems += scalar_problems(reason, said[i], was[i], meaning)
        return problems
    if len(reasons) != 1:
        return [f"{len(reasons)} reasons for one wrong value: {reasons}"]
    return scalar_problems(reasons[0], said, was, meaning)


# -- the tests ------------------------------------------------------------------------------------------


COUNTS = ("ToolCall", "ModelCall", "Middleware")


@FAST
@given(st.data())
def test_every_wrong_count_of_a_real_run_gets_one_true_reason(data):
    runs = scenario_runs()
    name = data.draw(st.sampled_from(sorted(runs)))
    kind = data.draw(st.sampled_from(COUNTS))
    answer = runs[name].count(kind)
    guess = data.draw(wrong_or_right(answer))
    assert compare_problems(kind, guess, answer) == []
    problems = compare_problems(kind, guess, answer, meaning=kind, runs=runs[name])
    assert problems == [], (name, guess, answer)
    text = shown(labkit.compare(kind, guess, answer, meaning=kind, runs=runs[name]))
    assert ("streamed reply" in text) == (
        name.endswith("/streamed")
        and kind == "ModelCall"
        and _wrong(guess, answer)
        and type(guess) in (int, float, str)
    ), text
    if "the model-call budget refused" in text:
        assert runs[name].status == "ModelBudget", text


@FAST
@given(st.data())
def test_every_wrong_exit_code_gets_what_both_codes_mean(data):
    runs = scenario_runs()
    names = data.draw(st.lists(st.sampled_from(sorted(runs)), min_size=1, max_size=5))
    answer = [runs[name].exit_code for name in names] + data.draw(st.lists(st.sampled_from([64, 130]), max_size=1))
    one = data.draw(st.booleans())
    if one:
        guess = data.draw(st.one_of(wrong_or_right(answer[0]), st.sampled_from(sorted(EXIT_CODES))))
        assert compare_problems("exit code", guess, answer[0], meaning="exit code") == [], (guess, answer[0])
    else:
        guess = data.draw(list_guess(answer))
        assert compare_problems("exit codes", guess, answer, meaning="exit code") == [], (guess, answer)


@FAST
@given(st.data())
def test_every_wrong_status_text_or_truth_value_gets_one_true_reason(data):
    runs = scenario_runs()
    name = data.draw(st.sampled_from(sorted(runs)))
    answer = data.draw(st.sampled_from([runs[name].status.value, runs[name].text is not None]))
    guess = data.draw(wrong_or_right(answer))
    assert compare_problems("answer", guess, answer) == [], (guess, answer)


@FAST
@given(st.data())
def test_every_wrong_label_of_a_per_runtime_guess_gets_its_own_reason(data):
    granted = data.draw(st.sampled_from([None, frozenset({"ticket.read"})]))
    runs = runtime_runs(granted, data.draw(st.sampled_from(["no", "yes"])))
    kind = data.draw(st.sampled_from(COUNTS))
    answer = {label: run.count(kind) for label, run in runs.items()}
    guess = {label: data.draw(st.one_of(wrong_or_right(value), st.just(...))) for label, value in answer.items()}
    assert compare_problems(kind, guess, answer, meaning=kind, runs=runs) == [], (guess, answer)
    text = shown(labkit.compare(kind, guess, answer, meaning=kind, runs=runs))
    for label, run in runs.items():
        reason = next((r for r in _reasons(text) if r.startswith(f"think: {kind} [{label}]")), "")
        said = guess[label]
        if label == "function" and kind == "ModelCall" and reason and type(said) is int:
            assert "asks no model" in reason
        if label in ("function", "workflow"):
            assert "loop" not in reason.replace("no loop", "") and "model's words" not in reason, reason
        if "a refused call records none" in reason:
            assert run.status.value in ("PermissionDenied", "ToolBudget", "RepeatedCall"), reason
        if "failed in" in reason:
            assert any((m.text or "").startswith("failed") for m in run.transcript), reason


@FAST
@given(st.data())
def test_every_wrong_list_of_names_gets_one_reason_per_wrong_item(data):
    runs = runtime_runs(None, data.draw(st.sampled_from(["no", "yes"])))
    answer = {label: [e.name for e in run.events if e.kind == "ToolCall"] for label, run in runs.items()}
    guess = {label: data.draw(list_guess(names)) for label, names in answer.items()}
    assert compare_problems("admitted", guess, answer) == [], (guess, answer)


def test_what_each_kind_of_wrong_answer_prints():
    """One example each (the report's examples): an exit code list, a count with its run, a status, a type."""
    codes = shown(labkit.compare("exit codes", [2, 2, 0], [2, 0, 64], meaning="exit code")).splitlines()
    assert codes[1:4] == [
        "exit codes [1]  you said 2                  it was 2                  right",
        "exit codes [2]  you said 2                  it was 0                  not this time",
        "exit codes [3]  you said 0                  it was 64                 not this time",
    ]
    assert codes[4].startswith("think: exit codes [2]: 0 means Completed") and "2 would mean" in codes[4]
    assert codes[5].startswith("think: exit codes [3]: 64 means a usage error") and "0 would mean" in codes[5]
    run = labkit.run("repeat")
    count = _reasons(shown(labkit.compare("ToolCall", 2, run.count("ToolCall"), meaning="ToolCall", runs=run)))
    assert count == [
        "think: ToolCall: 1 too many; one ToolCall event each time the guard admitted an attempt"
        " (a refused call records none)"
    ]
    status = _reasons(shown(labkit.compare("status", "ToolBudget", "RepeatedCall")))
    assert len(status) == 1 and "RepeatedCall says" in status[0] and "ToolBudget would say" in status[0]
    assert _reasons(shown(labkit.compare("n", "3", 3))) == []  # a text of digits beside a number is that number
    assert shown(labkit.compare("n", "3", 3)).split()[3] == "'3'"  # and it shows quoted: '3' never looks like 3
    assert _reasons(shown(labkit.compare("n", "3.0", 3))) == [
        "think: n: the answer is a number (3), you gave a text ('3.0')"
    ]


def test_meaning_and_runs_are_checked():
    with pytest.raises(labkit.InputError, match="event kind"):
        labkit.compare("n", 1, 2, runs=labkit.run("complete"))
    with pytest.raises(labkit.InputError, match="RunOutcome"):
        labkit.compare("n", 1, 2, meaning="ToolCall", runs={"a": 3})
    with pytest.raises(labkit.InputError, match="short text"):
        labkit.compare("n", 1, 2, meaning=3)


def test_every_reason_speaks_french_in_a_french_notebook(monkeypatch):
    """The reasons go through the catalogue: in French, every wrong item still gets its one line."""
    monkeypatch.setenv("LABKIT_LANGUAGE", "fr")
    run = labkit.run("repeat")
    cases = [
        ("codes", [2, 2, 0, 7], [2, 0, 64], "exit code", None),
        ("ToolCall", 2.5, 1, "ToolCall", run),
        ("statut", "ToolBudget", "RepeatedCall", None, None),
        ("n", {"a": [1, 2], "b": "x "}, {"a": [2, 1], "b": "x"}, None, None),
    ]
    for what, said, was, meaning, runs in cases:
        lines = [line for line in shown(labkit.compare(what, said, was, meaning=meaning, runs=runs)).splitlines()]
        reasons = [line for line in lines if line.startswith("réfléchissez : ")]
        assert reasons and not any(line.startswith("think:") for line in lines), lines
        assert not any(word in line for line in reasons for word in (" too many", " means ", "would mean")), reasons


def test_a_finish_that_ran_and_failed_is_not_told_its_body_did_not_run():
    """Chapter 3's half-done run: finish_review(7) was admitted and its body ran and failed.

    The hint for a wrong "the review was finished" names success, which did not happen, never a body
    that did not run (it did).
    """
    script = [labkit.Call("read_ticket", {"input": 42}), labkit.Call("finish_review", {"input": 7}), "Done."]
    setup = labkit.prepare(labkit.Scenario("half done", "reads 42, finishes 7, says done", script))
    run = labkit.run(setup)
    assert setup.task.entries["finish_review"] == 1 and not setup.task.completed, "the body ran and failed"
    assert run.status == "Incomplete"
    (line,) = _reasons(shown(labkit.compare("finished", True, setup.task.completed, meaning="review recorded")))
    assert "True only when finish_review succeeded" in line and "a body that ran and failed records nothing" in line
    assert "body ran:" not in line


def test_a_wrong_call_outcome_is_explained_by_signatures_not_bodies():
    """Chapter 5's five direct calls: each wrong item's hint is about signatures, and names that item."""
    scope = labkit.ExecutionScope(labkit.Limits(tool_calls=10, deadline_s=3600), capabilities={"ticket.read"})

    def find(query: str, ids: list[int]) -> str:
        return "no match"

    tool = scope.tool("find", "ticket.read", find)
    calls = ['{"query": "a", "ids": [1, 2]}', '{"ids": [1.0, 2], "query": "a"}', '{"query": "a", "ids": [2]}']
    was = ["refused" if attempt.halted else "admitted" for attempt in invoke_each(tool, calls)]
    assert was == ["admitted", "refused", "refused"]
    said = ["admitted", "admitted", "refused"]
    reasons = _reasons(shown(labkit.compare("calls", said, was, meaning="signatures")))
    assert len(reasons) == 1 and "[2]" in reasons[0], reasons
    assert "canonical arguments" in reasons[0] and "body" not in reasons[0]


@settings(max_examples=20, deadline=None, derandomize=True, database=None)
@given(st.integers(0, 5), st.integers(0, 3), st.integers(1, 8))
def test_chapter_8_s_meanings_of_the_bodies_are_true_whatever_the_limits(tool_calls, repetitions, threads):
    """Chapter 8's two races (threads calling one guarded tool at once) under generated limits: the sentence
    each ``meaning=`` shows names the limit that capped the bodies there, counted from the review's state."""
    from labkit.teaching.direct import invoke_together
    from labkit.teaching.reasons import NAMED_MEANINGS

    def bodies(arguments):
        scope = labkit.ExecutionScope(
            labkit.Limits(tool_calls=tool_calls, repetitions=repetitions, deadline_s=3600),
            capabilities={"ticket.read", "review.finish"},
        )
        task = labkit.ReviewTask()
        read_ticket, _ = task.tools(scope)
        invoke_together(read_ticket, arguments)
        return task.entries["read_ticket"]

    same_id = bodies([{"input": 42}] * threads)
    own_ids = bodies([{"input": n} for n in range(1, threads + 1)])
    one = NAMED_MEANINGS["bodies, one signature"]
    assert "or the tool budget when it is the smaller" in one and same_id == min(threads, tool_calls, repetitions)
    own = NAMED_MEANINGS["bodies, own signatures"]
    assert "while repetitions is at least 1" in own
    assert own_ids == (min(threads, tool_calls) if repetitions >= 1 else 0)


@FAST
@given(st.data())
def test_two_swapped_answers_of_a_list_of_one_answer_each_are_two_mistakes_never_another_order(data):
    """Exit codes of five commands, one per command: a guess that swaps two different codes made two mistakes,
    each told at its place with what both codes mean; a list of what happened in order keeps the order line."""
    runs = scenario_runs()
    names = data.draw(st.lists(st.sampled_from(sorted(runs)), min_size=2, max_size=5))
    answer = [runs[name].exit_code for name in names]
    if len(set(answer)) < 2:
        answer.append(64 if answer[0] != 64 else 0)
    i, j = data.draw(
        st.sampled_from(
            [(a, b) for a in range(len(answer)) for b in range(a + 1, len(answer)) if answer[a] != answer[b]]
        )
    )
    guess = list(answer)
    guess[i], guess[j] = guess[j], guess[i]
    assert compare_problems("exit codes", guess, answer, meaning="exit code") == [], (guess, answer)
    reasons = _reasons(shown(labkit.compare("exit codes", guess, answer, meaning="exit code")))
    assert sorted(p for reason in reasons for p in _positions(reason, "exit codes")) == [i + 1, j + 1], reasons
    assert all(f"{answer[k]} means" in " ".join(reasons) for k in (i, j)), reasons
    in_order = _reasons(shown(labkit.compare("outcomes", [str(c) for c in guess], [str(c) for c in answer])))
    assert len(in_order) == 1 and "another order" in in_order[0], in_order
