"""The live transport: a real OpenAI-compatible chat endpoint from one explicit profile (docs/live.md).

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

* connection refused, DNS failure, timeout -> :class:`~labkit.ProviderUnavailable`
  (status ``ProviderUnavailable``, console exit 2), whose message names the URL tried;
* an HTTP 408/409/429/5xx answer -> :class:`~labkit.ProviderUnavailable` too,
  but the message says the server is up and quotes its own error message;
* 400/401/403/404/422 and other 4xx -> :class:`~labkit.ConfigurationError`
  naming what to fix (the key variable, the model, the base URL); a 400's
  hint follows what its message says (unknown model, key, context too long,
  tool calling not enabled);
* an address that answers but is not a chat-completions endpoint (HTTP
  405/501, or a 404 HTML page, e.g. ``python -m http.server``) ->
  :class:`~labkit.ConfigurationError` quoting the page's own text;
* a server that accepted the connection and then sent nothing within
  ``timeout_s`` -> :class:`~labkit.ProviderUnavailable` "up but silent"
  (busy or stalled), never "cannot reach";
* a malformed or ambiguous answer -> :class:`~labkit.ProviderResponseError`.

The ``openai`` client's own retries are always off: each :meth:`LiveTransport.send`
is exactly one HTTP request, so each request on the wire is one counted
``ModelCall`` (docs/guarantees.md, *Limits are exact*). Replies are read by the rules real servers follow
(:class:`StreamedCalls`, :func:`normalize_arguments`, the ``finish_reason``):
see ``docs/live.md`` for the table of server dialects and what labkit does
with each of their quirks.

The ``openai`` package (``pip install 'labkit[live]'``) is imported only
when a live transport is made, so ``import labkit`` stays light.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import socket
import tomllib
from collections.abc import AsyncIterator, Mapping
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..core.errors import ConfigurationError, LabkitError, ProviderResponseError, ProviderUnavailable
from .chat import ChatChunk, ChatRequest, Message, Role, ToolCall

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
    "StreamedCalls",
    "map_error",
    "normalize_arguments",
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
        timeout_s: the longest wait, in seconds, for each read from the
            server (connecting waits at most 5 s). It is a per-read timeout,
            not a limit on the whole answer: a stream that keeps trickling
            bytes is stopped only by the run's deadline (``Limits.deadline_s``).
        max_retries: how many times labkit repeats a model call that ended
            ``ProviderUnavailable`` (0 by default). Each repetition is a new
            model call, counted (``ModelCall``) and bounded by the model-call
            budget; the ``openai`` client's own retries are always off.
        source: where the values came from, for messages (not a setting).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str = DEFAULT_BASE_URL
    model: str = DEFAULT_MODEL
    api_key_env: str | None = None
    timeout_s: float = Field(default=60.0, gt=0, allow_inf_nan=False)
    max_retries: int = Field(default=0, ge=0, le=5)
    source: str = Field(default="defaults", exclude=True, repr=False)

    @field_validator("base_url")
    @classmethod
    def _check_url(cls, value: str) -> str:
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{value!r} is not an http(s) URL with a host, e.g. {DEFAULT_BASE_URL}")
        try:
            port = parts.port  # raises ValueError for a port out of range
        except ValueError as exc:
            raise ValueError(f"{value!r} has a bad port: {exc}") from None
        if port == 0:  # no server listens on port 0: a connection there is refused, never a chat endpoint
            raise ValueError(f"{value!r} has a bad port: 0 is not a port a server listens on (1 to 65535)")
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
    ("ConflictError", ProviderUnavailable, "409: the server is up but busy; its message is shown"),
    ("RateLimitError", ProviderUnavailable, "429: the server is up but limits requests; its message is shown"),
    ("InternalServerError", ProviderUnavailable, "5xx: the server is up but failed; its message is shown"),
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
        if _below(exc, "ReadTimeout"):
            return ProviderUnavailable(
                f"the model server at {url} went silent mid-answer for {profile.timeout_s:g} s (busy or stalled); "
                "check the server"
            )
        if _is_transport_error(exc):
            return ProviderUnavailable(f"the connection to {url} failed mid-answer ({_cause(exc)}); check the server")
        return ProviderResponseError(f"the answer from {url} could not be read ({type(exc).__name__}: {exc})")
    name, kind, _ = row
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and _not_a_chat_endpoint(status, exc):
        return ConfigurationError(
            f"{url} is not a chat-completions endpoint: it answered HTTP {status} ({_server_message(exc)}); "
            f"point --base-url, ${ENV_BASE_URL} or the profile file's base_url at the API root (it usually ends in /v1)"
        )
    if name == "APIStatusError" and isinstance(status, int) and (status >= 500 or status in _RETRIED):
        kind = ProviderUnavailable
    if kind is ProviderUnavailable:
        if isinstance(status, int):  # the server is up: it answered, with an error
            return ProviderUnavailable(
                f"the model server at {url} is up but answered HTTP {status}: {_server_message(exc)}"
            )
        if name == "APITimeoutError" and _below(exc, "ReadTimeout"):  # connected, then nothing came
            return ProviderUnavailable(
                f"the model server at {url} is up but silent for {profile.timeout_s:g} s (busy or stalled): "
                "it accepted the connection and sent no answer; wait for it to finish its work, restart it, "
                "or raise timeout_s in the profile"
            )
        if name == "APITimeoutError" and _below(exc, "ConnectTimeout"):
            why = f"no connection within {min(profile.timeout_s, _CONNECT_S):g} s"
        elif name == "APITimeoutError":
            why = f"no answer within {profile.timeout_s:g} s"
        else:
            why = _cause(exc)
        return ProviderUnavailable(
            f"cannot reach the model server at {url} ({why}); start it (e.g. `ollama serve`) "
            f"or point --base-url, ${ENV_BASE_URL} or the profile file's base_url at a running one"
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


def _below(exc: BaseException, name: str) -> bool:
    """Whether an exception of class ``name`` (e.g. httpx's ``ReadTimeout``) is in ``exc``'s chain."""
    seen: BaseException | None = exc
    for _ in range(12):
        if seen is None:
            return False
        if any(c.__name__ == name for c in type(seen).__mro__):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


_QUOTE_MAX = 200


def _quote(text: str, limit: int = _QUOTE_MAX) -> str:
    """``text`` on one line, cut at a word boundary (never mid-word) with an ellipsis when longer than ``limit``."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line[: limit + 1].rsplit(" ", 1)[0] if " " in line[:limit] else line[:limit]
    return cut.rstrip(" ,;:") + "…"


def _page_text(html: str) -> str:
    """The words of an HTML page: scripts and styles dropped, tags as spaces, entities decoded."""
    html = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", html)
    return " ".join(unescape(re.sub(r"<[^>]*>", " ", html)).split())


def _looks_like_html(text: str) -> bool:
    return text.lstrip()[:15].lower().startswith(("<!doctype html", "<html", "<head", "<body", "<title"))


def _body_text(exc: BaseException) -> str | None:
    """The raw text of a non-JSON error body (an HTML page, plain text), or ``None``."""
    body = getattr(exc, "body", None)
    if isinstance(body, str):
        return body
    response = getattr(exc, "response", None)
    if body is None and response is not None:
        with contextlib.suppress(Exception):
            return str(response.text)
    return None


def _not_a_chat_endpoint(status: int, exc: BaseException) -> bool:
    """HTTP 405/501 (a server that has no such method there), or a 404 answered with an HTML page (docs/live.md)."""
    if status in (405, 501):
        return True
    text = _body_text(exc)
    return status == 404 and text is not None and _looks_like_html(text)


def _server_message(exc: BaseException) -> str:
    """What the server said, on one line and cut at a word: the JSON error's message, or a page's text."""
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, Mapping) else error
        if message:
            return _quote(str(message))
    text = _body_text(exc)
    if text:
        return _quote(_page_text(text) if _looks_like_html(text) else text)
    return _quote(str(getattr(exc, "message", "") or exc) or type(exc).__name__)


