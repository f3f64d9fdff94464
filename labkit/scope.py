"""The execution scope and the guard at every tool body (SPEC §3).

Protocol, in the order the code enforces it:

* One :class:`ExecutionScope` per run. It holds the granted capabilities,
  the :class:`~labkit.Limits`, the counters, the private repetition
  signatures, the ordered :class:`~labkit.ControlEvent` list, the stop reason
  and the cancellation machinery. Its lifecycle is ``READY -> RUNNING ->
  FINISHED``; entering a run twice is an error, and a finished scope admits
  nothing more.
* The scope makes every tool: :meth:`ExecutionScope.tool` wraps a typed body
  into a :class:`GuardedTool`. The raw body is never handed out, so a direct
  call of the tool (outside any loop) goes through the same guard.
* On every invocation: (1) bind the raw arguments to the body's declared
  types with pydantic (a failure never reaches the guard); (2) under one
  lock: cancellation check, permission, global tool budget, repetition,
  then reserve (attempts + 1, signature + 1) and record ``ToolCall`` — the
  reservation stands even if the body fails; (3) run the body outside the
  lock with the run's cancellation; (4) check cancellation again.
* Before each model call the counting client asks :meth:`ExecutionScope.before_model_call`:
  cancellation check, then the model-call budget, then ``ModelCall``.
* A halt records one event named after its reason, sets the stop reason
  (the first one wins), cancels the run and raises :class:`~labkit.RunHalted`.
  After that no body starts and no event is appended.

Budgets ask "would the next attempt exceed the limit?" with ``>=``, so zero
admits nothing.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import json
import threading
import time
from collections.abc import Callable, Mapping
from enum import Enum
from functools import lru_cache
from typing import Annotated, Any, NamedTuple, get_type_hints

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError, create_model

from . import _workers
from ._sync import run_sync
from .errors import DuplicateToolError, RunHalted, ScopeStateError, ToolArgumentsError, UserError
from .events import ControlEvent, EventKind, StopReason
from .limits import Limits
from .signature import NonFiniteNumber, _dumps_str, _encode_str, _number, signature

__all__ = ["GUARD_RULES", "CancelToken", "ExecutionScope", "GuardedTool", "Usage"]

Clock = Callable[[], float]

# Set inside a run (and copied into its child tasks and body threads), so a
# halt knows whether it is unwinding the run itself or must cancel it from outside.
_current_scope: contextvars.ContextVar[ExecutionScope | None] = contextvars.ContextVar(
    "labkit_current_scope", default=None
)


class CancelToken:
    """The run's cancellation, as seen by a tool body.

    A body receives it by declaring a parameter annotated ``CancelToken``.
    Async bodies are also cancelled at their next ``await``; a sync body runs
    in a thread and can only stop early by looking at the token.
    """

    __slots__ = ("_cancelled", "_event")

    # A threading.Event costs ~2 µs to make and most runs never wait on their token, so the
    # flag is a plain attribute and the Event is made by the first wait(). _set() writes the
    # flag before reading _event; wait() publishes _event before reading the flag; so either
    # _set() sees the Event and sets it, or wait() sees the flag (each step is atomic under the GIL).
    _event_lock = threading.Lock()  # only makes the Event, once per token that is waited on

    def __init__(self) -> None:
        self._cancelled = False
        self._event: threading.Event | None = None

    @property
    def cancelled(self) -> bool:
        """True once the run was stopped, cancelled or ran out of time."""
        return self._cancelled

    def raise_if_cancelled(self) -> None:
        """Raise :class:`asyncio.CancelledError` if the run is cancelled."""
        if self._cancelled:
            raise asyncio.CancelledError("the run was cancelled")

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block up to ``timeout_s`` seconds for cancellation; return whether it happened."""
        event = self._event
        if event is None:
            with CancelToken._event_lock:
                if self._event is None:
                    self._event = threading.Event()
                event = self._event
        if self._cancelled:
            event.set()
        return event.wait(timeout_s)

    def _set(self) -> None:
        self._cancelled = True
        event = self._event
        if event is not None:
            event.set()

    def __repr__(self) -> str:
        return f"CancelToken(cancelled={self.cancelled})"


