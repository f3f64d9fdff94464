"""Re-execute chapter notebooks in place so their stored outputs match the code.

Usage: python scripts/execute_notebooks.py [NOTEBOOK ...]   (default: the chapters and appendices in notebooks/)

Each notebook runs in a fresh kernel through nbconvert, wrapped in an outer
process timeout and retried once: nbconvert can hang after widget cells go
idle (a known nbclient problem), which nbval itself does not.

Afterwards each stored traceback of a deliberate error is cut to the one line
the learner saw: the line ``labkit.teaching.short_errors()`` showed (kept as it
is), else ``Name: message`` on one line. nbval compares only the error's name
and value (kept as the kernel reported them), and a full traceback would store
this machine's file paths.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CELL_TIMEOUT_S = 60
NOTEBOOK_TIMEOUT_S = 300


def execute(notebook: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "jupyter",
        "nbconvert",
        "--to",
        "notebook",
        "--execute",
        "--inplace",
        f"--ExecutePreprocessor.timeout={CELL_TIMEOUT_S}",
        "--ExecutePreprocessor.kernel_name=python3",
        "--ExecutePreprocessor.store_widget_state=False",
        str(notebook),
    ]
    for attempt in (1, 2):
        try:
            subprocess.run(command, check=True, timeout=NOTEBOOK_TIMEOUT_S, cwd=notebook.parent)
            shorten_tracebacks(notebook)
            return
        except subprocess.TimeoutExpired:
            print(f"{notebook.name}: nbconvert hung (attempt {attempt}); retrying", file=sys.stderr)
    raise SystemExit(f"{notebook.name}: nbconvert hung twice")


def one_line_traceback(output: dict) -> list[str]:
    """The stored traceback of one error output: the single line the learner saw.

    A traceback that is already one line (what ``labkit.teaching.short_errors()``
    shows: ``one_line`` of the error, e.g. ``ValidationError: Limits.model_calls:
    Input should be greater than or equal to 0``) is kept as it is. Any other
    becomes ``Name: message`` with the message's lines joined by ``; `` (as
    ``labkit.teaching.one_line`` does), so a stored traceback is never more
    than one line.
    """
    traceback = output.get("traceback") or []
    if len(traceback) == 1 and "\n" not in traceback[0]:
        return list(traceback)
    text = "; ".join(line.strip() for line in str(output.get("evalue", "")).splitlines() if line.strip())
    return [f"{output['ename']}: {text}" if text else str(output["ename"])]


def shorten_tracebacks(notebook: Path) -> None:
    """Store each error output's traceback as :func:`one_line_traceback`; ``ename``/``evalue`` stay as reported."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    changed = False
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                short = one_line_traceback(output)
                if output.get("traceback") != short:
                    output["traceback"] = short
                    changed = True
    if changed:
        nbformat.write(nb, notebook)


def main(argv: list[str]) -> int:
    folder = ROOT / "notebooks"
    notebooks = [Path(a).resolve() for a in argv] or sorted(folder.glob("[0-9][0-9]_*.ipynb")) + sorted(
        folder.glob("appendix_*.ipynb")
    )
    for notebook in notebooks:
        print(f"executing {notebook.relative_to(ROOT)}")
        execute(notebook)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
