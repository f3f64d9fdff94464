"""Generate the French edition (``notebooks-fr/``, ``workbook-fr/``) from the English chapters and their translations.

Usage:
    python scripts/build_french.py            # rewrite what is out of date
    python scripts/build_french.py --check    # exit 1 (and list the files) if anything would change
    python scripts/build_french.py stale      # list the translations whose English cell changed; exit 1 if any
    python scripts/build_french.py update     # add new English cells to the catalogues; mark changed ones fuzzy

One source of code, two languages of prose. The French notebooks are never
edited by hand: each is the English notebook of ``notebooks/`` with its prose
replaced, cell by cell, from a gettext catalogue, ``i18n/fr/NAME.po``:

* each entry's **context** (``msgctxt``) is the English cell's id, or
  ``ID#hint`` for a predict cell's nudge (``metadata["labkit"]["hint"]``);
* its **msgid** is the English text it translates, whole: that is the version
  it translates (gettext's own rule: a changed text is a new message), and a
  translator sees the source beside the French. Each entry also records the
  text's hash (``#. sha256: ...``, first 12 digits) so a diff shows which
  version it was;
* its **msgstr** is the French.

Code cells and the notebook's structure are the English ones, unchanged (a learner's
French notebook runs the very same code) but for their comments, which are prose: each is
translated from ``i18n/fr/comments.po`` (:data:`COMMENTS`, keyed by the English comment, one
catalogue for all chapters), found by Python's tokenizer so that no code changes; a comment with no
current French keeps its English after a visible mark (:data:`COMMENT_MISSING`,
:data:`COMMENT_STALE`), and ``stale`` names it. Their stored outputs are the French notebook's own,
since the teaching helpers speak French there (:mod:`labkit.teaching.i18n`), made by
``scripts/execute_notebooks.py`` on ``notebooks-fr/`` (``make notebooks`` runs it). A markdown
cell whose entry is missing, fuzzy or made for an older English text keeps the
current English text under a visible banner (:data:`STALE` or
:data:`MISSING`), never stale French shown as if current; ``stale`` lists them
and ``tests/test_french.py`` fails on any in a chapter that has a catalogue. A
chapter without a catalogue gets one banner at its top (:data:`UNTRANSLATED`).

``update`` is ``msgmerge``'s job done with Babel: it adds an empty entry for
each new English cell and, for one whose English changed, keeps the old
French, marks it ``fuzzy`` and records the old English in a comment above it
(so the translator sees what changed). Remove the ``fuzzy`` flag (and that
comment) once the French says what the new English says.

The edition's notebooks carry ``metadata["labkit"]["language"] = "fr"``. The
learner edition ``workbook-fr/`` is made from ``notebooks-fr/`` exactly as
``workbook/`` is made from ``notebooks/`` (``scripts/build_workbook.py``), with
French navigation, hint labels and README.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import hashlib
import io
import re
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

import nbformat
from babel.messages.catalog import Catalog, Message
from babel.messages.pofile import read_po, write_po

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_navigation as navigation
import build_workbook as workbook

ROOT = navigation.ROOT
LANGUAGE = "fr"
CATALOGUES = Path("i18n") / LANGUAGE
INSTRUCTOR = "notebooks-fr"
LEARNER = "workbook-fr"
LEARNER_COPY = "my-workbook-fr"
GLOSSARY = "glossary.md"
"""The glossary, bilingual already: the French edition carries a copy of ``workbook/glossary.md``, so its
chapters and README link to one beside them, in ``workbook-fr/`` as in the learner's ``my-workbook-fr/``."""
HINT = "#hint"

STALE = (
    "> 🇫🇷 **Traduction à mettre à jour** : le texte anglais de cette cellule a changé depuis sa traduction."
    " Voici le texte anglais actuel.\n\n"
)
MISSING = "> 🇫🇷 **Traduction manquante** : cette cellule n'est pas encore traduite. Voici le texte anglais.\n\n"
UNTRANSLATED = (
    "> 🇫🇷 **Chapitre pas encore traduit.** Le code est le même que dans l'édition anglaise ; le texte de ce"
    " chapitre est encore en anglais."
)
UNTRANSLATED_ID = "fr-untranslated"

