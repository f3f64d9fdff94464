"""A guard's signature as it was seen to count calls (chapter 10): probed, compared with labkit's, said.

When no known fault explains a guard's answers, the checker asks the guard itself which calls it takes
for one another: a fresh guard, ``repetitions=1``, one call as often as the guard admits it in a row,
then another call; a ``RepeatedCall`` for the second means the guard's signature counts the two as one.
Over every pair of the probed calls (:data:`~.rules.PROBED`) that gives the classes the guard puts them
in, and :func:`learned_rules` the rules with that signature. Compared with labkit's signature (tool
name + canonical arguments), a guard's signature *merges* two calls labkit tells apart, *splits* two it
counts as one, or both; each is named by the pair that showed it (:func:`signature_words`), with the
known faults' ids when the merges (or splits) are exactly theirs (the tool name alone, the arguments
alone, the raw text, the parsed text).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from ..i18n import N_, _
from .rules import GRANTED, PROBED, REFERENCE, Attempt, Call, Rules, Script

__all__ = ["MERGED", "SPLIT", "learned_rules", "same_signature", "signature_words"]

MERGED = "signature_merges_different_calls"
SPLIT = "signature_tells_equal_calls_apart"

Answers = Callable[[Script], "tuple[tuple[str, int], ...] | str"]
Pair = tuple[Attempt, Attempt]


def _refused_as_repeat(ask: Answers, calls: Sequence[Attempt], repetitions: int) -> bool:
    script = Script(tuple(Call(c) for c in calls), tool_calls=len(calls) + 2, repetitions=repetitions, granted=GRANTED)
    answers = ask(script)
    return not isinstance(answers, str) and answers[-1][0] == "RepeatedCall"


def _in_a_row(ask: Answers) -> tuple[int, int]:
    """``(repetitions, n)``: the smallest ``repetitions`` (1 to 3) with which the guard admits the first
    probed call ``n > 0`` times in a row and then refuses it as a repeat; ``(0, 0)`` when none does."""
    for repetitions in (1, 2, 3):
        script = Script((Call(PROBED[0]),) * 6, tool_calls=8, repetitions=repetitions, granted=GRANTED)
        answers = ask(script)
        if type(answers) is tuple:
            row = next((i for i, (a, _b) in enumerate(answers) if a == "RepeatedCall"), 0)
            if row:
                return repetitions, row
    return 0, 0


def learned_rules(ask: Answers) -> Rules | None:
    """The rules with the signature ``ask``'s guard was seen to use, or ``None`` when it is labkit's, or
    when no call of it is ever refused as a repeat (then its signature cannot be seen).

    A probe is a fresh guard with room in the budget: a call as often as the guard admits it in a row,
    then another call; ``RepeatedCall`` for the other call puts both in one class."""
    repetitions, row = _in_a_row(ask)
    if not row:
        return None  # never refused as a repeat, or refused from the first call: no signature to see
    classes: list[int] = []
    for i, call in enumerate(PROBED):
        same = next(
            (classes[j] for j in range(i) if _refused_as_repeat(ask, [PROBED[j]] * row + [call], repetitions)), None
        )
        classes.append(i if same is None else same)
    rules = Rules(key="learned", classes=tuple(((c.tool, c.raw), k) for c, k in zip(PROBED, classes, strict=True)))
    return None if _pairs(rules) == _pairs(REFERENCE) else rules


def same_signature(a: Rules, b: Rules) -> bool:
    """Whether two rules count the probed calls as the same signatures."""
    return _pairs(a) == _pairs(b)


def _pairs(rules: Rules) -> frozenset[Pair]:
    """The pairs of probed calls (earlier, later) that ``rules`` count as one signature."""
    return frozenset(
        (a, b) for i, a in enumerate(PROBED) for b in PROBED[i + 1 :] if rules.key_of(a) == rules.key_of(b)
    )


_KNOWN_MERGES = (("signature_per_tool", Rules(key="tool")), ("signature_ignores_tool", Rules(key="arguments")))
_KNOWN_SPLITS = (("signature_from_raw_text", Rules(key="raw")), ("signature_from_parsed_text", Rules(key="parsed")))


def _written(raw: str) -> dict[str, str]:
    """Each argument's value as the model wrote it (``42.0``, ``"42"``, ``1.10``), by name."""

    def text(value: Any) -> str:
        if isinstance(value, tuple):
            return str(value[1])
        if isinstance(value, list):
            return "[" + ", ".join(map(text, value)) + "]"
        return json.dumps(value)

    number = lambda t: ("number", t)  # noqa: E731
    parsed = json.loads(raw, parse_int=number, parse_float=number)
    return {k: text(v) for k, v in parsed.items()}


