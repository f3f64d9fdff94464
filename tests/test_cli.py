"""The console: statuses, exit codes, JSON shape, text layout, usage errors (exit 64).

Rules from docs/guarantees.md, *Every stop has one name*, and README.md, *The scenarios*.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from support import SCENARIO_TABLE, sigint_as_in_a_terminal

import labkit
from labkit import EXIT_CANCELLED, EXIT_OUTPUT, EXIT_USAGE, SCENARIOS, Limits, prepare
from labkit.cli import main

AGENTS = {"harness": [], "simple": ["--simple"]}
LABKIT = str(Path(sys.executable).with_name("labkit"))  # the installed command (its real entry point)
HEADER_KEYS = {
    "scenario",
    "agent",
    "agent_name",
    "max_iterations",
    "harness_capabilities",
    "transport",
    "transport_description",
    "capabilities_granted",
    "tools",
    "limits",
    "completion",
}


@pytest.fixture(scope="module")
def console_runs() -> dict[tuple[str, str], tuple[int, str, str]]:
    """``python -m labkit run S --json [--simple]`` for every scenario and agent, as real processes run at once."""
    procs = {
        (scenario, agent): subprocess.Popen(
            [sys.executable, "-m", "labkit", "run", scenario, "--json", *flags],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for scenario in SCENARIOS
        for agent, flags in AGENTS.items()
    }
    results = {}
    for key, proc in procs.items():
        out, err = proc.communicate(timeout=60)
        results[key] = (proc.returncode, out, err)
    return results


@pytest.mark.parametrize("agent", list(AGENTS))
@pytest.mark.parametrize("scenario", list(SCENARIO_TABLE))
def test_console_json_matches_the_spec_table(console_runs, scenario: str, agent: str) -> None:
    code, out, err = console_runs[scenario, agent]
    assert err == ""
    report = json.loads(out)
    provider_failed = {"hint"} if scenario == "unavailable" else set()  # why the provider failed, nothing else
    assert set(report) == HEADER_KEYS | {"status", "text", "events", "exit_code"} | provider_failed
    kinds = [e["kind"] for e in report["events"]]
    assert (report["status"], kinds.count("ToolCall"), kinds.count("ModelCall")) == SCENARIO_TABLE[scenario]
    expected_code = 0 if scenario == "complete" else 2
    assert code == report["exit_code"] == expected_code
    assert (report["scenario"], report["agent"]) == (scenario, agent)
    assert all(set(e) == {"kind", "name", "count"} for e in report["events"])
    assert (report["text"] is None) == (report["status"] not in ("Completed", "Incomplete"))


def _lines(capsys) -> tuple[list[str], list[str]]:
    captured = capsys.readouterr()
    return captured.out.splitlines(), captured.err.splitlines()


@pytest.mark.parametrize("flags", [[], ["--simple"]], ids=["harness", "simple"])
def test_plain_output_layout(capsys, flags: list[str]) -> None:
    assert main(["run", "repeat", *flags]) == 2
    out, err = _lines(capsys)
    assert err == []
    assert out[0].startswith("agent: ")
    prefixes = ["agent: ", "transport: ", "capabilities granted: ", "limits: ", "completion: ", "events:", "status: "]
    positions = [next(i for i, line in enumerate(out) if line.startswith(p)) for p in prefixes]
    assert positions == sorted(positions)
    events = out[positions[-2] + 1 : positions[-1]]
    events = [line.split() for line in events if line.strip()]
    assert [e[1] for e in events] == ["ModelCall", "Middleware", "ToolCall", "ModelCall", "Middleware", "RepeatedCall"]
    assert out[positions[-1]] == "status: RepeatedCall (exit 2)"
    assert "withheld" in out[-1]


def test_plain_output_of_a_completed_run(capsys) -> None:
    assert main(["run", "complete"]) == 0
    out, _ = _lines(capsys)
    assert "status: Completed (exit 0)" in out
    assert out[-1] == "text: 'Review finished.'"
    assert any(line.startswith("harness capabilities: ") for line in out)


@pytest.mark.parametrize(
    ("scenario", "text_line"),
    [
        ("unavailable", "text: none (the provider failed before an answer)"),  # an outside failure, not a host rule
        ("repeat", "text: withheld (the host stopped the run)"),
        ("incomplete", "text: 'Review finished.' (not a success: the host condition is false)"),
    ],
)
def test_the_text_line_says_why_there_is_no_success_text(capsys, scenario: str, text_line: str) -> None:
    assert main(["run", scenario]) == 2
    out, _ = _lines(capsys)
    assert out[-1] == text_line


def test_the_hint_line_is_the_outcomes_hint_for_every_provider_failure(capsys) -> None:
    # The scripted endpoint has no error of its own to keep: the hint comes from the run's outcome.
    expected = labkit.run("unavailable").hint
    assert expected and "connection refused" in expected
    assert main(["run", "unavailable"]) == 2
    out, _ = _lines(capsys)
    assert [line for line in out if line.startswith("hint: ")] == [f"hint: {expected}"]
    assert main(["run", "unavailable", "--json"]) == 2
    assert json.loads(_lines(capsys)[0][0])["hint"] == expected
    assert main(["run", "repeat", "--json"]) == 2  # no provider failure: no hint at all
    assert "hint" not in json.loads(_lines(capsys)[0][0])


def test_flags_change_the_limits(capsys) -> None:
    assert main(["run", "complete", "--json", "--model-calls", "1"]) == 2
    out, _ = _lines(capsys)
    assert json.loads(out[0])["status"] == "ModelBudget"
    assert main(["run", "changing", "--json", "--tool-calls", "2", "--stream"]) == 2
    report = json.loads(_lines(capsys)[0][0])
    assert report["status"] == "ToolBudget"
    assert [e["kind"] for e in report["events"]].count("ToolCall") == 2
    assert main(["run", "deadline", "--json", "--deadline-s", "0.05"]) == 2
    assert json.loads(_lines(capsys)[0][0])["status"] == "DeadlineExceeded"


def test_scenarios_lists_all_eight_one_per_line(capsys) -> None:
    assert main(["scenarios"]) == 0
    out, _ = _lines(capsys)
    assert [line.split()[0] for line in out] == list(SCENARIOS)


@pytest.mark.parametrize(
    ("argv", "must_mention"),
    [
        (["run", "nope"], list(SCENARIOS)),
        (["run", "complete", "--bogus"], ["--bogus", "--simple", "--json", "--model-calls", "--deadline-s"]),
        (["run", "complete", "--model-calls", "-1"], ["--model-calls", "0"]),
        (["run", "complete", "--tool-calls", "abc"], ["--tool-calls", "int"]),
        (["run", "complete", "--deadline-s", "nan"], ["--deadline-s", "finite"]),
        (["frob"], ["run", "scenarios"]),
        (["--bogus"], ["run", "scenarios"]),
    ],
    ids=[
        "unknown-scenario",
        "unknown-flag",
        "negative-limit",
        "non-integer-limit",
        "nan-deadline",
        "unknown-command",
        "flag-only",
    ],
)
def test_usage_errors_exit_64_with_one_line(capsys, argv: list[str], must_mention: list[str]) -> None:
    assert main(argv) == EXIT_USAGE
    out, err = _lines(capsys)
    assert out == []
    assert len(err) == 1
    assert all(word in err[0] for word in must_mention)


@pytest.mark.parametrize(
    ("files", "argument", "must_mention"),
    [
        ({"s.py": "def (:\n"}, "s.py:X", ["'s.py' failed to load", "SyntaxError"]),
        ({"s.py": ""}, "s.py:X", ["s.py has no scenario named 'X'", "declares: none"]),
        ({"s.py/": ""}, "s.py:X", ["'s.py' is not a file"]),
        ({}, "s.py:X", ["'s.py' does not exist"]),
        ({"s.py": "X = 42\n"}, "s.py:X", ["no scenario named 'X' (X is an int, not one made with labkit.scenario"]),
        ({"s.py": "X = None\n"}, "s.py:X", ["(X is None, not one made"]),
        ({"s.py": "def X():\n    pass\n"}, "s.py:X", ["(X is a function, not one made"]),
        ({"s.py": "import labkit as X\n"}, "s.py:X", ["(X is a module, not one made"]),
        ({"s.txt": "X = 1\n"}, "s.txt:X", ["'s.txt' is not a .py file", "path/to/file.py:NAME"]),
        ({"s.py": "X = 1\n"}, "s.py", ["'s.py' is a file", "s.py:NAME"]),
        ({"s.py": "X = 1\n"}, "s.py:", ["path/to/file.py:NAME, not 's.py:'"]),
        ({"s.py": "raise SystemExit(0)\n"}, "s.py:X", ["exits when run", "__main__"]),
        ({"s.py": b"\xff\xfe"}, "s.py:X", ["'s.py' failed to load", "can't decode"]),
    ],
    ids=[
        "syntax-error",
        "empty-file",
        "directory",
        "missing-file",
        "an-int",
        "none",
        "a-function",
        "a-module",
        "not-python",
        "no-name",
        "empty-name",
        "exits",
        "not-utf8",
    ],
)
def test_a_scenario_file_mistake_is_one_line_exit_64(
    capsys, tmp_path: Path, monkeypatch, files: dict, argument: str, must_mention: list[str]
) -> None:
    for name, content in files.items():
        if name.endswith("/"):
            (tmp_path / name).mkdir()
        elif isinstance(content, bytes):
            (tmp_path / name).write_bytes(content)
        else:
            (tmp_path / name).write_text(content)
    monkeypatch.chdir(tmp_path)
    assert main(["run", argument]) == EXIT_USAGE
    out, err = _lines(capsys)
    assert out == [] and len(err) == 1, err
    assert err[0].startswith("labkit run: ") and all(word in err[0] for word in must_mention), err[0]


@pytest.mark.parametrize(
    ("content", "must_mention"),
    [
        ("missing", ["p.toml: cannot read it (No such file"]),
        ("directory", ["p.toml: cannot read it"]),
        ("unreadable", ["p.toml: cannot read it (Permission denied)"]),
        (b"\xff\xfe", ["p.toml: not UTF-8 text"]),
        (b"model = \n", ["p.toml: not valid TOML"]),
        (b"model = 42\n", ["model (from profile file", "valid string"]),
    ],
    ids=["missing", "directory", "unreadable", "not-utf8", "not-toml", "wrong-type"],
)
def test_a_bad_profile_file_is_one_line_exit_78(capsys, tmp_path: Path, monkeypatch, content, must_mention) -> None:
    profile = tmp_path / "p.toml"
    if content == "directory":
        profile.mkdir()
    elif content == "unreadable":  # made unreadable as the OS would refuse it (these tests may run as root)
        profile.write_text('model = "m"\n')
        real = Path.read_text

        def refuse(self: Path, *args: object, **kwargs: object) -> str:
            if self == profile:
                raise PermissionError(13, "Permission denied", str(self))
            return real(self, *args, **kwargs)

        monkeypatch.setattr(Path, "read_text", refuse)
    elif content != "missing":
        profile.write_bytes(content)
    assert main(["run", "complete", "--live", "--profile", str(profile)]) == labkit.EXIT_CONFIG
    out, err = _lines(capsys)
    assert out == [] and len(err) == 1, err
    assert err[0].startswith("labkit run: live profile") and all(word in err[0] for word in must_mention), err[0]


def test_missing_scenario_lists_the_scenarios(capsys) -> None:
    assert main(["run"]) == EXIT_USAGE
    _, err = _lines(capsys)
    assert len(err) == 1
    assert all(name in err[0] for name in SCENARIOS)


def test_usage_error_exit_code_of_the_real_process() -> None:
    proc = subprocess.run([sys.executable, "-m", "labkit", "run"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == EXIT_USAGE
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("command", [[LABKIT], [sys.executable, "-m", "labkit"]], ids=["labkit", "python-m"])
def test_a_bare_labkit_prints_the_usage_and_exits_64(command: list[str]) -> None:
    proc = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert proc.returncode == EXIT_USAGE
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert lines[0].startswith("usage: labkit ") and "{run,scenarios}" in lines[0]
    commands = {line.split()[0] for line in lines if line.strip()}
    assert {"run", "scenarios"} <= commands  # each command listed with its help
    assert "Traceback" not in proc.stderr


def test_version(capsys) -> None:
    assert main(["--version"]) == 0
    assert _lines(capsys) == ([f"labkit {labkit.__version__}"], [])
    proc = subprocess.run([LABKIT, "--version"], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"labkit {labkit.__version__}\n", "")


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["run", "repeat", "extra"], "labkit run: unexpected argument 'extra'"),
        (["run", "repeat", "a", "b"], "labkit run: unexpected arguments 'a', 'b'"),
        (["run", "repeat", "--", "extra"], "labkit run: unexpected argument 'extra'"),
        (["scenarios", "extra"], "labkit scenarios: unexpected argument 'extra'"),
    ],
)
def test_an_extra_word_is_an_unexpected_argument(capsys, argv: list[str], line: str) -> None:
    assert main(argv) == EXIT_USAGE
    assert _lines(capsys) == ([], [line])


# Every flag of `labkit run`, each with the bad values a user could type: exit 64, one line naming the flag.
BAD_FLAG_VALUES = [
    (["--model-calls"], "--model-calls"),  # no value
    (["--model-calls", "1.5"], "--model-calls"),
    (["--model-calls", "-1"], "--model-calls"),
    (["--model-calls", "many"], "--model-calls"),
    (["--tool-calls="], "--tool-calls"),
    (["--tool-calls", "-2"], "--tool-calls"),
    (["--tool-calls", "0x10"], "--tool-calls"),
    (["--repetitions", "-3"], "--repetitions"),
    (["--repetitions", "true"], "--repetitions"),
    (["--deadline-s"], "--deadline-s"),
    (["--deadline-s", "abc"], "--deadline-s"),
    (["--deadline-s", "-1"], "--deadline-s"),
    (["--deadline-s", "inf"], "--deadline-s"),
    (["--deadline-s", "1e400"], "--deadline-s"),
    (["--deadline-s", "nan"], "--deadline-s"),
    (["--simple=yes"], "--simple"),
    (["--json=1"], "--json"),
    (["--stream=no"], "--stream"),
    (["--live=1"], "--live"),
    (["--dead", "1"], "--dead"),  # no abbreviations: `--dead` is not `--deadline-s`
    (["--base-url", "http://localhost:1/v1"], "--base-url only applies with --live"),
    (["--model", "m"], "--model only applies with --live"),
    (["--api-key-env", "KEY"], "--api-key-env only applies with --live"),
    (["--profile", "p.toml"], "--profile only applies with --live"),
    (["--live", "--base-url"], "--base-url"),
    (["--live", "--base-url", "localhost"], "--base-url"),
    (["--live", "--model", ""], "--model"),
    (["--live", "--api-key-env", "not a name"], "--api-key-env"),
]


@pytest.mark.parametrize(("flags", "named"), BAD_FLAG_VALUES, ids=[" ".join(f) or "none" for f, _ in BAD_FLAG_VALUES])
def test_every_bad_flag_value_exits_64_with_one_line(capsys, flags: list[str], named: str) -> None:
    assert main(["run", "complete", *flags]) == EXIT_USAGE
    out, err = _lines(capsys)
    assert out == []
    assert len(err) == 1 and err[0].startswith("labkit run: ") and named in err[0]


def test_json_carries_what_the_plain_header_shows(capsys) -> None:
    for flags in AGENTS.values():
        assert main(["run", "repeat", *flags]) == 2
        text, _ = _lines(capsys)
        assert main(["run", "repeat", "--json", *flags]) == 2
        report = json.loads(_lines(capsys)[0][0])
        assert set(report) >= HEADER_KEYS
        header = text[: text.index("")]
        expected = [f"agent: {report['agent']} ({report['agent_name']}, max_iterations={report['max_iterations']})"]
        if report["harness_capabilities"] is not None:
            assert report["agent"] == "harness"
            items = [f"{name}={'on' if on else 'off'}" for name, on in report["harness_capabilities"].items()]
            assert header[1].startswith("harness capabilities: ")
            listing = [line for line in header[2:] if line.startswith("  ")]  # wrapped at spaces, indented
            joined = " ".join(" ".join(header[1 : 2 + len(listing)]).split())
            assert [item.split(" (")[0] for item in joined.split(": ", 1)[1].split(", ")] == items
            expected += header[1 : 2 + len(listing)]
        else:
            assert report["agent"] == "simple"
        expected += [
            f"transport: {report['transport']} (scenario {report['scenario']}: {report['transport_description']})",
            f"capabilities granted: {', '.join(report['capabilities_granted'])}",
            f"tools visible to the model: {', '.join(report['tools'])}",
            f"limits: {Limits(**report['limits'])}",
            f"completion: {report['completion']}",
        ]
        assert header == expected


class TestGivesUp:
    """A transport whose client cancels its own request: nobody cancelled the run."""

    __test__ = False
    name = "gives-up"

    async def send(self, request):
        raise asyncio.CancelledError("the client library gave up")
        yield  # pragma: no cover


def test_a_provider_cancelling_itself_is_provider_unavailable_not_the_caller(capsys, monkeypatch) -> None:
    import labkit.cli

    real_prepare = labkit.cli.prepare
    monkeypatch.setattr(labkit.cli, "prepare", lambda *a, **k: real_prepare(*a, **{**k, "transport": TestGivesUp()}))
    assert main(["run", "complete"]) == 2  # not 130: the caller did not cancel
    out, err = _lines(capsys)
    assert err == []
    assert "status: ProviderUnavailable (exit 2)" in out  # not DeadlineExceeded
    (hint,) = [line for line in out if line.startswith("hint: ")]
    assert "the provider cancelled its own request" in hint and "nobody cancelled the run" in hint
    assert main(["run", "complete", "--json"]) == 2
    report = json.loads(_lines(capsys)[0][0])
    assert report["status"] == "ProviderUnavailable" and "cancelled its own request" in report["hint"]


def test_caller_cancellation_exits_130(capsys, monkeypatch) -> None:
    def interrupted(coro):
        coro.close()
        raise KeyboardInterrupt

    monkeypatch.setattr("labkit.cli.run_sync", interrupted)
    assert main(["run", "complete"]) == EXIT_CANCELLED
    out, err = _lines(capsys)
    assert out == []  # interrupted before the run started: the header is printed only once it runs
    assert err == ["cancelled by the caller"]
    assert main(["run", "complete", "--json"]) == EXIT_CANCELLED
    out, err = _lines(capsys)
    assert out == []
    assert err == ["cancelled by the caller"]


def test_the_header_is_printed_once_the_run_starts(capsys) -> None:
    assert main(["run", "repeat"]) == 2
    out, _ = _lines(capsys)
    header = prepare("repeat").header()
    assert out[: len(header)] == header
    assert out[len(header) :][:2] == ["", "events:"]


def test_an_unknown_flag_lists_the_flags_of_that_command(capsys) -> None:
    assert main(["scenarios", "--json"]) == EXIT_USAGE
    _, err = _lines(capsys)
    assert err == ["labkit scenarios: unrecognized arguments: --json; scenarios takes no flags"]
    assert main(["run", "repeat", "--bogus"]) == EXIT_USAGE
    _, err = _lines(capsys)
    assert "--model-calls" in err[0] and "--live" in err[0] and "--bogus;" in err[0]


def test_a_reader_that_leaves_early_is_not_an_error() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "labkit", "run", "changing", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader leaves before the console writes, like `| head -c 0`
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 2
    assert "Traceback" not in err and "BrokenPipe" not in err


# -- whatever happens to stdout, the run's exit code survives -----------------------------


def _console(*args: str, **options) -> subprocess.Popen[bytes]:
    return subprocess.Popen([LABKIT, *args], stderr=subprocess.PIPE, **options)


@pytest.mark.parametrize("read", [0, 1], ids=["closed-at-once", "one-byte-read"])
@pytest.mark.parametrize(("scenario", "code"), [("complete", 0), ("repeat", 2)])
def test_a_closed_pipe_keeps_the_runs_exit_code(read: int, scenario: str, code: int) -> None:
    """`labkit run complete | true` (or `| head -c 1`): the header, written first, meets a closed pipe."""
    proc = _console("run", scenario, stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert len(proc.stdout.read(read)) == read  # 0: the reader leaves before the header is written
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == code
    assert err == ""  # no traceback, no "Exception ignored", nothing


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize(("scenario", "status", "code"), [("complete", "Completed", 0), ("repeat", "RepeatedCall", 2)])
@pytest.mark.parametrize("flags", [[], ["--json"]], ids=["text", "json"])
def test_a_failing_stdout_gives_one_line_and_exit_74_naming_the_runs_code(
    flags: list[str], scenario: str, status: str, code: int
) -> None:
    with open("/dev/full", "wb") as full:  # every write fails with ENOSPC
        proc = _console("run", scenario, *flags, stdout=full)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == EXIT_OUTPUT == 74
    lines = err.decode().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("labkit: could not write the output (")
    assert f"the run ended with status {status} (exit {code})" in lines[0]


def test_no_stdout_at_all_keeps_the_runs_exit_code() -> None:
    proc = _console("run", "repeat", stdout=subprocess.DEVNULL, preexec_fn=lambda: os.close(1))
    _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (2, b"")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("flags", [[], ["--json"]], ids=["text", "json"])
def test_an_ascii_only_stdout_gets_escapes_not_a_traceback(flags: list[str]) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    proc = subprocess.run(
        [LABKIT, "run", "complete", "--live", "--model", "modèle-ü", "--base-url", url, *flags],
        capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": "ascii"},
        timeout=60,
    )
    assert proc.returncode == 2  # ProviderUnavailable: the run's own code
    assert proc.stderr == b""
    out = proc.stdout.decode("ascii")  # nothing but ASCII reached the stream
    if flags:
        assert json.loads(out)["status"] == "ProviderUnavailable"
    else:
        assert "model mod\\xe8le-\\xfc at " in out and "status: ProviderUnavailable (exit 2)" in out


# -- Ctrl+C during start-up: 130, one line, no traceback -----------------------------------

_HOLD_IMPORT = """
import importlib.metadata, sys, time