WORDS = {"Chapter": "Chapitre", "Appendix": "Annexe", "Contents": "Sommaire", "Hint": "Indice", "Answer": "Réponse"}


def digest(text: str) -> str:
    """The first 12 hex digits of the SHA-256 of ``text`` (UTF-8): the version an entry translates."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def catalogue_path(root: Path, name: str) -> Path:
    return root / CATALOGUES / f"{Path(name).stem}.po"


def read_catalogue(path: Path) -> Catalog | None:
    if not path.exists():
        return None
    with path.open("rb") as handle:
        return read_po(handle, locale=LANGUAGE)


def write_catalogue(path: Path, catalog: Catalog) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        write_po(handle, catalog, width=0, omit_header=True, sort_output=False)


def sources(nb: nbformat.NotebookNode) -> list[tuple[str, str]]:
    """``(context, English text)`` of everything translatable in ``nb``, in order: each markdown cell
    (the navigation cell excepted: it is generated) and each predict cell's nudge."""
    found = []
    for cell in nb.cells:
        if cell.get("id") == navigation.NAV_ID:
            continue
        if cell.cell_type == "markdown":
            found.append((cell["id"], cell.source))
        elif cell.cell_type == "code" and workbook.nudge_of(cell):
            found.append((cell["id"] + HINT, cell.metadata["labkit"]["hint"]))
    return found


@dataclass(frozen=True)
class Stale:
    """A translatable text of a chapter with no current French: ``why`` is ``"changed"`` or ``"missing"``."""

    chapter: str
    context: str
    why: str
    comment: str = ""  # for a code comment: its English text (the cell is ``context``)

    def __str__(self) -> str:
        what = "its English text changed since it was translated" if self.why == "changed" else "no French yet"
        where = f"cell {self.context}" + (f", comment {_as_comment(self.comment)!r}" if self.comment else "")
        return f"{self.chapter} {where}: {what}"


def translation(catalog: Catalog | None, context: str, english: str) -> tuple[str | None, str]:
    """The current French for ``english`` and why there is none: ``(french, "")``, ``(None, "changed")``
    or ``(None, "missing")``. An entry is current when its msgid is ``english``, it has a msgstr, and it
    is not fuzzy."""
    if catalog is None:
        return None, "missing"
    entry = catalog.get(english, context=context)
    if entry is not None and entry.string and not entry.fuzzy:
        return entry.string, ""
    others = [m for m in catalog if m.context == context and m.id]
    return None, ("changed" if others or entry is not None and entry.fuzzy else "missing")


def stale_entries(root: Path) -> list[Stale]:
    """Every translatable text, in a chapter that has a catalogue, without current French: its prose,
    and its code comments (:data:`COMMENTS`)."""
    found = []
    comments = read_catalogue(root / COMMENTS)
    for path in _english(root):
        catalog = read_catalogue(catalogue_path(root, path.name))
        if catalog is None:
            continue
        nb = nbformat.read(path, as_version=4)
        for context, english in sources(nb):
            french, why = translation(catalog, context, english)
            if french is None:
                found.append(Stale(path.name, context, why))
        seen = set()
        for cell_id, english in code_comments(nb):
            if (cell_id, english) not in seen and comment_translation(comments, english)[0] is None:
                seen.add((cell_id, english))
                found.append(Stale(path.name, cell_id, comment_translation(comments, english)[1], english))
    return found


# -- code comments --------------------------------------------------------------------------------

COMMENTS = CATALOGUES / "comments.po"
"""The French of the code comments, one catalogue for every chapter: its msgid is the English comment
(a block of full-line comments is one text, its lines joined by newlines; the ``# `` left out), its
locations the chapters it appears in, no context (the same comment is translated once)."""

COMMENT_STALE = "🇫🇷 traduction à mettre à jour : "
COMMENT_MISSING = "🇫🇷 traduction manquante : "
"""Put before a comment's English in the French edition while it has no current French."""

PRAGMA = re.compile(r"(noqa|type:|fmt:|pragma:|isort:|ruff:|pyright:)", re.IGNORECASE)
"""A comment for a tool, not for a reader: never translated."""


