"""The same scope around another runtime's own loop (issue 12).

Each adapter runs a foreign agent framework's *own* tool-calling loop inside
a labkit :class:`~labkit.ExecutionScope`, without patching the framework:

* the run's guarded tools become the framework's function tools (so every
  call passes labkit's guard at the tool body: chapter 4, *The guard, step by step*);
* the counting client (over the scenario's scripted model, or any
  :class:`~labkit.Transport`) becomes the framework's model / chat client,
  so every model call is counted before the transport sees it (docs/guarantees.md, *Limits are exact*);
* the framework's own loop cap is set to ``model_calls + 1``, so labkit's
  counter stops first;
* the framework runs the calls of one reply **one after another** (its
  sequential mode, labkit's default: docs/guarantees.md, *One recorded result per requested call id*);
* a halt raised at a tool body stops the framework's loop and comes out as
  the run's stop status, never as an error message the model reads.
* every call reaches the framework in an envelope (:mod:`labkit.adapters._calls`):
  labkit's binding is the only argument check, and an unknown tool, repeated
  call ids or a cut reply get labkit's own result from one reserved tool;
* the run's transcript is rebuilt as labkit's loop keeps it, and an error the
  framework raises on its own comes out as one :class:`FrameworkError` line.

Where a framework's loop still differs from labkit's, the difference is
declared in :mod:`labkit.adapters.divergences` (none is, today).

Run one with ``labkit.run(scenario, agent="maf" | "pydantic-ai" | "openai-agents" | "langgraph")``
or ``labkit run SCENARIO --runtime ...``. The frameworks are optional extras,
imported only here and only when an adapter is made:

============== ================================ ===================================
runtime        extra                            framework's settings
============== ================================ ===================================
maf            ``labkit[maf]``                  ``max_iterations``, ``allow_concurrent_invocation=False``,
                                                labkit's observing middleware as function middleware
pydantic-ai    ``labkit[pydantic-ai]``          ``UsageLimits(request_limit=...)``, ``'sequential'`` execution mode
openai-agents  ``labkit[openai-agents]``        ``max_turns``, ``max_function_tool_concurrency=1``, tracing off
langgraph      ``labkit[langgraph]``            ``recursion_limit``, a ``StateGraph`` (model, tools) whose tools
                                                node runs the calls one after another
============== ================================ ===================================
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.metadata
import importlib.util
import itertools
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel

from ..core.cancellation import cancellation_requests, run_cancelled
from ..core.errors import (
    DuplicateToolError,
    FrameworkError,
    LabkitError,
    MissingExtraError,
    RunHalted,
    ToolArgumentsError,
    UserError,
)
from ..core.scope import ExecutionScope, GuardedTool
from ..loops.agents import _as_text, _own_cancellation, _safe_str
from ..loops.running import register_agent_type
from ..transports.chat import ChatRequest, CountingClient, Message

_NOT_RUN = "labkit_not_run"
"""The reserved framework tool's name (:data:`labkit.adapters._calls.NOT_RUN`).

Not imported from there: the run's path stays light."""

__all__ = ["RUNTIMES", "ForeignAgent", "FrameworkError", "Runtime", "available", "make_agent"]


class Runtime(BaseModel):
    """One supported runtime: its adapter module, the framework's import name, distribution and extra.

    Attributes:
        refused_below: the first release labkit accepts; an older one installed is refused
            when the adapter is made (``""``: none refused).
        refused_because: what the older releases do wrong (one clause, for the message).
    """

    name: str
    module: str
    imports: str
    distribution: str
    extra: str
    refused_below: str = ""
    refused_because: str = ""


