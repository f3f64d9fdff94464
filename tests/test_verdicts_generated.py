"""Every verdict the workbook gives is true: generated runs, checked against oracles (issue 17, item 3).

Hypothesis writes runs (:mod:`verdict_kit`: scripts of calls, batches, text,
hangs and provider failures; repeated and changed arguments, unknown tools,
arguments that do not bind, failing bodies, call ids reused; limits from 0 up;
capability sets; both agents, plain or streaming, the calls of a reply one
after another or at once) and guesses (right, wrong or left as ``...``; events
too). Each verdict of :func:`labkit.check` (one run or per label),
:func:`labkit.compare`, the prediction widget, the timeline chart and the bingo
checker is then held against oracles that never call ``labkit.teaching.explain``:

* right exactly when every guess equals the run; no hint after a right guess,
  a hint after every wrong one; a value not guessed is never shown, and a count
  hint names no rule while the status is not guessed;
* every rule a hint names refused or would have (:func:`verdict_kit.oracle`),
  and the deciding rule is named after a wrong status guess;
* every number, tool name and claim a hint makes (the deciding attempt and its
  counters, each "also" refusal, the count notes, the "why not" lines) is true
  of the run, counted from its tools' own log, its transcript and the oracle's
  runs (:func:`verdict_kit.facts`, :func:`verdict_kit.oracle_runs`);
* a hint quotes the guess it answers, and names no status that did not happen
  except the one guessed;
* per-label checks: each label's verdict and hint are those of its own run alone.

The fast tests run 40 examples each, derandomized (the same examples every
run); the ``slow`` ones run 400. The minimal example of each fault found is
kept at the end, as a test of its own.
"""

from __future__ import annotations

import asyncio
import functools
import html
import re

import pytest
import verdict_kit as kit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import labkit
from labkit import Call, Fail, Hang, Limits, RunOutcome
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


def _joined(printed: str) -> list[str]:
    """The printed lines, a line too wide for the output area put back on one line ("it was" under "you said")."""
    lines: list[str] = []
    for line in printed.splitlines():
        if lines and line.startswith(" ") and "it was" in line and "it was" not in lines[-1]:
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    return lines


GUESS_STATUS = st.one_of(st.sampled_from(kit.STATUSES), st.just("actual"), st.just(...))
GUESS_COUNT = st.one_of(st.integers(-1, 2), st.just(...))  # an offset from the actual count, or no guess


def _guesses(outcome: RunOutcome, status: object, offset: object) -> tuple[object, object]:
    said_status = outcome.status.value if status == "actual" else status
    said_count = ... if offset is ... else max(0, outcome.count("ToolCall") + offset)  # type: ignore[operator]
    return said_status, said_count


# -- the claims a hint makes, each held against the facts ---------------------------------------------

_COUNT_LINE = re.compile(
    r"^you counted (\d+) ToolCall events?, there (?:was (?=1\b)|were (?!1\b))(\d+)(?: \(([a-z_, ]+)\))?: one each time"
    r" the guard"
    r" admitted an attempt(?: \((.+)\))?$"
)  # "there was 1", "there were 0", "there were 2": the verb agrees with the number
_REFUSED_COUNT_LINE = re.compile(
    r"^you counted (\d+) ToolCall events?: (?:the attempt (.+) refused|the refused attempt) records none"
    r" \(it was refused before its body\)$"
)


def _note_problems(note: str, facts: kit.Facts) -> list[str]:
    """One note of a count line (``"2 failed in their bodies and still counted"``) against the facts."""
    claims = {
        r"^(\d+) calls? failed in (?:its body|their bodies) and still counted$": facts.failed,
        r"^(\d+) calls? answered NotFound, a result, and counted$": facts.not_found,
        r"^(\d+) call asked for .+, a tool the host does not have, and recorded no event$": facts.unknown,
        r"^(\d+) calls asked for tools the host does not have, .+, and recorded no event$": facts.unknown,
        r"^(\d+) calls? had arguments that did not bind and recorded none$": facts.unbound,
    }
    named = re.match(
        r"^\d+ calls? asked for (?:(.+), a tool the host does not have|tools the host does not have, (.+)),", note
    )
    if named and (named.group(1) or named.group(2)).split(", ") != facts.unknown_names:  # named as the model named them
        return [f"{note!r}: the unknown tools asked for were {facts.unknown_names}"]
    for pattern, true in claims.items():
        match = re.match(pattern, note)
        if match:
            return [] if int(match.group(1)) == true else [f"{note!r}: the run has {true}"]
    if note == "a reply cut at the output-token cap, or whose call ids repeat, runs none of its calls":
        return [] if facts.not_run_reply else [f"{note!r}: every reply's calls were run"]
    after = re.match(
        r"^(\d+) calls? came after the run had stopped: no rule judged (?:it|them) and (?:it|they) recorded none$", note
    )
    if after:
        return [] if int(after.group(1)) == facts.after_halt else [f"{note!r}: {facts.after_halt} came after the stop"]
    if note == "a refused call records none":
        return [] if facts.refused > facts.after_halt else [f"{note!r}: no call was refused by a rule"]
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
        if outcome.status.value not in kit.GUARD_RULES or rule not in (None, kit.RULE_WORDS[outcome.status.value]):
            problems.append(f"says {rule or 'the guard'} refused an attempt; the run ended {outcome.status.value}")
        return problems
    return [f"a count line no oracle knows: {line!r}"]


