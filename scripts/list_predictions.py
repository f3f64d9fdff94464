"""List every prediction of the chapters and check that none can be looked up instead of thought through.

Usage:
    python scripts/list_predictions.py           # print the list, write docs/predictions.md; exit 1 on a violation
    python scripts/list_predictions.py --check   # the same, but write nothing; also exit 1 if the doc is stale

A **predict cell** is a code cell tagged ``solution`` in ``notebooks/`` (the
learner edition turns it into ``my_status = ...  # your guess``). Its
**setup** is every cell after the previous predict or check cell (a code cell
calling ``labkit.check(`` or ``labkit.compare(``), or after the chapter's
start, up to the predict cell; the predict cell itself is not part of it
(learners see only its scaffold). A prediction breaks the rule if:

* **names**: its setup names a seed scenario in quotes or backticks
  (``"complete"``, ``'deadline'``, `` `repeat` ``, ...), in prose or code,
  so the answer could be read from the name; a ``run``/``prepare`` call with a
  scenario name literal is reported as such;
* **repeats**: its setup code (whitespace normalised) and its predicted
  names are those of an earlier prediction, in this chapter or an earlier one.
  A setup without code (the script described in prose) is compared by its
  prose.

Run the scenario by name *after* the prediction, use a mystery
(``labkit.teaching.predict.mystery``), or describe the script by its steps only.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
DOC = Path("docs") / "predictions.md"
CHECK_CALLS = ("labkit.check(", "labkit.compare(")
RUN_CALLS = {"run", "prepare"}
QUOTES = "\"'`“”‘’"


def scenario_names() -> tuple[str, ...]:
    """The seed scenarios' names, from labkit (SPEC §6)."""
    sys.path.insert(0, str(ROOT))
    try:
        from labkit.loops.scenarios import SCENARIOS
    finally:
        sys.path.remove(str(ROOT))
    return tuple(SCENARIOS)


@dataclass
class Prediction:
    chapter: str
    cell: str  # the predict cell's id
    index: int  # its position among the chapter's cells
    predicts: tuple[str, ...]  # the names it assigns, e.g. ("my_status", "my_tool_calls")
    setup_code: str
    setup_text: str
    summary: str
    problems: list[str] = field(default_factory=list)


def _is_check(cell: nbformat.NotebookNode) -> bool:
    return cell.cell_type == "code" and any(call in cell.source for call in CHECK_CALLS)


def _is_predict(cell: nbformat.NotebookNode) -> bool:
    return cell.cell_type == "code" and "solution" in cell.metadata.get("tags", [])


def _assigned_names(source: str) -> tuple[str, ...]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ()
    names = []
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return tuple(names)


def _normal(text: str) -> str:
    return " ".join(text.split())


def _summary(code_cells: list[str], text_cells: list[str]) -> str:
    """One line: the statements of the last code cell of the setup (imports and comments left out);
    without code, the setup's last heading, else its last line of prose."""
    source = code_cells[-1] if code_cells else ""
    try:
        statements = ast.parse(source).body
        lines = [
            _normal(ast.get_source_segment(source, node) or "")
            for node in statements
            if not isinstance(node, ast.Import | ast.ImportFrom)
        ]
    except SyntaxError:  # IPython syntax (magics): line by line
        lines = [line.strip() for line in source.splitlines() if line.strip() and not line.strip().startswith("#")]
    if not lines:
        prose = [line.strip() for source in text_cells for line in source.splitlines()]
        prose = [line for line in prose if line and not line.startswith("<!--")]
        headings = [line.lstrip("#").strip() for line in prose if line.startswith("#")]
        lines = headings[-1:] or prose[-1:]
    text = _normal("; ".join(lines)) or "(nothing)"
    return text if len(text) <= 100 else text[:97] + "..."


def _scenario_literals(source: str, names: tuple[str, ...]) -> list[str]:
    """Scenario names written between quotes or backticks in ``source``."""
    pattern = re.compile(rf"[{QUOTES}]({'|'.join(map(re.escape, names))})[{QUOTES}]")
    return sorted(set(pattern.findall(source)))


