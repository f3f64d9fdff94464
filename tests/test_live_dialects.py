"""The live transport against every server dialect and every failing wire input (docs/live.md).

Two halves:

* the conformance suite: for every dialect of ``tests/dialects.py`` and
  every scenario, streamed and not, the live run over HTTP ends exactly as
  the scripted transport's run does (status, events, text, one result per
  call id);
* the failing inputs: each wire shape that broke the transport, through the
  Python API and the console (``--live --base-url``), streamed and not.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")

from dialects import DIALECTS, QUIRKS, quirk_table
from fake_openai_server import FakeOpenAIServer, chunk, completion, sse
from support import SCENARIO_TABLE

import labkit
from labkit import (
    SCENARIOS,
    Call,
    ChatRequest,
    CountingClient,
    ExecutionScope,
    LiveProfile,
    LiveTransport,
    Message,
    ProviderResponseError,
    RunOutcome,
    RunStatus,
    ScriptedTransport,
    SimpleAgent,
)
from labkit.cli import main
from labkit.core._machinery.sync import run_sync
from labkit.loops.runner import run_agent
from labkit.transports.live import StreamedCalls, normalize_arguments

STREAM = pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])


def _transport(url: str) -> LiveTransport:
    return LiveTransport(LiveProfile(base_url=url, model="m"))


def _one_result_per_call_id(outcome: RunOutcome) -> None:
    """Every call id of every reply has exactly one result before the next model reply."""
    pending: dict[str, int] | None = None
    for message in (*outcome.transcript, Message.user("end")):
        if message.role == "tool":
            assert pending is not None and message.tool_call_id in pending, message
            pending[message.tool_call_id] += 1
            continue
        if pending is not None and outcome.status not in (RunStatus.DEADLINE_EXCEEDED,):
            stopped = message.role == "user" and outcome.status.is_stop
            assert all(n == 1 for n in pending.values()) or stopped, pending
        pending = {c.id: 0 for c in message.tool_calls} if message.tool_calls else None


# -- the conformance suite -----------------------------------------------------------------


def _limits(name: str) -> labkit.Limits:
    limits = SCENARIOS[name].limits
    return limits.with_(deadline_s=0.2) if name == "deadline" else limits


@STREAM
@pytest.mark.parametrize("dialect", list(DIALECTS))
@pytest.mark.parametrize("name", list(SCENARIO_TABLE))
def test_every_dialect_matches_the_scripted_transport(name: str, dialect: str, stream: bool):
    limits = _limits(name)
    scripted = labkit.run(name, stream=stream, limits=limits)
    with FakeOpenAIServer(SCENARIOS[name].script, dialect=DIALECTS[dialect]) as server:
        transport = _transport(server.base_url)
        live = labkit.run(name, stream=stream, limits=limits, transport=transport)
    assert (live.status, live.count("ToolCall"), live.count("ModelCall")) == SCENARIO_TABLE[name]
    assert live.events == scripted.events and live.text == scripted.text
    assert [m.text for m in live.transcript if m.role == "tool"] == [
        m.text for m in scripted.transcript if m.role == "tool"
    ]
    _one_result_per_call_id(live)


PARALLEL = [[Call("read_ticket", {"input": 42}), Call("read_ticket", {"input": 7})], "Review finished."]


@STREAM
@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_two_calls_in_one_reply_in_every_dialect(dialect: str, stream: bool):
    scripted = labkit.run("complete", stream=stream, transport=ScriptedTransport(PARALLEL))
    with FakeOpenAIServer(PARALLEL, dialect=DIALECTS[dialect]) as server:
        live = labkit.run("complete", stream=stream, transport=_transport(server.base_url))
    assert (live.status, live.count("ToolCall"), live.count("ModelCall")) == (RunStatus.INCOMPLETE, 2, 2)
    assert live.events == scripted.events
    assert [m.text for m in live.transcript if m.role == "tool"] == [
        m.text for m in scripted.transcript if m.role == "tool"
    ]
    _one_result_per_call_id(live)


def test_history_sent_back_is_accepted_by_every_dialect():
    """What labkit sends back: content "" (never null) beside tool calls, JSON-object arguments."""
    with FakeOpenAIServer(SCENARIOS["complete"].script, dialect=DIALECTS["llama-cpp-python"]) as server:
        labkit.run("complete", transport=_transport(server.base_url))
        last = server.requests[-1]
    assistants = [m for m in last["messages"] if m["role"] == "assistant"]
    assert assistants and all(m["content"] == "" for m in assistants)
    for message in assistants:
        for call in message["tool_calls"]:
            assert isinstance(json.loads(call["function"]["arguments"]), dict)


def test_the_request_says_tool_choice_auto():
    with FakeOpenAIServer(["Review finished."]) as server:
        labkit.run("incomplete", transport=_transport(server.base_url))
        body = server.requests[0]
    assert body["tool_choice"] == "auto" and body["tools"]


def test_the_docs_table_is_generated_from_the_fixtures():
    docs = (Path(__file__).parent.parent / "docs" / "live.md").read_text(encoding="utf-8")
    assert quirk_table() in docs, "regenerate the table in docs/live.md: python -c 'import dialects; ...'"
    for quirk in QUIRKS:
        name = quirk.test.split("::")[-1]
        here = quirk.test.startswith(name)
        module = globals() if here else {}
        assert not here or name in module, f"{quirk.name}: no test {name}"


# -- failing inputs: a small wire script answering request 1, then "Review finished." ----------

FINISHED = completion({"content": "Review finished."})
FINISHED_STREAM = sse([chunk({"role": "assistant", "content": "Review finished."}), chunk({}, "stop"), "[DONE]"])


def _first_then_text(stream_events: list[Any] | bytes, message: dict[str, Any], finish: str | None) -> Callable:
    """A reply function: request 1 gets the fixture (streamed or not), later ones get text."""
    seen = {"n": 0}

    def reply(body: dict[str, Any]):
        seen["n"] += 1
        if body.get("stream"):
            if seen["n"] == 1:
                data = stream_events if isinstance(stream_events, bytes) else sse(stream_events)
                return 200, data, "text/event-stream"
            return 200, FINISHED_STREAM, "text/event-stream"
        return (200, completion(message, finish)) if seen["n"] == 1 else (200, FINISHED)

    return reply


def _both_ways(reply_factory: Callable[[], Callable], stream: bool, scenario: str = "complete", **run: Any):
    """Run the fixture through the Python API and through the console; return (outcome, console json, requests)."""
    with FakeOpenAIServer(reply=reply_factory()) as server:
        outcome = labkit.run(scenario, stream=stream, transport=_transport(server.base_url), **run)
        requests = list(server.requests)
    with FakeOpenAIServer(reply=reply_factory()) as server:
        argv = ["run", scenario, "--live", "--base-url", server.base_url, "--json"] + (["--stream"] if stream else [])
        import contextlib
        import io

        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(argv)
    data = json.loads(out.getvalue())
    assert data["status"] == outcome.status.value and code == outcome.exit_code
    assert [e["kind"] for e in data["events"]] == [e.kind for e in outcome.events]
    return outcome, data, requests


SHARED_INDEX = [
    chunk({"role": "assistant", "content": None}),
    chunk(
        {
            "tool_calls": [
                {"index": 0, "id": "call_a", "type": "function", "function": {"name": "read_ticket", "arguments": ""}}
            ]
        }
    ),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"input": 42}'}}]}),
    chunk(
        {
            "tool_calls": [
                {"index": 0, "id": "call_b", "type": "function", "function": {"name": "read_ticket", "arguments": ""}}
            ]
        }
    ),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"input": 7}'}}]}),
    chunk({}, "tool_calls"),
    "[DONE]",
]
SHARED_INDEX_MESSAGE = {
    "content": None,
    "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "read_ticket", "arguments": '{"input": 42}'}},
        {"id": "call_b", "type": "function", "function": {"name": "read_ticket", "arguments": '{"input": 7}'}},
    ],
}


@STREAM
def test_two_calls_sharing_index_0(stream: bool):
    outcome, data, requests = _both_ways(
        lambda: _first_then_text(SHARED_INDEX, SHARED_INDEX_MESSAGE, "tool_calls"), stream
    )
    reply = outcome.transcript[2]
    assert [(c.id, c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("call_a", "read_ticket", {"input": 42}),
        ("call_b", "read_ticket", {"input": 7}),
    ]
    results = [m for m in outcome.transcript if m.role == "tool"]
    assert [m.tool_call_id for m in results] == ["call_a", "call_b"]
    assert outcome.count("ToolCall") == 2 and outcome.status is RunStatus.INCOMPLETE
    sent = requests[1]["messages"][2]["tool_calls"]
    assert [c["function"]["name"] for c in sent] == ["read_ticket", "read_ticket"]  # no invented call goes back


OBJECT_ARGUMENTS = [
    chunk(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "read_ticket", "arguments": {"input": 42}},
                }
            ]
        }
    ),
    chunk({}, "tool_calls"),
    "[DONE]",
]


@STREAM
def test_arguments_as_an_object_are_accepted_on_both_paths(stream: bool):
    message = {
        "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "read_ticket", "arguments": {"input": 42}}}
        ]
    }
    outcome, data, _ = _both_ways(lambda: _first_then_text(OBJECT_ARGUMENTS, message, "tool_calls"), stream)
    assert outcome.count("ToolCall") == 1 and data["status"] == "Incomplete"
    assert json.loads(outcome.transcript[2].tool_calls[0].arguments) == {"input": 42}


ARGUMENT_TABLE = [
    ("absent", ..., "{}"),
    ("null", None, "{}"),
    ("empty", "", "{}"),
    ("null text", "null", "{}"),
    ("object", {"input": 42}, '{"input": 42}'),
    ("text", '{"input": 42}', '{"input": 42}'),
    ("spaced text", '{\n\n"input"\n\n:\n\n42\n\n}', '{\n\n"input"\n\n:\n\n42\n\n}'),
    ("trailing space", '{"input": 42} ', '{"input": 42} '),
]


def _function(value: Any) -> dict[str, Any]:
    return {"name": "ping"} if value is ... else {"name": "ping", "arguments": value}


@pytest.mark.parametrize(("label", "value", "expected"), ARGUMENT_TABLE, ids=[row[0] for row in ARGUMENT_TABLE])
def test_the_argument_table_is_read_alike_streamed_or_not(label: str, value: Any, expected: str):
    assert normalize_arguments(None if value is ... else value) == expected
    streamed = [
        chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": _function(value)}]}),
        chunk({}, "tool_calls"),
        "[DONE]",
    ]
    message = {"tool_calls": [{"id": "c1", "type": "function", "function": _function(value)}]}
    got = {}
    for stream in (False, True):
        with FakeOpenAIServer(reply=_first_then_text(streamed, message, "tool_calls")) as server:
            got[stream] = _reply_calls(_transport(server.base_url), stream)
    assert got[False] == got[True] == [("c1", "ping", expected)]


def _reply_calls(transport: LiveTransport, stream: bool) -> list[tuple[str, str, str]]:
    async def go():
        request = ChatRequest(messages=(Message.user("hi"),), stream=stream)
        return [c async for c in transport.send(request)]

    chunks = run_sync(go())
    return [(c.id, c.name, c.arguments) for ch in chunks for c in ch.tool_calls]


@STREAM
@pytest.mark.parametrize("value", [..., None], ids=["absent", "null"])
def test_a_tool_without_parameters_runs_once_on_both_paths(value: Any, stream: bool):
    """Through the Python API with an agent: a null or absent argument object binds as {}."""
    streamed = [
        chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": _function(value)}]}),
        chunk({}, "tool_calls"),
        "[DONE]",
    ]
    message = {"tool_calls": [{"id": "c1", "type": "function", "function": _function(value)}]}
    ran = []

    def _ping() -> str:
        ran.append(1)
        return "pong"

    with FakeOpenAIServer(reply=_first_then_text(streamed, message, "tool_calls")) as server:
        scope = ExecutionScope(labkit.Limits(), {"net.ping"})
        tool = scope.tool("ping", "net.ping", _ping, description="answers pong")
        agent = SimpleAgent(
            CountingClient(_transport(server.base_url), scope), [tool], instructions="ping", stream=stream
        )
        outcome = run_sync(run_agent(agent, "ping", is_complete=lambda: bool(ran)))
    assert ran == [1] and outcome.status is RunStatus.COMPLETED
    assert [m.text for m in outcome.transcript if m.role == "tool"] == ["pong"]


CUT_AT_CAP = [
    chunk(
        {
            "tool_calls": [
                {"index": 0, "id": "call_a", "type": "function", "function": {"name": "read_ticket", "arguments": ""}}
            ]
        }
    ),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"inp'}}]}),
    chunk({}, "length"),
    "[DONE]",
]


@STREAM
@pytest.mark.parametrize("arguments", ["", '{"inp'], ids=["empty", "partial"])
def test_a_reply_cut_at_the_cap_runs_nothing(arguments: str, stream: bool):
    events = CUT_AT_CAP if arguments else [CUT_AT_CAP[0], CUT_AT_CAP[2], CUT_AT_CAP[3]]
    message = {
        "content": "",
        "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "read_ticket", "arguments": arguments}}
        ],
    }
    outcome, data, requests = _both_ways(lambda: _first_then_text(events, message, "length"), stream)
    assert [e.kind for e in outcome.events] == ["ModelCall", "ModelCall"]  # no Middleware, no ToolCall
    assert outcome.status is RunStatus.INCOMPLETE  # the loop went on and the model answered
    results = [m for m in outcome.transcript if m.role == "tool"]
    assert [m.tool_call_id for m in results] == ["call_a"]
    assert "cut at the output-token cap" in results[0].text
    sent = requests[1]["messages"][2]
    assert sent["content"] == "" and sent["tool_calls"][0]["function"]["arguments"] == "{}"  # what every server accepts


TEXT_THEN_CALL = [
    chunk({"content": "Review finished."}),
    chunk(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "finish_review", "arguments": '{"input": 42}'},
                }
            ]
        }
    ),
]


@pytest.mark.parametrize(
    ("events", "framing"),
    [
        (TEXT_THEN_CALL + ["[DONE]"], "length"),  # no finish reason
        (TEXT_THEN_CALL + [chunk({}, "tool_calls")], "length"),  # no [DONE]
        (TEXT_THEN_CALL + [chunk({}, "tool_calls")], "close"),
        (TEXT_THEN_CALL + [chunk({}, "tool_calls")], "chunked"),
        (TEXT_THEN_CALL + [chunk({}, "tool_calls")], "cut-length"),  # closed before the announced length
        (TEXT_THEN_CALL + [chunk({}, "tool_calls")], "cut-chunked"),  # closed before the last chunk
        ([], "chunked"),  # llama-cpp-python when its generator fails after the 200: no event at all
    ],
    ids=[
        "no-finish-reason",
        "no-done",
        "no-done-closed",
        "no-done-chunked",
        "cut-mid-body",
        "cut-mid-chunk",
        "no-event",
    ],
)
def test_a_stream_cut_short_is_one_status(events: list[Any], framing: str):
    def factory():
        return lambda body: (200, sse(events), "text/event-stream", framing)

    outcome, data, _ = _both_ways(factory, True)
    assert outcome.status is RunStatus.PROVIDER_UNAVAILABLE and data["exit_code"] == 2
    assert outcome.text is None and outcome.count("ToolCall") == 0  # partial text not an answer, partial call not run
    assert [e.kind for e in outcome.events] == ["ModelCall", "ProviderUnavailable"]
    assert "cut short" in data["hint"] or "mid-answer" in data["hint"]


@pytest.mark.parametrize(
    "pieces",
    [
        [  # no ids, one index, two names
            {"index": 0, "function": {"name": "read_ticket", "arguments": '{"input": 42}'}},
            {"index": 0, "function": {"name": "finish_review", "arguments": '{"input": 42}'}},
        ],
        [  # no ids, one index, more arguments after whole ones
            {"index": 0, "function": {"name": "read_ticket", "arguments": '{"input": 42}'}},
            {"index": 0, "function": {"name": "read_ticket", "arguments": '{"input": 7}'}},
        ],
        [  # an object, then string fragments
            {"index": 0, "id": "a", "function": {"name": "read_ticket", "arguments": {"input": 42}}},
            {"index": 0, "function": {"arguments": '{"input"'}},
        ],
    ],
    ids=["two-names", "arguments-after-whole", "object-then-text"],
)
def test_an_ambiguous_stream_is_refused(pieces: list[dict[str, Any]], capsys):
    events = [chunk({"tool_calls": [p]}) for p in pieces] + [chunk({}, "tool_calls"), "[DONE]"]
    with FakeOpenAIServer(reply=lambda body: (200, sse(events), "text/event-stream")) as server:
        with pytest.raises(ProviderResponseError, match="ambiguous tool calls"):
            labkit.run("complete", stream=True, transport=_transport(server.base_url))
        code = main(["run", "complete", "--live", "--stream", "--base-url", server.base_url])
    err = capsys.readouterr().err
    assert code == 76 and "ambiguous tool calls" in err and err.count("\n") == 1


def test_several_calls_per_chunk_and_interleaved():
    calls = StreamedCalls("http://x/v1/chat/completions")
    calls.add({"index": 0, "id": "a", "function": {"name": "read_ticket", "arguments": ""}})
    calls.add({"index": 1, "id": "b", "function": {"name": "finish_review", "arguments": '{"in'}})
    calls.add({"index": 0, "function": {"arguments": '{"input"'}})
    calls.add({"index": 1, "function": {"arguments": 'put": 42}'}})
    calls.add({"index": 0, "function": {"arguments": ": 7}"}})
    assert [(c.id, c.name, c.arguments) for c in calls.calls()] == [
        ("a", "read_ticket", '{"input": 7}'),
        ("b", "finish_review", '{"input": 42}'),
    ]
    events = [
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "a",
                        "type": "function",
                        "function": {"name": "read_ticket", "arguments": '{"input": 42}'},
                    },
                    {
                        "index": 1,
                        "id": "b",
                        "type": "function",
                        "function": {"name": "read_ticket", "arguments": '{"input": 7}'},
                    },
                ]
            }
        ),
        chunk({}, "tool_calls"),
        "[DONE]",
    ]
    outcome, _, _ = _both_ways(lambda: _first_then_text(events, SHARED_INDEX_MESSAGE, "tool_calls"), True)
    assert outcome.count("ToolCall") == 2 and [m.tool_call_id for m in outcome.transcript if m.role == "tool"] == [
        "a",
        "b",
    ]


def test_ids_repeated_in_every_delta_are_set_once():
    """llama-cpp-python's shape: the name is not joined into read_ticketread_ticket."""
    calls = StreamedCalls("http://x/v1/chat/completions")
    for piece in ('{"input"', ": 42", "} "):
        calls.add(
            {
                "index": 0,
                "id": "call__0_read_ticket_cmpl-1",
                "type": "function",
                "function": {"name": "read_ticket", "arguments": piece},
            }
        )
    assert [(c.name, c.arguments) for c in calls.calls()] == [("read_ticket", '{"input": 42} ')]


