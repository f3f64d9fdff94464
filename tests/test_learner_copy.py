"""The learner's work is safe: my-workbook/ is theirs, the tests never read it, updates never overwrite it.

``scripts/lab.py`` makes ``my-workbook/`` from ``workbook/`` on first use and
``update`` brings new or changed chapters into it: over a file only if it is
still exactly what the script wrote there, otherwise beside it. The last test
saves a guess in the copy of a temp clone and runs the pytest commands of
``make test`` (read from ``make -n test``) there: they pass and the guess is
still there, byte for byte.

The tests after those check what ``make lab`` installs (the ``lab`` extra: what
both editions import, no test tool; the ``test`` extra on top of it, each
installed once, by the Makefile's stamps) and ``make lab PORT=N``: the port
reaches JupyterLab's command line, a bad value is a one-line error, a taken
port stops JupyterLab rather than moving it.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import nbformat
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from support import clone_checkout, make_env, make_lab_command

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
    out = subprocess.run(
        [sys.executable, str(LAB), "--root", str(root), "update"], capture_output=True, text=True, check=True
    ).stdout
    assert ".updated.ipynb: the new version of" in out and "yours is unchanged" in out
    assert chapters(root / "my-workbook")[0].read_bytes() == mine
    record = json.loads((root / "my-workbook" / lab.MANIFEST).read_text())
    assert set(record) == {"delivered", "written"}


def _make_test_pytest_commands(clone: Path) -> list[list[str]]:
    """The pytest command lines of `make test`, as make would run them in ``clone`` (``make -n``, nothing run)."""
    venv = Path(sys.executable).parent.parent
    listed = subprocess.run(
        ["make", "-n", "test", f"VENV={venv}"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout
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
    collected = subprocess.run(
        [*first, "--collect-only", "-q", "-p", "no:cacheprovider"], cwd=clone, env=env, capture_output=True, text=True
    )
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-3000:]
    assert "notebooks/01_" in collected.stdout and "my-workbook" not in collected.stdout
    # ... and its checks of the generated editions pass with the copy there
    unit = subprocess.run(
        [
            *first[: first.index("tests")],
            "tests/test_workbook_generated.py",
            "-q",
            "-p",
            "no:cacheprovider",
            "-k",
            "current or every_predict or learner_edition",
        ],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
    )
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


# --- `make lab`: what it installs, and on which port it serves ------------------------------------------

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
TEST_TOOLS = {"pytest", "pytest-xdist", "nbval", "hypothesis", "playwright"}


def extra(name: str) -> list[Requirement]:
    """The requirements of one of labkit's extras, its references to labkit's other extras expanded."""
    found = []
    for line in PYPROJECT["optional-dependencies"][name]:
        req = Requirement(line)
        if canonicalize_name(req.name) == "labkit":
            for other in sorted(req.extras):
                found += extra(other)
        else:
            found.append(req)
    return found


def installed_closure(reqs: list[Requirement]) -> set[str]:
    """Every distribution (canonical name) that installing ``reqs`` brings, by this environment's metadata."""
    seen: set[str] = set()
    todo = [(req, frozenset(req.extras)) for req in reqs]
    while todo:
        req, extras = todo.pop()
        if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in ("", *extras)):
            continue
        name = canonicalize_name(req.name)
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue  # not installed here: its own requirements are unknown, it still counts
        for line in requires:
            sub = Requirement(line)
            if sub.marker is None or any(sub.marker.evaluate({"extra": e}) for e in ("", *extras)):
                todo.append((Requirement(str(sub).split(";")[0]), frozenset(sub.extras)))
    return {name for name, _ in seen}


PLATFORM = {"pyodide"}
"""Modules a platform itself provides, imported only there: ``pyodide.ffi`` (the sync bridge, in a browser)."""


def third_party_imports() -> dict[str, set[str]]:
    """``{top-level module: where}`` for each non-stdlib import of labkit's modules and of both editions' code cells."""
    sources = [(p.relative_to(ROOT).as_posix(), p.read_text()) for p in sorted((ROOT / "labkit").rglob("*.py"))]
    for folder in ("workbook", "notebooks"):
        for path in chapters(ROOT / folder):
            cells = nbformat.read(path, as_version=4).cells
            sources += [(f"{folder}/{path.name}", c.source) for c in cells if c.cell_type == "code"]
    found: dict[str, set[str]] = {}
    for where, source in sources:
        kept = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
        for node in ast.walk(ast.parse(kept)):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else ([node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else [])
            )
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in {"labkit", "_labkit_console", *PLATFORM}:
                    found.setdefault(name, set()).add(where)
    return found