held = sys.argv[1]

class HoldImport:  # blocks the import of one module until Ctrl+C, as a slow disk would
    def find_spec(self, name, path=None, target=None):
        if name == held:
            print("holding", flush=True)
            time.sleep(60)
        return None

sys.meta_path.insert(0, HoldImport())
command = sys.argv[2:]
if command[0] == "-m":  # python -m labkit: the package is imported first, then its __main__
    sys.argv = ["labkit", *command[2:]]
    import runpy
    runpy.run_module(command[1], run_name="__main__", alter_sys=True)
else:  # the `labkit` command: its real entry point, as the installed script calls it
    sys.argv = ["labkit", *command]
    (entry,) = importlib.metadata.entry_points(group="console_scripts", name="labkit")
    sys.exit(entry.load()())
"""


@pytest.mark.parametrize(
    ("held", "command"),
    [
        ("pydantic", ["run", "complete"]),  # deep inside `import labkit`
        ("labkit.cli", ["run", "complete"]),
        ("labkit.transports.live", ["run", "complete", "--live"]),  # after the imports, while building the run
        ("labkit.cli", ["-m", "labkit", "run", "complete"]),
    ],
    ids=["importing-labkit", "importing-the-console", "preparing-the-run", "python-m-labkit"],
)
def test_ctrl_c_during_start_up_exits_130_quietly(held: str, command: list[str]) -> None:
    import _labkit_console  # the entry point keeps its own copy of the code: it cannot import labkit first

    assert _labkit_console.EXIT_CANCELLED == EXIT_CANCELLED
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLD_IMPORT, held, *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_as_in_a_terminal,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "holding\n"  # start-up is held at that import: deterministic
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == EXIT_CANCELLED
    assert err == "cancelled by the caller\n"
    assert out == ""


_HOLD_LOOP = """
import asyncio, os, sys, time

