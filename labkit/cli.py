"""The console: ``labkit run SCENARIO [--simple] [--json] [--live ...]`` and ``labkit scenarios``.

``--live`` replaces the scenario's scripted model by a real OpenAI-compatible
endpoint (docs/live.md); the scenario still lends its grants and limits.
The profile comes from ``--base-url``, ``--model``, ``--api-key-env`` (the
*name* of the variable holding the key), ``--profile FILE``, the
``LABKIT_*`` variables, or the defaults (a local Ollama); see
:mod:`labkit.transports.live`. The header shows the profile, never the key.

Exit codes:

* 0 ``Completed`` (and ``--version``);
* 2 ``Incomplete`` or a controlled stop (``ProviderUnavailable`` included,
  with a ``hint:`` line naming the URL tried, or saying that the provider
  cancelled its own request);
* 130 caller cancellation (Ctrl+C), from the first instruction of the
  ``labkit`` command to its last: during start-up (imports, building the
  loop) as during the run; one line on stderr, never a traceback;
* 64 a usage error (no command, unknown scenario, unknown flag, an
  unexpected argument, a flag's bad value: a bad limit, or a malformed
  ``--base-url``, ``--model`` or ``--api-key-env``; a profile flag without
  ``--live``; a scenario file that does not load or declares its scenario
  wrongly, or whose script runs out of steps during the run; a flag that
  takes a value given twice), never confused with a controlled stop; a
  mistyped scenario, command, ``--runtime`` or flag is answered with the
  near one (``did you mean 'complete'?``);
* 74 the output could not be written (stdout failed with an ``OSError``
  such as a full disk); one line on stderr naming the error *and the run's
  status and exit code*, which are not lost;
* 76 the live endpoint answered with something that is not a usable chat
  completion (one line on stderr);
* 78 a live configuration error: a bad URL or model in the profile file or
  the ``LABKIT_*`` variables, an unreadable or invalid profile file, key
  variable named but unset, key refused (401/403), model not found (404) or
  request rejected (400); or ``--runtime`` naming a framework that is not
  installed (the line names the extra to install); one line naming what to fix.

``--runtime maf|pydantic-ai|openai-agents|langgraph`` runs that framework's own loop
inside the same scope (:mod:`labkit.adapters`) instead of labkit's agents.
``SCENARIO`` may be ``path/to/file.py:NAME``, a scenario declared with
:func:`labkit.scenario` in that file.

Output never costs the run its exit code: a reader that leaves early
(``labkit run complete | head -1``, or ``| true``) is not an error, the rest
of the output is dropped and the process exits with the run's code; a
character the output encoding cannot take is written as a backslash escape
(``\\xe8``) instead of failing.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import os
import re
import sys
from collections.abc import Sequence
from typing import IO, Any, NoReturn

from pydantic import ValidationError

from ._version import __version__
from .core.errors import ConfigurationError, FrameworkError, ProviderResponseError, UserError
from .core.limits import Limits
from .loops.agents import result_kind
from .loops.outcome import EXIT_CANCELLED, EXIT_CONFIG, EXIT_OUTPUT, EXIT_PROTOCOL, EXIT_USAGE, RunOutcome
from .loops.runner import Setup, prepare, run_sync
from .loops.scenarios import SCENARIOS, Scenario, get_scenario
from .transports.chat import Transport

EXIT_FRAMEWORK = 70
"""Console exit code when a ``--runtime`` framework's loop ended on an error of its own (one line on stderr)."""

__all__ = ["main"]


class _UsageError(Exception):
    pass


class _Output:
    """The console's stdout: a failing stream never raises, and its first failure is kept.

    A reader that left (``BrokenPipeError``) is not an error of the run: the
    rest of the output is dropped silently. Any other ``OSError`` (a full
    disk, an I/O error) is kept in :attr:`error` for one line on stderr at
    the end. Either way stdout is pointed at the null device, so nothing
    buffered fails again when the interpreter flushes it at exit.
    """

    def __init__(self) -> None:
        self.closed = False
        self.error: OSError | ValueError | None = None

    def write(self, text: str) -> None:
        if self.closed:
            return
        try:
            _write(text, sys.stdout)
        except BrokenPipeError:
            self._close()
        except (OSError, ValueError) as exc:  # ValueError: a stream closed in this process
            self.error = exc
            self._close()

    def _close(self) -> None:
        self.closed = True
        if sys.stdout is not sys.__stdout__:  # e.g. a notebook's stream: not this process's descriptor 1
            return
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # type: ignore[union-attr]  # None: the AttributeError below
            os.close(devnull)
        except (AttributeError, OSError, ValueError):  # no real file descriptor (e.g. a captured stream)
            pass


