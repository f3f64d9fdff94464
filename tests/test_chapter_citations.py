"""No message printed in chapter K cites a chapter after K as one already taught.

A hint names the chapter that taught its rule, ``"(chapter 6)"``; a learner in
chapter 4 has not reached it yet, so there the citation names what chapter 6 adds,
``"(chapter 6 shows how model calls and time are counted)"``, never "you will meet
this": a chapter may already show the rule at work before the one that teaches it
(:func:`labkit.teaching.i18n.cited`, applied by ``_()``,
``ngettext()`` and ``pgettext()``). The chapter being run comes from
``LABKIT_CHAPTER`` or from the notebook the front end names
(``05_repetition_vs_progress.ipynb``), as the language does.

Execute-free: every message of the catalogue, in English and in French, and the
hints of real runs (every scenario and mystery, every wrong guess; the bingo
hints; the "also" refusals whose chapter is filled in after translation), are
read in each chapter's context.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

import labkit
from labkit.teaching import i18n
from labkit.teaching.explain import explain, square_hint

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "labkit" / "teaching" / "locale" / "fr" / "LC_MESSAGES" / "labkit.po"
CHAPTERS = range(1, 12)

TAUGHT = re.compile(r"(?:\(|, |; )(?:chapter|chapitre) (\d+)(?=[),;])")
"""A chapter cited as where something was taught (not "chapter 5 shows how a signature is built")."""
AHEAD = re.compile(
    r"\b(?:chapter|chapitre) (\d+) (?:compares|shows|goes|lists|comes|compare|montre|parcourt|énumère|y revient)"
)
"""A chapter cited as one still ahead, by what it adds: "chapter 7 lists every status"."""
MET_LATER = re.compile(r"will meet this|vous le verrez|you will see this", re.I)
"""A pointer that says the topic is still to come: false where the current chapter already shows it."""


def _forward(text: str, here: int) -> list[str]:
    return [m.group(0) for m in TAUGHT.finditer(text) if int(m.group(1)) > here]


def _messages() -> list[tuple[str, str | None]]:
    """(singular, plural or None) of every message of the catalogue."""
    with CATALOGUE.open("rb") as handle:
        catalogue = read_po(handle, locale="fr")
    pointers = {*i18n._AHEAD.values(), i18n._AHEAD_OTHER}  # the pointers ahead themselves cite no topic
    return [
        (m.id, None) if isinstance(m.id, str) else (m.id[0], m.id[1])
        for m in catalogue
        if m.id and m.id not in pointers
    ]


def _shown(singular: str, plural: str | None) -> list[str]:
    if plural is None:
        return [i18n._(singular)]
    return [i18n.ngettext(singular, plural, n) for n in (0, 1, 2, 5)]


def test_the_catalogue_cites_chapters():
    """The test below reads something: the catalogue does cite chapters, some of them late ones."""
    cited = [int(n) for s, p in _messages() for n in TAUGHT.findall(f"{s} {p or ''}")]
    assert cited and max(cited) >= 7 and min(cited) <= 4


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("here", CHAPTERS)
def test_no_message_cites_a_chapter_not_reached_as_taught(monkeypatch, language, here):
    monkeypatch.setenv(i18n.ENV, language)
    monkeypatch.setenv(i18n.CHAPTER_ENV, str(here))
    for singular, plural in _messages():
        for text in _shown(singular, plural):
            assert not _forward(text, here), (here, language, text)
            assert all(int(n) > here for n in AHEAD.findall(text)), (here, language, text)
            assert all(int(n) != here for n in TAUGHT.findall(text)), (here, language, text)  # "(this chapter)"


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("here", [2, 3, 4, 5, 6, 7])
def test_a_message_citing_the_chapter_being_run_says_this_chapter(monkeypatch, language, here):
    """The learner is in the chapter a message cites: it reads "(this chapter)", never its own number."""
    monkeypatch.setenv(i18n.ENV, language)
    citing = [(s, p) for s, p in _messages() if any(int(n) == here for n in TAUGHT.findall(f"{s} {p or ''}"))]
    assert citing, f"no message cites chapter {here}: the test reads nothing"
    monkeypatch.setenv(i18n.CHAPTER_ENV, str(here))
    this = "ce chapitre" if language == "fr" else "this chapter"
    for singular, plural in citing:
        for text in _shown(singular, plural):
            assert this in text, (here, language, text)


@pytest.mark.parametrize("language", ["en", "fr"])
def test_a_chapter_reached_is_cited_as_written(monkeypatch, language):
    """In chapter 11 (every chapter reached), and where the chapter is not known, nothing is rewritten."""
    monkeypatch.setenv(i18n.ENV, language)
    monkeypatch.delenv(i18n.CHAPTER_ENV, raising=False)
    unknown = [text for s, p in _messages() for text in _shown(s, p)]
    monkeypatch.setenv(i18n.CHAPTER_ENV, "11")
    last = [text for s, p in _messages() for text in _shown(s, p)]
    assert unknown == last
    assert not any(AHEAD.search(text) for text in last)


def _runs() -> list[labkit.RunOutcome]:
    runs = [labkit.run(name, agent=agent) for name in labkit.SCENARIOS for agent in ("simple", "harness")]
    return runs + [labkit.mystery(key).run() for key in labkit.mysteries()]


RUNS = _runs()


def _hint_lines():
    """Every line check gives after each wrong status (and one count too many) on every run, and each run's
    bingo hint for that status, in the chapter and language the environment names."""
    for run in RUNS:
        for status in labkit.RunStatus:
            if status is not run.status:
                yield from labkit.check(run, status=status.value, tool_calls=run.count("ToolCall") + 1).feedback
                yield square_hint(explain(run), status)


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("here", [1, 2, 4, 5, 6])
def test_no_hint_of_a_run_cites_a_chapter_not_reached_as_taught(monkeypatch, language, here):
    """check's lines after every wrong guess, and the bingo hints, in chapters before the ones they cite."""
    monkeypatch.setenv(i18n.ENV, language)
    monkeypatch.setenv(i18n.CHAPTER_ENV, str(here))
    ahead = 0
    for line in _hint_lines():
        assert not _forward(line, here), (here, language, line)
        ahead += bool(AHEAD.search(line))
    assert ahead, "no hint cited a chapter ahead: the runs do not exercise the rule"


