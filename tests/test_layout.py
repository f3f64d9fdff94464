"""The package tree shows the design, and every flat path of earlier versions still imports (issue 13, item 7).

The expected layout below is the one table of this file: each group (a
subpackage of ``labkit``) and the modules it holds. Every other expectation is
derived from it: the old flat path of a module is ``labkit.<its name>``, and
it must be the very same module object as ``labkit.<group>.<its name>``.
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
from labkit import _moved

LAYOUT = {
    "core": ("limits", "events", "signature", "scope", "bodies", "errors", "_frozen", "_sync", "_workers"),
    "transports": ("chat", "scripted", "live"),
    "loops": ("agents", "running", "runner", "outcome", "scenarios", "review", "telemetry"),
    "teaching": ("frames", "charts", "widgets", "predict", "spans", "direct", "capstone"),
}
"""Group -> the modules it holds, in reading order."""

TOP_LEVEL = {"__init__", "__main__", "cli", "durable", "_durable_sql", "_moved", "_version", "adapters"}
"""What stays directly under labkit/ besides the groups: the public names, the console, durable
decisions (and, private, the SQL that differs between its SQLite and PostgreSQL stores), the old
paths' finder, and the adapters (unchanged)."""

# Modules ``import labkit`` must not load (third-party libraries the core never needs, and labkit's own
# lazily loaded modules).
LAZY = ("live", "telemetry", "frames", "charts", "widgets", "predict", "spans", "direct", "capstone", "_frozen")
HEAVY = ("pandas", "matplotlib", "ipywidgets", "IPython", "openai", "opentelemetry")

PACKAGE_DIR = Path(labkit.__file__).parent
NEW_SINCE = {"running"}  # modules split off after the move: they never had a flat path
OLD_TO_NEW = {
    f"labkit.{module}": f"labkit.{group}.{module}"
    for group, modules in LAYOUT.items()
    for module in modules
    if module not in NEW_SINCE
}
CAPSTONE_SUBMODULES = ("bingo", "guard")
OLD_TO_NEW |= {f"labkit.capstone.{sub}": f"labkit.teaching.capstone.{sub}" for sub in CAPSTONE_SUBMODULES}


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
    if group == "core":  # SPEC §3's order: limits, events, signature, scope, bodies, errors
        assert positions == sorted(positions)


def test_the_compatibility_table_covers_every_moved_module() -> None:
    assert {f"labkit.{old}": f"labkit.{new}" for old, new in _moved.MOVED.items()} == {
        old: new for old, new in OLD_TO_NEW.items() if old.count(".") == 1
    }


# -- old paths are the same module objects -----------------------------------------------------


@pytest.mark.parametrize("old", sorted(OLD_TO_NEW))
def test_an_old_path_imports_the_same_module_object(old: str) -> None:
    new = OLD_TO_NEW[old]
    module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert module.__name__ == new and module.__spec__.name == new  # its own spec, not the alias's
    assert sys.modules[old] is sys.modules[new]


def test_old_paths_in_a_fresh_interpreter_are_the_new_modules_and_load_each_module_once() -> None:
    code = (
        "import importlib, json, sys\n"
        f"pairs = {sorted(OLD_TO_NEW.items())!r}\n"
        "same = [old for old, new in pairs if importlib.import_module(old) is importlib.import_module(new)]\n"
        "files = [m.__file__ for m in set(sys.modules.values()) if (getattr(m, '__name__', '') or '').startswith('labkit')"
        " and getattr(m, '__file__', None)]\n"
        "print(json.dumps({'same': same, 'twice': sorted(f for f in set(files) if files.count(f) > 1)}))\n"
    )
    result = json.loads(_fresh(code))
    assert result["same"] == sorted(OLD_TO_NEW)
    assert result["twice"] == []


def test_old_module_names_are_attributes_after_a_plain_import_labkit() -> None:
    code = (
        "import labkit\n"
        "print(labkit.scope.ABANDON_GRACE_S == labkit.core.scope.ABANDON_GRACE_S,"
        " labkit.scope.GUARD_RULES is labkit.core.scope.GUARD_RULES,"
        " labkit.charts is labkit.teaching.charts, labkit.capstone is labkit.teaching.capstone)\n"
    )
    assert _fresh(code) == "True True True True"


def test_from_labkit_import_an_old_module_name() -> None:
    from labkit import capstone, review, scope  # as a saved notebook may write it

    assert (scope, review, capstone) == (labkit.core.scope, labkit.loops.review, labkit.teaching.capstone)


def test_patching_the_old_path_patches_the_module_the_code_uses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("labkit.scope.ABANDON_GRACE_S", 123.0)
    assert labkit.core.scope.ABANDON_GRACE_S == 123.0
    monkeypatch.setattr("labkit.core.scope.ABANDON_GRACE_S", 7.0)
    assert importlib.import_module("labkit.scope").ABANDON_GRACE_S == 7.0


# -- labkit.signature stays the public function --------------------------------------------------

_SIGNATURE_IS_THE_FUNCTION = (
    "import labkit, types\n"
    "assert isinstance(labkit.signature, types.FunctionType), labkit.signature\n"
    "print(labkit.signature('t', {'input': 42}))\n"
)


@pytest.mark.parametrize(
    "first",
    [
        "import labkit.signature",
        "from labkit.signature import canonical",
        "from labkit import signature",
        "import labkit.core.signature",
        "import importlib; importlib.import_module('labkit.signature')",
    ],
)
def test_the_function_labkit_signature_survives_importing_its_module_first(first: str) -> None:
    assert _fresh(f"{first}\n{_SIGNATURE_IS_THE_FUNCTION}") == labkit.signature("t", {"input": 42})


