"""labkit, simple agent: ``await labkit.arun("complete", agent="simple")`` inside one running event loop."""

from __future__ import annotations

from ._labkit_async import make_for

NAME = "labkit simple (await arun)"
STYLE = "async"
IMPORTS = ("labkit",)


def make():
    return make_for("simple")
