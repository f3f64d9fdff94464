"""The package tree shows the design (issue 13, item 7), and the flat paths of before it are gone (issue 21).

The expected layout below is the one table of this file: each group (a
subpackage of ``labkit``) and the modules it holds. Every other expectation is
derived from it. The old flat path of a module was ``labkit.<its name>``; labkit
was never released and no notebook, workbook file, document, script or test
used one any more, so the compatibility finder (``labkit/_moved.py``) went.
"""

from __future__ import annotations

import importlib
import json
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest

import labkit

LAYOUT = {
    "core": (
        *("limits", "events", "signature", "arguments", "binding", "rules", "bodies", "guarded", "cancellation"),
        *("lifecycle", "scope", "errors", "_machinery"),
    ),
    "transports": ("chat", "scripted", "live"),
    "loops": ("agents", "running", "runner", "outcome", "scenarios", "review", "telemetry"),
    "teaching": ("frames", "charts", "widgets", "predict", "spans", "direct", "capstone"),
}
"""Group -> the modules it holds, in reading order."""

TOP_LEVEL = {"__init__", "__main__", "cli", "durable", "_durable_sql", "_version", "adapters"}
"""What stays directly under labkit/ besides the groups: the public names, the console, durable
decisions (and, private, the SQL that differs between its SQLite and PostgreSQL stores), the
version, and the adapters (unchanged)."""

# Modules ``import labkit`` must not load (third-party libraries the core never needs, and labkit's own
# lazily loaded modules).
LAZY = ("live", "telemetry", "frames", "charts", "widgets", "predict", "spans", "direct", "capstone")
HEAVY = ("pandas", "matplotlib", "ipywidgets", "IPython", "openai", "opentelemetry")

PACKAGE_DIR = Path(labkit.__file__).parent
FLAT_NAMES = {module for modules in LAYOUT.values() for module in modules}
"""What an old flat path was named after: ``labkit.scope`` for ``labkit.core.scope``."""


