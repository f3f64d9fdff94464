"""Every verdict the workbook gives is true: generated runs, checked against oracles (issue 17, item 3).

Hypothesis writes runs (:mod:`verdict_kit`: scripts of calls, batches, text,
hangs and provider failures; repeated and changed arguments, unknown tools,
arguments that do not bind, failing bodies; limits from 0 up; capability sets;
both agents, plain or streaming) and guesses (right, wrong or left as ``...``).
Each verdict of :func:`labkit.check`, :func:`labkit.compare` and the
prediction widget is then held against oracles that never call
``labkit.teaching.explain``:

* right exactly when every guess equals the run; no hint after a right guess,
  a hint after every wrong one; an unguessed value never shown;
* every rule a hint names refused or would have (:func:`verdict_kit.oracle`),
  and the deciding rule is named after a wrong status guess;
* every number, tool name and claim a hint makes is true of the run, counted
  from its tools' own log and its transcript (:func:`verdict_kit.facts`);
* a hint quotes the guess it answers, and names no status that did not happen
  except the one guessed;
* per-label checks: each label's verdict and hint are those of its own run alone.

The fast tests run a few dozen examples each, derandomized (the same examples
every run); the ``slow`` ones run many more.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import labkit
import verdict_kit as kit
from labkit import Call, Hang, Limits, RunOutcome
from labkit.loops.scenarios import ALL_CAPABILITIES

FAST = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    print_blob=True,
)
SLOW = settings(FAST, max_examples=400)

GUESS_STATUS = st.one_of(st.sampled_from(kit.STATUSES), st.just("actual"), st.just(...))
GUESS_COUNT = st.one_of(st.integers(-1, 2), st.just(...))  # an offset from the actual count, or no guess


def _guesses(outcome: RunOutcome, status: object, offset: object) -> tuple[object, object]:
    said_status = outcome.status.value if status == "actual" else status
    said_count = ... if offset is ... else max(0, outcome.count("ToolCall") + offset)  # type: ignore[operator]
    return said_status, said_count


# -- the claims a hint makes, each held against the facts ---------------------------------------------

_COUNT_LINE = re.compile(
    r"^you counted (\d+) ToolCall events, there were (\d+)(?: \(([a-z_, ]+)\))?: one each time the guard"
    r" admitted an attempt(?: \((.+)\))?$"
)
_REFUSED_COUNT_LINE = re.compile(
    r"^you counted (\d+) ToolCall events: the attempt (.+) refused records none \(it was refused before its body\)$"
)


def _note_problems(note: str, facts: kit.Facts) -> list[str]:
    """One note of a count line (``"2 failed in their bodies and still counted"``) against the facts."""
    claims = {
        r"^(\d+) failed in (?:its body|their bodies) and still counted$": facts.failed,
        r"^(\d+) answered NotFound, a result, and counted$": facts.not_found,
        r"^(\d+) named no tool of the agent and recorded none$": facts.unknown,
        r"^(\d+) had arguments that did not bind and recorded none$": facts.unbound,
    }
    for pattern, true in claims.items():
        match = re.match(pattern, note)
        if match:
            return [] if int(match.group(1)) == true else [f"{note!r}: the run has {true}"]
    if note == "a reply cut at the output-token cap, or whose call ids repeat, runs none of its calls":
        return [] if facts.not_run_reply else [f"{note!r}: every reply's calls were run"]
    if note == "a refused call records none":
        return [] if facts.refused else [f"{note!r}: no call was refused"]
    return [f"a note no oracle knows: {note!r}"]


def _count_problems(line: str, said: object, outcome: RunOutcome, facts: kit.Facts) -> list[str]:
    problems: list[str] = []
    match = _COUNT_LINE.match(line)
    if match:
        counted, there, names, notes = match.groups()
        if int(counted) != said:
            problems.append(f"quotes {counted}, the guess was {said}")
        if int(there) != facts.count:
            problems.append(f"says there were {there}, the bodies ran {facts.count} times")
        if names is not None and names.split(", ") != [tool for tool, _ in facts.admitted]:
            problems.append(f"names ({names}), the admitted calls were {facts.admitted}")
        for note in notes.split("; ") if notes else []:
            problems.extend(_note_problems(note, facts))
        return problems
    match = _REFUSED_COUNT_LINE.match(line)
    if match:
        counted, rule = match.groups()
        if int(counted) != said:
            problems.append(f"quotes {counted}, the guess was {said}")
        if outcome.status.value not in kit.GUARD_RULES or kit.RULE_WORDS[outcome.status.value] != rule:
            problems.append(f"says {rule} refused an attempt; the run ended {outcome.status.value}")
        return problems
    return [f"a count line no oracle knows: {line!r}"]


def _why_not_problems(line: str, outcome: RunOutcome, facts: kit.Facts, rules: set[str]) -> list[str]:
    """A "why not the guess" line against the facts; ``[]`` for lines that are not such claims."""
    limits = outcome.limits
    models = outcome.count("ModelCall")
    numeric = [
        (r"^only (\d+) of (\d+) tool attempts were used", (facts.count, limits.tool_calls)),
        (r"^(\d+) of (\d+) tool attempts were used and no attempt came after them", (facts.count, limits.tool_calls)),
        (r"^only (\d+) of (\d+) model calls were made", (models, limits.model_calls)),
        (r"^(\d+) of (\d+) model calls were made and no call came after them", (models, limits.model_calls)),
        (
            r"^no call came again with a signature already admitted (\d+) time\(s\): the most attempts admitted"
            r" for one signature was (\d+)",
            (limits.repetitions, facts.most_repeated),
        ),
    ]
    problems = []
    for pattern, true in numeric:
        match = re.match(pattern, line)
        if match and tuple(int(g) for g in match.groups()) != true:
            problems.append(f"{line!r}: the run has {true}")
    if line.startswith("no call came again") and facts.repeat_came:
        problems.append(f"{line!r}: a call did come again with a signature at its limit")
    if "no attempt came after them" in line and "ToolBudget" in rules:
        problems.append(f"{line!r}: the tool budget refused, or would have")
    if "no call came after them" in line and "ModelBudget" in rules:
        problems.append(f"{line!r}: the model-call budget refused, or would have")
    if line.startswith("every tool asked for had its capability granted") and facts.ungranted_asked:
        problems.append(f"{line!r}: a call for a tool not granted reached the guard")
    if line.startswith("every model call got an answer") and not facts.answered:
        problems.append(f"{line!r}: a model call got no answer")
    waiting = re.match(r"^no model call failed to connect: model call (\d+) was still waiting", line)
    if waiting and (facts.answered or int(waiting.group(1)) != models):
        problems.append(f"{line!r}: {models} model calls, {'all' if facts.answered else 'not all'} answered")
    stopped = ("a run the host stopped", "Incomplete is a loop that ended by itself")
    if line.startswith(stopped) and not outcome.status.is_stop:
        problems.append(f"{line!r}: the run was not stopped ({outcome.status.value})")
    return problems


def _cause_problems(cause: str, outcome: RunOutcome, facts: kit.Facts, plan: kit.Plan) -> list[str]:
    """The deciding cause ("the tool budget decided: ...", "no rule refused anything: ...") against the run."""
    status = outcome.status.value
    if cause.startswith("no rule refused anything"):
        if status in kit.RULES:
            return [f"{cause!r}: {status} refused"]
        match = re.match(r"no rule refused anything: model call (\d+) could not reach", cause)
        if match and (status != "ProviderUnavailable" or int(match.group(1)) != outcome.count("ModelCall")):
            return [f"{cause!r}: the run ended {status} after {outcome.count('ModelCall')} model calls"]
        if "host condition holds" in cause and status != "Completed":
            return [f"{cause!r}: the run ended {status}"]
        if "is false" in cause and status != "Incomplete":
            return [f"{cause!r}: the run ended {status}"]
        return []
    if status not in kit.RULES or not cause.startswith(f"{kit.RULE_WORDS[status]} decided"):
        return [f"{cause!r}: the run ended {status}"]
    limits = outcome.limits
    numbers = {
        "ToolBudget": (r"(\d+) of (\d+) attempts already admitted", (facts.count, limits.tool_calls)),
        "RepeatedCall": (r"already admitted (\d+) of (\d+)", (limits.repetitions, limits.repetitions)),
        "ModelBudget": (r"(\d+) of (\d+) model calls already made", (outcome.count("ModelCall"), limits.model_calls)),
    }
    if status in numbers:
        pattern, true = numbers[status]
        match = re.search(pattern, cause)
        if match is None or tuple(int(g) for g in match.groups()) != true:
            return [f"{cause!r}: the run has {true}"]
    if status == "PermissionDenied":
        match = re.search(r"needs ([a-z.]+), not granted", cause)
        if match is None or match.group(1) in plan.grant or match.group(1) not in ALL_CAPABILITIES:
            return [f"{cause!r}: granted {sorted(plan.grant)}"]
    return []


def verdict_problems(
    plan: kit.Plan, outcome: RunOutcome, task: kit.LoggedTask, said_status: object, said_count: object
) -> list[str]:
    """Everything wrong with ``labkit.check``'s verdict on this run and these guesses (``[]``: all true)."""
    facts = kit.facts(outcome, task, plan)
    if facts.count != outcome.count("ToolCall"):  # the oracle itself: one ToolCall event per body run
        return [f"the bodies ran {facts.count} times, {outcome.count('ToolCall')} ToolCall events"]
    result = labkit.check(outcome, status=said_status, tool_calls=said_count)
    status, count = outcome.status.value, outcome.count("ToolCall")
    guessed = said_status is not ... and said_count is not ...
    right = guessed and said_status == status and said_count == count
    wrong_status = said_status is not ... and said_status != status
    wrong_count = said_count is not ... and said_count != count
    problems = []
    if result.right != right:
        problems.append(f"check says right={result.right}, the guesses are {'right' if right else 'not right'}")
    if not (wrong_status or wrong_count):
        if result.feedback:
            problems.append(f"no wrong guess, yet a hint: {result.feedback}")
        return problems
    if not result.feedback:
        return [*problems, "a wrong guess got no hint"]
    lines = [line.removeprefix("think: ") for line in result.feedback]
    text = " ".join(lines)
    printed = str(result)
    if said_status is ... and re.search(rf"\b{status}\b", printed):
        problems.append(f"the status was not guessed, yet {status} is printed: {printed!r}")
    if named_statuses := kit.named_statuses(text) - {status, said_status}:
        problems.append(f"names {named_statuses}, which did not happen and were not guessed: {text!r}")
    rules = kit.oracle(plan.scenario(), plan.agent, outcome, plan.stream)
    if extra := kit.named_rules(text) - rules:
        problems.append(f"names {extra}, which neither refused nor would have (oracle: {rules}): {text!r}")
    if wrong_status:
        first = lines[0]
        if not first.startswith(f"you said {said_status}, but "):
            problems.append(f"the first line does not answer the guess {said_status}: {first!r}")
        else:
            problems.extend(_cause_problems(first.removeprefix(f"you said {said_status}, but "), outcome, facts, plan))
        if status in kit.RULES and status not in kit.named_rules(text):
            problems.append(f"the deciding rule ({status}) is not named: {text!r}")
        for line in lines[1:]:
            if not line.startswith("you counted"):
                problems.extend(_why_not_problems(line, outcome, facts, rules))
    if wrong_count:
        counted = [line for line in lines if line.startswith("you counted")]
        if len(counted) != 1:
            problems.append(f"one line answers the count guess, not {len(counted)}: {lines}")
        for line in counted:
            problems.extend(_count_problems(line, said_count, outcome, facts))
    return problems