def _why_not_problems(line: str, outcome: RunOutcome, facts: kit.Facts, rules: set[str]) -> list[str]:
    """A "why not the guess" line against the facts; ``[]`` for lines that are not such claims."""
    limits = outcome.limits
    models = outcome.count("ModelCall")
    numeric = [
        (r"^only (\d+) of (\d+) tool attempts (?:was|were) used", (facts.count, limits.tool_calls)),
        (
            r"^(\d+) of (\d+) tool attempts (?:was|were) used and no attempt came after (?:it|them)",
            (facts.count, limits.tool_calls),
        ),
        (r"^only (\d+) of (\d+) model calls (?:was|were) made", (models, limits.model_calls)),
        (
            r"^(\d+) of (\d+) model calls (?:was|were) made and no call came after (?:it|them)",
            (models, limits.model_calls),
        ),
        (r"^each signature was admitted at most (\d+) times?, the limit,", (facts.most_repeated,)),
        (r"^each signature was admitted at most (\d+) times?, the limit,", (limits.repetitions,)),
        (
            r"^no signature reached the limit of (\d+) admitted attempts?: the most admitted for one was (\d+)",
            (limits.repetitions, facts.most_repeated),
        ),
        (r"^no tool attempt was admitted: a signature is refused only after (\d+)", (limits.repetitions,)),
    ]
    problems = []
    for pattern, true in numeric:
        match = re.match(pattern, line)
        if match and tuple(int(g) for g in match.groups()) != true:
            problems.append(f"{line!r}: the run has {true}")
    repetition = (
        "each signature was admitted",
        "no signature reached",
        "no tool attempt was admitted",
        "repetitions=0",
    )
    if line.startswith(repetition) and facts.repeat_came:
        problems.append(f"{line!r}: a call did come again with a signature at its limit")
    if line.startswith("no signature reached") and not 0 < facts.most_repeated < limits.repetitions:
        problems.append(f"{line!r}: the most admitted for one signature was {facts.most_repeated}")
    if line.startswith("no tool attempt was admitted") and facts.count:
        problems.append(f"{line!r}: {facts.count} attempts were admitted")
    if line.startswith("repetitions=0") and limits.repetitions:
        problems.append(f"{line!r}: repetitions={limits.repetitions}")
    if "no attempt came after them" in line and "ToolBudget" in rules:
        problems.append(f"{line!r}: the tool budget refused, or would have")
    if "no call came after them" in line and "ModelBudget" in rules:
        problems.append(f"{line!r}: the model-call budget refused, or would have")
    if line.startswith("every tool asked for had its capability granted") and facts.ungranted_requested:
        problems.append(f"{line!r}: the model asked for {facts.ungranted_requested}, not granted")
    asked = re.match(r"^(.+) (?:was|were) asked for without (?:its|their) capability granted, but no such call", line)
    if asked and (asked.group(1).split(", ") != facts.ungranted_requested or facts.ungranted_asked):
        problems.append(
            f"{line!r}: asked for {facts.ungranted_requested}; one reached the guard: {facts.ungranted_asked}"
        )
    if line.startswith("every model call got an answer") and not facts.answered:
        problems.append(f"{line!r}: a model call got no answer")
    waiting = re.match(r"^no model call failed to connect: model call (\d+) was still waiting", line)
    if waiting and (facts.answered or int(waiting.group(1)) != models):
        problems.append(f"{line!r}: {models} model calls, {'all' if facts.answered else 'not all'} answered")
    stopped = ("a run the host stopped", "Incomplete is a loop that ended by itself")
    if line.startswith(stopped) and not outcome.status.is_stop:
        problems.append(f"{line!r}: the run was not stopped ({outcome.status.value})")
    return problems


_NO_RULE = "no rule refused anything: "


def _cause_problems(cause: str, outcome: RunOutcome, plan: kit.Plan, said: str | None = None) -> list[str]:
    """The deciding cause ("the tool budget decided: ...", "no rule refused anything: ...") against the run;
    "no rule refused anything" opens a cause exactly when it answers a guessed stop by a rule (or no guess)."""
    status = outcome.status.value
    if not any(cause.startswith(f"{words} decided: ") for words in kit.RULE_WORDS.values()):
        if status in kit.RULES:
            return [f"{cause!r}: {status} refused"]
        if cause.startswith(_NO_RULE) != (said is None or said in kit.RULES):
            return [f"{cause!r}: 'no rule refused anything' answers a guessed stop by a rule; the guess was {said}"]
        match = re.match(
            r"model call (\d+) (could not reach|was cancelled by the provider)", cause.removeprefix(_NO_RULE)
        )
        if match and (status != "ProviderUnavailable" or int(match.group(1)) != outcome.count("ModelCall")):
            return [f"{cause!r}: the run ended {status} after {outcome.count('ModelCall')} model calls"]
        if match:
            step = plan.step(int(match.group(1)))
            error = step.error if isinstance(step, labkit.Fail) else None
            unreachable = isinstance(error, ConnectionError)
            if unreachable != (match.group(2) == "could not reach"):
                return [f"{cause!r}: model call {match.group(1)} was {step!r}"]
        if "host condition holds" in cause and status != "Completed":
            return [f"{cause!r}: the run ended {status}"]
        if "is false" in cause and status != "Incomplete":
            return [f"{cause!r}: the run ended {status}"]
        return []
    if status not in kit.RULES:
        return [f"{cause!r}: the run ended {status}"]
    attempt, reason = kit.refusal_numbers(outcome, status)
    said = reason if status == "DeadlineExceeded" else f"it refused {attempt}, {reason}"
    expected = f"{kit.RULE_WORDS[status]} decided: {said}"
    if not cause.startswith(expected):
        return [f"{cause!r}: the run says {expected!r}"]
    if status == "PermissionDenied" and kit.CAPABILITY[attempt.split("(")[0]] in plan.grant:
        return [f"{cause!r}: granted {sorted(plan.grant)}"]
    return []


_WORDS_RULE = {words: rule for rule, words in kit.RULE_WORDS.items()}
_SAME_CALL = re.compile(
    r"^(the [a-z -]+?) would also have refused that call \((.+)\), but the guard asks (the [a-z -]+?) first"
)
_LATER = re.compile(
    r"^without the [a-z -]+?(?:(?:, | and )the [a-z -]+?)*, (the [a-z -]+?) would have refused (.+) later \((.+)\)$"
)
_ENDED = re.compile(
    r"^without the [a-z -]+?(?:(?:, | and )the [a-z -]+?)*, the deadline would have ended the run \((.+)\)$"
)
_THEN = (
    (re.compile(r"^(\d+) of (\S+) attempts already admitted$"), "once {0} of {1} attempts had been admitted"),
    (
        re.compile(r"^same signature, already admitted (\d+) of (\S+)$"),
        "once that signature had been admitted {0} of {1} times",
    ),
    (re.compile(r"^(repetitions=0 admits no attempt of any signature)$"), "as {0}"),
    (re.compile(r"^(\d+) of (\S+) model calls already made$"), "once {0} of {1} model calls had been made"),
    (re.compile(r"^(\S+) s passed while (.+) was waiting$"), "after {0} s, while {1} would still have been waiting"),
    (re.compile(r"^needs (.+), not granted$"), "it needs {0}, not granted"),
)


