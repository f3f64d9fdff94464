"""The eight scripted scenarios of the lesson (README.md, *The scenarios*), written with the scripted transport.

Each scenario is a misbehaving (or well-behaved) model plus what the host
grants: capabilities and limits. Run one with :func:`labkit.run`.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType, MethodType, ModuleType, SimpleNamespace
from typing import Any, cast, get_type_hints

from ..core.binding import Shape, _body_shape
from ..core.errors import ToolDefinitionError, UnknownScenarioError, UserError
from ..core.limits import Limits, _limits
from ..core.scope import ExecutionScope, GuardedTool
from ..transports.chat import ChatRequest
from ..transports.scripted import Call, Fail, Hang, Script, ScriptedTransport, Step
from .review import INSTRUCTIONS, PROMPT, ReviewTask, _finish_review, _read_ticket

__all__ = ["SCENARIOS", "Scenario", "Tool", "get_scenario", "load_scenario", "scenario"]

ALL_CAPABILITIES = frozenset({"ticket.read", "review.finish"})

_READ_42 = Call("read_ticket", {"input": 42})
_WELL_BEHAVED: tuple[Step, ...] = (_READ_42, Call("finish_review", {"input": 42}), "Review finished.")


def _read_42_forever(number: int, request: ChatRequest) -> Step:
    return _READ_42


def _read_next_id(number: int, request: ChatRequest) -> Step:
    return Call("read_ticket", {"input": number})


@dataclass(frozen=True)
class Tool:
    """A tool declared by a scenario: name, capability, typed body (chapter 4, *The guard, step by step*).

    The body's first parameter receives the run's host state (a fresh one per
    run, made by the scenario's ``state``); its other parameters, annotated,
    are the tool's arguments, bound with pydantic by the guard. Sync or
    ``async``. Each run makes a :class:`~labkit.GuardedTool` of it in the run's
    scope, so the body only ever runs through the guard.

    Example::

        def add(state, x: int) -> int:
            state.total += x
            return state.total

        Tool("add", "math.add", add)

    The body may be any callable a scope accepts (a function, an ``async
    def``, a bound method, a classmethod or staticmethod taken from its
    class, a ``functools.partial``, an object with ``__call__``), as long as
    its first parameter takes the state.

    The body is read once, when the Tool is declared (its argument model, what a run could not
    call): every run binds that reading to its fresh state instead of reading the body again.

    Raises:
        UserError: a name or capability that is not a non-empty str, or a body
            that is not a callable taking the state first.
        ToolDefinitionError: a body a run could not call (a generator
            function, an argument without a type annotation...), refused
            here rather than when a run starts (chapter 4, *The guard, step by step*).
    """

    name: str
    capability: str
    body: Callable[..., Any]
    description: str | None = None
    _shape: Shape = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for what in ("name", "capability"):
            value = getattr(self, what)
            if not isinstance(value, str) or not value:
                raise UserError(f"a tool {what} is a non-empty str, not {value!r}")
        if isinstance(self.body, classmethod):
            raise UserError(
                f"tool {self.name!r}: a classmethod object taken from a class body cannot be called; "
                "pass it as the class's attribute (Cls.method)"
            )
        if inspect.isclass(self.body) or not callable(self.body):
            raise UserError(
                f"tool {self.name!r}: the body must be a function (state, ...), not {type(self.body).__name__}"
            )
        try:
            params = list(inspect.signature(self.body).parameters.values())
        except (TypeError, ValueError):
            params = []
        if not params or params[0].kind not in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD):
            raise UserError(
                f"tool {self.name!r}: the body's first parameter receives the host state, "
                f"e.g. def {self.name}(state, x: int)"
            )
        if self.description is not None and not isinstance(self.description, str):
            raise UserError(f"tool {self.name!r}: a description is a str, not {type(self.description).__name__}")
        # What a run cannot run is refused now; what it can, every run reuses. Reading the body again
        # (its shape's key: code, annotations, defaults) would cost a complete run of two tools x1.08-1.10
        # of its CPU time (`python -m benchmarks.tricks`, declared_tools; labkit/core/_machinery/__init__.py).
        shape = _body_shape(MethodType(self.body, SimpleNamespace()), self.name)
        object.__setattr__(self, "_shape", shape)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its declaration; unpickling reads the body again (an argument model does not pickle)."""
        return (Tool, (self.name, self.capability, self.body, self.description))

    def bind(self, scope: ExecutionScope, state: object) -> GuardedTool:
        """The guarded tool of one run: this body, read when it was declared, bound to ``state``, made by ``scope``."""
        return scope._register(self.name, self.capability, MethodType(self.body, state), self.description, self._shape)


REVIEW_TOOLS: tuple[Tool, ...] = (
    Tool("read_ticket", "ticket.read", _read_ticket),
    Tool("finish_review", "review.finish", _finish_review),
)
"""The two tools of the review fixture (chapter 3, *The task*), declared like any scenario's tools."""


def _review_done(task: ReviewTask) -> bool:
    return task.is_complete()


@dataclass(frozen=True)
class Scenario:
    """A scripted model plus the host's side: tools, host state, grants, limits, completion condition.

    Declare one with :func:`scenario` (every seed scenario is declared that
    way); run it with :func:`labkit.run`, under any agent or adapter, or from
    the console with ``labkit run path/to/file.py:NAME``.

    Attributes:
        name: the scenario name (the seed's: ``repeat``, ``changing``, ...).
        summary: one line: what the model does and what the host grants.
        script: steps or a step function for :class:`~labkit.ScriptedTransport`.
        limits: the limits this scenario runs with by default.
        capabilities: the capabilities granted by the host.
        tools: the tools the model sees (visible is not granted).
        state: makes the fresh host state of one run (a class or a function).
        done: the completion condition, a predicate on the host state (never on the model's text).
        condition: the condition in words, for headers.
        instructions: the system message.
        prompt: the user message.
        agent_name: the agent's name in headers and spans (the seed's ``BoundedReviewer``).

    Raises:
        UserError: a field of the wrong kind (e.g. a script that is not
            steps, two tools with one name, a capability given as one str).
    """

    name: str
    summary: str
    script: Script
    limits: Limits = field(default_factory=Limits)
    capabilities: frozenset[str] = ALL_CAPABILITIES
    tools: tuple[Tool, ...] = REVIEW_TOOLS
    state: Callable[[], Any] = ReviewTask
    done: Callable[[Any], bool] = _review_done
    condition: str = ReviewTask.condition
    instructions: str = INSTRUCTIONS
    prompt: str = PROMPT
    agent_name: str = "BoundedReviewer"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise UserError(f"a scenario name is a non-empty str, not {self.name!r}")
        if not isinstance(self.agent_name, str) or not self.agent_name:
            raise UserError(f"scenario {self.name!r}: agent_name is a non-empty str, not {self.agent_name!r}")
        try:
            ScriptedTransport(self.script)  # checks every step of a list
        except TypeError as exc:
            raise UserError(f"scenario {self.name!r}: {exc}") from None
        if isinstance(self.script, Sequence) and not self.script:  # its first model call would find nothing
            raise UserError(f'scenario {self.name!r}: the script is empty; give at least one step, e.g. "Done."')
        object.__setattr__(self, "limits", _limits(self.limits))
        if isinstance(self.capabilities, (str, bytes)) or not isinstance(self.capabilities, Iterable):
            raise UserError(
                f"scenario {self.name!r}: capabilities is a collection of names, e.g. {{'ticket.read'}}, "
                f"not {self.capabilities!r}"
            )
        object.__setattr__(self, "capabilities", frozenset(self.capabilities))
        tools = tuple(self.tools) if isinstance(self.tools, Sequence) else None
        if not tools or not all(isinstance(t, Tool) for t in tools):
            raise UserError(f"scenario {self.name!r}: tools is a non-empty list of labkit.Tool")
        names = [t.name for t in tools]
        if len(set(names)) != len(names):
            raise UserError(f"scenario {self.name!r}: two tools share a name in {names}")
        object.__setattr__(self, "tools", tools)
        for what in ("state", "done"):
            if not callable(getattr(self, what)):
                raise UserError(f"scenario {self.name!r}: {what} must be callable")
        for tool in tools:
            _check_state_parameter(self.name, tool, self.state)

    def transport(self) -> ScriptedTransport:
        """A fresh scripted transport for one run."""
        return ScriptedTransport(self.script)

    def start(self, scope: ExecutionScope) -> tuple[Any, tuple[GuardedTool, ...]]:
        """A fresh host state and its guarded tools, made by ``scope`` (one run's worth)."""
        state = self.state()
        return state, tuple([t.bind(scope, state) for t in self.tools])

    def is_complete(self, state: object) -> bool:
        """The completion condition on ``state`` (read after the loop ends)."""
        return bool(self.done(state))


def _state_class(state: Callable[[], Any]) -> type | None:
    """The class of the host state ``state()`` makes: ``state`` itself when it is a class, else its return
    annotation when that is a class; ``None`` when it cannot be known without calling it."""
    if inspect.isclass(state):
        return state
    try:
        made = get_type_hints(state).get("return")
    except Exception:  # a factory whose annotations cannot be read: nothing to compare
        return None
    return made if inspect.isclass(made) else None


def _check_state_parameter(scenario: str, tool: Tool, state: Callable[[], Any]) -> None:
    """Refuse a body whose first parameter is annotated with a class the host state is not.

    The first parameter receives the state (:class:`Tool`); ``def add(x: int)`` would take the state as
    ``x`` and leave the tool with no argument, so every call the model makes would be refused for an
    argument it was right to send. Only a plain class on both sides is compared; an unannotated first
    parameter, ``Any``, a generic or a protocol is left alone.

    Raises:
        ToolDefinitionError: the first parameter's annotation is a class and the state is not one of it.
    """
    try:
        first = next(iter(inspect.signature(tool.body).parameters.values()))
        hints = get_type_hints(tool.body)
    except Exception:  # a body whose signature or annotations cannot be read: Tool reports what it must
        return
    wanted = hints.get(first.name)
    made = _state_class(state)
    if not inspect.isclass(wanted) or wanted in (object, Any) or made is None or getattr(wanted, "_is_protocol", False):
        return
    if issubclass(made, wanted):
        return
    others = [p for p in inspect.signature(tool.body).parameters.values()][1:]
    after = "".join(f", {p}" for p in others)
    raise ToolDefinitionError(
        f"scenario {scenario!r}: tool {tool.name!r}: the body's first parameter, {first}, receives the "
        f"host state (a {made.__name__}), not an argument of type {wanted.__name__}; "
        f"declare def {getattr(tool.body, '__name__', tool.name)}(state, {first}{after})"
    )


_GENERIC_INSTRUCTIONS = "Use the tools you are given to do the task, then answer in one short sentence."


def _condition_words(done: Callable[[Any], bool]) -> str:
    """The host condition in words, for headers and hints: ``name(state) holds`` for a named function; for
    a lambda, its own expression as written (``len(shelf.books) == 2``) when Python kept its source,
    else ``done(state) holds`` (never ``<lambda>``)."""
    name = getattr(done, "__name__", "done")
    if name != "<lambda>":
        return f"{name}(state) holds"
    try:
        source = inspect.getsource(done)
    except (OSError, TypeError):
        return "done(state) holds"
    code = done.__code__
    params = list(code.co_varnames[: code.co_argcount])
    start = source.find("lambda")
    while start != -1:
        text = source[start : start + 400]
        for end in range(len(text), 6, -1):  # the longest text from here that is one lambda expression
            try:
                node = ast.parse(text[:end], mode="eval").body
            except SyntaxError:
                continue
            if isinstance(node, ast.Lambda):  # (a longer text may parse as a tuple holding it)
                if [a.arg for a in node.args.args] != params:
                    break  # another lambda on the same line
                body = ast.get_source_segment(text[:end], node.body)
                return " ".join(body.split()) if body else "done(state) holds"
        start = source.find("lambda", start + 6)
    return "done(state) holds"


def scenario(
    name: str,
    *,
    tools: Sequence[Tool],
    script: Script,
    done: Callable[[Any], bool],
    state: Callable[[], Any] = SimpleNamespace,
    capabilities: Iterable[str] | None = None,
    limits: Limits | Mapping[str, object] | None = None,
    summary: str | None = None,
    condition: str | None = None,
    instructions: str = _GENERIC_INSTRUCTIONS,
    prompt: str = "Please do the task.",
    agent_name: str | None = None,
) -> Scenario:
    """Declare a scenario: the public way, used by the seed scenarios too.

    Args:
        name: a short name.
        tools: the :class:`Tool` list the model sees.
        script: the scripted model: a list of steps (``str``, :class:`~labkit.Say`,
            :class:`~labkit.Reply`, :class:`~labkit.Call` or a list of them,
            :class:`~labkit.Hang`, :class:`~labkit.Fail`) or a function
            ``(call_number, request) -> step``.
        done: the completion condition, ``done(state) -> bool``, read after the loop.
        state: makes a fresh host state per run (default: an empty ``SimpleNamespace``
            the bodies may fill; give a class with defaults instead when ``done`` reads fields).
        capabilities: granted capabilities; default: every tool's capability.
        limits: :class:`~labkit.Limits` or a mapping of its fields; default 6 / 4 / 1 / 120 s.
        summary, condition: one line each, for headers (defaults derived from the name).
        instructions, prompt: the system and user messages (matter for a live model only).
        agent_name: the agent's name in the console's header and in spans;
            default: the scenario's name (the seed scenarios' agent is ``BoundedReviewer``).

    Returns:
        A frozen :class:`Scenario`; run it with ``labkit.run(it, agent=...)``.

    Raises:
        UserError: a field of the wrong kind (see :class:`Scenario`).
        pydantic.ValidationError: limits given as a mapping that does not validate.

    Example::

        adder = labkit.scenario(
            "adder",
            tools=[labkit.Tool("add", "math.add", add)],
            script=[labkit.Reply("Adding.", [labkit.Call("add", {"x": 2})]), "Done."],
            done=lambda state: state.total == 2,
            state=Counter,
        )
    """
    if isinstance(tools, Tool):
        tools = (tools,)
    chosen = tuple(tools) if isinstance(tools, Sequence) else ()
    granted = frozenset(t.capability for t in chosen if isinstance(t, Tool)) if capabilities is None else capabilities
    return Scenario(
        name,
        summary if summary is not None else f"{name} (a scenario declared with labkit.scenario)",
        script,
        _limits(limits),
        granted,  # type: ignore[arg-type]  # checked by Scenario
        tools=chosen,
        state=state,
        done=done,
        condition=condition if condition is not None else _condition_words(done),
        instructions=instructions,
        prompt=prompt,
        agent_name=agent_name if agent_name is not None else name,
    )


def _review(name: str, summary: str, script: Script, **options: Any) -> Scenario:
    """A seed scenario: the review fixture (chapter 3, *The task*) declared with :func:`scenario`."""
    return scenario(
        name,
        tools=REVIEW_TOOLS,
        script=script,
        done=_review_done,
        state=ReviewTask,
        capabilities=options.pop("capabilities", ALL_CAPABILITIES),
        summary=summary,
        condition=ReviewTask.condition,
        instructions=INSTRUCTIONS,
        prompt=PROMPT,
        agent_name="BoundedReviewer",
        **options,
    )


_ALL = (
    _review(
        "complete",
        "reads ticket 42, finishes the review, then says 'Review finished.'",
        _WELL_BEHAVED,
    ),
    _review(
        "incomplete",
        "says 'Review finished.' at once without calling any tool",
        ("Review finished.",),
    ),
    _review(
        "forbidden",
        "the well-behaved model, but the host does not grant ticket.read",
        _WELL_BEHAVED,
        capabilities=frozenset({"review.finish"}),
    ),
    _review(
        "repeat",
        "the broken record: asks for read_ticket(42) on every call",
        _read_42_forever,
    ),
    _review(
        "changing",
        "asks for read_ticket(1), read_ticket(2), ... (a new id on every call)",
        _read_next_id,
    ),
    _review(
        "budget",
        "the well-behaved model, with a budget of one model call",
        _WELL_BEHAVED,
        limits=Limits(model_calls=1),
    ),
    _review(
        "deadline",
        "the model never answers; the run has a 1 s deadline",
        (Hang(),),
        limits=Limits(deadline_s=1.0),
    ),
    _review(
        "unavailable",
        "the transport cannot connect to the model endpoint",
        (Fail(ConnectionError("connection refused by the scripted endpoint")),),
    ),
)

SCENARIOS: Mapping[str, Scenario] = MappingProxyType({s.name: s for s in _ALL})
"""Every scenario by name, in lesson order."""


def get_scenario(name: str | Scenario) -> Scenario:
    """Return the scenario called ``name`` (a :class:`Scenario` is returned as is).

    ``name`` may also be ``path/to/file.py:NAME``: the scenario ``NAME`` declared
    in that file (see :func:`load_scenario`).

    Raises:
        UnknownScenarioError: no such scenario; the message lists the valid names.
        UserError: a file that cannot be loaded (see :func:`load_scenario`).
    """
    if isinstance(name, Scenario):
        return name
    if isinstance(name, str) and ".py:" in name:
        return load_scenario(name)
    if not isinstance(name, str):  # named by its type: a repr may run to pages
        kind = type(name).__name__
        hint = (
            " (a prepared Setup runs once: labkit.run(setup), or use setup.scenario)"
            if kind in ("Setup", "TracedSetup")
            else ""
        )
        raise UnknownScenarioError(
            f"a scenario is a name ({', '.join(SCENARIOS)}) or a labkit.Scenario, not {kind}{hint}"
        )
    try:
        return SCENARIOS[name]
    except KeyError:
        raise UnknownScenarioError(
            f"unknown scenario {name!r}; choose one of: {', '.join(SCENARIOS)} (or path/to/file.py:NAME)"
        ) from None


def load_scenario(spec: str) -> Scenario:
    """Load the scenario ``NAME`` from ``path/to/file.py:NAME`` (the console's ``labkit run FILE.py:NAME``).

    The file is executed once per call, as a module of its own named
    ``_labkit_scenario_<stem>``. While it runs, that module is in
    ``sys.modules`` (as during an import, so ``@dataclass``, ``from __future__
    import annotations``, pydantic models and pickling find it) and its
    folder is first on ``sys.path`` so that it can import its neighbours;
    afterwards, whether it loaded or failed, both are taken out again (a
    module of that name present before is put back): an equal ``sys.path``
    entry someone else added stays, and so does any change the file made to
    ``sys.path`` itself.

    Raises:
        UserError: ``spec`` is not a str, no ``:NAME`` part, the file does not exist (or is a
            directory), or running it raised or exited (``SystemExit``); the
            message names the file and the error.
        UnknownScenarioError: the file has no ``NAME``, or ``NAME`` is not a
            :class:`Scenario`; the message lists the scenarios it declares.
    """
    if not isinstance(spec, str):
        raise UserError(f"a scenario file is given as 'path/to/file.py:NAME' (a str), not {type(spec).__name__}")
    path_text, _, attribute = spec.rpartition(":")
    if not path_text.endswith(".py") or not attribute.isidentifier():
        raise UserError(f"a scenario file is given as path/to/file.py:NAME, not {spec!r}")
    path = Path(path_text)
    if not path.is_file():
        raise UserError(f"scenario file {path_text!r} {'is not a file' if path.exists() else 'does not exist'}")
    module_name = "_labkit_scenario_" + "".join(c if c.isalnum() else "_" for c in path.stem)
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    if module_spec is None or module_spec.loader is None:  # pragma: no cover - a .py file always has a loader
        raise UserError(f"cannot load scenario file {path_text!r}")
    module = importlib.util.module_from_spec(module_spec)
    folder = str(path.resolve().parent)  # this very str object marks the entry added here
    sys.path.insert(0, folder)  # the file may import its neighbours while it runs
    before = sys.modules.get(module_name, _MISSING)
    sys.modules[module_name] = module  # as an import does: dataclasses, string annotations and pickle look it up
    try:
        module_spec.loader.exec_module(module)
    except SystemExit as exc:  # e.g. a top-level sys.exit() or argparse: it would end the caller's process
        raise UserError(
            f"scenario file {path_text!r} failed to load: it exits when run (SystemExit: {exc.code}); "
            'put that code under `if __name__ == "__main__":`'
        ) from exc
    except Exception as exc:
        raise UserError(f"scenario file {path_text!r} failed to load: {type(exc).__name__}: {exc}") from exc
    finally:
        _remove_entry(sys.path, folder)
        if sys.modules.get(module_name) is module:
            if before is _MISSING:
                del sys.modules[module_name]
            else:
                sys.modules[module_name] = cast(ModuleType, before)  # not _MISSING: a module
    found = getattr(module, attribute, _MISSING)
    if not isinstance(found, Scenario):
        declared = [k for k, v in vars(module).items() if isinstance(v, Scenario)]
        what = "" if found is _MISSING else f" ({attribute} is {_kind(found)}, not one made with labkit.scenario(...))"
        raise UnknownScenarioError(
            f"{path_text} has no scenario named {attribute!r}{what}; it declares: {', '.join(declared) or 'none'}"
        )
    return found


_MISSING = object()


def _kind(value: Any) -> str:
    """How a non-scenario value is named in an error: ``a function``, ``an int``, ``a class``..."""
    if value is None:
        return "None"
    if inspect.isclass(value):
        name = "a class"
    elif inspect.isroutine(value):
        name = "a function"
    elif inspect.ismodule(value):
        name = "a module"
    else:
        name = f"a {type(value).__name__}"
    return name.replace("a ", "an ", 1) if name[2].lower() in "aeiou" else name  # an int, an ExecutionScope


def _remove_entry(entries: list[str], entry: str) -> None:
    """Remove the item that *is* ``entry`` (identity, not equality); nothing if it is gone already."""
    for index, item in enumerate(entries):
        if item is entry:
            del entries[index]
            return