def _checked(plan: kit.Plan, status: object, offset: object) -> None:
    ran = kit.run_plan(plan)
    if ran is None:
        return  # the script ran out: no outcome to check
    outcome, task = ran
    said_status, said_count = _guesses(outcome, status, offset)
    problems = verdict_problems(plan, outcome, task, said_status, said_count)
    assert not problems, f"{plan!r}, guessed {said_status!r} / {said_count!r}:\n" + "\n".join(problems)


@FAST
@given(kit.plans(), GUESS_STATUS, GUESS_COUNT)
def test_every_verdict_of_check_is_true_of_the_run(plan, status, offset):
    _checked(plan, status, offset)


@pytest.mark.slow
@SLOW
@given(kit.plans(), GUESS_STATUS, GUESS_COUNT)
def test_every_verdict_of_check_is_true_of_the_run_many_more(plan, status, offset):
    _checked(plan, status, offset)


@FAST
@given(kit.plans())
def test_an_unguessed_check_never_shows_the_answer(plan):
    ran = kit.run_plan(plan)
    if ran is None:
        return
    outcome, _ = ran
    result = labkit.check(outcome, status=..., tool_calls=...)
    printed = str(result)
    assert not result.right and result.feedback == ()
    assert outcome.status.value not in printed and not re.search(r"\d", printed), printed
    labelled = labkit.check({"a": outcome, "b": outcome}, status=..., tool_calls={"a": ...})
    assert not labelled.right and outcome.status.value not in str(labelled) and not re.search(r"\d", str(labelled))