marker = sys.argv[1]

class HoldingPolicy(asyncio.DefaultEventLoopPolicy):  # the loop is built only once the test says so
    def new_event_loop(self):
        print("holding", flush=True)
        for _ in range(3000):  # the test sends SIGINT, then creates the marker
            if os.path.exists(marker):
                break
            time.sleep(0.01)
        return super().new_event_loop()

asyncio.set_event_loop_policy(HoldingPolicy())
from labkit.cli import main
sys.exit(main(["run", "complete"]))
"""


def test_ctrl_c_while_the_event_loop_is_built_exits_130_quietly(tmp_path: Path) -> None:
    marker = tmp_path / "go"
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLD_LOOP, str(marker)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_as_in_a_terminal,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "holding\n"
        proc.send_signal(signal.SIGINT)
        marker.touch()
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == EXIT_CANCELLED
    assert err == "cancelled by the caller\n"
    assert out == ""  # the run never started: no header


def test_the_readme_sample_output_is_the_real_output(capsys) -> None:
    # the README shows `labkit run repeat` line by line; a changed header must change it too
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    command = "$ labkit run repeat\n"
    start = readme.index(command) + len(command)
    sample = readme[start : readme.index("```", start)]
    assert main(["run", "repeat"]) == 2
    assert capsys.readouterr().out == sample


# -- generated mistakes, judged against the README's exit-code table -------------------------------------------------
# Each strategy makes one kind of user mistake in an otherwise valid command line; the expected code is read from the
# README's table by the words of its row (never retyped here), the answer must be one stderr line naming the mistake.


def _documented_codes() -> dict[str, int]:
    """The README's exit-code table, as {the row's meaning: its code}."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    rows = [line.split("|")[1:3] for line in readme.splitlines() if line.startswith("| ") and line[2:4].isdigit()]
    return {meaning.strip(): int(code) for code, meaning in rows}