@dataclass(frozen=True)
class Comment:
    """A comment of a code cell: rows ``first``..``last`` (0-based), from column ``column``; a full-line
    block of several rows is one comment; ``inline`` when code comes before it on its row."""

    first: int
    last: int
    column: int
    inline: bool
    text: str


def _comment_text(token: str) -> str:
    return token[1:].removeprefix(" ").rstrip()


def _as_comment(text: str) -> str:
    return "\n".join(f"# {line}".rstrip() for line in text.splitlines())


def comments_of(source: str) -> list[Comment]:
    """The comments of ``source`` a reader reads, in order (the tokenizer's, so a ``#`` in a string is
    code); an empty comment or a tool's pragma is not one. A source the tokenizer cannot read (an
    IPython magic) has none."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []
    lines = source.splitlines()
    found: list[Comment] = []
    for token in tokens:
        row, column = token.start[0] - 1, token.start[1]
        text = _comment_text(token.string)
        if not text or PRAGMA.match(text) or token.string.startswith("#!"):
            continue
        inline = bool(lines[row][:column].strip())
        last = found[-1] if found else None
        if not inline and last is not None and not last.inline and last.last == row - 1 and last.column == column:
            found[-1] = Comment(last.first, row, column, False, last.text + "\n" + text)
        else:
            found.append(Comment(row, row, column, inline, text))
    return found


def _code_sources(cell: nbformat.NotebookNode) -> list[str]:
    """The code a learner reads in a code cell: its source, its exercise skeleton, and (a predict
    cell) the learner edition's scaffold, whose ``# your guess`` is a comment too."""
    found = [cell.source]
    skeleton = cell.metadata.get("labkit", {}).get("skeleton")
    if isinstance(skeleton, str):
        found.append(skeleton)
    if "solution" in cell.metadata.get("tags", []):
        with contextlib.suppress(SystemExit):  # not a valid solution cell: build_workbook.py says so
            found.append(workbook.scaffold(cell.source))
    return found


def code_comments(nb: nbformat.NotebookNode) -> list[tuple[str, str]]:
    """``(cell id, English comment)`` of every comment of ``nb``'s code cells, in order."""
    return [
        (cell.get("id", ""), comment.text)
        for cell in nb.cells
        if cell.cell_type == "code"
        for source in _code_sources(cell)
        for comment in comments_of(source)
    ]


def comment_translation(catalog: Catalog | None, english: str) -> tuple[str | None, str]:
    """The current French for the comment ``english``, as :func:`translation` (no context)."""
    if catalog is None:
        return None, "missing"
    entry = catalog.get(english)
    if entry is not None and entry.string and not entry.fuzzy:
        return entry.string, ""
    return None, ("changed" if entry is not None and entry.fuzzy else "missing")


def french_code(source: str, catalog: Catalog | None) -> str:
    """``source`` with each comment in French from ``catalog``; a comment with no current French keeps
    its English after :data:`COMMENT_STALE` or :data:`COMMENT_MISSING`. Only comments change: the
    code's tokens, the lines' indentation and everything before an inline comment stay as they are."""
    found = comments_of(source)
    if not found:
        return source
    lines = source.splitlines()
    for comment in reversed(found):
        french, why = comment_translation(catalog, comment.text)
        if french is None:
            banner = COMMENT_STALE if why == "changed" else COMMENT_MISSING
            french = banner + comment.text
        before = lines[comment.first][: comment.column]
        if comment.inline:
            lines[comment.first] = before + _as_comment(" ".join(french.splitlines()))
        else:
            lines[comment.first : comment.last + 1] = [before + line for line in _as_comment(french).splitlines()]
    return "\n".join(lines) + ("\n" if source.endswith("\n") else "")