RUNTIMES: dict[str, Runtime] = {
    "maf": Runtime(
        name="maf",
        module="maf",
        imports="agent_framework",
        distribution="agent-framework-core",
        extra="maf",
        refused_below="1.19",
        refused_because=(
            "its releases up to 1.18 run the calls of one reply concurrently even with "
            "allow_concurrent_invocation=False, with no warning"
        ),
    ),
    "pydantic-ai": Runtime(
        name="pydantic-ai",
        module="pydanticai",
        imports="pydantic_ai",
        distribution="pydantic-ai-slim",
        extra="pydantic-ai",
    ),
    "openai-agents": Runtime(
        name="openai-agents",
        module="openai_agents",
        imports="agents",
        distribution="openai-agents",
        extra="openai-agents",
    ),
    "langgraph": Runtime(
        name="langgraph", module="langgraph", imports="langgraph", distribution="langgraph", extra="langgraph"
    ),
}
"""The runtimes labkit can put its scope around, by console name."""


def available(runtime: str) -> bool:
    """Whether ``runtime``'s framework is installed (without importing it)."""
    return importlib.util.find_spec(RUNTIMES[runtime].imports) is not None


def _adapter_module(runtime: str) -> Any:
    spec = RUNTIMES.get(runtime)
    if spec is None:
        raise UserError(f"unknown runtime {runtime!r}; choose one of: {', '.join(RUNTIMES)}")
    if not available(runtime):
        raise MissingExtraError(
            f"runtime {runtime!r} needs {spec.distribution}, which is not installed; "
            f"install the extra: pip install 'labkit[{spec.extra}]'"
        )
    _check_release(spec)
    return importlib.import_module(f".{spec.module}", __name__)


def _release(version: str) -> tuple[int, ...]:
    """The leading numbers of a version text (``"1.18.0rc1"`` -> ``(1, 18, 0)``)."""
    numbers: list[int] = []
    for part in version.split("."):
        digits = "".join(itertools.takewhile(str.isdigit, part))
        if not digits:
            break
        numbers.append(int(digits))
        if len(digits) < len(part):
            break
    return tuple(numbers)


def _check_release(spec: Runtime) -> None:
    """Refuse an installed release older than ``spec.refused_below``, in one line naming the fix.

    Raises:
        MissingExtraError: that release is installed.
    """
    if not spec.refused_below:
        return
    try:
        installed = importlib.metadata.version(spec.distribution)
    except importlib.metadata.PackageNotFoundError:  # importable but not installed as a distribution: not checked
        return
    if _release(installed) < _release(spec.refused_below):
        raise MissingExtraError(
            f"runtime {spec.name!r} needs {spec.distribution}>={spec.refused_below}, not {installed}: "
            f"{spec.refused_because}; upgrade: pip install 'labkit[{spec.extra}]'"
        )


def make_agent(
    runtime: str,
    client: CountingClient,
    tools: Sequence[GuardedTool],
    *,
    instructions: str,
    stream: bool = False,
) -> ForeignAgent:
    """An agent that runs ``runtime``'s own loop in ``client.scope`` (what :func:`labkit.prepare` uses).

    Raises:
        UserError: an unknown runtime, or tools from another scope / two tools with one name.
        MissingExtraError: the runtime's framework is not installed; the message names the extra.
    """
    module = _adapter_module(runtime)
    _warm(module, runtime, stream)
    return module.Agent(client, tools, instructions=instructions, stream=stream)


_WARMED: set[tuple[str, bool]] = set()
"""The (runtime, stream) pairs whose first run this process has already made (:func:`_warm`)."""


def _warm(module: Any, runtime: str, stream: bool) -> None:
    """Make ``runtime``'s first run of this process, on a two-reply script of its own, before the learner's.

    A framework's first run does one-time work (its lazy imports, its schema and validator caches): measured
    here, 0.1 s (pydantic-ai) to 0.75 s (openai-agents, streamed) on a loaded machine. Done inside the learner's
    run, that work counts against the run's deadline, and the `deadline` scenario (1 s) could end before its
    one model call on a slow machine, unlike every later run and every other loop. Done here, at prepare, the
    deadline measures the run; the scope and the client are this warm-up's own and are dropped.
    """
    if (runtime, stream) in _WARMED:
        return
    _WARMED.add((runtime, stream))
    from ..core._machinery.sync import run_sync
    from ..loops.running import run_agent
    from ..transports.scripted import Call, ScriptedTransport

    scope = ExecutionScope(capabilities={"warm"})
    tool = scope.tool("warm", "warm", _warm_body)
    client = CountingClient(ScriptedTransport([Call("warm", {"n": 1}), "warm"]), scope)
    agent = module.Agent(client, [tool], instructions="", stream=stream)
    run_sync(run_agent(agent, "warm", is_complete=lambda: True))


