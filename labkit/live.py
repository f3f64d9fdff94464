"""The live transport: a real OpenAI-compatible chat endpoint from one explicit profile (SPEC §6 "Live").

Anything that speaks the chat-completions API works: Ollama, LM Studio, the
llama.cpp server, vLLM. The transport sits behind the same one-method
:class:`~labkit.Transport` protocol as the scripted one, so the same
:class:`~labkit.CountingClient`, scope, guarded tools and events bound it.

The profile (:class:`LiveProfile`) says three things and nothing is guessed:
the base URL, the model name, and the *name* of the environment variable
that holds the key (or no key). Its values come from, highest first:
explicit arguments (the console's flags), the environment
(``LABKIT_BASE_URL``, ``LABKIT_MODEL``, ``LABKIT_API_KEY_ENV``), a small
TOML file (``--profile FILE`` or ``LABKIT_PROFILE``), then the documented
defaults, which point at a local Ollama. There is no fallback to any hosted
service and no embeddings. The key is read from its variable when the
transport is made, kept private, and never printed, logged or put in an
event or a span.

Foreign errors are mapped once, at this boundary (:data:`ERROR_MAP`,
:func:`map_error`), and always ``raise ... from`` the original:

* connection refused, DNS failure, timeout, 408/409/429/5xx after the
  client's retries -> :class:`~labkit.ProviderUnavailable` (status
  ``ProviderUnavailable``, console exit 2), whose message names the URL tried;
* 400/401/403/404/422 and other 4xx -> :class:`~labkit.ConfigurationError`
  naming what to fix (the key variable, the model, the base URL);
* a malformed answer -> :class:`~labkit.ProviderResponseError`.

The ``openai`` package (``pip install 'labkit[live]'``) is imported only
when a live transport is made, so ``import labkit`` stays light.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import socket
import tomllib
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .chat import ChatChunk, ChatRequest, Message, Role, ToolCall
from .errors import ConfigurationError, LabkitError, ProviderResponseError, ProviderUnavailable

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_MODEL",
    "ENV_API_KEY_ENV",
    "ENV_BASE_URL",
    "ENV_MODEL",
    "ENV_PROFILE",
    "ERROR_MAP",
    "LiveProfile",
    "LiveTransport",
    "map_error",
]

DEFAULT_BASE_URL = "http://localhost:11434/v1"
"""Ollama's OpenAI-compatible endpoint on this machine."""
DEFAULT_MODEL = "llama3.2"
"""A small model with tool calling that Ollama can pull (``ollama pull llama3.2``)."""

ENV_BASE_URL = "LABKIT_BASE_URL"
ENV_MODEL = "LABKIT_MODEL"
ENV_API_KEY_ENV = "LABKIT_API_KEY_ENV"
ENV_PROFILE = "LABKIT_PROFILE"

_NO_KEY = "labkit-no-key"  # sent when no key variable is named: local servers ignore the header
_CONNECT_S = 5.0  # a host that drops packets fails in seconds, not after timeout_s
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FLAGS = {"base_url": "--base-url", "model": "--model", "api_key_env": "--api-key-env"}
_ENVS = {"base_url": ENV_BASE_URL, "model": ENV_MODEL, "api_key_env": ENV_API_KEY_ENV}


