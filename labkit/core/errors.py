"""Exceptions raised by labkit.

The hierarchy keeps a developer's mistakes apart from the controlled stops of
a run::

    LabkitError
    ├── UserError                 a mistake in how labkit is used; fix the code or input
    │   ├── DuplicateToolError    two tools registered under one name in a scope
    │   ├── ToolDefinitionError   a tool that cannot be made as given (name, capability, body shape)
    │   ├── CapabilitiesError     granted capabilities that are not a collection of names
    │   ├── LimitsError           limits that do not validate where a run receives them
    │   ├── ScopeStateError       a scope used outside its single-run lifecycle
    │   ├── UnknownScenarioError  a scenario name that does not exist
    │   ├── ScriptExhausted       a scripted transport asked for more steps than scripted
    │   ├── ScriptStepError       a script step (Call, Say, Reply, Fail) or script that cannot be made
    │   ├── ConfigurationError    a live profile that cannot work as written
    │   │   └── MissingExtraError an adapter's runtime that is not installed (names its extra)
    │   └── InputError            a value given to a teaching helper that it cannot use
    ├── ToolArgumentsError        arguments that do not bind to a tool's declared types
    ├── ToolBodyError             a body's outcome that cannot be handed on as it is
    ├── RunHalted                 the host stopped the run for a named reason (carries it)
    ├── ProviderUnavailable       the model endpoint could not be reached, or cancelled its own request
    ├── ProviderResponseError     the endpoint answered, but not with a usable chat completion
    └── FrameworkError            a framework's own loop (an adapter's) ended on an error of its own

``RunHalted`` and ``ProviderUnavailable`` are how a run unwinds; the public
entry points turn them into a :class:`labkit.RunOutcome`, so a caller of
:func:`labkit.run` never sees them. Caller cancellation stays
:class:`asyncio.CancelledError` (a ``BaseException``) and is never wrapped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .events import StopReason

__all__ = [
    "CapabilitiesError",
    "ConfigurationError",
    "DuplicateToolError",
    "FrameworkError",
    "InputError",
    "LabkitError",
    "LimitsError",
    "MissingExtraError",
    "ProviderResponseError",
    "ProviderUnavailable",
    "RunHalted",
    "ScopeStateError",
    "ScriptExhausted",
    "ScriptStepError",
    "ToolArgumentsError",
    "ToolBodyError",
    "ToolDefinitionError",
    "UnknownScenarioError",
    "UserError",
]


class LabkitError(Exception):
    """Base class of every exception labkit raises on purpose."""


class UserError(LabkitError):
    """labkit was used in a way it does not support; the message says how to fix it."""


class DuplicateToolError(UserError):
    """A tool name already identifies another tool in this scope (docs/guarantees.md, *Signatures*)."""


class ToolDefinitionError(UserError, TypeError):
    """A tool cannot be made from what was given (chapter 4, *The guard, step by step*).

    Raised by :meth:`labkit.ExecutionScope.tool` before anything is
    registered: a name or capability that is not a non-empty ``str``, a
    description that is not a ``str``, a body that is not a supported
    callable (a class, a generator or async generator function, a builtin
    without a readable signature), or a parameter without a type annotation,
    a ``*args``/``**kwargs`` parameter, or annotations that cannot be read.
    A ``TypeError`` too, as a wrong argument type is.
    """


class CapabilitiesError(UserError, TypeError):
    """Granted capabilities are not a collection of capability names (docs/guarantees.md, *Bad input from the user*).

    ``capabilities`` is a set, frozenset, tuple or list of ``str``; a single
    string, a mapping (``{"ticket.read": False}`` would grant nothing clear)
    or a non-string member is refused.
    """


class LimitsError(UserError, ValueError):
    """Limits that do not validate where a scope or a run receives them (docs/guarantees.md, *Bad input from the user*).

    ``Limits(...)`` itself raises pydantic's ``ValidationError``; this error
    is raised at the door of :class:`labkit.ExecutionScope` (and so of
    :func:`labkit.prepare` / :func:`labkit.run`) for a mapping that does not
    validate, for a ``Limits`` built with ``model_construct`` around the
    validation (``nan``, ``-1``), or for a value of another type. The message
    names the field; the pydantic error is its ``__cause__``.
    """


class ScopeStateError(UserError):
    """A scope was entered twice, or used after its run ended (docs/guarantees.md, *Bad input from the user*)."""


class UnknownScenarioError(UserError, KeyError):
    """No scenario has this name; the message lists the valid ones."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ScriptExhausted(UserError):
    """A scripted transport was asked for more model responses than it holds."""


