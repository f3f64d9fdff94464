"""pandas tables of a run: its events, its counters against their limits, several outcomes side by side.

Teaching helper: importing this module imports pandas (the core never does).
"""

from __future__ import annotations

import json
import reprlib
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import pandas as pd

from ..core.errors import InputError
from ..core.events import ControlEvent
from ..core.signature import NonFiniteNumber, canonical
from ..loops.agents import CUT, UNKNOWN_TOOL
from ..loops.outcome import RunOutcome, RunStatus, exit_code
from . import _inputs
from .i18n import N_, _, pgettext

if TYPE_CHECKING:
    from ..durable import DecisionStore

__all__ = [
    "BLANK",
    "WITHHELD",
    "canonical_frame",
    "counters_frame",
    "events_frame",
    "operations_frame",
    "outcomes_frame",
    "requests_frame",
    "statuses_frame",
]

WITHHELD = N_("(withheld)")
"""Shown instead of the text of a stopped run, which has none (in the notebook's language).

The tables' headers are in the notebook's language too, except the names of labkit's own fields and
statuses (``kind``, ``name``, ``count``, ``ToolCall``, ``op_id``, ...), which are code."""


class WholeText(pd.DataFrame):
    """A table that shows every text whole: pandas cuts a cell past 50 characters to ``"Review finished.
    Nothing was written outside h..."``, and a cut text hides what it says. Only the display changes:
    it is a ``pandas.DataFrame`` in every other way (its slices and copies too)."""

    @property
    def _constructor(self) -> type[WholeText]:
        return WholeText

    def __repr__(self) -> str:
        with pd.option_context("display.max_colwidth", None):
            return super().__repr__()

    def _repr_html_(self) -> str | None:
        with pd.option_context("display.max_colwidth", None):
            return super()._repr_html_()

    def to_string(self, *args: object, **kwargs: object) -> str:
        with pd.option_context("display.max_colwidth", None):
            return super().to_string(*args, **kwargs)


def events_frame(
    source: RunOutcome | Mapping[str, RunOutcome] | Iterable[ControlEvent],
    *,
    compact: bool = False,
) -> pd.DataFrame:
    """The ordered control events as a table.

    Args:
        source: a run; or ``{label: outcome}`` to put several runs side by
            side (e.g. ``{"simple": a, "harness": b}``); or control events
            themselves (e.g. ``scope.events`` after direct tool invocations),
            also as the values of a mapping (``{label: scope.events}``).

    Returns:
        One row per event, indexed from 1 (``step``), with columns ``kind``,
        ``name`` and ``count``; for a mapping, one column group per label.
        A shorter run's missing steps are blank cells (:data:`BLANK`, ``""``), never
        ``NaN`` or ``<NA>``: its ``count`` column then holds whole numbers and ``""``
        (``pd.to_numeric(frame[(label, "count")], errors="coerce").sum()`` adds them up).
        Arguments are never part of it.
        compact: one column per run instead of three, each event written
            ``"kind name count"`` (e.g. ``"ModelCall model 1"``): four runs side by
            side then fit a notebook's width (chapter 2).

    Raises:
        InputError: anything else (a Setup or a scenario: run it first), an empty
            mapping, or a mapping whose value is not an outcome (the message names its label).
    """
    if isinstance(source, Mapping):
        if not source:
            raise InputError("events_frame got an empty mapping: give {label: outcome} with at least one run")
        frames = {
            label: _events_table(o if isinstance(o, RunOutcome) else _events(o, f" for {label!r}"))
            for label, o in source.items()
        }
        longest = max(len(frame) for frame in frames.values())
        if compact:
            columns = {label: _blank_after(_as_text(frame), longest) for label, frame in frames.items()}
            table = pd.DataFrame(columns, index=pd.RangeIndex(1, longest + 1, name=_("step")))
            table.columns.name = _("run")
            return table
        table = pd.concat(frames, axis=1, names=[_("run"), None])
        for label, frame in frames.items():
            for column in ("kind", "name", "count"):
                table[(label, column)] = _blank_after(frame[column], longest)
        return table
    table = _events_table(source if isinstance(source, RunOutcome) else _events(source))
    return table.assign(**{_("event"): _as_text(table)})[[_("event")]] if compact else table


def _as_text(frame: pd.DataFrame) -> pd.Series:
    """Each event as one string, ``"kind name count"``."""
    return frame["kind"] + " " + frame["name"] + " " + frame["count"].astype(str)


def _events_table(source: RunOutcome | tuple[ControlEvent, ...]) -> pd.DataFrame:
    events = source.events if isinstance(source, RunOutcome) else source
    frame = pd.DataFrame(
        [(str(e.kind), e.name, e.count) for e in events],
        columns=["kind", "name", "count"],
    )
    frame.index = pd.RangeIndex(1, len(frame) + 1, name=_("step"))
    return frame


