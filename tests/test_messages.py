"""The teaching helpers speak the notebook's language: every message has French, kept current (issue 22).

* ``scripts/build_messages.py --check``: the French catalogue and its compiled form are current and
  every message passed to ``_()`` in labkit/teaching has a French entry;
* each French entry keeps its English's ``{placeholders}`` and HTML tags (a missing one would break
  the message's ``.format`` or its markup at run time);
* the language follows ``LABKIT_LANGUAGE``, else the working folder (a French edition's folder is
  French, wherever it is), and the helpers' words change with it.
"""

from __future__ import annotations

import re
import string
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

import labkit
from labkit.teaching import i18n

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "labkit" / "teaching" / "locale" / "fr" / "LC_MESSAGES" / "labkit.po"


def test_every_message_has_current_french():
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_messages.py"), "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, f"{done.stdout}\nrun `python scripts/build_messages.py`, translate, and commit"


def _entries() -> list[tuple[str, str]]:
    with CATALOGUE.open("rb") as handle:
        return [(m.id, m.string) for m in read_po(handle, locale="fr") if m.id]


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_the_catalogue_is_not_empty():
    assert len(_entries()) >= 20


@pytest.mark.parametrize(("english", "french"), _entries(), ids=[f"message-{i}" for i in range(len(_entries()))])
def test_a_translation_keeps_the_placeholders_and_the_markup(english: str, french: str):
    assert _fields(french) == _fields(english)
    assert re.findall(r"</?\w+", french) == re.findall(r"</?\w+", english)


def test_the_language_follows_the_variable_then_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(i18n.ENV, raising=False)
    for folder, expected in (("workbook", "en"), ("workbook-fr", "fr"), ("my-workbook-fr/sub", "fr"), ("x", "en")):
        (tmp_path / folder).mkdir(parents=True)
        monkeypatch.chdir(tmp_path / folder)
        assert i18n.language() == expected, folder
    monkeypatch.setenv(i18n.ENV, "en")
    assert i18n.language() == "en"  # the variable wins over a French folder
    monkeypatch.chdir(tmp_path / "workbook")
    monkeypatch.setenv(i18n.ENV, "fr")
    assert i18n.language() == "fr"


def test_the_prediction_panel_speaks_french_in_a_french_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    pytest.importorskip("ipywidgets")
    from labkit.teaching.widgets import predict

    monkeypatch.delenv(i18n.ENV, raising=False)
    monkeypatch.setenv("LABKIT_PROGRESS", "off")
    (tmp_path / "workbook-fr").mkdir()
    monkeypatch.chdir(tmp_path / "workbook-fr")
    panel = predict(labkit.mystery("D"))
    panel.status_choice = "Completed"
    panel.run()
    assert "vous avez dit Completed" in panel.result_html and "pas cette fois" in panel.result_html
    monkeypatch.chdir(tmp_path)
    english = predict(labkit.mystery("D"))
    english.status_choice = "Completed"
    english.run()
    assert "you said Completed" in english.result_html and "not this time" in english.result_html