# -- the minimal examples hypothesis found (each failed before its fix) ---------------------------------


def _problems_of(plan: kit.Plan, status: object, count: object) -> list[str]:
    ran = kit.run_plan(plan)
    assert ran is not None
    outcome, task = ran
    return verdict_problems(plan, outcome, task, status, count)


def test_arguments_that_do_not_bind_are_not_a_failed_body():
    """Found: ``'1 failed in its body and still counted': the run has 0`` (a binding failure reaches no guard)."""
    plan = kit.Plan(
        (Call("read_ticket", '{"input": "x"}'),),
        Limits(model_calls=1, tool_calls=0, repetitions=0),
        ALL_CAPABILITIES,
        "simple",
    )
    assert _problems_of(plan, "ModelBudget", 1) == []
    feedback = labkit.check(kit.run_plan(plan)[0], status="ModelBudget", tool_calls=1).feedback  # type: ignore[index]
    assert any("1 had arguments that did not bind and recorded none" in line for line in feedback), feedback
    assert not any("failed in" in line for line in feedback), feedback


def test_a_call_for_no_tool_is_not_a_failed_body():
    plan = kit.Plan((Call("audit_log", {"input": 42}), "Review finished."), Limits(), ALL_CAPABILITIES, "harness")
    assert _problems_of(plan, "Incomplete", 1) == []
    feedback = labkit.check(kit.run_plan(plan)[0], status="Incomplete", tool_calls=1).feedback  # type: ignore[index]
    assert any("1 named no tool of the agent and recorded none" in line for line in feedback), feedback


def test_a_model_call_cut_short_by_the_deadline_got_no_answer():
    """Found: after ``Hang()`` and a ProviderUnavailable guess, the hint said every model call got an answer."""
    plan = kit.Plan(
        (Hang(),),
        Limits(model_calls=1, tool_calls=0, repetitions=0, deadline_s=kit.HANG_DEADLINE_S),
        ALL_CAPABILITIES,
        "simple",
    )
    assert _problems_of(plan, "ProviderUnavailable", ...) == []
