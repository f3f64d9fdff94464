"""The counting client (docs/guarantees.md, *Limits are exact*): every model call counted once, before the transport."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from support import asynctest, triples

import labkit
from labkit import (
    ChatChunk,
    ChatRequest,
    CountingClient,
    ExecutionScope,
    Limits,
    Message,
    ProviderUnavailable,
    RunHalted,
    Say,
    ScriptedTransport,
    StopReason,
    ToolCall,
    assemble,
)

REQUEST = ChatRequest(messages=(Message.user("hi"),))


class TestTransport:
    """Records what the scope had counted at the moment the transport was called."""

    __test__ = False
    name = "test"

    def __init__(self, scope: ExecutionScope, chunks: int = 3) -> None:
        self.scope = scope
        self.chunks = chunks
        self.counted_at_call: list[int] = []
        self.chunks_sent = 0

    async def send(self, request: ChatRequest) -> AsyncIterator[ChatChunk]:
        self.counted_at_call.append(self.scope.usage.model_calls)
        for i in range(self.chunks if request.stream else 1):
            self.chunks_sent += 1
            yield ChatChunk(text=f"{i} ")


def _client(script, **limits: object) -> tuple[ExecutionScope, ScriptedTransport, CountingClient]:
    scope = ExecutionScope(Limits(**limits))
    transport = ScriptedTransport(script)
    return scope, transport, CountingClient(transport, scope)


@asynctest
async def test_non_streaming_calls_count_once_each() -> None:
    scope, transport, client = _client(["one", "two"])
    assert (await client.complete(REQUEST)).text == "one"
    assert (await client.complete(REQUEST)).text == "two"
    assert transport.calls == 2
    assert triples(scope.events) == [("ModelCall", "model", 1), ("ModelCall", "model", 2)]
    assert [r.stream for r in transport.requests] == [False, False]


@asynctest
async def test_a_streaming_call_counts_once_however_many_chunks() -> None:
    scope, transport, client = _client([Say("a b c d e")])
    chunks = [chunk async for chunk in client.stream(REQUEST)]
    assert len(chunks) == 5
    assert transport.calls == 1
    assert triples(scope.events) == [("ModelCall", "model", 1)]
    assert transport.requests[0].stream is True


@asynctest
async def test_complete_forces_a_non_streaming_request() -> None:
    scope, transport, client = _client(["whole"])
    streaming = REQUEST.model_copy(update={"stream": True})
    assert (await client.complete(streaming)).text == "whole"
    assert transport.requests[0].stream is False


@asynctest
async def test_the_call_is_counted_before_the_transport_is_called() -> None:
    scope = ExecutionScope(Limits())
    transport = TestTransport(scope)
    client = CountingClient(transport, scope)
    await client.complete(REQUEST)
    await assemble(client.stream(REQUEST))
    assert transport.counted_at_call == [1, 2]


@asynctest
async def test_a_refused_call_never_reaches_the_transport() -> None:
    scope, transport, client = _client(["one", "two"], model_calls=1)
    await client.complete(REQUEST)
    with pytest.raises(RunHalted) as info:
        await client.complete(REQUEST)
    assert info.value.reason is StopReason.MODEL_BUDGET
    assert transport.calls == 1
    assert triples(scope.events) == [("ModelCall", "model", 1), ("ModelBudget", "model", 1)]


@asynctest
async def test_a_refused_stream_raises_before_the_first_chunk() -> None:
    scope = ExecutionScope(Limits(model_calls=0))
    transport = TestTransport(scope)
    stream = CountingClient(transport, scope).stream(REQUEST)
    with pytest.raises(RunHalted) as info:
        await anext(stream)
    assert info.value.reason is StopReason.MODEL_BUDGET
    assert transport.counted_at_call == []
    assert transport.chunks_sent == 0


@asynctest
async def test_an_abandoned_stream_still_counts_once() -> None:
    scope = ExecutionScope(Limits())
    transport = TestTransport(scope, chunks=10)
    client = CountingClient(transport, scope)
    stream = client.stream(REQUEST)
    first = await anext(stream)
    assert first.text == "0 "
    await stream.aclose()
    assert transport.chunks_sent == 1
    await client.complete(REQUEST)
    assert triples(scope.events) == [("ModelCall", "model", 1), ("ModelCall", "model", 2)]


async def _chunks(*chunks: ChatChunk) -> AsyncIterator[ChatChunk]:
    for chunk in chunks:
        yield chunk


@asynctest
async def test_assemble_joins_text_and_collects_tool_calls() -> None:
    first = ToolCall(id="a", name="read_ticket", arguments='{"input": 42}')
    second = ToolCall(id="b", name="finish_review", arguments='{"input": 42}')
    message = await assemble(
        _chunks(ChatChunk(text="Hel"), ChatChunk(text="lo", tool_calls=(first,)), ChatChunk(tool_calls=(second,)))
    )
    assert message.role == "assistant"
    assert message.text == "Hello"
    assert message.tool_calls == (first, second)


@asynctest
async def test_assemble_of_no_text_gives_none() -> None:
    message = await assemble(_chunks())
    assert message.text is None
    assert message.tool_calls == ()


class EagerTransport:
    """A transport whose plain ``send`` fails before returning its iterator (the protocol allows a plain def)."""

    __test__ = False
    name = "eager"
    retries = 1

    def __init__(self, *failures: BaseException) -> None:
        self.failures = list(failures)
        self.calls = 0

    def send(self, request: ChatRequest) -> AsyncIterator[ChatChunk]:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return _chunks(ChatChunk(text="answer"))


@pytest.mark.parametrize("stream", [False, True])
@asynctest
async def test_a_send_that_fails_at_once_is_retried_like_any_provider_failure(stream: bool) -> None:
    scope = ExecutionScope()
    transport = EagerTransport(ProviderUnavailable("refused at once"))
    client = CountingClient(transport, scope)
    if stream:
        reply = await assemble(client.stream(REQUEST))
    else:
        reply = await client.complete(REQUEST)
    assert reply.text == "answer" and transport.calls == 2
    assert triples(scope.events) == [("ModelCall", "model", 1), ("ModelCall", "model", 2)]


@pytest.mark.parametrize("stream", [False, True])
def test_a_send_that_cancels_itself_at_once_is_provider_unavailable(stream: bool) -> None:
    setup = labkit.prepare("complete", transport=EagerTransport(asyncio.CancelledError("gave up")), stream=stream)
    outcome = labkit.run(setup)  # not the caller's cancellation (docs/guarantees.md, *Cancellation*), not retried
    assert outcome.status == "ProviderUnavailable" and "cancelled its own request" in (outcome.hint or "")
    assert setup.transport.calls == 1