class Usage(NamedTuple):
    """Counters of a scope at one moment, to read against its :class:`~labkit.Limits`."""

    model_calls: int
    """Transport attempts admitted."""
    tool_calls: int
    """Tool attempts admitted (failed bodies included)."""
    repetitions: int
    """The highest attempt count of any one signature."""
    elapsed_s: float
    """Seconds since the scope started (0.0 before it starts)."""


_validate_event = ControlEvent.__pydantic_validator__.validate_python  # the constructor's validation, called with a dict
_INTERNED: dict[tuple[str, str, int], ControlEvent] = {}
_INTERN_COUNTS = 64  # a run's few events repeat run after run; a long-lived scope's high counts do not
_INTERN_MAX = 4096


_KINDS = EventKind._value2member_map_
_MODEL_CALL, _MIDDLEWARE, _TOOL_CALL = EventKind.MODEL_CALL.value, EventKind.MIDDLEWARE.value, EventKind.TOOL_CALL.value

_Record = tuple[str, str, int]
"""An event as the scope records it: ``(kind text, name, count)``. Plain text and a number, so
the garbage collector stops tracking the tuple; a ControlEvent (with its dict and field set)
is made when the events are read. A scope seeing many calls then does not grow the heap that
every full collection walks."""


def _event(kind: str, name: str, count: int) -> ControlEvent:
    """The :class:`ControlEvent` of a record, shared between runs: events are frozen values, so equal ones are interchangeable.

    Keyed by the kind's text (an enum member's own hash is a Python-level call);
    only small counts are kept, at most ``_INTERN_MAX`` events, so a scope that
    sees many calls does not crowd out the events every run repeats.
    """
    key = (kind, name, count)
    event = _INTERNED.get(key)
    if event is None:
        event = _validate_event({"kind": _KINDS[kind], "name": name, "count": count})  # = ControlEvent(...)
        if count <= _INTERN_COUNTS and len(_INTERNED) < _INTERN_MAX and type(name) is str:
            _INTERNED[key] = event
    return event


class _State(Enum):
    READY = "ready"
    RUNNING = "running"
    FINISHED = "finished"


class _Stop(NamedTuple):
    reason: StopReason
    name: str
    count: int
    message: str


# -- guard rules: each returns a stop or None, checked in this fixed order ------------


def _permission(scope: ExecutionScope, tool: GuardedTool, key: str) -> _Stop | None:
    if tool.capability in scope.capabilities:
        return None
    return _Stop(
        StopReason.PERMISSION_DENIED,
        tool.name,
        scope._tool_calls,
        f"capability {tool.capability!r} is not granted for {tool.name!r}",
    )


def _tool_budget(scope: ExecutionScope, tool: GuardedTool, key: str) -> _Stop | None:
    limit = scope.limits.tool_calls
    if scope._tool_calls < limit:
        return None
    return _Stop(
        StopReason.TOOL_BUDGET,
        tool.name,
        scope._tool_calls,
        f"tool budget: {scope._tool_calls} of {limit} tool attempts already admitted",
    )


def _repetition(scope: ExecutionScope, tool: GuardedTool, key: str) -> _Stop | None:
    seen = scope._signatures.get(key, 0)
    limit = scope.limits.repetitions
    if seen < limit:
        return None
    return _Stop(
        StopReason.REPEATED_CALL,
        tool.name,
        seen,
        f"repeated call: {tool.name!r} with these arguments already had {seen} of {limit} attempts",
    )


GUARD_RULES: tuple[Callable[[ExecutionScope, GuardedTool, str], _Stop | None], ...] = (
    _permission,
    _tool_budget,
    _repetition,
)
"""The guard's checks after cancellation, in SPEC §3.1 order.

The guard asks these rules, in this order, and the first that refuses
decides. While ``GUARD_RULES`` holds exactly these three, the guard first
tests their three conditions in one expression (the common "all admit"
case) and asks the rules one by one only when one would refuse; replacing
``GUARD_RULES`` (e.g. with an extra rule) makes every call ask the rules.
"""

_BUILTIN_RULES = GUARD_RULES


