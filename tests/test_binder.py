"""The Binder environment: its files are well formed, its pins match what we test, and it runs the notebooks.

``binder/`` is all that Binder (repo2docker) reads: ``runtime.txt`` picks the
Python, ``requirements.txt`` the pinned third-party packages (JupyterLab and
jupyter_server included, at the versions the browser tests run, over the older
ones Binder's base image has), and ``postBuild`` installs labkit itself. The
slow test rebuilds that environment the way Binder does, in a fresh virtual
environment holding the base image's JupyterLab first, and runs, on a clone of
the checkout, the chapter notebooks under nbval inside it and the learner's
copy that postBuild makes (the one the Binder link opens) under
``--nbval-lax``. Deselect it with ``-m "not binder"``; ``make test`` runs it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from support import clone_checkout

ROOT = Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder"
NOTEBOOKS = ROOT / "notebooks"
# What Binder's base image has before requirements.txt (issue 18): without a pin it keeps these.
BASE_IMAGE = {"jupyterlab": "4.4.9", "jupyter-server": "2.17.0"}


def requirements() -> list[Requirement]:
    lines = (BINDER / "requirements.txt").read_text().splitlines()
    return [Requirement(line) for line in (raw.split("#")[0].strip() for raw in lines) if line]


def pins() -> dict[str, str]:
    """``{canonical name: pinned version}`` for every ``==`` requirement."""
    found = {}
    for req in requirements():
        (spec,) = req.specifier if req.specifier else (None,)
        if spec is not None and spec.operator == "==":
            found[canonicalize_name(req.name)] = spec.version
    return found


def test_every_third_party_requirement_is_pinned_jupyterlab_and_its_server_included():
    reqs = requirements()
    names = {canonicalize_name(r.name) for r in reqs}
    for req in reqs:
        assert canonicalize_name(req.name) in pins(), f"{req} is not pinned with =="
    assert BASE_IMAGE.keys() <= pins().keys()  # else Binder keeps its base image's older JupyterLab
    assert "labkit" not in names  # postBuild installs it from the checkout


def _extra(project: dict, name: str) -> list[Requirement]:
    """One of labkit's extras, its references to labkit's other extras (``labkit[telemetry]``) expanded."""
    found = []
    for req in map(Requirement, project["optional-dependencies"][name]):
        if canonicalize_name(req.name) == "labkit":
            found += [r for other in sorted(req.extras) for r in _extra(project, other)]
        else:
            found.append(req)
    return found


def test_pins_cover_the_lab_extra_within_its_bounds():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    needed = [Requirement(r) for r in project["dependencies"]] + _extra(project, "lab")
    assert {"jupyterlab", "opentelemetry-sdk", "openai-agents"} <= {canonicalize_name(r.name) for r in needed}
    pinned = pins()
    for req in needed:
        name = canonicalize_name(req.name)
        assert name in pinned, f"binder/requirements.txt lacks {req.name}, which the workbook needs"
        assert req.specifier.contains(pinned[name]), f"{req.name}=={pinned[name]} is outside pyproject's {req}"


def test_pins_match_the_tested_versions():
    """The versions Binder installs are the ones this test environment runs with (shared packages)."""
    installed = {}
    for name in pins():
        try:
            installed[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    assert {"pydantic", "ipywidgets", "pandas", "matplotlib", "jupyterlab", "jupyter-server"} <= installed.keys()
    stale = {name: (pins()[name], have) for name, have in installed.items() if have != pins()[name]}
    assert not stale, f"update binder/requirements.txt to the tested versions ({{name: (pinned, tested)}}): {stale}"


def test_runtime_and_post_build_are_as_binder_reads_them():
    assert re.fullmatch(r"python-3\.\d+", (BINDER / "runtime.txt").read_text().strip())
    post_build = BINDER / "postBuild"
    assert os.access(post_build, os.X_OK)
    lines = [line.strip() for line in post_build.read_text().splitlines()]
    assert "set -euo pipefail" in lines
    assert "pip install --no-deps -e ." in lines
    assert "python scripts/lab.py prepare" in lines  # the learner's copy and the no-news setting, as `make lab`
    assert not (BINDER / "environment.yml").exists()  # it would override runtime.txt
    assert not (BINDER / "Dockerfile").exists()  # it would override everything


def test_the_binder_link_opens_chapter_one_of_the_learners_copy():
    english, french = re.findall(r"\?urlpath=(lab/tree/[^)\s]+)", (ROOT / "README.md").read_text())
    spec = importlib.util.spec_from_file_location("_scripts_lab", ROOT / "scripts" / "lab.py")
    lab = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = lab
    spec.loader.exec_module(lab)
    assert "/" + english == lab.default_url(ROOT)  # the page `make lab` opens
    lab.choose_language("fr")
    assert "/" + french == lab.default_url(ROOT)  # the page `make lab-fr` opens


def _binder_python() -> str:
    version = (BINDER / "runtime.txt").read_text().strip().removeprefix("python-")
    found = shutil.which(f"python{version}")
    if found is None and f"{sys.version_info.major}.{sys.version_info.minor}" == version:
        found = sys.executable
    if found is None:
        pytest.fail(f"binder/runtime.txt asks for Python {version}, which this machine does not have")
    return found


@pytest.mark.binder
def test_the_notebooks_run_in_a_fresh_binder_environment(tmp_path):
    """Binder's build on a clone of this checkout: both editions run, and the link's chapter is there to open."""
    clone = clone_checkout(tmp_path / "repo")  # postBuild makes my-workbook/: never in the real checkout
    notebooks = sorted((clone / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert notebooks, "no chapter notebook to run"
    venv = tmp_path / "binder-venv"
    bin_dir = venv / "bin"
    env = {**os.environ, "VIRTUAL_ENV": str(venv), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    for name in [k for k in env if k.startswith(("JUPYTER", "PYTEST_"))]:
        env.pop(name)

    def step(*command: str | os.PathLike[str], timeout: float) -> str:
        done = subprocess.run(command, cwd=clone, env=env, capture_output=True, text=True, timeout=timeout)
        shown = " ".join(map(str, command))
        assert done.returncode == 0, f"{shown} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        return done.stdout

    try:
        _build_and_run(step, clone, bin_dir, notebooks)
    finally:
        shutil.rmtree(venv, ignore_errors=True)  # about 500 MB: not left for pytest's kept temp dirs


def _build_and_run(step, clone: Path, bin_dir: Path, notebooks: list[Path]) -> None:
    step(_binder_python(), "-m", "venv", bin_dir.parent, timeout=120)
    # the base image's JupyterLab is there before requirements.txt, as on Binder
    step(
        bin_dir / "python",
        "-m",
        "pip",
        "install",
        "--quiet",
        *(f"{name}=={version}" for name, version in BASE_IMAGE.items()),
        timeout=1200,
    )
    step(
        bin_dir / "python", "-m", "pip", "install", "--quiet", "-r", clone / "binder" / "requirements.txt", timeout=1200
    )
    versions = json.loads(
        step(
            bin_dir / "python",
            "-c",
            "import json; from importlib import metadata; "
            f"print(json.dumps({{n: metadata.version(n) for n in {sorted(BASE_IMAGE)!r}}}))",
            timeout=60,
        )
    )
    assert versions == {name: pins()[name] for name in BASE_IMAGE}  # the JupyterLab the browser tests run
    assert versions != BASE_IMAGE
    step("bash", clone / "binder" / "postBuild", timeout=600)  # from the repository root, the venv's pip first on PATH
    # labkit comes from the checkout, through postBuild's editable install
    step(
        bin_dir / "python",
        "-c",
        f"import labkit, pathlib; assert pathlib.Path(labkit.__file__).is_relative_to({str(clone)!r})",
        timeout=60,
    )
    step(bin_dir / "python", "-m", "pip", "check", timeout=120)
    # postBuild made the learner's copy the link opens, and told JupyterLab not to ask about news
    links = re.findall(r"urlpath=lab/tree/([^)\s]+)", (clone / "README.md").read_text())
    assert len(links) == 2  # the English edition's link and the French one's
    for link_path in links:
        edition = "workbook-fr" if link_path.startswith("my-workbook-fr/") else "workbook"
        assert (clone / link_path).read_bytes() == (clone / edition / Path(link_path).name).read_bytes()
    settings = step(
        bin_dir / "python",
        "-c",
        "from jupyterlab.commands import get_app_dir; import pathlib; "
        "print((pathlib.Path(get_app_dir()) / 'settings/overrides.d/labkit.json').read_text())",
        timeout=60,
    )
    assert json.loads(settings)["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"
    step(
        bin_dir / "python",
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        *map(str, notebooks),
        "--nbval",
        "--nbval-current-env",
        "--nbval-sanitize-with",
        clone / "notebooks" / "sanitize.cfg",
        "--nbval-cell-timeout",
        "120",
        timeout=1200,
    )
    # the learner edition, as the Binder link opens it: every cell runs
    step(
        bin_dir / "python",
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        clone / "my-workbook",
        "--nbval-lax",
        "--nbval-current-env",
        "--nbval-cell-timeout",
        "120",
        timeout=1200,
    )