def _code_of(words: str) -> int:
    (code,) = (code for meaning, code in _documented_codes().items() if meaning.startswith(words))
    return code


def _in_process(argv: list[str]) -> tuple[int, str, list[str]]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue().splitlines()


_NAMES = sorted(SCENARIOS)
_COUNTS = ("--model-calls", "--tool-calls", "--repetitions")
_VALUE_FLAGS = (*_COUNTS, "--deadline-s", "--runtime")
_FLAG_WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=12)


@st.composite
def _mistyped(draw: st.DrawFn) -> tuple[str, str]:
    """A scenario name with one letter dropped, doubled, swapped or upper-cased, and the name it came from."""
    name = draw(st.sampled_from(_NAMES))
    i = draw(st.integers(0, len(name) - 2))
    typo = draw(
        st.sampled_from(
            [
                name[:i] + name[i + 1 :],
                name[:i] + name[i] + name[i:],
                name[:i] + name[i + 1] + name[i] + name[i + 2 :],
                name[:i] + name[i].upper() + name[i + 1 :],
            ]
        )
    )
    assume(typo not in SCENARIOS)
    return typo, name


_bad_count = st.one_of(
    st.integers(max_value=-1).map(str),
    st.floats(allow_nan=True).filter(lambda x: not float(x).is_integer()).map(repr),
    st.sampled_from(["", "1.0", "1e3", "0x10", "true", "one", "1_0x", " ", "--"]),
)
_bad_seconds = st.one_of(
    st.floats(max_value=-1e-9).map(repr),
    st.sampled_from(["nan", "-nan", "inf", "-inf", "1e400", "abc", "", "1,5", "0x1p3"]),
)


