"""Teaching helpers for the workbook, and notebook comfort: expected errors shown as one line.

The subpackage holds what the chapters use around the core, each loaded only
when imported (``import labkit`` imports none of them):

1. :mod:`~labkit.teaching.frames`: pandas tables of a run (events, counters, outcomes).
2. :mod:`~labkit.teaching.charts`: matplotlib charts of a run (counters, timeline).
3. :mod:`~labkit.teaching.predict`: predict a run, then check.
4. :mod:`~labkit.teaching.widgets`: the explorer and the prediction widget (ipywidgets).
5. :mod:`~labkit.teaching.direct`: invoke a guarded tool outside any loop.
6. :mod:`~labkit.teaching.spans`: the spans of one run as a table.
7. :mod:`~labkit.teaching.capstone`: the capstone's two exercises and their checks.
8. :mod:`~labkit.teaching.runtimes`: one review under a function, a workflow and both agents (chapter 2).
9. :mod:`~labkit.teaching.terminal`: the console run in-process, shown by its status line (chapter 7).
10. :mod:`~labkit.teaching.recorded`: one live run, recorded on a real server (appendix A).

This module itself is light: :func:`short_errors` below.

Teaching helper: it never imports IPython itself (:func:`short_errors` uses the
IPython already running the notebook), so ``import labkit.teaching`` costs nothing.

A cell meant to fail (a limit of ``-1``, an unknown scenario, a cancelled
run) would otherwise print 30 to 60 lines of traceback through asyncio and
pydantic internals, and the one line that matters gets lost. After
``short_errors()`` such a cell shows ``ExceptionName: message`` and nothing
else. Only the *shown* text changes: the exception is the same object, and
the error name and value a notebook stores (and nbval compares) are the same.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from pydantic import ValidationError

from ..core.errors import LabkitError

__all__ = ["SHORT_ERRORS", "one_line", "short_errors"]

SHORT_ERRORS: tuple[type[BaseException], ...] = (LabkitError, ValidationError, asyncio.CancelledError, TimeoutError)
"""The exceptions shown as one line: labkit's own, pydantic's validation
errors (e.g. a bad :class:`~labkit.Limits`), a cancelled run and a timeout.
Every other exception keeps IPython's usual traceback: it is a bug to read."""

_MAX_ERRORS = 3  # a validation error lists at most this many problems on its line

_DEFAULT_TEXT = {
    asyncio.CancelledError: "the run was cancelled by its caller",
    TimeoutError: "the time limit passed",
}


def _validation_text(error: ValidationError) -> str:
    parts = []
    for item in error.errors(include_url=False)[:_MAX_ERRORS]:
        where = ".".join(str(part) for part in (error.title, *item["loc"]))
        parts.append(f"{where}: {item['msg']}")
    more = error.error_count() - _MAX_ERRORS
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)


def one_line(error: BaseException) -> str:
    """The one line :func:`short_errors` shows for ``error``: ``"Name: message"``.

    A pydantic ``ValidationError`` is summarised as ``Model.field: problem``
    (at most three, joined with ``;``, with no documentation link), e.g.
    ``"ValidationError: Limits.model_calls: Input should be greater than or
    equal to 0"``. A message on several lines is joined with ``;``. An empty
    message gets a short explanation (a bare ``CancelledError`` reads
    ``"the run was cancelled by its caller"``).

    Args:
        error: any exception.

    Returns:
        One line of text, with no newline.
    """
    name = type(error).__name__
    if isinstance(error, ValidationError):
        text = _validation_text(error)
    else:
        text = "; ".join(line.strip() for line in str(error).splitlines() if line.strip())
    if not text:
        text = next((words for kind, words in _DEFAULT_TEXT.items() if isinstance(error, kind)), "")
    return f"{name}: {text}" if text else name


def short_errors(enabled: bool = True, *, shell: Any = None) -> None:
    """Show the expected errors of a notebook (:data:`SHORT_ERRORS`) as one line each.

    Call it once, in a notebook's import cell. From then on, a cell that raises
    one of :data:`SHORT_ERRORS` shows only :func:`one_line` of it (the name in
    red), never a library traceback; any other exception keeps IPython's
    usual traceback. The exception itself is unchanged: the stored error
    output keeps its name and value (what nbval compares).

    Args:
        enabled: ``False`` gives every exception its full traceback back.
        shell: the IPython shell to change; defaults to the running one.
            Outside IPython (a plain ``python`` script) there is nothing to
            change and the call does nothing.

    Returns:
        ``None`` (so the import cell stays silent).
    """
    if shell is None:
        ipython = sys.modules.get("IPython")  # a running IPython has imported itself already
        if ipython is None:
            return
        shell = ipython.get_ipython()
        if shell is None:
            return
    if not enabled:
        shell.set_custom_exc((), None)
        return

    def show_one_line(
        shell: Any, etype: type[BaseException], value: BaseException, tb: Any, tb_offset: Any = None
    ) -> list[str]:
        line = one_line(value)
        name, sep, rest = line.partition(":")
        stb = [f"\x1b[0;31m{name}\x1b[0m{sep}{rest}"]
        # IPython does not show what a custom handler returns: showing is the handler's job.
        # _showtraceback is the hook IPython's own showtraceback ends in; ipykernel overrides
        # it to send the error message (ename, evalue, traceback) to the notebook.
        shell._showtraceback(etype, value, stb)
        return stb

    shell.set_custom_exc(SHORT_ERRORS, show_one_line)