def test_the_function_labkit_signature_survives_every_old_path_import() -> None:
    imports = "".join(f"import {old}\n" for old in sorted(OLD_TO_NEW))
    assert _fresh(f"import labkit\n{imports}{_SIGNATURE_IS_THE_FUNCTION}") == labkit.signature("t", {"input": 42})


@pytest.mark.parametrize("old", sorted(name.split(".")[1] for name in OLD_TO_NEW))
def test_no_old_module_name_hides_a_public_name(old: str) -> None:
    if old in labkit.__all__:  # such a name (labkit.signature) must stay the public object, not the module
        assert getattr(labkit, old) is getattr(importlib.import_module(f"labkit.{old}"), old)
    else:
        assert getattr(labkit, old) is importlib.import_module(f"labkit.{old}")


# -- import labkit stays light ---------------------------------------------------------------------


def test_import_labkit_loads_none_of_the_lazy_modules_under_either_path() -> None:
    watched = [*HEAVY]
    for group, modules in LAYOUT.items():
        watched += [f"labkit.{group}.{m}" for m in modules if m in LAZY] + [f"labkit.{m}" for m in modules if m in LAZY]
    watched.append("labkit.teaching")
    code = (
        "import json, sys, labkit\n"
        f"watched = {watched!r}\n"
        "print(json.dumps(sorted(n for n in watched if any(m == n or m.startswith(n + '.') for m in sys.modules))))\n"
    )
    assert json.loads(_fresh(code)) == []


# -- public objects still pickle, and pickles made under the old paths still load ------------------


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
def test_public_objects_pickle_and_old_path_pickles_load(index: int) -> None:
    value = _public_objects()[index]
    data = pickle.dumps(value, protocol=2)  # protocol 2 names each class as "module\nname\n"
    assert pickle.loads(data) == value or repr(pickle.loads(data)) == repr(value)
    old_data = data
    for old, new in OLD_TO_NEW.items():
        old_data = old_data.replace(f"{new}\n".encode(), f"{old}\n".encode())
    if type(value).__module__ in OLD_TO_NEW.values():
        assert old_data != data  # the stream now names the old module
    restored = pickle.loads(old_data)
    assert type(restored) is type(value)
    assert restored == value or repr(restored) == repr(value)


# -- the tools a reader uses on a module work on an old path too ------------------------------------


def test_a_missing_module_under_an_old_path_is_not_found_and_the_error_names_the_old_path() -> None:
    import importlib.util

    assert importlib.util.find_spec("labkit.capstone.no_such_module") is None  # no spec that fails only when loaded
    with pytest.raises(ModuleNotFoundError) as raised:
        importlib.import_module("labkit.capstone.no_such_module")
    assert raised.value.name == "labkit.capstone.no_such_module"
    assert "labkit.capstone.no_such_module" in str(raised.value)


def test_reloading_an_old_path_or_the_compatibility_module_keeps_one_module_and_one_finder() -> None:
    code = (
        "import importlib, inspect, sys\n"
        "import labkit, labkit.scope, labkit.capstone.guard, labkit._moved\n"
        "first = labkit.scope.ExecutionScope\n"
        "assert importlib.reload(labkit.scope) is sys.modules['labkit.core.scope'] is sys.modules['labkit.scope']\n"
        "assert labkit.scope.ExecutionScope is not first  # executed again, in the same module object\n"
        "guard = sys.modules['labkit.capstone.guard']\n"
        "assert importlib.reload(guard) is sys.modules['labkit.teaching.capstone.guard']\n"
        "importlib.reload(labkit._moved)\n"
        "importlib.reload(labkit)\n"
        "finders = [f for f in sys.meta_path if type(f).__qualname__ == '_OldPathFinder']\n"
        "assert len(finders) == 1 and sys.meta_path[0] is finders[0], sys.meta_path\n"
        "import labkit.charts\n"
        "assert labkit.charts is sys.modules['labkit.teaching.charts']\n"
        "print('ok')\n"
    )
    assert _fresh(code) == "ok"


def test_source_and_help_of_an_old_path_are_the_moved_files() -> None:
    import inspect
    import pydoc

    scope = importlib.import_module("labkit.scope")
    assert inspect.getsourcefile(scope) == str(PACKAGE_DIR / "core" / "scope.py")
    assert "class ExecutionScope" in inspect.getsource(scope)
    assert inspect.getsourcefile(importlib.import_module("labkit.capstone.guard")) == str(
        PACKAGE_DIR / "teaching" / "capstone" / "guard.py"
    )
    assert pydoc.render_doc("labkit.scope").splitlines()[0].endswith("module labkit.core.scope in labkit")
    assert "counters_chart" in pydoc.render_doc("labkit.charts.counters_chart")


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
            if parts[1] not in _moved.MOVED:
                continue
            if len(parts) == 2 and parts[1] in labkit.__all__:  # labkit.signature: the public function
                continue
            old_paths.append(f"{where}: {target}")
    assert old_paths == []


@pytest.mark.parametrize("old", ["labkit.frames", "labkit.capstone", "labkit.capstone.guard"])
def test_python_m_an_old_path_says_the_new_one_in_one_line(old: str) -> None:
    done = subprocess.run([sys.executable, "-m", old], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stdout == ""
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.strip().endswith(f"{old} is {OLD_TO_NEW[old]} now: python -m {OLD_TO_NEW[old]}")


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