def _write(text: str, stream: IO[str] | None) -> None:
    """Print ``text`` and a newline, flushed; characters the stream's encoding lacks become escapes."""
    if stream is None:  # no stdout at all (file descriptor closed when Python started)
        return
    try:
        print(text, file=stream, flush=True)
    except UnicodeEncodeError as exc:  # nothing was written: the whole text is encoded first
        print(text.encode(exc.encoding, "backslashreplace").decode(exc.encoding), file=stream, flush=True)


def _error(text: str) -> None:
    """One line on stderr; a stderr that cannot take it is left alone (the exit code still tells)."""
    with contextlib.suppress(OSError, ValueError):
        _write(text, sys.stderr)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line with the valid choices and exit 64.

    ``commands`` keeps the subcommand parsers, so an unknown flag is answered
    with the flags of the command that was used. ``--help`` and
    ``--version`` go through :class:`_Output`, like the rest of the output.
    """

    def __init__(self, *, output: _Output, **kwargs: Any) -> None:
        super().__init__(allow_abbrev=False, **kwargs)  # `--dead 1` is not `--deadline-s 1`
        self.output = output
        self.commands: dict[str, _Parser] = {}

    @property
    def flags(self) -> list[str]:
        """This parser's long flags, read from its own usage line."""
        return sorted(set(re.findall(r"--[a-z][a-z-]*", self.format_usage())) - {"--help"})

    def error(self, message: str) -> NoReturn:
        if "required: SCENARIO" in message:
            message = f"{message}; choose one of: {', '.join(SCENARIOS)}"
        chosen = re.search(r"invalid choice: '(.*)' \(choose from (.*)\)$", message)
        near = _did_you_mean(chosen[1], re.findall(r"'([^']*)'", chosen[2])) if chosen else None
        if near:  # a command or a --runtime mistyped: name the near one
            message += f"; did you mean {near!r}?"
        raise _UsageError(f"{self.prog}: {message}")

    def _print_message(self, message: str, file: Any = None) -> None:
        if message:
            self.output.write(message.rstrip("\n"))


def _did_you_mean(word: str, choices: Sequence[str]) -> str | None:
    """The choice nearest to ``word`` (case aside, as :func:`difflib.get_close_matches` judges), or ``None``."""
    folded = {choice.lower(): choice for choice in choices}
    near = difflib.get_close_matches(word.lower().strip(), list(folded), n=1, cutoff=0.6)
    return folded[near[0]] if near else None