class ExecutionScope:
    """Per-run owner of capabilities, limits, counters, events and stop reason.

    Args:
        limits: the run's :class:`~labkit.Limits` (defaults 6 / 4 / 1 / 120 s),
            or a mapping of its fields.
        capabilities: capability names granted by the host, e.g. ``{"ticket.read"}``.
        clock: seconds from a monotonic clock; inject one to test the deadline.

    Raises:
        UserError: ``limits`` is neither ``Limits`` nor a mapping, or
            ``capabilities`` is a single string.
        pydantic.ValidationError: a mapping of limits that does not validate.

    The deadline clock starts at the scope's first use: when its run starts,
    or at the first direct invocation of one of its tools (so a scope made
    for direct calls in a notebook runs out ``deadline_s`` after its first call).

    Thread-safe: every counter and event is changed under one lock, so tools
    may be invoked from many threads and tasks at once.
    """

    def __init__(
        self,
        limits: Limits | Mapping[str, object] | None = None,
        capabilities: frozenset[str] | set[str] | tuple[str, ...] | list[str] = (),
        *,
        clock: Clock = time.monotonic,
    ) -> None:
        self.limits = _limits(limits)
        if isinstance(capabilities, (str, bytes)):
            raise UserError(f"capabilities is a collection of names, e.g. {{{capabilities!r}}}, not one string")
        self.capabilities = frozenset(capabilities)
        self._clock = clock
        self._lock = threading.Lock()
        self._state = _State.READY
        self._records: list[_Record] = []  # appended under the lock, in order
        self._events: list[ControlEvent] = []  # the records read so far, as events
        self._model_calls = 0
        self._tool_calls = 0
        self._middleware_seen = 0
        self._signatures: dict[str, int] = {}
        self._stop: StopReason | None = None
        self._caller_cancelled = False
        self._token = CancelToken()
        self._started_at: float | None = None
        self._deadline_at: float | None = None
        self._tools: dict[str, GuardedTool] = {}
        self._run_loop: asyncio.AbstractEventLoop | None = None
        self._run_expire: Callable[[], None] | None = None

    # -- making tools ---------------------------------------------------------------

    def tool(
        self,
        name: str,
        capability: str,
        body: Callable[..., Any],
        *,
        description: str | None = None,
    ) -> GuardedTool:
        """Wrap ``body`` into a guarded tool registered in this scope.

        Args:
            name: the tool name the model uses; unique in the scope.
            capability: the capability the host must grant to run it.
            body: a function (sync or ``async``) with annotated parameters;
                they become the tool's arguments. A parameter annotated
                :class:`CancelToken` receives the run's cancellation instead.
            description: shown to the model; defaults to the body's docstring.

        Raises:
            DuplicateToolError: ``name`` already names a tool in this scope.
            TypeError: ``name`` is not a string, ``body`` is not callable or a
                parameter has no annotation.
        """
        if not isinstance(name, str):
            raise TypeError(f"a tool name is a str, not {type(name).__name__}")
        with self._lock:
            if name in self._tools:
                raise DuplicateToolError(
                    f"a tool named {name!r} is already registered in this scope; "
                    "one name must identify one implementation and one argument type"
                )
            tool = GuardedTool(self, name, capability, body, description)
            self._tools[name] = tool
        return tool

    @property
    def tools(self) -> tuple[GuardedTool, ...]:
        """The tools made by this scope, in registration order."""
        return tuple(self._tools.values())

    # -- state ----------------------------------------------------------------------

    @property
    def events(self) -> tuple[ControlEvent, ...]:
        """A snapshot of the ordered control events."""
        with self._lock:
            return self._events_locked()

    def _events_locked(self) -> tuple[ControlEvent, ...]:
        events, records = self._events, self._records
        for index in range(len(events), len(records)):
            events.append(_event(*records[index]))
        return tuple(events)

    @property
    def stop_reason(self) -> StopReason | None:
        """The first stop reason recorded, or ``None``."""
        return self._stop

    @property
    def cancel_token(self) -> CancelToken:
        """The run's cancellation as bodies see it."""
        return self._token

    @property
    def usage(self) -> Usage:
        """The counters now."""
        with self._lock:
            return self._usage_locked()

    def _usage_locked(self) -> Usage:
        elapsed = 0.0 if self._started_at is None else self._clock() - self._started_at
        peak = max(self._signatures.values(), default=0)
        return Usage(self._model_calls, self._tool_calls, peak, max(elapsed, 0.0))

    def remaining_s(self) -> float:
        """Seconds left before the deadline (the full limit before the scope starts)."""
        if self._deadline_at is None:
            return self.limits.deadline_s
        return max(self._deadline_at - self._clock(), 0.0)

    def __repr__(self) -> str:
        u = self.usage
        stop = f" stop={self._stop.value}" if self._stop else ""
        return (
            f"<ExecutionScope {self._state.value}{stop} "
            f"model_calls={u.model_calls}/{self.limits.model_calls} "
            f"tool_calls={u.tool_calls}/{self.limits.tool_calls} "
            f"repetitions={u.repetitions}/{self.limits.repetitions} "
            f"time_left={self.remaining_s():.3g}s>"
        )

    # -- the checks -----------------------------------------------------------------

    def check_cancellation(self) -> None:
        """Raise if the run is stopped, cancelled, past its deadline, or finished.

        Raises:
            RunHalted: a stop was recorded, or the deadline passed now
                (then ``DeadlineExceeded`` is recorded first).
            asyncio.CancelledError: the caller cancelled the run.
            ScopeStateError: the scope's run has ended.
        """
        with self._lock:
            self._check_locked()

    def _check_locked(self) -> None:
        if self._state is _State.READY:
            self._start_locked()
        elif self._state is _State.FINISHED:
            raise ScopeStateError("this scope's run has ended; make a new scope for a new run")
        if self._caller_cancelled:
            raise asyncio.CancelledError("the caller cancelled the run")
        if self._stop is not None:
            raise RunHalted(self._stop, f"the run was already stopped: {self._stop.value}")
        if self._deadline_at is not None and self._clock() >= self._deadline_at:
            self._halt_locked(self._deadline_stop())

    def _deadline_stop(self) -> _Stop:
        return _Stop(
            StopReason.DEADLINE_EXCEEDED,
            "run",
            self._tool_calls,
            f"deadline: {self.limits.deadline_s:g} s passed",
        )

    def before_model_call(self) -> int:
        """Admit one transport attempt or halt (SPEC §3.3).

        Returns:
            The new number of admitted model calls.

        Raises:
            RunHalted: ``ModelBudget`` when ``model_calls >= limit``, or an
                earlier stop / the deadline.
            asyncio.CancelledError: the caller cancelled the run.
        """
        with self._lock:
            self._check_locked()
            limit = self.limits.model_calls
            if self._model_calls >= limit:
                self._halt_locked(
                    _Stop(
                        StopReason.MODEL_BUDGET,
                        "model",
                        self._model_calls,
                        f"model budget: {self._model_calls} of {limit} model calls already made",
                    )
                )
            self._model_calls += 1
            self._records.append((_MODEL_CALL, "model", self._model_calls))
            return self._model_calls

    def observe_middleware(self, name: str) -> None:
        """Record a ``Middleware`` event for tool ``name`` (nothing once the run stopped).

        Raises:
            TypeError: ``name`` is not a string (checked before anything is counted).
        """
        if not isinstance(name, str):
            raise TypeError(f"a middleware event names a tool (str), not {type(name).__name__}")
        with self._lock:
            self._check_locked()
            self._middleware_seen += 1
            self._records.append((_MIDDLEWARE, name, self._middleware_seen))

    def _admit(self, tool: GuardedTool, key: str) -> int:
        with self._lock:
            self._check_locked()
            seen = self._signatures.get(key, 0)
            limits = self.limits
            if GUARD_RULES is not _BUILTIN_RULES or not (
                tool.capability in self.capabilities
                and self._tool_calls < limits.tool_calls
                and seen < limits.repetitions
            ):  # some rule refuses (or the rules were changed): ask them in order; the first refusal decides
                for rule in GUARD_RULES:
                    stop = rule(self, tool, key)
                    if stop is not None:
                        self._halt_locked(stop)
            self._tool_calls += 1
            self._signatures[key] = seen + 1
            self._records.append((_TOOL_CALL, tool.name, self._tool_calls))
            return self._tool_calls

    # -- stopping -------------------------------------------------------------------

    def _halt_locked(self, stop: _Stop) -> None:
        if self._stop is None:
            self._record_stop_locked(stop)
        raise RunHalted(self._stop or stop.reason, stop.message)

    def _record_stop_locked(self, stop: _Stop, *, inside_run: bool = False) -> bool:
        if self._stop is not None or self._state is _State.FINISHED:
            return False
        self._stop = stop.reason
        self._records.append((stop.reason.value, stop.name, stop.count))
        self._token._set()
        if self._run_expire is not None and not inside_run and _current_scope.get() is not self:
            # Stopped from outside the run (another thread or task): cancel the run now.
            loop, expire = self._run_loop, self._run_expire
            if loop is not None and not loop.is_closed():
                loop.call_soon_threadsafe(expire)
        return True

    def _stop_for(self, reason: StopReason, name: str) -> StopReason:
        """Record a stop that did not come from a rule (deadline fired, provider down); first wins."""
        with self._lock:
            if reason is StopReason.DEADLINE_EXCEEDED:
                stop = self._deadline_stop()
            else:
                stop = _Stop(reason, name, self._model_calls, reason.value)
            self._record_stop_locked(stop, inside_run=True)
            return self._stop or reason

    def _cancel_by_caller(self) -> None:
        with self._lock:
            self._caller_cancelled = True
            self._token._set()

    # -- run lifecycle (used by labkit.run) -----------------------------------------

    def _start_locked(self) -> None:
        self._started_at = self._clock()
        self._deadline_at = self._started_at + self.limits.deadline_s
        self._state = _State.RUNNING

    def _enter_run(self, loop: asyncio.AbstractEventLoop, expire: Callable[[], None]) -> None:
        """Start the run; the runner then sets ``_current_scope`` (after scheduling its deadline)."""
        with self._lock:
            if self._run_expire is not None or self._state is _State.FINISHED:
                raise ScopeStateError("a scope serves exactly one run; make a new scope for a new run")
            if self._state is _State.READY:
                self._start_locked()
            self._run_loop, self._run_expire = loop, expire

    def _finish(self) -> tuple[tuple[ControlEvent, ...], Usage]:
        """End the run; return its events and usage (final: a finished scope records nothing more)."""
        with self._lock:
            self._state = _State.FINISHED
            self._run_expire = None
            self._token._set()
            return self._events_locked(), self._usage_locked()


