"""The live profile, the error map at the transport boundary, and the console's --live (docs/live.md)."""

from __future__ import annotations

import contextlib
import io
import json
import socket
import subprocess
import sys
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

openai = pytest.importorskip("openai")

from fake_openai_server import FakeOpenAIServer

import labkit
from labkit import (
    EXIT_CONFIG,
    EXIT_PROTOCOL,
    EXIT_USAGE,
    ConfigurationError,
    Hang,
    LiveProfile,
    LiveTransport,
    ProviderResponseError,
    ProviderUnavailable,
    RunStatus,
)
from labkit.cli import main
from labkit.transports.live import DEFAULT_BASE_URL, DEFAULT_MODEL, ERROR_MAP, _row, map_error

SECRET = "sk-labkit-test-5ecret-value-0042"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _transport(url: str, **changes) -> LiveTransport:
    return LiveTransport(LiveProfile(base_url=url, model="m", max_retries=0, **changes))


# -- the profile ----------------------------------------------------------------------


def test_defaults_point_at_a_local_server_with_no_key():
    profile = LiveProfile.load(environ={})
    assert (profile.base_url, profile.model, profile.api_key_env) == (DEFAULT_BASE_URL, DEFAULT_MODEL, None)
    assert profile.base_url.startswith("http://localhost:")
    assert profile.source == "defaults"


def test_arguments_beat_environment_beat_file(tmp_path):
    file = tmp_path / "profile.toml"
    file.write_text('base_url = "http://file:1/v1"\nmodel = "file-model"\napi_key_env = "FILE_KEY"\nmax_retries = 0\n')
    env = {"LABKIT_PROFILE": str(file), "LABKIT_MODEL": "env-model"}
    profile = LiveProfile.load(environ=env, api_key_env="FLAG_KEY")
    assert profile.base_url == "http://file:1/v1"
    assert profile.model == "env-model"
    assert profile.api_key_env == "FLAG_KEY"
    assert profile.max_retries == 0
    assert "profile file" in profile.source and "$LABKIT_MODEL" in profile.source and "--api-key-env" in profile.source


def test_a_live_table_in_the_file_is_read(tmp_path):
    file = tmp_path / "p.toml"
    file.write_text('[live]\nmodel = "qwen2.5"\ntimeout_s = 5\n')
    profile = LiveProfile.load(file, environ={})
    assert (profile.model, profile.timeout_s) == ("qwen2.5", 5.0)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("model = ", "not valid TOML"),
        ('modle = "x"\n', "unknown setting modle"),
        ("timeout_s = -1\n", "timeout_s"),
        ('base_url = "localhost:11434"\n', "base_url"),
    ],
)
def test_a_broken_file_names_what_to_fix(tmp_path, content, expected):
    file = tmp_path / "p.toml"
    file.write_text(content)
    with pytest.raises(ConfigurationError, match=expected) as info:
        LiveProfile.load(file, environ={})
    assert "\n" not in str(info.value)


def test_an_unreadable_file_is_a_configuration_error(tmp_path):
    with pytest.raises(ConfigurationError, match="cannot read"):
        LiveProfile.load(tmp_path / "missing.toml", environ={})


def test_a_bad_url_from_the_environment_names_the_variable():
    with pytest.raises(ConfigurationError, match=r"base_url \(from \$LABKIT_BASE_URL\)"):
        LiveProfile.load(environ={"LABKIT_BASE_URL": "ftp://example/v1"})


def test_a_key_pasted_as_the_variable_name_is_refused_without_echoing_it():
    with pytest.raises(ConfigurationError) as info:
        LiveProfile.load(environ={}, api_key_env=SECRET)
    assert SECRET not in str(info.value)


def test_a_named_but_unset_key_variable_fails_before_any_call():
    profile = LiveProfile(api_key_env="LABKIT_TEST_MISSING_KEY")
    with pytest.raises(ConfigurationError, match=r"\$LABKIT_TEST_MISSING_KEY"):
        LiveTransport(profile, environ={})