class _Once(argparse.Action):
    """Store a flag's value, and refuse the flag given a second time (which value would win is a guess)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option: Any = None):
        if getattr(namespace, self.dest, None) is not None:
            parser.error(
                f"argument {option}: given twice ({getattr(namespace, self.dest)!r}, then {values!r}); give it once"
            )
        setattr(namespace, self.dest, values)


def _unknown_arguments(parser: _Parser, argv: Sequence[str], unknown: Sequence[str]) -> str:
    """One line for arguments argparse did not use: unknown flags, or positional words too many."""
    command = next((a for a in argv if not a.startswith("-")), None)
    sub = parser.commands.get(command or "")
    prog = (sub or parser).prog
    if not any(word.startswith("-") for word in unknown):
        words = ", ".join(repr(word) for word in unknown)
        return f"{prog}: unexpected argument{'s' if len(unknown) > 1 else ''} {words}"
    flags = sub.flags if sub is not None else []
    valid = (
        f"valid flags for {sub.prog}: {', '.join(flags)}"
        if sub is not None and flags
        else f"{command or 'labkit'} takes no flags"
    )
    near = next((n for word in unknown if word.startswith("--") for n in [_did_you_mean(word, flags)] if n), None)
    hint = f" (did you mean {near}?)" if near else ""
    return f"{prog}: unrecognized arguments: {' '.join(unknown)}{hint}; {valid}"


def _parser(output: _Output) -> _Parser:
    parser = _Parser(prog="labkit", description="Bounded agent loops you can see stop.", output=output)
    parser.add_argument("--version", action="version", version=f"labkit {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="{run,scenarios}", parser_class=_Parser)
    commands.required = True
    parser.commands["scenarios"] = commands.add_parser(
        "scenarios", help="list the scenarios, one line each", output=output
    )
    run = parser.commands["run"] = commands.add_parser(
        "run", help="run one scenario and print its control events", output=output
    )
    run.add_argument(
        "scenario", metavar="SCENARIO", help=", ".join(SCENARIOS) + ", or path/to/file.py:NAME (your own scenario)"
    )
    run.add_argument("--simple", action="store_true", help="use the simple agent instead of the harness")
    run.add_argument(
        "--runtime",
        action=_Once,
        choices=("maf", "pydantic-ai", "openai-agents", "langgraph"),
        help="run this framework's own loop inside labkit's scope (needs the extra labkit[RUNTIME])",
    )
    run.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    run.add_argument("--stream", action="store_true", help="make streaming model calls")
    run.add_argument("--model-calls", type=int, action=_Once, metavar="N", help="model-call limit")
    run.add_argument("--tool-calls", type=int, action=_Once, metavar="N", help="tool-attempt limit")
    run.add_argument("--repetitions", type=int, action=_Once, metavar="N", help="attempts per signature")
    run.add_argument("--deadline-s", type=float, action=_Once, metavar="S", help="deadline of the run, in seconds")
    live = run.add_argument_group("live model (opt-in; the scenario keeps its grants and limits)")
    live.add_argument("--live", action="store_true", help="talk to a real OpenAI-compatible endpoint")
    live.add_argument(
        "--base-url", action=_Once, metavar="URL", help="API root, default http://localhost:11434/v1 (Ollama)"
    )
    live.add_argument("--model", action=_Once, metavar="NAME", help="model name the server knows, default llama3.2")
    live.add_argument(
        "--api-key-env", action=_Once, metavar="VAR", help="name of the environment variable holding the key"
    )
    live.add_argument(
        "--profile", action=_Once, metavar="FILE", help="TOML file with base_url, model, api_key_env, ..."
    )
    return parser


_PROFILE_FLAGS = ("base_url", "model", "api_key_env", "profile")


def _transport(args: argparse.Namespace) -> Transport | None:
    """The live transport when ``--live`` is given (imports :mod:`labkit.transports.live` only then)."""
    if not args.live:
        given = [f"--{name.replace('_', '-')}" for name in _PROFILE_FLAGS if getattr(args, name) is not None]
        if given:
            raise _UsageError(f"labkit run: {', '.join(given)} only applies with --live")
        return None
    from .transports.live import LiveProfile, LiveTransport

    for name in ("base_url", "model", "api_key_env"):  # a malformed flag value is a usage error, not a config one
        value = getattr(args, name)
        if value is not None:
            try:
                LiveProfile.load(None, environ={}, **{name: value})  # the flag alone: no file, no variables
            except ConfigurationError as exc:
                raise _UsageError(f"labkit run: {exc}") from None
    profile = LiveProfile.load(args.profile, base_url=args.base_url, model=args.model, api_key_env=args.api_key_env)
    return LiveTransport(profile)


def _limits(args: argparse.Namespace, chosen: Scenario) -> Limits | None:
    changes = {
        name: getattr(args, name)
        for name in ("model_calls", "tool_calls", "repetitions", "deadline_s")
        if getattr(args, name) is not None
    }
    if not changes:
        return None
    try:
        return chosen.limits.with_(**changes)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        flag = "--" + str(error["loc"][0]).replace("_", "-")
        raise _UsageError(f"labkit run: {flag}: {error['msg'].lower()}") from None


def _header_data(setup: Setup) -> dict[str, Any]:
    """What the plain header shows (:meth:`Setup.header`), as JSON values."""
    agent = setup.agent
    capabilities = getattr(agent, "capabilities", None)
    describe = getattr(setup.transport, "describe", None)
    return {
        "scenario": setup.scenario.name,
        "agent": agent.kind,
        "agent_name": agent.name,
        "max_iterations": agent.max_iterations,
        "harness_capabilities": capabilities.model_dump() if capabilities is not None else None,
        "transport": setup.transport.name,
        "transport_description": describe() if callable(describe) else setup.scenario.summary,
        "capabilities_granted": sorted(setup.scope.capabilities),
        "tools": [tool.name for tool in agent.tools],
        "limits": setup.scope.limits.model_dump(),
        "completion": setup.scenario.condition,
    }


def _as_json(setup: Setup, outcome: RunOutcome) -> str:
    data = {
        **_header_data(setup),
        "status": outcome.status.value,
        "text": outcome.text,
        "events": [e.model_dump(mode="json") for e in outcome.events],
        "exit_code": outcome.exit_code,
    }
    if outcome.unknown_tool_requests:  # like "hint": present only when there is something to see
        data["unknown_tool_requests"] = [{"id": c.id, "name": c.name} for c in outcome.unknown_tool_requests]
    if _not_run(outcome):  # the model's malformed calls: why a run that "goes on" ended by a budget
        data["calls_not_run"] = _not_run(outcome)
    if outcome.hint is not None:  # why the provider failed (ProviderUnavailable only)
        data["hint"] = outcome.hint
    return json.dumps(data)


_ERROR_SHOWN = 200
"""The most characters of a call's error the console shows (a pydantic message can list many fields)."""


