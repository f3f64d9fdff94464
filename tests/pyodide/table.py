"""Run inside Pyodide by tests/test_pyodide.py: every scenario under both agents, sync and async,
and one sync body that blocks past its deadline (with no threads, the run waits for it)."""

import json
import sys
import time

import labkit

AGENTS = ("simple", "harness")


def limits(name):
    scenario = labkit.SCENARIOS[name]
    return scenario.limits.with_(deadline_s=0.2) if name == "deadline" else scenario.limits  # quick


def row(name, agent, outcome):
    return {
        "scenario": name,
        "agent": agent,
        "status": outcome.status.value,
        "exit_code": outcome.exit_code,
        "events": [[e.kind.value, e.name, e.count] for e in outcome.events],
    }


def blocking_body():
    """A sync body that sleeps past the run's deadline: did it finish before the run returned?"""
    finished = []

    def read_ticket(input: int) -> str:
        """Read a ticket, slowly."""
        time.sleep(0.3)
        finished.append(input)
        return "NotFound"

    tool = labkit.Tool("read_ticket", "ticket.read", lambda state, input: read_ticket(input))
    slow = labkit.scenario(
        "slow body",
        tools=[labkit.Tool("read_ticket", "ticket.read", lambda state, input: read_ticket(input))],
        script=[labkit.Call("read_ticket", {"input": 1}), "Done."],
        done=lambda state: False,
        limits=labkit.Limits(deadline_s=0.05),
    ) if False else None
    del tool, slow
    scope = labkit.ExecutionScope(labkit.Limits(deadline_s=0.05), capabilities={"ticket.read"})
    guarded = scope.tool("read_ticket", "ticket.read", read_ticket)
    client = labkit.CountingClient(labkit.ScriptedTransport([labkit.Call("read_ticket", {"input": 1}), "Done."]), scope)
    agent = labkit.SimpleAgent(client, [guarded], instructions="Read ticket 1.")
    return agent, finished


def main_sync():
    rows = [row(n, a, labkit.run(n, agent=a, limits=limits(n))) for n in labkit.SCENARIOS for a in AGENTS]
    return json.dumps({"platform": sys.platform, "mode": "sync", "rows": rows})


async def main_async():
    rows = [row(n, a, await labkit.arun(n, agent=a, limits=limits(n))) for n in labkit.SCENARIOS for a in AGENTS]
    agent, finished = blocking_body()
    outcome = await labkit.run_agent(agent, "Read ticket 1.", is_complete=lambda: False)
    blocked = {"status": outcome.status.value, "body_finished_before_the_run_returned": bool(finished)}
    return json.dumps({"platform": sys.platform, "mode": "async", "rows": rows, "blocking_body": blocked})