def _fresh(code: str) -> str:
    """Run ``code`` in a fresh interpreter and return what it printed."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


# -- the tree ---------------------------------------------------------------------------------


@pytest.mark.parametrize("group", sorted(LAYOUT))
def test_each_module_lives_in_its_group(group: str) -> None:
    folder = PACKAGE_DIR / group
    assert (folder / "__init__.py").is_file()
    for module in LAYOUT[group]:
        assert (folder / f"{module}.py").is_file() or (folder / module / "__init__.py").is_file(), module
        assert not (PACKAGE_DIR / f"{module}.py").exists(), f"{module}.py is still at the top of labkit/"


def test_the_top_level_holds_only_the_groups_and_the_entry_points() -> None:
    names = {p.stem for p in PACKAGE_DIR.iterdir() if p.suffix == ".py" or (p / "__init__.py").is_file()}
    assert names == TOP_LEVEL | set(LAYOUT)


@pytest.mark.parametrize("group", sorted(LAYOUT))
def test_each_group_says_what_it_holds_in_reading_order(group: str) -> None:
    doc = importlib.import_module(f"labkit.{group}").__doc__ or ""
    public = [m for m in LAYOUT[group] if not m.startswith("_")]
    positions = [doc.find(f"labkit.{group}.{m}`") for m in public]
    assert -1 not in positions, [m for m, at in zip(public, positions, strict=True) if at == -1]
    if group == "core":  # the lesson's order: limits, events, signature, binding, rules, the guarded tool, the scope
        assert positions == sorted(positions)


# -- the old flat paths are gone; labkit.signature is still the public function -------------------


@pytest.mark.parametrize("old", sorted(f"labkit.{name}" for name in FLAT_NAMES if name not in labkit.__all__))
def test_an_old_flat_path_no_longer_imports(old: str) -> None:
    with pytest.raises(ModuleNotFoundError) as raised:
        importlib.import_module(old)
    assert raised.value.name == old


def test_labkit_signature_is_the_public_function_and_no_module() -> None:
    import types

    assert isinstance(labkit.signature, types.FunctionType)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("labkit.signature")
    assert isinstance(labkit.signature, types.FunctionType)


def test_an_old_flat_name_is_no_attribute_of_labkit() -> None:
    assert [name for name in sorted(FLAT_NAMES - set(labkit.__all__)) if hasattr(labkit, name)] == []


# -- import labkit stays light ---------------------------------------------------------------------


def test_import_labkit_loads_none_of_the_lazy_modules() -> None:
    watched = [*HEAVY]
    for group, modules in LAYOUT.items():
        watched += [f"labkit.{group}.{m}" for m in modules if m in LAZY]
    watched += ["labkit.teaching", "labkit.core._machinery.frozen"]
    code = (
        "import json, sys, labkit\n"
        f"watched = {watched!r}\n"
        "print(json.dumps(sorted(n for n in watched if any(m == n or m.startswith(n + '.') for m in sys.modules))))\n"
    )
    assert json.loads(_fresh(code)) == []


# -- public objects pickle ---------------------------------------------------------------------------


def _public_objects() -> list[object]:
    outcome = labkit.run("repeat", agent="simple")
    return [
        labkit.Limits(model_calls=3),
        outcome.status,
        outcome.events[0],
        outcome.usage,
        outcome,
        outcome.events[-1].kind,
        labkit.UserError("a mistake"),
    ]


@pytest.mark.parametrize("index", range(7))
def test_public_objects_pickle(index: int) -> None:
    value = _public_objects()[index]
    restored = pickle.loads(pickle.dumps(value, protocol=2))
    assert type(restored) is type(value)
    assert restored == value or repr(restored) == repr(value)


# -- the docs point to the real files ----------------------------------------------------------------

ROOT = PACKAGE_DIR.parent
DOCUMENTED = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted((ROOT / "workbook").glob("*.md")),
    *sorted((ROOT / "notebooks").glob("*.md")),
    *sorted((ROOT / "notebooks").glob("*.ipynb")),
    *sorted((ROOT / "workbook").glob("*.ipynb")),
    *sorted(PACKAGE_DIR.rglob("*.py")),
]
FILE_MENTION = re.compile(r"\blabkit/(?:[A-Za-z_]\w*/)*[A-Za-z_]\w*\.py\b")
ROLE_MENTION = re.compile(r":(?:mod|func|class|data|meth|attr|exc):`~?(labkit(?:\.\w+)+)`")


def test_every_labkit_file_the_docs_name_exists() -> None:
    missing = [
        f"{doc.relative_to(ROOT)}: {name}"
        for doc in DOCUMENTED
        for name in FILE_MENTION.findall(doc.read_text(encoding="utf-8"))
        if not (ROOT / name).is_file()
    ]
    assert missing == []


def test_docstrings_name_modules_by_their_real_path_not_an_old_flat_one() -> None:
    old_paths = []
    for source in sorted(PACKAGE_DIR.rglob("*.py")):
        where = source.relative_to(PACKAGE_DIR).as_posix()
        for target in ROLE_MENTION.findall(source.read_text(encoding="utf-8")):
            parts = target.split(".")
            if parts[1] not in FLAT_NAMES:
                continue
            if len(parts) == 2 and parts[1] in labkit.__all__:  # labkit.signature: the public function
                continue
            old_paths.append(f"{where}: {target}")
    assert old_paths == []


# -- the README: its links resolve, every document it names is a link, its set-up says what make lab does --

README = ROOT / "README.md"
MD_LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)\)")  # [text](target), an image inside the text too


def test_every_relative_link_in_the_readme_resolves_to_a_file_that_exists() -> None:
    targets = [t for t in MD_LINK.findall(README.read_text(encoding="utf-8")) if not re.match(r"[a-z]+:|#", t)]
    assert len(targets) >= 8  # the docs/ files at least
    missing = [t for t in targets if not (ROOT / t.split("#")[0]).exists()]
    assert missing == []


def test_every_document_the_readme_names_is_a_relative_link() -> None:
    text = README.read_text(encoding="utf-8")
    linked = {t for t in MD_LINK.findall(text)}
    documents = {p.relative_to(ROOT).as_posix() for p in ROOT.glob("*/*.md")}
    assert {"docs/live.md", "docs/adapters.md", "workbook/README.md"} <= documents
    named = {d for d in documents if d in text}
    assert {"docs/live.md", "docs/adapters.md", "docs/guarantees.md"} <= named
    assert named - linked == set(), "name these as [`path`](path)"
    outside_links = MD_LINK.sub("", text)
    assert [d for d in named if d in outside_links] == []  # not also named elsewhere without its link


def test_the_readme_keeps_the_two_commands_and_says_what_make_lab_installs_and_port() -> None:
    text = README.read_text(encoding="utf-8")
    (setup,) = [block for block in re.findall(r"```sh\n(.*?)```", text, re.S) if "make lab" in block]
    commands = [line.split("#")[0].strip() for line in setup.splitlines()]
    assert "make lab" in commands and "make test" in commands
    assert "make lab PORT=" in text and "`lab` extra" in text and '".[lab]"' in text
