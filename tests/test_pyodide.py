"""labkit on Pyodide (CPython compiled to WebAssembly, as in a browser), run here under Node.js (issue 23).

Every scenario under both agents, through the sync entry (``labkit.run``, which uses
``pyodide.ffi.run_sync`` there) and the async one (``await labkit.arun``), must end with the same
status, exit code and events as on CPython. Pyodide has no threads, so a sync tool body runs on
the run's own thread: a body that sleeps (Pyodide's ``time.sleep`` suspends and lets the run go
on) is left behind at the deadline as on CPython, while a body that keeps the interpreter busy
holds the run until it returns (docs/guarantees.md). No event loop error is printed.

Needs Node.js and ``scripts/pyodide_setup.sh`` (the ``pyodide`` npm package and labkit's
dependencies as Pyodide wheels, cached outside the repository; ``.ci/run`` runs it). Without
them the test is skipped and says why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import labkit

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent / "pyodide"
CACHE = Path(os.environ.get("LABKIT_PYODIDE_CACHE", Path.home() / ".cache" / "labkit-pyodide"))
PYODIDE = CACHE / "node_modules" / "pyodide"
WHEELS = CACHE / "wheels"
NODE = shutil.which("node")

pytestmark = pytest.mark.slow

if NODE is None or not (PYODIDE / "pyodide.mjs").exists() or not any(WHEELS.glob("pydantic_core-*.whl")):
    pytest.skip(
        "Pyodide is not set up: needs Node.js and `scripts/pyodide_setup.sh` (run by .ci/run)", allow_module_level=True
    )


def _stack_switching_flag() -> str:
    """Node's flag for WebAssembly stack switching, which pyodide.ffi.run_sync needs (it is the default in browsers)."""
    options = subprocess.run([NODE, "--v8-options"], capture_output=True, text=True, check=True).stdout
    return (
        "--experimental-wasm-jspi" if "--experimental-wasm-jspi" in options else "--experimental-wasm-stack-switching"
    )


@pytest.fixture(scope="module")
def pyodide_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    wheels = tmp_path_factory.mktemp("wheels")
    for wheel in WHEELS.glob("*.whl"):
        shutil.copy(wheel, wheels)
    build = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels)]
    subprocess.run([*build, str(ROOT)], check=True, capture_output=True)
    command = [
        NODE,
        _stack_switching_flag(),
        str(HERE / "runner.mjs"),
        str(PYODIDE),
        str(wheels),
        str(HERE / "table.py"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    sync, asynchronous = (json.loads(line) for line in done.stdout.splitlines() if line.startswith("{"))
    return {"sync": sync, "async": asynchronous, "stderr": done.stderr}


def _cpython_rows() -> list[dict[str, object]]:
    rows = []
    for name, scenario in labkit.SCENARIOS.items():
        limits = scenario.limits.with_(deadline_s=0.2) if name == "deadline" else scenario.limits
        for agent in ("simple", "harness"):
            outcome = labkit.run(name, agent=agent, limits=limits)
            events = [[e.kind.value, e.name, e.count] for e in outcome.events]
            rows.append(
                {
                    "scenario": name,
                    "agent": agent,
                    "status": outcome.status.value,
                    "exit_code": outcome.exit_code,
                    "events": events,
                }
            )
    return rows


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_every_scenario_ends_on_pyodide_as_on_cpython(pyodide_run: dict, mode: str):
    result = pyodide_run[mode]
    assert result["platform"] == "emscripten", "the runs happened on Pyodide"
    assert len(result["rows"]) == 2 * len(labkit.SCENARIOS) == 16
    assert result["rows"] == _cpython_rows()


def test_a_sync_body_that_sleeps_is_left_behind_and_a_busy_one_holds_the_run(pyodide_run: dict):
    slow = pyodide_run["async"]["slow_bodies"]
    for kind in ("sleeps", "busy"):
        assert (slow[kind]["status"], slow[kind]["tool_calls"], slow[kind]["entered"]) == ("DeadlineExceeded", 1, True)
    assert slow["sleeps"]["finished"] is False, "time.sleep suspends: the run ended at its deadline, the body later"
    assert slow["busy"]["finished"] is True, "no thread to leave it on: the run waited for the body to return"


def test_no_event_loop_error_is_printed(pyodide_run: dict):
    assert "Unhandled exception" not in pyodide_run["stderr"]
    assert "Traceback" not in pyodide_run["stderr"]
