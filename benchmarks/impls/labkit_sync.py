"""labkit from plain sync code: ``labkit.run(setup)`` (one ``asyncio.run`` per run)."""

from __future__ import annotations

import labkit

NAME = "labkit harness (sync run)"
STYLE = "sync"
IMPORTS = ("labkit",)


def make():
    def run():
        setup = labkit.prepare("complete", agent="harness")
        outcome = labkit.run(setup)
        model_calls = outcome.count("ModelCall")
        if model_calls != setup.transport.calls:
            return setup.task.entries, setup.task.completed, -1, outcome.text
        return setup.task.entries, setup.task.is_complete(), model_calls, outcome.text

    return run