def _then(reason: str) -> str:
    """A measured reason (``"4 of 4 attempts already admitted"``) as a hint says it of a run that did not happen."""
    for pattern, template in _THEN:
        match = pattern.match(reason)
        if match:
            return template.format(*match.groups())
    return reason


_ORDER = ("PermissionDenied", "ToolBudget", "RepeatedCall")


def _position(run: RunOutcome, rule: str) -> tuple[int, int]:
    """Where ``rule`` refused in ``run``: (reply, place in it) for a guard rule; (model call, -1) for the
    model-call budget (before any call of the reply it refused)."""
    if rule == "ModelBudget":
        return run.count("ModelCall") + 1, -1
    found = kit.first_refused(run, rule)
    return found[0] if found is not None else (run.count("ModelCall"), 99)


def _also_problems(line: str, outcome: RunOutcome, runs: dict[str, list[RunOutcome]]) -> list[str] | None:
    """An "also" line against the runs that measured its rule; ``None`` when ``line`` is no "also" line."""
    decided = outcome.status.value
    match = _SAME_CALL.match(line)
    if match:
        rule, first = _WORDS_RULE.get(match.group(1)), _WORDS_RULE.get(match.group(3))
        if rule not in runs or first != decided or rule not in _ORDER or decided not in _ORDER:
            return [f"{line!r}: the run ended {decided}; measured {sorted(runs)}"]
        if _ORDER.index(rule) <= _ORDER.index(decided):
            return [f"{line!r}: the guard asks {rule} before {decided}"]
        theirs = kit.first_refused(outcome, decided)
        for run in runs[rule]:
            mine = kit.first_refused(run, rule)
            if mine is not None and theirs is not None and mine[0] == theirs[0]:
                reason = kit.refusal_numbers(run, rule)[1]
                return [] if match.group(2) == reason else [f"{line!r}: measured ({reason})"]
        return [f"{line!r}: {rule} refused no call where the run stopped ({theirs})"]
    match = _LATER.match(line)
    if match:
        rule = _WORDS_RULE.get(match.group(1))
        if rule not in runs:
            return [f"{line!r}: measured {sorted(runs)}"]
        measured = {
            (attempt, _then(reason)): run
            for run in runs[rule]
            if run is not outcome
            for attempt, reason in [kit.refusal_numbers(run, rule)]
        }
        run = measured.get((match.group(2), match.group(3)))
        if run is None:
            return [f"{line!r}: measured {list(measured)}"]
        if _position(run, rule) <= _position(outcome, decided):
            return [f"{line!r}: not later than the stop ({_position(run, rule)} <= {_position(outcome, decided)})"]
        return []
    match = _ENDED.match(line)
    if match:
        if "DeadlineExceeded" not in runs:
            return [f"{line!r}: the deadline was not measured"]
        reason = _then(kit.refusal_numbers(runs["DeadlineExceeded"][0], "DeadlineExceeded")[1])
        return [] if match.group(1) == reason else [f"{line!r}: measured ({reason})"]
    return None


def _events_guess(outcome: RunOutcome, kind: object) -> object:
    """An events guess drawn as a kind: ``None`` (not asked), ``...``, the run's own, or it without Middleware."""
    if kind is None or kind is ...:
        return kind
    events = [(e.kind.value, e.name, e.count) for e in outcome.events]
    return events if kind == "actual" else [e for e in events if e[0] != "Middleware"]


GUESS_EVENTS = st.sampled_from([None, None, None, ..., "actual", "no middleware"])

_MIDDLEWARE_LINE = "passes the middleware first"


def _middleware_problems(line: str, outcome: RunOutcome, facts: kit.Facts) -> list[str]:
    """The Middleware line after an events guess that left it out, against the order of the events."""
    seen: dict[str, int] = {}
    guarded: dict[str, int] = {}
    for event in outcome.events:
        kind = event.kind.value
        if kind == "Middleware":
            seen[event.name] = seen.get(event.name, 0) + 1
        elif kind == "ToolCall" or kind in kit.GUARD_RULES:
            guarded[event.name] = guarded.get(event.name, 0) + 1
            if guarded[event.name] > seen.get(event.name, 0):
                return [f"{line!r}: {kind} {event.name} came with no Middleware event before it"]
    if line.startswith("every tool call the model asks for") and (facts.unknown or facts.not_run_reply):
        return [f"{line!r}: {facts.unknown} calls named no tool and reached no middleware"]
    return []


