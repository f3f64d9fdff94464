"""The learner's work is safe: my-workbook/ is theirs, the tests never read it, updates never overwrite it.

``scripts/lab.py`` makes ``my-workbook/`` from ``workbook/`` on first use and
``update`` brings new or changed chapters into it: over a file only if it is
still exactly what the script wrote there, otherwise beside it. The last test
saves a guess in the copy of a temp clone and runs the pytest commands of
``make test`` (read from ``make -n test``) there: they pass and the guess is
still there, byte for byte.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from support import clone_checkout

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "scripts" / "lab.py"


def _lab():
    spec = importlib.util.spec_from_file_location("_scripts_lab", LAB)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


lab = _lab()


def chapters(folder: Path) -> list[Path]:
    return sorted(folder.glob("[0-9][0-9]_*.ipynb"))


def save_a_guess(path: Path) -> bytes:
    """Fill the first guess of a chapter and store an output, as JupyterLab saves a notebook; return its bytes."""
    nb = nbformat.read(path, as_version=4)
    guess = next(c for c in nb.cells if "guess" in c.metadata.get("tags", []))
    name = guess.source.split("=", 1)[0].strip()
    guess.source = f'{name} = "ToolBudget"  # my own guess'
    guess.execution_count = 3
    guess.outputs = [nbformat.v4.new_output("stream", name="stdout", text="my note\n")]
    nbformat.write(nb, path)
    return path.read_bytes()


def change_upstream(path: Path, words: str) -> bytes:
    nb = nbformat.read(path, as_version=4)
    nb.cells[0].source += f"\n\n{words}"
    nbformat.write(nb, path)
    return path.read_bytes()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A root holding a copy of workbook/ only (what scripts/lab.py reads)."""
    shutil.copytree(ROOT / "workbook", tmp_path / "workbook")
    return tmp_path


def test_first_use_copies_the_learner_edition_and_a_second_run_changes_nothing(root):
    done = lab.update(root)
    sources = sorted(p.name for p in (root / "workbook").iterdir())
    assert sorted(d.target for d in done) == sources and {d.how for d in done} == {"new"}
    for name in sources:
        assert (root / "my-workbook" / name).read_bytes() == (root / "workbook" / name).read_bytes()
    assert lab.pending(root) == []
    assert lab.update(root) == []
    assert "already has the current version" in lab.report([])


def test_an_update_never_overwrites_the_learners_work_and_puts_the_new_version_beside_it(root):
    lab.update(root)
    first, second, third = chapters(root / "my-workbook")[:3]
    mine = save_a_guess(first)
    new_first = change_upstream(root / "workbook" / first.name, "A new paragraph.")
    new_second = change_upstream(root / "workbook" / second.name, "Another paragraph.")
    added = root / "workbook" / "10_a_new_chapter.ipynb"
    added.write_bytes((root / "workbook" / third.name).read_bytes())
    assert lab.pending(root) == sorted([first.name, second.name, added.name])

    done = {d.source: d for d in lab.update(root)}
    assert first.read_bytes() == mine  # the learner's chapter, untouched
    beside = root / "my-workbook" / first.name.replace(".ipynb", ".updated.ipynb")
    assert done[first.name].how == "beside" and beside.read_bytes() == new_first
    assert done[second.name].how == "refreshed" and second.read_bytes() == new_second  # never changed by the learner
    assert done[added.name].how == "new" and (root / "my-workbook" / added.name).exists()
    assert f"my-workbook/{beside.name}" in lab.report(list(done.values()))
    assert lab.update(root) == []

    # the learner works on in the .updated copy; the next version goes beside both
    also_mine = save_a_guess(beside)
    newer = change_upstream(root / "workbook" / first.name, "Yet another paragraph.")
    (done,) = lab.update(root)
    assert done.target == first.name.replace(".ipynb", ".updated-2.ipynb") and done.how == "beside"
    assert first.read_bytes() == mine and beside.read_bytes() == also_mine
    assert (root / "my-workbook" / done.target).read_bytes() == newer


def test_without_a_record_every_file_in_the_copy_counts_as_the_learners(root):
    (root / "my-workbook").mkdir()
    first = chapters(root / "workbook")[0]
    own = root / "my-workbook" / first.name
    own.write_text("made by hand")
    (root / "my-workbook" / "notes.md").write_text("my notes")
    lab.update(root)
    assert own.read_text() == "made by hand"
    assert (root / "my-workbook" / first.name.replace(".ipynb", ".updated.ipynb")).read_bytes() == first.read_bytes()
    assert (root / "my-workbook" / "notes.md").read_text() == "my notes"
    # a chapter that left workbook/ stays in the copy
    gone = chapters(root / "workbook")[-1]
    kept = (root / "my-workbook" / gone.name).read_bytes()
    gone.unlink()
    lab.update(root)
    assert (root / "my-workbook" / gone.name).read_bytes() == kept


