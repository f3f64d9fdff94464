"""The learner's own copy of the workbook, and JupyterLab opened on its chapter 1.

Usage:
    python scripts/lab.py                 # make my-workbook/ on first use, start JupyterLab on chapter 1
    python scripts/lab.py --port 8899     # the same on port 8899, and fail if it is taken (`make lab PORT=8899`)
    python scripts/lab.py serve ARGS...   # the same, ARGS passed to jupyter lab (--flag=value)
    python scripts/lab.py update          # bring new or changed chapters from workbook/ into my-workbook/
    python scripts/lab.py prepare         # make my-workbook/ and the JupyterLab settings, start nothing (Binder)
    python scripts/lab.py --language fr   # the French edition: my-workbook-fr/ from workbook-fr/ (`make lab-fr`)

``workbook/`` is the learner edition as the project ships it: generated from
``notebooks/``, tracked, and checked by ``make test``. A learner never works
in it. ``my-workbook/`` is the learner's copy: untracked (``.gitignore``),
made from ``workbook/`` the first time it is missing, never read by the
tests, and never overwritten:

* ``update`` writes a file only where nothing is, or over a file that is
  still byte-for-byte what this script wrote there (so nothing of the
  learner's is in it). A chapter the learner has changed stays as it is;
  the new version goes beside it as ``NAME.updated.ipynb`` (then
  ``NAME.updated-2.ipynb``, ... if that one was changed too). A read-only
  file counts as the learner's; a chapter gone from the copy (deleted or
  renamed) is put back; a file that cannot be written is reported and
  tried again next time (``update`` then exits 1). Every file written is
  written whole or not at all.
* What was delivered is recorded in ``my-workbook/.labkit-copy.json``: the
  hash of each ``workbook/`` file last delivered (so an unchanged chapter is
  never delivered twice) and the hash of each file written.

JupyterLab starts from the repository root (the learner can read ``labkit/``),
its default URL is chapter 1 of the copy, so the address it prints opens that
chapter, and the Jupyter news question and update check are turned off
(``--LabApp.news_url=None`` plus a settings override, see :func:`write_settings`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKBOOK = "workbook"
COPY = "my-workbook"
MANIFEST = ".labkit-copy.json"
UPDATE_COMMAND = "make update-workbook"

EDITIONS = {
    "en": ("workbook", "my-workbook", "make update-workbook"),
    "fr": ("workbook-fr", "my-workbook-fr", "make update-workbook-fr"),
}
"""Each language's learner edition, the learner's copy of it, and the command that updates the copy."""


def choose_language(language: str) -> None:
    """Make every function of this script work on ``language``'s edition and copy (:data:`EDITIONS`)."""
    global WORKBOOK, COPY, UPDATE_COMMAND
    WORKBOOK, COPY, UPDATE_COMMAND = EDITIONS[language]


SETTINGS_OVERRIDES = {
    # "Would you like to get notified about official Jupyter news?" is asked while fetchNews is "none"
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
}
"""JupyterLab setting defaults written by :func:`write_settings` (plugin id -> settings)."""

SERVER_FLAGS = [
    "--LabApp.news_url=None",  # no request to the Jupyter news feed
    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
]


def chapter_one(root: Path = ROOT) -> str:
    """The file name of the first chapter of the learner edition (``workbook/NN_*.ipynb``, lowest NN)."""
    chapters = sorted((root / WORKBOOK).glob("[0-9][0-9]_*.ipynb"))
    if not chapters:
        raise SystemExit(f"no chapter in {root / WORKBOOK}: run `make notebooks` first")
    return chapters[0].name


def default_url(root: Path = ROOT) -> str:
    """The JupyterLab path of chapter 1 of the learner's copy, e.g. ``/lab/tree/my-workbook/01_....ipynb``."""
    return f"/lab/tree/{COPY}/{chapter_one(root)}"


def _hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _sources(root: Path) -> list[Path]:
    """The files of the learner edition that belong in the copy: chapters, README.md, glossary.md."""
    folder = root / WORKBOOK
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in {".ipynb", ".md"})


