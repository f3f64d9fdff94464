"""Your progress, kept on your machine: which predictions and squares you tried, and which were right.

Every check of the workbook records what it saw here: :func:`labkit.check`, :func:`labkit.compare`,
the prediction widget (:func:`labkit.teaching.widgets.predict`), the capstone's
:func:`~labkit.teaching.capstone.check_bingo` (one record per square) and
:func:`~labkit.teaching.capstone.check_guard` (your guard, not the ones the chapter gives you to
break). :func:`progress` (also ``labkit.progress()``) reads it back: per chapter, what is done, what
was right first time, and where to return.

**Where.** One JSON file, :data:`PROGRESS_FILE` (``.labkit-progress.json``), in the kernel's working
directory, which Jupyter makes the notebook's own folder: for ``make lab``, your copy
``my-workbook/``. Nothing is sent anywhere. The file is never written inside the labkit repository
itself except under its ``my-workbook/`` or ``my-workbook-fr/`` (so running the project's notebooks, ``notebooks/`` and
``workbook/``, under the tests records nothing, and the repository stays as it was); see
:func:`progress_path`. ``LABKIT_PROGRESS=off`` records nothing anywhere; ``LABKIT_PROGRESS=DIR``
records in ``DIR`` (the same repository rule applies).

**Never in the way.** A check records after it has its verdict, and a record that cannot be made
(a file that is not JSON, a folder that cannot be written) changes nothing about the check: the
verdict is printed all the same. A file that cannot be read is kept aside as
``.labkit-progress.json.corrupt`` and a new one is started; :func:`progress` says so. Writes are
atomic: a new file is written beside the old one and renamed over it, so a crash leaves the old
file or the new one, never half of one.

Standard library only: importing this module costs nothing.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import html
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ..core.errors import InputError
from ._inputs import what as _what
from .i18n import _
from .i18n import chapter as _chapter
from .i18n import label as _label
from .i18n import notebook_path as _notebook_path
from .i18n import running_shell as _shell
from .layout import fit

__all__ = [
    "ENV",
    "FORMAT",
    "PROGRESS_FILE",
    "ChapterProgress",
    "Entry",
    "Progress",
    "progress",
    "progress_path",
    "record",
]

PROGRESS_FILE = ".labkit-progress.json"
"""The progress file's name, in the directory :func:`progress_path` chooses."""

ENV = "LABKIT_PROGRESS"
"""``off`` (or ``0``, ``no``, ``false``) records nothing; a directory records there instead of the kernel's
working directory."""

FORMAT = 1
"""The file's ``format`` field; a file of another format is left alone (kept aside, never misread)."""

_OFF = {"off", "0", "no", "false", "none"}
_LEARNER_COPIES = ("my-workbook", "my-workbook-fr")  # the only places in the repository that keep progress
_UNNAMED = "unnamed"
_problem: str | None = None  # the last record that could not be made, shown by progress()


# -- where -------------------------------------------------------------------------------------------


