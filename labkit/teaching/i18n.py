"""The teaching helpers' learner-facing words in the notebook's language: English, or French.

The helpers (:func:`labkit.check`, :func:`labkit.compare`, the panels, the progress table, the
tables' and charts' labels) mark each learner-facing message with :func:`_` (:func:`ngettext`
for one whose words follow a number; :func:`pgettext` for a word another place uses differently;
:func:`N_` for a message kept in a module-level table, translated where it is shown, :func:`NP_` for
one shown through :func:`pgettext`); a check's label, recorded in English, is shown through
:func:`label`; the
standard :mod:`gettext` machinery looks it up in the catalogue of the language chosen below
(``labkit/teaching/locale/fr/LC_MESSAGES/labkit.po``, compiled to ``labkit.mo`` by
``scripts/build_messages.py``, which extracts the messages with Babel). A message without a
translation is shown in English. The console and labkit's exceptions stay English.

The language, first match wins:

1. ``LABKIT_LANGUAGE`` (``en`` or ``fr``), if set;
2. the notebook being run, when the front end names it (JupyterLab, VS Code): the language its
   metadata records (``metadata["labkit"]["language"]``, which ``scripts/build_french.py``
   writes into every French notebook), so a French chapter downloaded or copied anywhere still
   speaks French;
3. the working folder: inside a French edition's folder (``notebooks-fr/``, ``workbook-fr/``,
   ``my-workbook-fr/``) it is French. A Jupyter kernel, nbval and nbconvert all start in the
   notebook's own folder;
4. otherwise English.

A message that cites a chapter, ``"(chapter 6)"``, cites it as where the rule was taught: in a
chapter before it the citation names what that chapter adds instead, ``"(chapter 6 shows how model
calls and time are counted)"``, a pointer true even where the current chapter already shows the
rule at work (:func:`cited`, applied to every message :func:`_`, :func:`ngettext` and
:func:`pgettext` give).
The chapter being run, first match wins: ``LABKIT_CHAPTER`` (a number), if set; the notebook being
run, when the front end names it (``05_repetition_vs_progress.ipynb`` is chapter 5); otherwise it is
not known, and every citation stays as written.

Core-light: the standard library only.
"""

from __future__ import annotations

import functools
import gettext
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

__all__ = [
    "CHAPTER_ENV",
    "ENV",
    "FRENCH_FOLDERS",
    "LANGUAGES",
    "LOCALE",
    "NP_",
    "N_",
    "_",
    "chapter",
    "ahead",
    "cited",
    "decimal",
    "label",
    "language",
    "ngettext",
    "notebook_path",
    "pgettext",
    "running_shell",
]

ENV = "LABKIT_LANGUAGE"
CHAPTER_ENV = "LABKIT_CHAPTER"
LANGUAGES = ("en", "fr")
FRENCH_FOLDERS = frozenset({"notebooks-fr", "workbook-fr", "my-workbook-fr"})
LOCALE = Path(__file__).with_name("locale")
DOMAIN = "labkit"


def language() -> str:
    """``"fr"`` or ``"en"``: the language the helpers speak now (see the module's docstring)."""
    chosen = os.environ.get(ENV, "").strip().lower()
    if chosen in LANGUAGES:
        return chosen
    recorded = _notebook_language()
    if recorded is not None:
        return recorded
    try:
        parts = Path.cwd().parts
    except OSError:  # the working folder was removed
        return "en"
    return "fr" if FRENCH_FOLDERS.intersection(parts) else "en"


def running_shell() -> Any:
    """The IPython shell running this code, or ``None`` (a script); never imports IPython."""
    ipython = sys.modules.get("IPython")  # a running IPython has imported itself already
    if ipython is None:
        return None
    try:
        return ipython.get_ipython()
    except Exception:
        return None


def notebook_path(shell: Any) -> str | None:
    """The notebook being run, as the front end tells the kernel (VS Code, then Jupyter's session), if it does."""
    names = getattr(shell, "user_ns", {}) if shell is not None else {}
    for value in (names.get("__vsc_ipynb_file__"), names.get("__session__"), os.environ.get("JPY_SESSION_NAME")):
        if isinstance(value, str) and value.endswith(".ipynb"):
            return value
    return None


def _notebook_language() -> str | None:
    """The language the running notebook's metadata records, when the front end names the notebook."""
    path = notebook_path(running_shell())
    if path is None:
        return None
    try:
        return _recorded_language(path, os.stat(path).st_mtime)
    except OSError:  # the front end names a path the kernel cannot read
        return None


def _recorded_language(path: str, mtime: float) -> str | None:
    """``metadata["labkit"]["language"]`` of the notebook at ``path``."""
    recorded = _recorded(path, mtime).get("language")
    return recorded if recorded in LANGUAGES else None


