"""A small OpenAI-compatible chat endpoint for tests, on a free 127.0.0.1 port.

It replays a labkit script over the real wire format: each HTTP request is
turned back into a :class:`labkit.ChatRequest` and answered by a
:class:`labkit.ScriptedTransport` running the very script a scenario uses
(``labkit.SCENARIOS[name].script``), so the scripted and live paths share
one script. Replies are chat-completion JSON, or server-sent events with
text deltas, tool-call deltas (id and name first, arguments in pieces), a
finish reason, usage and ``[DONE]``.

How a reply is written on the wire is a ``dialect`` (``tests/dialects.py``):
the default keeps labkit's own call ids and the reference shape; the
others replay what Ollama, llama.cpp, vLLM, LM Studio, SGLang ... send.

Script steps map to the wire like this: ``Hang`` stalls (bounded by
``stall_s`` and by the server stopping); ``Fail(ConnectionError)`` drops
the connection without an answer. ``reply`` replaces the script with a
fixed ``(status, body)`` for error tests.

Use it as a context manager; it stops itself on exit::

    with FakeOpenAIServer(SCENARIOS["complete"].script) as server:
        profile = LiveProfile(base_url=server.base_url, model="fake", max_retries=0)
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from dialects import Dialect

from labkit import ChatRequest, Message, ProviderUnavailable, ScriptedTransport, ToolCall, ToolSpec
from labkit.transports.scripted import Script

__all__ = ["FakeOpenAIServer"]

Reply = Callable[[dict[str, Any]], "tuple[int, dict[str, Any] | bytes] | tuple[int, bytes, str]"]


class FakeOpenAIServer:
    """An OpenAI-compatible ``/v1/chat/completions`` endpoint driven by a labkit script.

    Args:
        script: the steps (or step function) to replay; one ScriptedTransport per server.
        reply: instead of the script, ``body_json -> (status, json_or_bytes[, content_type])``.
        model: when set, any other requested model gets a 404 "model not found".
        api_key: when set, any other bearer key gets a 401.
        stall_s: the longest a ``Hang`` step (or a stalled reply) holds a request.
        dialect: how replies are written on the wire (default: the reference
            shape with labkit's own call ids).

    Attributes:
        requests: the JSON bodies received, in order.
        authorizations: the ``Authorization`` headers received, in order.
        base_url: ``http://127.0.0.1:<port>/v1`` once started.
    """

    __test__ = False

    def __init__(
        self,
        script: Script | None = None,
        *,
        reply: Reply | None = None,
        model: str | None = None,
        api_key: str | None = None,
        stall_s: float = 5.0,
        dialect: Dialect | None = None,
    ) -> None:
        self.dialect = dialect if dialect is not None else LABKIT_IDS
        self.transport = ScriptedTransport(script if script is not None else ["ok"])
        self.reply = reply
        self.model = model
        self.api_key = api_key
        self.stall_s = stall_s
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[str | None] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.fake = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    # -- answering ----------------------------------------------------------------------

    def answer(self, body: dict[str, Any]) -> list[Any] | None:
        """The script's chunks for one request, or ``None`` to drop the connection."""
        request = _chat_request(body)
        with self._lock:  # one model call at a time, like one run's loop
            try:
                return asyncio.run(self._collect(request))
            except ProviderUnavailable:
                return None

    async def _collect(self, request: ChatRequest) -> list[Any]:
        async def gather() -> list[Any]:
            return [chunk async for chunk in self.transport.send(request)]

        task = asyncio.ensure_future(gather())
        waited = 0.0
        while not task.done():  # a Hang step waits here, bounded and stoppable
            if self.stopping.is_set() or waited >= self.stall_s:
                task.cancel()
                raise ProviderUnavailable("the fake server stalled")
            await asyncio.wait([task], timeout=0.02)
            waited += 0.02
        return task.result()


def _chat_request(body: dict[str, Any]) -> ChatRequest:
    messages = []
    for m in body.get("messages", []):
        calls = tuple(
            ToolCall(id=c["id"], name=c["function"]["name"], arguments=c["function"]["arguments"])
            for c in m.get("tool_calls") or ()
        )
        messages.append(
            Message(role=m["role"], text=m.get("content"), tool_calls=calls, tool_call_id=m.get("tool_call_id"))
        )
    tools = tuple(
        ToolSpec(
            name=t["function"]["name"],
            description=t["function"].get("description", ""),
            parameters=t["function"]["parameters"],
        )
        for t in body.get("tools") or ()
    )
    return ChatRequest(
        messages=tuple(messages), tools=tools, stream=bool(body.get("stream")), max_output_tokens=body.get("max_tokens")
    )


def _usage(body: dict[str, Any], chunks: list[Any]) -> dict[str, int]:
    prompt = sum(len(str(m.get("content") or "").split()) for m in body.get("messages", []))
    completion = sum(len(c.text.split()) + len(c.tool_calls) for c in chunks)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


LABKIT_IDS = Dialect("reference, labkit's ids", id_style="{id}")
"""The reference wire shape, keeping the script's own call ids (so transcripts compare equal)."""


def sse(events: list[dict[str, Any] | str]) -> bytes:
    """A server-sent event stream: each JSON object (or raw string) as one ``data:`` line."""
    lines = [e if isinstance(e, str) else json.dumps(e) for e in events]
    return b"".join(b"data: " + line.encode() + b"\n\n" for line in lines)


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    """One ``chat.completion.chunk`` with choice 0."""
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [choice],
        **extra,
    }