def test_the_key_is_sent_but_never_shown():
    env = {"LABKIT_TEST_KEY": SECRET}
    with FakeOpenAIServer(labkit.SCENARIOS["complete"].script, api_key=SECRET) as server:
        profile = LiveProfile(base_url=server.base_url, model="m", api_key_env="LABKIT_TEST_KEY")
        transport = LiveTransport(profile, environ=env)
        outcome = labkit.run("complete", transport=transport)
        headers = set(server.authorizations)
    assert outcome.status is RunStatus.COMPLETED
    assert headers == {f"Bearer {SECRET}"}
    shown = [
        repr(profile),
        str(profile),
        profile.describe(),
        repr(transport),
        transport.describe(),
        outcome.model_dump_json(),
        repr(outcome),
    ]
    assert not any(SECRET in text for text in shown)


def test_no_key_named_sends_a_placeholder_and_ignores_openai_variables(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    with FakeOpenAIServer(["Review finished."]) as server:
        outcome = labkit.run("incomplete", transport=_transport(server.base_url))
        headers = list(server.authorizations)
    assert outcome.status is RunStatus.INCOMPLETE  # the profile's URL was used, not $OPENAI_BASE_URL
    assert headers and all(SECRET not in (h or "") for h in headers)


# -- the error map ----------------------------------------------------------------------


def _subclasses(cls: type) -> set[type]:
    found: set[type] = set()
    for sub in cls.__subclasses__():
        found |= {sub, *_subclasses(sub)}
    return found


def test_every_openai_error_class_is_mapped():
    classes = _subclasses(openai.OpenAIError) | {openai.OpenAIError}
    assert openai.APIConnectionError in classes and openai.NotFoundError in classes
    for cls in classes:
        row = _row(cls)
        assert row is not None, f"{cls.__qualname__} has no row in ERROR_MAP"
        assert issubclass(row[1], labkit.LabkitError)
        if issubclass(cls, openai.APIError) and cls.__module__.split(".")[0] == "openai":
            assert row[0] == cls.__name__, f"{cls.__qualname__} (an API error) needs its own row in ERROR_MAP"


def test_every_row_maps_an_instance_to_its_labkit_error():
    profile = LiveProfile(model="m")
    by_name = {c.__name__: c for c in _subclasses(openai.OpenAIError) | {openai.OpenAIError}}
    for name, kind, _ in ERROR_MAP:
        if name not in by_name:  # a row for a class another openai version has
            continue
        exc = by_name[name].__new__(by_name[name])
        Exception.__init__(exc, "boom")
        mapped = map_error(exc, profile)
        if name == "APIStatusError":
            exc.status_code = 503
            assert isinstance(map_error(exc, profile), ProviderUnavailable)
            exc.status_code = 405
            assert isinstance(map_error(exc, profile), ConfigurationError)
        else:
            assert type(mapped) is kind, name


def test_an_http_layer_error_below_the_client_is_mapped_too():
    profile = LiveProfile(model="m")
    assert isinstance(map_error(ConnectionResetError("reset"), profile), ProviderUnavailable)
    assert isinstance(map_error(ValueError("bad json"), profile), ProviderResponseError)


def test_connection_refused_is_provider_unavailable_naming_the_url():
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    transport = _transport(url)
    outcome = labkit.run("complete", transport=transport)
    assert outcome.status is RunStatus.PROVIDER_UNAVAILABLE and outcome.exit_code == 2
    assert [e.kind for e in outcome.events] == ["ModelCall", "ProviderUnavailable"]
    assert url in str(transport.last_error) and "connection refused" in str(transport.last_error)
    # the hint names every place the URL may come from: a URL read from a profile file is fixed there
    assert all(where in str(transport.last_error) for where in ("--base-url", "$LABKIT_BASE_URL", "profile file"))
    assert isinstance(transport.last_error.__cause__, openai.APIConnectionError)


def test_a_dns_failure_is_provider_unavailable():
    transport = _transport("http://labkit-no-such-host.invalid/v1")
    outcome = labkit.run("complete", transport=transport)
    assert outcome.status is RunStatus.PROVIDER_UNAVAILABLE
    assert "labkit-no-such-host.invalid" in str(transport.last_error)


def test_a_server_that_accepts_and_stays_silent_is_up_but_silent():
    with FakeOpenAIServer([Hang()]) as server:  # it accepts the connection, reads the request, answers nothing
        transport = _transport(server.base_url, timeout_s=0.2)
        outcome = labkit.run("complete", transport=transport, limits=labkit.Limits(deadline_s=30))
    assert outcome.status is RunStatus.PROVIDER_UNAVAILABLE
    message = str(transport.last_error)
    assert "is up but silent for 0.2 s (busy or stalled)" in message
    assert "cannot reach" not in message and "ollama serve" not in message
    assert isinstance(transport.last_error.__cause__, openai.APITimeoutError)


def test_a_listening_socket_that_never_answers_is_up_but_silent_too(capsys, tmp_path):
    """A socket in listen state (the kernel accepts, nothing ever reads): what a stopped (SIGSTOP) server looks like."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        profile = tmp_path / "silent.toml"
        profile.write_text(
            f'base_url = "http://127.0.0.1:{listener.getsockname()[1]}/v1"\n'
            'model = "m"\ntimeout_s = 0.3\nmax_retries = 0\n'
        )
        code = main(["run", "complete", "--live", "--profile", str(profile)])
    assert code == 2  # ProviderUnavailable: a controlled stop, not a configuration error
    out = capsys.readouterr().out
    assert "is up but silent for 0.3 s (busy or stalled)" in out and "cannot reach" not in out


def _error_body(status: int):
    return lambda body: (status, {"error": {"message": f"status {status} from the fake server", "type": "x"}})


@pytest.mark.parametrize(
    ("status", "openai_class"),
    [
        (500, "InternalServerError"),
        (503, "InternalServerError"),
        (429, "RateLimitError"),
        (409, "ConflictError"),
        (408, "APIStatusError"),
    ],
)
def test_an_error_status_is_provider_unavailable_quoting_the_server(status, openai_class):
    with FakeOpenAIServer(reply=_error_body(status)) as server:
        transport = _transport(server.base_url)
        outcome = labkit.run("complete", transport=transport)
        attempts = len(server.requests)
    assert outcome.status is RunStatus.PROVIDER_UNAVAILABLE
    assert attempts == outcome.count("ModelCall") == 1  # no hidden retry below the counter
    message = str(transport.last_error)
    assert f"is up but answered HTTP {status}: status {status} from the fake server" in message
    assert "cannot reach" not in message and "ollama serve" not in message  # the server is running
    assert server.base_url in message
    assert type(transport.last_error.__cause__).__name__ == openai_class


def _fails_once(status: int = 503):
    answers = iter([(status, {"error": {"message": "loading model", "type": "unavailable"}})])

    def reply(body):
        return next(answers, None) or (200, _completion("Review finished."))

    return reply


def _completion(text: str) -> dict:
    message = {"role": "assistant", "content": text}
    return {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
def test_a_server_failing_once_gets_exactly_one_request_with_one_model_call(stream):
    """The openai client's own retries are off, so one ModelCall is one request (*Limits are exact*)."""
    with FakeOpenAIServer(reply=_fails_once()) as server:
        transport = LiveTransport(LiveProfile(base_url=server.base_url, model="m"))
        outcome = labkit.run("complete", transport=transport, stream=stream, limits=labkit.Limits(model_calls=1))
        attempts = len(server.requests)
    assert attempts == 1
    assert outcome.status is RunStatus.PROVIDER_UNAVAILABLE
    assert [e.kind for e in outcome.events] == ["ModelCall", "ProviderUnavailable"]


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
def test_retries_sit_above_the_counter_and_the_budget_bounds_them(stream):
    with FakeOpenAIServer(reply=_fails_once()) as server:
        transport = LiveTransport(LiveProfile(base_url=server.base_url, model="m", max_retries=1))
        bounded = labkit.run("incomplete", transport=transport, stream=stream, limits=labkit.Limits(model_calls=1))
        bounded_attempts = len(server.requests)
    assert bounded_attempts == 1 and bounded.status is RunStatus.MODEL_BUDGET  # the retry was refused, not hidden
    with FakeOpenAIServer(reply=_fails_once()) as server:
        transport = LiveTransport(LiveProfile(base_url=server.base_url, model="m", max_retries=1))
        retried = labkit.run("incomplete", transport=transport, stream=stream)
        attempts = len(server.requests)
    assert attempts == retried.count("ModelCall") == 2  # each request on the wire is one counted call
    assert retried.status is RunStatus.INCOMPLETE and retried.text == "Review finished."


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
def test_last_error_describes_the_latest_request_only(stream):
    with FakeOpenAIServer(reply=_fails_once()) as server:
        transport = _transport(server.base_url)
        failed = labkit.run("incomplete", transport=transport, stream=stream)
        error = transport.last_error
        later = labkit.run("incomplete", transport=transport, stream=stream)  # the same transport, a new run
    assert failed.status is RunStatus.PROVIDER_UNAVAILABLE and "answered HTTP 503" in str(error)
    assert later.status is RunStatus.INCOMPLETE and later.text == "Review finished."
    assert transport.last_error is None  # not the earlier run's error


def test_last_error_is_cleared_by_a_retry_that_succeeds():
    with FakeOpenAIServer(reply=_fails_once()) as server:
        transport = LiveTransport(LiveProfile(base_url=server.base_url, model="m", max_retries=1))
        outcome = labkit.run("incomplete", transport=transport)
    assert outcome.status is RunStatus.INCOMPLETE and outcome.count("ModelCall") == 2
    assert transport.last_error is None


def test_last_error_is_the_latest_failure_after_a_success():
    with FakeOpenAIServer(reply=lambda body: (200, _completion("Review finished."))) as server:
        transport = _transport(server.base_url)
        assert labkit.run("incomplete", transport=transport).status is RunStatus.INCOMPLETE
    assert transport.last_error is None
    outcome = labkit.run("incomplete", transport=transport)  # that server is gone now
    assert outcome.status is RunStatus.PROVIDER_UNAVAILABLE
    assert server.base_url in str(transport.last_error)


def test_the_console_shows_a_failing_servers_own_message(capsys):
    with FakeOpenAIServer(reply=_error_body(500)) as server:
        code = main(["run", "complete", "--live", "--base-url", server.base_url])
        attempts = len(server.requests)
    out = capsys.readouterr().out
    assert code == 2 and attempts == 1
    assert "hint: the model server at" in out and "answered HTTP 500: status 500 from the fake server" in out
    assert "ollama serve" not in out


@pytest.mark.parametrize(
    ("status", "openai_class", "names"),
    [
        (400, "BadRequestError", "tool calling"),
        (401, "AuthenticationError", "--api-key-env"),
        (403, "PermissionDeniedError", "403"),
        (404, "NotFoundError", "model 'm' was not found"),
        (422, "UnprocessableEntityError", "422"),
        (405, "APIStatusError", "405"),
    ],
)
def test_refusals_are_configuration_errors_naming_what_to_fix(status, openai_class, names):
    with FakeOpenAIServer(reply=_error_body(status)) as server:
        transport = _transport(server.base_url)
        with pytest.raises(ConfigurationError, match=names) as info:
            labkit.run("complete", transport=transport)
    assert type(info.value.__cause__).__name__ == openai_class
    assert server.base_url in str(info.value)


def test_a_refused_key_names_the_key_variable():
    with FakeOpenAIServer(api_key="right") as server:
        transport = LiveTransport(
            LiveProfile(base_url=server.base_url, model="m", api_key_env="LABKIT_K"), environ={"LABKIT_K": SECRET}
        )
        with pytest.raises(ConfigurationError, match=r"\$LABKIT_K") as info:
            labkit.run("complete", transport=transport)
    assert SECRET not in str(info.value)


def test_an_unknown_model_names_the_model():
    match = "model 'qwen-missing' was not found"
    with FakeOpenAIServer(model="llama3.2") as server, pytest.raises(ConfigurationError, match=match):
        labkit.run("complete", transport=LiveTransport(LiveProfile(base_url=server.base_url, model="qwen-missing")))


_NAMELESS_CALL = {"id": "x", "type": "function", "function": {"arguments": "{}"}}


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
@pytest.mark.parametrize(
    ("payload", "detail"),
    [
        (b"<html>not an API</html>", "the body is not JSON"),
        ({"choices": []}, "no choices|without a single chunk"),
        (
            {"choices": [{"index": 0, "message": {"role": "assistant", "tool_calls": [_NAMELESS_CALL]}}]},
            "no function name|without a single chunk",
        ),
    ],
    ids=["not-json", "no-choices", "call-without-name"],
)
def test_a_malformed_answer_is_a_provider_response_error(payload, detail, stream):
    with (
        FakeOpenAIServer(reply=lambda body: (200, payload)) as server,
        pytest.raises(ProviderResponseError, match=detail) as info,
    ):
        labkit.run("complete", transport=_transport(server.base_url), stream=stream)
    assert server.base_url in str(info.value)


def test_a_streamed_tool_call_without_a_name_is_a_provider_response_error():
    event = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "delta": {"tool_calls": [{"index": 0, "id": "x", "function": {"arguments": "{}"}}]},
                "finish_reason": "tool_calls",
            }
        ],
    }
    stream = b"data: " + json.dumps(event).encode() + b"\n\ndata: [DONE]\n\n"
    with (
        FakeOpenAIServer(reply=lambda body: (200, stream, "text/event-stream")) as server,
        pytest.raises(ProviderResponseError, match="streamed tool call 0 has no function name"),
    ):
        labkit.run("complete", transport=_transport(server.base_url), stream=True)


