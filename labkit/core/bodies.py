"""What a tool body may be, what its arguments bind to, and how it runs (chapter 4, *The guard, step by step*).

* :func:`_body_shape` reads a body once, when :meth:`labkit.ExecutionScope.tool`
  registers it: it refuses what cannot run as a tool (a class, a generator
  function, an unannotated parameter...) with :class:`~labkit.ToolDefinitionError`,
  and builds the pydantic model its raw arguments bind to. Shapes are shared
  by bodies made of the same parts (code, annotations, defaults), and nothing
  here keeps a body, or what it captured, alive.
* Binding is one path for a JSON text and a mapping passed directly
  (:func:`_decode_json`, then the same pydantic validation): a JSON number
  written with a fraction or an exponent is decoded as an exact decimal, so
  a ``Decimal`` parameter receives every digit the model sent, a ``float``
  or an untyped (``Any``) one receives a ``float`` as before, and an ``int``
  one an ``int`` when the number is whole (docs/guarantees.md, *Signatures*).
* Binding is strict about booleans at any depth: a number never accepts
  ``true``/``false`` and a ``bool`` accepts only them (docs/guarantees.md, *Signatures*).
* A sync body runs on a worker thread (:mod:`labkit.core._workers`: daemon
  threads, reused, never joined) so a deadline can abandon it; whatever it
  raises settles its call. A run abandons what it still waits for after
  :data:`ABANDON_GRACE_S` (docs/guarantees.md, *Cancellation reaches the transport and the bodies*).

The guard itself (the order of the checks, the counters, the events) is in
:mod:`labkit.core.scope`.
"""

from __future__ import annotations

import asyncio
import collections
import collections.abc
import dataclasses
import functools
import inspect
import json
import sys
import threading
import types
from collections.abc import Awaitable, Callable, Mapping
from decimal import Decimal
from enum import Enum
from typing import Annotated, Any, Literal, NamedTuple, Union, get_args, get_origin, get_type_hints

from pydantic import BaseModel, BeforeValidator, ConfigDict, Strict, ValidationError, create_model
from pydantic_core import to_jsonable_python
from typing_extensions import is_typeddict

from . import _workers
from .errors import ToolBodyError, ToolDefinitionError
from .signature import _dumps_str, canonical

__all__ = ["ABANDON_GRACE_S", "CancelToken"]


class CancelToken:
    """The run's cancellation, as seen by a tool body.

    A body receives it by declaring a parameter annotated ``CancelToken``.
    Async bodies are also cancelled at their next ``await``; a sync body runs
    in a thread and can only stop early by looking at the token.
    """

    __slots__ = ("_cancelled", "_event")

    # A threading.Event costs ~2 µs to make and most runs never wait on their token, so the
    # flag is a plain attribute and the Event is made by the first wait(). It pays: with the Event
    # made in __init__, a complete harness run costs 1.066x the CPU (median of 201 interleaved rounds,
    # range 0.60-2.34; `python -m benchmarks.tricks`, issue 21's 5 % bar). _set() writes the
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


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def _not_a_generator(result: Any, tool: str) -> Any:
    """A generator is not a result: the model would read ``<generator object ...>``."""
    if isinstance(
        result, (types.GeneratorType, types.AsyncGeneratorType)
    ):  # inspect.isgenerator/isasyncgen, in one call
        if isinstance(result, types.GeneratorType):
            result.close()
        raise ToolBodyError(tool, "returned a generator; a tool body returns its result (a value, not an iterator)")
    return result


