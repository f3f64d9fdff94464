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

import io
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "scripts"
sys.path.insert(0, str(SCRIPTS))
import build_french as french  # noqa: E402  (scripts/ is not a package)

TRANSLATED = sorted(p.stem for p in (ROOT / french.CATALOGUES).glob("*.po") if p != ROOT / french.COMMENTS)
COMMENTS = french.read_catalogue(ROOT / french.COMMENTS)


def code_tokens(source: str) -> list[tuple[int, str]]:
    """The tokens of ``source`` that are code: everything but its comments (and the line breaks of comment lines)."""
    skipped = (tokenize.COMMENT, tokenize.NL)
    return [(t.type, t.string) for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type not in skipped]


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
        if en_cell.cell_type == "code":  # its outputs are its own (French helpers); only its comments are French
            assert code_tokens(fr_cell.source) == code_tokens(en_cell.source), en_cell["id"]
            assert fr_cell.source == french.french_code(en_cell.source, COMMENTS), en_cell["id"]
            assert all(len(line) <= 100 for line in fr_cell.source.splitlines()), f"{en_cell['id']}: a line over 100"
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
    english = _edit(chapter, "93cd557b", lambda s: s.replace("each counter next to", "each counter beside"))
    assert "each counter beside" in english, "the edit must change the cell's English"

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
    clean = nbformat.read(chapter, as_version=4)
    assert not french.workbook.holds_saved_work(clean, french.french_guess(COMMENTS)), "the edition is clean again"


# -- code comments -----------------------------------------------------------------------------------------------


def test_every_code_comment_has_french_and_the_french_edition_shows_it():
    assert COMMENTS is not None, f"{french.COMMENTS} is missing: python scripts/build_french.py update"
    fr = nbformat.read(ROOT / french.INSTRUCTOR / "01_a_loop_needs_an_owner.ipynb", as_version=4)
    english = nbformat.read(ROOT / "notebooks" / "01_a_loop_needs_an_owner.ipynb", as_version=4)
    texts = [text for _cell, text in french.code_comments(english)]
    assert texts, "chapter 1 has code comments"
    shown = [c.text for cell in fr.cells if cell.cell_type == "code" for c in french.comments_of(cell.source)]
    assert shown and not set(shown) & set(texts) - {COMMENTS.get(t).string for t in texts}, "an English comment left"
    learner = nbformat.read(ROOT / french.LEARNER / "01_a_loop_needs_an_owner.ipynb", as_version=4)
    guesses = [c.source for c in learner.cells if "guess" in c.metadata.get("tags", [])]
    guess = french.french_guess(COMMENTS)
    assert guess != french.workbook.GUESS and all(f"  # {guess}" in g and "your guess" not in g for g in guesses)
    assert all(french.workbook.untouched(guess).fullmatch(line) for g in guesses for line in g.splitlines())


def test_only_comments_are_translated_never_code():
    source = (
        'text = "# not a comment"  # a comment\n'
        "value = f'{1 # 2}' if False else 3\n"
        "    # a block comment\n"
        "    # on two lines\n"
        'doc = """\n# still a string\n"""\n'
        "x = 1  # noqa: E501\n"
    )
    catalog = french.Catalog(locale="fr")
    catalog.add("a comment", "un commentaire")
    catalog.add("a block comment\non two lines", "un commentaire\nen bloc\nsur trois lignes")
    out = french.french_code(source, catalog)
    assert code_tokens(out) == code_tokens(source)
    assert 'text = "# not a comment"  # un commentaire' in out
    assert "    # un commentaire\n    # en bloc\n    # sur trois lignes\n" in out
    assert "# still a string" in out and "x = 1  # noqa: E501" in out, "strings and pragmas are left alone"


def _edit_comment(chapter: Path, cell_id: str, old: str, new: str) -> None:
    nb = nbformat.read(chapter, as_version=4)
    cell = next(c for c in nb.cells if c.get("id") == cell_id)
    assert f"# {old}" in cell.source
    cell.source = cell.source.replace(f"# {old}", f"# {new}")
    nbformat.write(nb, chapter)


