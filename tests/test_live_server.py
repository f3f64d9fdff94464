"""Every scenario (README.md, *The scenarios*) over real HTTP gives what the scripted transport gives.

The fake server (``fake_openai_server``) answers with the scenario's own
script over the chat-completions wire format, so both paths share one
script; only the transport differs.
"""

from __future__ import annotations

import pytest

pytest.importorskip("openai")

from fake_openai_server import FakeOpenAIServer
from support import SCENARIO_TABLE  # noqa: E402  (README.md, *The scenarios*: scenario -> status, ToolCall, ModelCall)

import labkit
from labkit import SCENARIOS, LiveProfile, LiveTransport, RunStatus


def test_the_table_covers_every_scenario():
    assert set(SCENARIO_TABLE) == set(SCENARIOS)


def _limits(name: str) -> labkit.Limits:
    limits = SCENARIOS[name].limits
    return limits.with_(deadline_s=0.1) if name == "deadline" else limits  # a small deadline, same in both paths


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
@pytest.mark.parametrize("agent", ["simple", "harness"])
@pytest.mark.parametrize("name", list(SCENARIO_TABLE))
def test_live_over_http_matches_scripted(name: str, agent: str, stream: bool):
    limits = _limits(name)
    scripted = labkit.run(name, agent=agent, stream=stream, limits=limits)
    with FakeOpenAIServer(SCENARIOS[name].script, model="fake-model") as server:
        transport = LiveTransport(LiveProfile(base_url=server.base_url, model="fake-model", max_retries=0))
        live = labkit.run(name, agent=agent, stream=stream, limits=limits, transport=transport)
        requests = list(server.requests)

    status, tool_calls, model_calls = SCENARIO_TABLE[name]
    assert (live.status, live.count("ToolCall"), live.count("ModelCall")) == (status, tool_calls, model_calls)
    assert live.events == scripted.events
    assert live.status == scripted.status and live.text == scripted.text
    assert live.transcript == scripted.transcript  # tool-call ids, arguments and results survive the wire
    # Every admitted model call reached the transport once (no budget-refused call did), and the server
    # at most once: under a 0.1 s deadline the request may be cut before it is sent.
    assert transport.calls == model_calls
    if name == "deadline":
        assert len(requests) <= model_calls
    else:
        assert len(requests) == model_calls
    assert all(bool(r.get("stream")) is stream for r in requests)


def test_the_wire_request_carries_tool_schemas_from_the_guarded_tools():
    with FakeOpenAIServer(SCENARIOS["incomplete"].script) as server:
        setup = labkit.prepare("incomplete", transport=LiveTransport(LiveProfile(base_url=server.base_url, model="m")))
        labkit.run(setup)
        body = server.requests[0]
    expected = [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.json_schema()}}
        for t in setup.agent.tools
    ]
    assert body["tools"] == expected
    assert body["tools"][0]["function"]["parameters"]["properties"]["input"]["type"] == "integer"
    assert body["model"] == "m"
    assert body["max_tokens"] == 800
    assert [m["role"] for m in body["messages"]] == ["system", "user"]


def test_a_stalling_server_gives_deadline_exceeded_within_a_small_deadline():
    from labkit import Hang

    with FakeOpenAIServer([Hang()]) as server:
        transport = LiveTransport(LiveProfile(base_url=server.base_url, model="m", max_retries=0))
        outcome = labkit.run("complete", transport=transport, limits=labkit.Limits(deadline_s=0.05))
    assert outcome.status is RunStatus.DEADLINE_EXCEEDED
    assert [e.kind for e in outcome.events] == ["ModelCall", "DeadlineExceeded"]


def test_a_stalling_stream_gives_deadline_exceeded_too():
    from labkit import Hang

    with FakeOpenAIServer([Hang()]) as server:
        transport = LiveTransport(LiveProfile(base_url=server.base_url, model="m", max_retries=0))
        outcome = labkit.run("complete", transport=transport, stream=True, limits=labkit.Limits(deadline_s=0.05))
    assert outcome.status is RunStatus.DEADLINE_EXCEEDED
