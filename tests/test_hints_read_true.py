"""Every number a hint gives is true of the run, and no two of its numbers read as clashing.

A learner read "no call came again with a signature already admitted 2 times:
the most attempts admitted for one signature was 2" as a contradiction (the
most was 2, and 2 were already admitted, yet nothing came again?). Each hint
now says one thing per case. Hypothesis draws a seed scenario (or a mystery),
limits from 0 up and an agent; :func:`labkit.check` is asked every wrong status
(the count one off), and every line of its feedback, and the bingo hint, is
read: each sentence that gives numbers is matched and its numbers are held
against what the run recorded, counted here from its events and transcript
(never from the hint engine):

* tool attempts admitted: the ToolCall events; model calls: the ModelCall events;
* the attempts of each signature: the calls the loop answered with a body's
  result (``labkit.signature`` of each), the refused attempt's own signature;
* "X of Y" never has X above Y, an "only X of Y" has X below Y, a "limit" is the
  run's own limit; "the most admitted for one was M" is below the limit it did
  not reach; "at most N, the limit" is both the limit and the most;
* a line about the deadline says fewer seconds than the deadline had.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import labkit
from labkit import Hang, Limits, RunOutcome
from labkit.loops.agents import result_kind
from labkit.teaching.explain import explain, square_hint

FAST = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

SUBJECTS = [("scenario", name) for name in labkit.SCENARIOS] + [("mystery", key) for key in labkit.mysteries()]


def _scenario(kind: str, key: str):
    return labkit.SCENARIOS[key] if kind == "scenario" else labkit.mystery(key).scenario()


@st.composite
def runs(draw):
    kind, key = draw(st.sampled_from(SUBJECTS))
    source = _scenario(kind, key)
    limits = draw(
        st.one_of(
            st.just(source.limits),
            st.builds(
                Limits,
                tool_calls=st.integers(0, 5),
                model_calls=st.integers(0, 6),
                repetitions=st.integers(0, 3),
            ),
        )
    )
    script = source.script
    if not callable(script) and any(isinstance(step, Hang) for step in script):
        limits = limits.with_(deadline_s=min(limits.deadline_s, 0.03))  # the hanging scenario, made fast
    agent = draw(st.sampled_from(["simple", "harness"]))
    try:
        return labkit.run(dataclasses.replace(source, limits=limits), agent=agent), (kind, key, str(limits), agent)
    except labkit.ScriptExhausted:
        return None, (kind, key, str(limits), agent)


def _admitted_signatures(run: RunOutcome) -> Counter:
    """How many attempts of each signature were admitted: calls answered by a body (a result or a failure)."""
    admitted: Counter = Counter()
    for request in run.tool_requests:
        if result_kind(request.result) in ("result", "failed"):
            admitted[labkit.signature(request.call.name, request.call.arguments)] += 1
    return admitted


def _refused_before(run: RunOutcome, reason: str) -> int | None:
    """The attempts the first call refused for ``reason`` had admitted before it (its signature's)."""
    admitted: Counter = Counter()
    for request in run.tool_requests:
        key = labkit.signature(request.call.name, request.call.arguments)
        if (request.result or "").startswith(f"refused: {reason}"):
            return admitted[key]
        if result_kind(request.result) in ("result", "failed"):
            admitted[key] += 1
    return None


def _seconds(text: str) -> float:
    return float(text.replace(",", "."))


def problems_of(line: str, run: RunOutcome) -> list[str]:
    """What in ``line`` is not true of ``run`` (``[]``: every number it gives is)."""
    limits = run.limits
    tools, models = run.count("ToolCall"), run.count("ModelCall")
    cancelled = any(result_kind(r.result) == "cancelled" for r in run.tool_requests)
    most = max(_admitted_signatures(run).values(), default=0)
    found: list[str] = []

    def claim(ok: bool, why: str) -> None:
        if not ok:
            found.append(f"{line!r}: {why}")

    for x, y in re.findall(r"\b(\d+) of (\d+)\b", line):
        claim(int(x) <= int(y), f"{x} of {y}")
    for x, y in re.findall(r"\bonly (\d+) of (\d+)\b", line):
        claim(int(x) < int(y), f"only {x} of {y}")
    if m := re.search(r"each signature was admitted at most (\d+) times?, the limit,", line):
        claim(int(m[1]) == limits.repetitions, f"the limit is {limits.repetitions}")
        claim(cancelled or int(m[1]) == most, f"the most admitted for one signature was {most}")
    if m := re.search(
        r"no signature reached the limit of (\d+) admitted attempts?: the most admitted for one was (\d+)", line
    ):
        claim(int(m[1]) == limits.repetitions, f"the limit is {limits.repetitions}")
        claim(int(m[2]) < int(m[1]), "the most reached the limit")
        claim(cancelled or int(m[2]) == most, f"the most admitted for one signature was {most}")
    if m := re.search(r"no tool attempt was admitted: a signature is refused only after (\d+)", line):
        claim(tools == 0, f"{tools} ToolCall events")
        claim(int(m[1]) == limits.repetitions >= 1, f"repetitions={limits.repetitions}")
    if "repetitions=0" in line:
        claim(limits.repetitions == 0, f"repetitions={limits.repetitions}")
    if m := re.search(r"same signature, already admitted (\d+) of (\d+)", line):
        claim(int(m[1]) == int(m[2]) == limits.repetitions >= 1, f"repetitions={limits.repetitions}")
        before = _refused_before(run, "RepeatedCall")
        claim(before is None or before == int(m[1]), f"that signature had {before} admitted attempts")
    if m := re.search(r"\b(\d+) of (\d+) attempts already admitted", line):
        claim((int(m[1]), int(m[2])) == (tools, limits.tool_calls), f"{tools} of {limits.tool_calls}")
    if m := re.search(r"\b(\d+) of (\d+) tool attempts (?:was|were) used", line):
        claim((int(m[1]), int(m[2])) == (tools, limits.tool_calls), f"{tools} of {limits.tool_calls}")
        claim(("no attempt came after them" in line) == (tools == limits.tool_calls), "the budget's state")
    if m := re.search(r"\b(\d+) of (\d+) model calls (?:were|was) made", line):
        claim((int(m[1]), int(m[2])) == (models, limits.model_calls), f"{models} of {limits.model_calls}")
        claim(("no call came after them" in line) == (models == limits.model_calls), "the budget's state")
    if m := re.search(r"\b(\d+) of (\d+) model calls already made", line):
        claim((int(m[1]), int(m[2])) == (models, limits.model_calls), f"{models} of {limits.model_calls}")
    if m := re.search(r"the run took ([\d.]+) s of the ([\d.]+) s it had", line):
        claim(_seconds(m[1]) < _seconds(m[2]), "took as long as it had, yet the deadline did not pass")
        claim(_seconds(m[2]) == limits.deadline_s, f"deadline_s={limits.deadline_s}")
    return found


def _lines(run: RunOutcome) -> list[str]:
    lines = []
    for status in labkit.RunStatus:
        if status is run.status:
            continue
        checked = labkit.check(run, status=status.value, tool_calls=run.count("ToolCall") + 1)
        lines.extend(line.removeprefix("think: ") for line in checked.feedback)
        lines.extend(square_hint(explain(run), status).split("; "))
    return lines


@FAST
@given(runs())
def test_every_number_a_hint_gives_is_true_of_the_run(drawn):
    run, where = drawn
    if run is None:
        return
    problems = [p for line in _lines(run) for p in problems_of(line, run)]
    assert problems == [], (where, run.status.value, problems)


@FAST
@given(runs())
def test_a_guessed_repetition_that_did_not_happen_gets_one_plain_reason(drawn):
    """The line that answers a RepeatedCall guess (when the repetition rule neither refused nor would have)."""
    run, where = drawn
    if run is None or "RepeatedCall" in explain(run).rules:
        return
    lines = [line.removeprefix("think: ") for line in labkit.check(run, status="RepeatedCall").feedback]
    plain = (
        "each signature was admitted at most",
        "no signature reached the limit of",
        "no tool attempt was admitted: a signature is refused only after",
        "repetitions=0 refuses the first attempt of any signature",
    )
    said = [line for line in lines if line.startswith(plain)]
    assert len(said) == 1, (where, lines)
    assert not re.search(r"already admitted .* most", said[0]), said


def test_the_learner_s_example_reads_as_one_fact():
    """The review's case: repetitions=2, one signature admitted twice and no third call."""
    run = labkit.run(
        dataclasses.replace(
            labkit.SCENARIOS["complete"],
            script=[labkit.Call("read_ticket", {"input": 42}), labkit.Call("read_ticket", {"input": 42}), "Done."],
            limits=Limits(repetitions=2),
        ),
        agent="simple",
    )
    lines = labkit.check(run, status="RepeatedCall").feedback
    assert lines[-1] == (
        "think: each signature was admitted at most 2 times, the limit, and no call asked for one of them again"
        " (chapter 5)"
    )


@FAST
@given(runs())
def test_a_counterfactual_line_names_every_rule_it_lifted(drawn):
    """ "without X, Y would have refused ... later": the run that found Y ran without the deciding rule and
    without every rule found before Y, so X names each of them (not "those stops' rules")."""
    run, where = drawn
    if run is None:
        return
    found = explain(run)
    if found.decided is None:
        return
    for index, refusal in enumerate(found.also):
        line = found.also_sentence(refusal)
        if refusal.same_attempt:
            continue
        lifted = line.removeprefix("without ").split(", " + refusal.name, 1)[0]
        named = [r.name for r in (found.decided, *found.also[:index])]
        assert all(name in lifted for name in named), (where, line, named)
        assert "those" not in lifted, (where, line)
