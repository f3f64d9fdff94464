"""The same scope around another runtime's own loop (issue 12).

Each adapter runs a foreign agent framework's *own* tool-calling loop inside
a labkit :class:`~labkit.ExecutionScope`, without patching the framework:

* the run's guarded tools become the framework's function tools (so every
  call passes labkit's guard at the tool body, SPEC §3.1);
* the counting client (over the scenario's scripted model, or any
  :class:`~labkit.Transport`) becomes the framework's model / chat client,
  so every model call is counted before the transport sees it (SPEC §3.3);
* the framework's own loop cap is set to ``model_calls + 1``, so labkit's
  counter stops first;
* the framework runs the calls of one reply **one after another** (its
  sequential mode, SPEC §3.1 default);
* a halt raised at a tool body stops the framework's loop and comes out as
  the run's stop status, never as an error message the model reads.

Run one with ``labkit.run(scenario, agent="maf" | "pydantic-ai" | "openai-agents")``
or ``labkit run SCENARIO --runtime ...``. The frameworks are optional extras,
imported only here and only when an adapter is made:

============== ================================ ===================================
runtime        extra                            framework's settings
============== ================================ ===================================
maf            ``labkit[maf]``                  ``max_iterations``, ``allow_concurrent_invocation=False``,
                                                labkit's observing middleware as function middleware
pydantic-ai    ``labkit[pydantic-ai]``          ``UsageLimits(request_limit=...)``, ``'sequential'`` execution mode
openai-agents  ``labkit[openai-agents]``        ``max_turns``, ``max_function_tool_concurrency=1``, tracing off
============== ================================ ===================================
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.metadata
import importlib.util
from collections.abc import AsyncIterator, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel

from ..loops.agents import _as_text, _own_cancellation, _safe_str
from ..transports.chat import ChatRequest, CountingClient, Message, _cancelling
from ..core.errors import DuplicateToolError, LabkitError, MissingExtraError, RunHalted, ToolArgumentsError, UserError
from ..core.scope import ExecutionScope, GuardedTool

__all__ = ["RUNTIMES", "ForeignAgent", "Runtime", "available", "make_agent"]


class Runtime(BaseModel):
    """One supported runtime: its adapter module, the framework's import name, distribution and extra."""

    name: str
    module: str
    imports: str
    distribution: str
    extra: str


RUNTIMES: dict[str, Runtime] = {
    "maf": Runtime(
        name="maf", module="maf", imports="agent_framework", distribution="agent-framework-core", extra="maf"
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
    return importlib.import_module(f".{spec.module}", __name__)


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
    return module.Agent(client, tools, instructions=instructions, stream=stream)


class ForeignAgent:
    """What every adapter shares: the same shape as :class:`~labkit.SimpleAgent` for :func:`labkit.run_agent`.

    Attributes:
        scope: the run's scope (the client's).
        max_iterations: the framework's own loop cap, ``model_calls + 1`` (SPEC §3.3).
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
        self._tools: dict[str, GuardedTool] = {}
        for tool in tools:
            if tool._scope is not self.scope:
                raise UserError(f"tool {tool.name!r} belongs to another scope; make it with this run's scope")
            if tool.name in self._tools:
                raise DuplicateToolError(f"two tools are named {tool.name!r}")
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
            asyncio.CancelledError: the run was cancelled (deadline or caller).
        """
        transcript.append(Message.system(self.instructions))
        transcript.append(Message.user(prompt))
        try:
            text = await self._run(prompt)
        except Exception as exc:
            inner = labkit_cause(exc)
            if inner is not None and inner is not exc:
                raise inner from None
            raise
        transcript.append(Message.assistant(text))
        return text

    async def _run(self, prompt: str) -> str | None:  # pragma: no cover - each adapter defines it
        raise NotImplementedError

    def wrap(self, reply: Message) -> list[Any]:
        """The calls of ``reply`` as the framework is handed them (:func:`labkit.adapters._calls.wrap`)."""
        from ._calls import wrap

        self._replies += 1
        return wrap(reply, list(self._tools), self._replies)

    async def stream_pieces(self, request: ChatRequest) -> AsyncIterator[str | list[Any]]:
        """One streamed model call: its text pieces as they come, then its wrapped calls (one list, if any).

        The calls are handed at the end of the reply, once they are all known:
        whether their ids repeat, or the reply was cut, is a property of the
        whole reply (labkit's scripted and live transports send them last too).
        """
        calls: list[Any] = []
        truncated = False
        async for chunk in self.client.stream(request):
            if chunk.text:
                yield chunk.text
            calls.extend(chunk.tool_calls)
            truncated = truncated or chunk.finish_reason == "length"
        reply = Message.assistant(None, tuple(calls))
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
        if "result" in body:
            return not_run_result(body)
        return await self.call_tool(body["name"], body.get("arguments", ""), observe=observe)

    async def call_tool(self, name: str, arguments: Any, *, observe: bool = True) -> str:
        """Run one tool call as labkit's loop does: middleware event, guard, body; the result as text.

        ``observe`` records the ``Middleware`` event here (SPEC §3.5) for a framework
        without function middleware. A binding failure or a failing body becomes
        an ``error: ...`` result the model reads (the attempt still counted);
        a halt is raised, never turned into a result.
        """
        tool = self._tools.get(name)
        if tool is None:
            return f"error: unknown tool {name!r}; available tools: {', '.join(self._tools) or 'none'}"
        if observe:
            self.scope.observe_middleware(name)
        cancelling = _cancelling()
        try:
            value = await tool.ainvoke(arguments)
            text = _as_text(value)
        except ToolArgumentsError as exc:
            return f"error: {exc}"
        except RunHalted:
            raise
        except asyncio.CancelledError as exc:
            if _cancelling() > cancelling or self.scope.cancel_token.cancelled:  # the run's own cancellation
                raise
            return f"error: {_own_cancellation(exc)}"  # raised by the body itself: a failed call (SPEC §3.4)
        except Exception as exc:  # the body or its result failed; the model sees it and the attempt still counted
            return f"error: {type(exc).__name__}: {_safe_str(exc)}"
        return text


def labkit_cause(exc: BaseException) -> LabkitError | None:
    """The labkit error a framework wrapped (``__cause__``/``__context__`` chain, exception groups), if any."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, LabkitError):
            return current
        if isinstance(current, BaseExceptionGroup):
            todo.extend(current.exceptions)
        for linked in (current.__cause__, current.__context__):
            if linked is not None:
                todo.append(linked)
    return None

