"""What a framework is handed of the model's calls, and how its history is read back (issue 19).

A framework checks a reply's calls before its loop runs them: it parses and
validates their arguments against the tool's schema, refuses unknown tool
names and repeated call ids in its own way (an exception, a retry, a merged
call), and counts its own errors. labkit's own loop does none of that: the
guarded tool's binding is the only argument check, and an unknown tool, a
repeated call id or a reply cut at the output-token cap each get one error
result that the model reads (:mod:`labkit.loops.agents`). So every adapter
hands its framework each call **wrapped** (:func:`wrap`):

* the framework sees one argument, ``labkit_call``, an object holding the
  tool name and the model's argument text exactly as it was sent (a
  permissive schema, :data:`SCHEMA`): the framework's parser and validator
  always accept it, and the tool hands the raw text to labkit's guard;
* a call labkit's loop would not run (unknown tool, repeated call id, a cut
  reply) is routed to one reserved framework tool, :data:`NOT_RUN`, whose
  envelope carries the result labkit's loop gives: that tool reaches no
  middleware, guard or body. A reply whose ids repeat is handed as one call
  per distinct id, the first carrying the whole batch so that reading the
  history back (:func:`unwrap`) gives the model's reply as it was.

Reading back is what makes the requests on the wire the same as labkit's
loop sends: the model reads its own calls, text for text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from ..loops.agents import CUT, UNKNOWN_TOOL, _repeated_error, _repeated_ids
from ..transports.chat import Message, ToolCall

__all__ = [
    "FIELD",
    "NOT_RUN",
    "SCHEMA",
    "Wrapped",
    "envelope",
    "framework_id",
    "model_id",
    "not_run_result",
    "unwrap",
    "wrap",
]

FIELD = "labkit_call"
"""The one argument every framework tool takes: ``{"name": ..., "arguments": <the model's text>, ...}``."""

NOT_RUN = "labkit_not_run"  # also labkit.adapters._NOT_RUN, which refuses a tool of that name
"""The reserved framework tool a call labkit's loop would not run is routed to (it returns the call's result)."""

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {FIELD: {"type": "object", "additionalProperties": True}},
    "required": [FIELD],
    "additionalProperties": True,
}
"""The permissive schema each framework tool declares (the model is shown labkit's own schema, not this one)."""


class Wrapped(NamedTuple):
    """One call as the framework is handed it: its id, the framework tool's name, the envelope as JSON text."""

    id: str
    name: str
    arguments: str


def wrap(reply: Message, known: Sequence[str], serial: int = 0) -> list[Wrapped]:
    """The calls of ``reply`` as the framework is handed them (see the module docstring).

    Args:
        reply: the model's reply, as labkit's counting client returned it.
        known: the names of the agent's tools, in the agent's order.
        serial: this reply's number in the run; it makes the framework's call ids
            unique across the run (:func:`framework_id`), whatever ids the model reuses.

    Returns:
        One :class:`Wrapped` per call, or per distinct id when the ids repeat.
    """
    calls = reply.tool_calls
    if not calls:
        return []
    repeated = _repeated_ids(calls)
    if repeated or reply.truncated:
        text = _cut_text() if reply.truncated else _repeated_error(repeated)  # labkit's loop checks the cut first
        batch = [[c.id, c.name, c.arguments] for c in calls]
        out = []
        for index, call_id in enumerate(dict.fromkeys(c.id for c in calls)):
            body = {
                "id": call_id,
                "name": NOT_RUN,
                "arguments": "",
                "result": text,
                "batch": batch if index == 0 else [],
            }
            out.append(Wrapped(framework_id(call_id, serial, index), NOT_RUN, _dumps(body)))
        return out
    out = []
    for index, call in enumerate(calls):
        fid = framework_id(call.id, serial, index)
        if call.name in known:
            out.append(Wrapped(fid, call.name, _dumps({"id": call.id, "name": call.name, "arguments": call.arguments})))
        else:
            result = f"{UNKNOWN_TOOL} {call.name!r}; available tools: {', '.join(known) or 'none'}"
            body = {"id": call.id, "name": call.name, "arguments": call.arguments, "result": result}
            out.append(Wrapped(fid, NOT_RUN, _dumps(body)))
    return out


_ID_MARK = "~labkit-"


def framework_id(call_id: str, serial: int, index: int) -> str:
    """The id the framework is handed for a call: the model's id, made unique in the run.

    A framework may refuse an id it saw in an earlier reply (the Agents SDK
    does); labkit's loop lets the model reuse one. :func:`model_id` reads it back.
    """
    return f"{call_id}{_ID_MARK}{serial}.{index}"


def model_id(framework_call_id: str) -> str:
    """The model's own call id behind an id from :func:`framework_id` (any other id as it is)."""
    head, mark, tail = framework_call_id.rpartition(_ID_MARK)
    return head if mark and tail.replace(".", "").isdigit() else framework_call_id


def _cut_text() -> str:
    return f'{CUT} (finish_reason "length") before this call was complete; it was not run, ask again'


def _dumps(body: Mapping[str, Any]) -> str:
    return json.dumps({FIELD: dict(body)}, ensure_ascii=False)


def envelope(arguments: Any) -> dict[str, Any] | None:
    """The envelope in what a framework hands a tool or keeps in its history (text or parsed), else ``None``."""
    if isinstance(arguments, (str, bytes, bytearray)):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    if isinstance(arguments, Mapping):
        body = arguments.get(FIELD)
        if isinstance(body, Mapping) and isinstance(body.get("name"), str):
            return dict(body)
    return None


def not_run_result(body: Mapping[str, Any]) -> str:
    """The result the reserved tool returns: the one labkit's loop gives that call."""
    return str(body.get("result", "error: this call was not run"))


def unwrap(call_id: str, name: str, arguments: Any) -> list[ToolCall]:
    """The model's own call(s) behind one framework call of the history (none for a repeated id's later copies).

    A call that carries no envelope (not handed by :func:`wrap`) is read as it is.
    """
    body = envelope(arguments)
    if body is None:
        text = arguments if isinstance(arguments, str) else json.dumps(arguments if arguments is not None else {})
        return [ToolCall(id=model_id(call_id), name=name, arguments=text)]
    if "batch" in body:
        return [ToolCall(id=i, name=n, arguments=a) for i, n, a in body["batch"]]
    return [ToolCall(id=model_id(call_id), name=body["name"], arguments=str(body.get("arguments", "")))]