SHOWN: tuple[tuple[int, str, str], ...] = (
    # (chapter, topic it shows at work before the chapter that teaches it, what in the chapter shows it)
    (1, "signature", r"RepeatedCall"),
    (2, "the guard's steps", r"PermissionDenied"),
    (4, "closed set", r"ToolBudget"),
    (6, "closed set", r"ModelBudget"),
)
"""Topics a chapter already shows before the one that teaches them: there, a pointer ahead that said
"you will meet this" would be false; it must say what the later chapter adds."""


def _shown_in(number: int) -> str:
    """A chapter's prose and stored outputs: what its learner has seen by its end."""
    (path,) = (ROOT / "notebooks").glob(f"{number:02d}_*.ipynb")
    import nbformat

    parts = []
    for cell in nbformat.read(path, as_version=4).cells:
        parts.append(cell.source)
        for output in cell.get("outputs", []):
            parts.append(str(output.get("text", "")) + " ".join(map(str, output.get("data", {}).values())))
    return "\n".join(parts)


@pytest.mark.parametrize("language", ["en", "fr"])
def test_a_pointer_ahead_names_what_the_later_chapter_adds(monkeypatch, language):
    """Every chapter a message can point ahead to is said by what it adds, never as a topic still to meet."""
    monkeypatch.setenv(i18n.ENV, language)
    for n in range(2, 12):
        phrase = i18n.ahead(n)
        assert str(n) in phrase and AHEAD.search(phrase) and not MET_LATER.search(phrase), phrase
    for singular, plural in _messages():
        assert not MET_LATER.search(f"{singular} {plural or ''}"), singular


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize(("here", "topic", "marker"), SHOWN)
def test_a_topic_the_chapter_shows_is_never_met_later(monkeypatch, language, here, topic, marker):
    """In a chapter that shows a topic at work (ch1 stops a run on a repetition), every hint about it that
    points ahead names what the teaching chapter adds ("chapter 5 shows how a signature is built")."""
    assert re.search(marker, _shown_in(here)), f"chapter {here} no longer shows {topic}: update SHOWN"
    assert TEACHES[topic] > here
    monkeypatch.setenv(i18n.ENV, language)
    monkeypatch.setenv(i18n.CHAPTER_ENV, str(here))
    pointers = 0
    for line in _hint_lines():
        assert not MET_LATER.search(line), (here, line)
        if str(TEACHES[topic]) in AHEAD.findall(line):
            assert i18n.ahead(TEACHES[topic]) in line, (here, line)
            pointers += 1
    assert pointers, f"no hint in chapter {here} pointed ahead for {topic}"