def _limits(limits: object) -> Limits:
    """Accept :class:`Limits`, a mapping of its fields, or ``None`` (the defaults)."""
    if limits is None:
        return Limits()
    if isinstance(limits, Limits):
        return limits
    if isinstance(limits, Mapping):
        return Limits.model_validate(dict(limits))
    raise UserError(f"limits must be labkit.Limits or a mapping of its fields, not {type(limits).__name__}")


class GuardedTool:
    """A tool made by an :class:`ExecutionScope`; every invocation passes its guard.

    Attributes:
        name: the name the model uses.
        capability: the capability the scope must grant.
        description: the text shown to the model.
        arguments_model: the pydantic model the raw arguments bind to.
    """

    __slots__ = (
        "_body",
        "_is_async",
        "_scope",
        "_signature_keys",
        "_token_param",
        "arguments_model",
        "capability",
        "description",
        "name",
    )

    def __init__(
        self,
        scope: ExecutionScope,
        name: str,
        capability: str,
        body: Callable[..., Any],
        description: str | None,
    ) -> None:
        if not callable(body):
            raise TypeError(f"the body of tool {name!r} must be callable")
        self._scope = scope
        self._body = body
        self.name = name
        self.capability = capability
        self.arguments_model, self._token_param = _arguments_model(body, name)
        self._signature_keys = _signature_keys(self.arguments_model)
        doc, self._is_async = _body_facts(body)
        self.description = description or doc or name

    def __repr__(self) -> str:
        return f"<GuardedTool {self.name!r} needs {self.capability!r}>"

    def json_schema(self) -> dict[str, Any]:
        """The JSON Schema of the tool's arguments (an object), as shown to a model.

        Returns a fresh dict on every call (built from a per-model cached text:
        generating a schema costs about 0.5 ms, decoding the cached text a few µs).
        """
        return json.loads(_schema_text(self.arguments_model))

    def bind(self, arguments: str | bytes | Mapping[str, Any] | None) -> BaseModel:
        """Bind raw arguments (a JSON object text or a mapping) to the declared types.

        Raises:
            ToolArgumentsError: not a JSON object, wrong types, missing or
                extra fields, non-finite numbers, too deep nesting.
        """
        try:
            if isinstance(arguments, (str, bytes, bytearray)):
                return self.arguments_model.model_validate_json(arguments)
            if arguments is None:
                return self.arguments_model.model_validate({})
            if isinstance(arguments, Mapping):
                return self.arguments_model.model_validate(arguments)
        except ValidationError as exc:
            raise ToolArgumentsError(self.name, _describe(exc)) from None
        raise ToolArgumentsError(self.name, f"expected a JSON object, got {type(arguments).__name__}")

    def _signature(self, bound: BaseModel) -> str:
        """The repetition signature of bound arguments; a value too deep to serialise fails binding."""
        try:
            return signature(self.name, bound.model_dump(mode="json"))
        except NonFiniteNumber:
            raise ToolArgumentsError(
                self.name, "a number is not finite (NaN, Infinity, or out of range such as 1e400)"
            ) from None
        except (ValueError, RecursionError) as exc:  # pydantic stops serialising past ~250 levels
            raise ToolArgumentsError(self.name, f"arguments nested too deeply ({exc})") from None

    async def ainvoke(self, arguments: str | bytes | Mapping[str, Any] | None = None) -> Any:
        """Bind, guard and run the body; return what the body returned.

        Raises:
            ToolArgumentsError: binding failed (nothing counted, no body).
            RunHalted: the guard refused the attempt (``refused``: body not
                entered), or the run stopped while the body ran (``refused``
                is ``False``: the attempt counted, its result is dropped).
            asyncio.CancelledError: the run was cancelled.
            Exception: whatever the body raised (the attempt still counts).
        """
        bound = self.bind(arguments)
        scope = self._scope
        key, kwargs = self._key_and_kwargs(bound)
        scope._admit(self, key)
        if self._token_param is not None:
            kwargs[self._token_param] = scope._token
        if self._is_async:
            result = await self._body(**kwargs)
        else:
            result = await _run_in_daemon_thread(self._body, kwargs)
        self._check_after_body()
        return result

    def _key_and_kwargs(self, bound: BaseModel) -> tuple[str, dict[str, Any]]:
        """The repetition signature of the bound arguments (SPEC §3.2) and the body's keyword arguments."""
        kwargs = bound.__dict__.copy()  # exactly the declared fields: extra fields are forbidden
        # model_dump(mode="json") returns str, int, bool and None values unchanged, so for those the
        # canonical text is written here directly: keys in code-point order (sorted once per
        # model), each value as canonical() writes it. Any other value takes the general path.
        parts = []
        for field, key_text in self._signature_keys:
            value = kwargs[field]
            kind = type(value)
            if kind is int:
                parts.append(key_text + _number(value))
            elif kind is str:
                parts.append(key_text + _encode_str(value))
            elif value is None:
                parts.append(key_text + "null")
            elif kind is bool:
                parts.append(key_text + ("true" if value else "false"))
            else:  # a value model_dump(mode="json") may convert (or find too deep)
                return self._signature(bound), kwargs
        return self.name + ":{" + ",".join(parts) + "}", kwargs

    def invoke(self, arguments: str | bytes | Mapping[str, Any] | None = None) -> Any:
        """Invoke directly, outside any loop, through the same guard as :meth:`ainvoke`.

        A sync body runs in the calling thread; an async body runs to its end
        on a private event loop. Safe to call from many threads at once.
        """
        if self._is_async or _running_loop() is not None:
            return run_sync(self.ainvoke(arguments))  # the same interrupt handling as labkit.run
        bound = self.bind(arguments)
        scope = self._scope
        key, kwargs = self._key_and_kwargs(bound)
        scope._admit(self, key)
        if self._token_param is not None:
            kwargs[self._token_param] = scope._token
        result = self._body(**kwargs)
        self._check_after_body()
        return result

    def _check_after_body(self) -> None:
        """Step 4: drop the result if the run stopped while the body ran (it was admitted, not refused).

        Lock-free when nothing happened: the stop reason, the caller's
        cancellation and the state only ever move one way (unset -> set,
        RUNNING -> FINISHED), and each is one attribute read (atomic under the
        GIL), so reading all of them clear, with the clock still before the
        deadline, means they were all clear at the first read: the same answer
        the locked check would have given then. Anything else takes the lock
        and the full check (which records the deadline stop, first one wins).
        """
        scope = self._scope
        if (
            scope._stop is None
            and not scope._caller_cancelled
            and scope._state is _State.RUNNING
            and scope._clock() < scope._deadline_at  # type: ignore[operator]  # set when RUNNING
        ):
            return
        try:
            scope.check_cancellation()
        except RunHalted as halt:
            raise RunHalted(
                halt.reason, f"the run stopped ({halt.reason.value}) while {self.name!r} ran; its result is dropped",
                refused=False,
            ) from None

    __call__ = invoke


