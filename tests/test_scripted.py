"""The scripted transport (README.md, *The scenarios*): steps, script shapes, hangs and failures."""

from __future__ import annotations

import asyncio
import json

import pytest
from support import asynctest

from labkit import (
    Call,
    ChatRequest,
    CountingClient,
    ExecutionScope,
    Fail,
    Hang,
    Message,
    ProviderUnavailable,
    Reply,
    Say,
    ScriptedTransport,
    ScriptExhausted,
    Transport,
    assemble,
)

REQUEST = ChatRequest(messages=(Message.user("hi"),))
STREAM = REQUEST.model_copy(update={"stream": True})


async def _reply(transport: ScriptedTransport, request: ChatRequest = REQUEST) -> Message:
    return await assemble(transport.send(request))


def test_it_is_a_transport() -> None:
    transport = ScriptedTransport(["x"])
    assert isinstance(transport, Transport)
    assert transport.name == "scripted"


@asynctest
async def test_text_steps_give_text_messages() -> None:
    transport = ScriptedTransport(["plain", Say("said")])
    first, second = await _reply(transport), await _reply(transport)
    assert (first.role, first.text, first.tool_calls) == ("assistant", "plain", ())
    assert (second.text, second.tool_calls) == ("said", ())


@asynctest
async def test_a_call_step_gives_a_tool_call_with_json_text_arguments() -> None:
    transport = ScriptedTransport([Call("read_ticket", {"input": 42}), Call("read_ticket", {"input": 7}, id="mine")])
    first, second = await _reply(transport), await _reply(transport)
    assert first.text is None
    (call,) = first.tool_calls
    assert (call.id, call.name) == ("call-1", "read_ticket")
    assert isinstance(call.arguments, str)
    assert json.loads(call.arguments) == {"input": 42}
    assert second.tool_calls[0].id == "mine"


@asynctest
async def test_raw_text_arguments_are_sent_as_is() -> None:
    transport = ScriptedTransport([Call("read_ticket", '{"input": oops')])
    assert (await _reply(transport)).tool_calls[0].arguments == '{"input": oops'


@asynctest
async def test_a_list_of_calls_is_one_reply_with_several_calls() -> None:
    transport = ScriptedTransport(["first", [Call("a", {"x": 1}), Call("b", {"y": "z"})]])
    await _reply(transport)
    reply = await _reply(transport)
    assert [(c.id, c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("call-2-1", "a", {"x": 1}),
        ("call-2-2", "b", {"y": "z"}),
    ]


@asynctest
async def test_streaming_splits_text_and_sends_calls_whole() -> None:
    transport = ScriptedTransport([Say("one two three"), Say("abcdef", chunks=3), Call("a", {"x": 1})])
    words = [c.text async for c in transport.send(STREAM)]
    assert words == ["one ", "two ", "three"]
    pieces = [c.text async for c in transport.send(STREAM)]
    assert pieces == ["ab", "cd", "ef"]
    chunks = [c async for c in transport.send(STREAM)]
    assert [len(c.tool_calls) for c in chunks] == [1]


@asynctest
async def test_a_non_streaming_request_gets_exactly_one_chunk() -> None:
    transport = ScriptedTransport([Say("one two three")])
    chunks = [c async for c in transport.send(REQUEST)]
    assert [c.text for c in chunks] == ["one two three"]


@asynctest
async def test_a_list_script_that_runs_out_names_the_counts() -> None:
    transport = ScriptedTransport(["only"])
    await _reply(transport)
    with pytest.raises(ScriptExhausted) as info:
        await _reply(transport)
    assert str(info.value).startswith("the script has 1 step but model call 2 was made;")  # "1 step", not "1 steps"
    assert transport.calls == 2
    two = ScriptedTransport(["one", "two"])
    for _ in range(2):
        await _reply(two)
    with pytest.raises(ScriptExhausted, match="^the script has 2 steps but model call 3 was made;"):
        await _reply(two)


@asynctest
async def test_a_function_script_gets_the_call_number_and_request() -> None:
    seen: list[tuple[int, ChatRequest]] = []

    def script(number: int, request: ChatRequest) -> object:
        seen.append((number, request))
        return Call("read_ticket", {"input": number})

    transport = ScriptedTransport(script)
    replies = [await _reply(transport) for _ in range(3)]
    assert [json.loads(r.tool_calls[0].arguments) for r in replies] == [{"input": 1}, {"input": 2}, {"input": 3}]
    assert [n for n, _ in seen] == [1, 2, 3]
    assert all(r is REQUEST for _, r in seen)
    assert transport.requests == [REQUEST] * 3


@asynctest
async def test_hang_only_ends_by_cancellation() -> None:
    transport = ScriptedTransport([Hang()])
    task = asyncio.ensure_future(_reply(transport))
    for _ in range(50):
        await asyncio.sleep(0)
    assert not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert transport.calls == 1


@pytest.mark.parametrize("error", [ConnectionError("refused"), ConnectionRefusedError("nobody home")])
@asynctest
async def test_a_connection_error_becomes_provider_unavailable(error: ConnectionError) -> None:
    transport = ScriptedTransport([Fail(error)])
    with pytest.raises(ProviderUnavailable) as info:
        await _reply(transport)
    assert info.value.__cause__ is error


@pytest.mark.parametrize("error", [ValueError("bad"), RuntimeError("boom"), KeyError("k")])
@asynctest
async def test_other_failures_propagate_unchanged(error: Exception) -> None:
    transport = ScriptedTransport([Fail(error)])
    with pytest.raises(type(error)) as info:
        await _reply(transport)
    assert info.value is error


@pytest.mark.parametrize("script", ["Review finished.", b"bytes", 42, None, {1, 2}])
def test_a_script_of_the_wrong_type_is_a_type_error(script: object) -> None:
    with pytest.raises(TypeError, match="script"):
        ScriptedTransport(script)  # type: ignore[arg-type]


@pytest.mark.parametrize("step", [42, None, [], ["text"], Message.user("x")])
def test_a_step_of_the_wrong_type_is_refused_when_the_script_is_made(step: object) -> None:
    with pytest.raises(TypeError, match="step 2 is not a script step"):
        ScriptedTransport(["fine", step])  # type: ignore[list-item]


@pytest.mark.parametrize("step", [42, None, [], ["text"], Message.user("x")])
@asynctest
async def test_a_step_function_returning_a_wrong_type_is_a_type_error(step: object) -> None:
    transport = ScriptedTransport(lambda number, request: step)  # type: ignore[arg-type, return-value]
    with pytest.raises(TypeError, match="step"):
        await _reply(transport)


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: Call("read_ticket", 42), "mapping"),
        (lambda: Call(42), "tool name"),
        (lambda: Say(123), "str"),
        (lambda: Say("x", chunks=0), ">= 1"),
        (lambda: Fail("down"), "exception instance"),
    ],
)
def test_malformed_steps_are_refused_when_made(make, words: str) -> None:
    with pytest.raises((TypeError, ValueError), match=words):
        make()


