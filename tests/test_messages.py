"""The teaching helpers speak the notebook's language: every message has French, kept current (issue 22).

* ``scripts/build_messages.py --check``: the French catalogue and its compiled form are current and
  every message passed to ``_()`` in labkit/teaching has a French entry;
* each French entry keeps its English's ``{placeholders}`` and HTML tags (a missing one would break
  the message's ``.format`` or its markup at run time), in every plural form;
* every module of labkit/teaching marks its messages so Babel can read them: the text given to
  ``_()``, ``N_()`` or ``ngettext()`` is a literal (never an f-string, a concatenation or a
  ``.format`` result); ``_(name)`` is allowed for a table of ``N_()`` messages;
* a French run of representative helpers (a wrong guess's check, a chart, the tables, the capstone
  checkers' verdicts) shows no English sentence;
* the language follows ``LABKIT_LANGUAGE``, else the working folder (a French edition's folder is
  French, wherever it is), and the helpers' words change with it.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import string
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

import labkit
from labkit.teaching import i18n

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "labkit" / "teaching" / "locale" / "fr" / "LC_MESSAGES" / "labkit.po"


def test_every_message_has_current_french():
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_messages.py"), "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, f"{done.stdout}\nrun `python scripts/build_messages.py`, translate, and commit"


def _entries() -> list[tuple[str, str]]:
    """(English, French) per message; a plural message gives one pair per French form."""
    pairs = []
    with CATALOGUE.open("rb") as handle:
        for m in read_po(handle, locale="fr"):
            if not m.id:
                continue
            if isinstance(m.id, str):
                pairs.append((m.id, m.string))
            else:  # (singular, plural) -> the French forms: one, many, other
                pairs.extend((m.id[0] if i == 0 else m.id[1], form) for i, form in enumerate(m.string))
    return pairs


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_the_catalogue_is_not_empty():
    assert len(_entries()) >= 20


@pytest.mark.parametrize(("english", "french"), _entries(), ids=[f"message-{i}" for i in range(len(_entries()))])
def test_a_translation_keeps_the_placeholders_and_the_markup(english: str, french: str):
    assert _fields(french) == _fields(english)
    assert re.findall(r"</?\w+", french) == re.findall(r"</?\w+", english)


TEACHING = ROOT / "labkit" / "teaching"
MARKERS = {"_", "N_", "ngettext"}


def _marked_calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in MARKERS:
            yield node


@pytest.mark.parametrize("module", sorted(p.relative_to(TEACHING).as_posix() for p in TEACHING.rglob("*.py")))
def test_every_module_marks_its_messages_as_literals(module: str):
    tree = ast.parse((TEACHING / module).read_text(encoding="utf-8"))
    for call in _marked_calls(tree):
        where = f"{module}:{call.lineno}"
        texts = call.args[:2] if call.func.id == "ngettext" else call.args[:1]  # type: ignore[attr-defined]
        assert len(call.args) == (3 if call.func.id == "ngettext" else 1), where  # type: ignore[attr-defined]
        for text in texts:
            literal = isinstance(text, ast.Constant) and isinstance(text.value, str)
            table = call.func.id == "_" and isinstance(text, (ast.Name, ast.Subscript, ast.Attribute))  # type: ignore[attr-defined]
            assert literal or table, f"{where}: Babel cannot read a {type(text).__name__}: give _() a literal"


def test_the_helpers_modules_all_have_messages():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import build_messages
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    used = {path for places in build_messages.messages(ROOT).values() for path, _line in places}
    for module in (
        "explain.py",
        "charts.py",
        "frames.py",
        "predict.py",
        "widgets.py",
        "progress.py",
        "direct.py",
        "runtimes.py",
        "capstone/bingo.py",
        "capstone/guard.py",
        "capstone/rules.py",
    ):
        assert f"labkit/teaching/{module}" in used, module


def test_the_language_follows_the_variable_then_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(i18n.ENV, raising=False)
    for folder, expected in (("workbook", "en"), ("workbook-fr", "fr"), ("my-workbook-fr/sub", "fr"), ("x", "en")):
        (tmp_path / folder).mkdir(parents=True)
        monkeypatch.chdir(tmp_path / folder)
        assert i18n.language() == expected, folder
    monkeypatch.setenv(i18n.ENV, "en")
    assert i18n.language() == "en"  # the variable wins over a French folder
    monkeypatch.chdir(tmp_path / "workbook")
    monkeypatch.setenv(i18n.ENV, "fr")
    assert i18n.language() == "fr"


@pytest.mark.parametrize("chapter", ["01_a_loop_needs_an_owner.ipynb", "10_capstone.ipynb"])
def test_a_french_chapter_copied_out_of_its_folder_still_speaks_french(
    chapter: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A learner downloads a French chapter (JupyterLite's File > Download) into any folder: the front end
    names the notebook, and its metadata, written by build_french.py, keeps the helpers in French."""
    monkeypatch.delenv(i18n.ENV, raising=False)
    downloads = tmp_path / "Downloads"
    downloads.mkdir()
    for edition, expected in (("workbook-fr", "fr"), ("workbook", "en")):
        copy = downloads / f"{edition}-{chapter}"
        copy.write_bytes((ROOT / edition / chapter).read_bytes())
        monkeypatch.chdir(downloads)
        monkeypatch.setenv("JPY_SESSION_NAME", str(copy))
        assert i18n.language() == expected, edition
        assert (labkit.check(labkit.run("repeat"), status="ToolBudget").feedback[0] != _english_line()) == (
            expected == "fr"
        )
    monkeypatch.setenv("JPY_SESSION_NAME", str(downloads / "gone.ipynb"))  # a name the kernel cannot read
    assert i18n.language() == "en"