# -- binding --------------------------------------------------------------------------

@lru_cache(maxsize=512)
def _signature_keys(model: type[BaseModel]) -> tuple[tuple[str, str], ...]:
    """``(field, '"field":')`` pairs of a model's fields in code-point order, as canonical() writes object keys."""
    return tuple((field, _dumps_str(field) + ":") for field in sorted(model.model_fields))


def _reject_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("a boolean is not a number")
    return value


def _arguments_model(body: Callable[..., Any], tool_name: str) -> tuple[type[BaseModel], str | None]:
    """The pydantic model of a body's parameters, built once per function (bound methods share it)."""
    func = getattr(body, "__func__", None)
    if func is not None:
        return _cached_model(func, tool_name, True)
    try:
        hash(body)
    except TypeError:
        return _build_model(body, tool_name, False)
    return _cached_model(body, tool_name, False)


def _build_model(func: Callable[..., Any], tool_name: str, bound: bool) -> tuple[type[BaseModel], str | None]:
    try:
        hints = get_type_hints(func, include_extras=True)
    except Exception as exc:
        raise TypeError(f"cannot read the annotations of tool {tool_name!r}: {exc}") from exc
    fields: dict[str, Any] = {}
    token_param: str | None = None
    params = list(inspect.signature(func).parameters.values())[1 if bound else 0 :]
    for param in params:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"tool {tool_name!r}: *args/**kwargs cannot be bound; name each argument")
        if param.name not in hints:
            raise TypeError(f"tool {tool_name!r}: parameter {param.name!r} needs a type annotation")
        annotation = hints[param.name]
        if annotation is CancelToken:
            token_param = param.name
            continue
        if annotation in (int, float):
            annotation = Annotated[annotation, BeforeValidator(_reject_bool)]
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (annotation, default)
    model = create_model(
        f"{tool_name}_arguments",
        # ser_json_inf_nan: a NaN reaching an untyped (Any) field must keep a signature of its
        # own instead of being dumped as null, which would collide with a real null.
        __config__=ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True, ser_json_inf_nan="constants"),
        **fields,
    )
    return model, token_param