def test_an_error_event_in_a_stream_is_a_provider_response_error():
    stream = b'data: {"error": {"message": "model crashed", "type": "server_error"}}\n\n'
    with (
        FakeOpenAIServer(reply=lambda body: (200, stream, "text/event-stream")) as server,
        pytest.raises(ProviderResponseError, match="model crashed") as info,
    ):
        labkit.run("complete", transport=_transport(server.base_url), stream=True)
    assert server.base_url in str(info.value)


# -- the console ------------------------------------------------------------------------


def test_console_live_run_shows_the_profile_not_the_key(capsys, monkeypatch):
    monkeypatch.setenv("LABKIT_TEST_KEY", SECRET)
    with FakeOpenAIServer(labkit.SCENARIOS["complete"].script, api_key=SECRET) as server:
        code = main(
            [
                "run",
                "complete",
                "--live",
                "--base-url",
                server.base_url,
                "--model",
                "fake",
                "--api-key-env",
                "LABKIT_TEST_KEY",
            ]
        )
    out, err = capsys.readouterr()
    assert code == 0
    assert f"transport: live, model fake at {server.base_url}, key from $LABKIT_TEST_KEY" in out
    assert "status: Completed (exit 0)" in out
    assert SECRET not in out + err


def test_console_live_closed_port_exits_2_with_the_url(capsys):
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    code = main(["run", "complete", "--live", "--base-url", url, "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 2 and data["status"] == "ProviderUnavailable"
    assert url in data["hint"]


@pytest.mark.parametrize(
    "argv",
    [
        ["--live", "--api-key-env", "LABKIT_TEST_UNSET_KEY"],
        ["--live", "--profile", "/nonexistent/labkit-profile.toml"],
    ],
)
def test_console_configuration_errors_exit_78_with_one_line(capsys, monkeypatch, argv):
    monkeypatch.delenv("LABKIT_TEST_UNSET_KEY", raising=False)
    code = main(["run", "complete", *argv])
    out, err = capsys.readouterr()
    assert code == EXIT_CONFIG == 78
    assert out == "" and err.count("\n") == 1 and err.startswith("labkit run: ")


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (["--live", "--base-url", "localhost"], "base_url (from --base-url)"),
        (["--live", "--base-url", ""], "base_url (from --base-url)"),
        (["--live", "--base-url", "http://localhost:0/v1"], "0 is not a port a server listens on"),
        (["--live", "--model", ""], "model (from --model)"),
        (["--live", "--api-key-env", "A B"], "api_key_env (from --api-key-env)"),
    ],
)
def test_console_malformed_profile_flags_are_usage_errors_exit_64(capsys, argv, names):
    code = main(["run", "complete", *argv])
    out, err = capsys.readouterr()
    assert code == EXIT_USAGE  # a flag's bad value; the same value from a file or a variable is 78
    assert out == "" and err.count("\n") == 1 and err.startswith("labkit run: live profile: ") and names in err