class LiveProfile(BaseModel):
    """Where the live model is and how to reach it; never the key itself.

    Attributes:
        base_url: the API root, e.g. ``http://localhost:11434/v1`` (``/chat/completions`` is appended).
        model: the model name the server knows, e.g. ``llama3.2``.
        api_key_env: the *name* of the environment variable holding the key,
            or ``None`` for a local server that needs none.
        timeout_s: seconds the client waits for an answer (connecting waits at most 5 s).
        max_retries: client retries after a connection error, 408, 409, 429 or
            5xx; kept low so an absent server fails fast.
        source: where the values came from, for messages (not a setting).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str = DEFAULT_BASE_URL
    model: str = DEFAULT_MODEL
    api_key_env: str | None = None
    timeout_s: float = Field(default=60.0, gt=0, allow_inf_nan=False)
    max_retries: int = Field(default=1, ge=0, le=5)
    source: str = Field(default="defaults", exclude=True, repr=False)

    @field_validator("base_url")
    @classmethod
    def _check_url(cls, value: str) -> str:
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{value!r} is not an http(s) URL with a host, e.g. {DEFAULT_BASE_URL}")
        try:
            parts.port  # noqa: B018 - raises ValueError for a port out of range
        except ValueError as exc:
            raise ValueError(f"{value!r} has a bad port: {exc}") from None
        return value.strip().rstrip("/")

    @field_validator("model")
    @classmethod
    def _check_model(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the model name is empty")
        return value.strip()

    @field_validator("api_key_env")
    @classmethod
    def _check_env_name(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        if not _ENV_NAME.fullmatch(value):
            # never echo the value: a key pasted here by mistake must not be printed
            raise ValueError("not an environment variable name (give the name of the variable holding the key)")
        return value

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        base_url: str | None = None,
        model: str | None = None,
        api_key_env: str | None = None,
    ) -> LiveProfile:
        """Build the profile: arguments, then environment, then the TOML file, then defaults.

        Args:
            path: a TOML file with any of ``base_url``, ``model``,
                ``api_key_env``, ``timeout_s``, ``max_retries`` (top level or
                under ``[live]``); defaults to ``$LABKIT_PROFILE`` when set.
            environ: the environment to read (default ``os.environ``).
            base_url, model, api_key_env: explicit values (e.g. console flags).

        Raises:
            ConfigurationError: an unreadable or invalid file, an unknown key
                in it, or a value that cannot work; the message names the
                setting and where it came from.
        """
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        origin: dict[str, str] = {}
        file = path if path is not None else env.get(ENV_PROFILE) or None
        if file is not None:
            for key, value in _read_file(Path(file)).items():
                values[key] = value
                origin[key] = f"profile file {file}"
        for key, var in _ENVS.items():
            if env.get(var):
                values[key], origin[key] = env[var], f"${var}"
        explicit = {"base_url": base_url, "model": model, "api_key_env": api_key_env}
        for key, value in explicit.items():
            if value is not None:
                values[key], origin[key] = value, _FLAGS[key]
        sources = sorted(set(origin.values()))
        try:
            return cls(**values, source=", ".join(sources) if sources else "defaults")
        except ValidationError as exc:
            error = exc.errors(include_url=False)[0]
            field = str(error["loc"][0]) if error["loc"] else "profile"
            where = origin.get(field, "defaults")
            message = str(error["msg"]).removeprefix("Value error, ")
            raise ConfigurationError(f"live profile: {field} (from {where}): {message}") from None

    def api_key(self, environ: Mapping[str, str] | None = None) -> str:
        """The key to send: the value of ``api_key_env``, or a placeholder when no variable is named.

        Raises:
            ConfigurationError: the variable is named but unset or empty.
        """
        if self.api_key_env is None:
            return _NO_KEY
        env = os.environ if environ is None else environ
        value = env.get(self.api_key_env, "")
        if not value:
            raise ConfigurationError(
                f"live profile: the key variable ${self.api_key_env} is named (api_key_env) but not set; "
                f"export it, or drop api_key_env for a local server that needs no key"
            )
        return value

    def describe(self) -> str:
        """One header line: model, URL and where the key comes from (never the key)."""
        key = f"key from ${self.api_key_env}" if self.api_key_env else "no key"
        return f"model {self.model} at {self.base_url}, {key}, timeout {self.timeout_s:g} s, retries {self.max_retries}"


def _read_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(f"live profile file {path}: cannot read it ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ConfigurationError(f"live profile file {path}: not UTF-8 text") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"live profile file {path}: not valid TOML ({exc})") from None
    if isinstance(data.get("live"), dict):
        data = data["live"]
    allowed = set(LiveProfile.model_fields) - {"source"}
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ConfigurationError(
            f"live profile file {path}: unknown setting {', '.join(unknown)}; "
            f"valid settings: {', '.join(sorted(allowed))}"
        )
    return data


# -- the error map ---------------------------------------------------------------------

ERROR_MAP: tuple[tuple[str, type[LabkitError], str], ...] = (
    ("APITimeoutError", ProviderUnavailable, "no answer within timeout_s"),
    ("APIConnectionError", ProviderUnavailable, "connection refused, DNS failure or connection dropped"),
    ("AuthenticationError", ConfigurationError, "401: the key is missing or wrong"),
    ("OAuthError", ConfigurationError, "401: the key is missing or wrong"),
    ("PermissionDeniedError", ConfigurationError, "403: the key may not use this model"),
    ("NotFoundError", ConfigurationError, "404: no such model, or the base URL is not the API root"),
    ("BadRequestError", ConfigurationError, "400: the model or server rejects the request (e.g. no tool calling)"),
    ("UnprocessableEntityError", ConfigurationError, "422: the server cannot process the request"),
    ("ConflictError", ProviderUnavailable, "409 after the client's retries"),
    ("RateLimitError", ProviderUnavailable, "429 after the client's retries"),
    ("InternalServerError", ProviderUnavailable, "5xx after the client's retries"),
    ("APIStatusError", ConfigurationError, "another status: 408 and 5xx unavailable, other 4xx configuration"),
    ("APIResponseValidationError", ProviderResponseError, "the body does not match the chat-completions schema"),
    ("APIError", ProviderResponseError, "the server reported an error in the stream"),
    ("OpenAIError", ProviderResponseError, "the client could not use the answer"),
)
"""``(openai exception class name, labkit error, meaning)``, most specific first.