def _json_shaped(value: Any, depth: int = 0) -> Any:
    """Bound arguments dumped in Python mode, as JSON-shaped values with numbers kept as numbers.

    ``model_dump(mode="json")`` writes a ``Decimal`` as a string, which would
    make ``1.10`` and ``1.1`` two signatures; here ``int``, ``float`` and
    ``Decimal`` stay numbers for :func:`~labkit.signature` (docs/guarantees.md, *Signatures*), a set
    or frozenset becomes a list in the order of its items' canonical texts
    (so ``{1, 9}`` and ``{9, 1}`` are one value), and any other value (a date,
    a UUID, an enum...) takes its JSON form.
    """
    if depth > 250:
        raise ValueError("more than 250 levels")
    if value is None or isinstance(value, (bool, int, float, str, Decimal)):
        return value
    if isinstance(value, dict):
        return {str(k) if not isinstance(k, str) else k: _json_shaped(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_shaped(v, depth + 1) for v in value]
    if isinstance(value, (set, frozenset)):  # no order of its own: one canonical order (docs/guarantees.md)
        return sorted((_json_shaped(v, depth + 1) for v in value), key=canonical)
    return _json_shaped(to_jsonable_python(value), depth + 1)  # its JSON form: text, a list, an object


# -- what a body may be, and its argument model ----------------------------------------


class _Shape(NamedTuple):
    """What registration learns from a body: how to call it and how to bind its arguments.

    Chapter 4, *The guard, step by step*, step 1.
    """

    model: type[BaseModel]
    token_param: str | None
    signature_keys: tuple[tuple[str, str], ...]
    is_async: bool
    doc: str | None
    nested: tuple[str, ...]  # fields holding a model, dataclass or TypedDict: see _bool_made_number


def _body_shape(body: Any, tool: str) -> _Shape:
    """Read a body once: refuse what cannot be a body, then build (or reuse) its shape.

    A shape is reused by bodies made of the same parts (the same kind of
    callable, the same code, annotations and defaults), e.g. a closure made
    again for every run; the key holds a code object and annotation values,
    never a body, so nothing here keeps a body, or what it captured, alive.
    """
    code_owner = _code_owner(body, tool)
    key = _shape_key(body, code_owner, tool)
    try:
        entry = _SHAPES.get(key) if key is not None else None
    except TypeError:  # unhashable parts (e.g. a list default): not shared
        key = None
    if key is None:
        return _read_shape(body, code_owner, tool)
    if entry is not None and entry[0] is code_owner.__code__:  # the key holds the code's id: same code?
        return entry[1]
    shape = _read_shape(body, code_owner, tool)
    with _SHAPES_LOCK:
        _SHAPES[key] = (code_owner.__code__, shape)
        while len(_SHAPES) > _SHAPES_MAX:  # bounded: the oldest goes first
            _SHAPES.pop(next(iter(_SHAPES)))
    return shape


_SHAPES: dict[Any, tuple[types.CodeType, _Shape]] = {}
_SHAPES_MAX = 512
_SHAPES_LOCK = threading.Lock()
_MISSING = object()


def _shape_key(body: Any, code_owner: Any, tool: str) -> Any:
    """What a body's shape is made of, or ``None`` when it cannot be told (then it is not shared)."""
    partial = body if isinstance(body, functools.partial) else None
    try:
        key = (
            tool,
            type(body),  # a function, a bound method, a partial, an object with __call__...
            None if partial is None else (type(partial.func), len(partial.args), tuple(sorted(partial.keywords))),
            id(code_owner.__code__),  # hashing a code object costs a walk of its fields; the entry checks identity
            tuple(code_owner.__annotations__.items()),
            # string annotations (``from __future__ import annotations``) resolve in the module
            tuple(
                code_owner.__globals__.get(a, _MISSING)
                for a in code_owner.__annotations__.values()
                if isinstance(a, str)
            ),
        )
    except AttributeError:  # no code object (a builtin)
        return None
    if code_owner.__defaults__ or code_owner.__kwdefaults__:
        defaults = (*(code_owner.__defaults__ or ()), *(code_owner.__kwdefaults__ or {}).items())
        if not all(_plain_value(d) for d in defaults):  # e.g. a per-run object as a default: kept out of the cache
            return None
        key += tuple(_default_key(d) for d in defaults)
    return key


def _default_key(value: Any) -> Any:
    """A default as the key holds it: with its type, so ``1``, ``1.0`` and ``True`` (equal in Python) stay apart.

    ``-0.0`` and ``0.0``, or ``Decimal("1.0")`` and ``Decimal("1.00")``, are equal too: those are told apart by
    their repr.
    """
    if isinstance(value, tuple):
        return (tuple, tuple(_default_key(v) for v in value))
    if isinstance(value, frozenset):
        return (frozenset, frozenset(_default_key(v) for v in value))
    return (type(value), repr(value) if isinstance(value, (float, Decimal)) else value)


def _plain_value(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, float, str, bytes, Decimal, Enum)):
        return True
    if isinstance(value, (tuple, frozenset)):
        return all(_plain_value(v) for v in value)
    return False