def _is_labkit_checkout(folder: Path) -> bool:
    try:
        text = (folder / "pyproject.toml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return bool(re.search(r"""^name\s*=\s*["']labkit["']""", text, re.MULTILINE)) and (folder / "labkit").is_dir()


def _repository_of(directory: Path) -> Path | None:
    """The labkit checkout ``directory`` is in (itself or a parent), or ``None``."""
    for folder in (directory, *directory.parents):
        if _is_labkit_checkout(folder):
            return folder
    return None


def progress_path(directory: str | os.PathLike[str] | None = None) -> Path | None:
    """The progress file checks record into, or ``None`` when nothing is recorded.

    The rule: the directory is ``directory`` if given, else ``$LABKIT_PROGRESS`` if it names one, else
    the kernel's working directory (a notebook's own folder in Jupyter). Inside a labkit repository
    (a folder whose ``pyproject.toml`` names the project ``labkit``, or any folder under it) only its
    ``my-workbook/`` (or the French ``my-workbook-fr/``) records: the repository's ``notebooks/``,
    ``workbook/`` and root never get a progress file, whoever runs them (nbval, ``make test``, an
    instructor). ``LABKIT_PROGRESS=off`` turns recording off everywhere.

    Raises:
        InputError: ``directory`` is neither ``None``, a ``str`` nor an ``os.PathLike`` of ``str``
            (one line, shown so by :func:`labkit.teaching.short_errors`).
    """
    if directory is not None and not isinstance(directory, (str, os.PathLike)) or isinstance(directory, bytes):
        raise InputError(
            _("progress needs a folder as a str or a Path (e.g. progress('my-workbook')), not {kind}").format(
                kind=_what(directory)
            )
        )
    setting = os.environ.get(ENV, "").strip()
    if setting.lower() in _OFF:
        return None
    folder = Path(directory) if directory is not None else Path(setting) if setting else Path.cwd()
    try:
        folder = folder.expanduser().resolve()
    except (OSError, RuntimeError):
        return None
    repository = _repository_of(folder)
    if repository is not None:
        inside = folder.relative_to(repository).parts
        if not inside or inside[0] not in _LEARNER_COPIES:
            return None
    return folder / PROGRESS_FILE


# -- which chapter, which cell ------------------------------------------------------------------------


def _cell_id(shell: Any) -> str | None:
    """The id of the cell being run (JupyterLab and VS Code send it with each execution), if known."""
    header: Any = None
    try:
        header = getattr(shell, "parent_header", None)
        if not header and getattr(shell, "kernel", None) is not None:
            header = shell.kernel.get_parent()
    except Exception:
        return None
    metadata = header.get("metadata", {}) if isinstance(header, dict) else {}
    cell = metadata.get("cellId") if isinstance(metadata, dict) else None
    return cell if isinstance(cell, str) and cell else None


_seen_in_run: dict[tuple[Any, Any], dict[str, int]] = {}  # (cell, execution count) -> label -> times recorded


def current_chapter() -> int | None:
    """The number of the chapter being run (``5`` for ``05_repetition_vs_progress.ipynb``), when the
    front end names the notebook or ``LABKIT_CHAPTER`` says it; ``None`` otherwise (a script, an appendix,
    nbconvert): :func:`labkit.teaching.i18n.chapter`."""
    return _chapter()


def _locate(path: str | None) -> Path | None:
    if path is None:
        return None
    candidates = [Path(path), Path.cwd() / Path(path).name]
    return next((p for p in candidates if p.is_file()), None)


_cells_cache: dict[Path, tuple[float, list[dict[str, Any]]]] = {}


def _cells(notebook: Path | None) -> list[dict[str, Any]]:
    """The notebook's cells as saved (read once per change of the file; ``[]`` when it cannot be read)."""
    if notebook is None:
        return []
    try:
        mtime = notebook.stat().st_mtime
        cached = _cells_cache.get(notebook)
        if cached is not None and cached[0] == mtime:
            return cached[1]
        cells = json.loads(notebook.read_text(encoding="utf-8")).get("cells", [])
        cells = cells if isinstance(cells, list) else []
    except (OSError, ValueError, AttributeError):
        return []
    _cells_cache[notebook] = (mtime, cells)
    return cells


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _section(cells: list[dict[str, Any]], cell_id: str | None) -> tuple[int | None, str]:
    """The cell's position (from 1) and the last heading above it, when the saved notebook holds the cell."""
    heading = ""
    for number, cell in enumerate(cells, start=1):
        if cell.get("cell_type") == "markdown":
            for line in _source(cell).splitlines():
                if line.startswith("#"):
                    heading = line.lstrip("#").strip()
        if cell_id is not None and cell.get("id") == cell_id:
            return number, heading
    return None, ""


def defined_in_exercise(name: str) -> bool | None:
    """Was class ``name`` written in a cell the chapter leaves to the learner (tagged ``exercise``)?

    ``None`` when the running notebook cannot be read or holds no cell defining it.
    """
    cells = _cells(_locate(_notebook_path(_shell())))
    pattern = re.compile(rf"^class\s+{re.escape(name)}\b", re.MULTILINE)
    for cell in cells:
        if cell.get("cell_type") == "code" and pattern.search(_source(cell)):
            tags = cell.get("metadata", {}).get("tags", []) if isinstance(cell.get("metadata"), dict) else []
            return "exercise" in tags
    return None


# -- the file ------------------------------------------------------------------------------------------


def _empty() -> dict[str, Any]:
    return {"format": FORMAT, "about": "labkit progress: kept on this machine, sent nowhere", "chapters": {}}


def _valid(data: object) -> bool:
    return (
        isinstance(data, dict)
        and data.get("format") == FORMAT
        and isinstance(data.get("chapters"), dict)
        and all(isinstance(c, dict) and isinstance(c.get("entries"), dict) for c in data["chapters"].values())
    )


def _read(path: Path) -> tuple[dict[str, Any], str | None]:
    """The file's data, and a note when it exists but cannot be used."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return _empty(), None
    except (OSError, UnicodeDecodeError) as exc:
        return _empty(), _("{name} could not be read ({error})").format(name=path.name, error=type(exc).__name__)
    try:
        data = json.loads(text)
    except ValueError:
        return _empty(), _("{name} is not valid JSON").format(name=path.name)
    if not _valid(data):
        return _empty(), _("{name} is not a labkit progress file of format {format}").format(
            name=path.name, format=FORMAT
        )
    return data, None


def _write(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` atomically: a temporary file in the same folder, then renamed over ``path``."""
    handle, temporary = tempfile.mkstemp(prefix=f"{PROGRESS_FILE}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=1, sort_keys=True, ensure_ascii=False)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat()


def record(
    kind: str,
    label: str,
    *,
    attempted: bool,
    right: bool,
    chapter: str | None = None,
    directory: str | os.PathLike[str] | None = None,
) -> Path | None:
    """Record one check: ``label`` (e.g. ``"finish bodies"``) was checked, with a guess or without, right or not.

    Called by the checks themselves; never raises (a problem is kept for :func:`progress` to show).

    Args:
        kind: ``"check"``, ``"compare"``, ``"widget"``, ``"bingo"`` or ``"guard"``.
        label: what was predicted; with the cell's id (when the front end sends it) it keys the
            record, so the same label in two cells is two predictions. A label recorded again in the
            same run of the same cell gets ``" (2)"``, ``" (3)"``...
        attempted: a guess was given (``...`` is no guess: the record says "not tried yet").
        right: the guess was right.
        chapter: the chapter to record under; by default the notebook's file name when the front
            end tells the kernel (``__vsc_ipynb_file__``, ``__session__``, ``JPY_SESSION_NAME``),
            else ``"unnamed"``.
        directory: where to record (default: the rule of :func:`progress_path`).

    Returns:
        The file written, or ``None`` when nothing was recorded.
    """
    global _problem
    try:
        path = progress_path(directory)
        if path is None:
            return None
        shell = _shell()
        notebook = _notebook_path(shell)
        name = chapter or (Path(notebook).name if notebook else _UNNAMED)
        cell = _cell_id(shell)
        run = (cell, getattr(shell, "execution_count", None)) if shell is not None else None
        shown = label
        if run is not None:
            counts = _seen_in_run.setdefault(run, {})
            counts[label] = counts.get(label, 0) + 1
            if counts[label] > 1:
                shown = f"{label} ({counts[label]})"
            if len(_seen_in_run) > 256:  # only the current cell's run matters
                for old in list(_seen_in_run)[:-1]:
                    _seen_in_run.pop(old, None)
        key = f"{cell}/{shown}" if cell else shown
        data, note = _read(path)
        problem = None
        if note is not None and path.exists():
            os.replace(path, path.with_name(PROGRESS_FILE + ".corrupt"))  # kept for the learner, not misread
            problem = _("{note}; it was kept as {kept} and a new file started").format(
                note=note, kept=f"{PROGRESS_FILE}.corrupt"
            )
        chapters = data["chapters"]
        entries = chapters.setdefault(name, {"entries": {}})["entries"]
        entry = entries.get(key)
        now = _now()
        if not isinstance(entry, dict):
            number, section = _section(_cells(_locate(notebook)), cell) if notebook else (None, "")
            entry = {
                "label": shown,
                "kind": kind,
                "cell": cell or "",
                "cell_number": number,
                "section": section,
                "attempts": 0,
                "right_first": None,
                "right": None,
                "first_seen": now,
                "order": len(entries) + 1,
            }
            entries[key] = entry
        if attempted:
            entry["attempts"] = int(entry.get("attempts") or 0) + 1
            if entry.get("right_first") is None:
                entry["right_first"] = bool(right)
            entry["right"] = bool(right)
            entry["last_tried"] = now
        _write(path, data)
        _problem = problem  # an earlier failure is over once a record is made
        return path
    except Exception as exc:  # a record is never worth a failed check
        _problem = _("the last check could not be recorded ({error}: {message})").format(
            error=type(exc).__name__, message=exc
        )
        return None


# -- reading it back ---------------------------------------------------------------------------------------


class Entry(NamedTuple):
    """One prediction or square as recorded.

    Attributes:
        key: the record's key: ``"<cell id>/<label>"``, or the label when the cell is not known.
        label: what was predicted, e.g. ``"status and ToolCall count"``, ``"bingo square RepeatedCall"``.
        kind: which check recorded it (``check``, ``compare``, ``widget``, ``bingo``, ``guard``).
        attempts: checks run with a guess (0: seen, never tried).
        right_first: the first guess was right (``None`` before any guess).
        right: the last guess was right (``None`` before any guess).
        where: the section heading above the cell, when known; else the cell (``"cell 14"``) or its id.
    """

    key: str
    label: str
    kind: str
    attempts: int
    right_first: bool | None
    right: bool | None
    where: str

    @property
    def done(self) -> bool:
        """Tried at least once."""
        return self.attempts > 0

    @property
    def to_return(self) -> bool:
        """Not tried yet, or the last guess was wrong."""
        return not self.done or not self.right

    def __str__(self) -> str:
        if not self.done:
            state = _("not tried yet")
        elif self.right:
            state = _("right first time") if self.right_first else _("right")
        else:  # the last guess is wrong; it may still have been right the first time
            state = _("right first time, but your last guess is not") if self.right_first else _("not right yet")
        return _("{label}: {state}").format(label=_label(self.label), state=state) + (
            f" ({self.where})" if self.where else ""
        )


class ChapterProgress(NamedTuple):
    """One chapter's records, in the order they were first made (or by cell, when known)."""

    chapter: str
    entries: tuple[Entry, ...]

    @property
    def done(self) -> tuple[Entry, ...]:
        return tuple(e for e in self.entries if e.done)

    @property
    def right_first(self) -> tuple[Entry, ...]:
        return tuple(e for e in self.entries if e.right_first)

    @property
    def to_return(self) -> tuple[Entry, ...]:
        """Where to return: predictions not tried yet, or whose last guess was wrong."""
        return tuple(e for e in self.entries if e.to_return)

    def summary(self) -> str:
        if not self.entries:
            return _("{chapter}: not started").format(chapter=self.chapter)
        return _("{chapter}: {done} of {entries} done, {right} right first time").format(
            chapter=self.chapter, done=len(self.done), entries=len(self.entries), right=len(self.right_first)
        )


def _tried(entry: Entry) -> str:
    return _("not tried yet") if not entry.done else _("not right yet")


def _where(entry: dict[str, Any]) -> str:
    number, section = entry.get("cell_number"), entry.get("section") or ""
    if section:  # the heading a learner sees; JupyterLab shows no cell numbers
        return _("under \u201c{section}\u201d").format(section=section)
    if isinstance(number, int):
        return _("cell {number}").format(number=number)
    cell = entry.get("cell") or ""
    return _("cell id {cell}").format(cell=cell) if cell else ""


def _entry(key: str, value: dict[str, Any]) -> Entry:
    return Entry(
        key,
        str(value.get("label", key)),
        str(value.get("kind", "")),
        int(value.get("attempts") or 0),
        value.get("right_first"),
        value.get("right"),
        _where(value),
    )


def _chapter_notebooks(folder: Path) -> list[str]:
    try:
        names = sorted(p.name for p in folder.glob("*.ipynb") if ".updated" not in p.name and p.is_file())
    except OSError:
        return []
    return names


@dataclass(frozen=True)
class Progress:
    """Your progress, per chapter: shown as text (``print``) and, in Jupyter, as a small table.

    Attributes:
        path: the progress file read (``None`` when recording is off here, see :func:`progress_path`).
        chapters: one :class:`ChapterProgress` per chapter notebook beside the file (those not
            started included) and per chapter recorded.
        note: why the file could not be used, or why nothing is recorded here; ``""`` otherwise.
    """

    path: Path | None
    chapters: tuple[ChapterProgress, ...]
    note: str = ""

    def chapter(self, name: str) -> ChapterProgress:
        """The chapter called ``name`` (its file name, e.g. ``"04_the_boundary_around_the_tool_body.ipynb"``,
        or the start of it, e.g. ``"04"``).

        Raises:
            KeyError: no such chapter.
        """
        for item in self.chapters:
            if item.chapter == name:
                return item
        for item in self.chapters:
            if item.chapter.startswith(name):
                return item
        raise KeyError(name)

    def __str__(self) -> str:
        lines = []
        if self.note:
            lines.append(_("note: {note}").format(note=self.note))
        if not self.chapters:
            lines.append(_("nothing recorded yet: run a chapter's check cells"))
        for item in self.chapters:
            lines.append(item.summary())
            for entry in item.to_return:
                lines.append(_("  return to: {entry}").format(entry=entry))
        return fit("\n".join(lines))  # wrapped at words to the output area (labkit.teaching.layout)

    def __repr__(self) -> str:
        done = sum(len(c.done) for c in self.chapters)
        return f"Progress(chapters={len(self.chapters)}, done={done}, path={str(self.path) if self.path else None!r})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        rows = []
        for item in self.chapters:
            back = "".join(
                "<li>"
                + _("{label}: {state}").format(label=html.escape(_label(e.label)), state=_tried(e))
                + (f" <span style='opacity:0.7'>({html.escape(e.where)})</span>" if e.where else "")
                + "</li>"
                for e in item.to_return
            )
            done = _("{done} of {entries}").format(done=len(item.done), entries=len(item.entries))
            done = done if item.entries else _("not started")
            where = f"<ul style='margin:0'>{back}</ul>" if back else _("nothing") if item.entries else ""
            rows.append(
                "<tr>"
                f"<td style='text-align:left'>{html.escape(item.chapter)}</td>"
                f"<td>{done}</td><td>{len(item.right_first)}</td>"
                f"<td style='text-align:left'>{where}</td>"
                "</tr>"
            )
        note = f"<p><i>{html.escape(self.note)}</i></p>" if self.note else ""
        if not rows:  # no chapter to show: the note (or "nothing recorded yet") alone, no empty table
            empty = _("nothing recorded yet: run a chapter's check cells")
            return note or f"<p><i>{html.escape(empty)}</i></p>"
        head = "".join(
            f"<th>{title}</th>" for title in (_("chapter"), _("done"), _("right first time"), _("return to"))
        )
        return (
            f"{note}<table class='labkit-progress'><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )


def progress(directory: str | os.PathLike[str] | None = None) -> Progress:
    """Your progress as recorded by the checks: per chapter, what is done, right first time, and where to return.

    Args:
        directory: where the progress file is (default: where the checks record, see
            :func:`progress_path`; in a notebook of ``my-workbook/``, that folder).

    Returns:
        A :class:`Progress`: printed, one line per chapter (``"04_...ipynb: 3 of 4 done, 2 right
        first time"``) and a ``return to:`` line per prediction not tried yet or whose last guess
        was wrong; as a cell's value in Jupyter, a table with the same columns. It only reads: it
        never writes or moves the file.

    Raises:
        InputError: ``directory`` is not a str or a path, or names no folder (a mistyped name is
            not "nothing recorded yet").
    """
    path = progress_path(directory)
    if directory is not None and not Path(directory).expanduser().is_dir():
        raise InputError(
            _("progress: {folder} is not a folder (give the folder of your notebooks, e.g. 'my-workbook')").format(
                folder=repr(os.fspath(directory))
            )
        )
    if path is None:
        setting = os.environ.get(ENV, "").strip().lower()
        why = (
            _("recording is off ({setting})").format(setting=f"{ENV}={setting}")
            if setting in _OFF and setting
            else _(
                "nothing is recorded here: in the labkit repository, your progress is kept only in your own copy"
                " (my-workbook/ or my-workbook-fr/)"
            )
        )
        return Progress(None, (), why)
    data, note = _read(path)
    kept = path.with_name(PROGRESS_FILE + ".corrupt")
    aside = (
        _("an earlier file that could not be read is kept as {name}").format(name=kept.name)
        if kept.exists() and not _problem
        else None
    )
    notes = [n for n in (note, _problem, aside) if n]
    recorded = {
        name: tuple(
            _entry(k, v)
            for k, v in sorted(
                chapter["entries"].items(),
                key=lambda kv: (kv[1].get("cell_number") or 10**6, kv[1].get("order") or 0),
            )
            if isinstance(v, dict)
        )
        for name, chapter in data["chapters"].items()
    }
    names = sorted(set(_chapter_notebooks(path.parent)) | set(recorded))
    chapters = tuple(ChapterProgress(name, recorded.get(name, ())) for name in names)
    return Progress(path, chapters, "; ".join(notes))