@settings(max_examples=60, deadline=None)
@given(mistake=_mistyped(), agent=st.sampled_from([[], ["--simple"], ["--json"]]))
def test_a_mistyped_scenario_is_a_usage_error_naming_the_near_one(mistake: tuple[str, str], agent: list[str]):
    typo, name = mistake
    code, out, err = _in_process(["run", typo, *agent])
    assert code == _code_of("usage error") and out == "" and len(err) == 1, err
    assert f"invalid choice: {typo!r}" in err[0] and err[0].endswith(f"did you mean {name!r}?"), err[0]


@settings(max_examples=80, deadline=None)
@given(
    mistake=st.one_of(
        st.tuples(st.sampled_from(_COUNTS), _bad_count).map(lambda fv: ([f"{fv[0]}={fv[1]}"], fv[0])),
        st.tuples(_bad_seconds).map(lambda v: ([f"--deadline-s={v[0]}"], "--deadline-s")),
        _FLAG_WORDS.map(lambda w: f"--{w}").filter(lambda f: f not in main_flags()).map(lambda f: ([f], f)),
        st.sampled_from(_VALUE_FLAGS).map(lambda f: ([f, _a_value(f), f, _a_value(f)], f"argument {f}: given twice")),
        st.sampled_from(["--base-url=http://h/v1", "--model=m", "--api-key-env=K", "--profile=p.toml"]).map(
            lambda f: ([f], f"{f.split('=')[0]} only applies with --live")
        ),
        st.sampled_from(["http://h:0/v1", "http://h:65536/v1", "ftp://h/v1", "http:///v1", "h:8080"]).map(
            lambda url: (["--live", f"--base-url={url}"], "--base-url")
        ),
    ),
    scenario=st.sampled_from(_NAMES),
    before=st.lists(st.sampled_from(["--json", "--stream", "--simple"]), max_size=2, unique=True),
)
def test_generated_flag_mistakes_are_one_line_and_the_usage_code(mistake, scenario: str, before: list[str]):
    flags, named = mistake
    code, out, err = _in_process(["run", scenario, *before, *flags])
    assert code == _code_of("usage error"), (flags, err)
    assert out == "" and len(err) == 1 and not any("Traceback" in line for line in err), err
    assert err[0].startswith("labkit run: ") and named in err[0], err[0]