def _read_shape(body: Any, code_owner: Any, tool: str) -> _Shape:
    if inspect.isgeneratorfunction(code_owner) or inspect.isasyncgenfunction(code_owner):
        kind = "an async generator" if inspect.isasyncgenfunction(code_owner) else "a generator"
        raise ToolDefinitionError(
            f"tool {tool!r}: the body is {kind} function; a tool body returns its result "
            "(use a plain function or an async def that returns a value)"
        )
    is_async = inspect.iscoroutinefunction(body) or inspect.iscoroutinefunction(code_owner)
    fixed = tuple(body.keywords) if isinstance(body, functools.partial) else ()
    model, token_param = _build_model(body, code_owner, fixed, tool)
    doc = inspect.getdoc(code_owner) if code_owner is not body else inspect.getdoc(body)
    nested = tuple(name for name, f in model.model_fields.items() if _holds_nested_type(f.annotation))
    return _Shape(model, token_param, _signature_keys(model), is_async, doc, nested)


def _code_owner(body: Any, tool: str) -> Any:
    """The function whose code, annotations and docstring a body runs."""
    if inspect.isclass(body):
        raise ToolDefinitionError(
            f"tool {tool!r}: a class is not a tool body (calling it would make an instance); "
            "pass a function, or the method of an instance"
        )
    if isinstance(body, classmethod):
        raise ToolDefinitionError(
            f"tool {tool!r}: a classmethod object taken from a class body cannot be called; "
            "pass it as the class's attribute (Cls.method)"
        )
    if not callable(body):
        raise ToolDefinitionError(f"tool {tool!r}: the body must be callable, not {type(body).__name__}")
    func = body
    while True:  # through every layer: a partial of a bound method of a bound method (Tool binds the state)...
        if isinstance(func, functools.partial):
            func = func.func
        elif inspect.ismethod(func) or isinstance(func, staticmethod):
            func = func.__func__
        else:
            break
    if inspect.isfunction(func):
        return func
    if inspect.isbuiltin(func) or isinstance(func, (types.MethodWrapperType, types.WrapperDescriptorType)):
        return func  # no annotations to read: refused below for its parameters
    # an object with a __call__ method: the method itself is read, not whether it is callable
    call = getattr(type(func), "__call__", None)  # noqa: B004
    if inspect.isfunction(call):
        return call
    return func


def _build_model(body: Any, code_owner: Any, fixed: tuple[str, ...], tool: str) -> tuple[type[BaseModel], str | None]:
    try:
        params = list(inspect.signature(body).parameters.values())
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(f"tool {tool!r}: cannot read the body's parameters: {exc}") from None
    try:
        hints = get_type_hints(code_owner, include_extras=True) if inspect.isfunction(code_owner) else {}
    except Exception as exc:
        raise ToolDefinitionError(f"tool {tool!r}: cannot read the annotations of the body: {exc}") from exc
    fields: dict[str, Any] = {}
    token_param: str | None = None
    for param in params:
        if param.name in fixed:
            continue  # set by the partial, never by the model
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolDefinitionError(f"tool {tool!r}: *args/**kwargs cannot be bound; name each argument")
        if param.kind is param.POSITIONAL_ONLY:
            raise ToolDefinitionError(
                f"tool {tool!r}: parameter {param.name!r} is positional-only; a body is called with named arguments"
            )
        if param.name not in hints:
            raise ToolDefinitionError(f"tool {tool!r}: parameter {param.name!r} needs a type annotation")
        annotation = hints[param.name]
        if annotation is CancelToken:
            token_param = param.name
            continue
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (_no_bool_numbers(annotation), default)
    try:
        model = create_model(
            f"{tool}_arguments",
            # ser_json_inf_nan: a NaN reaching an untyped (Any) field must keep a signature of its
            # own instead of being dumped as null, which would collide with a real null.
            __config__=ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True, ser_json_inf_nan="constants"),
            **fields,
        )
    except Exception as exc:  # pydantic cannot build a schema for an annotation
        raise ToolDefinitionError(f"tool {tool!r}: the parameters cannot become arguments: {exc}") from exc
    return model, token_param


