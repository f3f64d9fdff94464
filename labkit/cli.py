"""The console: ``labkit run SCENARIO [--simple] [--json] [--live ...]`` and ``labkit scenarios``.

``--live`` replaces the scenario's scripted model by a real OpenAI-compatible
endpoint (SPEC §6 "Live"); the scenario still lends its grants and limits.
The profile comes from ``--base-url``, ``--model``, ``--api-key-env`` (the
*name* of the variable holding the key), ``--profile FILE``, the
``LABKIT_*`` variables, or the defaults (a local Ollama); see
:mod:`labkit.live`. The header shows the profile, never the key.

Exit codes:

* 0 ``Completed``;
* 2 ``Incomplete`` or a controlled stop (``ProviderUnavailable`` included,
  with a ``hint:`` line naming the URL tried);
* 130 caller cancellation (Ctrl+C);
* 64 a usage error (unknown scenario, bad flag, bad limit, a profile flag
  without ``--live``), never confused with a controlled stop;
* 76 the live endpoint answered with something that is not a usable chat
  completion (one line on stderr);
* 78 a live configuration error: bad URL, unreadable or invalid profile
  file, key variable named but unset, key refused (401/403), model not
  found (404) or request rejected (400); or ``--runtime`` naming a framework
  that is not installed (the line names the extra to install); one line
  naming what to fix.

``--runtime maf|pydantic-ai|openai-agents`` runs that framework's own loop
inside the same scope (:mod:`labkit.adapters`) instead of labkit's agents.
``SCENARIO`` may be ``path/to/file.py:NAME``, a scenario declared with
:func:`labkit.scenario` in that file.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

from pydantic import ValidationError

from .chat import Transport
from .errors import ConfigurationError, ProviderResponseError, UserError
from .limits import Limits
from .outcome import EXIT_CANCELLED, EXIT_CONFIG, EXIT_PROTOCOL, EXIT_USAGE, RunOutcome
from .runner import Setup, prepare, run_sync
from .scenarios import SCENARIOS, get_scenario

__all__ = ["main"]


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line with the valid choices and exit 64.

    ``commands`` keeps the subcommand parsers, so an unknown flag is answered
    with the flags of the command that was used.
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.commands: dict[str, _Parser] = {}

    @property
    def flags(self) -> list[str]:
        """This parser's long flags, read from its own usage line."""
        return sorted(set(re.findall(r"--[a-z][a-z-]*", self.format_usage())) - {"--help"})

    def error(self, message: str) -> NoReturn:
        if "required: SCENARIO" in message:
            message = f"{message}; choose one of: {', '.join(SCENARIOS)}"
        raise _UsageError(f"{self.prog}: {message}")


def _unknown_flags(parser: _Parser, argv: Sequence[str], message: str) -> str:
    command = next((a for a in argv if not a.startswith("-")), None)
    sub = parser.commands.get(command or "")
    flags = sub.flags if sub is not None else []
    valid = f"valid flags for {sub.prog}: {', '.join(flags)}" if flags else f"{command or 'labkit'} takes no flags"
    return f"{(sub or parser).prog}: {message}; {valid}"


def _parser() -> _Parser:
    parser = _Parser(prog="labkit", description="Bounded agent loops you can see stop.")
    commands = parser.add_subparsers(dest="command", metavar="{run,scenarios}", parser_class=_Parser)
    commands.required = True
    parser.commands["scenarios"] = commands.add_parser("scenarios", help="list the scenarios, one line each")
    run = parser.commands["run"] = commands.add_parser("run", help="run one scenario and print its control events")
    run.add_argument(
        "scenario", metavar="SCENARIO", help=", ".join(SCENARIOS) + ", or path/to/file.py:NAME (your own scenario)"
    )
    run.add_argument("--simple", action="store_true", help="use the simple agent instead of the harness")
    run.add_argument(
        "--runtime",
        choices=("maf", "pydantic-ai", "openai-agents"),
        help="run this framework's own loop inside labkit's scope (needs the extra labkit[RUNTIME])",
    )
    run.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    run.add_argument("--stream", action="store_true", help="make streaming model calls")
    run.add_argument("--model-calls", type=int, metavar="N", help="model-call limit")
    run.add_argument("--tool-calls", type=int, metavar="N", help="tool-attempt limit")
    run.add_argument("--repetitions", type=int, metavar="N", help="attempts per signature")
    run.add_argument("--deadline-s", type=float, metavar="S", help="deadline of the run, in seconds")
    live = run.add_argument_group("live model (opt-in; the scenario keeps its grants and limits)")
    live.add_argument("--live", action="store_true", help="talk to a real OpenAI-compatible endpoint")
    live.add_argument("--base-url", metavar="URL", help="API root, default http://localhost:11434/v1 (Ollama)")
    live.add_argument("--model", metavar="NAME", help="model name the server knows, default llama3.2")
    live.add_argument("--api-key-env", metavar="VAR", help="name of the environment variable holding the key")
    live.add_argument("--profile", metavar="FILE", help="TOML file with base_url, model, api_key_env, ...")
    return parser