def _beside(name: str, n: int) -> str:
    stem, dot, suffix = name.rpartition(".")
    tag = "updated" if n == 1 else f"updated-{n}"
    return f"{stem}.{tag}.{suffix}" if dot else f"{name}.{tag}"


@dataclass(frozen=True)
class Delivery:
    """One file of ``workbook/`` brought into the copy: ``source`` name, ``target`` name written, ``how``."""

    source: str
    target: str
    how: str  # "new" (nothing was there), "restored" (it had gone from the copy), "refreshed" (over an untouched
    # copy), "beside" (next to the learner's), "failed" (could not be written: nothing changed, tried again next time)
    note: str = ""  # why it failed, or what is wrong with the learner's file it went beside


def _load(copy: Path) -> dict:
    path = copy / MANIFEST
    if path.exists():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data.get("delivered"), dict) and isinstance(data.get("written"), dict):
                return data
        except (OSError, ValueError, AttributeError):  # unreadable (a folder of that name), not JSON, not a record
            pass
    return {"delivered": {}, "written": {}}  # no record: every file in the copy counts as the learner's


def pending(root: Path = ROOT) -> list[str]:
    """Names of the ``workbook/`` files that changed (or appeared) since they were last delivered to the copy."""
    copy = root / COPY
    delivered = _load(copy)["delivered"]
    return [p.name for p in _sources(root) if delivered.get(p.name) != _hash(p.read_bytes())]


def update(root: Path = ROOT) -> list[Delivery]:
    """Bring every new or changed ``workbook/`` file into ``my-workbook/`` without overwriting the learner's work.

    Creates ``my-workbook/`` if it is missing. A file is written only where no
    file is, or over a file whose bytes are exactly what this function wrote
    there last and that is not read-only; otherwise the next free
    ``NAME.updated[-N].ext`` is used. A chapter delivered before that has gone
    from the copy (deleted, renamed) is written again where it was. Files the
    learner added or that left ``workbook/`` are never touched. Each file is
    written whole or not at all (a temporary file, then a rename), so a full
    disk or a denied write leaves the copy as it was.

    Returns:
        What was written or could not be, in name order (empty when the copy is current).

    Raises:
        OSError: ``my-workbook/`` cannot be made (a file of that name is there, no permission).
    """
    copy = root / COPY
    copy.mkdir(exist_ok=True)
    record = _load(copy)
    done: list[Delivery] = []
    for source in _sources(root):
        data = source.read_bytes()
        digest = _hash(data)
        if record["delivered"].get(source.name) == digest and (
            (copy / source.name).is_file() or _holds(copy, source.name, digest)
        ):
            continue
        restoring = source.name in record["delivered"] and not (copy / source.name).is_file()
        n = 0
        while True:
            target = source.name if n == 0 else _beside(source.name, n)
            path = copy / target
            if not path.exists():
                how = ("restored" if restoring else "new") if n == 0 else "beside"
                break
            try:
                current = _hash(path.read_bytes())
                writable = path.stat().st_mode & 0o222 != 0
            except OSError:  # a folder of that name, an unreadable file: not ours to replace
                n += 1
                continue
            if current == digest:  # this version is already there
                how = ""
                break
            if writable and record["written"].get(target) == current:  # ours, untouched since: nothing of theirs
                how = "refreshed" if n == 0 else "beside"
                break
            n += 1
        if how:
            try:
                _write_whole(path, data)
            except OSError as exc:
                done.append(Delivery(source.name, target, "failed", exc.strerror or str(exc)))
                continue  # not recorded as delivered: the next update tries again
            note = _unreadable(copy / source.name, source.name) if how == "beside" else ""
            done.append(Delivery(source.name, target, how, note))
        record["written"][target] = digest
        record["delivered"][source.name] = digest
    manifest = json.dumps(record, indent=1, sort_keys=True) + "\n"
    try:
        _write_whole(copy / MANIFEST, manifest.encode("utf-8"))
    except OSError as exc:
        done.append(Delivery(MANIFEST, MANIFEST, "failed", exc.strerror or str(exc)))
    return done