def update_comments(root: Path) -> Path:
    """Merge the comments of every English chapter into :data:`COMMENTS`, as ``update`` does for prose: a
    new comment gets an empty entry, or (when it is close to a comment no longer used, e.g. edited) that
    one's French marked ``fuzzy`` under the old English; one no longer used is dropped."""
    target = root / COMMENTS
    old = read_catalogue(target)
    where: dict[str, list[str]] = {}
    for path in _english(root):
        for _cell, english in code_comments(nbformat.read(path, as_version=4)):
            chapters = where.setdefault(english, [])
            if path.name not in chapters:
                chapters.append(path.name)
    unused = [m for m in (old or []) if m.id and m.string and m.id not in where]
    new = Catalog(locale=LANGUAGE, project="labkit", fuzzy=False)
    new.header_comment = "# French code comments of every chapter: see scripts/build_french.py."
    for english, chapters in where.items():
        message = Message(english, locations=[(name, None) for name in chapters])
        same = old.get(english) if old is not None else None
        if same is not None:
            message.string, message.flags = same.string, set(same.flags)
            if same.fuzzy:
                message.user_comments = list(same.user_comments)
        else:
            close = difflib.get_close_matches(english, [m.id for m in unused], n=1, cutoff=0.6)
            if close:
                earlier = next(m for m in unused if m.id == close[0])
                message.string, message.flags = earlier.string, {"fuzzy"}
                message.user_comments = previous_english(earlier.id)
        new[english] = message
    write_catalogue(target, new)
    return target


def french_guess(catalog: Catalog | None) -> str:
    """The scaffold's ``# your guess`` comment in French (the English while it has none)."""
    return comment_translation(catalog, workbook.GUESS)[0] or workbook.GUESS


def previous_english(text: str) -> list[str]:
    """The translator's comment lines recording the English a fuzzy entry's French was made for.

    (gettext's own place for it, ``#| msgid``, is written wrongly by Babel for a text of several
    lines, so it goes into a comment: ``previous English (sha256: ...):`` then the text, ``| `` first.)
    """
    return [f"previous English (sha256: {digest(text)}):", *(f"| {line}" for line in text.splitlines())]


def update_catalogue(root: Path, path: Path) -> Path:
    """Merge the English texts of notebook ``path`` into its catalogue (see the module's ``update``)."""
    target = catalogue_path(root, path.name)
    old = read_catalogue(target)
    new = Catalog(locale=LANGUAGE, project="labkit", fuzzy=False)
    new.header_comment = f"# French prose of {path.name}: see scripts/build_french.py."
    for context, english in sources(nbformat.read(path, as_version=4)):
        message = Message(english, context=context, auto_comments=[f"sha256: {digest(english)}"])
        if old is not None:
            same = old.get(english, context=context)
            if same is not None:
                message.string, message.flags = same.string, set(same.flags)
                if same.fuzzy:  # still waiting for its translator: keep what the old English was
                    message.user_comments = list(same.user_comments)
            else:
                earlier = next((m for m in old if m.context == context and m.id), None)
                if earlier is not None and earlier.string:
                    message.string = earlier.string
                    message.flags = {"fuzzy"}
                    message.user_comments = previous_english(earlier.id)
        new[english] = message  # Catalog.__setitem__ keys by (id, context) taken from the message
    write_catalogue(target, new)
    return target


def _english(root: Path) -> list[Path]:
    folder = root / "notebooks"
    return navigation.chapter_paths(folder) + navigation.appendix_paths(folder)


