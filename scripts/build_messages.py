"""Extract the teaching helpers' messages and keep their French catalogue and its compiled form current.

Usage:
    python scripts/build_messages.py            # update labkit/teaching/locale/fr/LC_MESSAGES/labkit.po and .mo
    python scripts/build_messages.py --check    # exit 1 if either would change, or a message has no French

Every string passed to ``_()`` in ``labkit/teaching/`` is a message (Babel's Python extractor,
keyword ``_``). The French catalogue keeps each message's translation; a new message gets an
empty entry (and ``--check`` fails, naming it, until it is translated); a message no longer in
the code is dropped. ``labkit.mo`` is compiled from the catalogue (gettext reads it at run time).
See :mod:`labkit.teaching.i18n`.
"""

from __future__ import annotations

import argparse
import datetime
import io
import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
SOURCE = Path("labkit") / "teaching"
CATALOGUE = SOURCE / "locale" / "fr" / "LC_MESSAGES" / "labkit.po"
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2), "pgettext": ((1, "c"), 2), "NP_": ((1, "c"), 2)}
"""The marking functions of :mod:`labkit.teaching.i18n`: a message, a table's message, a plural pair,
a message in a context, a table's message in a context."""

Message = str | tuple[str, str]
"""A message: its English, or (for :func:`~labkit.teaching.i18n.ngettext`) its singular and plural."""

Key = tuple[str | None, Message]
"""A message with its context (``None`` but for :func:`~labkit.teaching.i18n.pgettext`)."""


def messages(root: Path) -> dict[Key, list[tuple[str, int]]]:
    """Every message of the teaching helpers (with its context), with where it is used (file relative to
    the root, line)."""
    found: dict[Key, list[tuple[str, int]]] = {}
    for filename, line, message, _comments, context in extract_from_dir(
        root / SOURCE, method_map=[("**.py", "python")], keywords=KEYWORDS, comment_tags=()
    ):
        if isinstance(message, tuple):
            message = tuple(message[:2])  # (singular, plural)
        parts = (message,) if isinstance(message, str) else message
        if parts and all(isinstance(part, str) and part for part in parts):
            found.setdefault((context, message), []).append(((SOURCE / filename).as_posix(), line))
    return found


def catalogue(root: Path) -> tuple[Catalog, list[Key]]:
    """The French catalogue for the current code, and the messages it has no French for."""
    path = root / CATALOGUE
    old = None
    if path.exists():
        with path.open("rb") as handle:
            old = read_po(handle, locale="fr")
    fixed = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)  # no date in the header: the files only
    new = Catalog(
        locale="fr", project="labkit", domain="labkit", creation_date=fixed, revision_date=fixed
    )  # change with the messages
    missing = []
    for context, message in sorted(
        messages(root), key=lambda k: (k[1] if isinstance(k[1], str) else k[1][0], k[0] or "")
    ):
        key = message if isinstance(message, str) else message[0]  # Babel keys a plural by its singular
        known = old.get(key, context=context) if old is not None else None
        string: str | tuple[str, ...] = known.string if known is not None and not known.fuzzy else ""
        if isinstance(message, tuple) and not (isinstance(string, tuple) and len(string) == new.num_plurals):
            string = ("",) * new.num_plurals  # French has three forms in CLDR (one; many: a million; other)
        elif isinstance(message, str) and not isinstance(string, str):
            string = ""
        new.add(message, string, context=context)  # no source lines: moving code must not make it stale
        if not string or (isinstance(string, tuple) and not all(string)):
            missing.append((context, message))
    return new, missing


def _po_bytes(catalog: Catalog) -> bytes:
    out = io.BytesIO()
    write_po(out, catalog, width=0, omit_header=True, sort_output=True)
    return out.getvalue()


def _mo_bytes(catalog: Catalog) -> bytes:
    out = io.BytesIO()
    write_mo(out, catalog)
    return out.getvalue()


def build(root: Path, check: bool) -> list[str]:
    """Write (or, with ``check``, compare) the catalogue and its compiled form; return the problems."""
    catalog, missing = catalogue(root)
    problems = [  # a plural: each of its forms
        f"no French yet for: {message!r}" + (f" (context {context!r})" if context else "")
        for context, message in missing
    ]
    for path, data in (
        (root / CATALOGUE, _po_bytes(catalog)),
        ((root / CATALOGUE).with_suffix(".mo"), _mo_bytes(catalog)),
    ):
        if not path.exists() or path.read_bytes() != data:
            if check:
                problems.append(f"out of date: {path.relative_to(root)}")
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
                print(f"wrote {path.relative_to(root)}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if anything is out of date")
    parser.add_argument("--root", type=Path, default=ROOT, help="repository root (default: this checkout)")
    args = parser.parse_args(argv)
    problems = build(args.root.resolve(), args.check)
    for problem in problems:
        print(problem)
    return 1 if problems else 0  # written files are no problem: only what is stale (--check) or has no French


if __name__ == "__main__":
    sys.exit(main())