def _events(source: object, where: str = "") -> tuple[ControlEvent, ...]:
    if isinstance(source, (str, bytes, RunOutcome)) or not isinstance(source, Iterable):
        raise InputError(
            f"events_frame needs a RunOutcome, {{label: outcome}} or control events{where}, not {_inputs.what(source)}"
            f"{_inputs._run_first(source)}"
        )
    events = tuple(source)
    odd = next((e for e in events if not isinstance(e, ControlEvent)), None)
    if odd is not None:
        raise InputError(
            f"events_frame needs a RunOutcome, {{label: outcome}} or control events{where}; {_inputs.what(source)}"
            f" holds a {_inputs.what(odd)}{_inputs._run_first(source)}"
        )
    return events


BLANK = ""
"""What a learner-facing table holds where there is nothing to show (a shorter run's missing
steps, a counter a span does not carry): an empty cell, never ``NaN``, ``None`` or ``<NA>``."""


def _blank_after(values: pd.Series, length: int) -> pd.Series:
    """``values`` (indexed from 1) padded to ``length`` rows with :data:`BLANK`; whole numbers stay ``int``."""
    cells = [*(v.item() if hasattr(v, "item") else v for v in values), *([BLANK] * (length - len(values)))]
    return pd.Series(
        cells, index=pd.RangeIndex(1, length + 1, name=_("step")), dtype=object if len(values) < length else None
    )


def counters_frame(outcome: RunOutcome) -> pd.DataFrame:
    """The run's counters next to their limits, and which one stopped the run.

    Returns:
        Rows ``model calls``, ``tool attempts``, ``attempts per signature``
        (the highest of any one signature), with columns ``used``, ``limit``
        and ``stopped here``: ``True`` only on the row whose rule decided the
        stop (``ModelBudget``, ``ToolBudget``, ``RepeatedCall``), the row
        :func:`labkit.teaching.charts.counters_data` highlights. A counter *at* its
        limit did not stop the run: a limit refuses the next attempt, not the
        last admitted one (docs/guarantees.md, "Limits are exact"; chapter 6); so no row is marked for
        ``Completed``, ``Incomplete``, a deadline, a permission refusal or a
        provider failure. Elapsed time is left out: it varies from run to
        run (the chart shows it).

    Raises:
        UserError: ``outcome`` is not a :class:`~labkit.RunOutcome`.
    """
    from .charts import counters_data  # the chart's rows: one rule decides, in both places

    counted = ("model calls", "tool attempts", "attempts per signature")
    rows = {
        _(row.name): (row.used, row.limit, row.highlighted) for row in counters_data(outcome) if row.name in counted
    }
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=[_("used"), _("limit"), _("stopped here")])
    frame.index.name = _("counter")
    return frame


def _answer(result: str | None) -> str:
    if result is None:
        return _("no result")
    for prefix, label in ((UNKNOWN_TOOL, N_("unknown tool")), (CUT, N_("cut at the cap")), ("refused:", N_("refused"))):
        if result.startswith(prefix):
            return _(label)
    if result.startswith("cancelled:"):
        return _("cancelled")
    return _("error") if result.startswith("error:") else _("result")


def requests_frame(outcome: RunOutcome) -> pd.DataFrame:
    """Every tool call the model requested, with how the loop answered it.

    It shows what the events cannot: a call naming a tool that does not
    exist, or one from a reply cut at the output-token cap, never reaches a
    guard, so it records no event, yet it costs a model call.

    Returns:
        One row per requested call, in order, with columns ``reply`` (the
        model call that asked), ``call id``, ``tool`` and ``answer``: ``result``,
        ``error`` (the body failed or the arguments did not bind), ``refused``
        (by the guard), ``cancelled``, ``unknown tool``, ``cut at the cap`` or
        ``no result``. Arguments and result texts are never part of it.

    Raises:
        InputError: ``outcome`` is not a :class:`~labkit.RunOutcome`.
    """
    outcome = _inputs.outcome(outcome, "requests_frame")
    rows = [(r.reply, r.call.id, r.call.name, _answer(r.result)) for r in outcome.tool_requests]
    frame = pd.DataFrame(rows, columns=[_("reply"), _("call id"), _("tool"), _("answer")])
    frame.index = pd.RangeIndex(1, len(frame) + 1, name=_("request"))
    return frame


def outcomes_frame(outcomes: Mapping[str, RunOutcome] | Iterable[tuple[str, RunOutcome]]) -> pd.DataFrame:
    """Several outcomes side by side, one row per label.

    Args:
        outcomes: ``{label: outcome}`` or ``(label, outcome)`` pairs, e.g.
            ``{"repeat / simple": o1, "repeat / harness": o2}``.

    Returns:
        Columns ``status``, ``ToolCall``, ``ModelCall``, ``exit code`` and
        ``text`` (``"(withheld)"`` after a stop: the run has no result text);
        no row for an empty mapping.

    Raises:
        InputError: not a mapping (or pairs) of :class:`~labkit.RunOutcome`; the message names the label.
    """
    pairs = _inputs.outcomes(outcomes, "outcomes_frame", empty_ok=True)
    rows = [
        (
            label,
            str(o.status),
            o.count("ToolCall"),
            o.count("ModelCall"),
            o.exit_code,
            _(WITHHELD) if o.text is None else o.text,
        )
        for label, o in pairs
    ]
    run = _("run")
    frame = pd.DataFrame(rows, columns=[run, _("status"), "ToolCall", "ModelCall", _("exit code"), _("text")])
    return WholeText(frame.set_index(run))


