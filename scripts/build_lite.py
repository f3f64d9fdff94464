"""Build the JupyterLite edition: the learner workbook in the browser, nothing to install (issue 23).

Usage:
    .venv-lite/bin/python scripts/build_lite.py [--output build/lite]

``make lite`` runs it with the build tools locked in ``lite/requirements.txt`` (installed into
``.venv-lite/``: JupyterLite, its Pyodide kernel, hatchling) after ``scripts/pyodide_setup.sh``
(which fetches, once, into a cache outside the repository: the ``pyodide`` npm package, labkit's
dependencies as Pyodide wheels and the kernel's own pure-Python wheels pinned with their hashes in
``lite/browser-wheels.txt``). This script then fetches nothing:

1. it stages a JupyterLite project in ``build/lite-src/``: ``lite/jupyter-lite.json`` and
   ``lite/overrides.json`` (JupyterLab settings: a Markdown file opens rendered), the files a
   learner sees (``README.md`` from ``lite/files/``, ``workbook/``, ``workbook-fr/``), and under
   ``static/pyodide/`` Pyodide's own files from the npm package, every wheel the kernel loads, and
   labkit's wheel, built from this checkout (by hatchling, from this venv);
2. it rewrites Pyodide's ``pyodide-lock.json`` there: each package the site serves points at its
   local wheel (with that wheel's version, hash and dependencies), labkit is added (so the kernel
   loads it when a cell imports ``labkit``: the kernel reads a cell's imports before running it),
   and every other package of the Pyodide distribution (numpy, pandas, matplotlib...) points at
   that distribution's published copy, which a learner's browser loads when it is needed. labkit's
   entry also names ipywidgets (served here) and pandas and matplotlib (:data:`FROM_DISTRIBUTION`),
   so a chapter's first cell, which imports the table and chart helpers, works online with nothing
   to install;
3. it runs ``jupyter lite build`` into the output folder (``build/lite/``, untracked).

The output is a static site: copy the folder to any static host. ``tests/test_lite.py`` serves it
on loopback and runs chapter 1's labkit cells in Chromium.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename

ROOT = Path(__file__).resolve().parent.parent
LITE = ROOT / "lite"
CACHE = Path(os.environ.get("LABKIT_PYODIDE_CACHE", Path.home() / ".cache" / "labkit-pyodide"))
PYODIDE = CACHE / "node_modules" / "pyodide"
# labkit's dependencies (pydantic and the rest) and the kernel's own (IPython, micropip...), both from
# scripts/pyodide_setup.sh
WHEEL_DIRS = (CACHE / "wheels", CACHE / "lite-wheels")
# what the kernel needs of the npm package (its lock file is rewritten, below)
PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "package.json")
EDITIONS = ("workbook", "workbook-fr")
# What the chapters' tables and charts need besides labkit (its `lab` extra): no Pyodide build of them is on PyPI,
# so the site does not hold them; labkit's lock entry names them, and a learner's browser loads them from the
# Pyodide distribution with labkit (without them, labkit itself still loads: the rest of a chapter runs offline).
FROM_DISTRIBUTION = ("pandas", "matplotlib")
# The explorer panel's widgets: served by the site (lite/browser-wheels.txt), named by labkit's lock entry too.
WIDGETS = ("ipywidgets",)


def _cdn(version: str) -> str:
    """Where the Pyodide project publishes its full distribution of ``version`` (what this site does not hold)."""
    return f"https://cdn.jsdelivr.net/pyodide/v{version}/full/"


def _emscripten_environment() -> dict[str, str]:
    """The marker environment of Pyodide in a browser, to read which of a wheel's requirements apply there."""
    env = default_environment()
    env.update(sys_platform="emscripten", platform_system="Emscripten", os_name="posix", implementation_name="cpython")
    env.update(python_version="3.14", python_full_version="3.14.0", platform_machine="wasm32")
    return env


