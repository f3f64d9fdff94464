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
* **looks up**: its answer can be read instead of worked out. The answer
  words are the values the predict cell assigns (a status such as
  ``"RepeatedCall"``, a number; ``True``/``False`` are not words) and its
  *reason*, the words of its trailing comments (``# the tool budget is checked
  before repetition``). A prediction looks up when
  - one bullet of the chapter's objectives (the list under "What you will be
    able to do") holds one of its values, or shares 3 content words with its
    reason;
  - a heading before it (the title excepted) holds one of its status values,
    or shares 2 content words with its reason ("Predict: the first stop wins");
  - its own case states the answer: in the cells of its section (from the last
    heading before it, within that cell, to the predict cell), a line of prose
    or of output holds one of its status values and no other status. A line
    naming two or more statuses offers a choice and is not a look-up; a status
    named in another section is a mention, not this case's answer;
  - its **hint** (``cell.metadata["labkit"]["hint"]``, shown when the guess is
    wrong or asked for) gives it: the hint holds one of its values, or its
    statements (the sentences that do not end in ``?``) share 3 content words
    with its reason. A hint nudges with questions; one that states the rule
    that decides the case is the answer, read one click early;
* **repeats**: its setup code (whitespace normalised) and its predicted
  names are those of an earlier prediction, in this chapter or an earlier one
  (a setup without code, the script described in prose, is compared by its
  prose); or it asks the same case as an earlier prediction: the same calls
  (every ``read_ticket(42)``-style call named in its setup, in code or prose)
  and the same values; or an earlier folded answer (a ``<details>`` answer
  with the question before it, this chapter or an earlier one) already gives
  every one of its values and shares 3 content words with its reason;
* **shown before its check**: a code cell between the predict cell and its
  check cell shows something (it has an output in ``notebooks/``): the run's
  table, chart or outcome would be on screen, under Run All, before the
  verdict. Run the case quietly, check, then show its tables and charts;
  what the learner needs to make the guess goes before the predict cell;
* **counts in comments**: it predicts a number of model calls and a comment
  in its setup code numbers the script's steps by model call (``# model call
  3``) up to a count it predicts.

Run the scenario by name *after* the prediction, use a mystery
(``labkit.teaching.predict.mystery``), or describe the script by its steps only;
write objectives as what the learner will be able to do, not the outcomes; put
no answer in a heading; ask each case once.
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
STATUSES = (
    "Completed",
    "Incomplete",
    "PermissionDenied",
    "RepeatedCall",
    "ToolBudget",
    "ModelBudget",
    "DeadlineExceeded",
    "ProviderUnavailable",
)
OBJECTIVES = re.compile(r"^\*\*What you will (?:be able to do|learn)\*\*", re.M)
STOPWORDS = frozenset(
    [
        "this",
        "that",
        "with",
        "from",
        "then",
        "when",
        "what",
        "which",
        "only",
        "they",
        "their",
        "there",
        "have",
        "been",
        "were",
        "will",
        "does",
        "each",
        "into",
        "than",
        "also",
        "your",
        "more",
        "once",
        "every",
        "some",
        "other",
        "same",
        "here",
        "even",
        "model",
        "call",
        "calls",
        "ticket",
        "review",
    ]
)
CALL = re.compile(r"\b([a-z_]+)\(\s*(?:input\s*=\s*)?(-?\d+(?:\.\d+)?)\s*\)")
CALL_CODE = re.compile(r"Call\(\s*[\"'](\w+)[\"']\s*,\s*\{[^}]*?:\s*(-?\d+(?:\.\d+)?)\s*\}")
FOLD = re.compile(r"<details><summary>Answer[^<]*</summary>(.*?)</details>", re.S)


def scenario_names() -> tuple[str, ...]:
    """The seed scenarios' names, from labkit (README.md, *The scenarios*)."""
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
    values: tuple[object, ...] = ()  # the values it assigns, in order
    reason: frozenset[str] = frozenset()  # content words of its comments
    calls: frozenset[str] = frozenset()  # the tool calls its setup names, e.g. "read_ticket(42)"
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


def _assigned_values(source: str) -> tuple[object, ...]:
    """The constants a predict cell assigns: one per guess, and for a guess per label (``{"simple": 3}``)
    each distinct label value, so that two per-label guesses compare by what they guess."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ()
    values: list[object] = []
    for node in tree.body:
        if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
            continue
        if isinstance(node.value, ast.Constant):
            values.append(node.value.value)
        elif isinstance(node.value, ast.Dict):  # one guess per label: each label's value, once
            for value in node.value.values:
                if isinstance(value, ast.Constant) and value.value not in values:
                    values.append(value.value)
    return tuple(values)


def _stem(word: str) -> str:
    word = word.lower().removesuffix("'s").removesuffix("’s")
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)]
            if suffix in ("ing", "ed") and word[-1] == word[-2] and word[-1] not in "aeiouls":
                word = word[:-1]  # admitted, admits: admit; stopped: stop
            return word
    return word


def content_words(text: str) -> frozenset[str]:
    """Words of four letters or more, lower case and stemmed, without common words."""
    words = re.findall(r"[A-Za-z][A-Za-z'’]+", text)
    return frozenset(_stem(w) for w in words if len(w) >= 4 and w.lower() not in STOPWORDS)


def _comments(source: str) -> str:
    return " ".join(line.split("#", 1)[1] for line in source.splitlines() if "#" in line)


NUMBERED_MODEL_CALL = re.compile(r"\bmodel call (\d+)\b", re.I)


def _counts(source: str) -> set[int]:
    """Every integer of 2 or more the predict cell assigns, one guess or one per label (``{"simple": 3}``)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    found = set()
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            for leaf in ast.walk(node.value):
                if isinstance(leaf, ast.Constant) and type(leaf.value) is int and leaf.value >= 2:
                    found.add(leaf.value)
    return found


