"""Run the adapter tests against the oldest and the newest allowed release of each framework (``make adapters-matrix``).

For each runtime of :data:`labkit.adapters.RUNTIMES` and each of the two
releases (the floor and the newest release the package index offers inside
the extra's range, read from pyproject.toml), it makes a throwaway venv,
installs labkit (no extra), the test tools and that one framework release,
and runs the adapter suite for that runtime: ``tests/test_adapters.py``,
``tests/test_adapters_native.py`` and the generated parity test (with
``LABKIT_PARITY_EXAMPLES`` examples, 100 by default). It prints one line per
(runtime, release) and exits 1 if any failed.

Usage::

    python scripts/adapters_matrix.py                  # every runtime, oldest and newest
    python scripts/adapters_matrix.py maf 1.19.0       # one runtime, one release
    python scripts/adapters_matrix.py --keep ...       # keep the venvs (printed) to look into a failure
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ["pytest>=8", "hypothesis>=6.100"]
TESTS = ["tests/test_adapters.py", "tests/test_adapters_native.py", "tests/test_parity_generated.py"]


def extras() -> dict[str, str]:
    """Each runtime's requirement line, from pyproject.toml (``{"maf": "agent-framework-core>=1.19,<2"}``)."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    optional = data["project"]["optional-dependencies"]
    sys.path.insert(0, str(ROOT))
    from labkit.adapters import RUNTIMES

    return {name: optional[spec.extra][0] for name, spec in RUNTIMES.items()}


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:4])


def allowed(requirement: str) -> list[str]:
    """The releases of ``requirement``'s distribution the index offers inside its range, oldest first."""
    from packaging.specifiers import SpecifierSet

    name, spec = re.match(r"([A-Za-z0-9_.-]+)(.*)", requirement).groups()  # type: ignore[union-attr]
    out = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", name], capture_output=True, text=True, check=True
    ).stdout
    line = next(x for x in out.splitlines() if x.startswith("Available versions:"))
    versions = [v.strip() for v in line.split(":", 1)[1].split(",")]
    inside = [v for v in versions if v in SpecifierSet(spec)]
    return sorted(inside, key=_key)


def run_one(runtime: str, distribution: str, version: str, keep: bool) -> tuple[bool, str]:
    """Install one release in a fresh venv and run the adapter suite for ``runtime``; (passed, summary line)."""
    where = Path(tempfile.mkdtemp(prefix=f"labkit-matrix-{runtime}-{version}-"))
    python = where / "venv" / "bin" / "python"
    source = where / "labkit"  # a copy of the checkout as it is now: later edits do not change this run
    try:
        shutil.copytree(
            ROOT,
            source,
            ignore=shutil.ignore_patterns(".venv", ".git", "my-workbook", "*_cache", "__pycache__", ".hypothesis"),
        )
        subprocess.run([sys.executable, "-m", "venv", str(where / "venv")], check=True)
        pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        installed = subprocess.run(
            [*pip, str(source), *TOOLS, f"{distribution}=={version}"], capture_output=True, text=True
        )
        if installed.returncode != 0:
            error = [x for x in installed.stderr.splitlines() if x.startswith("ERROR")] or ["pip failed"]
            return False, f"could not install: {error[0]}"
        environment = {**os.environ, "LABKIT_PARITY_EXAMPLES": os.environ.get("LABKIT_PARITY_EXAMPLES", "100")}
        result = subprocess.run(
            [str(python), "-m", "pytest", *TESTS, "-q", "-p", "no:cacheprovider", "-x"],  # the others skip
            cwd=source,
            capture_output=True,
            text=True,
            env=environment,
        )
        last = (result.stdout.strip().splitlines() or ["(no output)"])[-1]
        if result.returncode != 0:
            failure = next((x for x in result.stdout.splitlines() if x.startswith("FAILED")), "")
            last = f"{last} {failure}".strip()
        return result.returncode == 0, last
    except subprocess.CalledProcessError as exc:
        return False, f"could not install: {exc}"
    finally:
        if keep:
            print(f"   venv kept: {where}")
        else:
            shutil.rmtree(where, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runtime", nargs="?", help="one runtime (default: every runtime)")
    parser.add_argument("version", nargs="?", help="one release (default: the oldest and the newest allowed)")
    parser.add_argument("--keep", action="store_true", help="keep the venvs")
    args = parser.parse_args(argv)
    lines = extras()
    if args.runtime is not None and args.runtime not in lines:
        parser.error(f"unknown runtime {args.runtime!r}; choose one of: {', '.join(lines)}")
    failed = 0
    for runtime, requirement in lines.items():
        if args.runtime is not None and runtime != args.runtime:
            continue
        distribution = re.match(r"[A-Za-z0-9_.-]+", requirement).group(0)  # type: ignore[union-attr]
        if args.version is not None:
            versions = [args.version]
        else:
            offered = allowed(requirement)
            versions = sorted({offered[0], offered[-1]}, key=_key) if offered else []
        if not versions:
            print(f"{runtime}: no release of {requirement} on the index")
            failed += 1
        for version in versions:
            ok, summary = run_one(runtime, distribution, version, args.keep)
            failed += not ok
            print(f"{runtime:14} {distribution}=={version:10} {'pass' if ok else 'FAIL'}: {summary}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