A class is mapped by the first row naming it or one of its bases; a test
checks that every ``openai.APIError`` subclass has its own row.
"""

_RETRIED = frozenset({408, 409, 429})


def map_error(exc: BaseException, profile: LiveProfile) -> LabkitError:
    """Turn an exception from the ``openai`` client (or its HTTP layer) into a labkit error.

    Args:
        exc: what the client raised.
        profile: the profile in use, to name what to fix.

    Returns:
        A :class:`~labkit.ProviderUnavailable`, :class:`~labkit.ConfigurationError`
        or :class:`~labkit.ProviderResponseError`; the caller raises it ``from exc``.
    """
    url = f"{profile.base_url}/chat/completions"
    row = _row(type(exc))
    if row is None:  # the HTTP layer, below the openai client (e.g. a stream cut mid-way)
        if _is_transport_error(exc):
            return ProviderUnavailable(f"the connection to {url} failed mid-answer ({_cause(exc)}); check the server")
        return ProviderResponseError(f"the answer from {url} could not be read ({type(exc).__name__}: {exc})")
    name, kind, _ = row
    status = getattr(exc, "status_code", None)
    if name == "APIStatusError" and isinstance(status, int) and (status >= 500 or status in _RETRIED):
        kind = ProviderUnavailable
    if kind is ProviderUnavailable:
        if name == "APITimeoutError":
            why = f"no answer within {profile.timeout_s:g} s"
        elif status is not None:
            retries = profile.max_retries
            why = f"HTTP {status} after {retries} {'retry' if retries == 1 else 'retries'}"
        else:
            why = _cause(exc)
        return ProviderUnavailable(
            f"cannot reach the model server at {url} ({why}); start it (e.g. `ollama serve`) "
            f"or point --base-url / ${ENV_BASE_URL} at a running one"
        )
    if kind is ConfigurationError:
        return ConfigurationError(_what_to_fix(status, profile, url, _server_message(exc)))
    return ProviderResponseError(
        f"the server at {url} did not give a usable chat completion ({type(exc).__name__}: {_server_message(exc)}); "
        "check that the base URL is an OpenAI-compatible API root (it usually ends in /v1)"
    )


def _row(cls: type[BaseException]) -> tuple[str, type[LabkitError], str] | None:
    names = [c.__name__ for c in cls.__mro__ if c.__module__.split(".")[0] == "openai"]
    for name in names:
        for row in ERROR_MAP:
            if row[0] == name:
                return row
    return None


def _is_transport_error(exc: BaseException) -> bool:
    return any(c.__name__ in ("TransportError", "TimeoutException") for c in type(exc).__mro__) or isinstance(
        exc, (ConnectionError, TimeoutError)
    )


def _cause(exc: BaseException) -> str:
    """A short reason from the exception chain: 'connection refused', 'DNS lookup failed: ...', ..."""
    chain: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and len(chain) < 12:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    oserrors = [e for e in chain if isinstance(e, OSError)]
    if oserrors:
        last = oserrors[-1]
        if isinstance(last, ConnectionRefusedError):
            return "connection refused"
        if isinstance(last, socket.gaierror):
            return f"DNS lookup failed: {last.strerror or last}"
        if isinstance(last, TimeoutError):
            return "timed out"
        return (str(last).strip() or type(last).__name__).splitlines()[0][:160]
    below = [e for e in chain if type(e).__module__.split(".")[0] != "openai" and not isinstance(e, RuntimeError)]
    first = below[0] if below else exc
    return (str(first).strip() or type(first).__name__).splitlines()[0][:160]


def _server_message(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, Mapping) else error
        if message:
            return str(message).splitlines()[0][:200]
    return (str(getattr(exc, "message", "") or exc).splitlines() or [type(exc).__name__])[0][:200]


def _what_to_fix(status: int | None, profile: LiveProfile, url: str, said: str) -> str:
    if status == 401:
        if profile.api_key_env:
            return (
                f"the server at {url} refused the key from ${profile.api_key_env} (401: {said}); "
                f"set ${profile.api_key_env} to a valid key"
            )
        return (
            f"the server at {url} wants a key (401: {said}); "
            f"name the variable holding it with --api-key-env or ${ENV_API_KEY_ENV}"
        )
    if status == 403:
        return f"the key from ${profile.api_key_env} may not use model {profile.model!r} at {url} (403: {said})"
    if status == 404:
        return (
            f"model {profile.model!r} was not found at {url} (404: {said}); pull it (e.g. `ollama pull "
            f"{profile.model}`), choose another with --model / ${ENV_MODEL}, or check the base URL ends in /v1"
        )
    return (
        f"the server at {url} rejected the request for model {profile.model!r} (HTTP {status}: {said}); "
        "choose a model that supports tool calling (--model) or check the server's settings"
    )


# -- the transport ---------------------------------------------------------------------


def _import_openai() -> Any:
    try:
        return importlib.import_module("openai")
    except ImportError:
        raise ConfigurationError("the live transport needs the openai client: pip install 'labkit[live]'") from None


class LiveTransport:
    """A :class:`~labkit.Transport` over a real OpenAI-compatible chat endpoint.

    Args:
        profile: where the model is; defaults to :meth:`LiveProfile.load`.
        environ: where to read the key variable (default ``os.environ``).

    Raises:
        ConfigurationError: the key variable is named but unset, or the
            ``openai`` client is not installed.

    Attributes:
        calls: how many model calls reached this transport.
        last_error: the last :class:`~labkit.ProviderUnavailable` raised, for
            the console's hint line.
    """

    name = "live"

    def __init__(self, profile: LiveProfile | None = None, *, environ: Mapping[str, str] | None = None) -> None:
        self.profile = profile if profile is not None else LiveProfile.load(environ=environ)
        self.__key = self.profile.api_key(environ)
        self._openai = _import_openai()
        self.calls = 0
        self.last_error: ProviderUnavailable | None = None

    @property
    def model(self) -> str:
        """The model name, as in ``gen_ai.request.model``."""
        return self.profile.model

    @property
    def provider(self) -> str:
        """``openai`` for the hosted API, else ``openai_compatible`` (``gen_ai.provider.name``)."""
        host = urlsplit(self.profile.base_url).hostname or ""
        return "openai" if host == "api.openai.com" else "openai_compatible"

    def describe(self) -> str:
        """One header line for the console (never the key)."""
        return f"live, {self.profile.describe()}"

    def __repr__(self) -> str:
        return f"<LiveTransport model={self.profile.model!r} base_url={self.profile.base_url!r} calls={self.calls}>"

    async def send(self, request: ChatRequest) -> AsyncIterator[ChatChunk]:
        """Make one chat-completions call; one chunk, or the stream's pieces when ``request.stream``.

        Raises:
            ProviderUnavailable: refused, DNS failure, timeout, 5xx after retries.
            ConfigurationError: 401/403/404/400 and other 4xx, naming what to fix.
            ProviderResponseError: a malformed answer.
        """
        self.calls += 1
        url = f"{self.profile.base_url}/chat/completions"
        openai = self._openai
        client = openai.AsyncOpenAI(
            api_key=self.__key,
            base_url=self.profile.base_url,
            timeout=openai.Timeout(self.profile.timeout_s, connect=min(self.profile.timeout_s, _CONNECT_S)),
            max_retries=self.profile.max_retries,
        )
        try:
            try:
                if request.stream:
                    stream = await client.chat.completions.create(**_body(request, self.profile.model), stream=True)
                    try:
                        async for chunk in _from_stream(stream, url):
                            yield chunk
                    finally:
                        await stream.close()
                else:
                    completion = await client.chat.completions.create(**_body(request, self.profile.model))
                    yield _from_completion(completion, url)
            except LabkitError:
                raise
            except Exception as exc:
                error = map_error(exc, self.profile)
                if isinstance(error, ProviderUnavailable):
                    self.last_error = error
                raise error from exc
        finally:
            await client.close()


def _body(request: ChatRequest, model: str) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "messages": [_wire_message(m) for m in request.messages]}
    if request.tools:
        body["tools"] = [
            {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in request.tools
        ]
    if request.max_output_tokens is not None:
        body["max_tokens"] = request.max_output_tokens
    return body


def _wire_message(message: Message) -> dict[str, Any]:
    if message.role is Role.TOOL:
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.text or ""}
    if message.role is Role.ASSISTANT and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.text,
            "tool_calls": [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in message.tool_calls
            ],
        }
    return {"role": message.role.value, "content": message.text or ""}


def _malformed(detail: str, url: str) -> ProviderResponseError:
    return ProviderResponseError(
        f"malformed chat completion from {url}: {detail}; "
        "check that the base URL is an OpenAI-compatible API root (it usually ends in /v1)"
    )


def _from_completion(completion: Any, url: str) -> ChatChunk:
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise _malformed("no choices in the answer", url)
    message = getattr(choices[0], "message", None)
    if message is None:
        raise _malformed("the first choice has no message", url)
    text = message.content if isinstance(message.content, str) else ""
    calls = []
    for index, call in enumerate(message.tool_calls or ()):
        function = getattr(call, "function", None)
        name = getattr(function, "name", None)
        if not isinstance(name, str) or not name:
            raise _malformed(f"tool call {index} has no function name", url)
        arguments = function.arguments if isinstance(function.arguments, str) else json.dumps(function.arguments)
        calls.append(ToolCall(id=call.id or f"call_{index}", name=name, arguments=arguments or "{}"))
    return ChatChunk(text=text, tool_calls=tuple(calls))


async def _from_stream(stream: Any, url: str) -> AsyncIterator[ChatChunk]:
    """Text deltas as they come; tool-call deltas joined by index and yielded whole at the end."""
    pending: dict[int, dict[str, str]] = {}
    received = 0
    async for chunk in stream:
        received += 1
        choices = getattr(chunk, "choices", None)
        if not choices:  # e.g. a final usage-only chunk
            continue
        delta = getattr(choices[0], "delta", None)
        if delta is None:
            continue
        if isinstance(delta.content, str) and delta.content:
            yield ChatChunk(text=delta.content)
        for piece in delta.tool_calls or ():
            index = piece.index if isinstance(piece.index, int) else len(pending)
            slot = pending.setdefault(index, {"id": "", "name": "", "arguments": ""})
            if piece.id:
                slot["id"] = piece.id
            function = piece.function
            if function is not None:
                slot["name"] += function.name or ""
                slot["arguments"] += function.arguments or ""
    if not received:
        raise _malformed("the stream ended without a single chunk (is it a server-sent event stream?)", url)
    calls = []
    for index in sorted(pending):
        slot = pending[index]
        if not slot["name"]:
            raise _malformed(f"streamed tool call {index} has no function name", url)
        calls.append(ToolCall(id=slot["id"] or f"call_{index}", name=slot["name"], arguments=slot["arguments"] or "{}"))
    if calls:
        yield ChatChunk(tool_calls=tuple(calls))
