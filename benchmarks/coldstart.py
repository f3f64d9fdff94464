"""Cold start: ``labkit run complete`` against the floor our own dependencies set.

``python -m benchmarks.coldstart [--repeats N]`` prints one JSON line: the median
wall time of each command (fresh process each time), the ratio of the console to
``python -c "import asyncio, pydantic"``, and whether ``import labkit`` or the
console loaded pandas, matplotlib, ipywidgets or anything Jupyter.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

HEAVY = ("pandas", "matplotlib", "ipywidgets", "IPython", "ipykernel", "jupyter", "jupyter_client", "jupyterlab", "notebook", "numpy")

COMMANDS = {
    "python_empty": [sys.executable, "-c", "pass"],
    "floor": [sys.executable, "-c", "import asyncio, pydantic"],
    # pydantic's top module is lazy: the model machinery loads with the first BaseModel subclass.
    "floor_with_a_model": [sys.executable, "-c", "import asyncio\nfrom pydantic import BaseModel\nclass A(BaseModel):\n    x: int"],
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
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def measure(repeats: int = 15) -> dict[str, object]:
    for cmd in COMMANDS.values():  # warm the file cache
        _wall(cmd)
    samples: dict[str, list[float]] = {k: [] for k in COMMANDS}
    for _ in range(repeats):  # interleaved, so machine noise hits every command alike
        for key, cmd in COMMANDS.items():
            samples[key].append(_wall(cmd))
    probe = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout.split()
    result: dict[str, object] = {f"{k}_ms": statistics.median(v) * 1e3 for k, v in samples.items()}
    result.update({f"{k}_spread_ms": [min(v) * 1e3, max(v) * 1e3] for k, v in samples.items()})
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
