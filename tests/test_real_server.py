"""Every scenario ``--live`` against two real servers: llama.cpp's ``llama-server`` and llama-cpp-python's.

Nothing here is a fake: the servers are built from source by
``make real-server`` (once, cached outside the repository) and serve a tiny
random-weights model the test writes (``tests/tiny_gguf.py``), which asks for
``read_ticket`` with 42. Without the build, the tests skip and say how to
build it.

For each server and scenario, streamed and not, through the console
(``labkit run SCENARIO --live --base-url URL --json``): the outcome is a
defined status, its counts are exact (``ModelCall`` events = requests the
transport sent, ``ToolCall`` events = admitted attempts), every requested
call id has one result, and the streamed and non-streamed runs agree. On
``llama-server``, ``forbidden`` ends ``PermissionDenied``; and the run's
deadline holds while the server is busy with another client.

A second model, the reviewer (``tests/tiny_gguf.py --reviewer``, weights set by
hand), follows the conversation: on ``llama-server`` it reads ticket 42,
finishes the review and answers, so ``complete`` ends ``Completed`` (exit 0),
plain and streamed; appendix A's notebook is run against it too.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("openai")

from real_servers import RunningServer, find_build, start, write_model

import labkit
from labkit import SCENARIOS, LiveProfile, LiveTransport, RunStatus
from labkit.cli import main

pytestmark = pytest.mark.real_server

BUILD = find_build()
if BUILD is None:
    pytest.skip(
        "the real servers are not built: run `make real-server` once (10 to 30 minutes on 2 cores; cached outside the "
        "repository)",
        allow_module_level=True,
    )

SERVERS = ["llama-server", "llama-cpp-python"]
END_TOKENS = (267, 269)  # <|endoftext|> and <|im_end|> in tests/tiny_gguf.py's vocabulary
# `deadline` is timing by nature, and its own test below makes the server busy on purpose.
AGREE = [name for name in SCENARIOS if name != "deadline"]


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_model(BUILD, tmp_path_factory.mktemp("model") / "tiny.gguf")


@pytest.fixture(scope="module", params=SERVERS)
def server(
    request: pytest.FixtureRequest, model: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    running = start(request.param, BUILD, model, tmp_path_factory.mktemp(request.param))
    try:
        yield running
    finally:
        running.stop()


def _console(name: str, base_url: str, stream: bool) -> tuple[int, dict]:
    argv = ["run", name, "--live", "--base-url", base_url, "--model", "tiny", "--json"] + (
        ["--stream"] if stream else []
    )
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    return code, json.loads(out.getvalue())


def _check_one_result_per_call_id(outcome: labkit.RunOutcome) -> None:
    results = [m.tool_call_id for m in outcome.transcript if m.role == "tool"]
    requested = [c.id for m in outcome.transcript if m.role == "assistant" for c in m.tool_calls]
    stopped_mid_batch = outcome.status.is_stop
    if not stopped_mid_batch:
        assert sorted(results) == sorted(requested)
    assert len(results) == len(requested) or stopped_mid_batch
    assert set(results) <= set(requested)


@pytest.mark.parametrize("name", AGREE)
def test_every_scenario_streamed_and_not_agree(server: RunningServer, name: str):
    seen = {}
    for stream in (False, True):
        transport = LiveTransport(LiveProfile(base_url=server.base_url, model="tiny", timeout_s=60))
        outcome = labkit.run(name, transport=transport, stream=stream)
        assert outcome.status in set(RunStatus)
        assert outcome.count("ModelCall") == transport.calls == outcome.usage.model_calls  # one request, one count
        assert outcome.count("ToolCall") == outcome.usage.tool_calls
        assert outcome.usage.model_calls <= outcome.limits.model_calls
        _check_one_result_per_call_id(outcome)
        code, data = _console(name, server.base_url, stream)  # the same run through the console
        assert code == outcome.exit_code and data["status"] == outcome.status.value
        assert [e["kind"] for e in data["events"]] == [e.kind for e in outcome.events]
        seen[stream] = (outcome.status, outcome.count("ToolCall"), outcome.count("ModelCall"))
    assert seen[False] == seen[True], f"{server.name} {name}: non-streamed {seen[False]} vs streamed {seen[True]}"


def test_forbidden_ends_permission_denied_on_llama_server(server: RunningServer):
    if server.name != "llama-server":
        pytest.skip("the tiny model answers llama-cpp-python's format with a message; its calls are tested below")
    for stream in (False, True):
        code, data = _console("forbidden", server.base_url, stream)
        assert (code, data["status"]) == (2, "PermissionDenied")
        assert [e["kind"] for e in data["events"]] == ["ModelCall", "Middleware", "PermissionDenied"]


def test_the_deadline_holds_against_a_busy_server(server: RunningServer):
    """One slot (-np 1), held by another client's long generation: the run still ends at its deadline.

    The last test on each server: the other client's generation outlives it.
    """
    body = json.dumps(
        {
            "model": "tiny",
            "prompt": "talk",
            "max_tokens": 12000,  # longer than the test: the server is killed at teardown
            "stream": True,
            "ignore_eos": True,  # llama-server
            "logit_bias": {str(token): -100 for token in END_TOKENS},  # both servers
        }
    ).encode()
    busy = urllib.request.Request(f"{server.base_url}/completions", body, {"Content-Type": "application/json"})
    generating = threading.Event()

    def hold_the_slot() -> None:
        with contextlib.suppress(Exception), urllib.request.urlopen(busy, timeout=120) as answer:
            for line in answer:
                if line.startswith(b"data: {"):
                    generating.set()  # the other client's generation has started: the slot is taken

    holder = threading.Thread(target=hold_the_slot, daemon=True)
    holder.start()
    assert generating.wait(timeout=60), "the other client's generation did not start"
    transport = LiveTransport(LiveProfile(base_url=server.base_url, model="tiny", timeout_s=60))
    limits = SCENARIOS["deadline"].limits.with_(deadline_s=0.5)
    outcome = labkit.run("complete", transport=transport, limits=limits, stream=True)
    assert outcome.status is RunStatus.DEADLINE_EXCEEDED
    assert [e.kind for e in outcome.events] == ["ModelCall", "DeadlineExceeded"]


# -- llama-cpp-python with a model that asks for tools in its format ------------------------


@pytest.fixture(scope="module")
def calling_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    model = write_model(BUILD, tmp_path_factory.mktemp("calls") / "tiny-calls.gguf", calls=True)
    running = start("llama-cpp-python", BUILD, model, tmp_path_factory.mktemp("llama-cpp-python-calls"))
    try:
        yield running
    finally:
        running.stop()


def _post(base_url: str, body: dict) -> tuple[str, bytes]:
    request = urllib.request.Request(
        f"{base_url}/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        return answer.headers.get("Content-Type", ""), answer.read()


def test_llama_cpp_python_streamed_calls_as_recorded_are_read_like_the_whole_reply(calling_server: RunningServer):
    """Its forced-tool stream repeats id and name in every delta; labkit joins it into the same call."""
    from fake_openai_server import FakeOpenAIServer

    setup = labkit.prepare("complete")
    tools = [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.json_schema()}}
        for t in setup.agent.tools
    ]
    body = {
        "model": "tiny",
        "messages": [{"role": "user", "content": "Please review ticket 42."}],
        "tools": tools,
        "tool_choice": {"type": "function", "function": {"name": "read_ticket"}},
    }
    recorded = {stream: _post(calling_server.base_url, {**body, "stream": stream}) for stream in (False, True)}
    deltas = [
        json.loads(line[6:])["choices"][0]["delta"].get("tool_calls") or []
        for line in recorded[True][1].decode().splitlines()
        if line.startswith("data: {")
    ]
    pieces = [p for d in deltas for p in d]
    assert len(pieces) > 1 and all(p.get("id") and p.get("function", {}).get("name") for p in pieces)  # the quirk

    def replay(body: dict):
        kind, data = recorded[bool(body.get("stream"))]
        return 200, data, kind

    calls = {}
    for stream in (False, True):
        with FakeOpenAIServer(reply=replay) as server:
            transport = LiveTransport(LiveProfile(base_url=server.base_url, model="tiny"))
            outcome = labkit.run("forbidden", transport=transport, stream=stream)
        assert outcome.status is RunStatus.PERMISSION_DENIED  # read_ticket reached the guard
        calls[stream] = [(c.id, c.name, json.loads(c.arguments)) for c in outcome.transcript[2].tool_calls]
    assert [c[1:] for c in calls[True]] == [c[1:] for c in calls[False]]  # ids differ per request (a uuid)
    assert [name for _, name, _ in calls[True]] == ["read_ticket"]
    assert calls[True][0][0] == pieces[0]["id"]  # the id, set once, not joined


def test_llama_cpp_python_cannot_stream_an_automatic_tool_call(calling_server: RunningServer):
    """It fails after sending 200 (an event stream with no event): labkit says the reply was cut short."""
    transport = LiveTransport(LiveProfile(base_url=calling_server.base_url, model="tiny"))
    streamed = labkit.run("complete", transport=transport, stream=True)
    assert streamed.status is RunStatus.PROVIDER_UNAVAILABLE and streamed.count("ToolCall") == 0
    assert "cut short" in str(transport.last_error)
    whole = labkit.run("complete", transport=LiveTransport(LiveProfile(base_url=calling_server.base_url, model="tiny")))
    assert whole.count("ToolCall") >= 1  # the same model's calls run when not streamed
    _check_one_result_per_call_id(whole)


# -- a model that follows the conversation: the full cycle ends Completed on a real server ----
#
# The reviewer (tests/tiny_gguf.py, write_reviewer) has hand-set weights: one attention layer looks
# back for the ticket's text and for finish_review's result among the tool results, so it reads
# ticket 42, then finishes its review, then answers with a sentence. It runs on llama-server (the
# Qwen2.5 template puts tool results in the prompt); llama-cpp-python's function-calling format
# leaves them out of its prompt and has a grammar of its own, so the reviewer is lost there.

REVIEW = ["ModelCall", "Middleware", "ToolCall", "ModelCall", "Middleware", "ToolCall", "ModelCall"]


@pytest.fixture(scope="module")
def reviewer_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    model = write_model(BUILD, tmp_path_factory.mktemp("reviewer") / "tiny-reviewer.gguf", reviewer=True)
    running = start("llama-server", BUILD, model, tmp_path_factory.mktemp("llama-server-reviewer"))
    try:
        yield running
    finally:
        running.stop()


@pytest.mark.parametrize("agent", ["harness", "simple"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_real_server_run_ends_completed(reviewer_server: RunningServer, stream: bool, agent: str):
    """read_ticket(42), finish_review(42), then text: Completed, exit 0, through the console and through labkit.run."""
    argv = ["run", "complete", "--live", "--base-url", reviewer_server.base_url, "--model", "tiny", "--json"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv + (["--stream"] if stream else []) + (["--simple"] if agent == "simple" else []))
    data = json.loads(out.getvalue())
    assert (code, data["status"], data["exit_code"]) == (0, "Completed", 0)
    assert [e["kind"] for e in data["events"]] == REVIEW
    assert [e["name"] for e in data["events"] if e["kind"] == "ToolCall"] == ["read_ticket", "finish_review"]
    assert data["text"] == "Review of ticket 42 finished."

    transport = LiveTransport(LiveProfile(base_url=reviewer_server.base_url, model="tiny", timeout_s=60))
    outcome = labkit.run("complete", agent=agent, transport=transport, stream=stream)
    assert outcome.status is RunStatus.COMPLETED and outcome.exit_code == 0
    assert (outcome.count("ModelCall"), outcome.count("ToolCall"), transport.calls) == (3, 2, 3)
    calls = [
        (c.name, json.loads(c.arguments)) for m in outcome.transcript if m.role == "assistant" for c in m.tool_calls
    ]
    assert calls == [("read_ticket", {"input": 42}), ("finish_review", {"input": 42})]
    results = [m.text for m in outcome.transcript if m.role == "tool"]
    assert results[0].startswith("Ticket 42:") and results[1].startswith("Review finished.")
    assert outcome.text == "Review of ticket 42 finished."
    _check_one_result_per_call_id(outcome)


@pytest.mark.parametrize("name", ["forbidden", "budget"])
def test_the_same_bounds_stop_the_model_that_completes(reviewer_server: RunningServer, name: str):
    """Where a scenario's row depends on its grants and limits, not its script, the real model gives it."""
    from support import SCENARIO_TABLE

    for stream in (False, True):
        code, data = _console(name, reviewer_server.base_url, stream)
        status, tool_calls, model_calls = SCENARIO_TABLE[name]
        kinds = [e["kind"] for e in data["events"]]
        assert (code, data["status"]) == (2, status.value)
        assert (kinds.count("ToolCall"), kinds.count("ModelCall")) == (tool_calls, model_calls)


