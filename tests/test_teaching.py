"""labkit.teaching.short_errors: expected errors shown as one line in a real IPython shell (issue 9)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

pytest.importorskip("IPython")

from IPython.core.interactiveshell import InteractiveShell  # noqa: E402

from labkit.teaching import one_line, short_errors  # noqa: E402

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture
def shell():
    """A real IPython shell whose shown errors are recorded as ipykernel would send them."""
    sh = InteractiveShell.instance()
    shown: list[tuple[str, str, str]] = []
    sent: list[dict] = []
    real = sh._showtraceback

    def record(etype, evalue, stb):
        # ipykernel's ZMQInteractiveShell._showtraceback sends exactly these: ename, evalue, traceback.
        shown.append((etype.__name__, str(evalue), ANSI.sub("", "\n".join(stb))))
        sent.append({"output_type": "error", "ename": etype.__name__, "evalue": str(evalue), "traceback": list(stb)})
        real(etype, evalue, stb)

    sh._showtraceback = record
    sh.shown = shown
    sh.sent = sent
    sh.run_cell("import asyncio, labkit", store_history=False)
    yield sh
    short_errors(False, shell=sh)
    del sh._showtraceback


CELLS = [
    (
        "labkit.Limits(model_calls=-1)",
        "ValidationError",
        "ValidationError: Limits.model_calls: Input should be greater than or equal to 0",
    ),
    (
        "labkit.run('nope')",
        "UnknownScenarioError",
        "UnknownScenarioError: unknown scenario 'nope'; choose one of: complete, incomplete, forbidden,"
        " repeat, changing, budget, deadline, unavailable",
    ),
    ("raise asyncio.CancelledError()", "CancelledError", "CancelledError: the run was cancelled by its caller"),
    ("raise TimeoutError('too slow')", "TimeoutError", "TimeoutError: too slow"),
    ("labkit.check({'a': labkit.run('repeat')}, status={'b': 'x'})", "InputError", "InputError: status: no run"),
]


@pytest.mark.parametrize(("cell", "name", "line"), CELLS)
def test_an_expected_error_shows_as_one_line_and_keeps_its_name_and_value(shell, cell, name, line) -> None:
    before = shell.run_cell(cell, store_history=False)
    long_name, long_value, long_text = shell.shown[-1]
    short_errors(shell=shell)
    after = shell.run_cell(cell, store_history=False)
    short_name, short_value, short_text = shell.shown[-1]
    assert not after.success and type(after.error_in_exec) is type(before.error_in_exec)
    assert (short_name, short_value) == (long_name, long_value)  # what the notebook stores, nbval compares
    assert short_name == name
    assert "\n" not in short_text and short_text.startswith(line)
    assert "https://" not in short_text and "Traceback" not in short_text
    assert len(long_text.splitlines()) > 1  # without short_errors the same cell shows a long traceback


def test_other_exceptions_keep_their_traceback(shell) -> None:
    short_errors(shell=shell)
    result = shell.run_cell("def f():\n    return 1 / 0\nf()", store_history=False)
    assert isinstance(result.error_in_exec, ZeroDivisionError)
    name, value, text = shell.shown[-1]
    assert (name, value) == ("ZeroDivisionError", "division by zero")
    assert len(text.splitlines()) > 3 and "return 1 / 0" in text


def test_short_errors_can_be_turned_off(shell) -> None:
    short_errors(shell=shell)
    short_errors(False, shell=shell)
    shell.run_cell("labkit.Limits(model_calls=-1)", store_history=False)
    assert len(shell.shown[-1][2].splitlines()) > 1


def test_one_line_texts() -> None:
    from pydantic import ValidationError

    import labkit

    with pytest.raises(ValidationError) as info:
        labkit.Limits(model_calls="x", tool_calls=-1, repetitions=None, deadline_s="a", extra=1)
    text = one_line(info.value)
    assert text.startswith("ValidationError: Limits.model_calls: Input should be a valid integer; Limits.tool_calls:")
    assert text.endswith("; and 2 more") and "\n" not in text
    assert one_line(labkit.UserError("first\n  second")) == "UserError: first; second"
    assert one_line(TimeoutError()) == "TimeoutError: the time limit passed"


def test_outside_ipython_it_does_nothing_and_imports_nothing_heavy() -> None:
    code = (
        "import sys\n"
        "import labkit.teaching\n"
        "assert 'IPython' not in sys.modules\n"
        "labkit.teaching.short_errors()\n"
        "assert 'IPython' not in sys.modules\n"
        "print('ok')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout == "ok\n"


def test_reachable_from_the_package() -> None:
    import labkit

    assert labkit.teaching.short_errors is short_errors


def _execute_notebooks_script():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "scripts" / "execute_notebooks.py"
    spec = importlib.util.spec_from_file_location("_scripts_execute_notebooks", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("cell", "name", "line"), CELLS[:2])
def test_the_stored_traceback_is_the_one_line_the_learner_saw(shell, tmp_path, cell, name, line) -> None:
    import nbformat

    script = _execute_notebooks_script()
    shell.run_cell(cell, store_history=False)
    long_output = dict(shell.sent[-1])  # without short_errors: IPython's long traceback
    short_errors(shell=shell)
    shell.run_cell(cell, store_history=False)
    short_output = dict(shell.sent[-1])  # with short_errors: the one line the learner sees
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(cell, outputs=[nbformat.from_dict(short_output)]),
        nbformat.v4.new_code_cell(cell, outputs=[nbformat.from_dict(long_output)]),
    ]
    path = tmp_path / "chapter.ipynb"
    nbformat.write(nb, path)
    script.shorten_tracebacks(path)
    stored = [cell.outputs[0] for cell in nbformat.read(path, as_version=4).cells]
    for output, sent in zip(stored, (short_output, long_output), strict=True):
        assert (output.ename, output.evalue) == (sent["ename"], sent["evalue"])  # what nbval compares: unchanged
        assert len(output.traceback) == 1 and "\n" not in output.traceback[0]
    assert stored[0].traceback == short_output["traceback"]  # the shown line is kept as it is
    assert ANSI.sub("", stored[0].traceback[0]) == one_line(shell.last_execution_result.error_in_exec)
    assert ANSI.sub("", stored[0].traceback[0]).startswith(line) and "https://" not in stored[0].traceback[0]
    assert stored[1].traceback[0].startswith(f"{name}: ")  # no short_errors: still one line


def test_sanitize_cfg_hides_the_pydantic_version_in_a_stored_error_value() -> None:
    """nbval compares ``evalue`` after notebooks/sanitize.cfg: pydantic's versioned link must not matter."""
    import configparser
    from pathlib import Path

    import pydantic

    import labkit

    config = configparser.ConfigParser()
    config.read(Path(__file__).resolve().parent.parent / "notebooks" / "sanitize.cfg")
    patterns = [(config[s]["regex"], config[s]["replace"]) for s in config.sections()]

    def sanitize(text: str) -> str:
        for regex, replace in patterns:
            text = re.sub(regex, replace, text)
        return text

    with pytest.raises(pydantic.ValidationError) as info:
        labkit.Limits(model_calls=-1)
    value = str(info.value)
    assert "https://errors.pydantic.dev/" in value  # the kernel reports it so; the stored evalue keeps it
    other_version = re.sub(r"pydantic\.dev/[0-9.]+/", "pydantic.dev/9.99/", value)
    assert other_version != value and sanitize(other_version) == sanitize(value)