# -- JSON arguments: one decoding, numbers kept exact (docs/guarantees.md, *Signatures*) --


class _JsonFraction(Decimal):
    """A JSON number written with a fraction or an exponent (``0.1``, ``1e3``), decoded exactly.

    It only lives between :func:`_decode_json` and validation: a ``Decimal``
    parameter takes it as the plain ``Decimal`` of the text the model sent,
    a ``float`` or untyped one as a ``float`` (what ``json.loads`` gives), an
    ``int`` one as an ``int`` when it is whole (``42.0``, ``1e3``).
    """

    __slots__ = ()


_DECODER = json.JSONDecoder(parse_float=_JsonFraction)


def _decode_json(text: str | bytes | bytearray) -> Any:
    """A JSON arguments text as Python values, every number exact
    (chapter 4, *The guard, step by step*; docs/guarantees.md, *Signatures*).

    Integers become ``int`` (of any size up to Python's 4300 digits), numbers
    with a fraction or an exponent :class:`_JsonFraction`; ``NaN`` and
    ``Infinity`` (not JSON, but sent by some encoders) become floats, which
    every parameter then refuses as not finite.

    Raises:
        ValueError: with a one-line message (invalid JSON, a number out of
            range, too deep nesting).
    """
    try:
        if isinstance(text, (bytes, bytearray)):
            text = bytes(text).decode("utf-8")
        return _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"Invalid JSON: {exc}") from None
    except RecursionError:
        raise ValueError("recursion limit exceeded: the arguments are nested too deeply") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"Invalid JSON: not UTF-8 ({exc.reason})") from None
    except ValueError as exc:  # an integer of more than 4300 digits
        raise ValueError(f"number out of range: {exc}") from None


_FLOAT_MAX = Decimal(sys.float_info.max)


def _plain_number(kind: type, value: Any) -> Any:
    """A number for a parameter of type ``kind``: booleans refused, a JSON fraction converted."""
    if isinstance(value, bool):
        raise ValueError("a boolean is not a number")
    if type(value) is not _JsonFraction:
        return value
    if issubclass(kind, Decimal):
        return Decimal(value)  # every digit the model sent
    if issubclass(kind, int) and abs(value) <= _FLOAT_MAX and value == value.to_integral_value():
        return int(value)  # 42.0, 1e3 and 1e30 are whole: that int, exactly
    return float(value)  # a float parameter, or an int one given 42.5 or 1e400 (refused, as a float would be)


def _plain_floats(value: Any, depth: int = 0) -> Any:
    """An untyped value with every JSON fraction as a ``float``, as ``json.loads`` gives it."""
    if type(value) is _JsonFraction:
        return float(value)
    if isinstance(value, (list, dict)):
        if depth > 250:
            raise ValueError("arguments nested too deeply (more than 250 levels)")
        if isinstance(value, list):
            return [_plain_floats(v, depth + 1) for v in value]
        return {k: _plain_floats(v, depth + 1) for k, v in value.items()}
    return value


# -- booleans are not numbers, at any depth (docs/guarantees.md, *Signatures*) --


_ONLY_TRUE_FALSE = Strict()
_AS_INT = BeforeValidator(functools.partial(_plain_number, int))
_AS_FLOAT = BeforeValidator(functools.partial(_plain_number, float))
_AS_DECIMAL = BeforeValidator(functools.partial(_plain_number, Decimal))
_UNTYPED = BeforeValidator(_plain_floats)
_CONTAINERS = {
    list, tuple, set, frozenset, dict, collections.deque,
    collections.abc.Sequence, collections.abc.MutableSequence, collections.abc.Set,
    collections.abc.MutableSet, collections.abc.Mapping, collections.abc.MutableMapping,
    collections.abc.Collection, collections.abc.Iterable,
}  # fmt: skip
_UNIONS = (Union, types.UnionType)


def _numbers_only(values: Any) -> bool:
    """Whether some of ``values`` (a Literal's, an Enum's) are numbers and none is a boolean."""
    numbers = [v for v in values if isinstance(v, (int, float, Decimal)) and not isinstance(v, bool)]
    return bool(numbers) and not any(isinstance(v, bool) for v in values)


