"""labkit's modules import one another without a cycle, and only downward (issue 21).

The graph is read from the source with :mod:`ast`, not by importing: every
``import`` and ``from ... import`` counts, at the top of a module, inside a
function (a lazy import is still an arrow) and under ``if TYPE_CHECKING:``.
``from package import name`` points at the submodule ``package.name`` when
there is one, else at the package's ``__init__``. The implicit import of a
module's parent packages is not an arrow.

The layers, lowest first, as the code has them (a module may import its own
layer and the ones below, never one above):

0. ``labkit._version``: imports nothing of labkit;
1. ``labkit.core``: limits, events, signature, binding, rules, the guarded tool, cancellation, the
   run's lifecycle, the scope, errors, and the private ``labkit.core._machinery``;
2. ``labkit.transports``: chat messages, the counting client, scripted and live transports;
3. ``labkit.loops``: the agents, the run (``running``), telemetry, the runner (``prepare``/``run``);
4. ``labkit.adapters`` (foreign runtimes, built on the loops' agents) and ``labkit.durable``
   (with ``labkit._durable_sql``; only the core below it);
5. ``labkit.cli``: the console, over the runner;
6. ``labkit.teaching``: the workbook's helpers (``runtimes`` uses the adapters, ``terminal`` the console);
7. ``labkit`` itself (``__init__``: the public names, and the one place that hands the runner the
   adapters' factory) and ``labkit.__main__``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import labkit

PACKAGE_DIR = Path(labkit.__file__).parent

LAYERS: tuple[tuple[str, ...], ...] = (
    ("labkit._version",),
    ("labkit.core",),
    ("labkit.transports",),
    ("labkit.loops",),
    ("labkit.adapters", "labkit.durable", "labkit._durable_sql"),
    ("labkit.cli",),
    ("labkit.teaching",),
    ("labkit", "labkit.__main__"),
)
"""Lowest first; a module belongs to the layer of the longest prefix that names it."""


def module_name(path: Path, root: Path) -> str:
    """``labkit/loops/runner.py`` -> ``labkit.loops.runner``; a package's ``__init__.py`` -> the package."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(root: Path) -> dict[str, set[str]]:
    """Each module of the package at ``root`` -> the package's modules it imports (anywhere in its source)."""
    files = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    source = ".".join([*base, node.module] if node.module else base)
                else:
                    source = node.module or ""
                for alias in node.names:
                    child = f"{source}.{alias.name}"
                    targets.add(child if child in files else source)
        owners = {_owner(target, files) for target in targets}
        graph[name] = {owner for owner in owners if owner is not None} - {name}
    return graph


def _owner(target: str, files: dict[str, Path]) -> str | None:
    """The package module an import names (``labkit.core.scope.GuardedTool`` -> ``labkit.core.scope``)."""
    while target and target not in files:
        target = target.rpartition(".")[0]
    return target or None


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path ``[a, b, ..., a]``, or ``None``."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def layer_of(module: str, layers: tuple[tuple[str, ...], ...] = LAYERS) -> int:
    """The layer of the longest prefix naming ``module`` (``labkit`` alone names only the root)."""
    best, rank = -1, -1
    for index, prefixes in enumerate(layers):
        for prefix in prefixes:
            matches = module == prefix or (prefix != "labkit" and module.startswith(prefix + "."))
            if matches and len(prefix) > best:
                best, rank = len(prefix), index
    if rank < 0:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS")
    return rank


def upward_arrows(graph: dict[str, set[str]], layers: tuple[tuple[str, ...], ...] = LAYERS) -> list[str]:
    """Every import from a lower layer to a higher one, as ``"a -> b"``."""
    return sorted(
        f"{a} -> {b}" for a, targets in graph.items() for b in targets if layer_of(a, layers) < layer_of(b, layers)
    )


# -- labkit itself ------------------------------------------------------------------------------------


def test_labkit_has_no_import_cycle() -> None:
    assert find_cycle(import_graph(PACKAGE_DIR)) is None


def test_no_labkit_module_imports_a_higher_layer() -> None:
    assert upward_arrows(import_graph(PACKAGE_DIR)) == []


def test_every_labkit_module_is_in_a_layer() -> None:
    for module in import_graph(PACKAGE_DIR):
        layer_of(module)


def test_the_graph_sees_the_arrows_the_layers_are_about() -> None:
    """The reader is not blind: known arrows, lazy ones included, are in the graph."""
    graph = import_graph(PACKAGE_DIR)
    assert "labkit.core.scope" in graph["labkit.loops.agents"]
    assert "labkit.loops.running" in graph["labkit.loops.telemetry"]
    assert "labkit.loops.telemetry" in graph["labkit.loops.runner"]  # a lazy import inside prepare()
    assert "labkit.adapters" in graph["labkit"]  # the factory labkit/__init__.py hands the runner
    assert "labkit.cli" in graph["labkit.teaching.terminal"]  # lazy too
    assert "labkit.loops.running" in graph["labkit.adapters"]  # ForeignAgent registers itself


# -- the checks can fail ------------------------------------------------------------------------------


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "labkit"
    for relative, source in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    return root


_BASE = {
    "__init__.py": "from .loops.runner import run\n",
    "core/__init__.py": "",
    "core/scope.py": "from .errors import Halt\n",
    "core/errors.py": "class Halt(Exception): ...\n",
    "loops/__init__.py": "",
    "loops/runner.py": "from ..core.scope import x\n",
}


def test_a_clean_package_passes(tmp_path: Path) -> None:
    graph = import_graph(_package(tmp_path, _BASE))
    assert graph["labkit.loops.runner"] == {"labkit.core.scope"}
    assert find_cycle(graph) is None and upward_arrows(graph) == []


@pytest.mark.parametrize(
    ("where", "source"),
    [
        ("core/errors.py", "def f():\n    from .scope import x\n"),  # a lazy import closes the loop
        ("core/errors.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import scope\n"),
        ("core/errors.py", "import labkit.core.scope\n"),
    ],
)
def test_a_cycle_is_found(tmp_path: Path, where: str, source: str) -> None:
    graph = import_graph(_package(tmp_path, {**_BASE, where: source}))
    cycle = find_cycle(graph)
    assert cycle is not None and cycle[0] == cycle[-1]
    assert set(cycle) == {"labkit.core.errors", "labkit.core.scope"}


@pytest.mark.parametrize(
    "source",
    [
        "def f():\n    from ..loops.runner import run\n",
        "from .. import loops\n",
        "from .. import __version__\n",  # the package root is the highest layer
    ],
)
def test_an_arrow_up_is_found(tmp_path: Path, source: str) -> None:
    graph = import_graph(_package(tmp_path, {**_BASE, "core/limits.py": source}))
    assert len(upward_arrows(graph)) == 1 and upward_arrows(graph)[0].startswith("labkit.core.limits -> ")


def test_a_module_outside_every_layer_is_reported(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="labkit.extra is in no layer"):
        layer_of("labkit.extra")
