"""Status bingo (chapter 10): eight scripted models, one per status, checked under both agents.

The learner fills a board (:func:`new_board`) with one :class:`ScriptedModel`
per :class:`~labkit.RunStatus`; :func:`check_bingo` runs each under the simple
and the harness agent and answers with one line per status: right, or which
status came instead, the counters against the square's limits, and a hint
naming the rule that decides. An unfinished square (``...``) is reported,
never raised.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import linecache
import sys
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from pydantic import ValidationError

from ...core.errors import ScriptExhausted, UserError
from ...core.limits import Limits, limits_problems
from ...loops.outcome import RunOutcome, RunStatus
from ...loops.runner import prepare, run
from ...loops.scenarios import ALL_CAPABILITIES, Scenario
from ...transports.scripted import ScriptedTransport, Step
from .. import progress as _progress
from ..explain import explain, how_to, square_hint
from ..i18n import N_, _, ngettext
from ..reasons import relabelled

__all__ = ["AGENTS", "BINGO_LIMITS", "Bingo", "ScriptedModel", "Square", "check_bingo", "new_board"]

AGENTS = ("simple", "harness")
"""Every square runs under both agents (chapter 2: the outcome must not depend on the agent)."""

BINGO_LIMITS = Limits(deadline_s=0.5)
"""The limits a square starts from, and the ceiling it may not exceed: the lesson's defaults
(6 model calls, 4 tool attempts, 1 attempt per signature) with a 0.5 s deadline, so a model that
hangs costs half a second per agent. A square may tighten a limit, never loosen one."""

_MAX_DEADLINE_S = BINGO_LIMITS.deadline_s  # "never loosen": the starting deadline is the ceiling too


@dataclass(frozen=True)
class ScriptedModel:
    """One bingo square's answer: a scripted model plus what the host grants.

    Args:
        steps: the script, as :class:`~labkit.ScriptedTransport` takes it: a
            list of steps (a ``str`` or ``Say``, a ``Call`` or a list of them,
            ``Hang()``, ``Fail(error)``) or a function ``(call_number, request) -> step``.
        grant: the capabilities the host grants (default: both,
            ``ticket.read`` and ``review.finish``).
        limits: changes to :data:`BINGO_LIMITS` as a mapping, e.g.
            ``{"model_calls": 1}``, or a whole :class:`~labkit.Limits`. Counts
            may only go down from the defaults, the deadline too (at most 0.5 s).

    Raises:
        UserError: a step that is not a script step, a function that cannot be
            called as ``steps(call_number, request)``, an unknown capability
            name (a typo would silently deny it), limits of the wrong type or
            with an unknown field, or a limit above its ceiling.
    """

    steps: Sequence[Step] | Callable[..., Step]
    grant: Iterable[str] = ALL_CAPABILITIES
    limits: Limits | Mapping[str, object] | None = None

    def __post_init__(self) -> None:
        square = _square_assigned(self)
        try:
            self._validate()
        except UserError as exc:
            if square is not None:
                _FAILED[square] = f"{type(exc).__name__}: {exc}"
            raise
        if square is not None:
            _FAILED.pop(square, None)

    def _validate(self) -> None:
        try:
            ScriptedTransport(self.steps)  # validates every step of a list
        except TypeError as exc:
            raise UserError(f"ScriptedModel steps: {exc}") from None
        if callable(self.steps):
            _check_step_function(self.steps)
        if isinstance(self.grant, (str, bytes)):
            raise UserError(f"grant is a set of capability names, e.g. {{{self.grant!r}}}, not one string")
        grant = frozenset(self.grant)
        unknown = sorted(grant - ALL_CAPABILITIES)
        if unknown:
            raise UserError(
                f"unknown capability {', '.join(map(repr, unknown))}; "
                f"the capabilities are {', '.join(map(repr, sorted(ALL_CAPABILITIES)))}"
            )
        object.__setattr__(self, "grant", grant)
        object.__setattr__(self, "limits", _bingo_limits(self.limits))

    def scenario(self, name: str) -> Scenario:
        """This model as a :class:`~labkit.Scenario` named ``name`` (run it with :func:`labkit.run`)."""
        return Scenario(name, f"bingo square {name}", self.steps, self.limits, self.grant)  # type: ignore[arg-type]


_FAILED: dict[str, str] = {}
"""Square name -> the error its latest ``board[name] = ScriptedModel(...)`` raised, so that the board says
"your square's cell raised ..." instead of "no script yet" (the assignment never happened). Emptied by
:func:`new_board`; an assignment that succeeds removes its square."""


def _square_assigned(model: ScriptedModel) -> str | None:
    """The status name of the statement that builds ``model``, when it reads ``board["Name"] = ScriptedModel(...)``
    (any dict, any name) or ``{"Name": ScriptedModel(...)}``: read from the caller's source, as a traceback
    reads it; ``None`` when there is no such statement or no source."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_locals.get("self") is model:  # __post_init__, then __init__
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return None
    try:
        tree = ast.parse("".join(linecache.getlines(frame.f_code.co_filename, frame.f_globals)))
    except (SyntaxError, ValueError):
        return None
    where = _call_position(frame)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _is_call_at(node.value, where):
            for target in node.targets:
                if isinstance(target, ast.Subscript) and _status_name(target.slice):
                    return _status_name(target.slice)
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if key is not None and _is_call_at(value, where):
                    return _status_name(key)
    return None