def _no_bool_numbers(annotation: Any) -> Any:
    """``annotation`` with every number refusing booleans and every ``bool`` taking only true/false.

    Reaches through ``Optional``/unions, ``Annotated``, ``Literal``, enums of numbers and the
    standard containers (list, tuple, set, dict, the ``collections.abc``
    ones), at any depth. Each number also takes a JSON fraction as its own
    type (:func:`_plain_number`), and an untyped place (``Any``, ``object``, a
    bare ``list`` or ``dict``) takes it as a ``float``. A nested pydantic
    model, dataclass or TypedDict validates its own fields by its own rules
    (a ``Decimal`` field there still receives every digit); a boolean that
    became a number there is found after validation by :func:`_bool_made_number`.
    """
    if annotation is bool:
        return Annotated[bool, _ONLY_TRUE_FALSE]
    if isinstance(annotation, type) and issubclass(annotation, (int, float, Decimal)):
        if issubclass(annotation, Decimal):
            return Annotated[annotation, _AS_DECIMAL]
        return Annotated[annotation, _AS_INT if issubclass(annotation, int) else _AS_FLOAT]
    if annotation is Any or annotation is object:
        return Annotated[annotation, _UNTYPED]
    if isinstance(annotation, type) and issubclass(annotation, Enum):  # an enum of numbers is looked up by number
        return Annotated[annotation, _AS_FLOAT] if _numbers_only([m.value for m in annotation]) else annotation
    origin, args = get_origin(annotation), get_args(annotation)
    if not args:
        return Annotated[annotation, _UNTYPED] if annotation in _CONTAINERS else annotation
    if origin is Annotated:
        return Annotated[(_no_bool_numbers(args[0]), *annotation.__metadata__)]
    if origin is Literal:
        return Annotated[annotation, _AS_FLOAT] if _numbers_only(args) else annotation
    if origin in _UNIONS:
        return Union[tuple(_no_bool_numbers(a) for a in args)]  # noqa: UP007  (built from a tuple)
    if origin in _CONTAINERS:
        inner = tuple(a if a is Ellipsis else _no_bool_numbers(a) for a in args)
        try:
            return origin[inner if len(inner) > 1 else inner[0]]
        except TypeError:
            return annotation
    return annotation


def _holds_nested_type(annotation: Any) -> bool:
    """Whether a pydantic model, dataclass or TypedDict appears anywhere in ``annotation``."""
    if isinstance(annotation, type) and (
        issubclass(annotation, BaseModel) or dataclasses.is_dataclass(annotation) or is_typeddict(annotation)
    ):
        return True
    return any(_holds_nested_type(a) for a in get_args(annotation) if a is not Ellipsis)


def _bool_made_number(raw: Any, bound: Any, where: str = "") -> str | None:
    """Where a boolean the caller sent became a number inside a nested type, or ``None``
    (docs/guarantees.md, *Signatures*).

    A nested model, dataclass or TypedDict validates its fields by its own
    (lax) rules, in which ``true`` is the int ``1``; :func:`_no_bool_numbers`
    cannot reach inside it. This walks what was sent beside what was bound,
    after validation, and finds a boolean that arrived as a number.
    """
    if isinstance(raw, bool):
        value = bound.value if isinstance(bound, Enum) else bound  # an enum member looked up by 1 or 0
        is_number = isinstance(value, (int, float, Decimal)) and not isinstance(value, bool)
        return (where or "arguments") if is_number else None
    if isinstance(bound, BaseModel) and isinstance(raw, Mapping):
        pairs = [(raw.get(f.alias or n, raw.get(n)), getattr(bound, n), n) for n, f in type(bound).model_fields.items()]
    elif dataclasses.is_dataclass(bound) and not isinstance(bound, type) and isinstance(raw, Mapping):
        pairs = [(raw.get(f.name), getattr(bound, f.name), f.name) for f in dataclasses.fields(bound)]
    elif isinstance(bound, Mapping) and isinstance(raw, Mapping):
        pairs = [(v, bound[k], str(k)) for k, v in raw.items() if k in bound]
    elif isinstance(bound, (list, tuple)) and isinstance(raw, (list, tuple)) and len(raw) == len(bound):
        pairs = [(r, b, str(i)) for i, (r, b) in enumerate(zip(raw, bound, strict=True))]
    elif isinstance(bound, (set, frozenset)) and isinstance(raw, (list, tuple, set, frozenset)):
        sent_bool = any(isinstance(r, bool) for r in raw)  # no positions: did a boolean vanish into the numbers?
        return (where or "arguments") if sent_bool and not any(isinstance(b, bool) for b in bound) else None
    else:
        return None
    for r, b, key in pairs:
        found = _bool_made_number(r, b, f"{where}.{key}" if where else key)
        if found:
            return found
    return None