_cached_model = lru_cache(maxsize=512)(_build_model)


def _body_facts(body: Callable[..., Any]) -> tuple[str | None, bool]:
    """``(docstring, is_async)`` of a body, looked up once per function (bound methods share it)."""
    body = getattr(body, "__func__", body)
    try:
        return _cached_body_facts(body)
    except TypeError:  # unhashable callable
        return _read_body_facts(body)


def _read_body_facts(body: Callable[..., Any]) -> tuple[str | None, bool]:
    return inspect.getdoc(body), inspect.iscoroutinefunction(body)


_cached_body_facts = lru_cache(maxsize=512)(_read_body_facts)


@lru_cache(maxsize=512)
def _schema_text(model: type[BaseModel]) -> str:
    return json.dumps(model.model_json_schema())


def _describe(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors(include_url=False, include_input=False, include_context=False):
        where = ".".join(str(p) for p in error["loc"]) or "arguments"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


# -- running bodies -------------------------------------------------------------------


def _running_loop() -> asyncio.AbstractEventLoop | None:
    return asyncio.events._get_running_loop()  # None outside a running loop (no exception to raise and catch)


async def _run_in_daemon_thread(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """Run a sync body on a worker thread and await it; a body still running when the run stops is abandoned (see :mod:`labkit._workers`)."""
    return await _workers.run_body(fn, kwargs)