_HINTS_400 = (
    (
        re.compile(
            r"model.*(not found|does not exist|unknown|invalid|no such|not available)|(unknown|invalid) model", re.I
        ),
        "the server does not know model {model!r}: choose one it serves with --model or ${env_model}",
    ),
    (
        re.compile(r"api[ _-]?key|auth|token is|no connected db|unauthori[sz]ed|credential", re.I),
        "the server refused the key: check the variable named by --api-key-env or ${env_key}",
    ),
    (
        re.compile(r"context|too long|too many tokens|max_model_len|maximum.*length|exceeds.*(length|tokens)", re.I),
        "the conversation is longer than the server's context: start the server with a larger context "
        "(e.g. --ctx-size, --max-model-len) or lower the limits",
    ),
    (
        re.compile(r"tool|function call", re.I),
        "tool calling is not enabled for this model on the server: enable it (e.g. llama-server --jinja, "
        "vLLM --enable-auto-tool-choice --tool-call-parser) or choose a model that supports it",
    ),
)
"""A 400's hint by what its message says (first match wins); none matching: the generic hint."""


def _hint_400(said: str, profile: LiveProfile) -> str:
    for pattern, hint in _HINTS_400:
        if pattern.search(said):
            return hint.format(model=profile.model, env_model=ENV_MODEL, env_key=ENV_API_KEY_ENV)
    return "the server's message says why; check the model (--model) and the server's settings, e.g. tool calling"


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
    rejected = f"the server at {url} rejected the request for model {profile.model!r} (HTTP {status}: {said})"
    return f"{rejected}; {_hint_400(said, profile)}"