def main_flags() -> list[str]:
    """The flags of ``labkit run``, as its usage line shows them."""
    from labkit.cli import _Output, _parser

    return _parser(_Output()).commands["run"].flags


def _a_value(flag: str) -> str:
    return "maf" if flag == "--runtime" else "3"


@pytest.mark.parametrize(
    ("typed", "near"),
    [
        (["runn", "complete"], "'run'"),
        (["scenario"], "'scenarios'"),
        (["run", "complete", "--runtime", "lang-graph"], "'langgraph'"),
        (["run", "complete", "--jsn"], "--json"),
        (["run", "complete", "--deadline", "3"], "--deadline-s"),
    ],
)
def test_a_mistyped_command_runtime_or_flag_names_the_near_one(typed: list[str], near: str) -> None:
    code, out, err = _in_process(typed)
    assert code == _code_of("usage error") and out == "" and len(err) == 1
    assert f"did you mean {near}?" in err[0], err[0]


def test_a_word_near_nothing_gets_no_guess() -> None:
    code, _, err = _in_process(["run", "qwertyuiop"])
    assert code == _code_of("usage error") and "did you mean" not in err[0]


_PROFILE_KEYS = ("base_url", "model", "api_key_env", "timeout_s", "max_retries")
_toml_value = st.one_of(
    st.integers(-3, 99).map(str),
    st.sampled_from(
        [
            '""',
            '" "',
            "true",
            "[1]",
            "{a = 1}",
            "nan",
            "-1.5",
            '"ftp://h/v1"',
            '"http://h:0/v1"',
            '"http://h:99999/v1"',
            '"not a name"',
            '"http://"',
        ]
    ),
)


