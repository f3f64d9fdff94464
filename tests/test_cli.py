"""The console (SPEC §4, §6): statuses, exit codes, JSON shape, text layout, usage errors (exit 64)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from labkit import EXIT_CANCELLED, EXIT_USAGE, SCENARIOS, prepare
from labkit.cli import main

from support import SPEC_TABLE

AGENTS = {"harness": [], "simple": ["--simple"]}


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
@pytest.mark.parametrize("scenario", list(SPEC_TABLE))
def test_console_json_matches_the_spec_table(console_runs, scenario: str, agent: str) -> None:
    code, out, err = console_runs[scenario, agent]
    assert err == ""
    report = json.loads(out)
    assert set(report) == {"scenario", "agent", "status", "text", "events", "exit_code"}
    kinds = [e["kind"] for e in report["events"]]
    assert (report["status"], kinds.count("ToolCall"), kinds.count("ModelCall")) == SPEC_TABLE[scenario]
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
        ([], ["run", "scenarios"]),
        (["frob"], ["run", "scenarios"]),
    ],
    ids=["unknown-scenario", "unknown-flag", "negative-limit", "non-integer-limit", "nan-deadline", "no-command", "unknown-command"],
)
def test_usage_errors_exit_64_with_one_line(capsys, argv: list[str], must_mention: list[str]) -> None:
    assert main(argv) == EXIT_USAGE
    out, err = _lines(capsys)
    assert out == []
    assert len(err) == 1
    assert all(word in err[0] for word in must_mention)


def test_missing_scenario_lists_the_scenarios(capsys) -> None:
    assert main(["run"]) == EXIT_USAGE
    _, err = _lines(capsys)
    assert len(err) == 1
    assert all(name in err[0] for name in SCENARIOS)


def test_usage_error_exit_code_of_the_real_process() -> None:
    proc = subprocess.run([sys.executable, "-m", "labkit"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == EXIT_USAGE
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_caller_cancellation_exits_130(capsys, monkeypatch) -> None:
    def interrupted(coro):
        coro.close()
        raise KeyboardInterrupt

    monkeypatch.setattr("labkit.cli.run_sync", interrupted)
    assert main(["run", "complete"]) == EXIT_CANCELLED
    out, err = _lines(capsys)
    assert out == prepare("complete").header()  # printed when the run starts; no events, no status
    assert err == ["cancelled by the caller"]
    assert main(["run", "complete", "--json"]) == EXIT_CANCELLED
    out, err = _lines(capsys)
    assert out == []
    assert err == ["cancelled by the caller"]