# -- the transport ---------------------------------------------------------------------


def _import_openai() -> Any:
    try:
        return importlib.import_module("openai")
    except ImportError:
        raise ConfigurationError("the live transport needs the openai client: pip install 'labkit[live]'") from None


class LiveTransport:
    """A :class:`~labkit.Transport` over a real OpenAI-compatible chat endpoint.

    One :meth:`send` is one HTTP request: the ``openai`` client's own retries
    are off (``max_retries=0``), so every request on the wire is one counted
    ``ModelCall`` (docs/guarantees.md, *Limits are exact*). Retries, when the profile asks for them, are
    made above the counter by :class:`~labkit.CountingClient` (see
    :attr:`retries`).

    Args:
        profile: where the model is; defaults to :meth:`LiveProfile.load`.
        environ: where to read the key variable (default ``os.environ``).

    Raises:
        ConfigurationError: the key variable is named but unset, or the
            ``openai`` client is not installed.

    Attributes:
        calls: how many model calls reached this transport (= HTTP requests sent).
        last_error: the :class:`~labkit.ProviderUnavailable` the latest
            request ended with, for the console's hint line; ``None`` while a
            request runs and after one that did not end so (a success, or
            another error). Each :meth:`send` resets it as it starts, so it
            never describes an earlier request or run.
    """

    name = "live"

    def __init__(self, profile: LiveProfile | None = None, *, environ: Mapping[str, str] | None = None) -> None:
        self.profile = profile if profile is not None else LiveProfile.load(environ=environ)
        self.__key = self.profile.api_key(environ)
        self._openai = _import_openai()
        self.calls = 0
        self.last_error: ProviderUnavailable | None = None

    @property
    def retries(self) -> int:
        """How many times the counting client may repeat a call that ended ``ProviderUnavailable``.

        Each repetition is a new model call, counted and bounded by the
        model-call budget like any other (docs/guarantees.md, *Limits are exact*).
        """
        return self.profile.max_retries

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
        """Make one chat-completions request; one chunk, or the stream's pieces when ``request.stream``.

        The reply's tool calls come whole, in the last chunk, with the
        reply's ``finish_reason`` (``"length"``: cut at the output-token cap;
        the agent then runs none of them).

        Raises:
            ProviderUnavailable: refused, DNS failure, timeout, an HTTP 408,
                409, 429 or 5xx answer (with the server's message), or a
                stream that ended before its end signal (no finish reason or
                no ``[DONE]``: its partial reply is dropped).
            ConfigurationError: 401/403/404/400 and other 4xx, naming what to fix.
            ProviderResponseError: a malformed or ambiguous answer.
        """
        self.calls += 1
        self.last_error = None  # it describes this request only
        url = f"{self.profile.base_url}/chat/completions"
        openai = self._openai
        client = openai.AsyncOpenAI(
            api_key=self.__key,
            base_url=self.profile.base_url,
            timeout=openai.Timeout(self.profile.timeout_s, connect=min(self.profile.timeout_s, _CONNECT_S)),
            max_retries=0,  # every request on the wire is one counted model call (docs/live.md)
        )
        body = _body(request, self.profile.model)
        try:
            try:
                if request.stream:
                    create = client.chat.completions.with_streaming_response.create
                    async with create(**body, stream=True) as response:
                        kind = response.headers.get("content-type", "")
                        if "json" in kind:  # a server that ignores `stream`
                            yield _from_completion(_json(await response.text(), url), url)
                        else:
                            # the line iterator is closed at once when the reply ends at [DONE] (as above)
                            async with contextlib.aclosing(response.iter_lines()) as lines:
                                async for chunk in _from_stream(lines, url, "event-stream" in kind):
                                    yield chunk
                else:
                    raw = await client.chat.completions.with_raw_response.create(**body)
                    text = raw.http_response.text
                    # Closed here, not left to the garbage collector: an unclosed response keeps httpx's
                    # body iterator (an async generator) alive, finalized later at a random moment.
                    await raw.http_response.aclose()
                    yield _from_completion(_json(text, url), url)
            except LabkitError as error:
                if isinstance(error, ProviderUnavailable):
                    self.last_error = error
                raise
            except Exception as exc:
                mapped = map_error(exc, self.profile)
                if isinstance(mapped, ProviderUnavailable):
                    self.last_error = mapped
                raise mapped from exc
        finally:
            await client.close()


