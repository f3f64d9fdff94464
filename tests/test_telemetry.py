"""OpenTelemetry spans by composition: names, nesting, attributes, and no arguments or content in them."""

from __future__ import annotations

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import labkit
from labkit import SCENARIOS, Call, CountingClient, ExecutionScope, Limits, ScriptedTransport, SimpleAgent
from labkit.loops.telemetry import TracingTransport, instrument, tool_span_middleware, traced_run

SECRET = "sk-labkit-5ecret-argument-0042"


@pytest.fixture
def tracing():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider.get_tracer("labkit-test"), exporter
    provider.shutdown()


def _by_start(exporter):
    return sorted(exporter.get_finished_spans(), key=lambda s: s.start_time)


def _limits(name):
    return SCENARIOS[name].limits.with_(deadline_s=0.05) if name == "deadline" else None


def test_complete_makes_a_run_span_with_model_and_tool_spans_under_it(tracing):
    tracer, exporter = tracing
    setup = instrument(labkit.prepare("complete"), tracer=tracer)
    outcome = labkit.run(setup)
    spans = _by_start(exporter)

    assert [s.name for s in spans] == [
        "invoke_agent BoundedReviewer",
        "chat scripted",
        "execute_tool read_ticket",
        "chat scripted",
        "execute_tool finish_review",
        "chat scripted",
    ]
    run, children = spans[0], spans[1:]
    assert run.parent is None and run.kind is SpanKind.INTERNAL
    assert all(s.parent.span_id == run.context.span_id for s in children)
    assert all(s.context.trace_id == run.context.trace_id for s in children)

    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["gen_ai.agent.name"] == "BoundedReviewer"
    assert run.attributes["labkit.status"] == outcome.status.value == "Completed"
    assert run.attributes["labkit.model_calls"] == outcome.count("ModelCall") == 3
    assert run.attributes["labkit.tool_calls"] == outcome.count("ToolCall") == 2
    assert run.attributes["labkit.scenario"] == "complete"
    assert run.status.status_code is StatusCode.OK

    chats = [s for s in children if s.name.startswith("chat")]
    assert [s.attributes["labkit.model_call"] for s in chats] == [1, 2, 3]
    assert all(s.kind is SpanKind.CLIENT and s.attributes["gen_ai.operation.name"] == "chat" for s in chats)
    assert all(s.attributes["gen_ai.request.model"] == "scripted" for s in chats)
    assert [s.attributes["gen_ai.response.finish_reasons"] for s in chats] == [
        ("tool_calls",),
        ("tool_calls",),
        ("stop",),
    ]

    tools = [s for s in children if s.name.startswith("execute_tool")]
    call_ids = [c.id for m in outcome.transcript for c in m.tool_calls]
    assert [s.attributes["gen_ai.tool.call.id"] for s in tools] == call_ids
    assert [s.attributes["gen_ai.tool.name"] for s in tools] == ["read_ticket", "finish_review"]
    assert [s.attributes["labkit.tool.outcome"] for s in tools] == ["ok", "ok"]
    assert [s.attributes["labkit.tool_calls"] for s in tools] == [1, 2]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_spans_agree_with_the_events_in_every_scenario(tracing, name, stream):
    tracer, exporter = tracing
    traced = labkit.run(instrument(labkit.prepare(name, stream=stream, limits=_limits(name)), tracer=tracer))
    plain = labkit.run(name, stream=stream, limits=_limits(name))
    spans = exporter.get_finished_spans()

    assert traced.events == plain.events  # spans observe; they change nothing
    chats = [s for s in spans if s.attributes["gen_ai.operation.name"] == "chat"]
    tools = [s for s in spans if s.attributes["gen_ai.operation.name"] == "execute_tool"]
    (run,) = [s for s in spans if s.attributes["gen_ai.operation.name"] == "invoke_agent"]
    assert len(chats) == traced.count("ModelCall")  # a budget-refused call never reaches the transport
    assert len(tools) == traced.count("Middleware")
    assert sum(s.attributes["labkit.tool.outcome"] in ("ok", "error") for s in tools) == traced.count("ToolCall")
    assert run.attributes["labkit.status"] == traced.status.value
    if traced.status.is_stop:
        assert run.attributes["error.type"] == traced.status.value
        assert run.status.status_code is StatusCode.ERROR