def test_console_bad_url_from_the_environment_stays_a_configuration_error(capsys, monkeypatch):
    monkeypatch.setenv("LABKIT_BASE_URL", "localhost")
    assert main(["run", "complete", "--live"]) == EXIT_CONFIG
    assert "$LABKIT_BASE_URL" in capsys.readouterr().err


def test_console_model_not_found_exits_78(capsys):
    with FakeOpenAIServer(model="present") as server:
        code = main(["run", "complete", "--live", "--base-url", server.base_url, "--model", "absent"])
    err = capsys.readouterr().err
    assert code == 78 and "'absent'" in err and err.count("\n") == 1


def test_console_malformed_answer_exits_76(capsys):
    with FakeOpenAIServer(reply=lambda body: (200, {"choices": []})) as server:
        code = main(["run", "complete", "--live", "--base-url", server.base_url])
    assert code == EXIT_PROTOCOL == 76
    assert capsys.readouterr().err.count("\n") == 1


def test_console_profile_flags_need_live(capsys):
    assert main(["run", "complete", "--model", "x"]) == EXIT_USAGE
    assert "--model only applies with --live" in capsys.readouterr().err


def test_console_exit_codes_are_distinct():
    assert len({0, 2, labkit.EXIT_CANCELLED, EXIT_USAGE, labkit.EXIT_OUTPUT, EXIT_CONFIG, EXIT_PROTOCOL}) == 7


