"""The console inside a notebook: one command run in-process, shown by the lines that matter (chapter 7).

Teaching helper: :func:`console` runs :func:`labkit.cli.main` in this process,
as a shell would run ``labkit ...``, and returns the same exit code. The full
console output of a run is its header (agent, grants, limits: about ten lines),
its events and its status; a cell that compares three commands needs only the
last part, so by default only the status line (or the error line of a usage
mistake) is printed.
"""

from __future__ import annotations

import contextlib
import io
import shlex
from collections.abc import Sequence

from ..core.errors import InputError

__all__ = ["console"]

_SHOW = ("status", "all", "none")


def console(command: str | Sequence[str], *, show: str = "status") -> int:
    """Run ``labkit <command>`` in this process, print a short transcript and return its exit code.

    Args:
        command: the words after ``labkit``, e.g. ``["run", "complete", "--tool-calls", "1"]``
            or the same as one string (split as a shell would, :func:`shlex.split`).
        show: ``"status"`` (default) prints ``$ labkit ...`` and the console's ``status:``
            line; when there is none (a usage mistake, exit 64) every line it printed,
            usually one. ``"all"`` prints everything the console printed. ``"none"`` prints
            nothing: a cell that runs commands before the learner's guess is checked (chapter 7)
            keeps their transcript off the screen until the check.

    Returns:
        The exit code a shell would read (``echo $?``): 0, 2, 64, 76, 78 or 130
        (see the README's exit-code table).

    Raises:
        InputError: ``command`` is not a string or a list of strings, or ``show``
            is not ``"status"``, ``"all"`` or ``"none"``.
    """
    if show not in _SHOW:
        raise InputError(f"show must be one of {', '.join(map(repr, _SHOW))}, not {show!r}")
    if isinstance(command, str):
        words = shlex.split(command)
    elif isinstance(command, Sequence) and all(isinstance(word, str) for word in command):
        words = list(command)
    else:
        raise InputError(f"command must be the words after `labkit`, as a string or a list of strings, not {command!r}")
    from ..cli import main  # the console itself, imported when first used

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        code = main(words)
    if show == "none":
        return code
    lines = printed.getvalue().rstrip("\n").splitlines()
    if show == "status":
        lines = [line for line in lines if line.startswith("status:")] or [line for line in lines if line.strip()]
    print("\n".join([f"$ labkit {shlex.join(words)}", *lines]))
    return code