# -- the request: history every dialect accepts ------------------------------------------


def _body(request: ChatRequest, model: str) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "messages": [_wire_message(m) for m in request.messages]}
    if request.tools:
        body["tools"] = [
            {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in request.tools
        ]
        # Said explicitly: llama-cpp-python's function-calling format ignores `tools` without it.
        body["tool_choice"] = "auto"
    if request.max_output_tokens is not None:
        body["max_tokens"] = request.max_output_tokens
    return body


def _wire_message(message: Message) -> dict[str, Any]:
    if message.role is Role.TOOL:
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.text or ""}
    if message.role is Role.ASSISTANT and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.text or "",  # not null: llama-cpp-python answers 500 to a null content
            "tool_calls": [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": _wire_arguments(c.arguments)},
                }
                for c in message.tool_calls
            ],
        }
    return {"role": message.role.value, "content": message.text or ""}


def _wire_arguments(arguments: str) -> str:
    """The arguments sent back in the history: the model's own text when it is a JSON object, else ``{}``.

    llama.cpp's server answers HTTP 500 to a history holding arguments that
    are not a JSON object (e.g. a call cut at the output-token cap). Such a
    call never ran, and its result message says why.
    """
    try:
        return arguments if isinstance(json.loads(arguments), dict) else "{}"
    except ValueError:
        return "{}"


# -- the reply: one argument normaliser, one end-of-reply rule ---------------------------

CUT = "length"
"""The ``finish_reason`` of a reply cut at the output-token cap (``max_tokens``)."""


def normalize_arguments(value: Any) -> str:
    """The arguments of one tool call of a *complete* reply, as JSON text for binding.

    Used for streamed and non-streamed replies alike (one table of inputs
    tests both paths): a string is kept as sent (binding parses it, so
    whitespace-heavy JSON is fine); an object is encoded as JSON; an absent,
    ``null``, empty or ``"null"`` value means no arguments, ``{}``.

    Args:
        value: the wire value of ``function.arguments`` (``str``, ``dict``, ``None``, ...).

    Returns:
        JSON text (or the model's own text, which may not be JSON: binding
        then fails and the model sees why).
    """
    if value is None:
        return "{}"
    if isinstance(value, str):
        return "{}" if value.strip() in ("", "null") else value
    return json.dumps(value, ensure_ascii=False)


