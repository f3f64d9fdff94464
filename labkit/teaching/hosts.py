"""Chapter 7's design exercise: the hosts a learner writes, one ``labkit.Limits`` per ending.

The learner edition starts every host as ``...`` (nothing written yet). A host
still ``...`` is not run and not judged: :func:`written` keeps the hosts that
are written and says which are still to write; :func:`check_hosts` checks the
runs of the written ones with :func:`labkit.check` and says the same of the
others, so a notebook run cold prints guidance, never a verdict on a host
nobody wrote.

Core-light: no pandas, matplotlib or Jupyter import.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.errors import InputError
from ..core.limits import Limits
from ..loops.outcome import RunOutcome
from .i18n import _, ngettext
from .layout import fit
from .predict import Check, Checks, check
from .reasons import relabelled


class Note(str):
    """A line of guidance that a notebook shows as plain text (no quotes)."""

    __slots__ = ()

    def __new__(cls, text: str = "") -> Note:
        return super().__new__(cls, fit(text))  # wrapped at words to the output area (labkit.teaching.layout)

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))


def _to_write(names: list[str]) -> Note:
    if not names:
        return Note("")
    return Note(
        ngettext(
            "no host yet for {names}: replace its ... in my_hosts with a labkit.Limits(...)",
            "no host yet for {names}: replace each ... in my_hosts with a labkit.Limits(...)",
            len(names),
        ).format(names=", ".join(names))
    )


def written(hosts: Mapping[str, Limits | Any]) -> dict[str, Limits]:
    """The hosts that are written (each a :class:`~labkit.Limits`), in order; prints which are still ``...``.

    Args:
        hosts: ``{ending: Limits(...) or ...}``, the learner's hosts.

    Returns:
        ``{ending: limits}`` for the hosts that are not ``...``.

    Raises:
        InputError: a host is neither ``...`` nor a ``labkit.Limits``.
    """
    chosen: dict[str, Limits] = {}
    for ending, limits in hosts.items():
        if limits is ...:
            continue
        if not isinstance(limits, Limits):
            raise InputError(
                _(
                    "the host for {ending} is {value!r}: "
                    "write it as a labkit.Limits(...), e.g. labkit.Limits(tool_calls=2)"
                ).format(ending=ending, value=limits)
            )
        chosen[ending] = limits
    missing = [ending for ending in hosts if ending not in chosen]
    if missing:
        print(_to_write(missing))
    return chosen


def check_hosts(runs: Mapping[str, RunOutcome], endings: Mapping[str, int]) -> Check | Checks | Note:
    """Check each run against the ending its host is named after; say which endings have no run yet.

    Args:
        runs: ``{ending: outcome}``, one run per written host (see :func:`written`).
        endings: ``{ending: ToolCall count asked for}``; each key is also the status aimed for.

    Returns:
        the checks of the runs (:func:`labkit.check`, one block per host), preceded by a line
        naming the endings with no host yet; only that line when no host is written.

    Raises:
        InputError: a host is named after none of ``endings`` (a misspelt key of ``my_hosts``).
    """
    runs = relabelled(runs, endings)  # a host keyed "completed " is the host of Completed
    unknown = [str(name) for name in runs if name not in endings]
    if unknown:  # a misspelt host would otherwise be left out without a word
        raise InputError(
            ngettext(
                "my_hosts has a host named {names}, which is none of the endings: {endings}",
                "my_hosts has hosts named {names}, which are none of the endings: {endings}",
                len(unknown),
            ).format(names=", ".join(map(repr, unknown)), endings=", ".join(endings))
        )
    missing = [ending for ending in endings if ending not in runs]
    if not runs:
        return Note(
            _(
                "no hosts yet: write a labkit.Limits(...) for each ending in my_hosts, "
                "then run its cell and the cells below it"
            )
        )
    ran = [ending for ending in endings if ending in runs]
    aimed: Any = {ending: ending for ending in ran}  # one guess per run (check takes a mapping)
    counts: Any = {ending: endings[ending] for ending in ran}
    result = check({ending: runs[ending] for ending in ran}, status=aimed, tool_calls=counts, goal=True)
    if missing:
        print(_to_write(missing))
    print(
        Note(
            _(
                "for each host below, 'aimed for' is the status its name aims for and the ToolCall count its ending"
                " asks for; a miss means: change that host's limits"
            )
        )
    )
    return result
