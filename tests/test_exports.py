"""The public surface and the light core (STYLE: package shape; BRIEF: performance)."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import labkit

EXPECTED_ALL = [
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
    "EXIT_CANCELLED",
    "EXIT_CONFIG",
    "EXIT_OUTPUT",
    "EXIT_PROTOCOL",
    "EXIT_USAGE",
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
    "SCENARIOS",
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

HEAVY = ("pandas", "matplotlib", "ipywidgets", "IPython", "ipykernel", "jupyter")


def test_all_is_pinned() -> None:
    assert sorted(EXPECTED_ALL) == EXPECTED_ALL
    assert sorted(labkit.__all__) == EXPECTED_ALL
    assert len(set(labkit.__all__)) == len(labkit.__all__)


def test_every_exported_name_resolves() -> None:
    for name in labkit.__all__:
        assert getattr(labkit, name) is not None, name


def test_exported_objects_belong_to_labkit() -> None:
    for name in labkit.__all__:
        value = getattr(labkit, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__.startswith("labkit."), (name, value.__module__)


def test_the_core_and_the_console_import_nothing_heavy() -> None:
    code = (
        "import json, sys\n"
        "import labkit, labkit.cli\n"
        f"heavy = {HEAVY!r}\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0].startswith(heavy))))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(proc.stdout) == []


def test_the_check_finds_heavy_modules_when_they_are_imported() -> None:
    code = (
        "import json, sys\n"
        "import labkit.teaching.frames\n"
        f"heavy = {HEAVY!r}\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0].startswith(heavy)})))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert "pandas" in json.loads(proc.stdout)
