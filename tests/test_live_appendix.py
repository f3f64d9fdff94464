"""Appendix A checks the learner's "same status" guesses against what ran: the live runs when a server
answered every scenario, the stand-in (a model that follows its instructions) when none did."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

pytest.importorskip("openai")

from fake_openai_server import FakeOpenAIServer

import labkit
from labkit.teaching.live import run_live, same_status

ROOT = Path(__file__).resolve().parent.parent
NAMES = ["complete", "incomplete", "forbidden", "repeat", "changing", "budget"]
STAND_IN = {"incomplete": False, "forbidden": True, "repeat": False, "changing": False, "budget": True}


def skips_the_finish(call_number, request):
    """A chat model that reads the ticket, then says it is done without calling finish_review."""
    if any(message.role.value == "tool" for message in request.messages):
        return "Review finished."
    return labkit.Call("read_ticket", {"input": 42})


def follows():
    return labkit.ScriptedTransport(labkit.SCENARIOS["complete"].script)


def _live_runs(base_url: str) -> dict[str, labkit.RunOutcome]:
    profile = labkit.LiveProfile(base_url=base_url, model="fake", timeout_s=10, max_retries=0)
    runs = {}
    for name in NAMES:
        one = run_live(name, profile)
        assert one is not None
        runs[f"{name}, scripted"] = labkit.run(name)
        runs[f"{name}, live"] = one
    return runs


def test_with_no_live_run_the_stand_in_answers_and_says_so(capsys):
    assert same_status({}, NAMES[1:], stand_in=follows) == (STAND_IN, "host's side")
    assert "compared with the stand-in" in capsys.readouterr().out


def test_with_live_runs_the_answer_is_theirs_not_the_stand_in_s(capsys):
    with FakeOpenAIServer(skips_the_finish) as server:
        runs = _live_runs(server.base_url)
    capsys.readouterr()
    same, meaning = same_status(runs, NAMES[1:], stand_in=follows)
    assert meaning != "host's side"  # the stand-in's reason would not be true of a model that skips a step
    assert "Compared with the live runs" in capsys.readouterr().out
    assert runs["complete, live"].status is labkit.RunStatus.INCOMPLETE  # it never finished the review
    assert same == {name: runs[f"{name}, live"].status == labkit.run(name).status for name in NAMES[1:]}
    assert same["incomplete"] is True and same != STAND_IN  # what ran, not what the stand-in does


def test_a_table_missing_a_live_run_falls_back_to_the_stand_in(capsys):
    with FakeOpenAIServer(skips_the_finish) as server:
        runs = _live_runs(server.base_url)
    del runs["budget, live"]
    assert same_status(runs, NAMES[1:], stand_in=follows)[0] == STAND_IN


def test_the_appendix_checks_the_guesses_against_the_live_runs(monkeypatch):
    """The notebook's own cells, run against a server whose model skips finish_review."""
    import nbclient
    import nbformat

    nb = nbformat.read(ROOT / "notebooks" / "appendix_a_real_model.ipynb", as_version=4)
    with FakeOpenAIServer(skips_the_finish) as server:
        monkeypatch.setenv("LABKIT_BASE_URL", server.base_url)
        monkeypatch.setenv("LABKIT_LANGUAGE", "en")
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        nbclient.NotebookClient(
            nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(ROOT / "notebooks")}}
        ).execute()
    said = {
        c.id: "".join(o.get("text", "") or o.get("data", {}).get("text/plain", "") for o in c.outputs)
        for c in nb.cells
        if c.cell_type == "code"
    }
    assert said["live-complete"].startswith("Incomplete (exit 2)")
    check = said["same-check"]
    assert check.startswith("Compared with the live runs")
    # the reference guesses (a model that follows its instructions) meet a model that does not
    assert re.search(r"same status \[incomplete\]\s+you said False\s+it was\s+True\s", check), check
    words = " ".join(check.split())  # the output area's lines are wrapped at word boundaries (layout.fit)
    assert "the host's grants or limits decided it, or your model did what the script does" in words, check
    assert re.search(r"same status \[repeat\]\s+you said False\s+it was False\s+right", check), check
