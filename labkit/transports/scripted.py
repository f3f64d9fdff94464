"""A scripted transport: write a misbehaving model as a list of steps (README.md, *The scenarios*).

Each model call takes the next step of the script:

* a ``str`` or :class:`Say` — the model answers with text and no tool call;
* a :class:`Call`, or a list of them — the model asks for those tool calls,
  with JSON-text arguments, so real binding runs in the loop;
* :class:`Reply` — text *and* tool calls in one reply, as real models often send;
* :class:`Hang` — the call never answers (until the run is cancelled);
* :class:`Fail` — the call raises; a ``ConnectionError`` becomes
  :class:`~labkit.ProviderUnavailable` at this boundary, and a
  ``CancelledError`` (the provider cancelling its own request) becomes one
  in the counting client (docs/guarantees.md, *Every stop has one name, and it is not relabelled*).

A script is a sequence of steps, or a function ``(call_number, request) ->
step`` for a model that never runs out (call numbers start at 1). A sequence
that runs out raises :class:`~labkit.ScriptExhausted`: a test double must
fail loudly rather than invent an answer.

Example::

    transport = ScriptedTransport([Call("read_ticket", {"input": 42}), "Done."])
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias, cast

from ..core.errors import ProviderUnavailable, ScriptExhausted, ScriptStepError
from .chat import ChatChunk, ChatRequest, Message, ToolCall, assemble

# ChatChunk(...) and ToolCall(...) validate through these; called with a dict they skip the
# model's Python __init__ wrapper (~0.4 µs each), the validation is the same.
_validate_chunk = ChatChunk.__pydantic_validator__.validate_python
_validate_call = ToolCall.__pydantic_validator__.validate_python
_encode = json.JSONEncoder().encode  # json.dumps(value) with its defaults, without re-checking them per call

__all__ = ["Call", "Fail", "Hang", "Reply", "Say", "Script", "ScriptedTransport", "Step"]


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call the scripted model asks for.

    Args:
        name: the tool name (need not exist: the loop reports unknown tools).
        arguments: a mapping (dumped to JSON) or raw text sent as is, so
            malformed JSON can be scripted too.
        id: the call id; defaults to ``call-<n>`` (``call-<n>-<i>`` in a batch).
    """

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str | None = None
    _text: str | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ScriptStepError(f"Call name must be a tool name (str), not {type(self.name).__name__}")
        if not isinstance(self.arguments, (str, Mapping)):
            raise ScriptStepError(
                f"Call arguments must be a mapping such as {{'input': 42}} or raw JSON text, "
                f"not {type(self.arguments).__name__}"
            )
        if self.id is not None and not isinstance(self.id, str):
            raise ScriptStepError(f"Call id must be a str, not {type(self.id).__name__}")
        if not isinstance(self.arguments, str):
            # A Call is a value: it keeps its own copy of the arguments, encoded once, here
            # (a step is replayed run after run; changing the dict passed in changes nothing).
            arguments = dict(self.arguments)
            try:
                text = _encode(arguments)
            except (TypeError, ValueError) as exc:
                raise ScriptStepError(f"Call arguments must be JSON values: {exc}") from None
            object.__setattr__(self, "arguments", arguments)
            object.__setattr__(self, "_text", text)

    def text(self) -> str:
        """The arguments as the JSON text a model would send (raw text is sent as is)."""
        return self.arguments if isinstance(self.arguments, str) else self._text  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class Say:
    """A text answer; ``chunks`` splits it into that many stream pieces (default: per word)."""

    text: str
    chunks: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise ScriptStepError(f"Say text must be a str, not {type(self.text).__name__}")
        if self.chunks is not None and (not isinstance(self.chunks, int) or self.chunks < 1):
            raise ScriptStepError(f"Say chunks must be a whole number >= 1, not {self.chunks!r}")