def provider(module: str, files: dict[Path, str]) -> str | None:
    """The distribution (canonical name) whose files hold ``module``'s package here; None if it is not installed.

    For a namespace package (``opentelemetry``, shared by several distributions) it is
    the one holding the first regular package below it (``opentelemetry.sdk.trace``: opentelemetry-sdk).
    """
    parts = module.split(".")
    spec = importlib.util.find_spec(parts[0])
    depth = 1
    while spec is not None and spec.origin is None and depth < len(parts):  # a namespace package: look further down
        depth += 1
        spec = importlib.util.find_spec(".".join(parts[:depth]))
    if spec is None or spec.origin is None:
        return None
    return files.get(Path(spec.origin).resolve())


def test_the_lab_extra_has_no_test_tool_and_the_test_extra_keeps_everything():
    lab_names = {canonicalize_name(r.name) for r in extra("lab")}
    test_own = {canonicalize_name(r.name) for r in map(Requirement, PYPROJECT["optional-dependencies"]["test"])} - {
        "labkit"
    }
    assert test_own >= TEST_TOOLS  # the rule below is not empty
    assert not lab_names & test_own, f"the lab extra installs test tools: {sorted(lab_names & test_own)}"
    assert not installed_closure(extra("lab")) & TEST_TOOLS  # not even through another package
    test_names = {canonicalize_name(r.name) for r in extra("test")}
    for other in ("lab", "live", "telemetry", "adapters"):
        missing = {canonicalize_name(r.name) for r in extra(other)} - test_names
        assert not missing, f"the test extra lost {other}'s {sorted(missing)}"
    assert "teach" not in PYPROJECT["optional-dependencies"]  # replaced by lab (nothing installed it): one name


def test_the_lab_extra_brings_every_package_the_workbook_and_labkit_import():
    """What `make lab` installs is enough to run both editions: each third-party import comes with the lab extra."""
    imports = third_party_imports()
    tops = {name.split(".")[0] for name in imports}
    assert {"pandas", "matplotlib", "ipywidgets", "opentelemetry", "agents"} <= tops  # the scan sees them
    brought = installed_closure([Requirement(r) for r in PYPROJECT["dependencies"]] + extra("lab"))
    assert {"jupyterlab", "ipykernel"} <= brought
    files = {
        Path(dist.locate_file(f)).resolve(): canonicalize_name(dist.metadata["Name"])
        for dist in metadata.distributions()
        for f in dist.files or []
        if f.suffix == ".py"
    }
    owners = {name: provider(name, files) for name in imports}
    assert owners["opentelemetry.sdk.trace"] == "opentelemetry-sdk"  # a namespace package is told apart
    missing = {name: sorted(imports[name])[:2] for name, owner in owners.items() if owner not in brought}
    assert not missing, f"imported but not brought by `pip install .[lab]` ({{module: where}}): {missing}"


def _fake_python(tmp_path: Path) -> tuple[Path, Path]:
    """A stand-in for python that logs its arguments and succeeds: what the Makefile would run, nothing installed."""
    log = tmp_path / "commands.log"
    fake = tmp_path / "venv" / "bin" / "python"
    fake.parent.mkdir(parents=True)
    for tool in ("python", "ruff", "mypy"):  # make test runs the gate (ruff, mypy) from the venv first
        stand_in = fake.with_name(tool)
        stand_in.write_text(
            f'#!/bin/sh\necho "{tool + " " if tool != "python" else ""}$*" >> {shlex.quote(str(log))}\n'
        )
        stand_in.chmod(0o755)
    return fake, log