def _numbered_model_calls(item: Prediction, code: list[str], source: str) -> list[str]:
    """A setup comment that numbers the model calls (``# model call 3``) up to a model-call count it predicts."""
    if not any("model_call" in name for name in item.predicts):
        return []
    numbers = {int(n) for text in code for n in NUMBERED_MODEL_CALL.findall(_comments(text))}
    if numbers and max(numbers) in _counts(source):
        return [f"looks up: a setup comment numbers the model calls up to {max(numbers)}, a count it predicts"]
    return []


def _statuses(values: tuple[object, ...]) -> list[str]:
    return [v for v in values if isinstance(v, str) and v in STATUSES]


def _value_words(values: tuple[object, ...]) -> list[str]:
    """Values a text could give away: strings, and numbers other than 0 and 1 (too common to give anything away)."""
    return [
        str(v)
        for v in values
        if isinstance(v, str) or (isinstance(v, int | float) and not isinstance(v, bool) and v not in (0, 1))
    ]


def _holds(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(word)}(?![\w]|\.\d)", text) is not None


def _named_calls(text: str) -> frozenset[str]:
    found = {f"{tool}({_number(arg)})" for tool, arg in CALL.findall(text)}
    found |= {f"{tool}({_number(arg)})" for tool, arg in CALL_CODE.findall(text)}
    return frozenset(found)


def _number(text: str) -> str:
    return str(int(float(text))) if float(text).is_integer() else text


def _outputs(cell: nbformat.NotebookNode) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if "text" in out:
            parts.append(out["text"])
        elif "data" in out and "text/plain" in out["data"]:
            parts.append(out["data"]["text/plain"])
    return "\n".join(parts)


def objectives(cells: list[nbformat.NotebookNode]) -> list[str]:
    """The bullets under the chapter's "What you will be able to do" (or, before issue 18, "learn")."""
    for cell in cells[:4]:
        if cell.cell_type != "markdown" or not OBJECTIVES.search(cell.source):
            continue
        block = OBJECTIVES.split(cell.source, 1)[1]
        block = re.split(r"\n\s*\n(?![-*] |  )", block.strip("\n"), maxsplit=1)[0]
        return [b.strip() for b in re.split(r"^[-*] ", block, flags=re.M) if b.strip()]
    return []


def _headings(cell: nbformat.NotebookNode) -> list[tuple[int, str]]:
    """(offset, text) of each level-2+ heading of a markdown cell."""
    if cell.cell_type != "markdown":
        return []
    return [(m.start(), m.group(1)) for m in re.finditer(r"^#{2,6} +(.*)$", cell.source, re.M)]


def _folds(cells: list[nbformat.NotebookNode]) -> list[str]:
    """Every folded answer of the cells, each with the paragraph of the question before it."""
    found = []
    for cell in cells:
        if cell.cell_type != "markdown":
            continue
        for m in FOLD.finditer(cell.source):
            before = cell.source[: m.start()].rstrip()
            question = re.split(r"\n\s*\n", before)[-1] if before else ""
            found.append(question + "\n" + m.group(1))
    return found


def _section_headings(cells: list[nbformat.NotebookNode], index: int) -> list[tuple[int, int, str]]:
    """(cell, offset, text) of every heading before cell ``index``, the title excepted."""
    return [
        (at, offset, heading) for at, cell in enumerate(cells[1:index], start=1) for offset, heading in _headings(cell)
    ]


def section(cells: list[nbformat.NotebookNode], index: int) -> list[tuple[nbformat.NotebookNode, str]]:
    """The cells of the prediction's section, from the last heading before cell ``index`` (within its cell)
    up to it, each with its source (a heading's cell from the heading on)."""
    headings = _section_headings(cells, index)
    if not headings:
        return []
    start, offset, _ = headings[-1]
    return [(cells[at], cells[at].source[offset:] if at == start else cells[at].source) for at in range(start, index)]


