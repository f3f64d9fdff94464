"""Binding, step 1 of every tool call: what a body may be, the model its arguments bind to, and bind.

Chapter 4, *The guard, step by step*, step 1; docs/guarantees.md, *Bad input from the model*.

* :func:`_body_shape` reads a body once, when :meth:`labkit.ExecutionScope.tool` registers it:
  it refuses what cannot run as a tool (a class, a generator function, an unannotated
  parameter...) with :class:`~labkit.ToolDefinitionError`, and builds the pydantic model its raw
  arguments bind to, every type rewritten by the value rules of :mod:`labkit.core.arguments`.
  (Shapes are shared by bodies made of the same parts: :mod:`labkit.core._machinery.shapes`.)
* :func:`bind` is one path for a JSON text and a mapping passed directly: decode (numbers
  exact), validate, then look inside nested types for a boolean that became a number. A failure
  is a :class:`~labkit.ToolArgumentsError`: it never reaches the guard, nothing is counted.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Mapping
from typing import Any, NamedTuple, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from ._machinery.shapes import shared_shape, signature_keys
from .arguments import _bool_made_number, _decode_json, _holds_nested_type, _no_bool_numbers
from .cancellation import CancelToken
from .errors import ToolArgumentsError, ToolDefinitionError

__all__ = ["bind"]


def bind(
    tool: str, model: type[BaseModel], nested: tuple[str, ...], arguments: str | bytes | Mapping[str, Any] | None
) -> BaseModel:
    """Bind raw ``arguments`` (a JSON object text, a mapping or ``None``) to ``model``, the tool's argument model.

    ``nested`` names the fields holding a model, dataclass or TypedDict (see :func:`_bool_made_number`).

    Raises:
        ToolArgumentsError: not a JSON object, wrong types, missing or extra fields, non-finite
            numbers, too deep nesting, a boolean where a number is declared.
    """
    if isinstance(arguments, (str, bytes, bytearray)):  # a JSON text: decoded first, numbers exact
        try:
            arguments = _decode_json(arguments)
        except ValueError as exc:
            raise ToolArgumentsError(tool, f"arguments: {exc}") from None
        if not isinstance(arguments, dict):
            raise ToolArgumentsError(tool, f"arguments: Input should be an object, not {_json_kind(arguments)}")
    elif arguments is None:
        arguments = {}
    elif not isinstance(arguments, Mapping):
        raise ToolArgumentsError(tool, f"expected a JSON object, got {type(arguments).__name__}")
    try:  # one path for a decoded text and a mapping passed directly (docs/guarantees.md, *Signatures*)
        bound = model.model_validate(arguments)
    except ValidationError as exc:
        raise ToolArgumentsError(tool, _describe(exc)) from None
    for field in nested:  # inside a nested model, dataclass or TypedDict: a boolean is still not a number
        where = _bool_made_number(arguments.get(field), getattr(bound, field), field)
        if where:
            raise ToolArgumentsError(tool, f"{where}: a boolean is not a number")
    return bound


def _json_kind(value: Any) -> str:
    """The JSON name of a decoded value's kind, for a one-line error."""
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"


def _describe(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors(include_url=False, include_input=False, include_context=False):
        where = ".".join(str(p) for p in error["loc"]) or "arguments"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


# -- what a body may be, and its argument model ----------------------------------------


class Shape(NamedTuple):
    """What registration learns from a body: how to call it and how to bind its arguments.

    Chapter 4, *The guard, step by step*, step 1.
    """

    model: type[BaseModel]
    token_param: str | None
    signature_keys: tuple[tuple[str, str], ...]
    is_async: bool
    doc: str | None
    nested: tuple[str, ...]  # fields holding a model, dataclass or TypedDict: see _bool_made_number


def _body_shape(body: Any, tool: str) -> Shape:
    """Read a body once: refuse what cannot be a body, then build (or reuse) its shape."""
    code_owner = _code_owner(body, tool)
    return shared_shape(body, code_owner, tool, lambda: _read_shape(body, code_owner, tool))


def _read_shape(body: Any, code_owner: Any, tool: str) -> Shape:
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
    return Shape(model, token_param, signature_keys(model), is_async, doc, nested)


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