@functools.lru_cache(maxsize=512)
def _signature_keys(model: type[BaseModel]) -> tuple[tuple[str, str], ...]:
    """``(field, '"field":')`` pairs of a model's fields in code-point order, as canonical() writes object keys."""
    return tuple((field, _dumps_str(field) + ":") for field in sorted(model.model_fields))


@functools.lru_cache(maxsize=512)
def _schema_text(model: type[BaseModel]) -> str:
    return json.dumps(model.model_json_schema())


def _describe(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors(include_url=False, include_input=False, include_context=False):
        where = ".".join(str(p) for p in error["loc"]) or "arguments"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


# -- running bodies -------------------------------------------------------------------


ABANDON_GRACE_S = 0.1
"""Seconds a cancelled body (or a run's loop) gets to finish before it is abandoned
(docs/guarantees.md, *Cancellation reaches the transport and the bodies*)."""

_abandoned: set[asyncio.Task[Any]] = set()  # kept referenced until they end (a pending task must not be collected)


async def _cancel_and_abandon(*tasks: asyncio.Task[Any]) -> None:
    """Cancel ``tasks``, give them ``ABANDON_GRACE_S`` to end, then abandon those still running.

    A body may ignore its cancellation (there is no forced stop in Python):
    the run does not wait for it (docs/guarantees.md, *Cancellation reaches the transport and the bodies*).
    An abandoned task keeps running on its loop; what it returns or raises later is dropped, and it is taken
    out of the loop's task list so that closing the loop (``asyncio.run``,
    :func:`labkit.run`) does not wait for it either.
    """
    for task in tasks:
        task.cancel()
    if not tasks:
        return
    try:
        await asyncio.wait(tasks, timeout=ABANDON_GRACE_S)
    finally:  # also when the caller cancels during the grace
        for task in tasks:
            if not task.done():
                _abandon(task)


def _abandon(task: asyncio.Task[Any]) -> None:
    _abandoned.add(task)
    task.add_done_callback(_dropped_result)
    unregister = getattr(asyncio.tasks, "_unregister_task", None)  # asyncio's own registry of a loop's tasks
    if unregister is not None:
        unregister(task)


def _dropped_result(task: asyncio.Task[Any]) -> None:
    _abandoned.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved, so nothing is logged: a late result or error is dropped


def _running_loop() -> asyncio.AbstractEventLoop | None:
    """The running loop of this thread, ``None`` outside one (only :meth:`GuardedTool.invoke` asks)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


async def _run_in_daemon_thread(fn: Callable[..., Any], kwargs: dict[str, Any], tool: str) -> Any:
    """Run a sync body on a worker thread (:mod:`labkit.core._workers`), await its result, abandon it on cancellation.

    Python cannot stop a thread: a cancelled run stops waiting, the body goes
    on alone and its late result is dropped (why not ``asyncio.to_thread``:
    see :mod:`labkit.core._workers`).

    Every exception the body raises settles the call: an ``Exception`` or a
    cancellation is handed over as it is; ``StopIteration`` (which a future
    cannot hold) and any other ``BaseException`` (a ``KeyboardInterrupt`` or
    ``SystemExit`` raised in a worker thread is the body's own, never the
    caller's) become :class:`~labkit.ToolBodyError`.
    """

    def body() -> Any:
        try:
            return fn(**kwargs)
        except StopIteration as exc:
            raise _body_error(tool, exc) from exc
        except (Exception, asyncio.CancelledError):
            raise
        except BaseException as exc:  # the body's own KeyboardInterrupt, SystemExit, ...: settle the call
            raise _body_error(tool, exc) from exc

    return await _workers.run_body(body, {})


def _body_error(tool: str, exc: BaseException) -> ToolBodyError:
    error = ToolBodyError(tool, f"raised {type(exc).__name__}: {exc}")
    error.__cause__ = exc
    return error
