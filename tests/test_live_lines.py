"""Appendix A's lines and chapter 7's status table speak the notebook's language (the French edition printed
English there): :mod:`labkit.teaching.live` and :func:`labkit.teaching.frames.statuses_frame`."""

from __future__ import annotations

import pytest

import labkit
from labkit.teaching import live
from labkit.teaching.frames import statuses_frame
from labkit.teaching.recorded import live_complete


@pytest.fixture(params=["en", "fr"])
def language(request, monkeypatch):
    monkeypatch.setenv("LABKIT_LANGUAGE", request.param)
    return request.param


def test_a_live_run_with_no_server_says_why_in_the_notebook_s_language(language, capsys):
    profile = labkit.LiveProfile(base_url="http://127.0.0.1:9/v1", model="tiny", timeout_s=2)
    assert live.run_live("complete", profile) is None
    live.skipped()
    said = capsys.readouterr().out
    english = ("No live run", "Not run:", "Skipped:", "Start one")
    if language == "fr":
        assert not any(words in said for words in english), said
        assert "Ignoré : pas d'exécution réelle (section 4)." in said
    else:
        assert "Skipped: no live run (section 4)." in said and any(w in said for w in english[:2]), said


def test_a_run_s_summary_counts_what_the_run_recorded(language):
    run = labkit.run("complete")
    line = live.summary(run, text=True, beside=labkit.run("complete", stream=True))
    models, tools = run.count("ModelCall"), run.count("ToolCall")
    if language == "fr":
        assert line.startswith(f"Completed (code 0) : {models} appels modèle, {tools} appels d'outil")
        assert "les mêmes événements que l'autre exécution : oui" in line and "texte : 'Review finished." in line
    else:
        assert line.startswith(f"Completed (exit 0): {models} model calls, {tools} tool calls")
        assert "the same events as the other run: yes" in line and "text: 'Review finished." in line
    stopped = labkit.run("budget")
    assert live.summary(stopped, text=True).endswith("non transmis" if language == "fr" else "withheld")


def test_the_recording_and_the_request_are_shown_with_their_data_as_sent(language, capsys):
    recorded = live_complete()
    live.show_recorded(recorded)
    said = capsys.readouterr().out
    assert ("enregistré avec llama-server de llama.cpp" if language == "fr" else "recorded on llama.cpp's") in said
    assert repr(recorded["text"]) in said  # the model's words, as it wrote them
    seen = []
    labkit.run(labkit.Scenario("peek", "keeps the request", lambda n, request: seen.append(request) or "Done."))
    live.show_tools(seen[0])
    said = capsys.readouterr().out
    assert "read_ticket: Read a support ticket" in said  # the description the model reads, in English
    assert ("plafond de sortie par appel" if language == "fr" else "output cap per call") in said


def test_the_status_table_says_text_kept_or_withheld_in_the_notebook_s_language(language):
    table = statuses_frame()
    assert list(table.index) == [s.value for s in labkit.RunStatus]
    text, code = table.columns
    kept, withheld = ("conservé", "non transmis") if language == "fr" else ("kept", "withheld")
    for status in labkit.RunStatus:
        assert table.loc[status.value, text] == (withheld if status.is_stop else kept)
        assert table.loc[status.value, code] == labkit.exit_code(status)