def test_make_lab_installs_the_lab_extra_once_and_make_test_the_test_extra(tmp_path):
    """The Makefile's stamps, run for real with a python that only logs (in a temp dir with the Makefile)."""
    work = tmp_path / "repo"
    work.mkdir()
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy2(ROOT / name, work / name)
    fake, log = _fake_python(tmp_path)
    venv = fake.parent.parent

    def make(*targets: str) -> list[str]:
        log.write_text("")
        subprocess.run(
            ["make", *targets, f"VENV={venv}", f"PYTHON={fake}"],
            cwd=work,
            env=make_env(),
            check=True,
            capture_output=True,
        )
        return log.read_text().splitlines()

    def installs(lines: list[str]) -> list[str]:
        return [line.split()[-1] for line in lines if line.startswith("-m pip install --quiet -e")]

    first = make("lab")
    assert installs(first) == [".[lab]"] and first[-1] == "scripts/lab.py"
    assert make("lab") == ["scripts/lab.py"]  # installed once
    then = make("test")
    assert installs(then) == [".[test]"] and sum("-m pytest" in line for line in then) == 2
    assert make("lab") == ["scripts/lab.py"]  # the test install has the lab's packages
    assert installs(make("test")) == []
    # pyproject.toml changed since: each command reinstalls its own extra, only that
    old = (work / "pyproject.toml").stat().st_mtime - 60
    for stamp in venv.glob(".*stamp"):
        os.utime(stamp, (old, old))
    assert installs(make("lab")) == [".[lab]"]
    assert installs(make("test")) == [".[test]"]
    # a fresh venv: `make test` first, then `make lab` installs nothing
    for stamp in venv.glob(".*stamp"):
        stamp.unlink()
    assert installs(make("test")) == [".[test]"]
    assert make("lab") == ["scripts/lab.py"]


def test_make_lab_port_reaches_jupyterlabs_command_line(root, monkeypatch):
    assert make_lab_command()[1:] == ["scripts/lab.py"]  # no PORT: JupyterLab's own default
    assert make_lab_command(env=make_env(PORT="1234"))[1:] == ["scripts/lab.py"]  # a PORT of the environment's
    command = make_lab_command("PORT=8899")
    assert command[1:] == ["scripts/lab.py", "--port=8899"]
    started = []
    monkeypatch.setattr(lab, "write_settings", lambda: None)
    monkeypatch.setattr(lab.os, "execv", lambda path, command: started.append(command))
    monkeypatch.setattr(lab.os, "chdir", lambda path: None)
    assert lab.main([*command[2:], "--root", str(root)]) == 0
    (server,) = started
    assert server[:3] == [sys.executable, "-m", "jupyterlab"]
    assert "--ServerApp.port=8899" in server and "--ServerApp.port_retries=0" in server  # that port or none
    assert not any(word.startswith("--port") for word in server)
    lab.main(["--root", str(root)])
    assert not any("ServerApp.port" in word for word in started[-1])


