"""The framework's own loop with labkit's scope around it: ``await labkit.arun("complete", agent="maf")``.

The same run as the framework's own row, but through labkit's adapter (guarded
tools, counting model, loop cap = model limit + 1, calls one after another),
built fresh per run as labkit requires (the framework's agent included, which its own
row builds once): what labkit's scope costs inside that runtime.
"""

from __future__ import annotations

from ._labkit_async import make_for

NAME = "Microsoft Agent Framework's own loop + labkit scope"
STYLE = "async"
IMPORTS = ("labkit", "labkit.adapters.maf")


def make():
    return make_for("maf")
