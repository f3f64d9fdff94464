"""Workbook verification time: the full ``pytest --nbval`` of the notebooks, with its costs broken out.

``python -m benchmarks.notebooks [--dir notebooks] [--workers 2]`` prints one JSON line:
the notebooks found, the wall time of the whole nbval run serially and with
pytest-xdist (``-n WORKERS``), each run's pass/fail, and the fixed costs inside
it: starting pytest with nbval, starting one kernel, and importing labkit with
the teaching libraries inside a kernel's interpreter. It measures whatever
notebooks exist; with none it says so.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

NBVAL = ["--nbval", "--nbval-current-env", "--nbval-cell-timeout", "120", "-p", "no:cacheprovider", "-q"]

KERNEL_START = (
    "import time\n"
    "from jupyter_client.manager import start_new_kernel\n"
    "t = time.perf_counter()\n"
    "km, kc = start_new_kernel(kernel_name='python3')\n"
    "kc.execute_interactive('pass', timeout=60)\n"
    "started = time.perf_counter() - t\n"
    "kc.stop_channels(); km.shutdown_kernel(now=True)\n"
    "print('kernel_start', started)\n"
)

TEACHING_IMPORTS = "import labkit, labkit.teaching.frames, labkit.teaching.charts, pandas, matplotlib, ipywidgets"


def _wall(cmd: list[str], cwd: Path) -> tuple[float, int, str]:
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    tail = (done.stdout.strip().splitlines() or [""])[-1]
    return time.perf_counter() - start, done.returncode, tail


def measure(directory: Path, workers: int, repeats: int = 3) -> dict[str, object]:
    root = Path.cwd()
    notebooks = sorted(directory.glob("*.ipynb"))
    result: dict[str, object] = {"notebooks": [n.name for n in notebooks]}
    sanitize = directory / "sanitize.cfg"
    flags = NBVAL + (["--nbval-sanitize-with", str(sanitize)] if sanitize.exists() else [])
    python = sys.executable
    result["pytest_nbval_startup_s"] = statistics.median(
        _wall([python, "-c", "import pytest, nbval"], root)[0] for _ in range(repeats)
    )
    result["teaching_imports_s"] = statistics.median(
        _wall([python, "-c", TEACHING_IMPORTS], root)[0] for _ in range(repeats)
    )
    kernel = []
    for _ in range(repeats):
        out = subprocess.run([python, "-c", KERNEL_START], capture_output=True, text=True, check=True).stdout
        kernel.append(float(out.split("kernel_start")[-1]))
    result["kernel_start_s"] = statistics.median(kernel)
    if not notebooks:
        result["note"] = f"no notebooks in {directory}"
        return result
    paths = [str(n) for n in notebooks]
    serial, code, tail = _wall([python, "-m", "pytest", *paths, *flags], root)
    result.update(serial_s=serial, serial_exit=code, serial_summary=tail)
    # --dist loadfile: a notebook's cells share one kernel, so all of them must go to the same worker.
    parallel, code, tail = _wall(
        [python, "-m", "pytest", *paths, *flags, "-n", str(workers), "--dist", "loadfile"], root
    )
    result.update(parallel_s=parallel, parallel_exit=code, parallel_summary=tail, workers=workers)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.notebooks")
    parser.add_argument("--dir", type=Path, default=Path("notebooks"))
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    print(json.dumps(measure(args.dir, args.workers)))


if __name__ == "__main__":
    main()