def test_a_refused_tool_call_has_a_refused_span(tracing):
    tracer, exporter = tracing
    labkit.run(instrument(labkit.prepare("forbidden"), tracer=tracer))
    (tool,) = [s for s in exporter.get_finished_spans() if s.name == "execute_tool read_ticket"]
    assert tool.attributes["labkit.tool.outcome"] == "refused"
    assert tool.attributes["labkit.stop_reason"] == "PermissionDenied"
    assert tool.attributes["labkit.tool.granted"] is False
    assert tool.attributes["labkit.tool_calls"] == 0
    assert tool.status.status_code is StatusCode.ERROR


def test_a_deadline_marks_the_cut_model_call_cancelled(tracing):
    tracer, exporter = tracing
    labkit.run(instrument(labkit.prepare("deadline", limits=Limits(deadline_s=0.05)), tracer=tracer))
    (chat,) = [s for s in exporter.get_finished_spans() if s.name.startswith("chat")]
    assert chat.attributes["error.type"] == "cancelled"


def _everything_in(spans) -> str:
    parts = []
    for span in spans:
        parts += [span.name, str(span.status.description), repr(dict(span.attributes or {}))]
        parts += [repr((e.name, dict(e.attributes or {}))) for e in span.events]
        parts += [repr(dict(link.attributes or {})) for link in span.links]
        parts.append(repr(dict(span.resource.attributes)))
    return "\n".join(parts)


def test_no_argument_or_content_reaches_any_span(tracing):
    tracer, exporter = tracing
    scope = ExecutionScope(Limits(), {"vault.read"})

    async def lookup(token: str) -> str:
        """Look a token up."""
        raise ValueError(f"token {token} is unknown")  # a body that quotes its argument

    tool = scope.tool("lookup", "vault.read", lookup)
    script = [
        Call("lookup", {"token": SECRET}),
        Call("lookup", {"token": SECRET + "-2", "extra": SECRET}),
        f"I used {SECRET}.",
    ]
    client = CountingClient(TracingTransport(ScriptedTransport(script), scope=scope, tracer=tracer), scope)
    agent = SimpleAgent(
        client,
        [tool],
        instructions=f"The secret is {SECRET}.",
        middleware=(tool_span_middleware(tracer), labkit.observe_middleware),
    )
    outcome = labkit.run_sync(traced_run(agent, f"Use {SECRET}.", is_complete=lambda: False, tracer=tracer))

    assert outcome.status is labkit.RunStatus.INCOMPLETE
    assert any(SECRET in (m.text or "") for m in outcome.transcript)  # the secret really went through the run
    spans = exporter.get_finished_spans()
    outcomes = sorted(s.attributes["labkit.tool.outcome"] for s in spans if s.name == "execute_tool lookup")
    assert outcomes == ["error", "error"]  # a body error, then a binding error: both spans, no messages
    assert SECRET not in _everything_in(spans)


def test_live_spans_name_the_model_and_never_the_key(tracing, monkeypatch):
    pytest.importorskip("openai")
    from fake_openai_server import FakeOpenAIServer

    tracer, exporter = tracing
    monkeypatch.setenv("LABKIT_TEST_KEY", SECRET)
    with FakeOpenAIServer(SCENARIOS["complete"].script, api_key=SECRET) as server:
        profile = labkit.LiveProfile(base_url=server.base_url, model="fake-model", api_key_env="LABKIT_TEST_KEY")
        setup = instrument(labkit.prepare("complete", transport=labkit.LiveTransport(profile)), tracer=tracer)
        outcome = labkit.run(setup)
    spans = exporter.get_finished_spans()
    assert outcome.status is labkit.RunStatus.COMPLETED
    assert sorted({s.name for s in spans if s.name.startswith("chat")}) == ["chat fake-model"]
    assert {s.attributes["gen_ai.provider.name"] for s in spans if "gen_ai.provider.name" in s.attributes} == {
        "openai_compatible"
    }
    assert SECRET not in _everything_in(spans)