def _json(text: str, url: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        raise _malformed(f"the body is not JSON (it starts {text[:40]!r})", url) from None


def _malformed(detail: str, url: str) -> ProviderResponseError:
    return ProviderResponseError(
        f"malformed chat completion from {url}: {detail}; "
        "check that the base URL is an OpenAI-compatible API root (it usually ends in /v1)"
    )


def _ambiguous(detail: str, url: str) -> ProviderResponseError:
    return ProviderResponseError(
        f"ambiguous tool calls in the stream from {url}: {detail}; labkit refuses to guess which call is meant "
        "(try the same run without streaming)"
    )


def _cut_short(detail: str, url: str) -> ProviderUnavailable:
    return ProviderUnavailable(
        f"the reply from {url} was cut short: {detail}; its partial text and tool calls were dropped, "
        "none of them ran (check the server's log)"
    )


def _first_choice(payload: Any, url: str) -> Mapping[str, Any] | None:
    if not isinstance(payload, Mapping):
        raise _malformed(f"expected a JSON object, got {type(payload).__name__}", url)
    if "error" in payload and "choices" not in payload:
        error = payload["error"]
        message = error.get("message") if isinstance(error, Mapping) else error
        raise ProviderResponseError(f"the server at {url} reported an error: {str(message)[:200]}")
    choices = payload.get("choices")
    if not isinstance(choices, list):
        raise _malformed("no choices in the answer", url)
    for choice in choices:  # choice 0; labkit never asks for more than one
        if isinstance(choice, Mapping) and choice.get("index", 0) == 0:
            return choice
    return None


def _from_completion(payload: Any, url: str) -> ChatChunk:
    choice = _first_choice(payload, url)
    if choice is None:
        raise _malformed("no choices in the answer", url)
    message = choice.get("message")
    if not isinstance(message, Mapping):
        raise _malformed("the first choice has no message", url)
    content = message.get("content")
    calls = []
    for index, call in enumerate(message.get("tool_calls") or ()):
        function: Any = call.get("function") if isinstance(call, Mapping) else None
        name = function.get("name") if isinstance(function, Mapping) else None
        if not isinstance(name, str) or not name:
            raise _malformed(f"tool call {index} has no function name", url)
        call_id = call.get("id")
        calls.append(
            ToolCall(
                id=call_id if isinstance(call_id, str) and call_id else f"call_{index}",
                name=name,
                arguments=normalize_arguments(function.get("arguments")),
            )
        )
    finish = choice.get("finish_reason")
    return ChatChunk(
        text=content if isinstance(content, str) else "",
        tool_calls=tuple(calls),
        finish_reason=finish if isinstance(finish, str) else None,
    )


class _Partial:
    """One streamed tool call being assembled."""

    __slots__ = ("arguments", "id", "name", "number", "text")

    def __init__(self, call_id: str | None, number: int) -> None:
        self.id = call_id
        self.number = number
        self.name: str | None = None
        self.text = ""  # arguments sent as string fragments
        self.arguments: Any = None  # arguments sent as one JSON value (an object)

    def label(self) -> str:
        return repr(self.id) if self.id else f"number {self.number}"


class StreamedCalls:
    """Join streamed tool-call deltas into whole calls, by the rules real servers follow.

    * a delta with an id seen before continues that call; a new id starts a
      new call, even at an ``index`` already used (two calls sharing ``index: 0``);
    * a delta without an id continues the call at its ``index``; a delta
      with neither continues the last call (or starts the first);
    * ``id``, ``name`` and ``type``, which some servers repeat in every
      delta, are set once and never joined; a *different* name for the
      same call is ambiguous;
    * arguments come as string fragments (joined) or as one JSON value;
      a fragment that is not whitespace after the arguments already form a
      whole JSON value, or a mix of both forms, is ambiguous;
    * one chunk may carry several calls; calls may interleave.

    Ambiguity raises :class:`~labkit.ProviderResponseError` rather than guess.

    Args:
        url: the endpoint, for messages.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self._calls: list[_Partial] = []
        self._by_id: dict[str, _Partial] = {}
        self._by_index: dict[int, _Partial] = {}

    def _new(self, call_id: str | None) -> _Partial:
        call = _Partial(call_id, len(self._calls))
        self._calls.append(call)
        if call_id is not None:
            self._by_id[call_id] = call
        return call

    def _target(self, call_id: str | None, index: int | None) -> _Partial:
        if call_id is not None and call_id in self._by_id:
            return self._by_id[call_id]
        at_index = self._by_index.get(index) if index is not None else None
        if call_id is not None:
            if at_index is not None and at_index.id is None:  # the id arrives after the first delta
                at_index.id = call_id
                self._by_id[call_id] = at_index
                return at_index
            return self._new(call_id)
        if at_index is not None:
            return at_index
        if index is None and self._calls:
            return self._calls[-1]
        return self._new(None)

    def add(self, piece: Any) -> None:
        """Take one element of a delta's ``tool_calls`` list.

        Raises:
            ProviderResponseError: a malformed or ambiguous delta.
        """
        if not isinstance(piece, Mapping):
            raise _malformed(f"a streamed tool-call delta is a {type(piece).__name__}, not an object", self.url)
        raw_id, raw_index = piece.get("id"), piece.get("index")
        call_id = raw_id if isinstance(raw_id, str) and raw_id else None
        index = raw_index if isinstance(raw_index, int) and not isinstance(raw_index, bool) else None
        call = self._target(call_id, index)
        if index is not None:
            self._by_index[index] = call
        function = piece.get("function")
        if function is None:
            return
        if not isinstance(function, Mapping):
            raise _malformed(f"streamed tool call {call.label()} has a function that is not an object", self.url)
        name = function.get("name")
        if isinstance(name, str) and name:
            if call.name is None:
                call.name = name
            elif call.name != name:
                raise _ambiguous(f"call {call.label()} is named {call.name!r}, then {name!r}", self.url)
        self._add_arguments(call, function.get("arguments"))

    def _add_arguments(self, call: _Partial, value: Any) -> None:
        if value is None:
            return
        if isinstance(value, str):
            if not value.strip():
                call.text += value
                return
            if call.arguments is not None or _is_whole_json(call.text):
                raise _ambiguous(f"more arguments arrive for call {call.label()} after whole ones", self.url)
            call.text += value
            return
        if call.text.strip() or (call.arguments is not None and call.arguments != value):
            raise _ambiguous(f"call {call.label()} gets two different argument values", self.url)
        call.arguments = value

    def calls(self) -> tuple[ToolCall, ...]:
        """The assembled calls, in the order they started.

        Raises:
            ProviderResponseError: a call has no function name.
        """
        whole = []
        for call in self._calls:
            if not call.name:
                raise _malformed(f"streamed tool call {call.number} has no function name", self.url)
            value = call.arguments if call.arguments is not None else call.text
            whole.append(
                ToolCall(id=call.id or f"call_{call.number}", name=call.name, arguments=normalize_arguments(value))
            )
        return tuple(whole)


def _is_whole_json(text: str) -> bool:
    if not text.strip():
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


async def _from_stream(lines: AsyncIterator[str], url: str, event_stream: bool = True) -> AsyncIterator[ChatChunk]:
    """Text deltas as they come; the tool calls whole at the end, once the reply is known to be whole.

    A reply is whole when the stream gave a ``finish_reason`` and then
    ``[DONE]``. A stream that ends before either (a connection closed
    mid-reply, whatever the HTTP framing, or an event stream with no event at
    all) raises :class:`~labkit.ProviderUnavailable`: its text was only ever
    partial and its calls are never run. A body that is not an event stream
    raises :class:`~labkit.ProviderResponseError`.
    """
    calls = StreamedCalls(url)
    finish: str | None = None
    received = done = False
    async for line in lines:
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "error":  # llama.cpp's server reports a failure mid-stream on an `error:` line
            raise ProviderResponseError(f"the server at {url} reported an error mid-stream: {value.strip()[:200]}")
        if field != "data":
            continue  # comments (": ping"), `event:` and `id:` fields, blank separators
        if value.strip() == "[DONE]":
            done = True
            break
        received = True
        choice = _first_choice(_json(value, url), url)
        if choice is None:  # e.g. a last usage-only chunk with "choices": []
            continue
        delta = choice.get("delta") or {}
        if not isinstance(delta, Mapping):
            raise _malformed("a stream chunk's delta is not an object", url)
        content = delta.get("content")
        if isinstance(content, str) and content:
            yield ChatChunk(text=content)
        for piece in delta.get("tool_calls") or ():
            calls.add(piece)
        if isinstance(choice.get("finish_reason"), str):
            finish = choice["finish_reason"]
    if not received and not done:
        if event_stream:  # e.g. llama-cpp-python when its generator fails after the 200 was sent
            raise _cut_short("the event stream ended before its first event", url)
        raise _malformed("the stream ended without a single chunk (is it a server-sent event stream?)", url)
    if finish is None:
        raise _cut_short("the stream ended without a finish reason", url)
    if not done:
        raise _cut_short("the stream ended without its end marker [DONE] (connection closed mid-reply?)", url)
    whole = calls.calls()
    yield ChatChunk(tool_calls=whole, finish_reason=finish)