class ScriptStepError(UserError, TypeError, ValueError):
    """A script step or a script cannot be made from what was given.

    Raised by :class:`~labkit.Call`, :class:`~labkit.Say`, :class:`~labkit.Reply`,
    :class:`~labkit.Fail` and :class:`~labkit.ScriptedTransport` (hence by
    :func:`labkit.scenario`): e.g. ``Call("t", 5)``, ``Reply(None, [...])``,
    ``Say("x", chunks=0)``, a step that is not one. A ``TypeError`` and a
    ``ValueError`` too, as a wrong argument type or value is.
    """


class ConfigurationError(UserError):
    """A live profile or endpoint setting is wrong; the message names what to fix."""


class MissingExtraError(ConfigurationError):
    """An adapter's runtime is not installed; the message names the extra to install (console exit 78)."""


class InputError(UserError, ValueError):
    """A value given to a teaching helper cannot be used: text that is not JSON, a number
    that is not finite, a status or event kind that does not exist; the message names the
    value and what would work. It is also a ``ValueError``."""


class ToolArgumentsError(LabkitError, ValueError):
    """Raw arguments did not bind to the tool's declared types.

    A binding failure never reaches the guard: nothing is counted and the body
    does not run (chapter 4, *The guard, step by step*). Inside a run the model sees the message as
    the tool result; on direct invocation it is raised.
    """

    def __init__(self, tool: str, detail: str) -> None:
        super().__init__(f"arguments for {tool!r} do not bind: {detail}")
        self.tool = tool
        self.detail = detail


class ToolBodyError(LabkitError):
    """A tool body's outcome that cannot be handed on as it is (chapter 4, *The guard, step by step*).

    Raised for the call (the attempt was admitted and still counts) when the
    body raised something that is neither an ``Exception`` nor cancellation
    (``KeyboardInterrupt``, ``SystemExit``, ``GeneratorExit`` or another
    ``BaseException`` raised by the body itself), raised ``StopIteration``
    (which cannot cross a thread or a coroutine boundary), or returned a
    generator instead of a value. The original is its ``__cause__``. Inside
    a run the model sees it as that call's error result and the run goes on.
    """

    def __init__(self, tool: str, detail: str) -> None:
        super().__init__(f"the body of {tool!r} {detail}")
        self.tool = tool


class RunHalted(LabkitError):
    """The host stopped the run; ``reason`` is the :class:`~labkit.StopReason`.

    Raised by the guard and the model-call counter so that the loop unwinds.

    Attributes:
        reason: the run's stop reason (the first one recorded).
        refused: ``True`` when the attempt was refused by the guard before
            its body (or before the transport); ``False`` when the body was
            admitted and ran, but the run stopped meanwhile (including a
            refusal of a call the body itself made), so its result is dropped.
    """

    def __init__(self, reason: StopReason, message: str, *, refused: bool = True) -> None:
        super().__init__(message)
        self.reason = reason
        self.refused = refused


class ProviderUnavailable(LabkitError):
    """The model endpoint could not be reached (connection refused, DNS, timeout, 5xx).

    Transports raise it at their boundary; the counting client raises it too
    for a transport that cancelled its own request while nobody cancelled the
    run (docs/guarantees.md, *Every stop has one name, and it is not relabelled*).
    A run reports it as status ``ProviderUnavailable`` (console exit 2).
    """


class ProviderResponseError(LabkitError):
    """The endpoint answered, but not with a usable OpenAI-compatible chat completion.

    Raised by the live transport for a malformed body, a broken stream or an
    error the server reported mid-stream (docs/live.md). It is not a stop
    status: the run raises it, and the console exits 76 with one line.
    """


class FrameworkError(LabkitError):
    """A framework's own loop, run by an adapter (:mod:`labkit.adapters`), ended on an error of its own.

    Not one of labkit's stops, and not an error a tool body, the transport or
    labkit raised (those come out as labkit's loops let them): the
    framework refused something labkit's loop accepts. The message is one line
    naming the framework and its exception; the exception is the
    ``__cause__``. The console prints that line and exits 70.
    """