def test_import_and_console_stay_free_of_openai_and_opentelemetry():
    code = (
        "import sys, labkit, labkit.cli, labkit.transports.live, labkit.loops.telemetry\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('openai', 'opentelemetry', 'pandas', 'httpx'))\n"
        "print(heavy)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


# -- what happened, said as it happened (issue 20) -----------------------------------------------------

HTTP_SERVER_501 = (  # what `python -m http.server` answers to a POST (its own page, as sent)
    b'<!DOCTYPE HTML>\n<html lang="en">\n    <head>\n        <meta charset="utf-8">\n'
    b"        <title>Error response</title>\n    </head>\n    <body>\n        <h1>Error response</h1>\n"
    b"        <p>Error code: 501</p>\n        <p>Message: Unsupported method (&#x27;POST&#x27;).</p>\n"
    b"        <p>Error code explanation: 501 - Server does not support this operation.</p>\n    </body>\n</html>\n"
)


def test_a_plain_web_server_is_a_configuration_error_quoting_its_page(capsys):
    import http.server

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):  # the server's own access log would land in the test's stderr
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        code = main(["run", "complete", "--live", "--base-url", url, "--model", "m"])
    finally:
        server.shutdown()
        server.server_close()
    err = capsys.readouterr().err
    assert code == EXIT_CONFIG
    assert "is not a chat-completions endpoint: it answered HTTP 501" in err
    assert "Unsupported method ('POST')" in err  # the page's own words, entities decoded
    assert "<" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("status", "page"),
    [
        (501, HTTP_SERVER_501),
        (
            405,
            b"<html><head><title>405 Method Not Allowed</title></head><body><h1>Method Not Allowed</h1>"
            b"<p>The method is not allowed for the requested URL.</p></body></html>",
        ),
        (
            404,
            b"<!doctype html><html><body><h1>Not Found</h1><p>The requested URL was not found on this server.</p>"
            b"<script>var noise = 1;</script></body></html>",
        ),
        (405, b"Method Not Allowed"),  # plain text: still not a chat endpoint
    ],
    ids=["http.server 501", "405 page", "404 page", "405 text"],
)
def test_an_address_that_is_not_a_chat_endpoint_is_a_configuration_error(status, page):
    with FakeOpenAIServer(reply=lambda body: (status, page, "text/html")) as server:
        transport = _transport(server.base_url)
        with pytest.raises(ConfigurationError, match="is not a chat-completions endpoint") as info:
            labkit.run("complete", transport=transport)
        attempts = len(server.requests)
    message = str(info.value)
    assert f"answered HTTP {status}" in message and "ends in /v1" in message
    assert "<" not in message and "noise" not in message
    words = {501: "Unsupported method ('POST')", 405: "Method Not Allowed", 404: "The requested URL was not found"}
    assert words[status] in message
    assert attempts == 1


