"""The console: ``labkit run SCENARIO [--simple] [--json]`` and ``labkit scenarios``.

Exit codes: 0 ``Completed``; 2 ``Incomplete`` or a controlled stop; 130
caller cancellation (Ctrl+C); 64 a usage error (unknown scenario, bad flag,
bad limit), which is never confused with a controlled stop.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import NoReturn

from pydantic import ValidationError

from .errors import UserError
from .limits import Limits
from .outcome import EXIT_CANCELLED, EXIT_USAGE, RunOutcome
from .runner import Setup, prepare, run_sync
from .scenarios import SCENARIOS

__all__ = ["main"]


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line with the valid choices and exit 64."""

    def error(self, message: str) -> NoReturn:
        if "unrecognized arguments" in message:
            message = f"{message}; valid flags: {', '.join(_flags(self))}"
        elif "required: SCENARIO" in message:
            message = f"{message}; choose one of: {', '.join(SCENARIOS)}"
        raise _UsageError(f"{self.prog}: {message}")


def _flags(parser: argparse.ArgumentParser) -> list[str]:
    """Every long flag of ``parser`` and its subcommands, for usage errors."""
    flags: set[str] = set()
    for action in parser._actions:
        flags.update(o for o in action.option_strings if o.startswith("--") and o != "--help")
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                flags.update(_flags(sub))
    return sorted(flags)


def _parser() -> _Parser:
    parser = _Parser(prog="labkit", description="Bounded agent loops you can see stop.")
    commands = parser.add_subparsers(dest="command", metavar="{run,scenarios}", parser_class=_Parser)
    commands.required = True
    commands.add_parser("scenarios", help="list the scenarios, one line each")
    run = commands.add_parser("run", help="run one scenario and print its control events")
    run.add_argument("scenario", metavar="SCENARIO", choices=list(SCENARIOS), help=", ".join(SCENARIOS))
    run.add_argument("--simple", action="store_true", help="use the simple agent instead of the harness")
    run.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    run.add_argument("--stream", action="store_true", help="make streaming model calls")
    run.add_argument("--model-calls", type=int, metavar="N", help="model-call limit")
    run.add_argument("--tool-calls", type=int, metavar="N", help="tool-attempt limit")
    run.add_argument("--repetitions", type=int, metavar="N", help="attempts per signature")
    run.add_argument("--deadline-s", type=float, metavar="S", help="deadline of the run, in seconds")
    return parser


def _limits(args: argparse.Namespace) -> Limits | None:
    changes = {
        name: getattr(args, name)
        for name in ("model_calls", "tool_calls", "repetitions", "deadline_s")
        if getattr(args, name) is not None
    }
    if not changes:
        return None
    try:
        return SCENARIOS[args.scenario].limits.with_(**changes)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        flag = "--" + str(error["loc"][0]).replace("_", "-")
        raise _UsageError(f"labkit run: {flag}: {error['msg'].lower()}") from None


def _as_json(setup: Setup, outcome: RunOutcome) -> str:
    return json.dumps(
        {
            "scenario": setup.scenario.name,
            "agent": setup.agent.kind,
            "status": outcome.status.value,
            "text": outcome.text,
            "events": [e.model_dump(mode="json") for e in outcome.events],
            "exit_code": outcome.exit_code,
        }
    )


def _as_text(setup: Setup, outcome: RunOutcome) -> str:
    """The events and the status; :meth:`Setup.header` is printed before the run starts."""
    lines = ["", "events:"]
    width = max((len(e.kind) for e in outcome.events), default=0)
    for number, event in enumerate(outcome.events, 1):
        lines.append(f"  {number:>2}  {event.kind:<{width}}  {event.name:<14} {event.count}")
    lines.append("")
    lines.append(f"status: {outcome.status.value} (exit {outcome.exit_code})")
    if outcome.status.is_stop:
        lines.append("text: withheld (the host stopped the run)")
    elif outcome.status == "Incomplete":
        lines.append(f"text: {outcome.text!r} (not a success: the host condition is false)")
    else:
        lines.append(f"text: {outcome.text!r}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the console with ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    try:
        args = _parser().parse_args(argv)
        if args.command == "scenarios":
            for scenario in SCENARIOS.values():
                print(f"{scenario.name:<12} {scenario.summary}")
            return 0
        setup = prepare(
            args.scenario,
            agent="simple" if args.simple else "harness",
            limits=_limits(args),
            stream=args.stream,
        )
    except (_UsageError, UserError) as exc:
        print(exc, file=sys.stderr)
        return EXIT_USAGE
    try:
        if not args.json:  # say what is running before a run that may take up to its deadline
            print("\n".join(setup.header()), flush=True)
        outcome = run_sync(setup.arun())
    except KeyboardInterrupt:
        print("cancelled by the caller", file=sys.stderr)
        return EXIT_CANCELLED
    print(_as_json(setup, outcome) if args.json else _as_text(setup, outcome))
    return outcome.exit_code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