def test_a_call_keeps_its_own_copy_of_the_arguments() -> None:
    arguments = {"input": 42}
    call = Call("read_ticket", arguments)
    arguments["input"] = 43  # changing the dict afterwards changes nothing in the step
    assert json.loads(call.text()) == {"input": 42}
    assert call.arguments == {"input": 42}
    with pytest.raises(TypeError, match="JSON values"):
        Call("read_ticket", {"input": {1, 2}})


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (ConnectionError("refused"), "scripted transport: refused"),
        (asyncio.CancelledError("gave up"), "the provider cancelled its own request (CancelledError: gave up)"),
    ],
    ids=["connection-error", "provider-cancelled-itself"],
)
@pytest.mark.parametrize("agent", ["simple", "harness"])
def test_fail_reaches_provider_unavailable_and_the_outcome_carries_the_hint(agent, error, words) -> None:
    import labkit

    outcome = labkit.run("complete", agent=agent, transport=ScriptedTransport([Fail(error)]))
    assert outcome.status is labkit.RunStatus.PROVIDER_UNAVAILABLE
    assert outcome.hint is not None and outcome.hint.startswith(words)
    assert labkit.run("repeat", agent=agent).hint is None  # only a provider failure has a hint


STEPS = [
    "Done.",
    Say("two words"),
    Say(""),
    Call("read_ticket", {"input": 42}),
    Call("read_ticket", '{"input": '),
    [Call("a", {"x": 1}), Call("b", {"y": 2}, id="own")],
    Reply("Reading it.", [Call("read_ticket", {"input": 42})]),
]


@asynctest
@pytest.mark.parametrize("step", STEPS, ids=repr)
async def test_a_whole_reply_is_the_message_its_one_chunk_assembles(step: object) -> None:
    by_chunks, whole = ScriptedTransport([step, step]), ScriptedTransport([step, step])
    for _ in range(2):  # numbered ids follow the call number on both paths
        assert await whole.complete(REQUEST) == await _reply(by_chunks)
    assert (whole.calls, whole.requests) == (by_chunks.calls, by_chunks.requests) == (2, [REQUEST, REQUEST])


@asynctest
async def test_a_whole_reply_fails_and_runs_out_as_its_chunk_does() -> None:
    transport = ScriptedTransport([Fail(ConnectionError("down")), Fail(RuntimeError("bug"))])
    with pytest.raises(ProviderUnavailable, match="down"):
        await transport.complete(REQUEST)
    with pytest.raises(RuntimeError, match="bug"):
        await transport.complete(REQUEST)
    with pytest.raises(ScriptExhausted):
        await transport.complete(REQUEST)
    assert transport.calls == 3


@asynctest
async def test_a_subclass_that_changes_send_is_answered_through_its_send() -> None:
    class Shouting(ScriptedTransport):
        async def send(self, request):  # type: ignore[override]
            async for chunk in super().send(request):
                yield chunk.model_copy(update={"text": chunk.text.upper()})

    reply = await _counted_reply(Shouting(["quiet"]))
    assert reply.text == "QUIET"


async def _counted_reply(transport: ScriptedTransport) -> Message:
    scope = ExecutionScope()
    reply = await CountingClient(transport, scope).complete(REQUEST)
    assert scope.usage.model_calls == 1 and transport.calls == 1
    return reply