def _holds(copy: Path, name: str, digest: str) -> bool:
    """Whether one of the ``NAME.updated[-N]`` files beside ``name`` in the copy is this very version."""
    n = 1
    while (copy / _beside(name, n)).exists():
        try:
            if _hash((copy / _beside(name, n)).read_bytes()) == digest:
                return True
        except OSError:
            pass
        n += 1
    return False


def _write_whole(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all: a temporary file beside it, then a rename over it."""
    temporary = path.with_name(f".{path.name}.labkit-tmp")
    try:
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)
        raise


def _unreadable(path: Path, name: str) -> str:
    """Why the learner's ``path`` is not a notebook JupyterLab can open, or ``""`` (also for other files)."""
    if not name.endswith(".ipynb") or not path.is_file():
        return ""
    if path.stat().st_mode & 0o222 == 0:
        return "yours is read-only, so it was left as it is"
    try:
        json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        return f"yours is not a notebook JupyterLab can open ({type(exc).__name__}: {str(exc)[:80]})"
    return ""


def report(done: list[Delivery]) -> str:
    """One line per file of ``done``, saying what was done to it and that the learner's own files are unchanged."""
    if not done:
        return f"{COPY}/ already has the current version of every chapter."
    lines = []
    for d in done:
        if d.how == "failed" and d.target == MANIFEST:
            lines.append(
                f"  {COPY}/{MANIFEST}: could not be written ({d.note}); the next update counts every file as yours"
            )
        elif d.how == "failed":
            lines.append(f"  {COPY}/{d.target}: NOT written ({d.note}); nothing of yours changed, update again later")
        elif d.how == "beside":
            note = f"; {d.note}" if d.note else ""
            lines.append(
                f"  {COPY}/{d.target}: the new version of {d.source}, beside your copy (yours is unchanged{note})"
            )
        elif d.how == "refreshed":
            lines.append(f"  {COPY}/{d.target}: updated (you had not changed it)")
        elif d.how == "restored":
            lines.append(f"  {COPY}/{d.target}: put back (it had gone from your copy; your other files are unchanged)")
        else:
            lines.append(f"  {COPY}/{d.target}: added")
    return "\n".join(lines)


def write_settings(app_settings_dir: Path | None = None) -> Path:
    """Write :data:`SETTINGS_OVERRIDES` as ``overrides.d/labkit.json`` in JupyterLab's application settings dir.

    JupyterLab (jupyterlab_server) reads ``<app settings dir>/overrides.d/*.json``
    as setting defaults; the dir is ``<app dir>/settings`` of the Python
    environment that runs JupyterLab (``.venv`` for ``make lab``, the
    image's environment on Binder). ``overrides.json`` beside it stays the
    user's. Returns the file written.
    """
    if app_settings_dir is None:
        from jupyterlab.commands import get_app_dir  # only where JupyterLab is installed

        app_settings_dir = Path(get_app_dir()) / "settings"
    path = app_settings_dir / "overrides.d" / "labkit.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(SETTINGS_OVERRIDES, indent=2) + "\n", encoding="utf-8")
    return path


def prepare(root: Path = ROOT) -> list[Delivery]:
    """Make the copy if it is missing (never touching an existing one) and write the JupyterLab settings."""
    done = update(root) if not (root / COPY).is_dir() else []  # a file of that name: update says it cannot
    write_settings()
    return done


def parse_port(text: str) -> int:
    """The port ``make lab PORT=...`` asked for, as a number from 1 to 65535.

    Raises:
        ValueError: anything else, with a one-line message naming the value given.
    """
    value = text.strip()
    if value.isascii() and value.isdigit() and 1 <= int(value) <= 65535:
        return int(value)
    raise ValueError(f"PORT must be a number from 1 to 65535 (e.g. `make lab PORT=8899`), not {text!r}")


def port_flags(port: int) -> list[str]:
    """The ``jupyter lab`` flags for a chosen port: that port or none (no retry on the next ones).

    A port is chosen to be reached from elsewhere (a forwarded or published port), so
    JupyterLab's habit of moving to a nearby free port would print an address that
    does not get there: it stops instead, saying the port is in use.
    """
    return [f"--ServerApp.port={port}", "--ServerApp.port_retries=0"]


def server_command(root: Path = ROOT, extra: list[str] | None = None, port: int | None = None) -> list[str]:
    """The ``jupyter lab`` command line: root dir, chapter 1 as default URL, no news, ``port``; ``extra`` appended."""
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.default_url={default_url(root)}",
        *SERVER_FLAGS,
    ]
    if port is not None:
        command += port_flags(port)
    if hasattr(os, "getuid") and os.getuid() == 0:  # containers and CI machines run as root; a learner does not
        command.append("--allow-root")
    return command + list(extra or [])


