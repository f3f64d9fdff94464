"""Every verdict and hint on a framework's run is true of that run, not of labkit's own loops (chapter 11).

A hint on a run made by a framework's loop (``agent="maf"``, ``"pydantic-ai"``,
``"openai-agents"``, ``"langgraph"``) measures its "would also have refused"
lines by replaying the script under labkit's harness
(``labkit.teaching.explain._replay_agent``), on the ground that every
framework's loop ends every script as labkit's do while no divergence is
declared. Here that ground is not taken for granted: hypothesis writes runs
(``verdict_kit.plans``: batches, repeated and changed arguments, unknown tools,
arguments that do not bind, failing bodies, hangs and provider failures, limits
from 0 up, grants), runs each under a framework, guesses every status (right,
wrong, missing) and a count, and holds :func:`labkit.check`'s verdict and every
hint line against the oracles of ``tests/test_verdicts_generated.py``, whose
counterfactual runs are made **under the same framework**
(:func:`verdict_kit.oracle_runs` with the run's own agent), and against the
facts counted from that run's own tool log and transcript. Scripts that hang are left out: the
deadline would pass at a point that depends on the machine's load.

Per-label checks of one script under every loop are judged label by label on
each label's own run: a verdict is never one loop's, shown for another.
"""

from __future__ import annotations

import dataclasses

import pytest
import verdict_kit as kit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_verdicts_generated import GUESS_COUNT, GUESS_STATUS, _guesses, verdict_problems

import labkit
from labkit import Hang
from labkit.adapters import RUNTIMES, available

FRAMEWORKS = [runtime for runtime in RUNTIMES if available(runtime)]

pytestmark = pytest.mark.skipif(not FRAMEWORKS, reason="no framework installed (labkit's adapters extra)")

FAST = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    print_blob=True,
)


@st.composite
def framework_plans(draw):
    """A generated plan, run by a framework's loop (the calls of one reply one after another)."""
    plan = draw(kit.plans(agent=draw(st.sampled_from(FRAMEWORKS))).filter(_no_hang))
    return dataclasses.replace(plan, concurrent=False)


def _no_hang(plan: kit.Plan) -> bool:
    """No step hangs: a framework's loop is slower than labkit's, so a 0.03 s deadline would pass at a point
    that depends on the machine's load (the deadline's parity is ``tests/test_adapters.py``'s)."""
    return not any(isinstance(step, Hang) for step in plan.steps)


@FAST
@given(framework_plans(), GUESS_STATUS, GUESS_COUNT)
def test_every_verdict_on_a_framework_s_run_is_true_of_that_run(plan, status, offset):
    ran = kit.run_plan(plan)
    if ran is None:
        return  # the script ran out: no outcome to check
    outcome, task = ran
    said_status, said_count = _guesses(outcome, status, offset)
    problems = verdict_problems(plan, outcome, task, said_status, said_count)
    assert not problems, f"{plan!r}, guessed {said_status!r} / {said_count!r}:\n" + "\n".join(problems)


@settings(FAST, max_examples=15)
@given(kit.plans(agent="simple").filter(_no_hang), st.data())
def test_a_check_over_every_loop_judges_each_label_on_its_own_run(plan, data):
    """``labkit.check({loop: run})``: each label's verdict and hint are those of a check on that run alone."""
    plan = dataclasses.replace(plan, concurrent=False)
    runs = {}
    for loop in ["simple", "harness", *FRAMEWORKS]:
        ran = kit.run_plan(dataclasses.replace(plan, agent=loop))
        if ran is None:
            return
        runs[loop] = ran[0]
    status = data.draw(st.sampled_from(kit.STATUSES))
    count = data.draw(st.integers(0, 5))
    together = labkit.check(runs, status=status, tool_calls=count)
    for loop, run in runs.items():
        alone = labkit.check(run, status=status, tool_calls=count)
        assert together[loop].right == alone.right, loop
        assert together[loop].feedback == alone.feedback, loop
        assert together[loop].actual_status == run.status.value, loop