@functools.lru_cache(maxsize=64)
def _recorded(path: str, mtime: float) -> dict[str, Any]:
    """``metadata["labkit"]`` of the notebook at ``path`` (read once per change of the file; ``{}`` when it
    cannot be read)."""
    try:
        with open(path, encoding="utf-8") as file:
            metadata = json.load(file).get("metadata", {})
        recorded = metadata.get("labkit", {})
    except (OSError, ValueError, AttributeError):
        return {}
    return recorded if isinstance(recorded, dict) else {}


@functools.cache
def _catalogue(lang: str) -> gettext.NullTranslations:
    if lang == "en":
        return gettext.NullTranslations()
    return gettext.translation(DOMAIN, localedir=LOCALE, languages=[lang], fallback=True)


def chapter() -> int | None:
    """The number of the chapter being run (``5`` for ``05_repetition_vs_progress.ipynb``): ``LABKIT_CHAPTER``
    if set, else the notebook the front end names, by its name or, for a renamed copy (``my-ch5.ipynb``), by
    the ``metadata["labkit"]["chapter"]`` every chapter carries; ``None`` when none says (a script, an
    appendix, nbconvert)."""
    chosen = os.environ.get(CHAPTER_ENV, "").strip()
    if chosen.isdigit():
        return int(chosen)
    path = notebook_path(running_shell())
    name = Path(path).name if path else ""
    if len(name) > 3 and name[:2].isdigit() and name[2] == "_":
        return int(name[:2])
    if path is None:
        return None
    try:
        recorded = _recorded(path, os.stat(path).st_mtime).get("chapter")
    except OSError:  # the front end names a path the kernel cannot read
        return None
    return recorded if isinstance(recorded, int) and not isinstance(recorded, bool) and recorded > 0 else None


def N_(message: str) -> str:  # noqa: N802 (gettext's own name for it)
    """``message`` itself: marks a message of a module-level table for extraction; pass it through
    :func:`_` where it is shown (the language is the one of that moment, not of the import)."""
    return message


_CITATION = re.compile(r"(?P<open>\(|, )(?:chapter|chapitre) (?P<n>\d+)(?=[),;])")
"""A chapter cited as where something is taught: ``(chapter 6)``, ``(chapter 4, step 3)``, ``(..., chapter 5)``;
the French catalogue writes ``chapitre``."""


_AHEAD: dict[int, str] = {
    2: N_("chapter 2 compares the four runtimes"),
    3: N_("chapter 3 shows what the host condition requires"),
    4: N_("chapter 4 goes through the guard's steps in order"),
    5: N_("chapter 5 shows how a signature is built"),
    6: N_("chapter 6 shows how model calls and time are counted"),
    7: N_("chapter 7 lists every status"),
    8: N_("chapter 8 shows how a run is observed"),
    9: N_("chapter 9 shows where a cancellation comes from"),
}
"""What each later chapter adds, said where a message cites it before it is reached: a chapter may
already show a rule at work (chapter 1 stops a run on a repetition) before the one that teaches it,
so "you will meet this" would not be true; what the later chapter adds is."""

_AHEAD_OTHER = N_("chapter {n} comes back to this")

_HERE = N_("this chapter")
"""A citation of the chapter being run: the learner is in it, so it is not sent to it by number."""


def ahead(n: int) -> str:
    """What chapter ``n`` adds, as a citation from a chapter before it says it (in the current language)."""
    return _catalogue(language()).gettext(_AHEAD.get(n, _AHEAD_OTHER)).format(n=n)


def cited(text: str, here: int | None = None) -> str:
    """``text`` with each chapter it cites after the chapter being run (``here``, by default :func:`chapter`)
    said as one still ahead, by what it adds: ``"(chapter 5)"`` becomes ``"(chapter 5 shows how a signature
    is built)"`` in chapter 1; the chapter being run is ``"(this chapter)"``; an earlier chapter, or an
    unknown ``here``, leaves the citation as it is."""
    if "chap" not in text:  # most messages cite no chapter: no need to find the one being run
        return text
    if here is None:
        here = chapter()
    if here is None:
        return text

    def one(found: re.Match[str]) -> str:
        n = int(found["n"])
        if n == here:
            return found["open"] + _catalogue(language()).gettext(_HERE)
        return found[0] if n < here else found["open"] + ahead(n)

    return _CITATION.sub(one, text)


def _(message: str) -> str:
    """``message`` in the current :func:`language` (itself when it has no translation), its chapter
    citations as :func:`cited` says them."""
    return cited(_catalogue(language()).gettext(message))