def _wheel_entry(wheel: Path) -> dict[str, object]:
    """A ``pyodide-lock.json`` entry for a local wheel: its name, version, hash, imports and dependencies."""
    name, version, _build, _tags = parse_wheel_filename(wheel.name)
    with zipfile.ZipFile(wheel) as archive:
        metadata_name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(archive.read(metadata_name).decode())
        top_level = sorted(
            {
                n.split("/")[0].removesuffix(".py")
                for n in archive.namelist()
                if "/" in n or n.endswith(".py")
                if not n.split("/")[0].endswith((".dist-info", ".data"))
            }
        )
    env = _emscripten_environment()
    depends = []
    for line in metadata.get_all("Requires-Dist") or []:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate({**env, "extra": ""}):
            depends.append(canonicalize_name(requirement.name))
    return {
        "name": str(name),
        "version": str(version),
        "file_name": wheel.name,
        "install_dir": "site",
        "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
        "package_type": "package",
        "imports": top_level,
        "depends": sorted(set(depends)),
        "unvendored_tests": False,
        "shared_library": False,
    }


def rewrite_lock(lock: dict, wheels: list[Path], pyodide_version: str) -> dict:
    """Pyodide's lock with each served wheel local and every other package at the published distribution."""
    packages = dict(lock["packages"])
    for key, entry in packages.items():
        if "://" not in entry["file_name"]:
            packages[key] = {**entry, "file_name": _cdn(pyodide_version) + entry["file_name"]}
    for wheel in wheels:
        entry = _wheel_entry(wheel)
        key = canonicalize_name(str(entry["name"]))
        old = packages.get(key, {})
        packages[key] = {**old, **entry}
    labkit = packages["labkit"]
    labkit["depends"] = sorted({*labkit["depends"], *WIDGETS, *FROM_DISTRIBUTION})
    missing = {d for entry in packages.values() for d in entry["depends"] if canonicalize_name(d) not in packages}
    if missing:
        raise SystemExit(f"build_lite: the lock names packages it does not hold: {sorted(missing)}")
    return {**lock, "packages": packages}


def _wheels() -> list[Path]:
    found = [w for d in WHEEL_DIRS for w in sorted(d.glob("*.whl"))]
    names = {canonicalize_name(parse_wheel_filename(w.name)[0]) for w in found}
    needed = {"pydantic", "pydantic-core", "micropip", "ipython", "comm", *WIDGETS}
    if not needed <= names:
        raise SystemExit(f"build_lite: no wheel for {sorted(needed - names)}: run scripts/pyodide_setup.sh first")
    return found


def stage(src: Path) -> None:
    """Lay out the JupyterLite project in ``src``: settings, the learner's files, Pyodide and its wheels."""
    if not (PYODIDE / "pyodide.mjs").exists():
        raise SystemExit(f"build_lite: no Pyodide in {PYODIDE}: run scripts/pyodide_setup.sh first")
    shutil.rmtree(src, ignore_errors=True)
    static = src / "static" / "pyodide"
    static.mkdir(parents=True)
    for settings in ("jupyter-lite.json", "overrides.json"):  # overrides: a Markdown file opens rendered
        shutil.copy(LITE / settings, src / settings)
    files = src / "files"
    shutil.copytree(LITE / "files", files)
    for edition in EDITIONS:
        shutil.copytree(ROOT / edition, files / edition, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    for name in PYODIDE_FILES:
        shutil.copy(PYODIDE / name, static / name)
    wheels = []
    for wheel in _wheels():
        wheels.append(Path(shutil.copy(wheel, static / wheel.name)))
    build = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(static)]
    before = set(static.glob("labkit-*.whl"))
    subprocess.run([*build, str(ROOT)], check=True)
    wheels += sorted(set(static.glob("labkit-*.whl")) - before)
    version = json.loads((PYODIDE / "package.json").read_text())["version"]
    lock = json.loads((PYODIDE / "pyodide-lock.json").read_text())
    (static / "pyodide-lock.json").write_text(json.dumps(rewrite_lock(lock, wheels, version), indent=1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=ROOT / "build" / "lite")
    args = parser.parse_args(argv)
    src = args.output.parent / f"{args.output.name}-src"
    stage(src)
    shutil.rmtree(args.output, ignore_errors=True)
    command = [
        str(Path(sys.executable).parent / "jupyter"),
        "lite",
        "build",
        "--lite-dir",
        str(src),
        "--contents",
        str(src / "files"),
    ]
    command += ["--output-dir", str(args.output.resolve()), "--no-sourcemaps"]
    subprocess.run(command, check=True, cwd=src)
    print(f"build_lite: the site is in {args.output}; chapter 1 opens at lab/index.html?path=workbook/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