def _call_position(frame: FrameType) -> tuple[int | None, ...]:
    """Where in its source ``frame`` is now (the call being made): line, end line, column, end column."""
    for offset, position in zip(itertools.count(0, 2), frame.f_code.co_positions(), strict=False):
        if offset == frame.f_lasti:
            return tuple(position)
    return (frame.f_lineno, None, None, None)


def _is_call_at(node: ast.expr, where: tuple[int | None, ...]) -> bool:
    if not isinstance(node, ast.Call):
        return False
    line, end_line, column, end_column = where
    if column is None:  # no column known: the statement's lines must hold the call
        return line is not None and node.lineno <= line <= (node.end_lineno or node.lineno)
    return (node.lineno, node.end_lineno, node.col_offset, node.end_col_offset) == (line, end_line, column, end_column)


def _status_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and node.value in RunStatus._value2member_map_:
        return str(node.value)
    return None


def _check_step_function(steps: Callable[..., Step]) -> None:
    """A step function is called as ``steps(call_number, request)``: refuse one that cannot be."""
    try:
        signature = inspect.signature(steps)
    except (TypeError, ValueError):  # no signature to read (a builtin): let the run say
        return
    try:
        signature.bind(1, None)
    except TypeError:
        raise UserError(
            "ScriptedModel steps: a function is called as steps(call_number, request) -> step; "
            f"{getattr(steps, '__name__', type(steps).__name__)} cannot take those two arguments"
        ) from None


def _bingo_limits(limits: Limits | Mapping[str, object] | None) -> Limits:
    if limits is None:
        return BINGO_LIMITS
    try:
        if isinstance(limits, Limits):
            chosen = limits
        elif isinstance(limits, Mapping):
            chosen = BINGO_LIMITS.with_(**dict(limits))
        else:
            raise UserError(
                f"limits must be a mapping such as {{'model_calls': 1}} or labkit.Limits, not {type(limits).__name__}"
            )
    except ValidationError as exc:
        raise UserError(f"limits do not validate: {limits_problems(exc)}") from None
    too_high = [
        f"{name}={getattr(chosen, name):g} > {getattr(BINGO_LIMITS, name):g}"
        for name in ("model_calls", "tool_calls", "repetitions")
        if getattr(chosen, name) > getattr(BINGO_LIMITS, name)
    ]
    if chosen.deadline_s > _MAX_DEADLINE_S:
        too_high.append(f"deadline_s={chosen.deadline_s:g} > {_MAX_DEADLINE_S:g}")
    if too_high:
        raise UserError(
            "a square may tighten the limits, never loosen them: "
            + ", ".join(too_high)
            + " (pass only the fields you change, e.g. limits={'model_calls': 1})"
        )
    return chosen


def new_board() -> dict[str, Any]:
    """An empty board: every status name mapped to ``...`` (no script yet), in status order."""
    _FAILED.clear()
    return {status.value: ... for status in RunStatus}


