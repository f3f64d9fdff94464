"""The teaching helpers' learner-facing words in the notebook's language: English, or French.

The helpers (:func:`labkit.check`, :func:`labkit.compare`, the panels, the progress table, the
tables' and charts' labels) mark each learner-facing message with :func:`_`; the standard
:mod:`gettext` machinery looks it up in the catalogue of the language chosen below
(``labkit/teaching/locale/fr/LC_MESSAGES/labkit.po``, compiled to ``labkit.mo`` by
``scripts/build_messages.py``, which extracts the messages with Babel). A message without a
translation is shown in English. The console and labkit's exceptions stay English.

The language, first match wins:

1. ``LABKIT_LANGUAGE`` (``en`` or ``fr``), if set;
2. the working folder: inside a French edition's folder (``notebooks-fr/``, ``workbook-fr/``,
   ``my-workbook-fr/``) it is French. A Jupyter kernel, nbval and nbconvert all start in the
   notebook's own folder, so a French notebook speaks French wherever it runs;
3. otherwise English.

Core-light: the standard library only.
"""

from __future__ import annotations

import functools
import gettext
import os
from pathlib import Path

__all__ = ["ENV", "FRENCH_FOLDERS", "LANGUAGES", "LOCALE", "_", "language"]

ENV = "LABKIT_LANGUAGE"
LANGUAGES = ("en", "fr")
FRENCH_FOLDERS = frozenset({"notebooks-fr", "workbook-fr", "my-workbook-fr"})
LOCALE = Path(__file__).with_name("locale")
DOMAIN = "labkit"


def language() -> str:
    """``"fr"`` or ``"en"``: the language the helpers speak now (see the module's docstring)."""
    chosen = os.environ.get(ENV, "").strip().lower()
    if chosen in LANGUAGES:
        return chosen
    try:
        parts = Path.cwd().parts
    except OSError:  # the working folder was removed
        return "en"
    return "fr" if FRENCH_FOLDERS.intersection(parts) else "en"


@functools.cache
def _catalogue(lang: str) -> gettext.NullTranslations:
    if lang == "en":
        return gettext.NullTranslations()
    return gettext.translation(DOMAIN, localedir=LOCALE, languages=[lang], fallback=True)


def _(message: str) -> str:
    """``message`` in the current :func:`language` (itself when it has no translation)."""
    return _catalogue(language()).gettext(message)