def _english_line() -> str:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(i18n.ENV, "en")
        return labkit.check(labkit.run("repeat"), status="ToolBudget").feedback[0]


def test_the_prediction_panel_speaks_french_in_a_french_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    pytest.importorskip("ipywidgets")
    from labkit.teaching.widgets import predict

    monkeypatch.delenv(i18n.ENV, raising=False)
    monkeypatch.setenv("LABKIT_PROGRESS", "off")
    (tmp_path / "workbook-fr").mkdir()
    monkeypatch.chdir(tmp_path / "workbook-fr")
    panel = predict(labkit.mystery("D"))
    panel.status_choice, panel.tool_calls_choice = "Completed", 0
    panel.run()
    assert "vous avez dit Completed" in panel.result_html and "pas cette fois" in panel.result_html
    monkeypatch.chdir(tmp_path)
    english = predict(labkit.mystery("D"))
    english.status_choice, english.tool_calls_choice = "Completed", 0
    english.run()
    assert "you said Completed" in english.result_html and "not this time" in english.result_html


ENGLISH = (" the ", " was ", " were ", " would ", " has been ", " is ", " not ", " with ", " and ", " of ", " it ")
"""English function words: a French helper's output that holds one shows an English sentence."""


def _english_in(text: str) -> list[str]:
    prose = re.sub(r"`[^`]*`", " ", text)  # code quoted from the learner's guard is code
    padded = " " + re.sub(r"[\s;:,.()]+", " ", prose.lower()) + " "
    return [word.strip() for word in ENGLISH if word in padded]


def _chart_texts(figure) -> list[str]:
    texts = [t.get_text() for t in figure.texts]
    for ax in figure.axes:
        texts += [ax.get_title(), ax.get_xlabel(), *(t.get_text() for t in ax.texts)]
        texts += [t.get_text() for t in ax.get_yticklabels()]
        legend = ax.get_legend()
        if legend is not None:
            texts += [t.get_text() for t in legend.get_texts()]
    return [t for t in texts if t]


def _french_outputs() -> dict[str, str]:
    """What a learner reads from a few representative helpers: checks after wrong guesses, a mystery,
    the charts, the tables, both capstone checkers (a wrong answer each, and a right one)."""
    pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    import tests.guard_catalogue as guards
    from labkit.teaching import charts, frames
    from labkit.teaching.capstone import ScriptedModel, check_bingo, check_guard, new_board

    outcome = labkit.mystery("D").run()
    hanging = labkit.mystery("H").run()
    out = {
        "check, wrong status and count": str(labkit.check(outcome, status="RepeatedCall", tool_calls=5)),
        "check, a wrong deadline guess": str(labkit.check(hanging, status="Completed", tool_calls=9)),
        "mystery": str(labkit.mystery("B")),
        "counters chart": "\n".join(_chart_texts(charts.counters_chart(outcome))),
        "timeline chart": "\n".join(_chart_texts(charts.timeline_chart(hanging))),
        "counters table": frames.counters_frame(outcome).to_string(),
        "outcomes table": frames.outcomes_frame({"D": outcome, "H": hanging}).to_string(),
    }
    board = new_board()
    board["Incomplete"] = ScriptedModel(["Review finished."])  # right
    board["ToolBudget"] = ScriptedModel(["Review finished."])  # wrong: Incomplete
    out["bingo"] = str(check_bingo(board))
    for guard in (guards.CheckOutsideLock, guards.GreaterThan, guards.BudgetBeforePermission, guards.Reference):
        out[f"guard {guard.__name__}"] = str(check_guard(guard))
    return out


