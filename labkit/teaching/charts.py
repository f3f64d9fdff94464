"""matplotlib charts of a run: its counters against their limits, and its timeline.

Teaching helper: importing this module imports matplotlib (the core never does).

Each chart has a data function that returns plain rows, so a learner (or a
test) can read exactly what is drawn:

* :func:`counters_data` / :func:`counters_chart` — one row per rule of the
  host: model calls, tool attempts, attempts per signature, seconds, and
  permission. Only the rule that decided the stop is highlighted (none for
  ``Completed``, ``Incomplete`` or ``ProviderUnavailable``: no rule stopped
  those runs), and the attempt it refused is drawn as a ghost bar,
  "next would be 5 of 4". A counter *at* its limit is not a stop: the limit
  refuses the next attempt, not the last admitted one (docs/guarantees.md, "Limits are exact").
* :func:`timeline_data` / :func:`timeline_chart` — every control event in
  order, on four lanes (model, middleware, guard, body), with the stop drawn
  across the lanes (chapter 8); a body that raised is an orange square
  ("finish_review raised ValueError"), one that returned a green dot, and a
  legend says which is which; the stop's label names the counter the rule read
  ("tool attempts 1 of 1 used"); a run of more than 40 events is drawn
  as its first 30 and last 10, and its title says so.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping
from typing import Any, NamedTuple

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..core.events import EventKind, StopReason
from ..loops.outcome import RunOutcome, RunStatus
from . import _inputs
from .i18n import N_, _, decimal

__all__ = [
    "LANES",
    "LEGEND",
    "TIMELINE_MAX_EVENTS",
    "CounterRow",
    "TimelineRow",
    "counters_chart",
    "counters_data",
    "timeline_chart",
    "timeline_data",
]

_HIGHLIGHT = "#c0392b"
_PLAIN = "#7f8c9a"
_CAP = 130.0  # bars longer than 130 % of their limit are cut here
_WRAP = 24  # a bar's label is drawn in lines of at most 24 characters (the room right of a full bar)

_WHY = {
    RunStatus.COMPLETED: N_("finish_review succeeded; no rule refused"),
    RunStatus.INCOMPLETE: N_("finish_review never succeeded; no rule refused"),
    RunStatus.PERMISSION_DENIED: N_("stopped by the permission rule"),
    RunStatus.TOOL_BUDGET: N_("stopped by the tool budget"),
    RunStatus.REPEATED_CALL: N_("stopped by the repetition rule"),
    RunStatus.MODEL_BUDGET: N_("stopped by the model-call budget"),
    RunStatus.DEADLINE_EXCEEDED: N_("stopped by the deadline"),
    RunStatus.PROVIDER_UNAVAILABLE: N_("the provider failed; no limit decided"),
}
"""Why each status ended the run, in the chart's title (shown in the notebook's language)."""


def _outcome(value: object, helper: str) -> RunOutcome:
    return _inputs.outcome(value, helper)  # an InputError, which is a UserError


def _stop_event(outcome: RunOutcome):  # -> ControlEvent | None
    return next((e for e in outcome.events if e.kind in StopReason._value2member_map_), None)


# -- counters against limits ---------------------------------------------------------------


class CounterRow(NamedTuple):
    """One row of the counters chart: a rule of the host, what it counted, and whether it stopped the run.

    Attributes:
        name: ``"model calls"``, ``"tool attempts"``, ``"attempts per signature"``,
            ``"seconds"`` or ``"permission"``.
        rule: the :class:`~labkit.StopReason` value this rule gives when it refuses
            (``"ModelBudget"``, ``"ToolBudget"``, ``"RepeatedCall"``,
            ``"DeadlineExceeded"``, ``"PermissionDenied"``).
        used: what was admitted: model calls made, tool attempts admitted, the
            busiest signature's attempts, elapsed seconds; ``0`` for permission
            (a call whose capability is not granted is never admitted).
        limit: the matching :class:`~labkit.Limits` field; ``0`` for permission.
        highlighted: ``True`` only for the rule that decided the stop (at most
            one row; none for ``Completed``, ``Incomplete`` and ``ProviderUnavailable``).
        refused_next: for the highlighted counting rule, the number the refused
            attempt would have had ("next would be 5 of 4"); ``1`` for a
            permission refusal; ``None`` otherwise (and for the deadline: time
            has no next attempt).
        label: the text drawn beside the bar; `` · `` separates its parts, e.g.
            ``"4 / 4 · next would be 5 of 4 tool attempts"``: a refusal always names
            its counter (``"1.00 / 1 seconds · deadline passed"``, ``"read_ticket
            refused: permission, capability not granted"``).
    """

    name: str
    rule: str
    used: float
    limit: float
    highlighted: bool
    refused_next: int | None
    label: str


def counters_data(outcome: RunOutcome) -> list[CounterRow]:
    """The rows of :func:`counters_chart`: each rule of the host against its limit.

    Args:
        outcome: a finished run.

    Returns:
        Five :class:`CounterRow` in guard order of reading: model calls, tool
        attempts, attempts per signature, seconds, permission. The row whose
        ``rule`` equals the run's status is highlighted; no other is, even when
        its counter is at its limit.

    Raises:
        UserError: ``outcome`` is not a :class:`~labkit.RunOutcome`.
    """
    outcome = _outcome(outcome, "counters_data")
    usage, limits, status = outcome.usage, outcome.limits, outcome.status
    stop = _stop_event(outcome)
    rows: list[CounterRow] = []
    counted = (
        (N_("model calls"), StopReason.MODEL_BUDGET, usage.model_calls, limits.model_calls),
        (N_("tool attempts"), StopReason.TOOL_BUDGET, usage.tool_calls, limits.tool_calls),
        (N_("attempts per signature"), StopReason.REPEATED_CALL, usage.repetitions, limits.repetitions),
    )
    for name, rule, used, limit in counted:
        decided = status.value == rule.value
        if decided:
            # The stop event's count is the counter the rule read (for RepeatedCall: the refused
            # signature's own attempts), so the refused attempt is the one after it.
            read = stop.count if stop is not None and stop.kind == rule.value else used
            refused = read + 1
            label = _("{used} / {limit} · next would be {refused} of {limit} {counter}").format(
                used=used, limit=limit, refused=refused, counter=_(name)
            )
        else:
            refused, label = None, f"{used} / {limit}"
        rows.append(CounterRow(name, rule.value, used, limit, decided, refused, label))

    decided = status is RunStatus.DEADLINE_EXCEEDED
    label = f"{decimal(usage.elapsed_s, '.2f')} / {decimal(limits.deadline_s)}"  # a decimal comma in French
    rows.append(
        CounterRow(
            N_("seconds"),
            StopReason.DEADLINE_EXCEEDED.value,
            usage.elapsed_s,
            limits.deadline_s,
            decided,
            None,
            label + (_(" seconds · deadline passed") if decided else ""),
        )
    )

    decided = status is RunStatus.PERMISSION_DENIED
    if decided:
        tool = stop.name if stop is not None else _("a tool")
        label = _("{tool} refused: permission, capability not granted").format(tool=tool)
    else:
        label = _("no call refused for permission")
    rows.append(
        CounterRow(N_("permission"), StopReason.PERMISSION_DENIED.value, 0, 0, decided, 1 if decided else None, label)
    )
    return rows


def _share(used: float, limit: float) -> float:
    """``used`` as a percentage of ``limit``; at a zero limit, 0 used is "at the limit" (100 %)."""
    if limit:
        return 100.0 * used / limit
    return 100.0 if used == 0 else _CAP


def _draw_counters(ax: Axes, outcome: RunOutcome, title: str, *, labels: bool = True) -> None:
    rows = counters_data(outcome)
    for y, row in enumerate(rows):
        if row.name == "permission":
            mark = "\u2717 " if row.highlighted else "\u2713 "
            ax.text(
                2,
                y,
                mark + row.label,
                va="center",
                fontsize=8,
                color=_HIGHLIGHT if row.highlighted else "black",
                fontweight="bold" if row.highlighted else "normal",
            )
            continue
        share = min(_share(row.used, row.limit), _CAP)
        end = share
        if row.refused_next is not None:  # the ghost bar: the attempt the rule refused
            ghost = min(_share(row.refused_next, row.limit), _CAP)
            ax.barh(y, ghost, color="none", edgecolor=_HIGHLIGHT, hatch="//", linestyle="--", linewidth=1.2)
            end = max(end, ghost)
        ax.barh(y, share, color=_HIGHLIGHT if row.highlighted else _PLAIN)
        shown = _wrapped(row.label, _WRAP)
        ax.text(
            end + 2,
            y,
            shown,
            va="center",
            fontsize=8,
            linespacing=1.0,
            color=_HIGHLIGHT if row.highlighted else "black",
            fontweight="bold" if row.highlighted else "normal",
            gid=row.label,  # the label unwrapped, for _fit_labels
        )
    ax.set_yticks(range(len(rows)), [_(row.name) for row in rows])
    ax.axvline(100, color="black", linestyle="--", linewidth=1)
    ax.set_xlim(0, 200)
    ax.set_xticks([0, 50, 100])
    ax.set_xlabel(_("share of the limit (%); dashed: the limit"), fontsize=8)
    if not labels:
        ax.tick_params(axis="y", labelleft=False)
    ax.set_ylim(len(rows) - 0.4, -0.6)  # top to bottom, with room under the last row
    ax.set_title(title, fontsize=10)


def _wrapped(label: str, width: int) -> str:
    """A bar's label in lines of at most ``width`` characters, broken at spaces and at each " · "."""
    return "\n".join(line for part in label.split(" · ") for line in textwrap.wrap(part, width))


def _fit_labels(fig: Figure) -> None:
    """Keep every bar label inside its panel: a label that runs past the panel's right edge (a long
    French one, or beside a ghost bar near the edge) is wrapped narrower, and, if it still does not fit,
    drawn right-aligned against the edge on a white ground."""
    if not hasattr(fig.canvas, "get_renderer"):  # Agg and the notebook's inline backend have one
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(fig)  # measure as a notebook draws it
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    for ax in fig.axes:
        edge = ax.get_window_extent(renderer).x1
        for text in ax.texts:
            label = text.get_gid()
            if not label:
                continue
            width = _WRAP
            while text.get_window_extent(renderer).x1 > edge and width > 10:
                width -= 2
                text.set_text(_wrapped(label, width))
            if text.get_window_extent(renderer).x1 > edge:
                text.set_horizontalalignment("right")
                text.set_x(ax.get_xlim()[1] - 1)
                text.set_bbox({"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1})


def counters_chart(outcome: RunOutcome | Mapping[str, RunOutcome], *, title: str | None = None) -> Figure:
    """Draw each rule of the host against its limit, highlighting only the one that stopped the run.

    Each bar is a counter as a share of its limit (model calls, tool attempts,
    the busiest signature's attempts, elapsed seconds against the deadline),
    labelled ``used / limit``; the dashed line at 100 % is the limit. The rule
    that decided the stop is red, with the attempt it refused as a hatched
    ghost bar ("next would be 5 of 4"); a bar at its limit that decided
    nothing stays grey. The last row says whether a call was refused for a
    missing capability. The rows are :func:`counters_data`.

    Args:
        outcome: the run to draw, or ``{label: outcome}`` to draw several
            runs as panels side by side (e.g. one per agent).
        title: defaults to the status and why it ended the run, e.g.
            ``"ToolBudget: stopped by the tool budget"`` (for a mapping: the
            figure's title; each panel is titled ``label: status``).

    Returns:
        The figure (closed for pyplot, so a notebook shows it once: as the cell's value).

    Raises:
        UserError: no outcome to draw, or something that is not a :class:`~labkit.RunOutcome`.
    """
    if isinstance(outcome, Mapping):
        runs = _inputs.outcomes(outcome, "counters_chart")
        fig, axes = plt.subplots(1, len(runs), figsize=(4.2 * len(runs) + 1.6, 2.6), squeeze=False)
        for i, (label, run) in enumerate(runs):
            _draw_counters(
                axes[0][i], run, _("{label}: {status}").format(label=label, status=run.status.value), labels=i == 0
            )
        if title:
            fig.suptitle(title)
    else:
        outcome = _outcome(outcome, "counters_chart")
        fig, ax = plt.subplots(figsize=(6.4, 2.6))  # sizes kept: notebooks store "<Figure size 640x260 ...>"
        _draw_counters(
            ax, outcome, title or _("{status}: {why}").format(status=outcome.status.value, why=_(_WHY[outcome.status]))
        )
    fig.tight_layout()
    _fit_labels(fig)
    plt.close(fig)
    return fig


# -- the run timeline ---------------------------------------------------------------------------

LANES = (N_("model"), N_("middleware"), N_("guard"), N_("body"))
"""The timeline's lanes, top to bottom: the counted model calls, the observing
middleware, the guard's decisions, the tool bodies that ran."""


class TimelineRow(NamedTuple):
    """One mark on the run timeline.

    Attributes:
        step: the event's position in ``outcome.events``, from 1 (as in
            :func:`labkit.teaching.frames.events_frame`). A body row shares the step of
            the ``ToolCall`` that admitted it.
        lane: one of :data:`LANES`. A stop sits on the lane that decided it:
            ``guard`` for the three guard rules, ``model`` for the model-call
            budget and a provider that failed; the deadline sits on the lane
            that was running when time ran out (``model`` or ``body``).
        kind: the event kind (an :class:`~labkit.EventKind` value), or ``"body"``
            for the body run that follows each admitted ``ToolCall`` (bodies
            record no event of their own).
        label: the short text drawn at the mark: for a body, ``"read_ticket returned"``, or
            ``"finish_review raised ValueError"`` when it failed (``"read_ticket runs"`` when
            the outcome has no transcript to tell, or the run stopped while it ran).
        stop: ``True`` for the stop event (drawn across every lane).
        failed: ``True`` only on a ``body`` row whose body raised (the model saw
            ``error: ...``; the attempt still counted, chapter 4); drawn as an orange
            square, with its own legend entry, instead of a green dot.
        unknown: ``True`` only on a ``body`` row whose result the outcome does not hold (the run
            ended while it ran, or no transcript was kept): drawn as a hollow circle,
            ``"body: no result in the run"``, never as a body that returned.
    """

    step: int
    lane: str
    kind: str
    label: str
    stop: bool
    failed: bool = False
    unknown: bool = False


def _stop_label(kind: str, name: str, count: int, outcome: RunOutcome) -> str:
    """The stop's label: the refused call and the counter the rule read, named as on the counters chart."""
    limits = outcome.limits
    if kind == StopReason.PERMISSION_DENIED:
        return _("refuses {tool}: permission, capability not granted").format(tool=name)
    if kind == StopReason.TOOL_BUDGET:
        return _("refuses {tool}: tool attempts {count} of {limit} used").format(
            tool=name, count=count, limit=limits.tool_calls
        )
    if kind == StopReason.REPEATED_CALL:
        return _("refuses {tool}: same call, attempts per signature {count} of {limit} used").format(
            tool=name, count=count, limit=limits.repetitions
        )
    if kind == StopReason.MODEL_BUDGET:
        return _("refuses model call {next}: model calls {count} of {limit} made").format(
            next=count + 1, count=count, limit=limits.model_calls
        )
    if kind == StopReason.PROVIDER_UNAVAILABLE:
        return _("provider failed")
    return _("deadline passed: {elapsed} of {deadline} seconds elapsed").format(
        elapsed=decimal(outcome.usage.elapsed_s, ".2f"), deadline=decimal(limits.deadline_s)
    )


def _body_results(outcome: RunOutcome) -> dict[int, str | None]:
    """What each admitted body gave, by the index of its ``ToolCall`` event: its error text, ``""`` when it
    returned, ``None`` when the transcript cannot tell (none kept, or the run stopped while it ran).

    Bodies record no event, so the admitted calls are read from the transcript: a call whose result
    is a value or ``error: Type: ...`` reached its body (a refusal is ``refused:``, a call stopped by
    the run ``cancelled:``, an unknown tool, a cut reply or arguments that did not bind never
    reached a guard); the k-th ``ToolCall`` event for a tool is its k-th such call.
    """
    from ..loops.agents import result_kind  # core, already imported by labkit

    ran: dict[str, list[str]] = {}
    for request in outcome.tool_requests:  # each result matched within its own reply (ids may come again)
        kind, text = result_kind(request.result), request.result or ""
        if kind in ("failed", "result"):
            ran.setdefault(request.call.name, []).append(text[len("error: ") :] if kind == "failed" else "")
    seen: dict[str, int] = {}
    found: dict[int, str | None] = {}
    for index, event in enumerate(outcome.events):
        if event.kind != EventKind.TOOL_CALL:
            continue
        k = seen.get(event.name, 0)
        seen[event.name] = k + 1
        texts = ran.get(event.name, [])
        found[index] = texts[k] if k < len(texts) else None
    return found


def timeline_data(outcome: RunOutcome) -> list[TimelineRow]:
    """The rows of :func:`timeline_chart`: every control event in order, on its lane.

    Args:
        outcome: a finished run.

    Returns:
        One :class:`TimelineRow` per event, in event order, plus one ``body`` row
        right after each ``ToolCall`` (the admitted body runs). Exactly one
        row has ``stop=True`` when the run stopped (none for ``Completed`` or
        ``Incomplete``).

    Raises:
        UserError: ``outcome`` is not a :class:`~labkit.RunOutcome`.
    """
    outcome = _outcome(outcome, "timeline_data")
    rows: list[TimelineRow] = []
    bodies = _body_results(outcome)
    for step, event in enumerate(outcome.events, start=1):
        kind, name, count = event.kind.value, event.name, event.count
        if kind == EventKind.MODEL_CALL:
            rows.append(TimelineRow(step, "model", kind, _("call {n}").format(n=count), False))
        elif kind == EventKind.MIDDLEWARE:
            rows.append(TimelineRow(step, "middleware", kind, _("sees {tool}").format(tool=name), False))
        elif kind == EventKind.TOOL_CALL:
            # the count is the run's, all tools together: name the counter, or "#2" reads as read_ticket's 2nd
            admits = _("admits {tool} (ToolCall {n})").format(tool=name, n=count)
            rows.append(TimelineRow(step, "guard", kind, admits, False))
            error = bodies.get(step - 1)
            if error is None:
                rows.append(TimelineRow(step, "body", "body", _("{tool} runs").format(tool=name), False, unknown=True))
            elif error:
                raised = _("{tool} raised {error}").format(tool=name, error=_error_name(error))
                rows.append(TimelineRow(step, "body", "body", raised, False, True))
            else:
                rows.append(TimelineRow(step, "body", "body", _("{tool} returned").format(tool=name), False))
        else:
            if kind in (StopReason.MODEL_BUDGET, StopReason.PROVIDER_UNAVAILABLE):
                lane = "model"
            elif kind == StopReason.DEADLINE_EXCEEDED:
                lane = "body" if rows and rows[-1].lane == "body" else "model"
            else:
                lane = "guard"
            rows.append(TimelineRow(step, lane, kind, _stop_label(kind, name, count, outcome), True))
    return rows


def _error_name(error: str) -> str:
    """``"ValueError"`` from ``"ValueError: finish_review needs ..."``; ``"an error"`` when there is no name."""
    match = re.match(r"[A-Za-z_]\w*", error)
    return match.group(0) if match else _("an error")


TIMELINE_MAX_EVENTS = 40
"""The most events :func:`timeline_chart` draws: a longer run is drawn as its first
:data:`TIMELINE_HEAD` and last :data:`TIMELINE_TAIL` events with a gap mark between them (its
title says how many were drawn), so a run of thousands of events still draws in a moment.
:func:`timeline_data` always returns every row."""

TIMELINE_HEAD = 30
TIMELINE_TAIL = 10

_EVENT = "#2e86c1"
_RETURNED = "#1e8449"
_FAILED = "#d35400"

LEGEND = {
    "event": N_("event"),
    "body": N_("body returned"),
    "body-unknown": N_("body: no result in the run"),
    "body-failed": N_("body raised: failed (the attempt still counted)"),
    "stop": N_("stop"),
}
"""The timeline's legend entries by mark, in order (in English; drawn in the notebook's language); a
legend lists the marks its chart draws."""


def _timeline_legend(ax: Axes, rows: list[TimelineRow]) -> None:
    from matplotlib.lines import Line2D

    drawn = {
        "event"
        if row.lane != "body" and not row.stop
        else "stop"
        if row.stop
        else "body-failed"
        if row.failed
        else "body-unknown"
        if row.unknown
        else "body"
        for row in rows
    }
    styles: dict[str, dict[str, Any]] = {
        "event": {"marker": "o", "color": _EVENT},
        "body": {"marker": "o", "color": _RETURNED},
        "body-unknown": {"marker": "o", "color": "white", "markeredgecolor": _RETURNED, "markeredgewidth": 1.5},
        "body-failed": {"marker": "s", "color": _FAILED, "markeredgecolor": "black", "markeredgewidth": 0.6},
        "stop": {"marker": "X", "color": _HIGHLIGHT},
    }
    handles = [
        Line2D([], [], linestyle="none", markersize=7, label=_(LEGEND[mark]), **styles[mark])
        for mark in LEGEND
        if mark in drawn
    ]
    if handles:
        # one row under the body lane, inside the axes: the figure keeps its size
        ax.legend(
            handles=handles,
            loc="lower center",
            ncol=len(handles),
            fontsize=7,
            frameon=False,
            borderaxespad=0.1,
            handletextpad=0.3,
            columnspacing=1.2,
        )


def timeline_chart(outcome: RunOutcome, *, title: str | None = None) -> Figure:
    """Draw the run as a timeline: one lane each for model, middleware, guard and body.

    Every control event is a mark on its lane, left to right in the order the
    scope recorded it (the x axis is the event's step, not time); an admitted
    ``ToolCall`` is followed by its body on the body lane (a green dot when it
    returned, an orange square when it raised: a failure, though the attempt
    counted); the stop is a red line across every lane, labelled with the rule
    that decided it and the counter it read. A legend under the body lane names
    the marks drawn (:data:`LEGEND`). The rows are :func:`timeline_data`.

    A run of more than :data:`TIMELINE_MAX_EVENTS` (40) events is cut: its first 30
    and last 10 events are drawn, a ``⋯ N events not drawn ⋯`` mark sits between them,
    and the title ends with ``(40 of N events drawn: the first 30 and the last 10)``.

    Args:
        outcome: the run to draw.
        title: defaults to the status and why it ended the run (the note on a cut run is
            added to a given title too).

    Returns:
        The figure (closed for pyplot, so a notebook shows it once: as the cell's value).

    Raises:
        UserError: ``outcome`` is not a :class:`~labkit.RunOutcome`.
    """
    outcome = _outcome(outcome, "timeline_chart")
    rows = timeline_data(outcome)
    steps = len(outcome.events)
    cut = steps > TIMELINE_MAX_EVENTS
    hidden = steps - TIMELINE_HEAD - TIMELINE_TAIL if cut else 0

    def place(step: int) -> int:  # the x of a step: a cut run's tail moves left, past a one-step gap
        return step - hidden + 1 if cut and step > TIMELINE_HEAD else step

    if cut:
        rows = [row for row in rows if row.step <= TIMELINE_HEAD or row.step > steps - TIMELINE_TAIL]
    drawn = steps - hidden
    width = place(steps) if steps else 0
    fig, ax = plt.subplots(figsize=(max(6.4, 1.05 * width + 2.0), 3.0))
    lane_y = {lane: i for i, lane in enumerate(LANES)}
    for y in lane_y.values():
        ax.axhline(y, color="#d5d8dc", linewidth=6, zorder=0)
    previous: tuple[float, int] | None = None
    for row in rows:
        x = place(row.step) + (0.35 if row.lane == "body" else 0.0)
        y = lane_y[row.lane]
        if previous is not None:
            ax.annotate(
                "", xy=(x, y), xytext=previous, arrowprops={"arrowstyle": "->", "color": "#aab7b8", "linewidth": 0.8}
            )
        if row.stop:
            ax.axvline(x, color=_HIGHLIGHT, linewidth=2, zorder=1)
            ax.plot(x, y, marker="X", markersize=11, color=_HIGHLIGHT, zorder=3, gid="stop")
            left = x < width * 0.6  # the label goes where there is room
            ax.text(
                x + 0.12 if left else x - 0.12,
                -0.5,
                _("{status}: {why}").format(status=row.kind, why=row.label),
                color=_HIGHLIGHT,
                fontweight="bold",
                fontsize=8.5,
                va="bottom",
                ha="left" if left else "right",
            )
        elif row.failed:  # a body that raised: a failure, not a stop (the attempt counted, the run went on)
            ax.plot(
                x,
                y,
                marker="s",
                markersize=9,
                color=_FAILED,
                markeredgecolor="black",
                markeredgewidth=0.6,
                zorder=3,
                gid="body-failed",
            )
            ax.text(x, y + 0.3, row.label, fontsize=7.5, ha="center", va="top", color=_FAILED, fontweight="bold")
        elif row.unknown:  # a body whose result the run does not hold: it was still running at the stop
            ax.plot(
                x,
                y,
                marker="o",
                markersize=8,
                color="white",
                markeredgecolor=_RETURNED,
                markeredgewidth=1.5,
                zorder=3,
                gid="body-unknown",
            )
            ax.text(x, y + 0.3, row.label, fontsize=7.5, ha="center", va="top")
        else:
            body = row.lane == "body"
            ax.plot(
                x,
                y,
                marker="o",
                markersize=8,
                color=_RETURNED if body else _EVENT,
                zorder=3,
                gid="body" if body else "event",
            )
            ax.text(x, y + 0.3, row.label, fontsize=7.5, ha="center", va="top")
        previous = (x, y)
    shown_steps = [
        step for step in range(1, steps + 1) if not cut or step <= TIMELINE_HEAD or step > steps - TIMELINE_TAIL
    ]
    if cut:
        ax.text(
            TIMELINE_HEAD + 1,
            (len(LANES) - 1) / 2,
            _("\u22ef {hidden} events\nnot drawn \u22ef").format(hidden=f"{hidden:,}"),
            ha="center",
            va="center",
            fontsize=8,
            color="#566573",
            bbox={"facecolor": "white", "edgecolor": "#aab7b8"},
            zorder=4,
        )
    ax.set_yticks(range(len(LANES)), [_(lane) for lane in LANES])
    ax.set_ylim(len(LANES) + 0.3, -0.9)  # room under the body lane for the legend
    ax.set_xlim(0.4, max(width, 1) + 0.9)
    ax.set_xticks([place(step) for step in shown_steps], [str(step) for step in shown_steps])
    ax.set_xlabel(_("step (event order)"))
    heading = title or _("{status}: {why}").format(status=outcome.status.value, why=_(_WHY[outcome.status]))
    if cut:
        heading += _(" ({drawn} of {steps} events drawn: the first {head} and the last {tail})").format(
            drawn=drawn, steps=f"{steps:,}", head=TIMELINE_HEAD, tail=TIMELINE_TAIL
        )
    ax.set_title(heading)
    _timeline_legend(ax, rows)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    plt.close(fig)
    return fig