def test_an_edited_comment_is_named_shown_as_stale_and_kept_fuzzy_by_update(copy_root: Path):
    chapter = copy_root / "notebooks" / "01_a_loop_needs_an_owner.ipynb"
    old, new = "the tool budget (4) is never reached", "the tool budget (4) is never reached by this run"
    _edit_comment(chapter, "looser-predict", old, new)

    found = run("stale", root=copy_root)
    assert found.returncode == 1
    assert f"01_a_loop_needs_an_owner.ipynb cell looser-predict, comment '# {new}': no French yet" in found.stdout
    assert run(root=copy_root).returncode == 0
    fr = nbformat.read(copy_root / french.INSTRUCTOR / chapter.name, as_version=4)
    cell = next(c for c in fr.cells if c.get("id") == "looser-predict")
    assert f"# {french.COMMENT_MISSING}{new}" in cell.source, "the current English, marked, not the old French"
    hint = nbformat.read(copy_root / french.LEARNER / chapter.name, as_version=4)
    assert any(
        f"# {french.COMMENT_MISSING}{new}" in c.source for c in hint.cells if c.get("id") == "looser-predict-hint"
    )

    assert run("update", root=copy_root).returncode == 0
    catalog = french.read_catalogue(copy_root / french.COMMENTS)
    entry = catalog.get(new)
    assert entry is not None and entry.fuzzy and entry.string == COMMENTS.get(old).string
    assert entry.user_comments[0].startswith("previous English") and f"| {old}" in entry.user_comments
    assert catalog.get(old) is None, "a comment no longer used is dropped"
    assert "its English text changed" in run("stale", root=copy_root).stdout
    assert run(root=copy_root).returncode == 0
    fr = nbformat.read(copy_root / french.INSTRUCTOR / chapter.name, as_version=4)
    cell = next(c for c in fr.cells if c.get("id") == "looser-predict")
    assert f"# {french.COMMENT_STALE}{new}" in cell.source

    entry.flags.discard("fuzzy")  # the translator has brought the French up to date
    french.write_catalogue(copy_root / french.COMMENTS, catalog)
    assert run("stale", root=copy_root).returncode == 0


def test_a_new_comment_is_added_untranslated_by_update(copy_root: Path):
    chapter = copy_root / "notebooks" / "10_capstone.ipynb"
    _edit_comment(chapter, "two-steps", "step 1: the checks, locked", "zzz entirely new words qqq")
    assert run("update", root=copy_root).returncode == 0
    entry = french.read_catalogue(copy_root / french.COMMENTS).get("zzz entirely new words qqq")
    assert entry is not None and not entry.string and entry.locations == [("10_capstone.ipynb", None)]
    assert (
        "cell two-steps, comment '# zzz entirely new words qqq': no French yet" in run("stale", root=copy_root).stdout
    )


# -- one word per term, decimal commas: the French prose, comments, stored outputs and messages -----------

import re  # noqa: E402

from babel.messages.pofile import read_po  # noqa: E402

MESSAGES = ROOT / "labkit" / "teaching" / "locale" / "fr" / "LC_MESSAGES" / "labkit.po"
_CODE_SPANS = (
    re.compile(r"```.*?```", re.S),  # a code block
    re.compile(r"`[^`\n]*`"),  # inline code
    re.compile(r"\]\([^)]*\)"),  # a link's target
    re.compile(r"<[^>\n]*>"),  # an HTML tag and its attributes
)
_DECIMAL_POINT = re.compile(r"(?<![\w.\-/=])\d+\.\d+(?![\w.])")
_CODE_NUMBERS = frozenset({"42.0"})
"""Numbers a French message writes as code although not in backticks: the JSON value ``42.0`` of chapter 5's
signature messages (the model's text, as it was sent)."""


def _prose(text: str) -> str:
    for pattern in _CODE_SPANS:
        text = pattern.sub(" ", text)
    return text


