"""Shared test helpers: a fake clock, an async-test decorator, small builders.

Imported by the test modules as ``support`` (pytest puts ``tests/`` on the path).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Coroutine, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from labkit import (
    ControlEvent,
    CountingClient,
    ExecutionScope,
    HarnessAgent,
    Limits,
    ReviewTask,
    RunStatus,
    ScriptedTransport,
    SimpleAgent,
)
from labkit.loops.review import INSTRUCTIONS

ALL_CAPABILITIES = frozenset({"ticket.read", "review.finish"})
AGENTS = {"simple": SimpleAgent, "harness": HarnessAgent}

# README.md, *The scenarios*: scenario -> (status, ToolCall events, ModelCall events)
SCENARIO_TABLE = {
    "complete": (RunStatus.COMPLETED, 2, 3),
    "incomplete": (RunStatus.INCOMPLETE, 0, 1),
    "forbidden": (RunStatus.PERMISSION_DENIED, 0, 1),
    "repeat": (RunStatus.REPEATED_CALL, 1, 2),
    "changing": (RunStatus.TOOL_BUDGET, 4, 5),
    "budget": (RunStatus.MODEL_BUDGET, 1, 1),
    "deadline": (RunStatus.DEADLINE_EXCEEDED, 0, 1),
    "unavailable": (RunStatus.PROVIDER_UNAVAILABLE, 0, 1),
}


class FakeClock:
    """A monotonic clock backed by a one-item list; ``advance`` moves it forward."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = [start]

    def __call__(self) -> float:
        return self.now[0]

    def advance(self, seconds: float) -> None:
        self.now[0] += seconds


def asynctest(fn: Callable[..., Coroutine[Any, Any, Any]]) -> Callable[..., Any]:
    """Run an ``async def`` test with ``asyncio.run`` (a fresh loop per test)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return asyncio.run(fn(*args, **kwargs))

    return wrapper


def triples(events: Iterable[ControlEvent]) -> list[tuple[str, str, int]]:
    """Events as ``(kind, name, count)`` tuples with plain-string kinds."""
    return [(str(e.kind), e.name, e.count) for e in events]


def review_agent(
    script: Any,
    *,
    limits: Limits | None = None,
    capabilities: Iterable[str] = ALL_CAPABILITIES,
    agent: str = "simple",
    transport: Any = None,
    **options: Any,
) -> tuple[ExecutionScope, ReviewTask, Any, SimpleAgent]:
    """A fresh scope, ticket-42 task, transport and agent (as ``labkit.prepare`` builds them)."""
    scope = ExecutionScope(limits or Limits(), capabilities)
    task = ReviewTask()
    used = transport if transport is not None else ScriptedTransport(script)
    built = AGENTS[agent](CountingClient(used, scope), task.tools(scope), instructions=INSTRUCTIONS, **options)
    return scope, task, used, built


def tool_results(transcript: Sequence[Any]) -> dict[str, list[str]]:
    """Tool-result texts by call id, in transcript order."""
    results: dict[str, list[str]] = {}
    for message in transcript:
        if message.role == "tool":
            results.setdefault(message.tool_call_id, []).append(message.text)
    return results


def clone_checkout(dest: Path) -> Path:
    """Copy this checkout's files (tracked and untracked, minus what .gitignore ignores) to ``dest``.

    Without git (an unpacked archive) it copies the tree minus ``.venv``, ``my-workbook``, ``.git``,
    ``build`` and caches. Tests that run project commands use it, so nothing they do lands in the
    checkout (a learner's ``my-workbook/`` above all).
    """
    root = Path(__file__).resolve().parent.parent
    try:
        listed = (
            subprocess.run(
                ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                capture_output=True,
                check=True,
            )
            .stdout.decode()
            .split("\0")
        )
    except (OSError, subprocess.CalledProcessError):
        ignore = shutil.ignore_patterns(
            ".venv", "my-workbook", ".git", "build", "__pycache__", ".*_cache", ".hypothesis"
        )
        shutil.copytree(root, dest, ignore=ignore)
        return dest
    for name in filter(None, listed):
        source = root / name
        if source.is_file():  # a tracked file deleted in the work tree is left out
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def make_env(**extra: str) -> dict[str, str]:
    """This environment for running ``make`` itself, without the variables an outer make (``make test``) passes down."""
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "PORT"}}
    return {**env, **extra}


def make_lab_command(*make_args: str, env: dict[str, str] | None = None) -> list[str]:
    """The ``scripts/lab.py`` command line ``make lab`` runs, as ``make -n`` prints it (nothing is run).

    ``VENV`` is this test environment's, so the command's python is the one running the tests.
    """
    root = Path(__file__).resolve().parent.parent
    venv = Path(sys.executable).parent.parent
    listed = subprocess.run(
        ["make", "-n", "lab", f"VENV={venv}", *make_args],
        cwd=root,
        env=make_env() if env is None else env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (line,) = [line for line in listed.splitlines() if "scripts/lab.py" in line]  # any install lines come first
    return shlex.split(line)


def sigint_as_in_a_terminal() -> None:
    """``preexec_fn`` for a child the test sends Ctrl+C (SIGINT): restore SIGINT's default first.

    A shell that starts the tests in the background (``make test &``) starts them with SIGINT
    ignored, every child inherits that, and a Python started so never raises KeyboardInterrupt:
    the test would wait for an interrupt that cannot arrive.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
"""Debian's Chromium, headless, with nothing started in the background (the browser tests run offline)."""


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """Debian's headless Chromium through Playwright, closed afterwards; skips, with the reason, only if it
    cannot start (no browser, no playwright package, or a launch the machine refuses)."""
    import pytest

    if not CHROMIUM.exists():
        pytest.skip(f"no browser at {CHROMIUM}: install Debian's chromium package (.ci/run does)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        pytest.skip(f"the playwright package is not installed ({exc}); it is in the test extra")
    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS)
        except Exception as exc:  # Playwright's launch error: the browser cannot run on this machine
            pytest.skip(f"Chromium at {CHROMIUM} could not be launched: {exc}")
        try:
            yield browser
        finally:
            browser.close()
