"""Every line a teaching helper prints fits a notebook's output area, or is wrapped between words.

JupyterLab's output area wraps a plain-text line longer than about 92
characters at its edge, mid-word when it comes to that: chapter 1's learner
read "... then run this ce" / "ll again". Every verdict, hint and note goes
through ``labkit.teaching.layout.fit``. Here hypothesis generates what the
helpers print, in English and in French (generated runs and wrong, right and
missing guesses for :func:`labkit.check`, one run or per label; generated
values for :func:`labkit.compare`; hosts for ``check_hosts``; a mystery), and
each printed text is held against the text before wrapping, rebuilt here:

* no line is wider than 92 characters, unless it is one word alone after its indent
  (a value is never cut);
* the words are the same, in the same order: wrapping only moves line ends;
* a line that fitted is unchanged, and no wrapped line starts with French
  punctuation that must follow its word (``:``, ``;``, ``?``, ``!``, ``»``).
"""

from __future__ import annotations

import re

import pytest
import verdict_kit as kit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import labkit
from labkit.teaching import hosts
from labkit.teaching.layout import LINE_WIDTH, fit

FAST = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.fixture
def language(request, monkeypatch):
    monkeypatch.setenv("LABKIT_LANGUAGE", request.param)
    return request.param


def problems(printed: str, unwrapped: str) -> list[str]:
    """What in ``printed`` breaks the rules of the module's docstring, against the text before wrapping."""
    found = []
    if printed.split() != unwrapped.split():
        found.append("the words changed")
    before = unwrapped.split("\n")
    for line in printed.split("\n"):
        if len(line) > LINE_WIDTH and len(line.split()) > 1:
            found.append(f"{len(line)} characters: {line!r}")
        if line not in before and re.match(r"^\s*[:;?!»]", line):
            found.append(f"a wrapped line starts with punctuation: {line!r}")
    kept = [line for line in before if len(line) <= LINE_WIDTH]
    missing = [line for line in kept if line not in printed.split("\n")]
    if missing:
        found.append(f"lines that fitted were changed: {missing}")
    return found


WORD = st.text(alphabet="abcdéèçàùXYZ0123456789'()[]=,.-_", min_size=1, max_size=30)
PUNCT = st.sampled_from([":", ";", "?", "!", "»", "«"])
LINE = st.lists(st.one_of(WORD, WORD, WORD, PUNCT), max_size=40).map(" ".join)


@FAST
@given(st.lists(st.tuples(st.sampled_from(["", "  ", "think: ", "status          ", "réfléchissez : "]), LINE)))
def test_fit_moves_only_line_ends(lines):
    text = "\n".join(lead + line for lead, line in lines)
    assert problems(fit(text), text) == []


@pytest.mark.parametrize("language", ["en", "fr"], indirect=True)
@FAST
@given(kit.plans(), st.data())
def test_every_check_prints_lines_that_fit(language, plan, data):
    ran = kit.run_plan(plan)
    if ran is None:
        return
    outcome, _task = ran
    status = data.draw(st.one_of(st.sampled_from(kit.STATUSES), st.just(...)))
    count = data.draw(st.one_of(st.integers(0, 9), st.just(...)))
    recorded = [(e.kind.value, e.name, e.count) for e in outcome.events]
    events = data.draw(st.sampled_from([None, ..., recorded, recorded[1:], [(k, n, c + 1) for k, n, c in recorded]]))
    asked = {} if events is None else {"events": events}
    result = labkit.check(outcome, status=status, tool_calls=count, **asked)
    assert problems(str(result), result._text()) == [], (plan, status, count)
    labels = data.draw(st.lists(st.sampled_from(["simple", "harness", "a long label"]), min_size=1, unique=True))
    per_label = labkit.check({label: outcome for label in labels}, status=status, tool_calls=count)
    assert problems(str(per_label), per_label._text()) == [], (plan, labels, status, count)


ANSWER = st.recursive(
    st.one_of(
        st.integers(-3, 200),
        st.booleans(),
        st.none(),
        st.sampled_from(kit.STATUSES),
        st.text(alphabet="abc déf'\"", max_size=40),
    ),
    lambda inner: st.lists(inner, max_size=6),
    max_leaves=12,
)
MEANING = st.sampled_from([None, "status", "exit code", "bodies", "ToolCall count", "signatures", "caller wins"])


@pytest.mark.parametrize("language", ["en", "fr"], indirect=True)
@FAST
@given(st.sampled_from(["status", "calls", "the bodies that ran", "exit code of each run"]), ANSWER, ANSWER, MEANING)
def test_every_comparison_prints_lines_that_fit(language, what, said, was, meaning):
    result = labkit.compare(what, said, was, meaning=meaning)
    assert problems(str(result), result._text()) == [], (what, said, was, meaning)


@pytest.mark.parametrize("language", ["en", "fr"], indirect=True)
def test_the_chapter_1_no_guess_line_is_wrapped_between_words(language):
    outcome = labkit.run("repeat")
    result = labkit.check(outcome, status=..., tool_calls=...)
    printed = str(result)
    assert problems(printed, result._text()) == []
    assert all(len(line) <= LINE_WIDTH for line in printed.split("\n"))
    if language == "en":  # the learner's line: it is now two lines, cut between "this" and "cell"
        assert "ce\nll" not in printed and len(result._text()) > LINE_WIDTH


@pytest.mark.parametrize("language", ["en", "fr"], indirect=True)
def test_check_hosts_notes_fit(language, capsys):
    runs = {"Completed": labkit.run("complete")}
    result = hosts.check_hosts(runs, {"Completed": 2, "RepeatedCall": 1, "ToolBudget": 2, "ModelBudget": 3})
    printed = capsys.readouterr().out
    for line in printed.splitlines() + str(result).splitlines():
        assert len(line) <= LINE_WIDTH, line


@pytest.mark.parametrize("language", ["en", "fr"], indirect=True)
@pytest.mark.parametrize("key", labkit.mysteries())
def test_every_mystery_prints_lines_that_fit(language, key):
    for line in str(labkit.mystery(key)).splitlines():
        assert len(line) <= LINE_WIDTH or len(line.split()) == 1, line
