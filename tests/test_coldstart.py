"""The console path (``labkit run complete``) loads only what printing a scenario's outcome needs."""

from __future__ import annotations

import json
import subprocess
import sys

# Third-party libraries and labkit modules the console never needs to run a scripted scenario.
NOT_ON_THE_CONSOLE_PATH = (
    "pandas",
    "numpy",
    "matplotlib",
    "ipywidgets",
    "IPython",
    "ipykernel",
    "jupyter_client",
    "openai",
    "httpx",
    "opentelemetry",
    "sqlite3",
    "labkit.transports.live",
    "labkit.loops.telemetry",
    "labkit.durable",
    "labkit.teaching",  # the package, hence every module below
    "labkit.teaching.predict",
    "labkit.teaching.frames",
    "labkit.teaching.charts",
    "labkit.teaching.widgets",
    "labkit.teaching.spans",
    "labkit.teaching.direct",
    "labkit.teaching.capstone",
)

_PROBE = (
    "import contextlib, io, json, sys\n"
    "from labkit.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
    "    code = main(['run', 'complete'])\n"
    "names = json.loads(sys.argv[1])\n"
    "loaded = sorted(n for n in names if any(m == n or m.startswith(n + '.') for m in sys.modules))\n"
    "print(json.dumps({'code': code, 'loaded': loaded, 'printed': out.getvalue()}))\n"
)


def _console(names: tuple[str, ...]) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(names)], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(done.stdout)


def test_the_console_run_loads_none_of_the_unneeded_modules() -> None:
    result = _console(NOT_ON_THE_CONSOLE_PATH)
    assert result["code"] == 0
    assert "Completed" in str(result["printed"])
    assert result["loaded"] == []


def test_the_probe_sees_modules_the_console_does_load() -> None:
    assert _console(("labkit.core.scope", "pydantic", "asyncio"))["loaded"] == [
        "asyncio",
        "labkit.core.scope",
        "pydantic",
    ]
