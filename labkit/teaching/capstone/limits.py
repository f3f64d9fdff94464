"""A guard's budget and repetition limits as it was seen to apply them (chapter 10): probed, compared, said.

When no known fault explains a guard's answers, the checker asks the guard itself how many calls each
limit lets in. The budget probe: a fresh guard with ``tool_calls=n`` (``n`` from 0 to 6, the budgets the
scripts use), every capability granted and room for repeats, answers distinct calls one after another;
the calls it runs before its first ``ToolBudget`` are what its budget admits with ``n``. The repetition
probe: a fresh guard with ``repetitions=r`` (0 to 3) and room in the budget answers one call again and
again; the times it runs it before its first ``RepeatedCall`` are what its repetition rule admits.
Labkit's budget admits ``n`` attempts, its repetition rule ``r`` (chapter 4, chapter 5): a limit a guard
applies otherwise, at some values only (a constant, a ``min`` or a ``max`` in the check), is named with
the values that showed it (:func:`limit_words`). A probe whose answers are not runs and then that
refusal tells nothing, and that value keeps labkit's bound; the checker names the learned limits only
when they give every answer the guard gave on every script.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from dataclasses import replace

from ...core.signature import signature
from ..i18n import _, ngettext
from .rules import GRANTED, REFERENCE, Call, Rules, Script, attempt

__all__ = ["BUDGET_WRONG", "REPETITION_WRONG", "learned_limits", "limit_words"]

BUDGET_WRONG = "budget_wrong_for_some_limits"
REPETITION_WRONG = "repetition_wrong_for_some_limits"

BUDGETS = tuple(range(7))
"""The budgets probed: those the scripts use (:func:`~.rules.scripts`)."""

REPETITIONS = tuple(range(4))
"""The repetition limits probed: those the scripts use."""

_ROOM = 4  # calls a probe makes beyond the limit: a guard that admits more than that admits "at least"

Answers = tuple[tuple[str, int], ...] | str
Books = tuple[object, object] | None
Ask = Callable[[Script], tuple[Answers, Books]]
"""A script's answers from a fresh guard (or the problem that stopped it), and its ``admitted`` and
``seen`` after the last call (``None`` when it stopped)."""


def _runs_before(script: Script, answers: Answers, books: Books, refusal: str, simple: bool) -> int | None:
    """How many calls ran before the first ``refusal`` (all of them, if none came), or ``None`` when the
    probe tells nothing: the answers are not runs followed by that refusal, or the guard's books do not
    count the calls it ran (then a count, not the limit, is what is wrong)."""
    if isinstance(answers, str):
        return None
    runs = next((i for i, (answer, _b) in enumerate(answers) if answer != "ran"), len(answers))
    if any(answer != refusal for answer, _b in answers[runs:]):
        return None
    return runs if _counted(script.calls[:runs], books, simple) else None


def _counted(ran: tuple[Call, ...], books: Books, simple: bool) -> bool:
    """Whether the guard's books hold the calls that ran, one attempt each and one per signature; a guard
    whose books are under names of its own (``admitted`` and ``seen`` never moved) is taken at its word."""
    if books is None:
        return True
    admitted, seen = books
    if not isinstance(admitted, int) or not isinstance(seen, dict):
        return True
    counts = sorted(n for n in seen.values() if isinstance(n, int) and n)
    if not admitted and not counts:
        return True
    keys = [signature(c.attempt.tool, c.attempt.arguments) for c in ran]
    return admitted == len(ran) and (simple or counts == sorted(collections.Counter(keys).values()))


def _budget_probe(n: int) -> Script:
    calls = tuple(Call(attempt("read_ticket", f'{{"input": {i}}}', i)) for i in range(1, n + _ROOM + 1))
    return Script(calls, tool_calls=n, repetitions=len(calls) + 1, granted=GRANTED)


def _repetition_probe(r: int, tool_calls: int) -> Script:
    call = Call(attempt("read_ticket", '{"input": 42}', 42))
    return Script((call,) * (r + _ROOM), tool_calls=tool_calls, repetitions=r, granted=GRANTED)


def learned_limits(ask: Ask, simple: bool = False) -> Rules | None:
    """The rules with the budget (and, unless ``simple``, the repetition limits) ``ask``'s guard was seen
    to apply, or ``None`` when every limit it was seen to apply is labkit's.

    Args:
        ask: a script's answers from a fresh guard (the checker's lone run) and its books (:data:`Ask`).
        simple: the one-budget exercise (``admit(body)``): its budget only.

    Returns:
        :class:`~.rules.Rules` with ``budget_bounds`` and ``repeat_bounds`` the probes saw where they
        differ from labkit's (a probe that tells nothing keeps labkit's bound), or ``None``.
    """
    budget = {}
    for n in BUDGETS:
        probe = _budget_probe(n)
        seen = _runs_before(probe, *ask(probe), "ToolBudget", simple)
        if seen is not None and seen != n:
            budget[n] = seen
    repeat = {}
    for r in () if simple else REPETITIONS:
        room = r + _ROOM
        tool_calls = next((n for n in range(room, room + 3) if budget.get(n, n) >= room), room)
        probe = _repetition_probe(r, tool_calls)
        seen = _runs_before(probe, *ask(probe), "RepeatedCall", simple)
        if seen is not None and seen != r:
            repeat[r] = seen
    if not budget and not repeat:
        return None
    return replace(REFERENCE, budget_bounds=tuple(budget.items()), repeat_bounds=tuple(repeat.items()))


def limit_words(learned: Rules) -> tuple[tuple[str, ...], list[str], list[str]]:
    """The fault ids, the words and the probe lines of the limits ``learned`` (:func:`learned_limits`).

    Returns:
        ``(ids, words, lines)``: ``budget_wrong_for_some_limits`` and/or
        ``repetition_wrong_for_some_limits``, one sentence for each, naming every probed value where the
        guard's bound differs from labkit's and the values where it is labkit's; one line per probe.
    """
    ids: list[str] = []
    words: list[str] = []
    lines: list[str] = []
    if learned.budget_bounds:
        ids.append(BUDGET_WRONG)
        wrong = _seen_words(learned.budget_bounds, _budget_admitted)
        right = [n for n in BUDGETS if n not in dict(learned.budget_bounds)]
        words.append(
            _(
                "your guard's tool budget does not admit tool_calls attempts at every budget: {wrong}{right};"
                " a budget of n admits n attempts, whatever n is (chapter 4): is there a number of your own"
                " in the check (a constant, a min or a max)?"
            ).format(wrong=wrong, right=_right_words(right))
        )
        lines.append(
            _(
                "  probed: a fresh guard with tool_calls=n (n from {low} to {high}) answers read_ticket(1),"
                " read_ticket(2), ... one after another; the calls it ran before its first ToolBudget"
            ).format(low=BUDGETS[0], high=BUDGETS[-1])
        )
    if learned.repeat_bounds:
        ids.append(REPETITION_WRONG)
        wrong = _seen_words(learned.repeat_bounds, _repeat_admitted)
        right = [r for r in REPETITIONS if r not in dict(learned.repeat_bounds)]
        words.append(
            _(
                "your guard's repetition rule does not admit a call `repetitions` times at every limit:"
                " {wrong}{right}; a signature may run `repetitions` times, whatever the limit is (chapter 5):"
                " is there a number of your own in the check?"
            ).format(wrong=wrong, right=_right_words(right))
        )
        lines.append(
            _(
                "  probed: a fresh guard with repetitions=r (r from {low} to {high}) answers read_ticket(42)"
                " again and again; the times it ran it before its first RepeatedCall"
            ).format(low=REPETITIONS[0], high=REPETITIONS[-1])
        )
    return tuple(ids), words, lines


def _budget_admitted(n: int, seen: int) -> str:
    return ngettext(
        "with tool_calls={n} it admitted {seen} call", "with tool_calls={n} it admitted {seen} calls", seen
    ).format(n=n, seen=seen)


def _repeat_admitted(r: int, seen: int) -> str:
    return ngettext(
        "with repetitions={r} it ran the same call {seen} time",
        "with repetitions={r} it ran the same call {seen} times",
        seen,
    ).format(r=r, seen=seen)


def _seen_words(bounds: tuple[tuple[int, int], ...], said: Callable[[int, int], str]) -> str:
    parts = [said(n, seen) for n, seen in bounds]
    return ", ".join(parts[:-1]) + (_(" and ") if len(parts) > 1 else "") + parts[-1]


def _right_words(right: list[int]) -> str:
    if not right:
        return ""
    values = ", ".join(map(str, right[:-1])) + (_(" and ") if len(right) > 1 else "") + str(right[-1])
    return _(" (as many as the limit with {values})").format(values=values)
