"""OpenTelemetry spans for a run, its model calls and its tool calls, by composition.

The core never imports OpenTelemetry: this module adds three wrappers
around the pieces a run is made of, and imports ``opentelemetry`` only when
one of them is made (``pip install 'labkit[telemetry]'``):

==============================  ========  ==============================================
span name                       kind      made by
==============================  ========  ==============================================
``invoke_agent {agent name}``   INTERNAL  :func:`traced_run` around :func:`labkit.run_agent`
``chat {model}``                CLIENT    :class:`TracingTransport`, once per model call that
                                          reached the transport (a budget refusal makes none)
``execute_tool {tool name}``    INTERNAL  :func:`tool_span_middleware`, once per tool invocation
                                          through the pipeline (a refused one too)
==============================  ========  ==============================================

Names and ``gen_ai.*`` attributes follow the OpenTelemetry GenAI semantic
conventions (``gen_ai.operation.name``, ``gen_ai.provider.name``,
``gen_ai.request.model``, ``gen_ai.agent.name``, ``gen_ai.tool.name``,
``gen_ai.tool.call.id``, ``error.type``); ``labkit.*`` attributes carry
counts, limits and statuses. Spans never carry arguments, message content,
tool results, exception messages or the key: only names, ids, counts and
type names. Exceptions are not recorded as span events for that reason.

:func:`instrument` composes all three around a prepared
:class:`~labkit.Setup`; :func:`labkit.prepare` does it itself for the harness
agent (its ``telemetry=on``) whenever a global tracer provider is set
(:func:`configured_tracer`); :func:`labkit.teaching.spans.run_traced` turns one run's spans
into a pandas table for a notebook.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import sys
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, cast

from .._version import __version__
from ..core.errors import RunHalted, UserError
from ..transports.chat import ChatChunk, ChatRequest, CountingClient, Transport
from .agents import HarnessAgent, Middleware, ToolInvocation
from .outcome import RunOutcome
from .running import Setup, _remember, run_agent

if TYPE_CHECKING:
    from ..core.scope import ExecutionScope
    from .agents import SimpleAgent

__all__ = [
    "TracedSetup",
    "TracingTransport",
    "configured_tracer",
    "instrument",
    "tool_span_middleware",
    "traced_run",
]

INSTRUMENTATION = "labkit"


def _trace() -> Any:
    try:
        return importlib.import_module("opentelemetry.trace")
    except ImportError:
        raise UserError("telemetry needs OpenTelemetry: pip install 'labkit[telemetry]'") from None


def _tracer(tracer: Any | None) -> Any:
    if tracer is not None:
        return tracer
    return _trace().get_tracer(INSTRUMENTATION, __version__)


def _model(transport: Transport) -> str:
    return str(getattr(transport, "model", None) or transport.name)


def _provider(transport: Transport) -> str:
    return str(getattr(transport, "provider", None) or f"labkit.{transport.name}")


def _fail(span: Any, error_type: str) -> None:
    trace = _trace()
    span.set_attribute("error.type", error_type)
    span.set_status(trace.Status(trace.StatusCode.ERROR, error_type))  # a type name, never a message


# -- a span per tool invocation ---------------------------------------------------------


def tool_span_middleware(tracer: Any | None = None) -> Middleware:
    """A tool middleware that wraps each invocation in an ``execute_tool {tool}`` span.

    Put it first (outermost) so the span covers the observing middleware and
    the guard: a refused call gets a span with ``labkit.tool.outcome =
    "refused"`` and ``labkit.stop_reason``.

    Args:
        tracer: an OpenTelemetry tracer; default the global provider's ``labkit`` tracer.

    Raises:
        UserError: OpenTelemetry is not installed.
    """
    chosen = _tracer(tracer)
    kind = _trace().SpanKind.INTERNAL

    async def execute_tool_span(invocation: ToolInvocation, next: Callable[[ToolInvocation], Any]) -> Any:
        tool, scope = invocation.tool, invocation.scope
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool.name,
            "gen_ai.tool.call.id": invocation.call.id,
            "gen_ai.tool.type": "function",
            "labkit.tool.capability": tool.capability,
            "labkit.tool.granted": tool.capability in scope.capabilities,
        }
        with chosen.start_as_current_span(
            f"execute_tool {tool.name}",
            kind=kind,
            attributes=attributes,
            record_exception=False,  # an exception message may quote the arguments
            set_status_on_exception=False,
        ) as span:
            try:
                result = await next(invocation)
            except RunHalted as halt:
                span.set_attribute("labkit.tool.outcome", "refused")
                span.set_attribute("labkit.stop_reason", halt.reason.value)
                _fail(span, halt.reason.value)
                raise
            except asyncio.CancelledError:
                span.set_attribute("labkit.tool.outcome", "cancelled")
                _fail(span, "cancelled")
                raise
            except Exception as exc:
                span.set_attribute("labkit.tool.outcome", "error")
                _fail(span, type(exc).__name__)
                raise
            else:
                span.set_attribute("labkit.tool.outcome", "ok")
                return result
            finally:
                span.set_attribute("labkit.tool_calls", scope.usage.tool_calls)

    return execute_tool_span


# -- a span per model call -------------------------------------------------------------


class TracingTransport:
    """A transport wrapper that makes one ``chat {model}`` span per model call.

    Everything else (``name``, ``describe``, ``last_error``, ``calls``, ...) is
    the wrapped transport's.

    Args:
        inner: the transport to wrap.
        scope: when given, each span carries ``labkit.model_call``, the
            number the counting client just admitted.
        tracer: an OpenTelemetry tracer; default the global provider's.
    """

    def __init__(self, inner: Transport, *, scope: ExecutionScope | None = None, tracer: Any | None = None) -> None:
        self.inner = inner
        self.scope = scope
        self.tracer = _tracer(tracer)
        self._kind = _trace().SpanKind.CLIENT

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet (e.g. during copying): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    @property
    def name(self) -> str:
        return self.inner.name

    def __repr__(self) -> str:
        return f"<TracingTransport {self.inner!r}>"

    async def send(self, request: ChatRequest) -> AsyncIterator[ChatChunk]:
        model = _model(self.inner)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": _provider(self.inner),
            "gen_ai.request.model": model,
            "labkit.stream": request.stream,
            "labkit.tools_offered": len(request.tools),
        }
        if request.max_output_tokens is not None:
            attributes["gen_ai.request.max_tokens"] = request.max_output_tokens
        if self.scope is not None:
            attributes["labkit.model_call"] = self.scope.usage.model_calls
        # Not made current: an async generator may be resumed in another context.
        span = self.tracer.start_span(f"chat {model}", kind=self._kind, attributes=attributes)
        chunks = 0
        calls = 0
        try:
            async for chunk in self.inner.send(request):
                chunks += 1
                calls += len(chunk.tool_calls)
                yield chunk
        except asyncio.CancelledError:
            _fail(span, "cancelled")
            raise
        except Exception as exc:
            _fail(span, type(exc).__name__)
            raise
        else:
            span.set_attribute("gen_ai.response.finish_reasons", ("tool_calls",) if calls else ("stop",))
        finally:
            span.set_attribute("labkit.chunks", chunks)
            span.set_attribute("labkit.tool_calls_requested", calls)
            span.end()


# -- a span per run --------------------------------------------------------------------


async def traced_run(
    agent: SimpleAgent,
    prompt: str,
    *,
    is_complete: Callable[[], bool],
    tracer: Any | None = None,
    scenario: str | None = None,
) -> RunOutcome:
    """:func:`labkit.run_agent` inside an ``invoke_agent {agent.name}`` span.

    The span ends with the outcome's status and counters
    (``labkit.status``, ``labkit.model_calls``, ``labkit.tool_calls``, ...);
    a stop also sets ``error.type`` to the stop reason. Exceptions
    (configuration errors, caller cancellation) propagate after ``error.type``
    is set to their type name.
    """
    chosen = _tracer(tracer)
    trace = _trace()
    transport = agent.client.transport
    limits = agent.scope.limits
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent.name,
        "gen_ai.provider.name": _provider(transport),
        "gen_ai.request.model": _model(transport),
        "labkit.agent.kind": agent.kind,
        "labkit.limits.model_calls": limits.model_calls,
        "labkit.limits.tool_calls": limits.tool_calls,
        "labkit.limits.repetitions": limits.repetitions,
        "labkit.limits.deadline_s": limits.deadline_s,
    }
    if scenario is not None:
        attributes["labkit.scenario"] = scenario
    with chosen.start_as_current_span(
        f"invoke_agent {agent.name}",
        kind=trace.SpanKind.INTERNAL,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        try:
            outcome = await run_agent(agent, prompt, is_complete=is_complete)
        except asyncio.CancelledError:
            _fail(span, "cancelled")
            raise
        except Exception as exc:
            _fail(span, type(exc).__name__)
            raise
        usage = outcome.usage
        span.set_attribute("labkit.status", outcome.status.value)
        span.set_attribute("labkit.exit_code", outcome.exit_code)
        span.set_attribute("labkit.model_calls", usage.model_calls)
        span.set_attribute("labkit.tool_calls", usage.tool_calls)
        span.set_attribute("labkit.repetitions", usage.repetitions)
        span.set_attribute("labkit.events", len(outcome.events))
        if outcome.status.is_stop:
            _fail(span, outcome.status.value)
        elif outcome.status == "Completed":
            span.set_status(trace.Status(trace.StatusCode.OK))
        return outcome


@dataclasses.dataclass
class TracedSetup(Setup):
    """A :class:`~labkit.Setup` whose run, model calls and tool calls make spans.

    Attributes:
        tracer: where the spans go.
        base: the setup before instrumentation; :func:`instrument` starts
            from it, so instrumenting again replaces the spans' tracer
            instead of adding a second set of spans.
    """

    tracer: Any = None
    base: Setup | None = None

    async def arun(self) -> RunOutcome:
        agent = cast("SimpleAgent", self.agent)  # instrument() rebuilt it as one of labkit's own agents
        outcome = await traced_run(
            agent, self.prompt, is_complete=self.is_complete, tracer=self.tracer, scenario=self.scenario.name
        )
        _remember(outcome, self)
        return outcome


def configured_tracer() -> Any | None:
    """The ``labkit`` tracer of the global OpenTelemetry tracer provider, or ``None`` if none is set.

    Imports nothing: when ``opentelemetry.trace`` was never imported, no
    provider can have been set. The API's default (proxy or no-op) provider
    does not count.
    """
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return None
    provider = trace.get_tracer_provider()
    if isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
        return None
    return provider.get_tracer(INSTRUMENTATION, __version__)


def instrument(setup: Setup, *, tracer: Any | None = None) -> TracedSetup:
    """Compose the three span makers around a prepared setup (not yet run).

    The transport is wrapped in :class:`TracingTransport` under a new
    :class:`~labkit.CountingClient` on the same scope, and the agent is
    rebuilt with :func:`tool_span_middleware` in front of its middleware;
    tools, scope, limits and the task are the setup's own, and so is every
    loop setting of the agent (streaming, ``concurrent_tool_calls``, ...). A setup that is
    already traced (by :func:`labkit.prepare` while a global tracer provider
    is set, or by an earlier call) is instrumented from its un-traced base:
    ``tracer`` replaces the earlier tracer, and no span is made twice.

    Args:
        setup: from :func:`labkit.prepare`.
        tracer: an OpenTelemetry tracer; default the global provider's ``labkit`` tracer.

    Returns:
        A :class:`TracedSetup`; run it with :func:`labkit.run` or ``await setup.arun()``.

    Raises:
        UserError: OpenTelemetry is not installed.
    """
    chosen = _tracer(tracer)
    if isinstance(setup, TracedSetup) and setup.base is not None:  # e.g. prepare() already traced it
        setup = setup.base
    old = cast("SimpleAgent", setup.agent)  # labkit's own agents (an adapter's has no middleware to extend)
    transport = TracingTransport(setup.transport, scope=setup.scope, tracer=chosen)
    options: dict[str, Any] = {
        "instructions": old.instructions,
        "max_iterations": old.max_iterations,
        "middleware": (tool_span_middleware(chosen), *old.middleware),
        "stream": old.stream,
        "max_output_tokens": old.max_output_tokens,
        "name": old.name,
        "concurrent_tool_calls": old.concurrent_tool_calls,
    }
    if isinstance(old, HarnessAgent):
        options["capabilities"] = old.capabilities
    agent = type(old)(CountingClient(transport, setup.scope), old.tools, **options)
    return TracedSetup(
        setup.scenario, setup.scope, setup.task, transport, agent, setup.prompt, tracer=chosen, base=setup
    )