def _not_run(outcome: RunOutcome) -> list[dict[str, str]]:
    """The calls the loop answered with an error before any guard, in the order the model asked.

    Arguments that did not bind, a reply cut at the output-token cap, call ids
    that repeat (docs/guarantees.md, *Bad input from the model*); unknown tools
    are listed apart (``unknown_tool_requests``).

    Returns:
        ``{"id", "name", "error"}`` per call, the error without ``error: `` and at
        most :data:`_ERROR_SHOWN` characters (binding errors name fields, never values).
    """
    shown = []
    for request in outcome.tool_requests:
        if result_kind(request.result) in ("unbound", "cut", "repeated ids"):
            error = (request.result or "").removeprefix("error: ")
            if len(error) > _ERROR_SHOWN:
                error = error[: _ERROR_SHOWN - 3] + "..."
            shown.append({"id": request.call.id, "name": request.call.name, "error": error})
    return shown


def _as_text(setup: Setup, outcome: RunOutcome) -> str:
    """The events and the status; :meth:`Setup.header` is printed before the run starts."""
    lines = ["", "events:"]
    width = max((len(e.kind) for e in outcome.events), default=0)
    for number, event in enumerate(outcome.events, 1):
        lines.append(f"  {number:>2}  {event.kind:<{width}}  {event.name:<14} {event.count}")
    for call in outcome.unknown_tool_requests:  # no event: they never reach a guard (chapter 8's kinds)
        lines.append(f"unknown tool requested: {call.name!r} (call {call.id}); answered with an error, nothing ran")
    for request in _not_run(outcome):  # arguments that did not bind, a cut reply, repeated ids: no ToolCall event
        lines.append(f"tool call not run: {request['name']!r} (call {request['id']}): {request['error']}")
    lines.append("")
    lines.append(f"status: {outcome.status.value} (exit {outcome.exit_code})")
    if outcome.hint is not None:  # why the provider failed (ProviderUnavailable only)
        lines.append(f"hint: {outcome.hint}")
    if outcome.status == "ProviderUnavailable":  # an outside failure the host maps to a status, not a rule
        lines.append("text: none (the provider failed before an answer)")
    elif outcome.status.is_stop:
        lines.append("text: withheld (the host stopped the run)")
    elif outcome.status == "Incomplete":
        lines.append(f"text: {outcome.text!r} (not a success: the host condition is false)")
    else:
        lines.append(f"text: {outcome.text!r}")
    return "\n".join(lines)


