"""labkit: bounded agent loops you can see stop.

The core (this package's top level) imports only the standard library and
pydantic. The teaching helpers live in :mod:`labkit.frames`,
:mod:`labkit.charts` and :mod:`labkit.widgets` and load pandas, matplotlib
or ipywidgets only when imported; :mod:`labkit.teaching` (one-line errors in
a notebook) loads IPython only when its function is called, and is also
reachable as ``labkit.teaching`` without its own import.

``LiveProfile``/``LiveTransport`` (:mod:`labkit.live`) and the prediction
helpers (:mod:`labkit.predict`) are loaded on first use of their names, so
``import labkit`` and the console's scripted runs do not pay for them.
"""

from typing import TYPE_CHECKING, Any

from .agents import HarnessAgent, HarnessCapabilities, Middleware, SimpleAgent, ToolInvocation, observe_middleware
from .chat import ChatChunk, ChatRequest, CountingClient, Message, Role, ToolCall, ToolSpec, Transport, assemble
from .errors import (
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
from .events import ControlEvent, EventKind, StopReason
from .limits import Limits
from .outcome import (
    EXIT_CANCELLED,
    EXIT_CONFIG,
    EXIT_OUTPUT,
    EXIT_PROTOCOL,
    EXIT_USAGE,
    RunOutcome,
    RunStatus,
    exit_code,
)
from .review import ReviewTask
from .runner import Setup, arun, prepare, run, run_agent, run_sync
from .scenarios import SCENARIOS, Scenario, Tool, get_scenario, load_scenario, scenario
from .scope import CancelToken, ExecutionScope, GuardedTool, Usage
from .scripted import Call, Fail, Hang, Reply, Say, ScriptedTransport
from .signature import canonical, signature

if TYPE_CHECKING:
    from .live import LiveProfile, LiveTransport
    from .predict import Check, Checks, Comparison, Mystery, check, compare, mysteries, mystery

__version__ = "0.1.0"

_LAZY = {
    "LiveProfile": "live",
    "LiveTransport": "live",
    "Check": "predict",
    "Checks": "predict",
    "Comparison": "predict",
    "check": "predict",
    "compare": "predict",
    "Mystery": "predict",
    "mysteries": "predict",
    "mystery": "predict",
}
"""Public names imported from their module on first use (PEP 562)."""


def __getattr__(name: str) -> Any:
    if name == "teaching":  # a light submodule, reachable as labkit.teaching after `import labkit`
        import importlib

        return importlib.import_module(".teaching", __name__)
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'labkit' has no attribute {name!r}")
    import importlib

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
    "run",
    "run_agent",
    "run_sync",
    "scenario",
    "signature",
]