def french_notebook(
    nb: nbformat.NotebookNode,
    catalog: Catalog | None,
    previous: nbformat.NotebookNode | None = None,
    comments: Catalog | None = None,
) -> nbformat.NotebookNode:
    """``nb`` with its prose in French from ``catalog`` (banners where there is none), the same code
    with its comments in French from ``comments`` (:func:`french_code`; a chapter without a catalogue
    keeps its English comments).

    A code cell's outputs are the ones the French notebook stored for that very code (``previous``,
    the file as it is: the helpers speak French there, so its outputs are its own, made by
    ``scripts/execute_notebooks.py notebooks-fr``); a code cell that is new or changed gets the
    English outputs until the French notebook is executed again (nbval then says which differ)."""
    out = nbformat.reads(nbformat.writes(nb), as_version=4)  # a copy
    out.metadata.setdefault("labkit", {})["language"] = LANGUAGE
    stored = {c.get("id"): c for c in (previous.cells if previous is not None else []) if c.cell_type == "code"}
    for cell in out.cells:
        if cell.cell_type == "code" and catalog is not None:
            cell.source = french_code(cell.source, comments)
            labkit = cell.metadata.get("labkit", {})
            if isinstance(labkit.get("skeleton"), str):
                labkit["skeleton"] = french_code(labkit["skeleton"], comments)
        if cell.cell_type == "code" and cell.get("id") in stored and stored[cell["id"]].source == cell.source:
            cell.outputs = stored[cell["id"]].outputs
            cell.execution_count = stored[cell["id"]].get("execution_count")
            if "execution" in stored[cell["id"]].metadata:
                cell.metadata["execution"] = stored[cell["id"]].metadata["execution"]
        if cell.get("id") == navigation.NAV_ID or catalog is None:
            continue
        if cell.cell_type == "markdown":
            french, why = translation(catalog, cell["id"], cell.source)
            cell.source = french if french is not None else (STALE if why == "changed" else MISSING) + cell.source
        elif cell.cell_type == "code" and workbook.nudge_of(cell):
            french, _ = translation(catalog, cell["id"] + HINT, cell.metadata["labkit"]["hint"])
            if french is not None:
                cell.metadata["labkit"]["hint"] = french
    if catalog is None:
        banner = nbformat.v4.new_markdown_cell(UNTRANSLATED)
        banner["id"] = UNTRANSLATED_ID
        out.cells.insert(1, banner)
    return out


# -- navigation, contents and README in French ----------------------------------------------------


def _title(nb: nbformat.NotebookNode) -> str:
    """The title after the dash of the first ``# `` heading (``# Chapitre 1 — Titre``: ``Titre``)."""
    for cell in nb.cells:
        for line in cell.source.splitlines():
            if line.startswith("# "):
                return line.split("—", 1)[-1].strip()
    return ""


OBJECTIVES = "**Ce que vous saurez faire**"


def _objectives(nb: nbformat.NotebookNode) -> list[str]:
    """The bullets under the first cell's "Ce que vous saurez faire" (as build_navigation reads the English)."""
    first = nb.cells[0].source if nb.cells else ""
    if OBJECTIVES not in first:
        return []
    found: list[str] = []
    for line in first.split(OBJECTIVES, 1)[1].splitlines():
        if line.startswith("- "):
            found.append(line[2:].strip())
        elif line.startswith("  ") and found:
            found[-1] += " " + line.strip()
    return found


@dataclass(frozen=True)
class Entry:
    """A chapter or an appendix of the French edition, for its navigation."""

    name: str  # file name, the same in every edition
    label: str  # "Chapitre 1 — Titre", "Annexe A — Titre"
    short: str  # "1. Titre", "Annexe A. Titre"
    learn: tuple[str, ...] = ()  # its objectives, for the contents page


def _entries(notebooks: dict[str, nbformat.NotebookNode]) -> tuple[list[Entry], list[Entry]]:
    chapters, appendices = [], []
    for name, nb in notebooks.items():
        title = _title(nb)
        if name[:2].isdigit():
            number = int(name[:2])
            chapters.append(
                Entry(
                    name,
                    f"{WORDS['Chapter']} {number} — {title}",
                    f"{number}. [{title}]({name})",
                    tuple(_objectives(nb)),
                )
            )
        else:
            letter = name.removeprefix("appendix_")[:1].upper()
            appendices.append(
                Entry(
                    name,
                    f"{WORDS['Appendix']} {letter} — {title}",
                    f"- {WORDS['Appendix']} {letter}. [{title}]({name})",
                )
            )
    return chapters, appendices


def nav_source(chapters: list[Entry], appendices: list[Entry], name: str, contents: str) -> str:
    """The French navigation of ``name``: previous, contents, next (as ``build_navigation.nav_source``)."""
    parts = []
    if name in [c.name for c in chapters]:
        index = [c.name for c in chapters].index(name)
        if index > 0:
            parts.append(f"[← {chapters[index - 1].label}]({chapters[index - 1].name})")
        parts.append(f"[{WORDS['Contents']}]({contents})")
        after = chapters[index + 1 :] or appendices[:1]
        if after:
            parts.append(f"[{after[0].label} →]({after[0].name})")
    else:
        if chapters:
            parts.append(f"[← {chapters[-1].label}]({chapters[-1].name})")
        parts.append(f"[{WORDS['Contents']}]({contents})")
    return navigation.MARKER.replace("build_navigation.py", "build_french.py") + "\n\n---\n\n" + " · ".join(parts)