async def _run(setup: Setup, output: _Output, show_header: bool) -> RunOutcome:
    if show_header:  # say what is running before a run that may take up to its deadline
        output.write("\n".join(setup.header()))
    return await setup.arun()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the console with ``argv`` (default: ``sys.argv[1:]``); return the exit code.

    Never raises for a user's mistake, a Ctrl+C or a failing output stream;
    see the module docstring for the exit codes.
    """
    output = _Output()
    try:
        code, ending = _main(list(sys.argv[1:] if argv is None else argv), output)
    except KeyboardInterrupt:
        _error("cancelled by the caller")
        return EXIT_CANCELLED
    if output.error is not None:  # the output is lost, the run's ending is not
        _error(f"labkit: could not write the output ({output.error}); {ending}")
        return EXIT_OUTPUT
    return code


def _main(argv: list[str], output: _Output) -> tuple[int, str]:
    """The command's exit code, and the words naming that ending if its output is lost."""
    parser = _parser(output)
    if not argv:  # a bare `labkit`: the usage, on stderr like any other usage error
        _error(parser.format_help().rstrip("\n"))
        return EXIT_USAGE, f"exit {EXIT_USAGE}"
    try:
        try:
            args, unknown = parser.parse_known_args(argv)
        except SystemExit as done:  # --help or --version, printed already
            return int(done.code or 0), "exit 0"
        if unknown:
            raise _UsageError(_unknown_arguments(parser, argv, unknown))
        if args.command == "scenarios":
            output.write("\n".join(f"{s.name:<12} {s.summary}" for s in SCENARIOS.values()))
            return 0, "exit 0"
        if ".py:" not in args.scenario and args.scenario not in SCENARIOS:  # as argparse words a bad choice
            if args.scenario.endswith(".py"):  # a file without the name of the scenario declared in it
                raise _UsageError(
                    f"labkit run: argument SCENARIO: {args.scenario!r} is a file; name the scenario "
                    f"declared in it: {args.scenario}:NAME"
                )
            named, colon, _ = args.scenario.rpartition(":")
            if colon and os.path.isfile(named):  # a file, but not a Python one
                raise _UsageError(
                    f"labkit run: argument SCENARIO: {named!r} is not a .py file; a scenario of your own "
                    "is declared in a Python file and given as path/to/file.py:NAME"
                )
            choices = ", ".join(repr(name) for name in SCENARIOS)
            near = _did_you_mean(args.scenario, list(SCENARIOS))
            raise _UsageError(
                f"labkit run: argument SCENARIO: invalid choice: {args.scenario!r} (choose from {choices})"
                + (f"; did you mean {near!r}?" if near else "")
            )
        if args.runtime and args.simple:
            raise _UsageError("labkit run: --simple and --runtime choose the loop twice; give one")
        chosen = get_scenario(args.scenario)  # a scenario file is executed here, once per command
        limits = _limits(args, chosen)
        transport = _transport(args)
        setup = prepare(
            chosen,
            agent=args.runtime or ("simple" if args.simple else "harness"),
            limits=limits,
            transport=transport,
            stream=args.stream,
        )
    except ConfigurationError as exc:
        _error(f"labkit run: {exc}")
        return EXIT_CONFIG, f"exit {EXIT_CONFIG}"
    except (_UsageError, UserError) as exc:
        message = str(exc)  # a scenario file's error says nothing of the command: name it, as every usage error does
        _error(message if message.startswith("labkit") else f"labkit run: {message}")
        return EXIT_USAGE, f"exit {EXIT_USAGE}"
    run = _run(setup, output, show_header=not args.json)
    try:
        outcome = run_sync(run)
    except KeyboardInterrupt:
        run.close()  # never started if the interrupt came first; a no-op otherwise
        raise
    except ConfigurationError as exc:  # the live server refused the key or the model
        _error(f"labkit run: {exc}")
        return EXIT_CONFIG, f"exit {EXIT_CONFIG}"
    except ProviderResponseError as exc:
        _error(f"labkit run: {exc}")
        return EXIT_PROTOCOL, f"exit {EXIT_PROTOCOL}"
    except FrameworkError as exc:  # --runtime only: the framework's loop ended on an error of its own
        _error(f"labkit run: {exc}")
        return EXIT_FRAMEWORK, f"exit {EXIT_FRAMEWORK}"
    except UserError as exc:  # e.g. a scenario file's script ran out of steps (ScriptExhausted)
        _error(f"labkit run: {exc}")
        return EXIT_USAGE, f"exit {EXIT_USAGE}"
    output.write(_as_json(setup, outcome) if args.json else _as_text(setup, outcome))
    return outcome.exit_code, f"the run ended with status {outcome.status.value} (exit {outcome.exit_code})"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
