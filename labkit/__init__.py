"""labkit: bounded agent loops you can see stop.

The tree shows what to read first:

* :mod:`labkit.core`: the lesson in code, one execution scope per run and the
  guard at every tool body (limits, events, signature, scope, bodies, errors).
* :mod:`labkit.transports`: how a loop talks to a model (chat, scripted, live).
* :mod:`labkit.loops`: the agents, the runner, the outcome, the scenarios.
* :mod:`labkit.teaching`: the workbook's helpers (frames, charts, widgets,
  predict, direct, spans, capstone).
* :mod:`labkit.cli` (the console), :mod:`labkit.durable` (durable decisions),
  :mod:`labkit.adapters` (foreign runtimes inside the same scope).

``import labkit`` loads the core, the chat and scripted transports and the
loops (telemetry only when used); beyond labkit they import the standard
library and pydantic only. The teaching helpers load pandas, matplotlib or
ipywidgets only when imported; :mod:`labkit.teaching` itself (one-line errors in a notebook)
loads IPython only when its function is called, and is also reachable as
``labkit.teaching`` without its own import.

``LiveProfile``/``LiveTransport`` (:mod:`labkit.transports.live`), the
prediction helpers (:mod:`labkit.teaching.predict`) and ``progress()``
(:mod:`labkit.teaching.progress`) are loaded on first use
of their names, so ``import labkit`` and the console's scripted runs do not
pay for them.
"""

from typing import TYPE_CHECKING, Any

from ._version import __version__
from .core.errors import (
    CapabilitiesError,
    ConfigurationError,
    DuplicateToolError,
    InputError,
    LabkitError,
    LimitsError,
    MissingExtraError,
    ProviderResponseError,
    ProviderUnavailable,
    RunHalted,
    ScopeStateError,
    ScriptExhausted,
    ScriptStepError,
    ToolArgumentsError,
    ToolBodyError,
    ToolDefinitionError,
    UnknownScenarioError,
    UserError,
)
from .core.events import ControlEvent, EventKind, StopReason
from .core.limits import Limits
from .core.scope import CancelToken, ExecutionScope, GuardedTool, Usage
from .core.signature import canonical, signature
from .loops import runner as _runner
from .loops.agents import HarnessAgent, HarnessCapabilities, Middleware, SimpleAgent, ToolInvocation, observe_middleware
from .loops.outcome import (
    EXIT_CANCELLED,
    EXIT_CONFIG,
    EXIT_OUTPUT,
    EXIT_PROTOCOL,
    EXIT_USAGE,
    RunOutcome,
    RunStatus,
    exit_code,
)
from .loops.review import ReviewTask
from .loops.runner import Setup, arun, prepare, run, run_agent, run_sync
from .loops.scenarios import SCENARIOS, Scenario, Tool, get_scenario, load_scenario, scenario
from .transports.chat import (
    ChatChunk,
    ChatRequest,
    CountingClient,
    Message,
    Role,
    ToolCall,
    ToolSpec,
    Transport,
    assemble,
)
from .transports.scripted import Call, Fail, Hang, Reply, Say, ScriptedTransport


def _make_foreign_agent(*args: Any, **kwargs: Any) -> Any:
    """:func:`labkit.adapters.make_agent`, imported on the first foreign run (the runner cannot import upward)."""
    from .adapters import make_agent

    return make_agent(*args, **kwargs)


_runner._make_foreign_agent = _make_foreign_agent  # the one place above both the loops and the adapters

if TYPE_CHECKING:
    from .teaching.predict import Check, Checks, Comparison, Mystery, check, compare, mysteries, mystery
    from .teaching.progress import progress
    from .transports.live import LiveProfile, LiveTransport


_LAZY = {
    "LiveProfile": "transports.live",
    "LiveTransport": "transports.live",
    "Check": "teaching.predict",
    "Checks": "teaching.predict",
    "Comparison": "teaching.predict",
    "check": "teaching.predict",
    "compare": "teaching.predict",
    "Mystery": "teaching.predict",
    "mysteries": "teaching.predict",
    "mystery": "teaching.predict",
    "progress": "teaching.progress",
}
"""Public names imported from their module on first use (PEP 562)."""


def __getattr__(name: str) -> Any:
    import importlib

    if name == "teaching":  # the subpackage by its name, as after its import
        return importlib.import_module(f".{name}", __name__)
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'labkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "EXIT_CANCELLED",
    "EXIT_CONFIG",
    "EXIT_OUTPUT",
    "EXIT_PROTOCOL",
    "EXIT_USAGE",
    "SCENARIOS",
    "Call",
    "CancelToken",
    "CapabilitiesError",
    "ChatChunk",
    "ChatRequest",
    "Check",
    "Checks",
    "Comparison",
    "ConfigurationError",
    "ControlEvent",
    "CountingClient",
    "DuplicateToolError",
    "EventKind",
    "ExecutionScope",
    "Fail",
    "GuardedTool",
    "Hang",
    "HarnessAgent",
    "HarnessCapabilities",
    "InputError",
    "LabkitError",
    "Limits",
    "LimitsError",
    "LiveProfile",
    "LiveTransport",
    "Message",
    "Middleware",
    "MissingExtraError",
    "Mystery",
    "ProviderResponseError",
    "ProviderUnavailable",
    "Reply",
    "ReviewTask",
    "Role",
    "RunHalted",
    "RunOutcome",
    "RunStatus",
    "Say",
    "Scenario",
    "ScopeStateError",
    "ScriptExhausted",
    "ScriptStepError",
    "ScriptedTransport",
    "Setup",
    "SimpleAgent",
    "StopReason",
    "Tool",
    "ToolArgumentsError",
    "ToolBodyError",
    "ToolCall",
    "ToolDefinitionError",
    "ToolInvocation",
    "ToolSpec",
    "Transport",
    "UnknownScenarioError",
    "Usage",
    "UserError",
    "__version__",
    "arun",
    "assemble",
    "canonical",
    "check",
    "compare",
    "exit_code",
    "get_scenario",
    "load_scenario",
    "mysteries",
    "mystery",
    "observe_middleware",
    "prepare",
    "progress",
    "run",
    "run_agent",
    "run_sync",
    "scenario",
    "signature",
]
