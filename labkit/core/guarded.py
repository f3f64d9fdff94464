"""The guarded tool: every call binds, passes the guard, runs the body, and is checked again.

Chapter 4, *The guard, step by step*; docs/guarantees.md, *Limits are exact* and *Every call
settles, whatever the body does*.

1. **bind** the raw arguments to the body's declared types (:func:`labkit.core.binding.bind`); a
   failure never reaches the guard: nothing is counted, no body runs;
2. **admit** under the scope's one lock (:meth:`labkit.ExecutionScope._admit`): the cancellation
   check, the rules of :data:`~labkit.core.rules.GUARD_RULES` in order, then the reservation
   (attempts + 1, signature + 1, a ``ToolCall`` event), which stands even if the body fails;
3. run the **body** outside the lock, with the run's cancellation (:mod:`labkit.core.bodies`);
   whatever it raises settles the call;
4. **re-check** cancellation: a run that stopped while the body ran drops its result.

The raw body is never handed out, so a direct call (outside any loop) goes through the same guard.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

from ._machinery.shapes import schema_text
from ._machinery.sync import run_sync
from .arguments import _json_shaped
from .binding import Shape, _body_shape, bind
from .bodies import _awaitable, _awaited, _not_a_generator, _run_in_daemon_thread, _running_loop
from .cancellation import CancelToken
from .errors import RunHalted, ToolArgumentsError, ToolBodyError
from .signature import NonFiniteNumber, _encode_str, _number, signature

__all__ = ["GuardedTool"]


class Guard(Protocol):
    """What a guarded tool asks of the scope that made it (:class:`~labkit.ExecutionScope`)."""

    _token: CancelToken

    def _admit(self, tool: GuardedTool, key: str) -> int: ...

    def check_cancellation(self) -> None: ...


class GuardedTool:
    """A tool made by an :class:`~labkit.ExecutionScope`; every invocation passes its guard.

    Attributes:
        name: the name the model uses.
        capability: the capability the scope must grant.
        description: the text shown to the model.
        arguments_model: the pydantic model the raw arguments bind to.
    """

    __slots__ = (
        "_body",
        "_is_async",
        "_nested",
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
        scope: Guard,
        name: str,
        capability: str,
        body: Callable[..., Any],
        description: str | None,
        shape: Shape | None = None,
    ) -> None:
        shape = _body_shape(body, name) if shape is None else shape  # a declared labkit.Tool read its body once
        self._scope = scope
        self._body = body
        self.name = name
        self.capability = capability
        self.arguments_model = shape.model
        self._token_param = shape.token_param
        self._signature_keys = shape.signature_keys
        self._is_async = shape.is_async
        self._nested = shape.nested
        self.description = description or shape.doc or name

    def __repr__(self) -> str:
        return f"<GuardedTool {self.name!r} needs {self.capability!r}>"

    def json_schema(self) -> dict[str, Any]:
        """The JSON Schema of the tool's arguments (an object), as shown to a model.

        Returns a fresh dict on every call (built from a per-model cached text:
        generating a schema costs about 0.5 ms, decoding the cached text a few µs).
        """
        schema: dict[str, Any] = json.loads(schema_text(self.arguments_model))
        return schema

    def bind(self, arguments: str | bytes | Mapping[str, Any] | None) -> BaseModel:
        """Bind raw arguments (a JSON object text or a mapping) to the declared types: step 1.

        A JSON text is decoded with every number exact, then validated like a
        mapping passed directly: one path, so ``{"amount": 0.10000000000000000000001}``
        reaches a ``Decimal`` parameter with all its digits, and a value passed
        directly and its JSON give one signature. Booleans are never numbers, at any
        depth, and a ``bool`` accepts only ``true``/``false`` (docs/guarantees.md, *Signatures*).

        Raises:
            ToolArgumentsError: not a JSON object, wrong types, missing or
                extra fields, non-finite numbers, too deep nesting.
        """
        return bind(self.name, self.arguments_model, self._nested, arguments)

    # -- the four steps, one after the other ---------------------------------------------------

    async def ainvoke(self, arguments: str | bytes | Mapping[str, Any] | None = None) -> Any:
        """Bind, guard and run the body; return what the body returned.

        A sync body runs on a daemon worker thread (so a deadline can abandon it);
        an async body is awaited. Whatever the body raises settles this call.

        Raises:
            ToolArgumentsError: binding failed (nothing counted, no body).
            RunHalted: the guard refused the attempt (``refused``: body not
                entered), or the run stopped while the body ran, including a
                refusal of a call the body made itself (``refused`` is
                ``False``: the attempt counted, its result is dropped).
            ToolBodyError: the body raised something that is neither an
                ``Exception`` nor cancellation (``KeyboardInterrupt`` from an
                async body excepted: that one stays the caller's interrupt),
                raised ``StopIteration``, or returned a generator.
            asyncio.CancelledError: the run was cancelled.
            Exception: whatever else the body raised (the attempt still counts).
        """
        bound = bind(self.name, self.arguments_model, self._nested, arguments)  # 1. bind
        key, kwargs = self._key_and_kwargs(bound)
        self._scope._admit(self, key)  # 2. guard: cancellation, the rules, reserve
        if self._token_param is not None:
            kwargs = {**kwargs, self._token_param: self._scope._token}
        try:  # 3. the body, outside the lock
            if self._is_async:
                result = await self._body(**kwargs)
            else:
                result = await _run_in_daemon_thread(self._body, kwargs, self.name)
            if _awaitable(result):  # declared sync, but gave an awaitable: await it
                result = await result
        except RunHalted as halt:
            raise self._dropped(halt) from halt
        except (asyncio.CancelledError, KeyboardInterrupt, Exception):
            raise
        except BaseException as exc:  # SystemExit, GeneratorExit, ... raised by the body itself
            raise ToolBodyError(self.name, f"raised {type(exc).__name__}: {exc}") from exc
        self._check_after_body()  # 4. the run may have stopped meanwhile
        return _not_a_generator(result, self.name)

    def invoke(self, arguments: str | bytes | Mapping[str, Any] | None = None) -> Any:
        """Invoke directly, outside any loop, through the same guard as :meth:`ainvoke`.

        A sync body runs in the calling thread (so a ``KeyboardInterrupt``
        there is the caller's and propagates); an async body, or any call
        made while this thread runs an event loop (Jupyter), runs to its end
        on a private event loop. Safe to call from many threads at once.

        Raises:
            As :meth:`ainvoke`.
        """
        if self._is_async or _running_loop() is not None:
            return run_sync(self.ainvoke(arguments))  # the same interrupt handling as labkit.run
        bound = bind(self.name, self.arguments_model, self._nested, arguments)
        key, kwargs = self._key_and_kwargs(bound)
        self._scope._admit(self, key)
        if self._token_param is not None:
            kwargs = {**kwargs, self._token_param: self._scope._token}
        try:
            result = self._body(**kwargs)
            if _awaitable(result):
                result = run_sync(_awaited(result))
        except RunHalted as halt:
            raise self._dropped(halt) from halt
        except StopIteration as exc:
            raise ToolBodyError(self.name, f"raised StopIteration: {exc}") from exc
        self._check_after_body()
        return _not_a_generator(result, self.name)

    __call__ = invoke

    def _dropped(self, halt: RunHalted) -> RunHalted:
        """A halt raised inside this admitted body (a call it made was refused): not a refusal of this call."""
        if not halt.refused:
            return halt
        return RunHalted(
            halt.reason, f"the run stopped ({halt.reason.value}) while {self.name!r} ran: {halt}", refused=False
        )

    def _check_after_body(self) -> None:
        """Step 4: drop the result if the run stopped while the body ran (it was admitted, not refused).

        Raises:
            RunHalted: ``refused=False``; the attempt counted, its result is dropped.
            asyncio.CancelledError: the caller cancelled the run meanwhile.
            ScopeStateError: the run ended while the body ran.
        """
        try:
            self._scope.check_cancellation()
        except RunHalted as halt:
            raise RunHalted(
                halt.reason,
                f"the run stopped ({halt.reason.value}) while {self.name!r} ran; its result is dropped",
                refused=False,
            ) from None

    def _key_and_kwargs(self, bound: BaseModel) -> tuple[str, dict[str, Any]]:
        """The repetition signature of the bound arguments and the body's keyword arguments.

        docs/guarantees.md, *Signatures*.
        """
        kwargs = bound.__dict__  # exactly the declared fields (extra fields are forbidden); read, never changed
        # str, int, bool and None values are written here directly: keys in code-point order
        # (sorted once per model), each value as canonical() writes it. Any other value (a float,
        # a Decimal, a container, a model...) takes the general path.
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
            else:
                return self._signature(bound), kwargs
        return self.name + ":{" + ",".join(parts) + "}", kwargs

    def _signature(self, bound: BaseModel) -> str:
        """The repetition signature of bound arguments; a value too deep to serialise fails binding."""
        try:
            return signature(self.name, _json_shaped(bound.model_dump(mode="python")))
        except NonFiniteNumber:
            raise ToolArgumentsError(
                self.name, "a number is not finite (NaN, Infinity, or out of range such as 1e400)"
            ) from None
        except PydanticSerializationError as exc:  # e.g. a default value that is an arbitrary object
            raise ToolArgumentsError(self.name, f"a value has no JSON form for its signature ({exc})") from None
        except (ValueError, RecursionError) as exc:  # too deep to walk or to serialise
            raise ToolArgumentsError(self.name, f"arguments nested too deeply ({exc})") from None
