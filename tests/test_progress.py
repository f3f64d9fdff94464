"""Progress a learner can see (issue 18, item 5): every check records, locally, what was tried and right.

Every test records into a temporary folder (the kernel's working directory stand-in) or into nothing;
the last ones run repository notebooks under nbval and check that nothing was written into the
repository, while the same notebook copied outside it does record.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import labkit
from labkit import Call, RunStatus
from labkit.teaching import progress as progress_module
from labkit.teaching.progress import PROGRESS_FILE, progress, progress_path

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = "04_the_boundary_around_the_tool_body.ipynb"


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A learner's folder outside any repository, as the kernel's working directory; no front end."""
    monkeypatch.chdir(tmp_path)
    for name in (progress_module.ENV, "JPY_SESSION_NAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(progress_module, "_problem", None)
    monkeypatch.setattr(progress_module, "_shell", lambda: None)  # not in a kernel: no cell ids
    return tmp_path


@pytest.fixture(scope="module")
def repeat() -> labkit.RunOutcome:
    return labkit.run("repeat")


def _file(folder: Path) -> dict:
    return json.loads((folder / PROGRESS_FILE).read_text(encoding="utf-8"))


def test_a_right_first_guess_is_recorded_as_done_and_right_first_time(here: Path, repeat) -> None:
    result = labkit.check(repeat, status="RepeatedCall", tool_calls=1, chapter=CHAPTER)
    assert result.right
    data = _file(here)
    assert data["format"] == 1
    (entry,) = data["chapters"][CHAPTER]["entries"].values()
    assert (entry["label"], entry["kind"], entry["attempts"], entry["right_first"], entry["right"]) == (
        "status and ToolCall count",
        "check",
        1,
        True,
        True,
    )
    chapter = progress().chapter("04")
    assert [e.label for e in chapter.done] == ["status and ToolCall count"]
    assert len(chapter.right_first) == 1 and chapter.to_return == ()
    assert str(progress()) == f"{CHAPTER}: 1 of 1 done, 1 right first time"


def test_wrong_then_right_is_done_but_not_right_first_time(here: Path) -> None:
    assert not labkit.compare("admitted", 3, 4, chapter=CHAPTER).right
    mine = progress().chapter(CHAPTER)
    assert [(e.label, e.attempts, e.right) for e in mine.to_return] == [("admitted", 1, False)]
    assert "return to: admitted: not right yet" in str(progress())
    assert labkit.compare("admitted", 4, 4, chapter=CHAPTER).right
    (entry,) = progress().chapter(CHAPTER).entries
    assert (entry.attempts, entry.right_first, entry.right, entry.done, entry.to_return) == (
        2,
        False,
        True,
        True,
        False,
    )
    assert str(progress()) == f"{CHAPTER}: 1 of 1 done, 0 right first time"


def test_a_check_without_a_guess_is_seen_not_tried_and_says_where_to_return(here: Path, repeat) -> None:
    printed = str(labkit.check(repeat, status=..., tool_calls=..., chapter=CHAPTER))
    assert "no guess yet" in printed
    labkit.compare("bodies", ..., 1, chapter=CHAPTER)
    mine = progress().chapter(CHAPTER)
    assert [(e.label, e.attempts, e.right_first) for e in mine.entries] == [
        ("status and ToolCall count", 0, None),
        ("bodies", 0, None),
    ]
    assert [e.label for e in mine.to_return] == ["status and ToolCall count", "bodies"]
    assert mine.summary() == f"{CHAPTER}: 0 of 2 done, 0 right first time"
    assert "return to: bodies: not tried yet" in str(progress())
    labkit.check(repeat, status="ToolBudget", tool_calls=1, chapter=CHAPTER)  # tried now, wrong
    (first, _) = progress().chapter(CHAPTER).entries
    assert (first.attempts, first.right_first, first.right) == (1, False, False)


def test_checks_of_several_runs_and_events_are_one_prediction_each(here: Path) -> None:
    runs = {"simple": labkit.run("repeat", agent="simple"), "harness": labkit.run("repeat")}
    labkit.check(runs, status="RepeatedCall", tool_calls=1, chapter="ch")
    labkit.check(runs["simple"], status="RepeatedCall", tool_calls=1, events=[("ModelCall", "model", 1)], chapter="ch")
    labkit.check(runs["simple"], status="RepeatedCall", tool_calls=..., what="my own name", chapter="ch")
    entries = {e.label: e for e in progress().chapter("ch").entries}
    assert entries["status and ToolCall count"].right is True
    assert entries["status, ToolCall count and events"].right is False  # the events were wrong
    assert entries["my own name"].attempts == 0  # a half-made guess is not tried yet


def test_the_chapter_is_the_notebook_named_by_the_front_end_and_unstarted_chapters_are_listed(
    here: Path, monkeypatch: pytest.MonkeyPatch, repeat
) -> None:
    for name in ("01_a.ipynb", CHAPTER, "04_x.updated.ipynb"):
        (here / name).write_text("{}", encoding="utf-8")
    monkeypatch.setenv("JPY_SESSION_NAME", str(here / CHAPTER))
    labkit.check(repeat, status="RepeatedCall", tool_calls=1)
    shown = progress()
    assert [c.chapter for c in shown.chapters] == ["01_a.ipynb", CHAPTER]  # no .updated copy
    assert str(shown).splitlines()[0] == "01_a.ipynb: not started"
    monkeypatch.delenv("JPY_SESSION_NAME")
    labkit.compare("admitted", 1, 1)
    assert "unnamed" in [c.chapter for c in progress().chapters]


def test_the_html_table_shows_done_right_first_and_where_to_return(here: Path) -> None:
    labkit.compare("admitted", 1, 1, chapter="05_x.ipynb")
    labkit.compare("bodies", 1, 2, chapter="05_x.ipynb")
    table = progress()._repr_html_()
    assert "<th>chapter</th><th>done</th><th>right first time</th><th>return to</th>" in table
    assert "<td>2 of 2</td><td>1</td>" in table
    assert "<li>bodies: not right yet</li>" in table and "admitted" not in table


def test_a_corrupt_file_never_breaks_a_check_and_is_kept_aside(here: Path, repeat, capsys) -> None:
    (here / PROGRESS_FILE).write_text("{not json", encoding="utf-8")
    assert "corrupt" not in str(progress()) and "not valid JSON" in progress().note  # reading moves nothing
    assert (here / PROGRESS_FILE).read_text(encoding="utf-8") == "{not json"
    result = labkit.check(repeat, status="RepeatedCall", tool_calls=1, chapter="ch")
    print(result)
    assert "right" in capsys.readouterr().out  # the verdict all the same
    assert (here / (PROGRESS_FILE + ".corrupt")).read_text(encoding="utf-8") == "{not json"
    assert _file(here)["chapters"]["ch"]["entries"]
    assert "kept as .labkit-progress.json.corrupt" in progress().note
    assert labkit.compare("next", 1, 1, chapter="ch").right
    assert progress().note == "an earlier file that could not be read is kept as .labkit-progress.json.corrupt"
    for other in ("[]", '{"format": 99, "chapters": {}}', '{"format": 1, "chapters": {"ch": 3}}'):
        (here / PROGRESS_FILE).write_text(other, encoding="utf-8")
        assert labkit.compare("again", 1, 1, chapter="ch").right
        assert _valid_file(here)


def _valid_file(folder: Path) -> bool:
    return progress_module._valid(_file(folder))


def test_an_unwritable_place_never_breaks_a_check(here: Path, monkeypatch: pytest.MonkeyPatch, repeat) -> None:
    blocker = here / "a-file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv(progress_module.ENV, str(blocker))  # a "directory" that is a file
    result = labkit.check(repeat, status="RepeatedCall", tool_calls=1)
    assert result.right and "right" in str(result)
    assert labkit.compare("x", 1, 1).right
    assert "could not be recorded" in progress(here).note
    assert not list(here.glob(f"{PROGRESS_FILE}*"))
    monkeypatch.delenv(progress_module.ENV)
    assert labkit.compare("x", 1, 1).right  # writable again: the problem is over
    assert progress().note == ""


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes into a read-only folder anyway")
def test_a_read_only_folder_never_breaks_a_check(here: Path, repeat) -> None:
    here.chmod(0o500)
    try:
        assert labkit.check(repeat, status="RepeatedCall", tool_calls=1).right
    finally:
        here.chmod(0o700)
    assert not (here / PROGRESS_FILE).exists()


def test_writes_are_atomic(here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    labkit.compare("first", 1, 1, chapter="ch")
    before = (here / PROGRESS_FILE).read_bytes()

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(progress_module.os, "replace", fail)
    assert labkit.compare("second", 1, 1, chapter="ch").right
    assert (here / PROGRESS_FILE).read_bytes() == before  # the old file, whole
    assert sorted(p.name for p in here.iterdir()) == [PROGRESS_FILE]  # no temporary file left behind


def test_recording_can_be_turned_off(here: Path, monkeypatch: pytest.MonkeyPatch, repeat) -> None:
    monkeypatch.setenv(progress_module.ENV, "off")
    labkit.check(repeat, status="RepeatedCall", tool_calls=1)
    assert not (here / PROGRESS_FILE).exists()
    assert progress_path() is None and "recording is off" in progress().note


def test_inside_a_labkit_repository_only_my_workbook_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(progress_module.ENV, raising=False)
    repo = tmp_path / "clone"
    for folder in (
        "labkit",
        "notebooks",
        "workbook",
        "notebooks-fr",
        "workbook-fr",
        "my-workbook/sub",
        "my-workbook-fr",
        "docs",
    ):
        (repo / folder).mkdir(parents=True)
    (repo / "pyproject.toml").write_text('[project]\nname = "labkit"\n', encoding="utf-8")
    for folder in ("", "notebooks", "workbook", "notebooks-fr", "workbook-fr", "docs"):
        assert progress_path(repo / folder) is None, folder
    assert progress_path(repo / "my-workbook") == (repo / "my-workbook" / PROGRESS_FILE).resolve()
    assert progress_path(repo / "my-workbook-fr") == (repo / "my-workbook-fr" / PROGRESS_FILE).resolve()
    assert progress_path(repo / "my-workbook" / "sub") is not None
    assert progress_path(tmp_path) == (tmp_path / PROGRESS_FILE).resolve()  # outside it: anywhere
    monkeypatch.chdir(repo / "notebooks")
    assert labkit.compare("x", 1, 1).right
    assert not list(repo.rglob(f"{PROGRESS_FILE}*"))
    assert "kept only in your own copy (my-workbook/ or my-workbook-fr/)" in progress().note
    assert "<table" not in progress()._repr_html_()  # a note, never an empty table
    # this repository itself: its notebooks, its learner edition and its root never record
    for folder in ("", "notebooks", "workbook", "tests"):
        assert progress_path(ROOT / folder) is None
    assert progress_path(ROOT / "my-workbook") is not None


def test_the_widget_records_its_prediction(here: Path) -> None:
    pytest.importorskip("ipywidgets")
    from labkit.teaching.widgets import predict

    panel = predict(labkit.mystery("C"))
    panel.run()  # no status chosen: seen, not tried
    panel.status_choice = "ToolBudget"
    panel.tool_calls_choice = 2
    assert panel.run().right
    (entry,) = progress().chapter("unnamed").entries
    assert (entry.label, entry.kind, entry.attempts, entry.right_first) == (
        "widget: mystery C (harness)",
        "widget",
        1,
        True,
    )


def test_bingo_records_every_square(here: Path) -> None:
    from labkit.teaching.capstone import ScriptedModel, check_bingo, new_board

    board = new_board()
    board["Incomplete"] = ScriptedModel(["Review finished."])
    board["RepeatedCall"] = ScriptedModel([Call("read_ticket", {"input": 1})])  # not a repeat: wrong
    check_bingo(board)
    entries = {e.label: e for e in progress().chapter("unnamed").entries}
    assert len(entries) == len(RunStatus)
    assert entries["bingo square Incomplete"].right_first is True
    assert entries["bingo square RepeatedCall"].right is False
    assert entries["bingo square Completed"].attempts == 0


def _notebook(folder: Path, cells: list[dict]) -> Path:
    path = folder / "10_capstone.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    return path


def test_check_guard_records_the_learners_guard_not_the_chapters_demo(
    here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from guard_catalogue import CheckOutsideLock, Reference

    from labkit.teaching.capstone import check_guard

    notebook = _notebook(
        here,
        [
            {
                "cell_type": "code",
                "id": "demo",
                "metadata": {},
                "source": "class CheckOutsideLock(GuardBase):\n    ...",
            },
            {
                "cell_type": "code",
                "id": "mine",
                "metadata": {"tags": ["exercise"]},
                "source": ["class Reference(GuardBase):\n"],
            },
        ],
    )
    monkeypatch.setenv("JPY_SESSION_NAME", str(notebook))
    assert not check_guard(CheckOutsideLock).passed
    assert check_guard(Reference).passed
    (entry,) = progress().chapter("10").entries
    assert (entry.label, entry.kind, entry.right_first) == ("guard Reference", "guard", True)


class _FakeShell:
    """What ipykernel gives the checks: the notebook in __session__, the cell id in the request's metadata."""

    def __init__(self, notebook: Path) -> None:
        self.user_ns = {"__session__": str(notebook)}
        self.execution_count = 1
        self.parent_header: dict = {}

    def run(self, cell: str) -> None:
        self.execution_count += 1
        self.parent_header = {"metadata": {"cellId": cell}}


def test_in_a_kernel_records_are_keyed_by_notebook_and_cell(
    here: Path, monkeypatch: pytest.MonkeyPatch, repeat
) -> None:
    notebook = _notebook(
        here,
        [
            {"cell_type": "markdown", "id": "h", "metadata": {}, "source": "## Predict: who stops first\nprose"},
            {"cell_type": "code", "id": "c1", "metadata": {}, "source": "labkit.check(...)"},
            {"cell_type": "markdown", "id": "h2", "metadata": {}, "source": "## Two at once"},
            {
                "cell_type": "code",
                "id": "c2",
                "metadata": {},
                "source": "print(labkit.check(...)); print(labkit.check(...))",
            },
        ],
    )
    shell = _FakeShell(notebook)
    monkeypatch.setattr(progress_module, "_shell", lambda: shell)
    shell.run("c1")
    labkit.check(repeat, status="RepeatedCall", tool_calls=1)
    shell.run("c2")
    labkit.check(repeat, status="RepeatedCall", tool_calls=1)
    labkit.check(repeat, status="ToolBudget", tool_calls=1)
    shell.run("c2")  # the cell run again: the same two predictions, not two new ones
    labkit.check(repeat, status="RepeatedCall", tool_calls=1)
    labkit.check(repeat, status="RepeatedCall", tool_calls=1)
    entries = _file(here)["chapters"]["10_capstone.ipynb"]["entries"]
    assert sorted(entries) == [
        "c1/status and ToolCall count",
        "c2/status and ToolCall count",
        "c2/status and ToolCall count (2)",
    ]
    second = entries["c2/status and ToolCall count (2)"]
    assert (second["attempts"], second["right_first"], second["right"]) == (2, False, True)
    mine = progress().chapter("10_capstone.ipynb")
    assert [e.where for e in mine.entries] == [
        "under \u201cPredict: who stops first\u201d",  # the heading a learner sees, not a cell number
        "under \u201cTwo at once\u201d",
        "under \u201cTwo at once\u201d",
    ]


def test_importing_labkit_does_not_import_the_progress_module() -> None:
    code = "import sys, labkit; labkit.run('repeat'); print('labkit.teaching.progress' in sys.modules)"
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
        == "False"
    )
    code = (
        "import sys, labkit; p = labkit.progress; "
        "print(p.__module__, 'pandas' in sys.modules, 'IPython' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["labkit.teaching.progress", "False", "False"]


# -- the repository's notebooks under nbval write nothing into the repository -------------------------------


def _progress_files() -> list[Path]:
    learner = {"my-workbook", "my-workbook-fr"}
    return [p for p in ROOT.rglob(f"{PROGRESS_FILE}*") if ".venv" not in p.parts and not learner & set(p.parts)]


def _nbval(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in (progress_module.ENV, "JPY_SESSION_NAME")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


@pytest.mark.slow
@pytest.mark.parametrize("edition", ["notebooks", "workbook"])
def test_running_the_repositorys_notebooks_under_nbval_writes_nothing_into_it(edition: str, tmp_path: Path) -> None:
    pytest.importorskip("nbval")
    chapter = "01_a_loop_needs_an_owner.ipynb"
    assert _progress_files() == []
    flags = (
        ["--nbval", "--nbval-sanitize-with", "notebooks/sanitize.cfg"] if edition == "notebooks" else ["--nbval-lax"]
    )
    done = _nbval(*flags, "--nbval-current-env", f"{edition}/{chapter}", cwd=ROOT)
    assert done.returncode == 0, done.stdout[-3000:]
    assert _progress_files() == []
    # the same chapter outside the repository (a learner's own copy) records its checks: the rule, not luck
    shutil.copy(ROOT / edition / chapter, tmp_path / chapter)
    done = _nbval("--nbval-lax", "--nbval-current-env", chapter, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    data = json.loads((tmp_path / PROGRESS_FILE).read_text(encoding="utf-8"))
    assert sum(len(c["entries"]) for c in data["chapters"].values()) >= 2


@pytest.mark.parametrize(
    ("attempts", "right_first", "right", "state"),
    [
        (0, None, None, "not tried yet"),
        (1, True, True, "right first time"),
        (2, False, True, "right"),
        (2, True, False, "right first time, but your last guess is not"),
        (2, False, False, "not right yet"),
    ],
)
def test_an_entry_states_one_thing_about_its_guesses(attempts, right_first, right, state) -> None:
    from labkit.teaching.progress import Entry

    entry = Entry("k", "status", "check", attempts, right_first, right, "")
    assert str(entry) == f"status: {state}"


@settings(max_examples=30, deadline=None)
@given(
    directory=st.one_of(
        st.integers(), st.floats(), st.binary(max_size=4), st.lists(st.text(max_size=3), max_size=2), st.builds(object)
    )
)
def test_progress_of_something_that_is_not_a_folder_is_one_line_and_a_record_still_never_raises(directory):
    with pytest.raises(labkit.InputError, match=r"^progress needs a folder as a str or a Path") as info:
        progress_module.progress(directory)
    assert "\n" not in str(info.value)
    assert progress_module.record("check", "x", attempted=True, right=True, directory=directory) is None


def test_progress_of_a_mistyped_folder_says_so_instead_of_nothing_recorded(tmp_path):
    for missing in (tmp_path / "my-workbok", str(tmp_path / "notes.txt")):
        (tmp_path / "notes.txt").write_text("a file, not a folder")
        with pytest.raises(labkit.InputError, match="is not a folder"):
            progress_module.progress(missing)
    assert "nothing recorded yet" in str(progress_module.progress(tmp_path))
