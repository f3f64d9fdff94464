"""Chat messages, the one-method transport protocol and the counting client (docs/guarantees.md, *Limits are exact*).

A transport turns a :class:`ChatRequest` into a stream of :class:`ChatChunk`.
A non-streaming request gets exactly one chunk holding the whole reply; a
streaming one gets the reply in pieces. Either way the
:class:`CountingClient` asks the scope before the transport is touched, in
one place, so every model call is counted once: first call and follow-ups,
streaming or not, whether or not the consumer reads the stream to its end.

Retries sit above that counter: a call that ends ``ProviderUnavailable``
(before its first chunk) is made again only as a new, counted call, up to the
transport's ``retries`` (docs/guarantees.md, *Limits are exact*). A ``CancelledError`` the
transport raises while nobody cancelled the run is the provider giving up: it becomes
``ProviderUnavailable``, never the caller's cancellation nor ``DeadlineExceeded``
(docs/guarantees.md, *Every stop has one name, and it is not relabelled*).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from ..core.cancellation import cancellation_requests, run_cancelled
from ..core.errors import ProviderUnavailable

if TYPE_CHECKING:
    from ..core.scope import ExecutionScope, GuardedTool

__all__ = [
    "ChatChunk",
    "ChatRequest",
    "CountingClient",
    "Message",
    "Role",
    "ToolCall",
    "ToolSpec",
    "Transport",
    "assemble",
]


class Role(StrEnum):
    """Who wrote a :class:`Message`."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class ToolCall(BaseModel):
    """A model's request to run one tool.

    Attributes:
        id: the call id; its result message carries the same id.
        name: the tool name the model asked for (it may not exist).
        arguments: the raw JSON text the model sent (it may not be JSON).
    """

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: str = "{}"


class Message(BaseModel):
    """One message of a transcript.

    Attributes:
        role: who wrote it.
        text: the text, or ``None`` (an assistant message with only tool calls).
        tool_calls: tool calls requested by an assistant message.
        tool_call_id: for a ``tool`` message, the call it answers.
        truncated: an assistant reply cut at the output-token cap
            (``finish_reason: "length"``); none of its tool calls is run
            (docs/live.md).
    """

    model_config = ConfigDict(frozen=True)

    role: Role
    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    truncated: bool = False

    # The constructors below validate exactly as ``cls(**fields)`` does, through the model's own
    # validator called with a dict (``model_validate`` without its Python wrapper): ~0.4 µs less
    # per message, and a run builds several.

    @classmethod
    def system(cls, text: str) -> Message:
        return cls.__pydantic_validator__.validate_python({"role": Role.SYSTEM, "text": text})

    @classmethod
    def user(cls, text: str) -> Message:
        return cls.__pydantic_validator__.validate_python({"role": Role.USER, "text": text})

    @classmethod
    def assistant(cls, text: str | None = None, tool_calls: tuple[ToolCall, ...] = ()) -> Message:
        return cls.__pydantic_validator__.validate_python(
            {"role": Role.ASSISTANT, "text": text, "tool_calls": tool_calls}
        )

    @classmethod
    def tool_result(cls, call_id: str, text: str) -> Message:
        return cls.__pydantic_validator__.validate_python({"role": Role.TOOL, "text": text, "tool_call_id": call_id})


