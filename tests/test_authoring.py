"""Authoring a scenario of one's own (issue 12): labkit.scenario, labkit.Tool, labkit.Reply."""

from __future__ import annotations

import ast
import functools
import inspect
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import labkit
from labkit import Call, Reply, Tool, UserError
from labkit.cli import main
from labkit.loops.scenarios import REVIEW_TOOLS

HERE = Path(__file__).parent
ADDER_FILE = HERE / "scenarios" / "adder.py"


def counts(outcome: labkit.RunOutcome) -> tuple[str, int, int]:
    return outcome.status.value, outcome.count("ToolCall"), outcome.count("ModelCall")


@pytest.mark.parametrize("agent", ["simple", "harness"])
@pytest.mark.parametrize("stream", [False, True])
def test_a_file_scenario_runs_under_both_agents(agent: str, stream: bool) -> None:
    scenario = labkit.load_scenario(f"{ADDER_FILE}:ADDER")
    setup = labkit.prepare(scenario, agent=agent, stream=stream)  # type: ignore[arg-type]
    outcome = labkit.run(setup)
    assert counts(outcome) == ("Completed", 2, 3)
    assert outcome.text == "Done: 5."
    assert setup.task.entries == {"add": 2} and setup.task.total == 5
    first_reply = outcome.transcript[2]  # system, user, then the model's first reply: text and a call together
    assert first_reply.text == "Adding 2 first." and [c.name for c in first_reply.tool_calls] == ["add"]


def test_the_condition_is_on_host_state_not_on_the_text() -> None:
    from tests.scenarios.adder import Counter, add

    only_talks = labkit.scenario(
        "talker", tools=[Tool("add", "math.add", add)], script=["Done: 5."], done=lambda s: s.total == 5, state=Counter
    )
    outcome = labkit.run(only_talks)
    assert counts(outcome) == ("Incomplete", 0, 1) and outcome.text == "Done: 5."


def test_grants_and_limits_are_the_scenarios() -> None:
    from tests.scenarios.adder import ADDER

    denied = labkit.scenario(
        "denied", tools=ADDER.tools, script=ADDER.script, done=ADDER.done, state=ADDER.state, capabilities=()
    )
    assert counts(labkit.run(denied)) == ("PermissionDenied", 0, 1)
    budget = labkit.scenario(
        "budget", tools=ADDER.tools, script=ADDER.script, done=ADDER.done, state=ADDER.state, limits={"tool_calls": 1}
    )
    assert counts(labkit.run(budget)) == ("ToolBudget", 1, 2)


def test_the_seed_scenarios_are_declared_with_the_same_api() -> None:
    for seed in labkit.SCENARIOS.values():
        assert seed.tools == REVIEW_TOOLS and seed.state is labkit.ReviewTask
        redeclared = labkit.scenario(
            seed.name,
            tools=seed.tools,
            script=seed.script,
            done=seed.done,
            state=seed.state,
            capabilities=seed.capabilities,
            limits=seed.limits,
            summary=seed.summary,
            condition=seed.condition,
            instructions=seed.instructions,
            prompt=seed.prompt,
            agent_name=seed.agent_name,
        )
        assert redeclared == seed


ONE = [Tool("a", "c", lambda s: 1)]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Tool("add", "math.add", lambda: 1), "first parameter receives the host state"),
        (lambda: Tool("", "math.add", lambda s: 1), "tool name is a non-empty str"),
        (lambda: Tool("add", "math.add", 42), "must be a function"),
        (lambda: Tool("add", "math.add", lambda s: 1, description=3), "a description is a str, not int"),
        (lambda: labkit.scenario("x", tools=[], script=["ok"], done=bool), "non-empty list of labkit.Tool"),
        (lambda: labkit.scenario("x", tools=ONE * 2, script=["ok"], done=bool), "share a name"),
        (lambda: labkit.scenario("x", tools=ONE, script=[42], done=bool), "not a script step"),
        (
            lambda: labkit.scenario("x", tools=ONE, script=["ok"], done=bool, capabilities="c"),
            "collection of names",
        ),
        (lambda: Reply("text", []), "non-empty list of Call"),
        (lambda: labkit.scenario("x", tools=ONE, script=[], done=bool), "the script is empty"),
        (lambda: labkit.load_scenario("nowhere.py:X"), "does not exist"),
        (lambda: labkit.load_scenario(42), r"'path/to/file.py:NAME' \(a str\), not int"),
        (lambda: labkit.load_scenario(ADDER_FILE), r"\(a str\), not \w*Path"),
        (lambda: labkit.load_scenario(f"{ADDER_FILE}:MISSING"), "declares: ADDER"),
        (lambda: labkit.load_scenario(f"{ADDER_FILE}:NOT_A_SCENARIO"), "no scenario named 'NOT_A_SCENARIO'"),
    ],
)
def test_bad_declarations_get_one_clear_error(make, message: str) -> None:
    with pytest.raises((UserError, TypeError), match=message):
        make()