@STREAM
def test_a_model_asking_for_an_unknown_tool_is_visible(stream: bool, capsys):
    script = lambda n, request: Call("read_tickets", {"input": 42})  # noqa: E731 - a model that never learns
    with FakeOpenAIServer(script) as server:
        outcome = labkit.run("complete", stream=stream, transport=_transport(server.base_url))
        code = main(["run", "complete", "--live", "--base-url", server.base_url] + (["--stream"] if stream else []))
    assert outcome.status is RunStatus.MODEL_BUDGET and outcome.count("ModelCall") == 6
    assert [c.name for c in outcome.unknown_tool_requests] == ["read_tickets"] * 6
    out = capsys.readouterr().out
    assert code == 2 and out.count("unknown tool requested: 'read_tickets'") == 6


def test_the_requests_table_shows_each_unknown_tool_request():
    pytest.importorskip("pandas")
    from labkit.teaching.frames import requests_frame

    script = [Call("read_tickets", {"input": 42}), Call("read_ticket", {"input": 42}), "Review finished."]
    with FakeOpenAIServer(script) as server:
        outcome = labkit.run("complete", transport=_transport(server.base_url))
    frame = requests_frame(outcome)
    assert list(frame["tool"]) == ["read_tickets", "read_ticket"]
    assert list(frame["answer"]) == ["unknown tool", "result"]
    assert list(frame["reply"]) == [1, 2]
    assert "42" not in frame.to_csv()  # never the arguments


@STREAM
@pytest.mark.parametrize("value", [..., None], ids=["absent", "null"])
def test_null_or_absent_arguments_bind_as_no_arguments_through_the_console(value: Any, stream: bool):
    """read_ticket needs `input`: both paths bind {} (not the text "null") and say what is missing."""
    function = {"name": "read_ticket"} if value is ... else {"name": "read_ticket", "arguments": value}
    streamed = [
        chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": function}]}),
        chunk({}, "tool_calls"),
        "[DONE]",
    ]
    message = {"tool_calls": [{"id": "c1", "type": "function", "function": function}]}
    outcome, data, _ = _both_ways(lambda: _first_then_text(streamed, message, "tool_calls"), stream)
    assert outcome.transcript[2].tool_calls[0].arguments == "{}"
    result = next(m.text for m in outcome.transcript if m.role == "tool")
    assert result.startswith("error: arguments for 'read_ticket' do not bind") and "input" in result
    assert data["status"] == "Incomplete" and outcome.count("ToolCall") == 0
