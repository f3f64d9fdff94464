"""labkit.teaching.terminal.console: the console run in-process, shown by its status line (chapter 7)."""

from __future__ import annotations

import pytest

import labkit
from labkit.cli import main
from labkit.teaching.terminal import console


@pytest.mark.parametrize(
    ("command", "status"),
    [
        (["run", "complete"], "status: Completed (exit 0)"),
        (["run", "complete", "--tool-calls", "1"], "status: ToolBudget (exit 2)"),
        ("run repeat --simple", "status: RepeatedCall (exit 2)"),
        ("run forbidden --json", None),  # one JSON object: no status line, so everything is shown
    ],
)
def test_the_status_line_and_the_same_exit_code_as_the_console(capsys, command, status):
    code = console(command)
    shown = capsys.readouterr().out.splitlines()
    words = command.split() if isinstance(command, str) else command
    assert code == main(words)
    capsys.readouterr()
    assert shown[0] == "$ labkit " + " ".join(words)
    if status is not None:
        assert shown[1:] == [status]
    else:
        assert '"status": "PermissionDenied"' in "\n".join(shown[1:])


def test_a_usage_mistake_shows_its_one_error_line(capsys):
    assert console(["run", "complete", "--model-calls", "-1"]) == 64
    shown = capsys.readouterr().out.splitlines()
    assert len(shown) == 2 and "--model-calls" in shown[1] and "greater than or equal to 0" in shown[1]


def test_show_all_prints_the_whole_console_output(capsys):
    console("run complete", show="all")
    shown = capsys.readouterr().out
    assert "agent: harness" in shown and "limits:" in shown and "status: Completed (exit 0)" in shown


@pytest.mark.parametrize("command", ["run complete --tool-calls 1", "run complete --model-calls 1.5"])
def test_show_none_prints_nothing_and_returns_the_same_exit_code(capsys, command):
    code = console(command, show="none")
    assert capsys.readouterr().out == ""
    assert code == main(command.split())


@pytest.mark.parametrize(
    ("command", "show", "words"),
    [
        ("run complete", "some", "show must be one of 'status', 'all', 'none'"),
        (42, "status", "command must be the words after `labkit`"),
        (["run", 42], "status", "command must be the words after `labkit`"),
    ],
)
def test_bad_input_is_one_clear_error(command, show, words):
    with pytest.raises(labkit.InputError, match=words):
        console(command, show=show)