def test_a_tool_is_read_once_and_each_run_binds_that_reading_to_its_own_state() -> None:
    def add(state: Any, x: int) -> int:
        """Add x."""
        state.total = getattr(state, "total", 0) + x
        return state.total

    tool = Tool("add", "math.add", add)
    made = [tool.bind(labkit.ExecutionScope(capabilities={"math.add"}), SimpleNamespace()) for _ in range(2)]
    assert made[0].arguments_model is made[1].arguments_model is tool._shape.model
    assert [t.description for t in made] == ["Add x.", "Add x."]
    assert [t.invoke({"x": 2}) for t in made] == [2, 2]  # one state each
    with pytest.raises(labkit.ToolArgumentsError):
        made[0].invoke({"x": True})  # the reading still binds: a boolean is not a number
    scope = labkit.ExecutionScope(capabilities={"math.add"})
    tool.bind(scope, SimpleNamespace())
    with pytest.raises(labkit.DuplicateToolError):
        tool.bind(scope, SimpleNamespace())


def test_a_tool_and_a_scenario_pickle_as_their_declaration() -> None:
    import pickle

    for value in (REVIEW_TOOLS[0], labkit.SCENARIOS["complete"]):
        restored = pickle.loads(pickle.dumps(value))
        assert restored == value and restored is not value
    tool = pickle.loads(pickle.dumps(REVIEW_TOOLS[0]))
    assert tool._shape.model is REVIEW_TOOLS[0]._shape.model  # read again, and shared by what it is made of
    assert labkit.run(pickle.loads(pickle.dumps(labkit.SCENARIOS["complete"]))).status is labkit.RunStatus.COMPLETED


def test_the_console_runs_a_scenario_from_a_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", f"{ADDER_FILE}:ADDER", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["scenario"] == "adder" and data["status"] == "Completed"
    assert [e["kind"] for e in data["events"]].count("ToolCall") == 2
    assert main(["run", f"{ADDER_FILE}:MISSING"]) == 64
    assert "declares: ADDER" in capsys.readouterr().err


def test_the_console_file_form_works_as_a_command(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "labkit", "run", f"{ADDER_FILE}:ADDER", "--simple"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert (
        "status: Completed (exit 0)" in result.stdout and "completion: state.total == 5" in result.stdout
    )  # the lambda, as written


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Call("t", 5), "mapping such as"),
        (lambda: Call(5), "tool name"),
        (lambda: Reply(None, [Call("t")]), "Reply text must be a str"),
        (lambda: labkit.Say("x", chunks=0), "whole number >= 1"),
        (lambda: labkit.Fail("down"), "exception instance"),
        (lambda: labkit.ScriptedTransport([3.5]), "not a script step"),
    ],
)
def test_a_wrong_script_step_is_a_user_error(make, message: str) -> None:
    # docs/adapters.md: "A wrong declaration raises labkit.UserError with one message"
    with pytest.raises(labkit.ScriptStepError, match=message) as info:
        make()
    assert isinstance(info.value, UserError)


# -- loading a file leaves sys.path as it was -------------------------------------------------

SCENARIO_TEXT = """
import labkit
from {helper} import GREETING

HELLO = labkit.scenario("hello", tools=[labkit.Tool("echo", "lab.read", lambda state: "hi")],
                        script=[GREETING], done=bool)
"""


