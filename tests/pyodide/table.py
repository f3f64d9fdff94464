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


def slow_body(wait):
    """A sync body that waits five times the run's deadline with ``wait``: had it finished when the run returned?"""
    body = {"entered": False, "finished": False}

    def read_ticket(input: int) -> str:
        """Read a ticket, slowly."""
        body["entered"] = True
        wait(1.0)
        body["finished"] = True
        return "NotFound"

    scope = labkit.ExecutionScope(labkit.Limits(deadline_s=0.2), capabilities={"ticket.read"})
    guarded = scope.tool("read_ticket", "ticket.read", read_ticket)
    client = labkit.CountingClient(labkit.ScriptedTransport([labkit.Call("read_ticket", {"input": 1}), "Done."]), scope)
    agent = labkit.SimpleAgent(client, [guarded], instructions="Read ticket 1.")
    return agent, body


def busy(seconds):
    """Wait without ever giving the interpreter up (a computation, a blocking call)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def main_sync():
    rows = [row(n, a, labkit.run(n, agent=a, limits=limits(n))) for n in labkit.SCENARIOS for a in AGENTS]
    return json.dumps({"platform": sys.platform, "mode": "sync", "rows": rows})


async def main_async():
    rows = [row(n, a, await labkit.arun(n, agent=a, limits=limits(n))) for n in labkit.SCENARIOS for a in AGENTS]
    slow = {}
    for name, wait in (("sleeps", time.sleep), ("busy", busy)):
        agent, body = slow_body(wait)
        outcome = await labkit.run_agent(agent, "Read ticket 1.", is_complete=lambda: False)
        slow[name] = {"status": outcome.status.value, "tool_calls": outcome.count("ToolCall"), **body}
    return json.dumps({"platform": sys.platform, "mode": "async", "rows": rows, "slow_bodies": slow})