def test_the_chapter_comes_from_the_variable_then_the_notebook_s_name(monkeypatch):
    from labkit.teaching import progress

    monkeypatch.delenv(i18n.CHAPTER_ENV, raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    assert i18n.chapter() is None
    monkeypatch.setenv("JPY_SESSION_NAME", "/somewhere/04_the_boundary_around_the_tool_body.ipynb")
    assert i18n.chapter() == 4 == progress.current_chapter()
    monkeypatch.setenv("JPY_SESSION_NAME", "/somewhere/appendix_a_real_model.ipynb")
    assert i18n.chapter() is None
    monkeypatch.setenv(i18n.CHAPTER_ENV, "9")
    assert i18n.chapter() == 9
    monkeypatch.setenv(i18n.ENV, "en")
    assert i18n.cited("the deadline decided (chapter 6)") == "the deadline decided (chapter 6)"
    assert i18n.cited("the deadline decided (chapter 6)", here=4) == (
        "the deadline decided (chapter 6 shows how model calls and time are counted)"
    )
    assert i18n.cited("runs the body outside the lock (chapter 4, step 3)", here=3) == (
        "runs the body outside the lock (chapter 4 goes through the guard's steps in order, step 3)"
    )


@pytest.mark.parametrize("edition", ["workbook", "workbook-fr", "notebooks"])
def test_a_renamed_copy_of_a_chapter_is_still_that_chapter(monkeypatch, tmp_path, edition):
    """A learner's copy saved under another name (``my chapter.ipynb``) keeps its chapter, from the number every
    chapter carries in its metadata: its hints cite chapters as the chapter's own do; a notebook without it, or
    with a number that is not one, is no chapter."""
    from labkit.teaching import progress

    monkeypatch.delenv(i18n.CHAPTER_ENV, raising=False)
    for source in sorted((ROOT / edition).glob("[0-9][0-9]_*.ipynb")):
        copy = tmp_path / f"copy of {source.stem[3:]}.ipynb"
        copy.write_bytes(source.read_bytes())
        monkeypatch.setenv("JPY_SESSION_NAME", str(copy))
        assert i18n.chapter() == int(source.name[:2]) == progress.current_chapter(), copy
    for metadata in ({}, {"labkit": {"chapter": "4"}}, {"labkit": {"chapter": True}}, {"labkit": {"chapter": 0}}):
        other = tmp_path / f"other {len(str(metadata))}.ipynb"
        other.write_text(json.dumps({"cells": [], "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}))
        monkeypatch.setenv("JPY_SESSION_NAME", str(other))
        assert i18n.chapter() is None, metadata


# -- a chapter cited is the chapter that teaches the rule ----------------------------------------

TOPICS: tuple[tuple[str, str, str], ...] = (
    # (topic, what a message says of it, what the teaching chapter's prose says first)
    ("provider cancel", r"provider cancelling its own request", r"^## A `CancelledError` from the model call"),
    ("runtimes", r"plain function|question the host's code asked", r"^## One job, four runtimes"),
    (
        "tool budget",
        r"^for ToolBudget|^(?:only )?\{used\} of \{limit\} tool attempts|a budget of n admits",
        r"^\s*\d\. \*\*tool budget\*\*",
    ),
    # before "signature": "… adds one to its signature's count: a refused call counts nothing (chapter 4)"
    ("a refusal counts nothing", r"a refused call counts nothing", r"^\s*\d\. \*\*permission\*\*"),
    ("signature", r"signature|canonical arguments|repetitions=0", r"^## A signature"),
    ("model-call budget", r"model calls? w|^for ModelBudget", r"^## The model-call budget"),
    ("deadline", r"DeadlineExceeded|\{deadline\} s|^\{rule\} decided: \{reason\}", r"^## One deadline"),
    ("unknown tool", r"no tools? of this host", r"^## Experiment 1 — a tool that does not exist"),
    (
        "closed set",
        r"ProviderUnavailable|fail(?:ed)? to connect|never Completed|^Incomplete is",
        r"^## Experiment 3 — the endpoint drops out",
    ),
    ("host condition", r"host condition", r"The host condition is"),
    (
        "the guard's steps",
        r"capability|guard asks|counts nothing|its body fails|reserve under the lock",
        r"^\s*\d\. \*\*permission\*\*",
    ),
)
"""Each topic a message may cite a chapter for, first match wins: how a message names it, and the line
that teaches it (a guard step, a section's heading). The chapter that teaches a topic is the first whose
prose holds that line: a citation must name that chapter, and is a forward reference only before it."""


def _prose(number: int, folder: str = "notebooks") -> str:
    (path,) = (ROOT / folder).glob(f"{number:02d}_*.ipynb")
    import nbformat

    cells = nbformat.read(path, as_version=4).cells
    return "\n".join(c.source for c in cells if c.cell_type == "markdown")


def _teaching_chapter(marker: str) -> int:
    found = [n for n in CHAPTERS if re.search(marker, _prose(n), re.M)]
    assert found, f"no chapter teaches {marker!r}"
    return found[0]


TEACHES = {topic: _teaching_chapter(marker) for topic, _, marker in TOPICS}


def _topic(message: str) -> str | None:
    return next((topic for topic, said, _ in TOPICS if re.search(said, message)), None)


def test_each_topic_is_taught_in_one_chapter_and_the_tool_budget_in_the_guard_s():
    """The oracle reads the chapters; the tool budget is a step of chapter 4's guard, so that is its chapter."""
    assert TEACHES["tool budget"] == TEACHES["the guard's steps"] < TEACHES["model-call budget"]
    assert TEACHES["runtimes"] < TEACHES["host condition"] < TEACHES["the guard's steps"] < TEACHES["signature"]


def test_every_chapter_a_message_cites_teaches_what_the_message_cites_it_for():
    wrong, unknown = [], []
    for singular, plural in _messages():
        for text in filter(None, (singular, plural)):
            for number in TAUGHT.findall(text):
                topic = _topic(text)
                if topic is None:
                    unknown.append(text)
                elif int(number) != TEACHES[topic]:
                    wrong.append((text, topic, f"cites {number}, taught in {TEACHES[topic]}"))
    assert not unknown, f"messages citing a chapter for no known topic (add it to TOPICS): {unknown}"
    assert not wrong, wrong


def test_a_refusal_cites_the_chapter_that_teaches_its_rule(monkeypatch):
    """``Refusal.sentence`` fills the chapter in after translation, from the rule: it must be the teaching one."""
    from labkit.teaching.explain import Refusal

    monkeypatch.setenv(i18n.ENV, "en")
    monkeypatch.setenv(i18n.CHAPTER_ENV, "11")
    topics = {
        "PermissionDenied": "the guard's steps",
        "ToolBudget": "tool budget",
        "RepeatedCall": "signature",
        "ModelBudget": "model-call budget",
        "DeadlineExceeded": "deadline",
    }
    for rule, topic in topics.items():
        refusal = Refusal(rule=rule, attempt="read_ticket(input=42)", read=1, limit=1, capability="x", where=(1, "c"))
        assert TAUGHT.findall(refusal.sentence()) == [str(TEACHES[topic])], (rule, refusal.sentence())


@pytest.mark.parametrize("here", CHAPTERS)
def test_a_forward_reference_only_before_the_teaching_chapter(monkeypatch, here):
    """In chapter ``here``, a message says "you will meet this" exactly when its topic is taught later."""
    monkeypatch.setenv(i18n.ENV, "en")
    monkeypatch.setenv(i18n.CHAPTER_ENV, str(here))
    for singular, plural in _messages():
        topic = _topic(singular)
        if topic is None or not TAUGHT.search(singular):
            continue
        for text in _shown(singular, plural):
            assert bool(AHEAD.search(text)) is (TEACHES[topic] > here), (here, topic, text)


def test_the_french_cites_the_chapters_the_english_cites():
    with CATALOGUE.open("rb") as handle:
        catalogue = read_po(handle, locale="fr")
    for message in catalogue:
        if not message.id:
            continue
        english = " ".join([message.id] if isinstance(message.id, str) else message.id)
        french = " ".join([message.string] if isinstance(message.string, str) else message.string)
        assert sorted(set(TAUGHT.findall(english))) == sorted(set(TAUGHT.findall(french))), (english, french)


# -- the chapters' own prose ----------------------------------------------------------------------

BARE = re.compile(r"(?:\(|, |; )(?:chapters?|chapitres?) (\d+)\)")
"""A chapter cited bare, as where something was taught: "(chapter 5)", "(`Fail(...)`, chapter 9)"."""


def bare_citations_ahead(prose: str, here: int) -> list[str]:
    """The bare citations of ``prose`` that name a chapter after ``here``: a later chapter must be cited
    with words that say it is ahead ("chapter 8 shows them"), never as if already taught."""
    return [m.group(0) for m in BARE.finditer(prose) if int(m.group(1)) > here]


def test_the_prose_rule_catches_a_bare_citation_ahead_and_lets_a_forward_reference_pass():
    assert bare_citations_ahead("spans, once a tracer provider is set (chapter 8).", 2) == ["(chapter 8)"]
    assert bare_citations_ahead("its own error (`x`, chapter 11); and", 7) == [", chapter 11)"]
    assert bare_citations_ahead("spans (chapter 8 shows them).", 2) == []
    assert bare_citations_ahead("the guard's order (chapter 4).", 8) == []
    assert bare_citations_ahead("une erreur à elle (chapitre 11) ;", 7) == ["(chapitre 11)"]


@pytest.mark.parametrize("folder", ["notebooks", "notebooks-fr"])
@pytest.mark.parametrize("here", CHAPTERS)
def test_a_chapter_s_prose_cites_a_later_chapter_only_as_one_ahead(here, folder):
    prose = _prose(here, folder)
    assert not bare_citations_ahead(prose, here), bare_citations_ahead(prose, here)