def _scenario_folder(tmp_path: Path, name: str, body: str) -> Path:
    """A folder with a scenario file and a neighbour module it imports (a name unique to the test)."""
    helper = f"labkit_test_helper_{name}"
    (tmp_path / f"{helper}.py").write_text('GREETING = "hello"\n')
    file = tmp_path / f"{name}.py"
    file.write_text(SCENARIO_TEXT.format(helper=helper) + body)
    return file


@pytest.fixture
def own_sys_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """A private copy of sys.path for one test; the neighbour modules it imported are forgotten after it."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield sys.path
    for name in [m for m in sys.modules if m.startswith("labkit_test_helper_")]:
        del sys.modules[name]


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ("", None),
        ("raise RuntimeError('broken on purpose')\n", "RuntimeError: broken on purpose"),
        ("raise SystemExit(3)\n", "SystemExit: 3"),
        ("def (:\n", "SyntaxError"),
    ],
    ids=["loads", "raises", "exits", "syntax-error"],
)
def test_loading_a_file_leaves_sys_path_unchanged(tmp_path: Path, own_sys_path: list[str], body: str, error) -> None:
    file = _scenario_folder(tmp_path, "plain", body)
    before = list(sys.path)
    if error is None:
        assert labkit.load_scenario(f"{file}:HELLO").name == "hello"  # its neighbour was importable
    else:
        with pytest.raises(UserError, match=error):
            labkit.load_scenario(f"{file}:HELLO")
    assert sys.path is own_sys_path and sys.path == before


@pytest.mark.parametrize("already_there", [True, False], ids=["folder-on-sys-path", "folder-not-on-sys-path"])
def test_a_file_that_takes_its_folder_off_sys_path_costs_nobody_else_their_entry(
    tmp_path: Path, own_sys_path: list[str], already_there: bool
) -> None:
    # The file takes the entry added for it off again itself. The loader must then neither remove
    # another, equal entry (someone else's, at the end) nor fail looking for its own.
    file = _scenario_folder(tmp_path, "tidy", "import sys\nsys.path.pop(0)\n")
    if already_there:
        sys.path.append(str(tmp_path.resolve()))
    before = list(sys.path)
    assert labkit.load_scenario(f"{file}:HELLO").name == "hello"
    assert sys.path == before


def test_a_change_the_file_makes_to_sys_path_stays(tmp_path: Path, own_sys_path: list[str]) -> None:
    extra = str(tmp_path / "vendored")
    file = _scenario_folder(tmp_path, "adds", f"import sys\nsys.path.append({extra!r})\n")
    before = list(sys.path)
    labkit.load_scenario(f"{file}:HELLO")
    assert sys.path == [*before, extra]  # only the loader's own entry is taken out


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ("42", "an int"),
        ("labkit.ExecutionScope(labkit.Limits(), set())", "an ExecutionScope"),
        ("labkit.Limits()", "a Limits"),
        ("labkit.prepare('complete')", "a Setup"),
        ("[labkit.Call('read_ticket', {'input': 42})]", "a list"),
        ("labkit.scenario", "a function"),
        ("labkit.Scenario", "a class"),
    ],
)
def test_a_name_that_is_not_a_scenario_is_named_with_its_article(tmp_path: Path, value: str, named: str) -> None:
    file = tmp_path / "mine.py"
    file.write_text(f"import labkit\n\nX = {value}\n", encoding="utf-8")
    with pytest.raises(labkit.UnknownScenarioError, match=rf"\(X is {named}, not one made with labkit.scenario"):
        labkit.load_scenario(f"{file}:X")


# -- every body shape a scope runs is a Tool body too (issue 20) ------------------------------------------


class _Shop:
    def buy(self, state: Any, qty: int) -> str:
        state.bought.append(qty)
        return f"method {qty}"

    async def abuy(self, state: Any, qty: int) -> str:
        state.bought.append(qty)
        return f"async method {qty}"

    @classmethod
    def cbuy(cls, state: Any, qty: int) -> str:
        state.bought.append(qty)
        return f"classmethod {qty}"

    @staticmethod
    def sbuy(state: Any, qty: int) -> str:
        state.bought.append(qty)
        return f"staticmethod {qty}"

    def __call__(self, state: Any, qty: int) -> str:
        state.bought.append(qty)
        return f"callable object {qty}"


def _buy_in(state: Any, qty: int, unit: str) -> str:
    state.bought.append(qty)
    return f"partial {qty}{unit}"


def _buy(state: Any, qty: int) -> str:
    state.bought.append(qty)
    return f"function {qty}"


async def _abuy(state: Any, qty: int) -> str:
    state.bought.append(qty)
    return f"async {qty}"


TOOL_BODIES = {
    "function": (_buy, "function 3"),
    "async function": (_abuy, "async 3"),
    "bound method": (_Shop().buy, "method 3"),
    "async bound method": (_Shop().abuy, "async method 3"),
    "classmethod": (_Shop.cbuy, "classmethod 3"),
    "staticmethod": (_Shop.sbuy, "staticmethod 3"),
    "functools.partial": (functools.partial(_buy_in, unit="kg"), "partial 3kg"),
    "callable object": (_Shop(), "callable object 3"),
}


@pytest.mark.parametrize("kind", list(TOOL_BODIES))
def test_every_body_shape_runs_as_a_tool(kind: str) -> None:
    body, expected = TOOL_BODIES[kind]
    declared = labkit.scenario(
        "shop",
        tools=[Tool("buy", "shop.buy", body)],
        script=[labkit.Call("buy", {"qty": 3}, id="c"), "bought"],
        state=lambda: SimpleNamespace(bought=[]),
        done=lambda state: state.bought == [3],
    )
    setup = labkit.prepare(declared, agent="simple")
    outcome = labkit.run(setup)
    assert outcome.status is labkit.RunStatus.COMPLETED
    assert [m.text for m in outcome.transcript if m.tool_call_id == "c"] == [expected]


def _generator_body(state: Any, qty: int) -> Any:
    yield qty


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (lambda state, qty: qty, "parameter 'qty' needs a type annotation"),
        (_generator_body, "generator function"),
        (_Shop.__dict__["cbuy"], "classmethod object"),
        (_Shop, "must be a function"),
        (print, "first parameter receives the host state"),
    ],
    ids=["no annotation", "generator", "raw classmethod", "class", "builtin"],
)
def test_a_tool_body_a_run_cannot_call_is_refused_when_declared(body: Any, message: str) -> None:
    with pytest.raises(UserError, match=message) as error:
        Tool("buy", "shop.buy", body)
    assert "\n" not in str(error.value)


# -- a scenario file loads like a module (issue 20) -----------------------------------------------------

MODULE_LIKE = """
from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

