"""The labkit run shared by the harness and simple rows: ``await labkit.arun("complete", agent=...)``.

Everything per run is built fresh, as labkit requires: scope, tools, scripted
transport, agent (one scope per request, docs/guarantees.md).
"""

from __future__ import annotations

import labkit


def make_for(agent: str):
    async def run():
        setup = labkit.prepare("complete", agent=agent)
        outcome = await setup.arun()
        model_calls = outcome.count("ModelCall")
        if model_calls != setup.transport.calls:
            return setup.task.entries, setup.task.completed, -1, outcome.text
        return setup.task.entries, setup.task.is_complete(), model_calls, outcome.text

    return run