def verdict_problems(
    plan: kit.Plan,
    outcome: RunOutcome,
    task: kit.LoggedTask,
    said_status: object,
    said_count: object,
    said_events: object = None,
    runs: dict[str, list[RunOutcome]] | None = None,
) -> list[str]:
    """Everything wrong with ``labkit.check``'s verdict on this run and these guesses (``[]``: all true).

    ``runs`` is :func:`verdict_kit.oracle_runs` of this run when already measured (measured here otherwise).
    """
    facts = kit.facts(outcome, task, plan)
    if facts.count != outcome.count("ToolCall"):  # the oracle itself: one ToolCall event per body run
        return [f"the bodies ran {facts.count} times, {outcome.count('ToolCall')} ToolCall events"]
    asked = {} if said_events is None else {"events": said_events}  # None here: events not asked for
    result = labkit.check(outcome, status=said_status, tool_calls=said_count, **asked)
    status, count = outcome.status.value, outcome.count("ToolCall")
    actual_events = [(e.kind.value, e.name, e.count) for e in outcome.events]
    guessed = said_status is not ... and said_count is not ... and said_events is not ...
    events_right = said_events is None or said_events == actual_events
    right = guessed and said_status == status and said_count == count and events_right
    wrong_status = said_status is not ... and said_status != status
    wrong_count = said_count is not ... and said_count != count
    problems = []
    if result.right != right:
        problems.append(f"check says right={result.right}, the guesses are {'right' if right else 'not right'}")
    printed = str(result)
    if said_events is ... and any(f"{k} {n} {c}" in printed for k, n, c in actual_events):
        problems.append(f"the events were not guessed, yet they are printed: {printed!r}")
    lines = [line.removeprefix("think: ") for line in result.feedback]
    middleware = [line for line in lines if _MIDDLEWARE_LINE in line]
    for line in middleware:
        problems.extend(_middleware_problems(line, outcome, facts))
    left_out = isinstance(said_events, list) and {"Middleware"} & {k for k, _, _ in actual_events} - {
        k for k, _, _ in said_events
    }
    if bool(middleware) != bool(left_out):
        problems.append(f"the Middleware line is {'given' if middleware else 'missing'}: {lines}")
    lines = [line for line in lines if _MIDDLEWARE_LINE not in line]
    if not (wrong_status or wrong_count):
        if lines:
            problems.append(f"no wrong guess, yet a hint: {lines}")
        return problems
    if not lines:
        return [*problems, "a wrong guess got no hint"]
    text = " ".join(lines)
    if said_status is ... and said_events is None and re.search(rf"\b{status}\b", printed):
        problems.append(f"the status was not guessed, yet {status} is printed: {printed!r}")
    if said_status is ... and kit.named_rules(text):
        problems.append(f"the status was not guessed, yet the hint names {kit.named_rules(text)}: {text!r}")
    if named_statuses := kit.named_statuses(text) - {status, said_status}:
        problems.append(f"names {named_statuses}, which did not happen and were not guessed: {text!r}")
    if runs is None:
        runs = kit.oracle_runs(plan.scenario(), plan.agent, outcome, plan.stream, plan.concurrent)
    rules = set(runs)
    if extra := kit.named_rules(text) - rules:
        problems.append(f"names {extra}, which neither refused nor would have (oracle: {rules}): {text!r}")
    if wrong_status:
        first = lines[0]
        if not first.startswith(f"you said {said_status}, but "):
            problems.append(f"the first line does not answer the guess {said_status}: {first!r}")
        else:
            cause = first.removeprefix(f"you said {said_status}, but ")
            problems.extend(_cause_problems(cause, outcome, plan, said_status))
        if status in kit.RULES and status not in kit.named_rules(text):
            problems.append(f"the deciding rule ({status}) is not named: {text!r}")
        for line in lines[1:]:
            if line.startswith("you counted"):
                continue
            also = _also_problems(line, outcome, runs)
            problems.extend(_why_not_problems(line, outcome, facts, rules) if also is None else also)
    if wrong_count:
        counted = [line for line in lines if line.startswith("you counted")]
        if len(counted) != 1:
            problems.append(f"one line answers the count guess, not {len(counted)}: {lines}")
        for line in counted:
            problems.extend(_count_problems(line, said_count, outcome, facts))
    return problems


def _checked(plan: kit.Plan, status: object, offset: object, events: object = None) -> None:
    ran = kit.run_plan(plan)
    if ran is None:
        return  # the script ran out: no outcome to check
    outcome, task = ran
    said_status, said_count = _guesses(outcome, status, offset)
    said_events = _events_guess(outcome, events)
    problems = verdict_problems(plan, outcome, task, said_status, said_count, said_events)
    assert not problems, f"{plan!r}, guessed {said_status!r} / {said_count!r} / events {events!r}:\n" + "\n".join(
        problems
    )


@FAST
@given(kit.plans(), GUESS_STATUS, GUESS_COUNT, GUESS_EVENTS)
def test_every_verdict_of_check_is_true_of_the_run(plan, status, offset, events):
    _checked(plan, status, offset, events)


@pytest.mark.slow
@SLOW
@given(kit.plans(), GUESS_STATUS, GUESS_COUNT, GUESS_EVENTS)
def test_every_verdict_of_check_is_true_of_the_run_many_more(plan, status, offset, events):
    _checked(plan, status, offset, events)


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


# -- the fixed subjects: every scenario and every mystery, both agents, every wrong status ----------------


def _subject_plan(kind: str, key: str, agent: str) -> kit.Plan:
    """A seed scenario or a mystery as a plan: its script, limits and grants, with the logged review tools."""
    source = labkit.SCENARIOS[key] if kind == "scenario" else labkit.mystery(key).scenario()
    script = source.script
    limits = source.limits
    hangs = not callable(script) and any(isinstance(step, Hang) for step in script)
    if hangs and limits.deadline_s > kit.HANG_DEADLINE_S:
        limits = limits.with_(deadline_s=kit.HANG_DEADLINE_S)  # the deadline scenario, made fast
    if callable(script):
        return kit.Plan((), limits, source.capabilities, agent, function=script)
    return kit.Plan(tuple(script), limits, source.capabilities, agent)


SUBJECTS = [
    *(("scenario", name, agent) for name in labkit.SCENARIOS for agent in ("simple", "harness")),
    *(("mystery", key, agent) for key in labkit.mysteries() for agent in ("simple", "harness")),
]


@functools.cache
def _subject(kind: str, key: str, agent: str):
    plan = _subject_plan(kind, key, agent)
    outcome, task = kit.run_plan(plan)  # type: ignore[misc]
    return plan, outcome, task, kit.oracle_runs(plan.scenario(), agent, outcome)


@pytest.mark.parametrize("status", kit.STATUSES)
@pytest.mark.parametrize(("kind", "key", "agent"), SUBJECTS)
def test_every_verdict_on_every_scenario_and_mystery_is_true(kind, key, agent, status):
    plan, outcome, task, runs = _subject(kind, key, agent)
    offset = kit.STATUSES.index(status) % 3 - 1  # wrong counts too: one fewer, right, one more, in turn
    said_count = max(0, outcome.count("ToolCall") + offset)
    problems = verdict_problems(plan, outcome, task, status, said_count, runs=runs)
    assert not problems, f"{kind} {key} / {agent}, guessed {status} / {said_count}:\n" + "\n".join(problems)


# -- per-label checks: each label's verdict is its own run's -------------------------------------------

LABELS = ("a", "b", "c")


@st.composite
def labelled(draw):
    """2 or 3 labelled plans, and per label a status and a count guess (drawn as in the single check) or none."""
    count = draw(st.integers(2, 3))
    chosen = {label: draw(kit.plans()) for label in LABELS[:count]}
    statuses = {label: draw(GUESS_STATUS) for label in chosen if draw(st.integers(0, 3))}  # a label may be left out
    counts = {label: draw(GUESS_COUNT) for label in chosen if draw(st.integers(0, 3))}
    return chosen, statuses, counts