def ngettext(singular: str, plural: str, n: int) -> str:
    """``singular`` or ``plural`` for the number ``n``, in the current :func:`language` (French
    counts 0 and 1 as singular, English only 1), its chapter citations as :func:`cited` says them."""
    return cited(_catalogue(language()).ngettext(singular, plural, n))


def pgettext(context: str, message: str) -> str:
    """``message`` as used in ``context`` (one English word, two French ones: ``"permission"`` is a
    chart's row and, in a sentence, a check the guard asks), in the current :func:`language`."""
    return cited(_catalogue(language()).pgettext(context, message))


def decimal(value: float, spec: str = "g") -> str:
    """``value`` formatted with ``spec`` (``format(0.5, "g")``) for a sentence in the current :func:`language`:
    ``"0.5"`` in English, ``"0,5"`` in French (a decimal comma; a value inside code stays as Python writes it)."""
    text = format(value, spec)
    return text.replace(".", ",") if language() == "fr" else text


def NP_(context: str, message: str) -> str:  # noqa: N802 (after N_)
    """``message`` itself: :func:`N_` for a message shown through :func:`pgettext` with ``context``."""
    return message


LABEL = "label"
"""The :func:`pgettext` context of the labels a check shows and records (see :func:`label`)."""

_LABELS = frozenset(
    {
        # what labkit.check records (predict._check_label)
        NP_("label", "status"),
        NP_("label", "status and ToolCall count"),
        NP_("label", "status and events"),
        NP_("label", "status, ToolCall count and events"),
        # what the chapters' code passes to labkit.compare
        NP_("label", "Middleware for finish"),
        NP_("label", "admitted"),
        NP_("label", "ticket read"),
        NP_("label", "review finished"),
        NP_("label", "finish bodies"),
        NP_("label", "stop reason"),
        NP_("label", "bodies"),
        NP_("label", "exit code"),
        NP_("label", "exit codes"),
        NP_("label", "text kept"),
        NP_("label", "ModelCall events"),
        NP_("label", "finish Middleware"),
        NP_("label", "different ids"),
        NP_("label", "same id"),
        NP_("label", "chat spans"),
        NP_("label", "caller gets"),
        NP_("label", "recorded stop"),
        NP_("label", "reported as"),
        NP_("label", "late comments"),
        NP_("label", "comments written"),
        NP_("label", "policy consulted"),
        NP_("label", "preemptions"),
        NP_("label", "bodies started"),
        NP_("label", "found"),
        NP_("label", "bodies run by the SDK alone"),
        NP_("label", "same status"),
        NP_("label", "finished"),
        NP_("label", "Middleware count"),
        NP_("label", "tool spans"),
        NP_("label", "outcomes"),
        NP_("label", "consulted"),
        NP_("label", "wrote nothing"),
        NP_("label", "calls"),
        NP_("label", "one value"),
        NP_("label", "rows with text kept"),
        NP_("label", "rows with exit 0"),
    }
)
"""The labels said in English by the chapters and the checks: each is shown in the notebook's language."""

_LABEL_FORMS = (
    (re.compile(r"bingo square (?P<status>\w+)"), NP_("label", "bingo square {status}")),
    (re.compile(r"guard (?P<name>\w+)"), NP_("label", "guard {name}")),
    (re.compile(r"widget: mystery (?P<key>\w+) \((?P<agent>\w+)\)"), NP_("label", "widget: mystery {key} ({agent})")),
    (re.compile(r"widget: (?P<scenario>\S+) \((?P<agent>\w+)\)"), NP_("label", "widget: {scenario} ({agent})")),
)
"""Labels made from a name (a status, a guard class, a mystery or a scenario, an agent), which stays as it is."""

_AGAIN = re.compile(r"(?P<base>.*?)(?P<again> \(\d+\))?")


def label(text: str) -> str:
    """``text``, the label of a check (``labkit.compare``'s ``what``, an item of ``labkit.progress()``),
    in the current :func:`language`.

    The labels are recorded and compared in English (they are data: the progress file keys them);
    this is where they are shown. A label the chapters or the checks use (:data:`_LABELS`), or one
    made from a name (``"bingo square RepeatedCall"``, ``"guard TwoStepGuard"``, ``"widget: mystery C
    (harness)"``: the name is kept), is translated, with a repeat's ``" (2)"`` kept; any other label
    (a learner's own) is shown as given.
    """
    if not isinstance(text, str):
        return text
    match = _AGAIN.fullmatch(text)
    base, again = (match["base"], match["again"] or "") if match else (text, "")
    if base in _LABELS:
        return pgettext(LABEL, base) + again
    for form, template in _LABEL_FORMS:
        found = form.fullmatch(base)
        if found is not None:
            return pgettext(LABEL, template).format(**found.groupdict()) + again
    return text