def serve(root: Path = ROOT, extra: list[str] | None = None, port: int | None = None) -> None:
    """Make the copy on first use (or say which files have updates), then become the JupyterLab server."""
    if not (root / COPY).is_dir():
        done = prepare(root)
        print(f"Made your copy of the workbook in {COPY}/ (work there; it is yours and never overwritten):")
        print(report(done))
    elif not (root / COPY / chapter_one(root)).exists():  # the page to open is missing: adding it risks nothing
        write_settings()
        print(f"Brought {COPY}/ up to date (nothing you changed was overwritten):")
        print(report(update(root)))
    else:
        write_settings()
        waiting = pending(root)
        if waiting:
            print(f"{WORKBOOK}/ has new or changed files since your copy was made: {', '.join(waiting)}.")
            print(f"`{UPDATE_COMMAND}` brings them into {COPY}/ and never overwrites a file you changed.")
    print(f"JupyterLab opens {COPY}/{chapter_one(root)}: use the address it prints below.", flush=True)
    command = server_command(root, extra, port)
    os.chdir(root)
    os.execv(command[0], command)  # the server takes this process over: Ctrl+C and its PID are the server's


def _cannot(exc: OSError, root: Path) -> str:
    """What could not be written, in one line: a file where the copy's folder goes is said so."""
    if isinstance(exc, FileExistsError) and Path(exc.filename or "") == root / COPY:
        return f"cannot make {COPY}/: a file of that name is in {root}; rename or move it"
    where = exc.filename or root / COPY
    return f"cannot make {COPY}/ or write {where} ({exc.strerror or exc})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--root", type=Path, default=ROOT, help="repository root (default: this checkout)")
    parser.add_argument("--port", help="serve on this port, 1 to 65535 (`make lab PORT=N`); fail if it is taken")
    parser.add_argument("--language", default="en", choices=sorted(EDITIONS), help="the edition (default: en)")
    parser.add_argument("action", nargs="?", default="serve", choices=["serve", "update", "prepare"])
    args, extra = parser.parse_known_args(argv)
    choose_language(args.language)
    root = args.root.resolve()
    port = None
    if args.port is not None:
        try:
            port = parse_port(args.port)
        except ValueError as exc:  # one line, before anything is made or started
            print(f"scripts/lab.py: {exc}", file=sys.stderr)
            return 2
        if args.action != "serve":
            parser.error(f"--port only goes with serve, not {args.action}")
    if args.action == "update":
        try:
            done = update(root)
        except OSError as exc:  # the copy's folder itself cannot be made
            print(f"scripts/lab.py: {_cannot(exc, root)}; nothing was written", file=sys.stderr)
            return 1
        print(report(done))
        return 1 if any(d.how == "failed" for d in done) else 0
    if extra and args.action != "serve":
        parser.error(f"unrecognised arguments: {' '.join(extra)}")
    try:
        if args.action == "prepare":
            print(report(prepare(root)))
            return 0
        serve(root, extra, port)
    except OSError as exc:  # the copy's folder or JupyterLab's settings cannot be written
        print(f"scripts/lab.py: {_cannot(exc, root)}; nothing was started", file=sys.stderr)
        return 1
    return 0  # not reached: serve() replaces this process


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `make update-workbook | head`: the reader left; what was done is done
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