def _split_reason(a: Attempt, b: Attempt) -> str:
    """Why labkit counts ``a`` and ``b`` as one call, in words."""
    wa, wb = _written(a.raw), _written(b.raw)
    if wa == wb:
        return _("the same arguments, in another order")
    name = next(k for k in wa if wa[k] != wb.get(k))
    return _("{a} and {b} bind to one value").format(a=wa[name], b=wb.get(name, "?"))


def _merge_reason(a: Attempt, b: Attempt) -> str:
    """How ``a`` and ``b``, two calls for labkit, differ, in words."""
    if a.tool != b.tool:
        return _("they are calls of two tools")
    wa, wb = json.dumps(_written(a.raw)), json.dumps(_written(b.raw))
    if wa.casefold() == wb.casefold():
        return _("their arguments differ in the case of a letter")
    if wa.replace(" ", "") == wb.replace(" ", ""):
        return _("their arguments differ in a space")
    if _lists_sorted(a) == _lists_sorted(b):
        return _("a list argument is in another order, so it is another argument")
    return _("their arguments differ")


def _lists_sorted(call: Attempt) -> str:
    return repr(sorted((k, sorted(v) if isinstance(v, list) else v) for k, v in call.arguments.items()))


_WORDS = {
    MERGED: N_(
        "your guard's signature takes {call} for a repeat of {other}, though {reason}: two calls are one"
        " only when the tool and the canonical arguments are the same; use labkit.signature(call.tool,"
        " call.arguments) (chapter 5)"
    ),
    SPLIT: N_(
        "your guard's signature counts {other} and {call} as two calls, though labkit counts them as one"
        " ({reason}); use labkit.signature(call.tool, call.arguments), which compares the canonical"
        " arguments (chapter 5)"
    ),
}


def signature_words(
    rules: Rules, known: Callable[[str, Pair], str], shown: tuple[Script, int] | None
) -> tuple[tuple[str, ...], list[str], list[str]]:
    """The ids, the words and the probe lines for the learned signature ``rules``.

    ``known(id, (other, call))`` gives a known fault's words with that example; ``shown`` is the
    script and the call the report shows: its example pair is taken from there when that call was
    confused with an earlier one, else from a probe (and a line says what the probe saw)."""
    labkit, yours = _pairs(REFERENCE), _pairs(rules)
    ids: list[str] = []
    words: list[str] = []
    lines: list[str] = []
    for differ, known_ones, generic in (
        (yours - labkit, [(i, _pairs(r) - labkit) for i, r in _KNOWN_MERGES], MERGED),
        (labkit - yours, [(i, labkit - _pairs(r)) for i, r in _KNOWN_SPLITS], SPLIT),
    ):
        if not differ:
            continue
        fault = next((i for i, pairs in known_ones if pairs == differ), generic)
        pair = _shown_pair(shown, differ)
        if pair is None:
            pair = min(differ, key=lambda p: (PROBED.index(p[1]), PROBED.index(p[0])))
            lines.append(_probe_line(pair, generic == MERGED))
        ids.append(fault)
        if fault == generic:
            reason = _merge_reason(*pair) if generic == MERGED else _split_reason(*pair)
            words.append(_(_WORDS[generic]).format(other=pair[0], call=pair[1], reason=reason))
        else:
            words.append(known(fault, pair))
    return tuple(ids), words, lines


def _shown_pair(shown: tuple[Script, int] | None, differ: frozenset[Pair]) -> Pair | None:
    """The failing call of the report and the latest earlier call of its script it makes a pair of
    ``differ`` with (earlier first), or ``None``."""
    if shown is None:
        return None
    script, k = shown
    call = script.calls[k].attempt
    for j in range(k - 1, -1, -1):
        other = script.calls[j].attempt
        for pair in ((other, call), (call, other)):
            if pair in differ:
                return (other, call)
    return None


def _probe_line(pair: Pair, merged: bool) -> str:
    other, call = pair
    if merged:
        return _("  alone, with repetitions=1: after {other}, your guard refused {call}: RepeatedCall").format(
            other=other, call=call
        )
    return _("  alone, with repetitions=1: after {other}, your guard ran {call}").format(other=other, call=call)