async def _warm_body(n: int) -> str:
    """The warm-up's one tool: a model call, a tool call and a final reply take the framework's whole path."""
    return str(n)


class ForeignAgent:
    """What every adapter shares: the same shape as :class:`~labkit.SimpleAgent` for :func:`labkit.run_agent`.

    Attributes:
        scope: the run's scope (the client's).
        max_iterations: the framework's own loop cap, ``model_calls + 1`` (docs/guarantees.md, *Limits are exact*).
        stream: make streaming model calls through the framework's streaming path.
    """

    kind: ClassVar[str] = "foreign"
    framework: ClassVar[str] = ""
    distribution: ClassVar[str] = ""
    settings: ClassVar[str] = ""

    def __init__(
        self,
        client: CountingClient,
        tools: Sequence[GuardedTool],
        *,
        instructions: str,
        stream: bool = False,
        name: str = "BoundedReviewer",
    ) -> None:
        self.client = client
        self.scope: ExecutionScope = client.scope
        self.instructions = instructions
        self.stream = stream
        self.name = name
        self.max_iterations = self.scope.limits.model_calls + 1
        self._replies = 0  # replies handed to the framework so far (labkit.adapters._calls.framework_id)
        # what the run's transcript is rebuilt from (as labkit's loop keeps it): the last request
        # made, the model's reply to it, and the result of each of its calls so far
        self._sent: ChatRequest | None = None
        self._reply: Message | None = None
        self._results: dict[str, str] = {}
        self._halt: tuple[str, RunHalted] | None = None
        self._passed: list[BaseException] = []  # what the transport raised through the framework (not its own)
        self._tools: dict[str, GuardedTool] = {}
        for tool in tools:
            if tool._scope is not self.scope:
                raise UserError(f"tool {tool.name!r} belongs to another scope; make it with this run's scope")
            if tool.name in self._tools:
                raise DuplicateToolError(f"two tools are named {tool.name!r}")
            if tool.name == _NOT_RUN:
                raise UserError(f"the tool name {_NOT_RUN!r} is reserved by labkit's adapters; rename the tool")
            self._tools[tool.name] = tool

    @property
    def tools(self) -> tuple[GuardedTool, ...]:
        return tuple(self._tools.values())

    def describe(self) -> list[str]:
        """Header lines: which framework runs the loop, its version and the settings labkit gave it."""
        try:
            version = importlib.metadata.version(self.distribution)
        except importlib.metadata.PackageNotFoundError:  # pragma: no cover - imported, so installed
            version = "?"
        return [
            f"agent: {self.kind} ({self.framework} {version}: its own loop inside labkit's scope)",
            f"runtime settings: {self.settings.format(max_iterations=self.max_iterations)}",
        ]

    async def respond(self, prompt: str, transcript: list[Message]) -> str | None:
        """Run the framework's loop once; labkit's own errors come out unwrapped.

        Raises:
            RunHalted, ProviderUnavailable, ScriptExhausted, ...: what the scope or
                transport raised, even if the framework wrapped it in its own error.
            FrameworkError: the framework ended its loop on an error of its own
                (one line naming it; the framework's exception is the cause).
            asyncio.CancelledError: the run was cancelled (deadline or caller).
        """
        transcript.append(Message.system(self.instructions))
        transcript.append(Message.user(prompt))
        stopped: BaseException | None = None
        try:
            return await self._run(prompt)
        except BaseException as exc:
            stopped = exc
            if not isinstance(exc, Exception):  # cancellation, an interrupt: never wrapped
                raise
            inner = labkit_cause(exc) or _cause_in(exc, self._passed)
            if inner is exc:
                raise
            if inner is not None:
                stopped = inner
                raise inner from None
            raise FrameworkError(
                f"{self.framework} ended the run with an error of its own: {type(exc).__name__}: {_first_line(exc)}"
            ) from exc
        finally:
            self._rebuild(transcript, stopped)

    def _rebuild(self, transcript: list[Message], stopped: BaseException | None) -> None:
        """The run's transcript as labkit's loop keeps it: every message, one result per requested call id.

        Rebuilt from the last request made (it holds the history the framework
        kept, read back), the model's reply to it and its calls' results; a call
        left without a result gets the one labkit's loop gives it (``refused:``
        after a halt, ``cancelled:`` when the run was cancelled).
        """
        from ..loops.agents import _cancelled, _refused

        if self._sent is None:  # no model call was made (a model budget of 0)
            return
        transcript[:] = self._sent.messages
        reply = self._reply
        if reply is None or not reply.tool_calls:
            if reply is not None:
                transcript.append(reply)
            return
        transcript.append(reply)
        ids = list(dict.fromkeys(c.id for c in reply.tool_calls))
        if len(ids) < len(reply.tool_calls) or reply.truncated:  # none ran: each distinct id got its one result
            transcript.extend(Message.tool_result(i, self._results.get(i, "")) for i in ids)
            return
        halt = self._halt
        after: RunHalted | None = None
        for call in reply.tool_calls:
            if call.id in self._results:
                transcript.append(Message.tool_result(call.id, self._results[call.id]))
            elif after is not None:
                transcript.append(_refused(call, after))
            elif halt is not None and halt[0] == call.id:
                transcript.append(_refused(call, halt[1]))
                after = RunHalted(halt[1].reason, f"the run was already stopped: {halt[1].reason.value}")
            elif isinstance(stopped, RunHalted):  # a halt raised elsewhere (the model budget is not at a call)
                after = stopped
                transcript.append(_refused(call, stopped))
            else:
                transcript.append(_cancelled(call))

    async def _run(self, prompt: str) -> str | None:  # pragma: no cover - each adapter defines it
        raise NotImplementedError

    def request(self, history: Sequence[Message], stream: bool) -> ChatRequest:
        """The request for one model call: labkit's instructions, the framework's history read back, the tools.

        Args:
            history: the framework's messages as labkit messages (its own system messages left out).
            stream: a streaming call.
        """
        from ..loops.agents import _spec

        request = ChatRequest(
            messages=(Message.system(self.instructions), *history),
            tools=tuple(_spec(t) for t in self.tools),
            stream=stream,
        )
        self._sent, self._reply, self._results, self._halt = request, None, {}, None
        return request

    def wrap(self, reply: Message) -> list[Any]:
        """The calls of ``reply`` as the framework is handed them (:func:`labkit.adapters._calls.wrap`)."""
        from ._calls import wrap

        self._replies += 1
        self._reply = reply
        return wrap(reply, list(self._tools), self._replies)

    async def call_model(self, request: ChatRequest) -> Message:
        """One non-streaming model call through the counting client.

        What it raises is remembered as not the framework's.
        """
        try:
            return await self.client.complete(request)
        except Exception as exc:
            self._passed.append(exc)
            raise

    async def stream_model(self, request: ChatRequest) -> AsyncIterator[Any]:
        """One streaming model call through the counting client, chunk by chunk (as :meth:`call_model`)."""
        try:
            async for chunk in self.client.stream(request):
                yield chunk
        except Exception as exc:
            self._passed.append(exc)
            raise

    async def stream_pieces(self, request: ChatRequest) -> AsyncIterator[str | list[Any]]:
        """One streamed model call: its text pieces as they come, then its wrapped calls (one list, if any).

        The calls are handed at the end of the reply, once they are all known:
        whether their ids repeat, or the reply was cut, is a property of the
        whole reply (labkit's scripted and live transports send them last too).
        """
        texts: list[str] = []
        calls: list[Any] = []
        truncated = False
        async for chunk in self.stream_model(request):
            if chunk.text:
                texts.append(chunk.text)
                yield chunk.text
            calls.extend(chunk.tool_calls)
            truncated = truncated or chunk.finish_reason == "length"
        reply = Message.assistant("".join(texts) if texts else None, tuple(calls))
        wrapped = self.wrap(reply.model_copy(update={"truncated": True}) if truncated else reply)
        if wrapped:
            yield wrapped

    async def call_wrapped(self, arguments: Any, *, observe: bool = True) -> str:
        """Run one call the framework hands back in its envelope: the reserved tool's result, or :meth:`call_tool`.

        Args:
            arguments: what the framework hands the tool: the envelope as a
                mapping of its one argument, or as JSON text.
            observe: as :meth:`call_tool`.
        """
        from ._calls import envelope, not_run_result

        body = envelope(arguments)
        if body is None:  # not handed by labkit (a framework that rewrote the arguments): nothing runs
            return f"error: the framework handed this call's arguments in an unknown form: {str(arguments)[:200]}"
        call_id = str(body.get("id", ""))
        if "result" in body:
            text = not_run_result(body)
        else:
            try:
                text = await self.call_tool(body["name"], body.get("arguments", ""), observe=observe)
            except RunHalted as halt:
                self._halt = (call_id, halt)
                raise
        self._results.setdefault(call_id, text)
        return text

    async def call_tool(self, name: str, arguments: Any, *, observe: bool = True) -> str:
        """Run one tool call as labkit's loop does: middleware event, guard, body; the result as text.

        ``observe`` records the ``Middleware`` event here (chapter 8, *The middleware observes, the guard decides*)
        for a framework without function middleware. A binding failure or a failing body becomes
        an ``error: ...`` result the model reads (the attempt still counted);
        a halt is raised, never turned into a result.
        """
        tool = self._tools.get(name)
        if tool is None:
            return f"error: unknown tool {name!r}; available tools: {', '.join(self._tools) or 'none'}"
        if observe:
            self.scope.observe_middleware(name)
        requests = cancellation_requests()
        try:
            value = await tool.ainvoke(arguments)
            text = _as_text(value)
        except ToolArgumentsError as exc:
            return f"error: {exc}"
        except RunHalted:
            raise
        except asyncio.CancelledError as exc:
            if run_cancelled(requests, self.scope.cancel_token):
                raise
            return f"error: {_own_cancellation(exc)}"  # raised by the body itself: a failed call (docs/guarantees.md)
        except Exception as exc:  # the body or its result failed; the model sees it and the attempt still counted
            return f"error: {type(exc).__name__}: {_safe_str(exc)}"
        return text


register_agent_type(ForeignAgent)  # labkit.run_agent runs these too (the loops never import this module)


def _first_line(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:
        return "<no message>"
    return (text.splitlines() or ["<no message>"])[0][:300]


def _linked(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and every exception it wraps, each once, nearest first: the members of an exception
    group, then ``__cause__`` and ``__context__``, followed to the end of the chain."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if isinstance(current, BaseExceptionGroup):
            todo.extend(current.exceptions)
        todo.extend(linked for linked in (current.__cause__, current.__context__) if linked is not None)


def _cause_in(exc: BaseException, passed: Sequence[BaseException]) -> BaseException | None:
    """The exception of ``passed`` (raised by the transport) that ``exc`` is or wraps, if any."""
    ids = {id(p) for p in passed}
    return next((current for current in _linked(exc) if id(current) in ids), None) if ids else None


def labkit_cause(exc: BaseException) -> LabkitError | None:
    """The labkit error a framework wrapped (``__cause__``/``__context__`` chain, exception groups), if any."""
    return next((current for current in _linked(exc) if isinstance(current, LabkitError)), None)