@settings(max_examples=40, deadline=None)
@given(
    entries=st.dictionaries(st.sampled_from([*_PROFILE_KEYS, "url", "Model", "api_key"]), _toml_value, min_size=1),
    table=st.booleans(),
)
def test_generated_broken_profile_files_are_one_line_and_the_configuration_code(entries, table):
    profile = _tmp_profile("".join(["[live]\n" if table else "", *(f"{k} = {v}\n" for k, v in entries.items())]))
    try:
        from labkit.transports.live import LiveProfile

        try:
            LiveProfile.load(profile, environ={})
        except labkit.ConfigurationError:
            pass
        else:  # a file that happens to be valid is not this test's mistake
            assume(False)
        code, out, err = _in_process(["run", "complete", "--live", "--profile", str(profile)])
    finally:
        profile.unlink()
    assert code == _code_of("`--live` or `--runtime` only: configuration error"), err
    assert out == "" and len(err) == 1 and err[0].startswith("labkit run: live profile"), err
    assert any(key in err[0] for key in entries) or "not valid TOML" in err[0], err[0]


def _tmp_profile(text: str) -> Path:
    import tempfile

    handle, name = tempfile.mkstemp(suffix=".toml")
    os.write(handle, text.encode())
    os.close(handle)
    return Path(name)