def completion(message: dict[str, Any], finish: str | None = "stop") -> dict[str, Any]:
    """One non-streamed ``chat.completion`` with choice 0."""
    choice = {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m", "choices": [choice]}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # one request per connection; a stream ends when the connection closes

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    @property
    def fake(self) -> FakeOpenAIServer:
        return self.server.fake  # type: ignore[attr-defined]

    def _json(
        self,
        status: int,
        payload: dict[str, Any] | bytes,
        content_type: str = "application/json",
        framing: str = "length",
    ) -> None:
        """Send a body, framed as asked.

        ``framing``: ``"length"`` (Content-Length), ``"close"`` (the body ends
        when the connection closes), ``"chunked"``; ``"cut-length"`` and
        ``"cut-chunked"`` close the connection before the announced end.
        """
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if framing in ("length", "cut-length"):
            self.send_header("Content-Length", str(len(data) + (100 if framing == "cut-length" else 0)))
        elif framing in ("chunked", "cut-chunked"):
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if framing in ("chunked", "cut-chunked"):
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            if framing == "chunked":
                self.wfile.write(b"0\r\n\r\n")
        else:
            self.wfile.write(data)
        self.wfile.flush()
        self.close_connection = True

    def _error(self, status: int, message: str, kind: str) -> None:
        self._json(status, {"error": {"message": message, "type": kind, "code": None}})

    def do_POST(self) -> None:
        fake = self.fake
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            return self._error(400, "body is not JSON", "invalid_request_error")
        fake.requests.append(body)
        fake.authorizations.append(self.headers.get("Authorization"))
        if self.path.rstrip("/") != "/v1/chat/completions":
            return self._error(404, f"no route {self.path}", "not_found")
        if fake.api_key is not None and self.headers.get("Authorization") != f"Bearer {fake.api_key}":
            return self._error(401, "invalid api key", "authentication_error")
        if fake.model is not None and body.get("model") != fake.model:
            return self._error(404, f"model {body.get('model')!r} not found", "not_found_error")
        if fake.reply is not None:
            return self._json(*fake.reply(body))
        chunks = fake.answer(body)
        if chunks is None:
            self.close_connection = True
            return  # dropped: no status line at all
        if body.get("stream"):
            return self._stream(body, chunks)
        text = "".join(c.text for c in chunks)
        calls = [call for c in chunks for call in c.tool_calls]
        message, finish = fake.dialect.message(text, calls)
        self._json(
            200,
            {
                "id": f"chatcmpl-{len(fake.requests)}",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model"),
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": _usage(body, chunks),
            },
        )

    def _stream(self, body: dict[str, Any], chunks: list[Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        base = {"id": f"chatcmpl-{len(self.fake.requests)}", "object": "chat.completion.chunk", "created": 0}
        base["model"] = body.get("model")

        def event(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> None:
            payload = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
            self.wfile.write(b"data: " + json.dumps(payload).encode() + b"\n\n")
            self.wfile.flush()

        text = "".join(c.text for c in chunks)
        calls = [call for c in chunks for call in c.tool_calls]
        for delta, finish in self.fake.dialect.deltas(text, calls):
            event(delta, finish)
        if self.fake.dialect.usage == "last":
            usage = {**base, "choices": [], "usage": _usage(body, chunks)}
            self.wfile.write(b"data: " + json.dumps(usage).encode() + b"\n\n")
        if (body.get("stream_options") or {}).get("include_usage"):
            usage = {**base, "choices": [], "usage": _usage(body, chunks)}
            self.wfile.write(b"data: " + json.dumps(usage).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