def contents_page(chapters: list[Entry], appendices: list[Entry]) -> str:
    lines = [
        "# Sommaire",
        "",
        "<!-- generated by scripts/build_french.py from the chapter notebooks, do not edit -->",
        "",
        "Lisez les chapitres dans l'ordre : chacun s'exécute de haut en bas et s'appuie sur le précédent.",
        "Dans chaque chapitre, vous prédisez comment une exécution va se terminer, vous la lancez, vous",
        "lisez ses événements et ses compteurs, puis vous vérifiez.",
        "",
    ]
    for chapter in chapters:
        lines += [chapter.short, *(f"   - {item}" for item in chapter.learn)]
    if appendices:
        lines += ["", "## Annexes", "", "Hors de l'ordre des chapitres : lisez-en une quand vous en avez besoin.", ""]
        lines += [a.short for a in appendices]
    lines += ["", "[English edition](../notebooks/00_contents.md)"]
    return "\n".join(lines) + "\n"


def readme(chapters: list[Entry], appendices: list[Entry], guess: str = workbook.GUESS) -> str:
    lines = [
        "# Le cahier d'exercices",
        "",
        "<!-- generated by scripts/build_french.py, do not edit -->",
        "",
        "Voici l'**édition apprenant** des chapitres, en français. Elle est faite des mêmes cellules de code",
        "que l'édition anglaise (`workbook/`) ; seul le texte change de langue. Le code, les noms d'API et",
        "les statuts (`Completed`, `RepeatedCall`...) restent en anglais.",
        "",
        "Dans chaque chapitre, avant chaque exécution, vous prédisez comment elle va s'arrêter et combien",
        "d'événements `ToolCall` elle va enregistrer. Chaque cellule de prédiction contient",
        f"`...  # {guess}` : remplacez `...` par votre réponse. En dessous, un **Indice** replié donne",
        "d'abord une piste, et la **Réponse** est repliée une fois de plus à l'intérieur. Chaque chapitre",
        "se termine, après ses questions et ses points clés, par des **Notes pour l'enseignant** repliées",
        "(les idées fausses courantes et des pistes de discussion) : lisez-les une fois le chapitre fini.",
        "",
        "## Commencer",
        "",
        "Travaillez dans **votre propre copie**, `my-workbook-fr/`. `make lab-fr` la crée à partir de",
        "`workbook-fr/` la première fois et ouvre son chapitre 1 ; git ne la suit pas, les tests ne la",
        "lisent jamais et aucune commande du projet ne l'écrase. Depuis un clone du dépôt (Python 3.11 ou",
        "plus récent, et `make`) :",
        "",
        "```sh",
        "make lab-fr              # crée .venv, installe labkit, crée my-workbook-fr/ une fois, ouvre son chapitre 1",
        "make update-workbook-fr  # les chapitres nouveaux ou modifiés, jamais par-dessus les vôtres",
        "```",
        "",
        "## Ordre de lecture",
        "",
        *(c.short for c in chapters),
    ]
    if appendices:
        lines += ["", "Hors de cet ordre, quand vous en avez besoin :", "", *(a.short for a in appendices)]
    lines += [
        "",
        "Le [glossaire](glossary.md) met en regard les termes du cours d'origine, en français, et",
        "ceux de ce cahier ; l'[aide-mémoire](../workbook/cheatsheet.md) (en anglais) tient sur une page.",
        "",
        "Un chapitre qui porte la mention « Chapitre pas encore traduit » ou une cellule marquée",
        "« Traduction à mettre à jour » montre le texte anglais actuel plutôt qu'une traduction périmée.",
    ]
    return "\n".join(lines) + "\n"


# -- the build ------------------------------------------------------------------------------------