def _french_texts() -> dict[str, str]:
    """Every French text a learner reads outside code: each notebook's markdown and code comments, its printed
    lines (stream outputs, without the console's own command lines), and every message of labkit's catalogue."""
    texts: dict[str, str] = {}
    for folder in ("notebooks-fr", "workbook-fr"):
        for path in sorted((ROOT / folder).glob("*.ipynb")):
            nb = nbformat.read(path, as_version=4)
            for cell in nb.cells:
                where = f"{folder}/{path.name} cell {cell.get('id')}"
                if cell.cell_type == "markdown":
                    texts[where] = _prose(cell.source)
                    continue
                if cell.cell_type != "code":
                    continue
                tokens = tokenize.generate_tokens(io.StringIO(cell.source).readline)
                with_comments = [t.string for t in tokens if t.type == tokenize.COMMENT]
                texts[f"{where} comments"] = "\n".join(with_comments)
                printed = "".join(
                    o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream"
                )
                lines = [line for line in printed.splitlines() if not line.startswith(("$ ", "labkit run"))]
                texts[f"{where} output"] = "\n".join(lines)
    with MESSAGES.open("rb") as handle:
        for message in read_po(handle, locale="fr"):
            if message.id:
                forms = [message.string] if isinstance(message.string, str) else list(message.string)
                texts[f"labkit.po {message.id!r}"] = _prose("\n".join(forms))
    return texts


def test_the_deadline_has_one_french_word():
    """The glossary pairs deadline with a time limit for the whole run: the French edition says ``délai``
    (a duration: ``deadline_s``), and the moment it runs out ``le délai expire``; never ``échéance`` too."""
    texts = _french_texts()
    both = {where: text for where, text in texts.items() if re.search(r"\béchéances?\b", text, re.I)}
    assert not both, f"'échéance' beside 'délai': {sorted(both)}"
    assert sum(bool(re.search(r"\bdélai\b", text)) for text in texts.values()) >= 20  # the rule reads something


def test_french_prose_writes_decimals_with_a_comma():
    texts = _french_texts()
    found = {
        where: numbers
        for where, text in texts.items()
        if (numbers := set(_DECIMAL_POINT.findall(text)) - _CODE_NUMBERS)
    }
    assert not found, f"a decimal point in French prose (write 0,5 s; code stays code): {found}"
    assert _DECIMAL_POINT.findall(_prose("le délai est de 0.5 s, `deadline_s=0.5`")) == ["0.5"]  # it does see one


def test_a_french_hint_writes_its_seconds_with_a_comma(monkeypatch: pytest.MonkeyPatch):
    import dataclasses

    import labkit

    monkeypatch.setenv("LABKIT_LANGUAGE", "fr")
    source = labkit.SCENARIOS["deadline"]
    hung = labkit.run(dataclasses.replace(source, limits=source.limits.with_(deadline_s=0.05)))
    done = labkit.run("complete")
    lines = [
        *labkit.check(hung, status="Completed").feedback,
        *labkit.check(done, status="DeadlineExceeded").feedback,
    ]
    text = " ".join(lines)
    assert "0,05 s" in text and "120 s" in text, text
    assert not _DECIMAL_POINT.findall(text), text


def test_the_french_edition_carries_the_glossary_it_links_to():
    """The French README and chapter 1 send the learner to ``glossary.md``: it is beside them in
    ``workbook-fr/`` (so in ``my-workbook-fr/``, which ``scripts/lab.py`` copies from it), the bilingual
    glossary of ``workbook/``; every relative link of the README resolves from there, as from the copy
    (a folder beside ``workbook-fr/``, at the repository's root, as on Binder)."""
    import re

    learner = ROOT / "workbook-fr"
    glossary = (learner / "glossary.md").read_text(encoding="utf-8")
    english = (ROOT / "workbook" / "glossary.md").read_text(encoding="utf-8")
    assert glossary == english.replace("](cheatsheet.md)", "](../workbook/cheatsheet.md)")
    readme = (learner / "README.md").read_text(encoding="utf-8")
    assert "](glossary.md)" in readme
    for text in (readme, glossary):
        for target in re.findall(r"\]\(([^)#:]+)\)", text):
            assert (learner / target).exists(), target
    chapter_one = next(learner.glob("01_*.ipynb"))
    assert "`glossary.md`, à côté des chapitres" in chapter_one.read_text(encoding="utf-8")