def statuses_frame() -> pd.DataFrame:
    """Chapter 7's closed set of statuses: for each, whether the run keeps the model's text and its exit code.

    Returns:
        One row per :class:`~labkit.RunStatus`, in its order, indexed by ``status`` (the status names are
        code), with the columns ``text`` (``"kept"`` for a run that ended by itself, ``"withheld"`` after
        a stop; in the notebook's language) and ``exit code`` (the console's, :func:`labkit.exit_code`).
    """
    rows = [(status.value, _("withheld") if status.is_stop else _("kept"), exit_code(status)) for status in RunStatus]
    return pd.DataFrame(rows, columns=["status", _("text"), _("exit code")]).set_index("status")


def canonical_frame(pairs: Mapping[str, tuple[str, str]], *, show_same: bool = True) -> pd.DataFrame:
    """Pairs of JSON texts with their canonical forms: would the guard count them as one call? (chapter 5)

    Args:
        pairs: ``{label: (left_json, right_json)}``, each side a JSON text as a
            model would send it, e.g. ``{"42 vs 42.0": ('{"input": 42}', '{"input": 42.0}')}``.
        show_same: ``False`` leaves out the ``same`` column, so that the reader compares
            the canonical texts (chapter 5 shows its table before a prediction).

    Returns:
        One row per label with columns ``left``, ``right``, ``canonical left``,
        ``canonical right`` and, unless ``show_same`` is ``False``, ``same`` (equal
        canonical texts, hence one signature for one tool).

    Raises:
        InputError: ``pairs`` is not a mapping of two JSON texts each, a side is
            not valid JSON text, or holds a non-finite number
            (``1e400``, ``NaN``); the message names the pair. (``InputError`` is
            labkit's own error and a ``ValueError``.)
    """
    if not isinstance(pairs, Mapping):
        raise InputError(f"canonical_frame needs {{label: (left_json, right_json)}}, not {type(pairs).__name__}")
    rows = []
    for label, pair in pairs.items():
        if (
            isinstance(pair, str)
            or not (isinstance(pair, (tuple, list)) and len(pair) == 2)
            or not all(isinstance(side, str) for side in pair)
        ):
            raise InputError(f"pair {label!r}: give two JSON texts (left_json, right_json), not {reprlib.repr(pair)}")
        left, right = pair
        texts = []
        for side in (left, right):
            try:
                texts.append(canonical(json.loads(side)))
            except json.JSONDecodeError as exc:
                raise InputError(f"pair {label!r}: {side!r} is not valid JSON text ({exc})") from None
            except NonFiniteNumber:
                raise InputError(
                    f"pair {label!r}: {side!r} holds a number that is not finite (NaN, or too large such as"
                    " 1e400, which a JSON parser reads as infinity); it has no exact decimal, so no canonical"
                    " text, and a tool call holding it fails binding (chapter 5; docs/guarantees.md)"
                ) from None
        rows.append((label, left, right, texts[0], texts[1], texts[0] == texts[1]))
    pair_ = _("pair")
    left, right = pgettext("a table's column", "left"), pgettext("a table's column", "right")  # not a verdict
    same = _("same")
    columns = [pair_, left, right, _("canonical left"), _("canonical right"), same]
    frame = pd.DataFrame(rows, columns=columns).set_index(pair_)
    return WholeText(frame if show_same else frame.drop(columns=same))


OPERATION_COLUMNS = ["op_id", "tool", "state", "reason", "result"]
"""The columns of :func:`operations_frame`."""


def operations_frame(store: DecisionStore) -> pd.DataFrame:
    """The durable operations of a :class:`~labkit.durable.DecisionStore` as a table (chapter 9).

    Args:
        store: an open decision store.

    Returns:
        One row per operation, in the order they were first proposed,
        indexed from 1 (``operation``), with columns ``op_id``, ``tool``,
        ``state`` (``proposed``, ``approved``, ``rejected`` or ``applied``),
        ``reason`` (the decision's reason, empty until decided) and
        ``result`` (the effect's result text, empty until applied). The
        proposal itself (the arguments) is left out, as in control events.

    Raises:
        sqlite3.ProgrammingError: the store is closed.
    """
    rows = [(op.op_id, op.tool, op.state.value, op.reason or "", op.result or "") for op in store.operations()]
    frame = WholeText(pd.DataFrame(rows, columns=OPERATION_COLUMNS))
    frame.index = pd.RangeIndex(1, len(frame) + 1, name=_("operation"))
    return frame
