"""Bad input from the model and from the user: a clear recorded result, a named status, never a crash.

Model input, one row per kind. Binding failures, unknown tools and repeated
call ids never reach a guard (no ``ToolCall``, nothing counted, no body); the
model sees an error result and the run goes on to its next model call.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from reliability_kit import CAP, build, ev, go, results

from labkit import Call, DuplicateToolError, ExecutionScope, Limits, RunStatus, Say, ToolArgumentsError
from labkit.cli import main as console


@dataclass(frozen=True)
class Row:
    step: Any  # the first model response
    result: str | None  # a fragment of the recorded result for call id "x" (None: no tool result)
    reaches_guard: bool
    middleware: bool = True  # the observing middleware saw a known tool


DEEP = '{"n": ' + "[" * 10_000 + "]" * 10_000 + "}"
HUGE_INT = '{"n": ' + "9" * 5_000 + "}"
LONG_TEXT = "a" * 1_000_000

CATALOGUE = {
    "not-json": Row(Call("probe", "not json {", id="x"), "do not bind: arguments: Invalid JSON", False),
    "not-an-object": Row(Call("probe", "[1, 2]", id="x"), "Input should be an object", False),
    "wrong-type": Row(Call("probe", '{"n": "abc"}', id="x"), "n: Input should be a valid integer", False),
    "bool-for-int": Row(Call("probe", '{"n": true}', id="x"), "a boolean is not a number", False),
    "missing-field": Row(Call("probe", "{}", id="x"), "n: Field required", False),
    "extra-field": Row(
        Call("probe", '{"n": 1, "admin": true}', id="x"), "admin: Extra inputs are not permitted", False
    ),
    "nan": Row(Call("probe", '{"n": NaN}', id="x"), "n: Input should be a finite number", False),
    "infinity": Row(Call("probe", '{"n": -Infinity}', id="x"), "n: Input should be a finite number", False),
    "huge-float": Row(Call("probe", '{"n": 1e400}', id="x"), "n: Input should be a finite number", False),
    "huge-int": Row(Call("probe", HUGE_INT, id="x"), "number out of range", False),
    "deep-nesting": Row(Call("probe", DEEP, id="x"), "recursion limit exceeded", False),
    "long-string": Row(Call("echo", {"text": LONG_TEXT}, id="x"), "echo 1000000 chars", True),
    "unknown-tool": Row(Call("delete_everything", {"n": 1}, id="x"), "unknown tool 'delete_everything'", False, False),
    "duplicate-ids": Row(
        [Call("probe", {"n": 1}, id="x"), Call("probe", {"n": 2}, id="x")],
        "call ids repeat in this response",
        False,
        False,
    ),
    "empty-response": Row(Say(""), None, False, False),
}


@pytest.mark.parametrize("kind", list(CATALOGUE))
def test_bad_model_input(kind: str) -> None:
    row = CATALOGUE[kind]
    entries: list[Any] = []

    async def probe(n: int) -> str:
        entries.append(n)
        return "probe ok"

    async def echo(text: str) -> str:
        entries.append(len(text))
        return f"echo {len(text)} chars"

    agent, transport, scope = build([row.step, "done"], {"probe": probe, "echo": echo})

    outcome = asyncio.run(go(agent))

    by_id = results(outcome)
    if row.result is None:  # an empty response ends the loop as Incomplete
        assert by_id == {}
        assert outcome.status is RunStatus.INCOMPLETE and outcome.text is None
        assert transport.calls == 1
        assert list(outcome.events) == [ev("ModelCall", "model", 1)]
        return
    assert list(by_id) == ["x"] and len(by_id["x"]) == 1  # exactly one recorded result
    assert row.result in by_id["x"][0]
    assert by_id["x"][0].startswith("echo" if row.reaches_guard else "error:")
    assert outcome.status is RunStatus.INCOMPLETE and outcome.text == "done"  # the run went on
    assert transport.calls == 2
    tool = "echo" if kind == "long-string" else "probe"
    middle = [ev("Middleware", tool, 1)] if row.middleware else []
    admitted = [ev("ToolCall", tool, 1)] if row.reaches_guard else []
    assert list(outcome.events) == [ev("ModelCall", "model", 1), *middle, *admitted, ev("ModelCall", "model", 2)]
    assert scope.usage.tool_calls == (1 if row.reaches_guard else 0)
    assert len(entries) == (1 if row.reaches_guard else 0)


def test_bad_input_keeps_the_model_call_budget() -> None:
    """A model that only ever sends bad arguments ends by a named stop, not by a crash or a hang."""

    async def probe(n: int) -> int:
        return n

    agent, transport, _ = build(lambda n, request: Call("probe", "not json"), {"probe": probe})
    outcome = asyncio.run(go(agent))
    assert outcome.status is RunStatus.MODEL_BUDGET
    assert transport.calls == Limits().model_calls
    assert outcome.count("ToolCall") == 0


def test_too_deep_arguments_passed_directly_fail_binding() -> None:
    scope = ExecutionScope(Limits(), {CAP})

    def keep(payload: Any) -> str:
        return "ok"

    keep.__annotations__ = {"payload": Any, "return": str}
    tool = scope.tool("keep", CAP, keep)
    deep: Any = 1
    for _ in range(5_000):
        deep = [deep]
    with pytest.raises(ToolArgumentsError, match="nested too deeply"):
        tool.invoke({"payload": deep})
    assert scope.usage.tool_calls == 0 and scope.events == ()


def test_non_finite_numbers_in_an_untyped_argument_fail_binding() -> None:
    scope = ExecutionScope(Limits(tool_calls=5, repetitions=1), {CAP})

    def keep(payload: Any) -> str:
        return "ok"

    keep.__annotations__ = {"payload": Any, "return": str}
    tool = scope.tool("keep", CAP, keep)
    tool.invoke('{"payload": null}')
    # NaN is not null, and 1e400 / 1e500 (both parsed as infinity) are not one number:
    # none of them has an exact value, so none is admitted under any signature.
    for raw in ('{"payload": NaN}', '{"payload": [1e400]}', '{"payload": {"x": -1e500}}'):
        with pytest.raises(ToolArgumentsError, match="not finite"):
            tool.invoke(raw)
    assert scope.usage.tool_calls == 1
    assert [e.kind for e in scope.events] == ["ToolCall"]


# -- bad input from the user ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [("model_calls", -1), ("tool_calls", "3"), ("repetitions", True), ("deadline_s", -0.5), ("tool_calls", 2.5)],
)
def test_invalid_limits_name_the_field(field: str, value: Any) -> None:
    with pytest.raises(ValidationError) as error:
        Limits(**{field: value})
    assert error.value.errors()[0]["loc"] == (field,)
    with pytest.raises(ValidationError, match=field):
        Limits().with_(**{field: value})


def test_unknown_limit_field_is_refused() -> None:
    with pytest.raises(ValidationError, match="tool_call"):
        Limits(tool_call=3)  # type: ignore[call-arg]


UNTYPED = """
import labkit
def shelve(state, title):
    return "shelved"