def _labelled_checked(chosen, statuses, counts) -> None:
    ran = {label: kit.run_plan(plan) for label, plan in chosen.items()}
    if any(r is None for r in ran.values()):
        return
    outcomes = {label: r[0] for label, r in ran.items()}  # type: ignore[index]
    guesses = {label: _guesses(o, statuses.get(label, ...), counts.get(label, ...)) for label, o in outcomes.items()}
    status_map = {label: guesses[label][0] for label in statuses}
    count_map = {label: guesses[label][1] for label in counts}
    result = labkit.check(outcomes, status=status_map, tool_calls=count_map)
    alone_right = []
    for label, outcome in outcomes.items():
        said_status, said_count = guesses[label]
        alone = labkit.check(outcome, status=said_status, tool_calls=said_count)
        mine = result[label]
        assert (mine.right, mine.feedback) == (alone.right, alone.feedback), f"label {label}: {chosen[label]!r}"
        assert str(mine) == str(alone), f"label {label}"
        problems = verdict_problems(chosen[label], outcome, ran[label][1], said_status, said_count)  # type: ignore[index]
        assert not problems, f"label {label}: {chosen[label]!r}, guessed {said_status!r} / {said_count!r}:\n" + (
            "\n".join(problems)
        )
        alone_right.append(alone.right)
    assert result.right == all(alone_right)
    if not statuses and not counts:
        assert not re.search(r"\d", str(result)), str(result)  # nothing guessed: one line, no answer
    first = next(iter(outcomes.values()))  # one guess for every label: each label still judged on its own run
    one_for_all = labkit.check(outcomes, status=first.status.value, tool_calls=first.count("ToolCall"))
    for label, outcome in outcomes.items():
        alone = labkit.check(outcome, status=first.status.value, tool_calls=first.count("ToolCall"))
        assert (one_for_all[label].right, one_for_all[label].feedback) == (alone.right, alone.feedback), label


@FAST
@given(labelled())
def test_each_label_of_a_labelled_check_is_judged_on_its_own_run(case):
    _labelled_checked(*case)


@pytest.mark.slow
@SLOW
@given(labelled())
def test_each_label_of_a_labelled_check_is_judged_on_its_own_run_many_more(case):
    _labelled_checked(*case)


# -- compare: right exactly when every label is; a label left out is no guess ----------------------------

VALUES = st.one_of(st.integers(0, 3), st.sampled_from(["1", "2"]), st.none())  # "1" prints as 1 does


@st.composite
def comparisons(draw):
    actual = draw(st.one_of(VALUES, st.dictionaries(st.sampled_from(LABELS), VALUES, min_size=1)))
    labels = sorted(actual) if isinstance(actual, dict) else list(LABELS[:2])
    guess = draw(
        st.one_of(
            st.just(...),
            VALUES,
            st.dictionaries(st.sampled_from(labels), st.one_of(VALUES, st.just(...))),
            st.just(actual),
        )
    )
    return guess, actual


def _guessed(value: object) -> bool:
    """A guess was given: not ``...`` (``None`` is a guess: a stop reason can be ``None``); for a
    mapping, some label's value was given."""
    if isinstance(value, dict):
        return any(_guessed(v) for v in value.values())
    return value is not ...


def _means(said: object, was: object) -> bool:
    """The oracle's equality: a text of digits beside a number is that number (``"1"`` for ``1``), the one rule
    for a value's form; otherwise ``==`` (the values here are small ints, texts of digits and ``None``)."""

    def number(value: object, other: object) -> object:
        return int(value) if isinstance(value, str) and value.isdigit() and isinstance(other, int) else value

    return number(said, was) == number(was, said)


def _alike(said: object, was: object) -> bool:
    """A wrong guess that prints exactly like the answer (none is left here: ``"1"`` for ``1`` means 1)."""
    return _guessed(said) and not _means(said, was) and str(said) == str(was)


def _compared(guess: object, actual: object) -> None:
    result = labkit.compare("n", guess, actual)
    printed = str(result)
    reasons = [line for line in _joined(printed) if line.startswith("think: ")]
    if isinstance(guess, dict) and isinstance(actual, dict):
        every = set(guess) == set(actual) and all(_guessed(guess[k]) and _means(guess[k], actual[k]) for k in actual)
        assert result.right == every, (guess, actual)
        if not _guessed(guess):
            assert not re.search(r"\d", printed), printed  # nothing guessed: the answer stays hidden
            return
        for label in actual:
            line = next(line for line in _joined(printed) if line.startswith(f"n [{label}]"))
            said = guess.get(label, ...)
            if not _guessed(said):
                assert "no guess yet" in line and "it was" not in line, line
            else:
                assert line.endswith("right" if _means(said, actual[label]) else "not this time"), line
        wrong = [
            label for label in actual if _guessed(guess.get(label, ...)) and not _means(guess[label], actual[label])
        ]
        wrong += [label for label in actual if _alike(guess.get(label, ...), actual[label])]
        named = [r.split("]", 1)[0].removeprefix("think: n [") for r in reasons]
        assert sorted(named) == sorted(set(wrong)), printed  # one reason per wrong label, none for a right one
        return
    assert result.right == (_guessed(guess) and _means(guess, actual))
    if not _guessed(guess):
        assert not re.search(r"\d", printed), printed
        return
    assert _joined(printed)[0].endswith("right" if _means(guess, actual) else "not this time"), printed
    if type(guess) is not type(actual) or guess != actual:  # two different values never print alike
        shown = re.match(r"n\s+you said (.*?)\s+it was (.*?)\s+(right|not this time)$", _joined(printed)[0])
        assert shown is not None and shown.group(1) != shown.group(2), printed
    assert len(reasons) == (0 if result.right else 1), printed  # one reason after every wrong guess
    if _alike(guess, actual):  # it prints like the answer: the reason names both types
        assert f"you said {guess!r} ({type(guess).__name__}), it was {actual!r} ({type(actual).__name__})" in reasons[0]


@FAST
@given(comparisons())
def test_compare_is_right_exactly_when_every_label_is(case):
    _compared(*case)