import labkit

Path(__file__).with_suffix(".runs").open("a").write("ran\\n")  # one line per execution of this file


@dataclass
class Basket:
    items: list[Line] = field(default_factory=list)


class Line(BaseModel):
    sku: str
    qty: int


def add(state: Basket, line: Line) -> str:
    state.items.append(line)
    return f"{line.qty} x {line.sku}"


ROUNDTRIP = pickle.loads(pickle.dumps(Basket([Line(sku="a", qty=1)])))

SHOP = labkit.scenario(
    "shop",
    tools=[labkit.Tool("add", "basket.add", add)],
    script=[labkit.Call("add", {"line": {"sku": "tea", "qty": 2}}), "Added."],
    state=Basket,
    done=lambda basket: [l.qty for l in basket.items] == [2],
    agent_name="ShopAssistant",
)
"""


def test_a_scenario_file_with_dataclasses_and_string_annotations_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "my-shop.py"
    file.write_text(MODULE_LIKE)
    modules = set(sys.modules)
    assert (
        main(["run", f"{file}:SHOP", "--model-calls", "4", "--tool-calls", "2", "--repetitions", "1", "--simple"]) == 0
    )
    out = capsys.readouterr().out
    assert "status: Completed (exit 0)" in out
    assert out.splitlines()[0].startswith("agent: simple (ShopAssistant, ") and "BoundedReviewer" not in out
    assert file.with_suffix(".runs").read_text() == "ran\n"  # executed once, whatever the flags
    assert set(sys.modules) == modules  # its module was there while it ran, and only then
    loaded = labkit.load_scenario(f"{file}:SHOP")
    assert loaded.agent_name == "ShopAssistant"
    assert file.with_suffix(".runs").read_text() == "ran\nran\n"


def test_a_scenario_file_does_not_replace_a_module_of_the_same_name(tmp_path: Path) -> None:
    file = tmp_path / "clash.py"
    file.write_text(MODULE_LIKE)
    sentinel = SimpleNamespace()
    sys.modules["_labkit_scenario_clash"] = sentinel  # type: ignore[assignment]
    try:
        labkit.load_scenario(f"{file}:SHOP")
        assert sys.modules["_labkit_scenario_clash"] is sentinel
    finally:
        del sys.modules["_labkit_scenario_clash"]


def test_a_learner_scenario_names_its_own_agent_and_a_seed_keeps_the_seeds() -> None:
    own = labkit.scenario("hello", tools=ONE, script=["hi"], done=bool)
    assert labkit.prepare(own).agent.name == "hello"
    assert labkit.prepare("complete").agent.name == "BoundedReviewer"
    with pytest.raises(UserError, match="agent_name is a non-empty str"):
        labkit.scenario("hello", tools=ONE, script=["hi"], done=bool, agent_name="")


def _named_done(state: object) -> bool:
    return True


@pytest.mark.parametrize(
    ("done", "words"),
    [
        (lambda state: state.total == 5, "state.total == 5"),
        (lambda shelf: len(shelf.books) == 2, "len(shelf.books) == 2"),
        (_named_done, "_named_done(state) holds"),
        (eval("lambda s: True"), "done(state) holds"),  # no source kept: never '<lambda>'
    ],
)
def test_the_host_condition_is_named_from_the_done_function_never_as_a_lambda(done, words: str) -> None:
    adder = labkit.load_scenario(f"{ADDER_FILE}:ADDER")
    declared = labkit.scenario("named", tools=adder.tools, script=["Done."], done=done, state=adder.state)
    assert declared.condition == words and "<lambda>" not in declared.condition


class _Counter:
    def __init__(self) -> None:
        self.total = 0


class _SubCounter(_Counter):
    pass


def _made_counter() -> _Counter:
    return _Counter()


def _made_sub() -> _SubCounter:
    return _SubCounter()


def _made_unsaid():  # type: ignore[no-untyped-def]  # no return annotation: its class is not known before a run
    return _Counter()


_FIRST_ANNOTATIONS: list[Any] = [
    None,
    int,
    str,
    float,
    bool,
    list,
    dict,
    object,
    Any,
    _Counter,
    _SubCounter,
    SimpleNamespace,
]
_STATES: list[Any] = [_Counter, _SubCounter, SimpleNamespace, dict, _made_counter, _made_sub, _made_unsaid]


def _body_with_first(annotation: Any) -> Any:
    """``def add(x: <annotation>, y: int) -> int`` (``x`` unannotated for ``None``)."""

    def add(x, y: int) -> int:  # type: ignore[no-untyped-def]
        return y

    if annotation is not None:
        add.__annotations__["x"] = annotation
    return add


@given(first=st.sampled_from(_FIRST_ANNOTATIONS), state=st.sampled_from(_STATES))
def test_a_first_parameter_that_cannot_hold_the_state_is_refused_when_declared(first: Any, state: Any) -> None:
    """The first parameter receives the host state: an annotation the state is not an instance of (``def add(x: int)``)
    is refused, naming the fix; anything the state is, or cannot be told before a run, is accepted."""
    body = _body_with_first(first)
    declare = functools.partial(
        labkit.scenario,
        "adder",
        tools=[Tool("add", "math.add", body)],
        script=[Reply("Adding.", [Call("add", {"y": 2})]), "Done."],
        done=lambda state: True,
        state=state,
    )
    instance = state()
    known = inspect.isclass(state) or "return" in getattr(state, "__annotations__", {})
    checkable = inspect.isclass(first) and first not in (object, Any)
    if checkable and known and not isinstance(instance, first):
        with pytest.raises(labkit.ToolDefinitionError) as raised:
            declare()
        message = str(raised.value)
        assert f"receives the host state (a {type(instance).__name__})" in message
        fix = message.rsplit("declare ", 1)[1]
        header = ast.parse(fix + ": pass").body[0]
        assert isinstance(header, ast.FunctionDef)
        assert [a.arg for a in header.args.args] == ["state", "x", "y"]
    else:
        outcome = labkit.run(declare())
        assert outcome.status == "Completed" and outcome.count("ToolCall") == 1
