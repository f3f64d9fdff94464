"""The explorer panel in a real browser: JupyterLab, headless Chromium, the widget extension loaded.

nbval proves a notebook's cells run; it cannot see whether the widgets
*render*. A missing or mismatched widget extension shows text such as
``IntSlider(...)`` (or "Error displaying widget") instead of sliders. So this
test starts JupyterLab on a free loopback port, opens a copy of a chapter
notebook that shows the explorer panel (or, when no chapter has one yet, a
small notebook made here), runs every cell in Chromium through Playwright,
and checks that:

* the sliders are rendered (``.widget-hslider``) and no text repr is shown;
* choosing more attempts per signature on the ``repeat`` scenario and
  pressing Run changes the status from ``RepeatedCall`` to ``ToolBudget``
  (docs/guarantees.md, *Limits are exact*: the global tool budget is checked before repetition).

A screenshot of the panel goes to ``build/screenshots/explorer.png``.

Only an unavailable browser skips it (no Chromium at ``/usr/bin/chromium``,
no ``playwright`` package, or a launch failure), with the reason. The
browser is Debian's Chromium (``.ci/run`` installs it); Playwright's own
browser download is never used. Deselect with ``-m "not browser"``.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
import support
from support import make_lab_command

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = ROOT / "build" / "screenshots"
SERVER_START_S = 90
PAGE_TIMEOUT_MS = 90_000

pytestmark = pytest.mark.browser


def _explorer_notebook(workdir: Path) -> Path:
    """Copy the first chapter that shows an explorer panel into ``workdir``, or write a small one there."""
    for chapter in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        cells = nbformat.read(chapter, as_version=4).cells
        if any(c.cell_type == "code" and "explorer(" in c.source for c in cells):
            return Path(shutil.copy(chapter, workdir / chapter.name))
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# The explorer panel"),
            nbformat.v4.new_code_cell('from labkit.teaching.widgets import explorer\nexplorer("repeat")'),
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    path = workdir / "explorer_check.ipynb"
    nbformat.write(notebook, path)
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _api(base: str, path: str, token: str, method: str = "GET") -> int:
    request = urllib.request.Request(f"{base}{path}", method=method, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.status


@pytest.fixture
def jupyterlab(tmp_path: Path) -> Iterator[tuple[str, str, Path]]:
    """A JupyterLab server on a free 127.0.0.1 port, rooted in a temp dir; yields (base URL, token, notebook)."""
    notebook = _explorer_notebook(tmp_path)
    token, port = uuid.uuid4().hex, _free_port()
    base = f"http://127.0.0.1:{port}"
    bin_dir = Path(sys.executable).parent
    config = tmp_path / "config"
    (config / "labconfig").mkdir(parents=True)
    # no "get Jupyter news?" toast over the panel; a private config dir also keeps user settings out
    (config / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}})
    )
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",  # the kernel is this environment's Python
        "JUPYTER_CONFIG_DIR": str(config),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
    }
    command = [
        str(bin_dir / "jupyter-lab"),
        "--no-browser",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.token={token}",
        "--ServerApp.ip=127.0.0.1",
        "--allow-root",
        "--expose-app-in-browser",
        "--LabApp.news_url=None",
        f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}",
        f"--ServerApp.root_dir={tmp_path}",
    ]
    log = (tmp_path / "jupyterlab.log").open("w")
    server = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            if server.poll() is not None:
                pytest.fail(f"JupyterLab exited with {server.returncode}:\n{(tmp_path / 'jupyterlab.log').read_text()}")
            try:
                if _api(base, "/api/status", token) == 200:
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"JupyterLab did not answer within {SERVER_START_S} s")
            time.sleep(0.5)
        yield base, token, notebook
    finally:
        try:  # a clean shutdown also stops the kernels it started
            _api(base, "/api/shutdown", token, method="POST")
            server.wait(timeout=20)
        except (urllib.error.URLError, ConnectionError, TimeoutError, subprocess.TimeoutExpired):
            pass
        if server.poll() is None:
            server.terminate()  # by the server's own PID
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        log.close()


@pytest.fixture
def browser():
    """Debian's headless Chromium through Playwright; skips, with the reason, only if it cannot start."""
    with support.chromium() as chromium:
        yield chromium