class ToolSpec(BaseModel):
    """What the model is shown of a tool: name, description, JSON Schema of its arguments."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    parameters: dict[str, Any]

    @classmethod
    def of(cls, tool: GuardedTool) -> ToolSpec:
        return cls(name=tool.name, description=tool.description, parameters=tool.json_schema())


class ChatRequest(BaseModel):
    """One model call.

    Attributes:
        messages: the transcript so far, system message first.
        tools: the tools the model may ask for (visible is not granted).
        stream: ask the transport for the reply in pieces.
        max_output_tokens: a per-call provider option, not a budget (docs/guarantees.md, *Limits are exact*).
    """

    model_config = ConfigDict(frozen=True)

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    stream: bool = False
    max_output_tokens: int | None = 800


class ChatChunk(BaseModel):
    """A piece of a reply: some text and/or whole tool calls.

    Attributes:
        finish_reason: why the reply ended, as the server said it
            (``"stop"``, ``"tool_calls"``, ``"length"`` for a reply cut at the
            output-token cap, ...); ``None`` when not known (scripted replies).
    """

    model_config = ConfigDict(frozen=True)

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None


@runtime_checkable
class Transport(Protocol):
    """Anything that can answer a :class:`ChatRequest`.

    ``send`` returns an async iterator of chunks: exactly one for a
    non-streaming request, any number for a streaming one. A transport that
    cannot reach its endpoint raises :class:`~labkit.ProviderUnavailable`.
    Transports also carry a short ``name`` for headers (``"scripted"``,
    ``"live"``), and may carry ``retries`` (an ``int``, 0 when absent): how
    often the counting client makes such a call again, each time a new,
    counted call (:attr:`CountingClient.retries`). A transport class may also
    define ``async def complete(self, request) -> Message``, the whole reply to
    a non-streaming request (what :func:`assemble` makes of ``send``): the
    counting client then calls it instead, after the same count.
    """

    @property
    def name(self) -> str: ...

    def send(self, request: ChatRequest) -> AsyncIterator[ChatChunk]: ...


async def assemble(chunks: AsyncIterator[ChatChunk]) -> Message:
    """Join a stream of chunks into one assistant :class:`Message`.

    The message is ``truncated`` when a chunk says the reply was cut at the
    output-token cap (``finish_reason == "length"``).
    """
    texts: list[str] = []
    calls: list[ToolCall] = []
    truncated = False
    async for chunk in chunks:
        if chunk.text:
            texts.append(chunk.text)
        calls.extend(chunk.tool_calls)
        truncated = truncated or chunk.finish_reason == "length"
    message = Message.assistant("".join(texts) if texts else None, tuple(calls))
    return message.model_copy(update={"truncated": True}) if truncated else message


class CountingClient:
    """A thin delegate around a transport that counts every model call in the scope.

    Args:
        transport: the :class:`Transport` to delegate to.
        scope: the run's scope; its :meth:`~labkit.ExecutionScope.before_model_call`
            admits or halts each call before the transport sees it.

    Attributes:
        last_error: the :class:`~labkit.ProviderUnavailable` this client raised
            itself, for a transport that cancelled its own request (see
            :meth:`complete`); ``None`` otherwise.
    """

    def __init__(self, transport: Transport, scope: ExecutionScope) -> None:
        self.transport = transport
        self.scope = scope
        self.last_error: ProviderUnavailable | None = None

    def _send(self, request: ChatRequest) -> AsyncIterator[ChatChunk]:
        self.scope.before_model_call()  # the one place every model call is counted
        return self.transport.send(request)

    @property
    def retries(self) -> int:
        """How often a call that ended ``ProviderUnavailable`` is made again: the transport's
        ``retries`` attribute, 0 when it has none. Retries sit above the counter: each
        one is a new, counted model call (docs/guarantees.md, *Limits are exact*)."""
        return int(getattr(self.transport, "retries", 0) or 0)

    async def complete(self, request: ChatRequest) -> Message:
        """Make one non-streaming model call and return the reply.

        Raises:
            RunHalted: ``ModelBudget`` (the transport is not called), or an earlier stop.
            ProviderUnavailable: the transport could not reach its endpoint
                (after :attr:`retries` more counted calls), or it cancelled its
                own request: it raised ``CancelledError`` while nobody cancelled
                the run (neither the caller's cancellation nor ``DeadlineExceeded``:
                docs/guarantees.md, *Every stop has one name, and it is not relabelled*; such a call is not made again).
            asyncio.CancelledError: the run was cancelled (the caller, the
                deadline or a stop recorded from outside).
        """
        if request.stream:
            request = request.model_copy(update={"stream": False})
        retries: int | None = None  # read at the first failure (most calls never fail)
        # A transport may answer a non-streaming call whole (``ScriptedTransport.complete``): the
        # message assemble() would make, without an async generator and its one chunk.
        whole = getattr(type(self.transport), "complete", None)
        while True:
            requests = cancellation_requests()
            try:
                if whole is not None:
                    self.scope.before_model_call()  # counted (or refused) before the transport runs, as in _send
                    return await whole(self.transport, request)
                return await assemble(self._send(request))  # counted (or refused) in _send, before the transport runs
            except asyncio.CancelledError as exc:
                if run_cancelled(requests, self.scope.cancel_token):
                    raise
                raise self._provider_cancelled(exc) from exc
            except ProviderUnavailable:
                retries = self.retries if retries is None else retries
                if retries <= 0:
                    raise
                retries -= 1

    async def stream(self, request: ChatRequest) -> AsyncIterator[ChatChunk]:
        """Make one streaming model call; the call is counted before the first chunk.

        A refused call raises before any chunk is produced; an admitted one
        counts once however many chunks are read. A call that ends
        ``ProviderUnavailable`` before its first chunk is made again (a new,
        counted call) up to :attr:`retries` times.
        """
        if not request.stream:
            request = request.model_copy(update={"stream": True})
        retries = self.retries
        while True:
            requests = cancellation_requests()
            chunks: AsyncIterator[ChatChunk] | None = None
            started = False
            try:
                chunks = self._send(request)  # a send that fails at once is handled like a failing stream
                async for chunk in chunks:
                    started = True
                    yield chunk
                return
            except asyncio.CancelledError as exc:  # as in complete()
                if run_cancelled(requests, self.scope.cancel_token):
                    raise
                raise self._provider_cancelled(exc) from exc
            except ProviderUnavailable:
                if started or retries <= 0:
                    raise
                retries -= 1
            finally:
                aclose = getattr(chunks, "aclose", None)
                if aclose is not None:
                    await aclose()

    def _provider_cancelled(self, exc: asyncio.CancelledError) -> ProviderUnavailable:
        """The error for a ``CancelledError`` the transport raised on its own: the provider gave
        up, which the run reports as ``ProviderUnavailable``
        (docs/guarantees.md, *Every stop has one name, and it is not relabelled*)."""
        self.last_error = ProviderUnavailable(
            f"{PROVIDER_CANCELLED} ({type(exc).__name__}: {str(exc) or 'no message'}); "
            "nobody cancelled the run and its deadline had not passed"
        )
        return self.last_error


PROVIDER_CANCELLED = "the provider cancelled its own request"
"""How the message of a :class:`~labkit.ProviderUnavailable` starts when the transport cancelled its own
request while nobody cancelled the run (docs/guarantees.md, *Every stop has one name, and it is not relabelled*);
the outcome's ``hint`` keeps it."""