@dataclass(frozen=True)
class Square:
    """One status of the board after :func:`check_bingo`.

    Attributes:
        status: the status this square asks for.
        state: ``"missing"`` (no script yet), ``"invalid"`` (not a
            ScriptedModel, an empty script, or a ``board[name] = ScriptedModel(...)``
            whose ScriptedModel raised, said with its error), ``"right"`` or ``"wrong"``.
        line: its result as one line (the status, what came instead, the hint);
            printed folded, see :attr:`text`.
        outcomes: agent name -> the run's outcome, or the exception it raised.
    """

    status: RunStatus
    state: str
    line: str
    outcomes: Mapping[str, RunOutcome | Exception] = field(default_factory=dict)

    @property
    def right(self) -> bool:
        return self.state == "right"

    @property
    def text(self) -> str:
        """:attr:`line` as printed: at most :data:`WIDTH` characters a line, the hint on lines of its own,
        every line after the first indented under the status column."""
        indent = " " * _LABEL
        first, _, hint = self.line.partition(" Hint: ")
        parts = [textwrap.fill(first, WIDTH, subsequent_indent=indent, break_on_hyphens=False)]
        if hint:
            parts.append(
                textwrap.fill(
                    "Hint: " + hint,
                    WIDTH,
                    initial_indent=indent,
                    subsequent_indent=indent + "  ",
                    break_on_hyphens=False,
                )
            )
        return "\n".join(parts)


class Bingo(tuple):
    """The eight :class:`Square` s, in status order; prints one line each and a total."""

    __slots__ = ()

    @property
    def passed(self) -> bool:
        """Every square is right."""
        return all(square.right for square in self)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            for square in self:
                if square.status == key:
                    return square
            raise KeyError(key)
        return super().__getitem__(key)

    def __str__(self) -> str:
        right = sum(square.right for square in self)
        total = ngettext("{right} of {squares} squares right", "{right} of {squares} squares right", right).format(
            right=right, squares=len(self)
        ) + (_(": bingo!") if self.passed else "")
        return "\n".join([*(square.text for square in self), total])

    def __repr__(self) -> str:
        return f"Bingo(passed={self.passed}, right={sum(s.right for s in self)}/{len(self)})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))


REPEATS = N_("most attempts of one signature")
"""How a bingo line names its third counter, ``most attempts of one signature n/m``: the most
attempts admitted for any one signature (tool name + canonical arguments) in the run, against
the ``repetitions`` limit. (Earlier versions printed it as "signature peak".) Printed in the notebook's language."""


def _counters(outcome: RunOutcome) -> str:
    limits = outcome.limits
    return (
        f"ModelCall {outcome.count('ModelCall')}/{limits.model_calls}, "
        f"ToolCall {outcome.count('ToolCall')}/{limits.tool_calls}, "
        f"{_(REPEATS)} {outcome.usage.repetitions}/{limits.repetitions}"
    )


def _ended(result: RunOutcome | Exception) -> str:
    if isinstance(result, RunOutcome):
        return f"{result.status.value} ({_counters(result)})"
    return _("raised {error}: {message}").format(error=type(result).__name__, message=result)


def _advice(wanted: RunStatus, result: RunOutcome | Exception) -> str:
    """The hint: what the run measured (labkit.teaching.explain), then what ``wanted`` needs."""
    if isinstance(result, ScriptExhausted):
        return _("the script ran out before the run ended: end it with text (a str or Say); {how}").format(
            how=how_to(wanted)
        )
    if isinstance(result, UserError):  # e.g. a step function that returned something that is not a step
        return _("the script itself is wrong ({error}): a usage error, not a status; {how}").format(
            error=type(result).__name__, how=how_to(wanted)
        )
    if isinstance(result, Exception):
        rule = _(
            "only a connection error (ConnectionError or a subclass) or the provider cancelling its own request"
            " (Fail(asyncio.CancelledError()), chapter 9) is mapped to ProviderUnavailable; the run raises any"
            " other error ({which}): a programming error, not a status"
        ).format(which=_which_error(result))
        if wanted is RunStatus.PROVIDER_UNAVAILABLE:
            return rule
        return _("; ").join([rule, how_to(wanted)])
    return square_hint(explain(result), wanted)


def _which_error(error: Exception) -> str:
    """What the hint says of the error's class: an OSError only when it is one, and why a TimeoutError is not
    mapped although a live server that stays silent is (README, exit code 2)."""
    name = type(error).__name__
    if isinstance(error, TimeoutError):
        return _(
            "here: {error}; a live server that stays silent is mapped to ProviderUnavailable by the live"
            " transport, which turns its read timeout into one; a scripted TimeoutError is raised as it is"
        ).format(error=name)
    if isinstance(error, OSError):
        return _("here: {error}, an OSError but not a connection error").format(error=name)
    return _("here: {error}").format(error=name)


def _run_square(wanted: RunStatus, model: ScriptedModel, agent: str) -> RunOutcome | Exception:
    try:
        setup = prepare(model.scenario(f"bingo-{wanted.value}"), agent=agent)  # type: ignore[arg-type]
        return run(setup)
    except Exception as exc:  # a programming error in the script is reported on its line
        return exc


