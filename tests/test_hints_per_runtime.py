"""Every hint :func:`labkit.check` prints is true of the runtime that made the run (chapter 2's four).

Hypothesis writes one review plan (read the ticket, read another, finish, ask
a question, in any order and number, then return or answer with text), limits
from 0 up and grants, and runs it under each runtime of
:mod:`labkit.teaching.runtimes`: the host's code as a plain function
(questions dropped: it has no model) and as a workflow, and the same calls as
a script for the simple agent and the harness. Every status is then guessed
(right and wrong, with the count one off), and each ``think:`` line is held
against facts of that runtime, written here, not read from the hint engine:

* a plain function and a workflow have no loop and no middleware, and their
  text is what the host's code returned: no line speaks of a loop ending, a
  follow-up after tool results, or the model's words;
* a plain function asks no model: no line says a model call failed, was made
  or got an answer, and "0 of N model calls" names the run's own limit;
* a workflow makes one model call per question: a line that counts them
  counts the run's ModelCall events;
* an agent's loop is no host's code: no line says the host's code returned;
* "the host's code returned" only for a run that ended by itself;
* "proves nothing" only of a text the run returned, "no text" only when it returned none.
"""

from __future__ import annotations

import contextlib
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import labkit
from labkit import Call, Fail, Limits
from labkit.teaching.runtimes import RUNTIMES, run_function, run_loop, run_workflow

FAST = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

STATUSES = tuple(s.value for s in labkit.RunStatus)
STEP = st.sampled_from(["read", "read7", "finish", "ask"])
HOST = ("function", "workflow")


class Plan:
    def __init__(self, steps, limits, granted, answers, ending):
        self.steps, self.limits, self.granted, self.answers = steps, limits, granted, answers
        self.ending = ending  # the text the host's code returns, or the model's last reply; None or "" is none

    def host(self, tools, ask=None):
        for step in self.steps:
            if step == "read":
                tools.read_ticket(42)
            elif step == "read7":
                tools.read_ticket(7)  # NotFound, a result
            elif step == "finish":
                with contextlib.suppress(ValueError):  # a failing body: the host goes on, as a loop would
                    tools.finish_review(42)
            elif ask is not None:
                ask("Does this ticket ask for a change?", ("yes", "no"))
        return self.ending

    def script(self):
        calls = {
            "read": Call("read_ticket", {"input": 42}),
            "read7": Call("read_ticket", {"input": 7}),
            "finish": Call("finish_review", {"input": 42}),
        }
        return [calls[s] for s in self.steps if s in calls] + [self.ending or ""]

    def run(self, runtime):
        if runtime == "function":
            return run_function(self.host, limits=self.limits, granted=self.granted)
        if runtime == "workflow":
            return run_workflow(self.host, self.answers, limits=self.limits, granted=self.granted)
        return run_loop(self.script(), agent=runtime, limits=self.limits, granted=self.granted)


@st.composite
def plans(draw):
    done = draw(st.sampled_from([["read", "finish"], ["read", "ask", "finish"], ["finish"]]))
    steps = draw(st.one_of(st.just(done), st.lists(STEP, max_size=5)))
    limits = draw(
        st.one_of(
            st.just(Limits()),
            st.builds(
                Limits, tool_calls=st.integers(0, 4), model_calls=st.integers(0, 4), repetitions=st.integers(1, 2)
            ),
        )
    )
    granted = draw(st.sampled_from([None, None, frozenset({"ticket.read"}), frozenset({"review.finish"})]))
    questions = steps.count("ask")
    fails = draw(st.booleans())
    answers = [draw(st.sampled_from(["yes", "no"])) for _ in range(questions)]
    if fails and questions:
        answers[draw(st.integers(0, questions - 1))] = Fail(ConnectionError("connection refused"))
    ending = draw(st.sampled_from(["Done.", None, ""]))
    return Plan(steps, limits, granted, answers, ending)


def runtime_problems(runtime: str, run: labkit.RunOutcome, line: str) -> list[str]:
    """What ``line`` says that is not true of ``runtime`` (the module's docstring)."""
    text = line.removeprefix("think: ")
    problems = []
    if runtime in HOST:
        loop_words = re.sub(r"\bno loop\b", "", text)
        for words in ("loop", "ended by itself", "model's words", "final text", "follow-up", "reply"):
            if words in loop_words:
                problems.append(f"{words!r} said of a {runtime}")
    else:
        if "host's code" in text:
            problems.append(f"'host's code' said of the {runtime} loop")
    if runtime == "function":
        if re.search(r"model call \d+ (could not|was|failed)|every model call got an answer", text):
            problems.append("a model call of a plain function")
        found = re.search(r"(\d+) of (\d+) model calls", text)
        if found and (int(found.group(1)) != 0 or int(found.group(2)) != run.limits.model_calls):
            problems.append(f"'{found.group(0)}' for a plain function with model_calls={run.limits.model_calls}")
    if runtime == "workflow":
        found = re.search(r"only (\d+) of (\d+) model calls (?:was|were) made: one for each question", text)
        if found and int(found.group(1)) != run.count("ModelCall"):
            problems.append(f"'{found.group(0)}' with {run.count('ModelCall')} ModelCall events")
    if "proves nothing" in text and not run.text:
        problems.append("'proves nothing' of a text that the run never returned")
    if ("no text" in text or "no final text" in text) and run.text:
        problems.append(f"'no text' said of a run that returned {run.text!r}")
    if "the host's code returned" in text and run.status.is_stop:
        problems.append("'the host's code returned' for a run the host stopped")
    return problems


@FAST
@given(plans(), st.sampled_from(STATUSES), st.integers(-1, 1))
def test_every_hint_is_true_of_the_runtime_that_ran(plan, guess, offset):
    for runtime in RUNTIMES:
        try:
            run = plan.run(runtime)
        except labkit.ScriptExhausted:
            continue
        count = max(0, run.count("ToolCall") + offset)
        checked = labkit.check(run, status=guess, tool_calls=count)
        assert checked.right == (guess == run.status.value and count == run.count("ToolCall"))
        if not checked.right:
            assert checked.feedback, (runtime, guess, str(checked))
        problems = [p for line in checked.feedback for p in runtime_problems(runtime, run, line)]
        assert problems == [], (runtime, plan.steps, str(checked))


def test_the_chapter_2_skip_says_what_the_host_s_code_did():
    """Found by the review: the workflow of chapter 2 was told "the loop ended by itself ... the model's
    words prove nothing"; its text was the host's code's own "left open for a person"."""

    def triage(tools, ask):
        tools.read_ticket(42)
        return tools.finish_review(42) if ask("change?", ("yes", "no")) == "no" else "left open for a person"

    run = run_workflow(triage, [Call("finish_review", {"input": 42})])
    first = labkit.check(run, status="Completed").feedback[0]
    assert first == (
        "think: you said Completed, but the host's code returned while the host condition (finish_review"
        " succeeded) is false; the text it returned proves nothing (chapter 3)"
    )
