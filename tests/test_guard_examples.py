"""A fault's "why" takes its example from what ran: the failing call, and the earlier call it was confused with.

Over every script the checker runs and every fault whose words carry an example (the signature faults),
wherever the fault answers differently from the rules: the example names the first call answered
differently (so its tool) and an earlier call of that script, admitted, which the fault's signature
confuses it with in the way the words say (``repeats``: the same under the fault's key, not under
labkit's; ``count as two calls``: the other way round). Then end to end, for the catalogue's guards.
"""

from __future__ import annotations

import re

import guard_catalogue as catalogue
import pytest

from labkit.teaching.capstone import check_guard
from labkit.teaching.capstone.rules import FAULTS, REFERENCE, _key, scripts

WITH_EXAMPLE = [f for f in FAULTS if f.example]


def test_the_signature_faults_carry_an_example():
    assert {f.id for f in WITH_EXAMPLE} == {
        "signature_from_raw_text",
        "signature_from_parsed_text",
        "signature_per_tool",
        "signature_ignores_tool",
    }


@pytest.mark.parametrize("fault", WITH_EXAMPLE, ids=lambda f: f.id)
def test_every_example_is_the_failing_call_and_an_earlier_call_it_was_confused_with(fault):
    shown = 0
    for script in scripts():
        theirs, ours = fault.rules.run(script), REFERENCE.run(script)
        if theirs == ours:
            continue
        k = next(i for i, (a, b) in enumerate(zip(theirs, ours, strict=True)) if a != b)
        call = script.calls[k].attempt
        other = fault.confused_with(script, k)
        assert other is not None, (script, k)
        j = max(i for i in range(k) if script.calls[i].attempt == other)
        assert ours[j][1] == 1  # admitted: its signature was counted
        repeats = "repeats" in fault.words
        assert (_key(fault.rules.key, other) == _key(fault.rules.key, call)) is repeats
        assert (_key(REFERENCE.key, other) == _key(REFERENCE.key, call)) is not repeats
        said = fault.said_at(script, k)
        assert str(call) in said and str(other) in said, said
        assert said.index(str(call) if repeats else str(other)) < said.index(str(other) if repeats else str(call))
        shown += 1
    assert shown >= 1  # the scripts show every one of these faults


@pytest.mark.parametrize(
    "guard",
    [g for g in catalogue.WRONG if g.FAULT in {f.id for f in WITH_EXAMPLE}],
    ids=lambda g: g.__name__,
)
def test_a_report_s_example_names_the_call_it_shows(guard):
    report = check_guard(guard)
    failing = re.fullmatch(r"  (.+?)(?: whose body .*| during whose body .*)?: your guard .*", report.details[1])
    assert failing is not None, report.details
    call = failing[1].removeprefix("(run cancelled) ")
    assert call in report.problems[0], str(report)
    assert call.split("(")[0] in report.problems[0]  # its tool