def test_the_update_command_is_the_scripts_and_prints_what_it_wrote(root):
    lines = (ROOT / "Makefile").read_text().splitlines()
    assert lines[lines.index("update-workbook:") + 1].strip() == "$(PYTHON) scripts/lab.py update"
    lab.update(root)
    mine = save_a_guess(chapters(root / "my-workbook")[0])
    change_upstream(chapters(root / "workbook")[0], "Changed.")
    out = subprocess.run([sys.executable, str(LAB), "--root", str(root), "update"], capture_output=True, text=True,
                         check=True).stdout
    assert ".updated.ipynb: the new version of" in out and "yours is unchanged" in out
    assert chapters(root / "my-workbook")[0].read_bytes() == mine
    record = json.loads((root / "my-workbook" / lab.MANIFEST).read_text())
    assert set(record) == {"delivered", "written"}


def _make_test_pytest_commands(clone: Path) -> list[list[str]]:
    """The pytest command lines of `make test`, as make would run them in ``clone`` (``make -n``, nothing run)."""
    venv = Path(sys.executable).parent.parent
    listed = subprocess.run(["make", "-n", "test", f"VENV={venv}"], cwd=clone, capture_output=True, text=True,
                            check=True).stdout
    commands = [shlex.split(line) for line in listed.splitlines() if " -m pytest " in line]
    assert len(commands) == 2, listed
    return commands


def test_a_guess_saved_in_the_learners_copy_survives_make_test_and_never_breaks_it(tmp_path):
    clone = clone_checkout(tmp_path / "clone")
    subprocess.run([sys.executable, "scripts/lab.py", "update"], cwd=clone, check=True, capture_output=True)
    chapter = chapters(clone / "my-workbook")[0]
    saved = save_a_guess(chapter)
    checkpoints = clone / "my-workbook" / ".ipynb_checkpoints"
    checkpoints.mkdir()
    (checkpoints / chapter.name.replace(".ipynb", "-checkpoint.ipynb")).write_bytes(saved)
    (clone / "my-workbook" / "scratch.ipynb").write_text("{ this is not a notebook")  # a broken file of the learner's

    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    first, second = _make_test_pytest_commands(clone)
    assert not any("my-workbook" in word for word in first + second)
    # the first command (unit tests + strict nbval on notebooks/) collects nothing from the copy
    collected = subprocess.run([*first, "--collect-only", "-q", "-p", "no:cacheprovider"], cwd=clone, env=env,
                               capture_output=True, text=True)
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-3000:]
    assert "notebooks/01_" in collected.stdout and "my-workbook" not in collected.stdout
    # ... and its checks of the generated editions pass with the copy there
    unit = subprocess.run([*first[:first.index("tests")], "tests/test_workbook_generated.py", "-q",
                           "-p", "no:cacheprovider", "-k", "current or every_predict or learner_edition"],
                          cwd=clone, env=env, capture_output=True, text=True)
    assert unit.returncode == 0, unit.stdout[-3000:] + unit.stderr[-3000:]
    # the second command (every cell of the learner edition runs) runs exactly as make runs it
    lax = subprocess.run([*second, "-p", "no:cacheprovider"], cwd=clone, env=env, capture_output=True, text=True)
    assert lax.returncode == 0, lax.stdout[-3000:] + lax.stderr[-3000:]
    assert "my-workbook" not in lax.stdout

    assert chapter.read_bytes() == saved
    assert (clone / "my-workbook" / "scratch.ipynb").read_text() == "{ this is not a notebook"
    # and fetching updates afterwards still leaves the guess where it is
    change_upstream(clone / "workbook" / chapter.name, "A later edition.")
    subprocess.run([sys.executable, "scripts/lab.py", "update"], cwd=clone, check=True, capture_output=True)
    assert chapter.read_bytes() == saved


def test_make_lab_brings_in_a_missing_chapter_one_and_otherwise_only_says_what_changed(root, monkeypatch):
    started = []
    monkeypatch.setattr(lab, "write_settings", lambda: None)
    monkeypatch.setattr(lab.os, "execv", lambda path, command: started.append(command))
    monkeypatch.setattr(lab.os, "chdir", lambda path: None)
    lab.serve(root)
    assert started and f"--LabApp.default_url={lab.default_url(root)}" in started[-1]
    first = chapters(root / "my-workbook")[0]
    mine = save_a_guess(first)
    change_upstream(root / "workbook" / first.name, "Changed.")
    lab.serve(root)  # a change upstream is only reported
    assert first.read_bytes() == mine
    assert not (root / "my-workbook" / first.name.replace(".ipynb", ".updated.ipynb")).exists()
    first.unlink()  # the learner deleted chapter 1: the page to open comes back, the rest is left alone
    lab.serve(root)
    assert first.exists() and len(started) == 3