def test_a_guess_that_prints_like_the_answer_says_why_it_is_not_right():
    """``compare`` gave no reason after a wrong guess; the ones it can give without inventing a cause:
    the types, and for two numbers how far apart they are (tests/test_compare_reasons.py for the rest)."""
    assert labkit.compare("n", 3.5, "3.5")._text().splitlines()[1] == (
        "think: n: you said 3.5 (float), it was '3.5' (str): they print alike but are not the same value"
    )
    assert str(labkit.compare("n", 4, 3)).splitlines()[1] == "think: n: 1 too many"


# -- the prediction widget gives check's verdict -------------------------------------------------------


@FAST
@given(kit.plans(), st.sampled_from(kit.STATUSES), st.integers(0, 5))
def test_the_prediction_widget_gives_the_verdict_check_gives(plan, status, count):
    widgets = pytest.importorskip("labkit.teaching.widgets")
    plan = kit.Plan(plan.steps, plan.limits, plan.grant, plan.agent, cycle=plan.cycle)  # plain calls, one at a time
    panel = widgets.Prediction(plan.scenario(), plan.agent)
    panel.status_choice = status
    panel.tool_calls_choice = count
    try:
        verdict = panel.run()
    except labkit.ScriptExhausted:
        return
    outcome = panel.outcome
    assert verdict is not None and outcome is not None
    same = labkit.check(outcome, status=status, tool_calls=count)
    assert (verdict.right, verdict.feedback) == (same.right, same.feedback)
    assert verdict.right == (status == outcome.status.value and count == outcome.count("ToolCall"))
    marks = re.findall(r"&mdash; <b style='color:#[0-9a-f]+'>(right|not this time)</b>", panel.result_html)
    assert marks == [
        "right" if status == outcome.status.value else "not this time",
        "right" if count == outcome.count("ToolCall") else "not this time",
    ]
    for line in verdict.feedback:
        assert f"<i>{html.escape(line)}</i>" in panel.result_html


# -- the timeline chart says which bodies raised (the same reading of results as the hints) --------------


@FAST
@given(kit.plans())
def test_the_timeline_says_which_bodies_returned_and_which_raised(plan):
    charts = pytest.importorskip("labkit.teaching.charts")
    ran = kit.run_plan(plan)
    if ran is None:
        return
    outcome, task = ran
    bodies = [row for row in charts.timeline_data(outcome) if row.kind == "body"]
    assert [row.label.split()[0] for row in bodies] == [tool for tool, _, _ in task.log]
    for row, (tool, value, ending) in zip(bodies, task.log, strict=True):
        assert row.failed == (ending == "raised"), f"{plan!r}: body {tool}({value}) {ending}, drawn {row.label!r}"
        assert not row.unknown, f"{plan!r}: body {tool}({value}) {ending}, drawn {row.label!r}"


# -- status bingo: a square's hint says what its run measured ------------------------------------------


@st.composite
def squares(draw):
    """A bingo square from a generated plan, its limits brought under the board's ceiling, and the status wanted."""
    from labkit.teaching.capstone import BINGO_LIMITS, ScriptedModel

    plan = draw(kit.plans())
    limits = Limits(
        model_calls=min(plan.limits.model_calls, BINGO_LIMITS.model_calls),
        tool_calls=min(plan.limits.tool_calls, BINGO_LIMITS.tool_calls),
        repetitions=min(plan.limits.repetitions, BINGO_LIMITS.repetitions),
        deadline_s=min(plan.limits.deadline_s, BINGO_LIMITS.deadline_s),
    )
    wanted = draw(st.sampled_from(list(labkit.RunStatus)))
    return ScriptedModel(list(plan.steps), grant=plan.grant, limits=limits), wanted


_CLAUSE = re.compile(r"; (?=without |the [a-z -]+? would also have refused that call)")


_COUNTERS = re.compile(
    r"(\w+) \(ModelCall (\d+)/(\d+), ToolCall (\d+)/(\d+), most attempts of one signature (\d+)/(\d+)\)"
)
_RIGHT_COUNTERS = re.compile(
    r"right under both agents: ModelCall (\d+)/(\d+), ToolCall (\d+)/(\d+), most attempts of one signature (\d+)/(\d+)"
)


def _counters_checked(square, model) -> None:
    """The counters a square's line prints, against the same script run again with logged bodies."""
    line = square.line.split(" Hint: ", 1)[0]
    printed = [m.groups() for m in _COUNTERS.finditer(line)]
    right = _RIGHT_COUNTERS.search(line)
    if right:
        printed = [("", *right.groups())]
    if not printed:
        return  # a script that ran out or raised under every agent: no counters
    for agent, ran in square.outcomes.items():
        if not isinstance(ran, RunOutcome):
            continue
        again = kit.run_plan(kit.Plan(tuple(model.steps), model.limits, model.grant, agent))
        assert again is not None
        outcome, task = again
        facts = kit.facts(outcome, task, kit.Plan(tuple(model.steps), model.limits, model.grant, agent))
        limits = model.limits
        true = (
            str(outcome.count("ModelCall")),
            f"{limits.model_calls}",
            str(facts.count),
            f"{limits.tool_calls}",
            str(facts.most_repeated),
            f"{limits.repetitions}",
        )
        shown = [numbers for status, *numbers in printed if status in ("", outcome.status.value)]
        assert tuple(shown[0]) == true if shown else False, f"{model!r} / {agent}: {line!r}, the run has {true}"


def _square_checked(model, wanted) -> None:
    from labkit.teaching.capstone import check_bingo, new_board
    from labkit.teaching.explain import how_to

    board = new_board()
    board[wanted.value] = model
    square = check_bingo(board)[wanted.value]
    _counters_checked(square, model)
    if square.state == "right":
        assert all(isinstance(o, RunOutcome) and o.status is wanted for o in square.outcomes.values())
        return
    agent, wrong = next(
        (a, r) for a, r in square.outcomes.items() if not (isinstance(r, RunOutcome) and r.status is wanted)
    )
    if not isinstance(wrong, RunOutcome):
        return  # a script that ran out or raised: test_explain checks that no rule is named
    hint = square.line.split(" Hint: ", 1)[1]
    tail = f"; {how_to(wanted)}"
    assert hint.endswith(tail), hint
    cause, *also = _CLAUSE.split(hint.removesuffix(tail))
    plan = kit.Plan(tuple(model.steps), model.limits, model.grant, agent)
    runs = kit.oracle_runs(model.scenario(f"bingo-{wanted.value}"), agent, wrong)
    problems = _cause_problems(cause, wrong, plan, wanted.value)  # the square asked for is the "guess"
    for clause in also:
        problems.extend(_also_problems(clause, wrong, runs) or [])
        if _also_problems(clause, wrong, runs) is None:
            problems.append(f"a clause no oracle knows: {clause!r}")
    assert not problems, f"{model!r}, wanted {wanted.value}:\n" + "\n".join(problems)