LONG = "The request was refused because " + " ".join(f"reason{i}" for i in range(80))

HINTS_400 = {  # what real servers say (vLLM, LiteLLM's proxy, llama-server), and the hint that fits it
    "vLLM without tool flags": (
        '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
        "tool calling is not enabled",
    ),
    "vLLM context": (
        "This model's maximum context length is 2048 tokens. However, you requested 2300 tokens in the messages.",
        "longer than the server's context",
    ),
    "llama-server context": (
        "the request exceeds the available context size, try increasing it",
        "longer than the server's context",
    ),
    "LiteLLM unknown model": (
        "litellm.BadRequestError: Invalid model name passed in model=gpt-x. Call `/v1/models` to view available models",
        "does not know model 'm'",
    ),
    "LiteLLM bad key": ("Authentication Error, No connected db.", "refused the key"),
    "something else": ("status 400 from the fake server", "the server's message says why"),
}


@pytest.mark.parametrize("case", list(HINTS_400))
def test_a_400s_hint_fits_its_message(case):
    said, hint = HINTS_400[case]
    with (
        FakeOpenAIServer(reply=lambda body: (400, {"error": {"message": said, "type": "BadRequestError"}})) as server,
        pytest.raises(ConfigurationError) as info,
    ):
        labkit.run("complete", transport=_transport(server.base_url))
    message = str(info.value)
    assert f"(HTTP 400: {said})" in message and hint in message
    others = {h for _, h in HINTS_400.values()} - {hint}
    assert not [other for other in others if other in message], message  # one hint, the one that fits