WIDTH = 110
"""The widest printed line of a bingo result: a right square (at most 108 characters) stays on one line."""
_LABEL = 20  # the status column: the longest status, ProviderUnavailable, and one space


def _square(wanted: RunStatus, model: object) -> Square:
    label = f"{wanted.value:<{_LABEL}}"
    failed = _FAILED.get(wanted.value)
    if failed is not None:  # the square's latest ScriptedModel(...) raised: the board holds nothing newer
        kept = "" if model is None or model is Ellipsis else _(" (the board still holds the script before it)")
        return Square(
            wanted,
            "invalid",
            label
            + _("your square's cell raised {error}{kept}: fix it and run that cell again").format(
                error=failed, kept=kept
            ),
        )
    if model is None or model is Ellipsis:
        return Square(
            wanted,
            "missing",
            label
            + _(
                "no script yet: write board[{status}] = ScriptedModel([...]) (if you did, its cell"
                " raised an error: fix it and run that cell again)"
            ).format(status=repr(wanted.value)),
        )
    if not isinstance(model, ScriptedModel):
        return Square(
            wanted,
            "invalid",
            label
            + _("not a ScriptedModel ({type}): wrap the steps, ScriptedModel([...])").format(type=type(model).__name__),
        )
    if isinstance(model.steps, Sequence) and not model.steps:
        return Square(
            wanted,
            "invalid",
            label + _("the script is empty: give at least one step, e.g. ScriptedModel(['Review finished.'])"),
        )
    outcomes = {agent: _run_square(wanted, model, agent) for agent in AGENTS}
    results = list(outcomes.values())
    right = [r for r in results if isinstance(r, RunOutcome) and r.status is wanted]
    if len(right) == len(results):
        right_text = _("right under both agents: {counters}").format(counters=_counters(right[0]))
        return Square(wanted, "right", label + right_text, outcomes)
    ended = {_ended(r) for r in results}
    if len(ended) == 1:
        got = _("both agents: {ended}").format(ended=ended.pop())
    else:
        got = "; ".join(f"{agent}: {_ended(r)}" for agent, r in outcomes.items())
    wrong = next(r for r in results if not (isinstance(r, RunOutcome) and r.status is wanted))
    wrong_text = _("not yet, {got}. Hint: {hint}").format(got=got, hint=_advice(wanted, wrong))
    return Square(wanted, "wrong", label + wrong_text, outcomes)


def check_bingo(board: Mapping[str, object]) -> Bingo:
    """Run every square of ``board`` under both agents and say, per status, whether it is right.

    Args:
        board: status name -> :class:`ScriptedModel` (``...`` or ``None``, or
            a missing key, means "no script yet"), e.g. from :func:`new_board`.

    Returns:
        A :class:`Bingo`: eight squares in status order, each with one line
        (right, or which status came instead with the counters and a hint);
        ``.passed`` is true when all eight are right. The counters read
        ``ModelCall m/limit, ToolCall t/limit, most attempts of one signature
        r/limit`` (the most attempts admitted for any one signature, tool name +
        canonical arguments, against ``repetitions``). A hint's cause is measured by
        :func:`labkit.teaching.explain.explain`: the rule that decided, with the
        run's numbers, and a rule that would also have refused (the same call,
        with the guard's order, or a later one), found by running the square's
        script again with the deciding rule loosened; then what the wanted
        status needs. A hint never names a rule that did not refuse, or would
        not have, in that run.

    Raises:
        UserError: ``board`` is not a mapping, or has a key that is not a
            status name (the message lists them). Mistakes inside a square
            (not a ScriptedModel, an empty script, a script that runs out or
            raises) are reported on its line, never raised.
    """
    if not isinstance(board, Mapping):
        raise UserError(
            f"the board is a dict of status name -> ScriptedModel (see new_board()), not {type(board).__name__}"
        )
    board = relabelled(board, RunStatus._value2member_map_)  # a square keyed "completed" is Completed's
    unknown = [key for key in board if key not in RunStatus._value2member_map_]
    if unknown:
        raise UserError(f"not a status: {', '.join(map(repr, unknown))}; the squares are {', '.join(RunStatus)}")
    result = Bingo(_square(status, board.get(status.value)) for status in RunStatus)
    for square in result:  # each square in your progress (labkit.progress): tried or not, right or not
        _progress.record(
            "bingo", f"bingo square {square.status.value}", attempted=square.state != "missing", right=square.right
        )
    return result
