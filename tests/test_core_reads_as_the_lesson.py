"""The core's lesson files stay short enough to read top to bottom (issue 21).

A lesson file is a module of ``labkit/core/`` that is not private (its name does not start with
``_``): :mod:`labkit.core.limits`, ``events``, ``signature``, ``arguments``, ``binding``, ``rules``,
``bodies``, ``guarded``, ``cancellation``, ``scope``, ``errors``. What makes Python keep the
promises lives in the private package ``labkit/core/_machinery/`` and is not held to these bounds.

* no lesson file is over :data:`MAX_FILE_LINES` lines;
* no function or method in one is over :data:`MAX_FUNCTION_LINES` lines, its docstring not
  counted (a docstring states shapes, errors and the rule's document; the bound is on the code).

Read from the source with :mod:`ast`, not by importing.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import labkit

CORE = Path(labkit.__file__).parent / "core"
MAX_FILE_LINES = 350
MAX_FUNCTION_LINES = 50


def lesson_files(core: Path = CORE) -> list[Path]:
    return sorted(p for p in core.glob("*.py") if not p.name.startswith("_"))


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """``"name: N lines"`` for each function or method of ``source`` longer than ``limit``, docstring excluded."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        length = (node.end_lineno or node.lineno) - start + 1
        first = node.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            length -= (first.end_lineno or first.lineno) - first.lineno + 1
        if length > limit:
            found.append(f"{node.name}: {length} lines")
    return found


def test_the_lesson_files_are_the_ones_the_core_lists() -> None:
    doc = (CORE / "__init__.py").read_text(encoding="utf-8")
    names = [p.stem for p in lesson_files() if p.stem != "__init__"]
    assert len(names) >= 8
    assert [n for n in names if f":mod:`~labkit.core.{n}`" not in doc] == []


@pytest.mark.parametrize("path", lesson_files(), ids=lambda p: p.name)
def test_no_lesson_file_is_over_the_bound(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_FILE_LINES, f"{path.name}: {lines} lines; cut it along a seam of the lesson"


@pytest.mark.parametrize("path", lesson_files(), ids=lambda p: p.name)
def test_no_function_in_a_lesson_file_is_over_the_bound(path: Path) -> None:
    assert long_functions(path.read_text(encoding="utf-8")) == []


def test_the_measure_counts_code_not_docstrings() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES - 1))
    docstring = '    """' + "\n" * 30 + '    """\n'
    assert long_functions(f"def fine():\n{docstring}{body}\n") == []  # def + 49 lines: 50
    assert long_functions(f"def long():\n{body}\n    return 0\n") == [f"long: {MAX_FUNCTION_LINES + 1} lines"]
    nested = f"class C:\n    @staticmethod\n    def m():\n{body.replace('    ', '        ')}\n        return 0\n"
    assert long_functions(nested) == [f"m: {MAX_FUNCTION_LINES + 2} lines"]  # decorator, def, 49, return
