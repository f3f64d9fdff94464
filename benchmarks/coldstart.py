"""Cold start: ``labkit run complete`` against the floor our own dependencies set.

``python -m benchmarks.coldstart [--repeats N]`` prints one JSON line: the median
wall time of each command (fresh process each time), the ratio of the console to
``python -c "import asyncio, pydantic"``, and whether ``import labkit`` or the
console loaded pandas, matplotlib, ipywidgets or anything Jupyter.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HEAVY = (
    "pandas",
    "matplotlib",
    "ipywidgets",
    "IPython",
    "ipykernel",
    "jupyter",
    "jupyter_client",
    "jupyterlab",
    "notebook",
    "numpy",
)

COMMANDS = {
    "python_empty": [sys.executable, "-c", "pass"],
    "floor": [sys.executable, "-c", "import asyncio, pydantic"],
    # pydantic's top module is lazy: the model machinery loads with the first BaseModel subclass.
    "floor_with_a_model": [
        sys.executable,
        "-c",
        "import asyncio\nfrom pydantic import BaseModel\nclass A(BaseModel):\n    x: int",
    ],
    "import_labkit": [sys.executable, "-c", "import labkit"],
    "console": [sys.executable, "-m", "labkit", "run", "complete"],
}

PROBE = (
    "import sys\n"
    "from labkit.cli import main\n"
    "import contextlib, io\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    code = main(['run', 'complete'])\n"
    f"heavy = sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))\n"
    "print(code, ','.join(heavy))\n"
)


def _wall(cmd: list[str]) -> float:
    return _time(cmd)[0]


# Every command runs with bytecode, as an installed package does: an editable install run with
# PYTHONDONTWRITEBYTECODE compiles labkit's sources in every process. The bytecode goes to a
# private cache directory (written by the warm-up runs), so the source tree is left untouched.
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
_ENV["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="labkit-coldstart-")


def _time(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, of the child process) of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=_ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(repeats: int = 15) -> dict[str, object]:
    for cmd in COMMANDS.values():  # warm the file cache
        _wall(cmd)
    samples: dict[str, list[float]] = {k: [] for k in COMMANDS}
    cpu: dict[str, list[float]] = {k: [] for k in COMMANDS}
    for _ in range(repeats):  # interleaved, so machine noise hits every command alike
        for key, cmd in COMMANDS.items():
            wall, used = _time(cmd)
            samples[key].append(wall)
            cpu[key].append(used)
    probe = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout.split()
    result: dict[str, object] = {f"{k}_ms": statistics.median(v) * 1e3 for k, v in samples.items()}
    result.update({f"{k}_spread_ms": [min(v) * 1e3, max(v) * 1e3] for k, v in samples.items()})
    result.update({f"{k}_cpu_ms": statistics.median(v) * 1e3 for k, v in cpu.items()})
    # paired: each round's console against the same round's floors (CPU time), median and range
    for floor in ("floor", "floor_with_a_model"):
        ratios = [c / f for c, f in zip(cpu["console"], cpu[floor], strict=True)]
        result[f"cpu_ratio_console_to_{floor}"] = statistics.median(ratios)
        result[f"cpu_ratio_console_to_{floor}_range"] = [min(ratios), max(ratios)]
        wall_ratios = [c / f for c, f in zip(samples["console"], samples[floor], strict=True)]
        result[f"wall_ratio_console_to_{floor}"] = statistics.median(wall_ratios)
        result[f"wall_ratio_console_to_{floor}_range"] = [min(wall_ratios), max(wall_ratios)]
    result["console_exit_code"] = int(probe[0])
    result["heavy_modules_loaded"] = probe[1] if len(probe) > 1 else ""
    result["ratio_console_to_floor"] = result["console_ms"] / result["floor_ms"]  # type: ignore[operator]
    result["ratio_console_to_floor_with_a_model"] = result["console_ms"] / result["floor_with_a_model_ms"]  # type: ignore[operator]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.coldstart")
    parser.add_argument("--repeats", type=int, default=15)
    print(json.dumps(measure(parser.parse_args().repeats)))


if __name__ == "__main__":
    main()