def _run_calls_with_a_name(source: str, names: tuple[str, ...]) -> list[str]:
    """``run``/``prepare`` calls (any receiver) with a scenario name literal among their arguments."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if called not in RUN_CALLS:
            continue
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            if isinstance(arg, ast.Constant) and arg.value in names:
                found.append(f"{called}({arg.value!r})")
    return found


def predictions(root: Path, names: tuple[str, ...]) -> list[Prediction]:
    """Every predict cell of ``root/notebooks`` in chapter and cell order, with its rule violations."""
    found: list[Prediction] = []
    seen: dict[tuple[str, tuple[str, ...]], Prediction] = {}
    for path in sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        cells = nbformat.read(path, as_version=4).cells
        start = 0
        for index, cell in enumerate(cells):
            if _is_check(cell):
                start = index + 1
            if not _is_predict(cell):
                continue
            setup = cells[start:index]
            start = index + 1
            code = [c.source for c in setup if c.cell_type == "code"]
            text = [c.source for c in setup if c.cell_type == "markdown"]
            item = Prediction(
                chapter=path.name, cell=cell.get("id", str(index)), index=index,
                predicts=_assigned_names(cell.source), setup_code=_normal("\n".join(code)),
                setup_text=_normal("\n".join(text)), summary=_summary(code, text),
            )
            calls = [call for source in code for call in _run_calls_with_a_name(source, names)]
            if calls:
                item.problems.append(f"runs a scenario by name before the prediction: {', '.join(calls)}")
            quoted = _scenario_literals("\n".join(c.source for c in setup), names)
            if quoted:
                item.problems.append(f"its setup names the scenario {', '.join(map(repr, quoted))}")
            key = (item.setup_code or "prose: " + item.setup_text, tuple(sorted(item.predicts)))
            if key in seen:
                first = seen[key]
                item.problems.append(
                    f"repeats the prediction of {first.chapter} cell {first.cell} (same setup and names)"
                )
            else:
                seen[key] = item
            found.append(item)
    return found


def table(items: list[Prediction]) -> list[str]:
    rows = ["| chapter | cell | predicts | setup | rule |", "|---|---|---|---|---|"]
    for p in items:
        rule = "; ".join(p.problems) if p.problems else "ok"
        setup = p.summary.replace("|", "\\|").replace("`", "'")
        rows.append(f"| {p.chapter[:2]} | `{p.cell}` | {', '.join(p.predicts) or '(nothing)'} | `{setup}` | {rule} |")
    return rows


def document(items: list[Prediction]) -> str:
    broken = sum(bool(p.problems) for p in items)
    lines = [
        "# The predictions",
        "",
        "<!-- generated by scripts/list_predictions.py, do not edit -->",
        "",
        "Every prediction the chapters ask for, in order: the chapter, the predict cell's id, the names",
        "the learner fills in, and the code (or, without code, the prose) that sets it up. The rule,",
        "checked by `scripts/list_predictions.py` in the tests: no setup names a scenario in quotes or",
        "backticks or runs one by name before the prediction, and no prediction repeats an earlier",
        "one's setup and names.",
        "",
        f"{len(items)} predictions, {broken} breaking the rule.",
        "",
        *table(items),
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help=f"write nothing; exit 1 if {DOC} is out of date too")
    parser.add_argument("--root", type=Path, default=ROOT, help="repository root (default: this checkout)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    items = predictions(root, scenario_names())
    for p in items:
        print(f"{p.chapter}  cell {p.cell}  predicts {', '.join(p.predicts) or '(nothing)'}  setup: {p.summary}")
        for problem in p.problems:
            print(f"    BREAKS THE RULE: {problem}")
    broken = [p for p in items if p.problems]
    doc = root / DOC
    text = document(items)
    status = 0
    if broken:
        print(f"{len(broken)} of {len(items)} predictions break the rule (see the docstring of this script).")
        status = 1
    if args.check:
        if not doc.exists() or doc.read_text(encoding="utf-8") != text:
            print(f"out of date: {DOC} (run `python scripts/list_predictions.py`)")
            status = 1
    elif not doc.exists() or doc.read_text(encoding="utf-8") != text:
        doc.parent.mkdir(parents=True, exist_ok=True)
        doc.write_text(text, encoding="utf-8")
        print(f"updated: {DOC}")
    return status


if __name__ == "__main__":
    sys.exit(main())