@dataclass(frozen=True, slots=True)
class Reply:
    """One reply with text *and* tool calls, e.g. ``Reply("Reading it now.", [Call("read_ticket", {"input": 42})])``.

    The loop runs the calls (the text is kept in the transcript, it proves
    nothing) and calls the model again. Streamed, the text comes first (one
    piece per word), then the calls.

    Raises:
        TypeError: ``text`` is not a str, or ``calls`` is not a non-empty list of :class:`Call`.
    """

    text: str
    calls: Sequence[Call]

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise ScriptStepError(f"Reply text must be a str, not {type(self.text).__name__}")
        if isinstance(self.calls, Call):
            object.__setattr__(self, "calls", (self.calls,))
        elif not (isinstance(self.calls, Sequence) and self.calls and all(isinstance(c, Call) for c in self.calls)):
            raise ScriptStepError("Reply calls must be a non-empty list of Call (use a str or Say for text alone)")
        else:
            object.__setattr__(self, "calls", tuple(self.calls))


@dataclass(frozen=True, slots=True, init=False)
class Hang:
    """A model call that never answers; only the run's cancellation ends it.

    Raises:
        ScriptStepError: given any argument (``Hang(5)``): it waits for ever,
            and the run's ``deadline_s`` decides when the run stops.
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        if args or kwargs:
            raise ScriptStepError(
                "Hang() takes no argument: it never answers, and the run's deadline_s decides when the run stops"
            )


@dataclass(frozen=True, slots=True)
class Fail:
    """A model call that raises ``error``.

    Two errors end the run with the status ``ProviderUnavailable`` (an
    external failure the host maps, not a rule of the host):

    * ``ConnectionError`` — the provider is down; this transport raises
      :class:`~labkit.ProviderUnavailable` from it.
    * ``asyncio.CancelledError`` — the provider cancelled its own request
      while nobody cancelled the run and its deadline had not passed; the
      :class:`~labkit.CountingClient` maps it to
      :class:`~labkit.ProviderUnavailable` with a hint saying so (it is
      neither ``DeadlineExceeded`` nor the caller's cancellation:
      docs/guarantees.md, *Every stop has one name, and it is not relabelled*).

    Either way the outcome's :attr:`~labkit.RunOutcome.hint` holds the
    message (the console prints it as its ``hint:`` line), e.g.
    ``"the provider cancelled its own request (CancelledError: gave up);
    nobody cancelled the run and its deadline had not passed"``. Any other
    error propagates out of the run unchanged (a bug to read).

    Example::

        labkit.run("complete", transport=ScriptedTransport([Fail(asyncio.CancelledError("gave up"))])).hint
    """

    error: BaseException

    def __post_init__(self) -> None:
        if not isinstance(self.error, BaseException):
            raise ScriptStepError(
                f"Fail needs an exception instance, e.g. Fail(ConnectionError('down')), not {self.error!r}"
            )


Step: TypeAlias = "str | Say | Reply | Call | Sequence[Call] | Hang | Fail"
Script: TypeAlias = "Sequence[Step] | Callable[[int, ChatRequest], Step]"


class ScriptedTransport:
    """A :class:`~labkit.Transport` that replays a script, with no network.

    Attributes:
        calls: how many model calls reached this transport.
        requests: the requests it received, in order.
    """

    name = "scripted"

    def __init__(self, script: Script) -> None:
        if isinstance(script, (str, bytes)) or not (callable(script) or isinstance(script, Sequence)):
            raise ScriptStepError("a script is a list of steps or a function (call_number, request) -> step")
        if not callable(script):
            for number, step in enumerate(script, 1):
                if not isinstance(step, _ONE_STEP):  # else a list of calls, or not a step
                    _check_step(step, number)
        self._script = script
        self.calls = 0
        self.requests: list[ChatRequest] = []

    def __repr__(self) -> str:
        return f"<ScriptedTransport calls={self.calls}>"

    def _step(self, number: int, request: ChatRequest) -> Step:
        if callable(self._script):
            return self._script(number, request)
        if number > len(self._script):
            steps = len(self._script)
            raise ScriptExhausted(
                f"the script has {steps} {'step' if steps == 1 else 'steps'} but model call {number} was made; "
                "add steps or use a function (call_number, request) -> step"
            )
        return self._script[number - 1]

    def _take(self, request: ChatRequest) -> Step:
        """Count this call, keep its request and take its step; a ``Fail`` step raises here."""
        self.calls += 1
        self.requests.append(request)
        step = self._step(self.calls, request)
        if isinstance(step, Fail):
            if isinstance(step.error, ConnectionError):
                raise ProviderUnavailable(f"scripted transport: {step.error}") from step.error
            raise step.error
        return step

    async def send(self, request: ChatRequest) -> AsyncIterator[ChatChunk]:
        step = self._take(request)
        if isinstance(step, Hang):
            await asyncio.get_running_loop().create_future()  # resolved only by cancellation
        text, tool_calls = _reply(step, self.calls)
        if not request.stream:
            yield _validate_chunk({"text": text, "tool_calls": tool_calls})  # = ChatChunk(text=..., tool_calls=...)
            return
        for piece in _pieces(step, text):
            yield ChatChunk(text=piece)
        for call in tool_calls:
            yield ChatChunk(tool_calls=(call,))

    async def complete(self, request: ChatRequest) -> Message:
        """A non-streaming call answered whole: the message ``assemble(self.send(request))`` makes, with no
        generator and no chunk in between (:class:`~labkit.CountingClient` uses it when a transport has one)."""
        if type(self).send is not ScriptedTransport.send:  # a subclass that changes send is answered through it
            return await assemble(self.send(request))
        step = self._take(request)
        if isinstance(step, Hang):
            await asyncio.get_running_loop().create_future()  # resolved only by cancellation
        text, tool_calls = _reply(step, self.calls)
        return Message.assistant(text or None, tool_calls)


_ONE_STEP = (str, Say, Reply, Call, Hang, Fail)


def _check_step(step: object, number: int) -> None:
    if isinstance(step, _ONE_STEP):
        return
    if isinstance(step, Sequence) and step and all(isinstance(c, Call) for c in step):
        return
    raise ScriptStepError(
        f"step {number} is not a script step: {step!r} (use a str, Say, Reply, Call, a list of Call, Hang or Fail)"
    )


def _reply(step: Step, number: int) -> tuple[str, tuple[ToolCall, ...]]:
    """The text and tool calls a step answers with (no intermediate message is built)."""
    if isinstance(step, str):
        return step, ()
    if isinstance(step, Say):
        return step.text, ()
    if isinstance(step, Reply):
        return step.text, _calls(step.calls, number)
    if isinstance(step, Call):
        return "", (_validate_call({"id": step.id or f"call-{number}", "name": step.name, "arguments": step.text()}),)
    if isinstance(step, Sequence) and step and all(isinstance(c, Call) for c in step):
        return "", _calls(cast("Sequence[Call]", step), number)  # a str was answered above
    raise ScriptStepError(f"not a script step: {step!r} (use a str, Say, Reply, Call, a list of Call, Hang or Fail)")


def _calls(calls: Sequence[Call], number: int) -> tuple[ToolCall, ...]:
    return tuple(
        ToolCall(id=c.id or f"call-{number}-{i}", name=c.name, arguments=c.text()) for i, c in enumerate(calls, 1)
    )


def _pieces(step: Step, text: str) -> list[str]:
    if not text:
        return []
    count = step.chunks if isinstance(step, Say) and step.chunks else None
    if count is None:
        words = text.split(" ")
        return [w + " " for w in words[:-1]] + [words[-1]]
    size = max(1, -(-len(text) // count))
    pieces = [text[i : i + size] for i in range(0, len(text), size)]
    return pieces + [""] * (count - len(pieces)) if len(pieces) < count else pieces
