"""matplotlib charts of a run: each counter against its limit.

Teaching helper: importing this module imports matplotlib (the core never does).
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .outcome import RunOutcome

__all__ = ["counters_chart"]


def _draw(ax: Axes, outcome: RunOutcome, title: str, *, labels: bool = True) -> None:
    usage, limits = outcome.usage, outcome.limits
    rows = [
        ("model calls", usage.model_calls, limits.model_calls, "{:d}"),
        ("tool attempts", usage.tool_calls, limits.tool_calls, "{:d}"),
        ("attempts per signature", usage.repetitions, limits.repetitions, "{:d}"),
        ("seconds", usage.elapsed_s, limits.deadline_s, "{:.2f}"),
    ]
    names = [r[0] for r in rows]
    shares = [100.0 * used / limit if limit else 100.0 for _, used, limit, _ in rows]
    colors = ["#c0392b" if share >= 100 else "#2e86c1" for share in shares]
    ax.barh(names, [min(s, 130.0) for s in shares], color=colors)
    ax.axvline(100, color="black", linestyle="--", linewidth=1)
    for y, ((_, used, limit, fmt), share) in enumerate(zip(rows, shares, strict=True)):
        ax.text(min(share, 130.0) + 1.5, y, f"{fmt.format(used)} / {fmt.format(limit)}", va="center")
    ax.set_xlim(0, 145)
    ax.set_xlabel("share of the limit (%)")
    if not labels:
        ax.tick_params(axis="y", labelleft=False)
    ax.invert_yaxis()
    ax.set_title(title)


def counters_chart(outcome: RunOutcome | Mapping[str, RunOutcome], *, title: str | None = None) -> Figure:
    """Draw the four counters of a run as bars against their limits.

    Each bar is the counter as a share of its limit (model calls, tool
    attempts, the busiest signature's attempts, elapsed seconds against the
    deadline), labelled ``used / limit``; the dashed line at 100 % is where
    the host stops the run. A limit of zero is drawn as full when used is zero.

    Args:
        outcome: the run to draw, or ``{label: outcome}`` to draw several
            runs as panels side by side (e.g. one per agent).
        title: defaults to the run's status (for a mapping: the figure's
            title; each panel is titled ``label: status``).

    Returns:
        The figure (closed for pyplot, so a notebook shows it once: as the cell's value).
    """
    if isinstance(outcome, Mapping):
        runs = list(outcome.items())
        if not runs:
            raise ValueError("counters_chart needs at least one outcome")
        fig, axes = plt.subplots(1, len(runs), figsize=(4.2 * len(runs) + 1.6, 2.6), squeeze=False)
        for i, (label, run) in enumerate(runs):
            _draw(axes[0][i], run, f"{label}: {run.status.value}", labels=i == 0)
        if title:
            fig.suptitle(title)
    else:
        fig, ax = plt.subplots(figsize=(6.4, 2.6))
        _draw(ax, outcome, title or f"{outcome.status.value}: counters against limits")
    fig.tight_layout()
    plt.close(fig)
    return fig