@FAST
@given(squares())
def test_a_bingo_hint_says_what_its_run_measured(square):
    _square_checked(*square)


@pytest.mark.slow
@SLOW
@given(squares())
def test_a_bingo_hint_says_what_its_run_measured_many_more(square):
    _square_checked(*square)


# -- the minimal examples hypothesis found, each failing before its fix --------------------------------


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
    assert any("1 call had arguments that did not bind and recorded none" in line for line in feedback), feedback
    assert not any("failed in" in line for line in feedback), feedback


def test_a_call_for_no_tool_is_not_a_failed_body():
    plan = kit.Plan((Call("audit_log", {"input": 42}), "Review finished."), Limits(), ALL_CAPABILITIES, "harness")
    assert _problems_of(plan, "Incomplete", 1) == []
    feedback = labkit.check(kit.run_plan(plan)[0], status="Incomplete", tool_calls=1).feedback  # type: ignore[index]
    assert any(
        "1 call asked for audit_log, a tool the host does not have, and recorded no event" in line for line in feedback
    ), feedback


def test_a_model_call_cut_short_by_the_deadline_got_no_answer():
    """Found: after ``Hang()`` and a ProviderUnavailable guess, the hint said every model call got an answer."""
    plan = kit.Plan(
        (Hang(),),
        Limits(model_calls=1, tool_calls=0, repetitions=0, deadline_s=kit.HANG_DEADLINE_S),
        ALL_CAPABILITIES,
        "simple",
    )
    assert _problems_of(plan, "ProviderUnavailable", ...) == []


def test_a_count_hint_does_not_give_away_a_status_not_guessed_yet():
    """Found: status ``...``, count 1 for a run the permission rule stopped before any attempt: the hint
    said "the attempt the permission rule refused records none", the status the learner had not guessed."""
    plan = kit.Plan((Call("read_ticket", {"input": 42}),), Limits(), frozenset(), "simple")
    assert _problems_of(plan, ..., 1) == []
    outcome = kit.run_plan(plan)[0]  # type: ignore[index]
    (line,) = labkit.check(outcome, status=..., tool_calls=1).feedback
    assert (
        line == "think: you counted 1 ToolCall event: the refused attempt records none (it was refused before its body)"
    )
    (named,) = labkit.check(outcome, status="PermissionDenied", tool_calls=1).feedback
    assert "the attempt the permission rule refused records none" in named


def test_the_middleware_line_makes_no_claim_about_calls_for_no_tool():
    """Found: after an events guess without Middleware, for a reply asking read_ticket, audit_log (no such
    tool) and read_ticket: "every tool call the model asks for passes the middleware first", yet
    audit_log reached no middleware."""
    read = Call("read_ticket", {"input": 42})
    plan = kit.Plan(([read, Call("audit_log", {"input": 42}), read],), Limits(), ALL_CAPABILITIES, "simple")
    outcome, task = kit.run_plan(plan)  # type: ignore[misc]
    guess = [(e.kind.value, e.name, e.count) for e in outcome.events if e.kind.value != "Middleware"]
    assert verdict_problems(plan, outcome, task, "RepeatedCall", ..., guess) == []


def test_a_tool_asked_for_without_its_capability_is_not_called_granted():
    """Found by reading the claim against the transcript: finish_review asked for with arguments that do not
    bind, review.finish not granted, then a PermissionDenied guess: "every tool asked for had its capability
    granted" (it was asked for; it never reached the guard)."""
    plan = kit.Plan((Call("finish_review", "{}"), "Done."), Limits(), frozenset({"ticket.read"}), "simple")
    assert _problems_of(plan, "PermissionDenied", 0) == []
    feedback = labkit.check(kit.run_plan(plan)[0], status="PermissionDenied", tool_calls=0).feedback  # type: ignore[index]
    assert any("finish_review was asked for without its capability granted" in line for line in feedback), feedback


def test_a_call_id_sent_again_in_a_later_reply_is_a_call_of_its_own():
    """Found: with ``id="x"`` in replies 2 and 3, the refusal of reply 3 was read as reply 2's call, and the
    hint said the tool budget "would also have refused that call" (a result was looked up by id over the
    whole transcript; an id is unique within one reply only)."""
    read = Call("read_ticket", {"input": 42})
    steps = (read, Call("read_ticket", {"input": 42}, id="x"), Call("read_ticket", {"input": 7}, id="x"), "Done.")
    plan = kit.Plan(steps, Limits(tool_calls=2), ALL_CAPABILITIES, "simple")
    assert _problems_of(plan, "Completed", ...) == [] and _problems_of(plan, "ToolBudget", ...) == []
    outcome = kit.run_plan(plan)[0]  # type: ignore[index]
    feedback = labkit.check(outcome, status="ToolBudget", tool_calls=...).feedback  # the guessed rule: when?
    assert any("the tool budget would have refused read_ticket(input=7) later" in line for line in feedback)
    looser = kit.run_plan(kit.Plan(steps, Limits(tool_calls=2, repetitions=2), ALL_CAPABILITIES, "simple"))
    requests = [r for r in looser[0].tool_requests if r.call.id == "x"]  # type: ignore[index]
    assert [r.reply for r in requests] == [2, 3]
    assert requests[0].result.startswith("Ticket 42") and requests[1].result.startswith("refused: ToolBudget")


def test_the_timeline_reads_a_reused_call_id_within_its_own_reply():
    """The same fault as the hint's: finish_review (id "x") raised, then read_ticket (id "x" again) returned;
    the result of the second was read for the first, and the timeline drew a failed body as returned."""
    charts = pytest.importorskip("labkit.teaching.charts")
    steps = (Call("finish_review", {"input": 42}, id="x"), Call("read_ticket", {"input": 42}, id="x"), "Done.")
    outcome, task = kit.run_plan(kit.Plan(steps, Limits(), ALL_CAPABILITIES, "simple"))  # type: ignore[misc]
    assert [ending for *_, ending in task.log] == ["raised", "ok"]
    bodies = [row for row in charts.timeline_data(outcome) if row.kind == "body"]
    assert [(row.label, row.failed) for row in bodies] == [
        ("finish_review raised ValueError", True),
        ("read_ticket returned", False),
    ]