_PROFILE_FLAGS = ("base_url", "model", "api_key_env", "profile")


def _transport(args: argparse.Namespace) -> Transport | None:
    """The live transport when ``--live`` is given (imports :mod:`labkit.live` only then)."""
    if not args.live:
        given = [f"--{name.replace('_', '-')}" for name in _PROFILE_FLAGS if getattr(args, name) is not None]
        if given:
            raise _UsageError(f"labkit run: {', '.join(given)} only applies with --live")
        return None
    from .live import LiveProfile, LiveTransport

    profile = LiveProfile.load(args.profile, base_url=args.base_url, model=args.model, api_key_env=args.api_key_env)
    return LiveTransport(profile)


def _hint(setup: Setup, outcome: RunOutcome) -> str | None:
    error = getattr(setup.transport, "last_error", None)
    return str(error) if error is not None and outcome.status == "ProviderUnavailable" else None


def _limits(args: argparse.Namespace) -> Limits | None:
    changes = {
        name: getattr(args, name)
        for name in ("model_calls", "tool_calls", "repetitions", "deadline_s")
        if getattr(args, name) is not None
    }
    if not changes:
        return None
    try:
        return get_scenario(args.scenario).limits.with_(**changes)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        flag = "--" + str(error["loc"][0]).replace("_", "-")
        raise _UsageError(f"labkit run: {flag}: {error['msg'].lower()}") from None


def _as_json(setup: Setup, outcome: RunOutcome) -> str:
    data = {
        "scenario": setup.scenario.name,
        "agent": setup.agent.kind,
        "status": outcome.status.value,
        "text": outcome.text,
        "events": [e.model_dump(mode="json") for e in outcome.events],
        "exit_code": outcome.exit_code,
    }
    hint = _hint(setup, outcome)
    if hint is not None:
        data["hint"] = hint
    return json.dumps(data)


def _as_text(setup: Setup, outcome: RunOutcome) -> str:
    """The events and the status; :meth:`Setup.header` is printed before the run starts."""
    lines = ["", "events:"]
    width = max((len(e.kind) for e in outcome.events), default=0)
    for number, event in enumerate(outcome.events, 1):
        lines.append(f"  {number:>2}  {event.kind:<{width}}  {event.name:<14} {event.count}")
    lines.append("")
    lines.append(f"status: {outcome.status.value} (exit {outcome.exit_code})")
    hint = _hint(setup, outcome)
    if hint is not None:
        lines.append(f"hint: {hint}")
    if outcome.status.is_stop:
        lines.append("text: withheld (the host stopped the run)")
    elif outcome.status == "Incomplete":
        lines.append(f"text: {outcome.text!r} (not a success: the host condition is false)")
    else:
        lines.append(f"text: {outcome.text!r}")
    return "\n".join(lines)


async def _run(setup: Setup, show_header: bool) -> RunOutcome:
    if show_header:  # say what is running before a run that may take up to its deadline
        print("\n".join(setup.header()), flush=True)
    return await setup.arun()


def _print(text: str) -> None:
    try:
        print(text, flush=True)
    except BrokenPipeError:  # the reader left (e.g. `| head`): not an error of the run
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the console with ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    try:
        args, unknown = parser.parse_known_args(argv)
        if unknown:
            raise _UsageError(_unknown_flags(parser, argv, f"unrecognized arguments: {' '.join(unknown)}"))
        if args.command == "scenarios":
            _print("\n".join(f"{s.name:<12} {s.summary}" for s in SCENARIOS.values()))
            return 0
        if ".py:" not in args.scenario and args.scenario not in SCENARIOS:  # as argparse words a bad choice
            choices = ", ".join(repr(name) for name in SCENARIOS)
            raise _UsageError(f"labkit run: argument SCENARIO: invalid choice: {args.scenario!r} (choose from {choices})")
        if args.runtime and args.simple:
            raise _UsageError("labkit run: --simple and --runtime choose the loop twice; give one")
        limits = _limits(args)
        transport = _transport(args)
        setup = prepare(
            args.scenario,
            agent=args.runtime or ("simple" if args.simple else "harness"),
            limits=limits,
            transport=transport,
            stream=args.stream,
        )
    except ConfigurationError as exc:
        print(f"labkit run: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except (_UsageError, UserError) as exc:
        print(exc, file=sys.stderr)
        return EXIT_USAGE
    run = _run(setup, show_header=not args.json)
    try:
        outcome = run_sync(run)
    except KeyboardInterrupt:
        run.close()  # never started if the interrupt came first; a no-op otherwise
        print("cancelled by the caller", file=sys.stderr)
        return EXIT_CANCELLED
    except ConfigurationError as exc:  # the live server refused the key or the model
        print(f"labkit run: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except ProviderResponseError as exc:
        print(f"labkit run: {exc}", file=sys.stderr)
        return EXIT_PROTOCOL
    _print(_as_json(setup, outcome) if args.json else _as_text(setup, outcome))
    return outcome.exit_code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