@pytest.mark.parametrize("value", ["abc", "0", "65536", "-1", "88 99", "8899x", "1e3"])
def test_a_bad_port_is_a_one_line_error_before_anything_is_made(root, value):
    command = make_lab_command(f"PORT={value}")
    done = subprocess.run([*command, "--root", str(root)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert "PORT must be a number from 1 to 65535" in done.stderr and repr(value) in done.stderr
    assert not (root / "my-workbook").exists()


def test_a_port_that_is_taken_stops_jupyterlab_instead_of_moving_it(root, tmp_path):
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        env = {
            **os.environ,
            "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
            "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
            "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "user-settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
        }
        command = [*make_lab_command(f"PORT={port}"), "--root", str(root), "--no-browser", "--ServerApp.ip=127.0.0.1"]
        try:
            done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired as exc:  # it served on another port
            pytest.fail(f"JupyterLab did not stop on a taken port:\n{exc.stdout}\n{exc.stderr}")
    shown = done.stdout + done.stderr
    assert done.returncode != 0, shown
    assert f"The port {port} is already in use" in shown and "http://127.0.0.1:" not in shown


# -- what the learner does to the copy, then `update` -----------------------------------------------------------------
# Each action is applied to one chapter of the copy (or of workbook/: a new version upstream). Whatever the
# sequence, `update` keeps every byte the learner changed, puts the current version of every chapter somewhere in the
# copy, and says in one line per file what it did.

_ACTIONS = ("edit", "delete", "rename", "corrupt", "read-only", "checkpoint", "folder", "upstream")


def _act(root: Path, action: str, name: str, learners: dict[Path, bytes]) -> None:
    mine = root / "my-workbook" / name
    if action == "upstream":
        change_upstream(root / "workbook" / name, f"Changed upstream ({len(learners)}).")
        return
    if not mine.is_file() or mine in learners:  # act once on a file the script wrote
        return
    if action == "edit":
        learners[mine] = save_a_guess(mine) if "guess" in mine.read_text() else _append(mine)
    elif action == "delete":
        mine.unlink()
    elif action == "rename":
        renamed = mine.with_name(f"mine-{name}")
        mine.rename(renamed)
        learners[renamed] = renamed.read_bytes()
    elif action == "corrupt":  # a save cut short: not JSON any more
        mine.write_bytes(mine.read_bytes()[: len(mine.read_bytes()) // 2])
        learners[mine] = mine.read_bytes()
    elif action == "read-only":
        mine.chmod(0o444)
        learners[mine] = mine.read_bytes()
    elif action == "checkpoint":  # saved in JupyterLab, which keeps the previous save as a checkpoint
        checkpoint = mine.parent / ".ipynb_checkpoints" / name.replace(".ipynb", "-checkpoint.ipynb")
        checkpoint.parent.mkdir(exist_ok=True)
        checkpoint.write_bytes(mine.read_bytes())
        learners[checkpoint] = checkpoint.read_bytes()
        learners[mine] = _append(mine)
    elif action == "folder":  # a folder where a chapter was
        mine.unlink()
        mine.mkdir()
        (mine / "notes.txt").write_text("my notes")
        learners[mine / "notes.txt"] = b"my notes"


def _append(path: Path) -> bytes:
    nb = json.loads(path.read_text(encoding="utf-8"))
    nb["cells"].append({"cell_type": "markdown", "id": "mine", "metadata": {}, "source": "my own note"})
    path.write_text(json.dumps(nb, indent=1) + "\n", encoding="utf-8")
    return path.read_bytes()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(st.sampled_from(_ACTIONS), st.integers(0, 3)), min_size=1, max_size=8))
def test_whatever_the_learner_did_an_update_keeps_it_and_brings_every_chapter(tmp_path_factory, steps):
    root = tmp_path_factory.mktemp("copy")
    for source in chapters(ROOT / "workbook")[:4]:  # four chapters keep each example fast
        (root / "workbook").mkdir(exist_ok=True)
        shutil.copy(source, root / "workbook" / source.name)
    lab.update(root)
    names = [p.name for p in chapters(root / "workbook")]
    learners: dict[Path, bytes] = {}
    try:
        for action, index in steps:
            _act(root, action, names[index], learners)
        done = lab.update(root)
        for path, data in learners.items():
            assert path.read_bytes() == data, f"{path.name} was changed"
        copy = root / "my-workbook"
        held = {lab._hash(p.read_bytes()) for p in copy.glob("*.ipynb") if p.is_file()}
        changed = {names[index] for action, index in steps if action == "upstream"}
        for source in chapters(root / "workbook"):
            kept_as_theirs = (copy / source.name) in learners and source.name not in changed  # nothing new to bring
            assert kept_as_theirs or lab._hash(source.read_bytes()) in held, f"no current {source.name} in the copy"
        text = lab.report(done)
        assert len(text.splitlines()) == max(len(done), 1)
        for d in done:
            assert f"my-workbook/{d.target}: " in text and d.how != "failed"
        assert lab.update(root) == []  # and a second update has nothing left to do
    finally:
        for path in (root / "my-workbook").iterdir():
            path.chmod(0o755 if path.is_dir() else 0o644)


def test_a_deleted_chapter_is_put_back_and_the_report_says_so(root):
    lab.update(root)
    first = chapters(root / "my-workbook")[0]
    first.unlink()
    (done,) = lab.update(root)
    assert (done.target, done.how) == (first.name, "restored")
    assert first.read_bytes() == (root / "workbook" / first.name).read_bytes()
    assert f"my-workbook/{first.name}: put back" in lab.report([done])


def test_a_read_only_chapter_counts_as_the_learners(root):
    lab.update(root)
    first = chapters(root / "my-workbook")[0]
    kept = first.read_bytes()
    first.chmod(0o444)
    try:
        change_upstream(root / "workbook" / first.name, "Changed.")
        (done,) = lab.update(root)
        assert done.how == "beside" and "read-only" in lab.report([done]) and first.read_bytes() == kept
    finally:
        first.chmod(0o644)


def test_a_corrupt_chapter_is_kept_and_the_report_says_jupyterlab_cannot_open_it(root):
    lab.update(root)
    first = chapters(root / "my-workbook")[0]
    first.write_text('{"cells": [')
    change_upstream(root / "workbook" / first.name, "Changed.")
    (done,) = lab.update(root)
    assert done.how == "beside" and first.read_text() == '{"cells": ['
    assert "not a notebook JupyterLab can open" in lab.report([done])


def test_a_write_that_fails_changes_nothing_is_reported_and_is_tried_again(root, monkeypatch):
    lab.update(root)
    first, second = chapters(root / "my-workbook")[:2]
    new_first = change_upstream(root / "workbook" / first.name, "Changed.")
    change_upstream(root / "workbook" / second.name, "Changed too.")
    before = first.read_bytes()
    real = Path.write_bytes

    def full_disk(path: Path, data: bytes) -> int:
        if first.name in path.name:
            real(path, data[:10])  # a part written, then the disk is full
            raise OSError(28, "No space left on device")
        return real(path, data)

    monkeypatch.setattr(Path, "write_bytes", full_disk)
    done = {d.source: d for d in lab.update(root)}
    assert done[first.name].how == "failed" and done[second.name].how == "refreshed"
    assert first.read_bytes() == before and not list(first.parent.glob(".*labkit-tmp"))  # whole or not at all
    assert "NOT written (No space left on device)" in lab.report(list(done.values()))
    monkeypatch.setattr(Path, "write_bytes", real)
    (again,) = lab.update(root)
    assert (again.target, again.how) == (first.name, "refreshed") and first.read_bytes() == new_first


def test_update_exits_1_with_one_line_when_the_copy_cannot_be_made(root):
    (root / "my-workbook").write_text("a file where the copy goes")
    done = subprocess.run([sys.executable, str(LAB), "--root", str(root), "update"], capture_output=True, text=True)
    assert done.returncode == 1 and done.stdout == "" and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and "cannot make my-workbook/" in done.stderr
    assert (root / "my-workbook").read_text() == "a file where the copy goes"


@pytest.mark.parametrize("record", ["[]", '{"delivered": 1}', "not json", "folder"])
def test_a_broken_record_makes_every_file_count_as_the_learners(root, record):
    lab.update(root)
    first = chapters(root / "my-workbook")[0]
    mine = save_a_guess(first)
    manifest = root / "my-workbook" / lab.MANIFEST
    manifest.unlink()
    if record == "folder":
        manifest.mkdir()
    else:
        manifest.write_text(record)
    change_upstream(root / "workbook" / first.name, "Changed.")
    done = subprocess.run([sys.executable, str(LAB), "--root", str(root), "update"], capture_output=True, text=True)
    assert "Traceback" not in done.stderr and first.read_bytes() == mine
    assert ".updated.ipynb: the new version of" in done.stdout
    if record == "folder":  # the record cannot be written either: said, and exit 1
        assert done.returncode == 1 and f"{lab.MANIFEST}: could not be written" in done.stdout
    else:
        assert done.returncode == 0


@pytest.mark.parametrize("action", ["prepare", "serve"])
def test_a_file_where_the_copy_goes_is_one_line_not_already_current(root, action, monkeypatch):
    (root / "my-workbook").write_text("a file where the copy goes")
    started = []
    monkeypatch.setattr(lab.os, "execv", lambda *command: started.append(command))
    monkeypatch.setattr(lab, "write_settings", lambda *args: None)
    argv = ["--root", str(root), *([action] if action == "prepare" else [])]
    with contextlib.redirect_stderr(io.StringIO()) as err, contextlib.redirect_stdout(io.StringIO()) as out:
        assert lab.main(argv) == 1
    assert "already has the current version" not in out.getvalue() and started == []
    assert err.getvalue().count("\n") == 1 and "a file of that name is in" in err.getvalue()
    assert (root / "my-workbook").read_text() == "a file where the copy goes"


def test_an_update_whose_reader_has_left_ends_quietly_with_the_copy_made(root):
    read, write = os.pipe()
    os.close(read)  # the reader left before the first line (`make update-workbook | head -0`)
    try:
        done = subprocess.run(
            [sys.executable, str(LAB), "--root", str(root), "update"], stdout=write, stderr=subprocess.PIPE, text=True
        )
    finally:
        os.close(write)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert [p.name for p in chapters(root / "my-workbook")] == [p.name for p in chapters(root / "workbook")]