def test_a_label_the_guess_leaves_out_is_no_guess_in_compare():
    """Found: ``compare("n", {"a": 0}, {"a": 0, "b": 0})`` printed ``n [b] you said - ... not this time``
    for a label never guessed (``check`` says "no guess yet" for it)."""
    lines = str(labkit.compare("n", {"a": 0}, {"a": 0, "b": 0})).splitlines()
    assert lines[0].endswith("right") and "no guess yet" in lines[1] and "not this time" not in lines[1]


def test_a_guess_of_none_is_a_guess_that_prints_and_counts_as_one():
    """Found: ``compare("n", {"a": None}, {"a": None})`` was right while it printed "no guess yet"; and
    in chapter 9 a learner who guessed ``my_recorded_stop = None`` (the stop reason the cell above
    printed) was told "no guess yet". ``None`` is a guess; only ``...`` is not."""
    result = labkit.compare("n", {"a": None, "b": 1}, {"a": None, "b": 1})
    assert result.right and _joined(str(result))[0].endswith("right")
    wrong = labkit.compare("recorded stop", None, "RepeatedCall")
    assert wrong.guessed and not wrong.right and "you said None" in str(wrong) and "not this time" in str(wrong)
    assert "no guess yet" in str(labkit.compare("recorded stop", ..., "RepeatedCall"))


def test_a_provider_that_cancelled_its_own_request_was_reached():
    """Found: ``Fail(asyncio.CancelledError("the provider gave up"))`` as model call 1: the hint said model call 1
    "could not reach the model endpoint" (the provider was reached and gave up; the outcome's hint says so)."""
    plan = kit.Plan((Fail(asyncio.CancelledError("the provider gave up")),), Limits(), ALL_CAPABILITIES, "simple")
    assert _problems_of(plan, "Incomplete", 0) == []
    outcome = kit.run_plan(plan)[0]  # type: ignore[index]
    (first, *_) = labkit.check(outcome, status="Incomplete", tool_calls=0).feedback
    assert "model call 1 was cancelled by the provider itself while nobody cancelled the run" in first
    down = kit.run_plan(kit.Plan((Fail(ConnectionError("down")),), Limits(), ALL_CAPABILITIES, "simple"))
    assert "model call 1 could not reach the model endpoint" in labkit.check(down[0], status="Incomplete").feedback[0]  # type: ignore[index]


def test_a_count_taken_from_a_table_is_a_whole_number():
    """Found reading the inputs a chapter gives: a count summed from the events table is a numpy integer, and
    ``check`` answered "tool_calls must be a whole number of ToolCall events, not 2" (it is one)."""
    numpy = pytest.importorskip("numpy")
    outcome = labkit.run("complete")
    counted = numpy.int64(outcome.count("ToolCall"))
    assert labkit.check(outcome, status="Completed", tool_calls=counted).right
    events = [(e.kind.value, e.name, numpy.int64(e.count)) for e in outcome.events]
    assert labkit.check(outcome, status="Completed", tool_calls=counted, events=events).right
    assert labkit.check({"a": outcome}, status="Completed", tool_calls={"a": counted}).right
    truth = labkit.check(outcome, status="Completed", tool_calls=numpy.bool_(True))  # a verdict, not an error
    assert not truth.right and "is a truth value, not a number" in str(truth)


def test_without_the_run_s_grants_the_permission_line_says_only_what_the_events_show():
    """An outcome built by hand has no origin, so its grants are unknown: the hint may not say every tool
    asked for was granted (the model asked for finish_review, not granted, with arguments that do not bind)."""
    plan = kit.Plan((Call("finish_review", "{}"), "Done."), Limits(), frozenset({"ticket.read"}), "simple")
    ran = kit.run_plan(plan)[0]  # type: ignore[index]
    copy = RunOutcome(status=ran.status, text=ran.text, events=ran.events, transcript=ran.transcript, limits=ran.limits)
    feedback = labkit.check(copy, status="PermissionDenied", tool_calls=0).feedback
    assert "think: no call the guard saw needed a capability that was left out (chapter 4)" in feedback, feedback
    assert not any("had its capability granted" in line for line in feedback)


def test_a_permission_guess_is_told_a_made_up_tool_has_no_capability_at_all():
    """Found in chapter 7's cold review: after ``[read 42, close_ticket 42, finish 42, text]`` a PermissionDenied
    guess was told "every tool asked for had its capability granted", though close_ticket was asked for and is
    no tool at all (no capability, no guard)."""
    steps = [
        Call("read_ticket", {"input": 42}),
        Call("close_ticket", {"input": 42}),
        Call("finish_review", {"input": 42}),
    ]
    outcome = labkit.run(labkit.Scenario("made up", "asks for close_ticket", [*steps, "Review finished."]))
    feedback = " ".join(labkit.check(outcome, status="PermissionDenied", tool_calls=2).feedback)
    assert "close_ticket is no tool of this host" in feedback and "had its capability granted" not in feedback


def test_one_count_too_many_is_not_read_as_the_refused_attempt_when_a_call_reached_no_guard():
    """Found in chapter 11's cold review: with a call for no tool and one whose arguments did not bind, a count
    one too many was told "the attempt the repetition rule refused records none" as if that were the only cause."""
    steps = [
        [Call("read_ticket", '{"input": 42.0}'), Call("open_ticket", '{"input": 42}')],
        Call("read_ticket", ""),
        Call("read_ticket", '{"input": 42}'),
        "Done.",
    ]
    outcome = labkit.run(labkit.Scenario("odd", "odd calls", steps))
    assert outcome.status.value == "RepeatedCall" and outcome.count("ToolCall") == 1
    feedback = " ".join(labkit.check(outcome, status="RepeatedCall", tool_calls=2).feedback)
    assert "records none (it was refused" not in feedback
    assert "a tool the host does not have" in feedback and "did not bind" in feedback
