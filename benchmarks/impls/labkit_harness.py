"""labkit, harness agent: ``await labkit.arun("complete", agent="harness")`` inside one running event loop."""

from __future__ import annotations

from ._labkit_async import make_for

NAME = "labkit harness (await arun)"
STYLE = "async"
IMPORTS = ("labkit",)


def make():
    return make_for("harness")