def test_a_long_server_message_is_cut_at_a_word():
    with FakeOpenAIServer(reply=lambda body: (503, {"error": {"message": LONG, "type": "x"}})) as server:
        transport = _transport(server.base_url)
        labkit.run("complete", transport=transport)
    quoted = str(transport.last_error).split("answered HTTP 503: ", 1)[1]
    assert quoted.endswith("…")
    kept = quoted[:-1]
    assert LONG.startswith(kept) and LONG[len(kept)] == " "  # the cut falls between two words
    assert 100 < len(kept) <= 200


def _chained(outer: BaseException, inner: BaseException) -> BaseException:
    outer.__cause__ = inner
    return outer


def test_a_timeout_says_whether_the_server_had_accepted_the_connection():
    import httpx

    profile = LiveProfile(model="m", timeout_s=7)
    request = httpx.Request("POST", f"{profile.base_url}/chat/completions")
    connect = map_error(_chained(openai.APITimeoutError(request), httpx.ConnectTimeout("connect")), profile)
    read = map_error(_chained(openai.APITimeoutError(request), httpx.ReadTimeout("read")), profile)
    mid_stream = map_error(httpx.ReadTimeout("read"), profile)  # below the client, while a stream was read
    assert isinstance(connect, ProviderUnavailable) and "cannot reach" in str(connect)
    assert "no connection within 5 s" in str(connect)
    assert isinstance(read, ProviderUnavailable) and "is up but silent for 7 s (busy or stalled)" in str(read)
    assert isinstance(mid_stream, ProviderUnavailable) and "went silent mid-answer for 7 s" in str(mid_stream)
    assert "cannot reach" not in str(read) + str(mid_stream)


