"""The French edition is generated from one source of code and kept honest about stale translations (issue 22).

* ``notebooks-fr/`` and ``workbook-fr/`` are what ``scripts/build_french.py`` makes from ``notebooks/``
  and the catalogues ``i18n/fr/*.po``;
* no translation of a chapter that has a catalogue is stale or missing, and the check names the cell;
* editing an English cell on purpose (on a copy) makes the check fail, naming that cell, and makes
  the build show the current English under a visible banner instead of the old French;
* the French notebooks run the very same code cells, with the same outputs, as the English ones.

nbval runs ``notebooks-fr/`` with outputs compared and ``workbook-fr/`` cell by cell (``make test``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "scripts"
sys.path.insert(0, str(SCRIPTS))
import build_french as french  # noqa: E402  (scripts/ is not a package)

TRANSLATED = sorted(p.stem for p in (ROOT / french.CATALOGUES).glob("*.po"))


def run(*args: str, root: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPTS / "build_french.py"), *args, "--root", str(root)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_french_edition_is_current():
    result = run("--check")
    assert result.returncode == 0, (
        f"notebooks-fr/ or workbook-fr/ differ from what scripts/build_french.py makes:\n{result.stdout}"
        "After editing a chapter or a catalogue: `make notebooks` (or python scripts/build_french.py), then commit."
    )


def test_no_translation_is_stale():
    stale = french.stale_entries(ROOT)
    assert not stale, (
        "these French texts no longer translate their English cell:\n"
        + "\n".join(f"  {item}" for item in stale)
        + "\n`python scripts/build_french.py update` marks them fuzzy in i18n/fr/, beside the old English;"
        " translate them and remove the fuzzy flag."
    )


def test_at_least_chapter_one_is_translated():
    assert "01_a_loop_needs_an_owner" in TRANSLATED


@pytest.mark.parametrize("stem", TRANSLATED)
def test_a_translated_chapter_runs_the_english_code_and_shows_no_banner(stem):
    english = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)
    fr = nbformat.read(ROOT / french.INSTRUCTOR / f"{stem}.ipynb", as_version=4)
    assert [c["id"] for c in fr.cells] == [c["id"] for c in english.cells]
    for en_cell, fr_cell in zip(english.cells, fr.cells, strict=True):
        assert fr_cell.cell_type == en_cell.cell_type
        if en_cell.cell_type == "code":
            assert fr_cell.source == en_cell.source, en_cell["id"]  # its outputs are its own (French helpers)
        elif en_cell["id"] != "navigation":
            assert not fr_cell.source.startswith(("> 🇫🇷",)), f"{stem} cell {en_cell['id']} is not translated"
    assert fr.metadata["labkit"]["language"] == "fr"
    title = f"# Chapitre {int(stem[:2])} — " if stem[:2].isdigit() else f"# Annexe {stem.split('_')[1].upper()} — "
    assert fr.cells[0].source.startswith(title)


@pytest.mark.parametrize("stem", TRANSLATED)
def test_the_learner_edition_folds_its_hints_in_french(stem):
    learner = nbformat.read(ROOT / french.LEARNER / f"{stem}.ipynb", as_version=4)
    hints = [c.source for c in learner.cells if c["id"].endswith("-hint")]
    assert hints and all(h.startswith("<details><summary>Indice</summary>") for h in hints)
    assert all("<summary>Réponse</summary>" in h for h in hints)
    assert not any(c.outputs for c in learner.cells if c.cell_type == "code")


def test_an_untranslated_chapter_says_so_at_its_top():
    english = {p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")}
    for stem in sorted(english - set(TRANSLATED)):
        nb = nbformat.read(ROOT / french.INSTRUCTOR / f"{stem}.ipynb", as_version=4)
        assert nb.cells[1]["id"] == french.UNTRANSLATED_ID and nb.cells[1].source == french.UNTRANSLATED


@pytest.fixture
def copy_root(tmp_path: Path) -> Path:
    for folder in ("notebooks", "i18n", french.INSTRUCTOR, french.LEARNER, "workbook"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    return tmp_path


def _edit(path: Path, cell_id: str, change) -> str:
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if c.get("id") == cell_id)
    cell.source = change(cell.source)
    nbformat.write(nb, path)
    return cell.source


def test_an_english_edit_without_its_translation_is_named_and_shown_as_stale(copy_root: Path):
    chapter = copy_root / "notebooks" / "01_a_loop_needs_an_owner.ipynb"
    english = _edit(chapter, "93cd557b", lambda s: s.replace("Two model calls of 6", "Two model calls out of 6"))

    found = run("stale", root=copy_root)
    assert found.returncode == 1
    assert "01_a_loop_needs_an_owner.ipynb cell 93cd557b: its English text changed" in found.stdout
    assert run("--check", root=copy_root).returncode == 1

    assert run(root=copy_root).returncode == 0
    for folder in (french.INSTRUCTOR, french.LEARNER):
        nb = nbformat.read(copy_root / folder / chapter.name, as_version=4)
        cell = next(c for c in nb.cells if c.get("id") == "93cd557b")
        assert cell.source == french.STALE + english, "the current English, under the banner, not the old French"


def test_update_keeps_the_old_french_as_fuzzy_beside_the_old_english(copy_root: Path):
    chapter = copy_root / "notebooks" / "01_a_loop_needs_an_owner.ipynb"
    old = next(c.source for c in nbformat.read(chapter, as_version=4).cells if c.get("id") == "93cd557b")
    new = _edit(chapter, "93cd557b", lambda s: s + "\n\nOne more sentence.")
    assert run("update", root=copy_root).returncode == 0
    catalog = french.read_catalogue(copy_root / french.CATALOGUES / "01_a_loop_needs_an_owner.po")
    entry = catalog.get(new, context="93cd557b")
    assert entry is not None and entry.fuzzy
    assert entry.user_comments[0] == f"previous English (sha256: {french.digest(old)}):"
    assert entry.string.startswith("## Les compteurs face aux limites")
    assert f"sha256: {french.digest(new)}" in entry.auto_comments
    assert run("stale", root=copy_root).returncode == 1, "a fuzzy entry is still stale"

    entry.flags.discard("fuzzy")  # the translator has brought the French up to date
    french.write_catalogue(copy_root / french.CATALOGUES / "01_a_loop_needs_an_owner.po", catalog)
    assert run("stale", root=copy_root).returncode == 0


def test_a_new_english_cell_is_missing_until_translated(copy_root: Path):
    chapter = copy_root / "notebooks" / "01_a_loop_needs_an_owner.ipynb"
    nb = nbformat.read(chapter, as_version=4)
    cell = nbformat.v4.new_markdown_cell("A brand new paragraph.")
    cell["id"] = "brand-new"
    nb.cells.insert(2, cell)
    nbformat.write(nb, chapter)
    found = run("stale", root=copy_root)
    assert found.returncode == 1 and "cell brand-new: no French yet" in found.stdout
    assert run(root=copy_root).returncode == 0
    fr = nbformat.read(copy_root / french.INSTRUCTOR / chapter.name, as_version=4)
    assert next(c for c in fr.cells if c.get("id") == "brand-new").source == french.MISSING + "A brand new paragraph."


def test_a_changed_nudge_is_stale_too(copy_root: Path):
    chapter = copy_root / "notebooks" / "01_a_loop_needs_an_owner.ipynb"
    nb = nbformat.read(chapter, as_version=4)
    cell = next(c for c in nb.cells if c.get("id") == "2ad31bce")
    cell.metadata["labkit"]["hint"] += " Count them."
    nbformat.write(nb, chapter)
    found = run("stale", root=copy_root)
    assert found.returncode == 1 and "cell 2ad31bce#hint: its English text changed" in found.stdout


def test_the_french_copy_is_made_from_the_french_edition_and_kept(tmp_path: Path):
    shutil.copytree(ROOT / french.LEARNER, tmp_path / french.LEARNER)
    lab = [sys.executable, str(SCRIPTS / "lab.py"), "--language", "fr", "--root", str(tmp_path), "update"]
    first = subprocess.run(lab, capture_output=True, text=True, check=True)
    chapter = tmp_path / "my-workbook-fr" / "01_a_loop_needs_an_owner.ipynb"
    assert "my-workbook-fr/01_a_loop_needs_an_owner.ipynb: added" in first.stdout
    assert chapter.read_bytes() == (tmp_path / french.LEARNER / chapter.name).read_bytes()
    assert not (tmp_path / "my-workbook").exists(), "the English copy is not touched"

    chapter.write_text(chapter.read_text(encoding="utf-8").replace("Prédire", "Prévoir"), encoding="utf-8")
    source = tmp_path / french.LEARNER / chapter.name
    source.write_text(source.read_text(encoding="utf-8").replace("Durée", "Temps"), encoding="utf-8")
    second = subprocess.run(lab, capture_output=True, text=True, check=True)
    assert "01_a_loop_needs_an_owner.updated.ipynb: the new version" in second.stdout
    assert "Prévoir" in chapter.read_text(encoding="utf-8"), "the learner's saved work is never overwritten"


def test_a_rebuild_keeps_a_learners_work_found_in_the_french_edition(copy_root: Path):
    chapter = copy_root / french.LEARNER / "01_a_loop_needs_an_owner.ipynb"
    nb = nbformat.read(chapter, as_version=4)
    guess = next(c for c in nb.cells if "guess" in c.metadata.get("tags", []))
    guess.source = guess.source.replace("...", '"RepeatedCall"', 1)
    nbformat.write(nb, chapter)
    saved = chapter.read_bytes()
    result = run(root=copy_root)
    assert result.returncode == 0 and "held saved work" in result.stdout
    kept = copy_root / "my-workbook-fr" / "01_a_loop_needs_an_owner.saved-from-workbook.ipynb"
    assert kept.read_bytes() == saved
    assert not french.workbook.holds_saved_work(nbformat.read(chapter, as_version=4)), "the edition is clean again"
