"""matplotlib charts of a run: each counter against its limit.

Teaching helper: importing this module imports matplotlib (the core never does).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from .outcome import RunOutcome

__all__ = ["counters_chart"]


def counters_chart(outcome: RunOutcome, *, title: str | None = None) -> Figure:
    """Draw the four counters of a run as bars against their limits.

    Each bar is the counter as a share of its limit (model calls, tool
    attempts, the busiest signature's attempts, elapsed seconds against the
    deadline), labelled ``used / limit``; the dashed line at 100 % is where
    the host stops the run. A limit of zero is drawn as full when used is zero.

    Args:
        outcome: the run to draw.
        title: defaults to the run's status.

    Returns:
        The figure (closed for pyplot, so a notebook shows it once: as the cell's value).
    """
    usage, limits = outcome.usage, outcome.limits
    rows = [
        ("model calls", usage.model_calls, limits.model_calls, "{:d}"),
        ("tool attempts", usage.tool_calls, limits.tool_calls, "{:d}"),
        ("attempts per signature", usage.repetitions, limits.repetitions, "{:d}"),
        ("seconds", usage.elapsed_s, limits.deadline_s, "{:.2f}"),
    ]
    labels = [r[0] for r in rows]
    shares = [100.0 * used / limit if limit else 100.0 for _, used, limit, _ in rows]
    fig, ax = plt.subplots(figsize=(6.4, 2.6))
    colors = ["#c0392b" if share >= 100 else "#2e86c1" for share in shares]
    ax.barh(labels, [min(s, 130.0) for s in shares], color=colors)
    ax.axvline(100, color="black", linestyle="--", linewidth=1)
    for y, ((_, used, limit, fmt), share) in enumerate(zip(rows, shares, strict=True)):
        ax.text(min(share, 130.0) + 1.5, y, f"{fmt.format(used)} / {fmt.format(limit)}", va="center")
    ax.set_xlim(0, 145)
    ax.set_xlabel("share of the limit (%)")
    ax.invert_yaxis()
    ax.set_title(title or f"{outcome.status.value}: counters against limits")
    fig.tight_layout()
    plt.close(fig)
    return fig