# -- generated tool calls from a live server: every one answered, the console says which did not run ----------------

_json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=6)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=8,
)
_arguments = st.one_of(
    _json_values.map(json.dumps),  # JSON, mostly not the tool's fields
    st.fixed_dictionaries({"input": _json_values}).map(json.dumps),  # the right field, maybe the wrong type
    st.text(max_size=12),  # anything at all
    st.sampled_from(['{"input": 42', "{input: 42}", '{"input": NaN}', '{"input": 1e400}', "", "null", "[42]"]),
)
_calls = st.lists(
    st.tuples(st.sampled_from(["read_ticket", "finish_review", "read_tickets", "Read_Ticket", ""]), _arguments),
    min_size=1,
    max_size=3,
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=_calls, stream=st.booleans())
def test_generated_tool_calls_end_with_a_status_and_each_one_not_run_is_named(calls, stream):
    def completion(body: dict) -> tuple[int, dict]:
        tool_calls = [
            {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": arguments}}
            for i, (name, arguments) in enumerate(calls)
        ]
        message = {"role": "assistant", "content": None, "tool_calls": tool_calls}
        return 200, {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        }

    out, err = io.StringIO(), io.StringIO()
    with FakeOpenAIServer(reply=completion) as server, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        argv = ["run", "complete", "--live", "--base-url", server.base_url, "--model", "m", "--model-calls", "2"]
        code = main(argv + (["--stream"] if stream else []))
    if any(name == "" for name, _ in calls):  # a call without a function name is no chat completion labkit can use
        assert code == EXIT_PROTOCOL and "no function name" in err.getvalue() and err.getvalue().count("\n") == 1
        return
    assert code in (0, 2) and err.getvalue() == "", err.getvalue()
    text = out.getvalue()
    for i, (name, arguments) in enumerate(calls):
        if name not in ("read_ticket", "finish_review"):
            assert f"unknown tool requested: {name!r} (call c{i})" in text
            continue
        try:
            bound = json.loads(arguments)
        except ValueError:
            bound = None
        if not isinstance(bound, dict):
            assert f"tool call not run: {name!r} (call c{i}): arguments for {name!r} do not bind" in text, text


def test_a_malformed_call_is_named_in_the_json_too():
    body = {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "read_ticket", "arguments": "{input: 42}"},
                        }
                    ],
                },
            }
        ],
    }
    out = io.StringIO()
    with FakeOpenAIServer(reply=lambda _: (200, body)) as server, contextlib.redirect_stdout(out):
        code = main(
            ["run", "complete", "--live", "--base-url", server.base_url, "--model", "m", "--json", "--model-calls", "1"]
        )
    data = json.loads(out.getvalue())
    assert code == 2 and data["status"] == "ModelBudget"
    (call,) = data["calls_not_run"]
    assert call["id"] == "c1" and call["name"] == "read_ticket" and "Invalid JSON" in call["error"]