s = labkit.scenario("s", tools=[labkit.Tool("shelve", "shelf.write", shelve)], script=["ok"], done=bool)
"""


@pytest.fixture
def scenario_files(tmp_path: Path) -> Path:
    """Scenario files a learner may get wrong: a syntax error, no scenario, a tool body without annotations."""
    (tmp_path / "library.py").write_text(UNTYPED.replace("title)", "title: str)"))
    (tmp_path / "broken.py").write_text("def f(:\n")
    (tmp_path / "empty.py").write_text("x = 1\n")
    (tmp_path / "untyped.py").write_text(UNTYPED)
    (tmp_path / "short.py").write_text(  # a script one step too short: the run asks for a second reply
        UNTYPED.replace("title)", "title: str)").replace(
            'script=["ok"]', 'script=[labkit.Call("shelve", {"title": "x"})]'
        )
    )
    (tmp_path / "exits.py").write_text("import sys\nsys.exit(3)\n")  # e.g. a script's own argparse
    (tmp_path / "folder.py").mkdir()
    return tmp_path


@pytest.mark.parametrize(
    ("argv", "fragments"),
    [
        (["run", "nosuch"], ["invalid choice", "complete", "unavailable"]),
        (["run", "complete", "--turbo"], ["unrecognized arguments: --turbo", "--model-calls", "--simple"]),
        (["run", "complete", "--tool-calls", "-1"], ["--tool-calls"]),
        (["run", "complete", "--tool-calls", "many"], ["--tool-calls", "invalid int value"]),
        (["launch"], ["invalid choice", "run", "scenarios"]),
        # a scenario file of the learner's own (`labkit run FILE.py:NAME`), written by `scenario_files`
        (["run", "{tmp}/library.py"], ["is a file", "library.py:NAME"]),
        (["run", "{tmp}/nowhere.py:s"], ["labkit run:", "does not exist"]),
        (["run", "{tmp}/broken.py:s"], ["labkit run:", "failed to load", "SyntaxError"]),
        (["run", "{tmp}/empty.py:s"], ["labkit run:", "no scenario named 's'", "declares: none"]),
        (["run", "{tmp}/untyped.py:s"], ["labkit run:", "'title' needs a type annotation"]),
        (["run", "{tmp}/exits.py:s"], ["labkit run:", "exits when run (SystemExit: 3)", "__main__"]),
        (["run", "{tmp}/folder.py:s"], ["labkit run:", "folder.py' is not a file"]),
    ],
)
def test_console_usage_errors_exit_64(
    argv: list[str], fragments: list[str], scenario_files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [arg.replace("{tmp}", str(scenario_files)) for arg in argv]
    assert console(argv) == 64
    captured = capsys.readouterr()
    assert captured.out == ""
    for fragment in fragments:
        assert fragment in captured.err
    assert "Traceback" not in captured.err


@pytest.mark.parametrize("loop", [[], ["--simple"], ["--runtime", "pydantic-ai"]], ids=["harness", "simple", "adapter"])
def test_a_script_too_short_for_the_run_is_one_line_exit_64(
    loop: list[str], scenario_files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the run asks the learner's script for a second reply it does not hold (ScriptExhausted, a UserError)
    if loop[-1:] == ["pydantic-ai"]:
        pytest.importorskip("pydantic_ai")
    assert console(["run", f"{scenario_files}/short.py:s", *loop]) == 64
    captured = capsys.readouterr()
    assert captured.out.startswith("agent: ")  # the header was out before the run started
    assert captured.err == (
        "labkit run: the script has 1 step but model call 2 was made; "
        "add steps or use a function (call_number, request) -> step\n"
    )


def test_a_tool_name_registered_twice_is_refused() -> None:
    def first(n: int) -> int:
        return n

    def second(m: str) -> str:
        return m

    scope = ExecutionScope(Limits(), {CAP})
    scope.tool("probe", CAP, first)
    with pytest.raises(DuplicateToolError, match="'probe'"):
        scope.tool("probe", CAP, second)
    assert [t.name for t in scope.tools] == ["probe"]


def test_catalogue_arguments_are_what_they_claim() -> None:
    with pytest.raises(ValueError):
        json.loads(CATALOGUE["not-json"].step.arguments)
    assert len(CATALOGUE["long-string"].step.text()) > 1_000_000