NOTEBOOK_READY = """() => {
  const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  if (!panel || !panel.content || !panel.sessionContext) return false;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  return panel.content.widgets.length > 1 && !!kernel && kernel.status === 'idle'
    && panel.sessionContext.kernelDisplayName !== 'No Kernel';
}"""

NOTHING_RAN = """() => window.jupyterapp.shell.currentWidget.content.widgets.every(
    cell => cell.model.type !== 'code' || cell.model.executionCount === null)"""

ALL_CELLS_RAN = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const kernel = panel.sessionContext.session.kernel;
  return kernel.status === 'idle' && panel.content.widgets.every(
    cell => cell.model.type !== 'code'
      || (cell.model.executionCount !== null && cell.promptNode.textContent.indexOf('*') < 0));
}"""


def test_explorer_renders_and_reruns_in_jupyterlab(jupyterlab, browser):
    base, token, notebook = jupyterlab
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(PAGE_TIMEOUT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{base}/lab/tree/{notebook.name}?reset&token={token}")
    page.wait_for_function(NOTEBOOK_READY, polling=250)
    # a chapter is stored with outputs and execution counts: clear them, so "every cell ran" means this run
    page.evaluate("window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    page.wait_for_function(NOTHING_RAN, polling=250)
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(ALL_CELLS_RAN, polling=250)

    # rendered, not a text repr: the widget extension is loaded and matches ipywidgets 8
    panel = page.locator(".labkit-explorer").first
    panel.wait_for(state="attached")
    page.locator(".labkit-explorer .widget-hslider").first.wait_for(state="attached")
    assert panel.locator(".widget-hslider").count() == 4
    outputs = page.locator(".jp-OutputArea-output")
    for fallback in ("IntSlider(", "Explorer(", "Error displaying widget"):
        assert outputs.filter(has_text=fallback).count() == 0, f"{fallback!r} shown instead of a widget"

    # the repeat scenario with its own limits (changing the scenario resets the sliders, whatever ran before)
    scenario = panel.locator("select").first
    scenario.select_option("complete")
    scenario.select_option("repeat")
    page.wait_for_function(
        "el => el.textContent.trim() === '1'",
        arg=panel.locator(".widget-hslider", has_text="attempts per signature")
        .locator(".widget-readout")
        .element_handle(),
        polling=250,
    )
    run_button = panel.locator("button", has_text="Run")
    status = panel.locator(".labkit-status")
    run_button.click()
    page.wait_for_function("el => el.textContent.includes('RepeatedCall')", arg=status.element_handle(), polling=250)
    before = status.inner_text()
    assert "ToolCall 1" in before and "withheld" in before

    # more attempts per signature than the tool budget: press End on the slider (its maximum), run again
    repetitions = panel.locator(".widget-hslider", has_text="attempts per signature")
    repetitions.locator(".noUi-handle").first.focus()
    page.keyboard.press("End")
    page.wait_for_function(
        "el => el.textContent.trim() === '5'", arg=repetitions.locator(".widget-readout").element_handle(), polling=250
    )
    run_button.click()
    page.wait_for_function("el => el.textContent.includes('ToolBudget')", arg=status.element_handle(), polling=250)
    after = status.inner_text()
    assert after != before
    assert "ToolCall 4" in after and "repetitions=5" in after

    # the events table and the chart were updated in place
    assert panel.locator("table.dataframe").filter(has_text="ToolBudget").count() == 1
    chart = panel.locator("img")
    assert chart.count() == 1
    assert chart.first.evaluate("img => img.complete && img.naturalWidth > 0")

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    panel.screenshot(path=SCREENSHOTS / "explorer.png")
    page.screenshot(path=SCREENSHOTS / "explorer-page.png", full_page=False)
    assert not [e for e in errors if "widget" in e.lower()], errors
    page.close()
    # the server autosaved the copy, never the chapter itself
    assert notebook.parent != ROOT / "notebooks"
    assert json.loads(notebook.read_text())["cells"]


# --- `make lab`: the address it prints opens chapter 1 of the learner's copy, with no news question ---

LAB_SCRIPT = ROOT / "scripts" / "lab.py"
CHAPTER_OPEN = """path => {
  const widget = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  return !!widget && !!widget.context && widget.context.path === path && !!widget.content
    && widget.content.widgets && widget.content.widgets.length > 1;
}"""


@pytest.fixture
def make_lab(tmp_path: Path) -> Iterator[tuple[str, Path, subprocess.Popen]]:
    """`make lab PORT=<free port>`'s command on a copy of workbook/ in a temp root; yields (printed URL, root, server).

    The command is the one make runs (``make -n``), so the port reaches JupyterLab through ``PORT``;
    extra flags only skip the browser and expose the app object to the test; the server is
    otherwise what a learner gets, its settings included.
    """
    port = _free_port()
    recipe = make_lab_command(f"PORT={port}")
    assert recipe[1:] == ["scripts/lab.py", f"--port={port}"], f"`make lab PORT=` runs something else: {recipe}"
    root = tmp_path / "clone"
    shutil.copytree(ROOT / "workbook", root / "workbook")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        # keep this machine's own Jupyter config, user settings and workspaces out of the check
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "user-settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
    }
    command = [
        sys.executable,
        str(LAB_SCRIPT),
        *recipe[2:],
        "--root",
        str(root),
        "serve",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        "--expose-app-in-browser",
    ]
    log_path = tmp_path / "make-lab.log"
    log = log_path.open("w")
    server = subprocess.Popen(command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)  # execs into the server
    prefix = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + SERVER_START_S
        url = None
        while url is None:
            if server.poll() is not None:
                pytest.fail(f"scripts/lab.py exited with {server.returncode}:\n{log_path.read_text()}")
            found = [w for line in log_path.read_text().splitlines() for w in line.split() if w.startswith(prefix)]
            url = found[0] if found else None
            if url is None and time.monotonic() > deadline:
                pytest.fail(f"no address printed within {SERVER_START_S} s:\n{log_path.read_text()}")
            time.sleep(0.5)
        yield url, root, server
    finally:
        server.terminate()  # SIGTERM by the server's own PID: it shuts its kernels down and exits
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def test_make_lab_prints_an_address_that_opens_chapter_one_without_a_news_question(make_lab, browser):
    url, root, _server = make_lab
    chapter = sorted((root / "workbook").glob("[0-9][0-9]_*.ipynb"))[0].name
    # the printed address itself names the chapter of the learner's copy (not /lab, the Launcher)
    assert f"/lab/tree/my-workbook/{chapter}?token=" in url
    assert (root / "my-workbook" / chapter).read_bytes() == (root / "workbook" / chapter).read_bytes()

    base, token = url.split("/lab/", 1)[0], url.rsplit("token=", 1)[1]
    request = urllib.request.Request(
        f"{base}/lab/api/settings/@jupyterlab/apputils-extension:notification",
        headers={"Authorization": f"token {token}"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        plugin = json.loads(response.read())
    # the override is the setting's default; JupyterLab asks its news question only while it is "none"
    assert plugin["schema"]["properties"]["fetchNews"]["default"] == "false"
    assert "fetchNews" not in plugin["settings"]  # nothing of a user's settings decided it

    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(PAGE_TIMEOUT_MS)
    page.goto(url)  # exactly what was printed
    page.wait_for_function(CHAPTER_OPEN, arg=f"my-workbook/{chapter}", polling=250)
    page.wait_for_function(NOTEBOOK_READY, polling=250)
    # the chapter is the open, current document: its tab is the active one and no Launcher is open
    active = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current")
    assert chapter in " ".join(active.all_inner_texts())
    assert page.locator(".jp-Launcher").count() == 0
    # the news question is a toast emitted once the app is restored, long before a kernel is idle
    assert page.locator(".Toastify__toast").count() == 0
    assert "Jupyter news" not in page.locator("body").inner_text()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "make-lab.png", full_page=False)
    page.close()