def test_a_french_run_of_the_helpers_shows_no_english_sentence(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(i18n.ENV, "fr")
    monkeypatch.setenv("LABKIT_PROGRESS", "off")
    outputs = _french_outputs()
    found = {name: _english_in(text) for name, text in outputs.items()}
    assert not any(found.values()), "\n\n".join(f"{n}: {found[n]}\n{outputs[n]}" for n in outputs if found[n])
    assert "réfléchissez" in outputs["check, wrong status and count"]  # and it is French, not empty
    assert "pas encore" in outputs["bingo"] and "correcte" in outputs["guard Reference"]


def test_the_english_words_test_sees_english(monkeypatch: pytest.MonkeyPatch):
    """The same outputs in English do hold the words the French test looks for (the test can fail)."""
    monkeypatch.setenv(i18n.ENV, "en")
    monkeypatch.setenv("LABKIT_PROGRESS", "off")
    outputs = _french_outputs()
    assert all(_english_in(text) for name, text in outputs.items() if "table" not in name), outputs


def test_plurals_and_contexts_are_looked_up_in_french(monkeypatch: pytest.MonkeyPatch):
    """A plural picks the French form for its number; a word in a context is not the same word without it."""
    monkeypatch.setenv(i18n.ENV, "fr")
    one, many = (i18n.ngettext("{n} ToolCall event", "{n} ToolCall events", n).format(n=n) for n in (1, 3))
    assert one == "1 événement ToolCall" and many == "3 événements ToolCall"
    assert i18n.ngettext("{n} ToolCall event", "{n} ToolCall events", 0).format(n=0) == "0 événement ToolCall"
    assert i18n.pgettext("a table's column", "right") != i18n._("right")  # a side, not a verdict
    monkeypatch.setenv(i18n.ENV, "en")
    assert i18n.ngettext("{n} ToolCall event", "{n} ToolCall events", 0) == "{n} ToolCall events"
    assert i18n.pgettext("a table's column", "right") == i18n._("right") == "right"


# -- labels, the explorer's scenarios and its button (the words a learner reads beside the verdicts) ---------------

CODE_LABELS = {"ModelCall", "execute_tool"}
"""Labels the chapters pass to ``compare`` that are code names (an event kind, a span's operation): kept."""


def _compare_labels() -> dict[str, str]:
    """Every literal label the chapters' code passes to ``labkit.compare``, with a chapter it is in."""
    import nbformat

    found = {}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                for match in re.finditer(r'compare\(\s*"([^"]+)"', cell.source):
                    found.setdefault(match[1], path.name)
    return found


def test_every_label_the_chapters_compare_is_shown_in_french(monkeypatch: pytest.MonkeyPatch):
    from labkit.teaching.predict import _check_label

    labels = _compare_labels()
    assert "preemptions" in labels and "exit codes" in labels, "the chapters' labels are found"
    unknown = {label: where for label, where in labels.items() if label not in i18n._LABELS | CODE_LABELS}
    assert not unknown, f"labels with no French (add them to labkit/teaching/i18n.py _LABELS): {unknown}"
    checks = {_check_label(events, counted) for events in (False, True) for counted in (False, True)}
    assert checks <= i18n._LABELS
    monkeypatch.setenv(i18n.ENV, "fr")
    untranslated = [label for label in i18n._LABELS if i18n.label(label) == label]
    assert not untranslated, untranslated
    assert i18n.label("preemptions") == "préemptions"
    assert i18n.label("exit codes (2)") == "codes de sortie (2)", "a repeat's number is kept"
    assert i18n.label("bingo square RepeatedCall") == "case de bingo RepeatedCall", "the status is kept"
    assert i18n.label("guard TwoStepGuard") == "garde TwoStepGuard"
    assert i18n.label("widget: mystery C (harness)") == "widget : mystère C (harness)"
    assert i18n.label("widget: repeat (simple)") == "widget : repeat (simple)"
    assert i18n.label("my own words") == "my own words", "a learner's own label is shown as given"
    monkeypatch.setenv(i18n.ENV, "en")
    assert all(i18n.label(label) == label for label in i18n._LABELS)


def _compare_meanings() -> dict[str, str]:
    """Every literal ``meaning=`` the chapters' code passes to ``labkit.compare``, with a chapter it is in."""
    import nbformat

    found = {}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code" and "compare(" in cell.source:
                for match in re.finditer(r'meaning=\s*"([^"]+)"', cell.source):
                    found.setdefault(match[1], path.name)
    return found


def test_every_meaning_the_chapters_give_compare_is_one_it_reads(monkeypatch: pytest.MonkeyPatch):
    """A chapter's ``meaning=`` is a form :mod:`labkit.teaching.reasons` reads (never shown raw), in French too."""
    from labkit.core.events import EventKind
    from labkit.teaching.reasons import NAMED_MEANINGS, reasons

    meanings = _compare_meanings()
    assert {"exit code", "bodies"} <= set(meanings), "the chapters' meanings are found"
    kinds = set(EventKind._value2member_map_)
    read = {"exit code", "status"} | kinds | {f"{kind} count" for kind in kinds} | set(NAMED_MEANINGS)
    unknown = {text: where for text, where in meanings.items() if text not in read}
    assert not unknown, f"meanings reasons.py does not read (add them to NAMED_MEANINGS): {unknown}"
    for language in ("en", "fr"):
        monkeypatch.setenv(i18n.ENV, language)
        for name, sentence in NAMED_MEANINGS.items():
            (line,) = reasons("n", 3, 4, name)
            shown = i18n._(sentence)
            assert line.endswith(shown), line
            assert (shown != sentence) == (language == "fr"), f"{language}: {shown}"
    (own,) = reasons("n", 3, 4, "my own words")
    assert own.endswith("my own words"), "a learner's own sentence is shown as given"


def test_compare_shows_its_label_in_french_and_records_it_in_english(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from labkit.teaching import progress as progress_module

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(progress_module.ENV, raising=False)
    monkeypatch.setattr(progress_module, "_shell", lambda: None)
    monkeypatch.setenv(i18n.ENV, "fr")
    chapter = "10_capstone.ipynb"
    result = labkit.compare("preemptions", 2, 1, chapter=chapter)
    assert result.what == "preemptions", "the label is data: English"
    assert str(result).startswith("préemptions") and "pas cette fois" in str(result)
    per_label = str(labkit.compare("exit codes", {"a": 1}, {"a": 2}, chapter=chapter))
    assert per_label.startswith("codes de sortie [a]")
    labkit.check(labkit.run("repeat"), status="RepeatedCall", tool_calls=1, chapter=chapter)
    recorded = [entry.label for entry in labkit.progress().chapter(chapter).entries]
    assert recorded == ["preemptions", "exit codes", "status and ToolCall count"], "recorded in English"
    shown = str(labkit.progress()) + labkit.progress()._repr_html_()
    assert "préemptions" in shown and "codes de sortie" in shown and "preemptions" not in shown
    monkeypatch.setenv(i18n.ENV, "en")
    assert "return to: preemptions: not right yet" in str(labkit.progress())


def test_the_explorer_says_its_scenarios_and_its_button_in_french(monkeypatch: pytest.MonkeyPatch):
    pytest.importorskip("ipywidgets")
    from labkit.teaching.widgets import SUMMARIES, explorer, predict, scenario_summary

    assert {name: s.summary for name, s in labkit.SCENARIOS.items()} == SUMMARIES, (
        "a seed scenario's summary changed in labkit/loops/scenarios.py: change it in widgets.SUMMARIES too"
    )
    monkeypatch.setenv(i18n.ENV, "fr")
    monkeypatch.setenv("LABKIT_PROGRESS", "off")
    panel = explorer("repeat")
    assert panel.run_button.description == "Lancer"
    assert "disque rayé" in panel.children[1].value
    panel.scenario = "complete"
    assert "lit le ticket 42" in panel.children[1].value
    assert all(scenario_summary(s) != s.summary for s in labkit.SCENARIOS.values())
    declared = dataclasses.replace(labkit.SCENARIOS["repeat"], summary="my own words")
    assert scenario_summary(declared) == "my own words", "a declared scenario's summary is its author's, name or not"
    assert predict("repeat").run_button.description == "Lancer et vérifier"
    monkeypatch.setenv(i18n.ENV, "en")
    assert explorer("repeat").run_button.description == "Run"
    assert all(scenario_summary(s) == s.summary for s in labkit.SCENARIOS.values())