def test_the_reviewer_follows_the_tool_results_not_the_number_of_calls(reviewer_server: RunningServer):
    """A ticket store that never finds the ticket: no ticket text, so it asks for ticket 42 again (RepeatedCall)."""
    import dataclasses

    from labkit.loops.scenarios import REVIEW_TOOLS

    def read_ticket(state: object, input: int) -> str:
        """Read a support ticket by its id."""
        return "NotFound: the ticket store is empty."

    lost = dataclasses.replace(
        SCENARIOS["complete"],
        name="lost",
        tools=(labkit.Tool("read_ticket", "ticket.read", read_ticket), REVIEW_TOOLS[1]),
    )
    for stream in (False, True):
        transport = LiveTransport(LiveProfile(base_url=reviewer_server.base_url, model="tiny", timeout_s=60))
        outcome = labkit.run(lost, transport=transport, stream=stream)
        assert outcome.status is RunStatus.REPEATED_CALL
        assert [e.kind for e in outcome.events] == [
            "ModelCall",
            "Middleware",
            "ToolCall",
            "ModelCall",
            "Middleware",
            "RepeatedCall",
        ]


def test_appendix_a_runs_live_against_the_reviewer(reviewer_server: RunningServer, monkeypatch: pytest.MonkeyPatch):
    """The learner's walkthrough, run against the real server: its live cells show the completed review."""
    import nbclient
    import nbformat

    notebooks = Path(__file__).resolve().parent.parent / "notebooks"
    nb = nbformat.read(notebooks / "appendix_a_real_model.ipynb", as_version=4)
    monkeypatch.setenv("LABKIT_BASE_URL", reviewer_server.base_url)
    nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(notebooks)}}
    ).execute()
    said = {
        c.id: "".join(o.get("text", "") or o.get("data", {}).get("text/plain", "") for o in c.outputs)
        for c in nb.cells
        if c.cell_type == "code"
    }
    assert (
        said["live-complete"]
        == "Completed (exit 0): 3 model calls, 2 tool calls\ntext: 'Review of ticket 42 finished.'\n"
    )
    assert "read_ticket {" in said["live-transcript"] and "finish_review {" in said["live-transcript"]
    assert said["live-stream"] == (
        "Completed (exit 0): 3 model calls, 2 tool calls; the same events as the other run: yes\n"
    )
    table = said["live-all"]
    for row in ("complete, live", "incomplete, live", "repeat, live", "changing, live"):
        assert re.search(rf"{row}\s+Completed\s+2\s+3\s+0", table), row
    assert re.search(r"forbidden, live\s+PermissionDenied\s+0\s+1\s+2", table)
    assert re.search(r"budget, live\s+ModelBudget\s+1\s+1\s+2", table)
    check = said["same-check"]  # the guesses are checked against these live runs, and the reviewer follows
    assert check.startswith("Compared with the live runs") and check.count("right") == 5, check


def test_the_recorded_live_run_still_says_what_the_server_does(reviewer_server: RunningServer):
    """Appendix A shows labkit/teaching/data/live_complete.json when no server answers: it must be this run."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    import record_live_sample

    from labkit.teaching.recorded import live_complete

    fresh = record_live_sample.record(record_live_sample.live_run(reviewer_server.base_url), "here")
    assert record_live_sample.comparable(fresh) == record_live_sample.comparable(live_complete()), (
        "the recording is stale: run `python scripts/record_live_sample.py` and commit it"
    )