def _lookups(item: Prediction, cells: list[nbformat.NotebookNode], index: int, goals: list[str]) -> list[str]:
    problems = []
    words = _value_words(item.values)
    statuses = _statuses(item.values)
    for goal in goals:
        given = [w for w in words if _holds(goal, w)]
        shared = item.reason & content_words(goal)
        if given or len(shared) >= 3:
            what = f"{', '.join(given)}" if given else f"its reason ({', '.join(sorted(shared))})"
            problems.append(f"looks up: the objectives give {what}: {_normal(goal)[:80]!r}")
            break
    for _at, _offset, heading in _section_headings(cells, index):
        shared = item.reason & content_words(heading)
        given = [w for w in statuses if _holds(heading, w)]
        if given or len(shared) >= 2:
            what = ", ".join(given) if given else f"its reason ({', '.join(sorted(shared))})"
            problems.append(f"looks up: the heading {heading.strip()!r} gives {what}")
    if statuses:
        texts = [
            text
            for cell, text in section(cells, index)
            for text in [text if cell.cell_type == "markdown" else _outputs(cell)]
        ]
        for text in texts:
            for line in re.split(r"(?<=[.?!:])\s+|\n", text):
                if line.rstrip().endswith("?"):
                    continue  # a question asks, it does not answer
                named = {s for s in STATUSES if _holds(line, s)}
                if len(named) == 1 and named <= set(statuses):
                    problems.append(f"looks up: its own case states the answer before it: {_normal(line)[:80]!r}")
                    return problems
    return problems


def _shown_before_check(cells: list[nbformat.NotebookNode], index: int) -> list[str]:
    """The code cells between the predict cell at ``index`` and its check that show an output."""
    shown = []
    for later in range(index + 1, len(cells)):
        cell = cells[later]
        if _is_check(cell) or _is_predict(cell):
            break
        if cell.cell_type == "code" and cell.get("outputs"):
            shown.append(cell.get("id", str(later)))
    if not shown:
        return []
    return [f"shows the run before its check (cell {', '.join(shown)}): check first, then show the tables"]


def hint(cell: nbformat.NotebookNode) -> str:
    """The predict cell's hint, shown when the guess is wrong or asked for (``""`` without one)."""
    return str(cell.metadata.get("labkit", {}).get("hint", ""))


def _statements(text: str) -> str:
    """The sentences of ``text`` that do not end in ``?``, and in a question what comes before its last
    colon or semicolon ("The body never checks its token: which limit ...?" states a fact, then asks):
    a question asks, it does not answer."""
    kept = []
    for sentence in re.split(r"(?<=[.?!])\s+", text.strip()):
        if sentence.rstrip().endswith("?"):  # keep only what comes before the question itself
            sentence = sentence[: max(sentence.rfind(": "), sentence.rfind("; "), 0)]
        if sentence:
            kept.append(sentence)
    return " ".join(kept)


def _hint_lookups(item: Prediction, text: str) -> list[str]:
    """A hint that holds one of the prediction's values, or states its reason (3 content words shared)."""
    given = [w for w in _value_words(item.values) if _holds(text, w)]
    shared = item.reason & content_words(_statements(text))
    if not given and len(shared) < 3:
        return []
    what = ", ".join(given) if given else f"its reason ({', '.join(sorted(shared))})"
    return [f"looks up: its hint gives {what}: {_normal(text)[:80]!r}"]


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
    earlier_folds: list[tuple[str, str]] = []  # (chapter, folded answer) of earlier chapters
    for path in sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        cells = nbformat.read(path, as_version=4).cells
        goals = objectives(cells)
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
                chapter=path.name,
                cell=cell.get("id", str(index)),
                index=index,
                predicts=_assigned_names(cell.source),
                setup_code=_normal("\n".join(code)),
                setup_text=_normal("\n".join(text)),
                summary=_summary(code, text),
                values=_assigned_values(cell.source),
                reason=content_words(_comments(cell.source)),
                calls=_named_calls("\n".join(text for _, text in section(cells, index))),
            )
            item.problems += _lookups(item, cells, index, goals)
            item.problems += _hint_lookups(item, hint(cell))
            item.problems += _numbered_model_calls(item, code, cell.source)
            item.problems += _shown_before_check(cells, index)
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
                same = next(
                    (p for p in found if item.calls and p.calls == item.calls and p.values == item.values), None
                )
                if same:
                    item.problems.append(
                        f"repeats the case of {same.chapter} cell {same.cell} (same calls, same answer)"
                    )
            folds = earlier_folds + [(path.name, fold) for fold in _folds(cells[:index])]
            words = _value_words(item.values)
            for chapter, fold in folds:
                if (
                    _statuses(item.values)
                    and all(_holds(fold, w) for w in words)
                    and len(item.reason & content_words(fold)) >= 3
                ):
                    item.problems.append(f"repeats a folded answer of {chapter}: {_normal(fold)[:70]!r}")
                    break
            found.append(item)
        earlier_folds += [(path.name, fold) for fold in _folds(cells)]
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
        "backticks or runs one by name before the prediction; no answer can be looked up (in the",
        "chapter's objectives, a heading before it, its own case's prose and outputs, or its hint); and no",
        "prediction repeats an earlier one's setup, its case (same calls, same answer) or an earlier",
        "folded answer. The script's docstring gives the rule in full.",
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