def test_instrument_keeps_the_setup_and_its_header(tracing):
    tracer, _ = tracing
    setup = labkit.prepare("repeat", agent="simple")
    traced = instrument(setup, tracer=tracer)
    assert traced.scope is setup.scope and traced.task is setup.task
    assert traced.agent.kind == "simple" and traced.agent.tools == setup.agent.tools
    assert traced.header() == setup.header()


@pytest.mark.parametrize("agent", ["simple", "harness"])
def test_instrument_keeps_every_loop_setting_of_the_agent(tracing, agent):
    tracer, _ = tracing
    setup = labkit.prepare("repeat", agent=agent, stream=True, concurrent_tool_calls=True)
    old, new = setup.agent, instrument(setup, tracer=tracer).agent
    settings = ("instructions", "max_iterations", "stream", "max_output_tokens", "name", "concurrent_tool_calls")
    assert {k: getattr(new, k) for k in settings} == {k: getattr(old, k) for k in settings}
    assert new.concurrent_tool_calls is True  # was dropped: a traced harness ran one reply's calls one by one
    assert new.middleware[1:] == old.middleware and len(new.middleware) == len(old.middleware) + 1
    assert getattr(new, "capabilities", None) == getattr(old, "capabilities", None)


def test_spans_frame_is_one_row_per_span_without_random_ids():
    pytest.importorskip("pandas")
    from labkit.teaching.spans import SPAN_COLUMNS, run_traced

    outcome, frame = run_traced("repeat")
    assert list(frame.columns) == SPAN_COLUMNS
    assert list(frame["operation"]) == ["invoke_agent", "chat", "execute_tool", "chat", "execute_tool"]
    assert list(frame["outcome"]) == [outcome.status.value, "ok", "ok", "ok", "refused"]
    assert frame.loc[1, "parent"] == "" and set(frame["parent"][1:]) == {"invoke_agent BoundedReviewer"}
    assert frame.loc[1, "model calls"] == outcome.count("ModelCall")
    _, timed = run_traced("incomplete", timings=True)
    assert {"start ms", "duration ms"} <= set(timed.columns) and (timed["duration ms"] >= 0).all()


_GLOBAL_PROVIDER_RUN = """
import json
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
import labkit
from labkit.cli import main

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))

def names():
    spans = sorted(exporter.get_finished_spans(), key=lambda s: s.start_time)
    exporter.clear()
    return [s.name for s in spans]

seen = {}
labkit.run("complete")
seen["before a provider is set"] = names()
trace.set_tracer_provider(provider)  # as `opentelemetry-instrument` or an application's set-up does
seen["setup type"] = type(labkit.prepare("complete")).__name__
for agent in ("harness", "simple"):
    labkit.run("complete", agent=agent)
    seen[agent] = names()
main(["run", "complete", "--json"])
seen["console"] = names()
from labkit.teaching.spans import run_traced  # an explicit tracer replaces the global one: no span twice
outcome, frame = run_traced("complete")
seen["run_traced rows"] = len(frame)
seen["global during run_traced"] = names()
print(json.dumps(seen))
"""


def test_telemetry_on_means_the_harness_run_makes_spans_once_a_tracer_provider_is_set() -> None:
    """The harness header's ``telemetry=on``: spans for every harness run while a global provider is set."""
    import json
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", _GLOBAL_PROVIDER_RUN], capture_output=True, text=True, timeout=60, check=True
    )
    seen = json.loads(proc.stdout.splitlines()[-1])
    harness = [
        "invoke_agent BoundedReviewer",
        "chat scripted",
        "execute_tool read_ticket",
        "chat scripted",
        "execute_tool finish_review",
        "chat scripted",
    ]
    assert seen == {
        "before a provider is set": [],
        "setup type": "TracedSetup",
        "harness": harness,
        "simple": [],  # the simple agent composes nothing: a plain loop
        "console": harness,
        "run_traced rows": len(harness),
        "global during run_traced": [],
    }


def test_without_a_tracer_provider_prepare_adds_nothing() -> None:
    from opentelemetry import trace

    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)  # this process never set one
    assert type(labkit.prepare("complete")) is labkit.Setup