def learner_french(nb: nbformat.NotebookNode, nav: str, comments: Catalog | None) -> nbformat.NotebookNode:
    """The learner edition of the French notebook ``nb``: ``build_workbook.learner_edition`` with French
    folds, and its scaffolds' ``# your guess`` in French."""
    edition = workbook.learner_edition(nb, nav, (WORDS["Hint"], WORDS["Answer"]))
    for cell in edition.cells:
        if cell.cell_type == "code" and "guess" in cell.metadata.get("tags", []):
            cell.source = french_code(cell.source, comments)
    return edition


def build(root: Path, check: bool) -> list[str]:
    english = _english(root)
    comments = read_catalogue(root / COMMENTS)
    notebooks = {
        p.name: french_notebook(
            nbformat.read(p, as_version=4),
            read_catalogue(catalogue_path(root, p.name)),
            nbformat.read(root / INSTRUCTOR / p.name, as_version=4) if (root / INSTRUCTOR / p.name).exists() else None,
            comments,
        )
        for p in english
    }
    chapters, appendices = _entries(notebooks)
    stale: list[str] = []
    instructor, learner = root / INSTRUCTOR, root / LEARNER
    for folder in (instructor, learner):
        folder.mkdir(exist_ok=True)
    if not check:  # as build_workbook.py does for workbook/: a learner's work found here is copied first
        for path in sorted(learner.glob("*.ipynb")):
            if workbook.holds_saved_work(nbformat.read(path, as_version=4), french_guess(comments)):
                kept = workbook.keep_saved_work(path, root, LEARNER_COPY)
                print(
                    f"{path.relative_to(root)} held saved work: copied to {kept.relative_to(root)} before the rebuild"
                )
    for name, nb in notebooks.items():
        nb = navigation.with_navigation(nb, nav_source(chapters, appendices, name, navigation.CONTENTS))
        _sync(instructor / name, nb, check, stale, root)
        edition = learner_french(nb, nav_source(chapters, appendices, name, workbook.README), comments)
        _sync(learner / name, edition, check, stale, root)
    navigation.sync_text(instructor / navigation.CONTENTS, contents_page(chapters, appendices), check, stale, root)
    navigation.sync_text(
        learner / workbook.README, readme(chapters, appendices, french_guess(comments)), check, stale, root
    )
    glossary = (root / "workbook" / GLOSSARY).read_text(encoding="utf-8")
    glossary = glossary.replace("](cheatsheet.md)", "](../workbook/cheatsheet.md)")  # the cheat sheet stays English
    navigation.sync_text(learner / GLOSSARY, glossary, check, stale, root)
    expected = set(notebooks) | {navigation.CONTENTS, workbook.README}
    for folder in (instructor, learner):
        for extra in sorted(folder.iterdir()):
            kept = expected | ({GLOSSARY} if folder == learner else set())
            if extra.is_file() and extra.name not in kept:  # a chapter that no longer exists
                stale.append(str(extra.relative_to(root)))
                if not check:
                    extra.unlink()
    return stale


def _sync(path: Path, nb: nbformat.NotebookNode, check: bool, stale: list[str], root: Path) -> None:
    if path.exists():
        navigation.sync(path, nb, check, stale, root)
        return
    stale.append(str(path.relative_to(root)))
    if not check:
        nbformat.write(nb, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", nargs="?", default="build", choices=["build", "stale", "update"])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if anything is out of date")
    parser.add_argument("--root", type=Path, default=ROOT, help="repository root (default: this checkout)")
    parser.add_argument(
        "notebooks", nargs="*", help="update: only these English notebooks (default: those with a catalogue)"
    )
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if args.action == "stale":
        found = stale_entries(root)
        for item in found:
            print(item)
        count = f"{len(found)} translation{'' if len(found) == 1 else 's'}"
        print(f"{count} to bring up to date" if found else "every translation is current")
        return 1 if found else 0
    if args.action == "update":
        paths = [Path(p).resolve() for p in args.notebooks] or [
            p for p in _english(root) if catalogue_path(root, p.name).exists()
        ]
        for path in paths:
            print(f"updated {update_catalogue(root, path).relative_to(root)}")
        print(f"updated {update_comments(root).relative_to(root)}")
        return 0
    stale = build(root, args.check)
    for name in stale:
        print(("out of date: " if args.check else "wrote ") + name)
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
