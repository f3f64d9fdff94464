"""What a guard must answer, call by call: the reference rules and the usual ways to get them wrong.

The guard exercise (chapter 10) is judged against :class:`Rules`, a
single-threaded statement of labkit's guard (chapter 4, docs/guarantees.md):
cancellation first, then permission, the tool budget and repetition, in that
order; a reservation that stands even if the body fails; a signature made of
the tool name and the canonical arguments; cancellation checked again after
the body. Unlike labkit's scope, a refusal here does not halt the run, so a
checker can keep asking and see what the guard counted.

:data:`FAULTS` changes one thing at a time in those rules: each fault is a
:class:`Rules` with one field changed, and its explanation. When a learner's
guard answers some call differently from the rules, the checker names the
faults that answer *every* call the way the learner's guard did, and only
those; a guard no known fault explains gets the first call it got wrong,
described as it ran.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from ...core.signature import canonical, signature
from ..i18n import N_, _, pgettext

__all__ = [
    "Attempt",
    "BOOK_FAULTS",
    "CHECKS",
    "FAULTS",
    "Fault",
    "Rules",
    "Script",
    "scripts",
]

GRANTED = frozenset({"ticket.read", "review.finish"})

CHECKS = ("cancelled", "permission", "tool_budget", "repetition")
"""The guard's checks in labkit's order: the run's cancellation, then the three rules."""

CHECK_WORDS = {
    "cancelled": N_("the cancellation check"),
    "permission": "permission",  # in a sentence: _check_words
    "tool_budget": N_("the tool budget"),
    "repetition": N_("the repetition rule"),
}

REFUSAL = {
    "cancelled": "Cancelled",
    "permission": "PermissionDenied",
    "tool_budget": "ToolBudget",
    "repetition": "RepeatedCall",
}
"""What ``admit`` returns for each refusal (the stop reasons of labkit, and ``"Cancelled"``)."""


@dataclass(frozen=True)
class Attempt:
    """One tool call as the guard sees it: ``admit(call, body)`` gets one of these as ``call``.

    Attributes:
        tool: the tool's name, e.g. ``"read_ticket"``.
        capability: the capability it needs, e.g. ``"ticket.read"``.
        arguments: the arguments after binding to the tool's types, e.g. ``{"input": 42}``.
        raw: the argument text exactly as the model sent it, e.g. ``'{"input": 42.0}'``.
    """

    tool: str
    capability: str
    arguments: Mapping[str, object] = field(compare=False)  # the same raw text binds to the same arguments
    raw: str = ""

    def __str__(self) -> str:
        lead = '{"input": '
        if self.raw.startswith(lead) and self.raw.endswith("}") and "," not in self.raw:
            return f"{self.tool}({self.raw[len(lead) : -1]})"  # read_ticket(42.0): the text as sent
        return f"{self.tool}({self.raw})"


_CAPABILITY = {
    "read_ticket": "ticket.read",
    "finish_review": "review.finish",
    "tag_ticket": "ticket.read",
    "set_priority": "review.finish",
}


def attempt(tool: str, raw: str, value: object) -> Attempt:
    return Attempt(tool, _CAPABILITY[tool], {"input": value}, raw)


def _call(tool: str, raw: str, **arguments: object) -> Attempt:
    return Attempt(tool, _CAPABILITY[tool], arguments, raw)


ALPHABET = (
    attempt("read_ticket", '{"input": 42}', 42),
    attempt("read_ticket", '{"input": 42.0}', 42),
    attempt("read_ticket", '{"input": 1}', 1),
    attempt("read_ticket", '{"input": 2}', 2),
    attempt("finish_review", '{"input": 42}', 42),
    attempt("finish_review", '{"input": 1}', 1),
    # two arguments, sent in either order (one signature), and a list argument in another order (another)
    _call("tag_ticket", '{"input": 42, "tags": ["a", "b"]}', input=42, tags=["a", "b"]),
    _call("tag_ticket", '{"tags": ["a", "b"], "input": 42}', input=42, tags=["a", "b"]),
    _call("tag_ticket", '{"input": 42, "tags": ["b", "a"]}', input=42, tags=["b", "a"]),
    # a Decimal argument: 1.10 and 1.1 are one value (one signature), whatever str() says
    _call("set_priority", '{"level": 1.10}', level=Decimal("1.10")),
    _call("set_priority", '{"level": 1.1}', level=Decimal("1.1")),
    # 42 sent as a string: binding to the tool's int makes it 42, so it repeats read_ticket(42); the
    # model's text parsed (json.loads) keeps "42", a string, and would count it as another call
    attempt("read_ticket", '{"input": "42"}', 42),
)
"""The calls scripts are made of: 42 sent as ``42``, as ``42.0`` and as ``"42"`` (one signature,
three texts), other ids, the other tool with the same arguments (a different signature), arguments
in another order, a list in another order, and a decimal written two ways."""

LOOKALIKES = (
    _call("tag_ticket", '{"input": 42, "tags": ["A", "b"]}', input=42, tags=["A", "b"]),
    _call("tag_ticket", '{"input": 42, "tags": ["a ", "b"]}', input=42, tags=["a ", "b"]),
)
"""Calls that differ from ``ALPHABET[6]`` only in a letter's case or a space inside an argument: other
arguments, so other signatures (a signature casefolded, or with its spaces taken out, merges them). Only in
hand-made scripts and in the probes of a guard's signature, so the generated scripts stay as they were."""

PROBED = (*ALPHABET, *LOOKALIKES)
"""Every call a script makes: the calls whose signatures the checker probes (:func:`_key` ``"learned"``)."""


@dataclass(frozen=True)
class Call:
    """One step of a script: a call, what its body does, and whether the run was cancelled before it.

    ``body`` is ``"ok"``, ``"fails"`` (the body raises), ``"cancels"`` (the
    run is cancelled while the body runs: its deadline passes) or ``"cancels_fails"``
    (the run is cancelled while the body runs, and then the body raises).
    """

    attempt: Attempt
    body: str = "ok"
    cancel_before: bool = False

    def __str__(self) -> str:
        text = str(self.attempt)
        if self.body == "fails":
            text = _("{call} whose body fails").format(call=text)
        elif self.body == "cancels":
            text = _("{call} during whose body the run is cancelled").format(call=text)
        elif self.body == "cancels_fails":
            text = _("{call} whose body fails after the run is cancelled during it").format(call=text)
        return (_("(run cancelled) ") if self.cancel_before else "") + text


@dataclass(frozen=True)
class Script:
    """A few calls, one after another, on a fresh guard made with these limits and grants."""

    calls: tuple[Call, ...]
    tool_calls: int = 3
    repetitions: int = 1
    granted: frozenset[str] = GRANTED

    def setting(self) -> str:
        granted = ", ".join(sorted(self.granted)) or _("nothing")
        return _("tool_calls={tool_calls}, repetitions={repetitions}, granted: {granted}").format(
            tool_calls=self.tool_calls, repetitions=self.repetitions, granted=granted
        )


# -- the rules, and one way at a time to get them wrong --------------------------------


Books = tuple[int | None, tuple[int, ...] | None]
"""A guard's books at one moment: the attempts admitted, and the counts per signature above 0, sorted
(``None`` for a part the guard does not keep under the names ``admitted`` and ``seen``)."""


@dataclass
class State:
    admitted: int = 0
    seen: dict[str, int] = field(default_factory=dict)
    by_tool: dict[str, int] = field(default_factory=dict)
    cancelled: bool = False

    def books(self) -> Books:
        return self.admitted, tuple(sorted(n for n in self.seen.values() if n))


def _key(kind: str, call: Attempt, classes: tuple[tuple[tuple[str, str], int], ...] = ()) -> str:
    if kind == "learned":  # the signature a guard was seen to use: its class among the probed calls
        found = dict(classes).get((call.tool, call.raw))
        return f"class {found}" if found is not None else signature(call.tool, call.arguments)
    if kind == "raw":
        return call.tool + ":" + call.raw
    if kind == "parsed":
        return signature(call.tool, json.loads(call.raw))
    if kind == "tool":
        return call.tool
    if kind == "arguments":
        return canonical(dict(call.arguments))
    return signature(call.tool, call.arguments)


@dataclass(frozen=True)
class Rules:
    """The guard's rules for one call at a time; the defaults are labkit's (chapter 4).

    Attributes:
        order: the checks asked, in order (a check left out is never asked).
        budget_slack: the budget admits ``tool_calls + budget_slack`` attempts.
        repeat_slack: a signature is admitted ``repetitions + repeat_slack`` times.
        key: what makes two calls "the same": ``"signature"`` (tool name +
            canonical arguments), ``"raw"`` (the raw text), ``"parsed"`` (the raw text parsed as
            JSON, not bound to the tool's types), ``"tool"`` (the
            name only), ``"arguments"`` (the arguments only) or ``"learned"`` (the classes a guard was
            seen to put the probed calls in, ``classes``).
        classes: for ``key="learned"``, ``((tool, raw), class)`` of each probed call.
        refund: a failed body's attempt is given back: ``""`` (never),
            ``"budget"``, ``"signature"`` or ``"both"`` (budget and signature).
        refund_always: the refund follows every body, not only a failed one (a ``finally:``).
        count_refused: a refused call counts against the budget too.
        refusal_counts: ``(check, n)``: a call that ``check`` refuses adds ``n`` to the budget's count
            (``1``: it is counted; ``-1``: a place is given back though nothing was reserved).
        refusal_seen: the checks whose refused call still adds one to its signature's count (a
            reservation made before the check and kept, or a count added on the refusal itself).
        budget_bounds: ``(tool_calls, n)``: with that budget, the budget admits ``n`` attempts (the
            bounds a guard was seen to apply, :mod:`.limits`); other budgets admit ``tool_calls +
            budget_slack``.
        repeat_bounds: ``(repetitions, n)``: the same for the repetition rule.
        budget_per_tool: the budget is counted per tool name, not for the whole run.
        budget_per_signature: the budget is counted per signature (``seen[key]`` against ``tool_calls``).
        permission: what is looked for in the grants: ``"capability"`` (labkit) or ``"tool"`` (the
            tool's name, which no grant holds).
        counts: what a reservation adds to: ``"both"`` (labkit), ``"seen"`` (the budget's count is never
            added to) or ``"admitted"`` (the signature's count is never added to).
        recheck: cancellation is checked again after the body.
        body_first: the body runs before the checks.
    """

    order: tuple[str, ...] = CHECKS
    budget_slack: int = 0
    repeat_slack: int = 0
    key: str = "signature"
    refund: str = ""
    count_refused: bool = False
    recheck: bool = True
    body_first: bool = False
    budget_per_tool: bool = False
    budget_per_signature: bool = False
    refund_always: bool = False
    refusal_counts: tuple[tuple[str, int], ...] = ()
    permission: str = "capability"
    classes: tuple[tuple[tuple[str, str], int], ...] = ()
    counts: str = "both"
    refusal_seen: tuple[str, ...] = ()
    budget_bounds: tuple[tuple[int, int], ...] = ()
    repeat_bounds: tuple[tuple[int, int], ...] = ()

    def key_of(self, call: Attempt) -> str:
        """What makes two calls the same under these rules (:func:`_key`)."""
        return _key(self.key, call, self.classes)

    def budget_bound(self, tool_calls: int) -> int:
        """How many attempts the budget admits with ``tool_calls``."""
        return dict(self.budget_bounds).get(tool_calls, tool_calls + self.budget_slack)

    def repeat_bound(self, repetitions: int) -> int:
        """How many times the repetition rule admits one signature with ``repetitions``."""
        return dict(self.repeat_bounds).get(repetitions, repetitions + self.repeat_slack)

    def refusal(
        self, state: State, call: Attempt, tool_calls: int, repetitions: int, granted: frozenset[str]
    ) -> str | None:
        key = self.key_of(call)
        for check in self.order:
            if check == "cancelled" and state.cancelled:
                return check
            if check == "permission" and (call.tool if self.permission == "tool" else call.capability) not in granted:
                return check
            admitted = state.by_tool.get(call.tool, 0) if self.budget_per_tool else state.admitted
            if self.budget_per_signature:
                admitted = state.seen.get(key, 0)
            if check == "tool_budget" and admitted >= self.budget_bound(tool_calls):
                return check
            if check == "repetition" and state.seen.get(key, 0) >= self.repeat_bound(repetitions):
                return check
        return None

    def run(self, script: Script) -> tuple[tuple[str, int], ...]:
        """Each call's answer and how many bodies it ran: ``(("ran", 1), ("ToolBudget", 0), ...)``."""
        return self.run_with_state(script)[0]

    def run_with_state(
        self, script: Script, inside: list[Books] | None = None
    ) -> tuple[tuple[tuple[str, int], ...], State]:
        """:meth:`run`'s answers, and the books (attempts admitted, per signature) after the last call;
        ``inside`` receives the books as each body started (:meth:`State.books`), one per body run."""
        state = State()
        answers = []
        for step in script.calls:
            if step.cancel_before:
                state.cancelled = True
            answers.append(self._one(state, step, script, inside))
        return tuple(answers), state

    def books_in_bodies(self, script: Script) -> tuple[Books, ...]:
        """The books as each body of ``script`` started, in order: what a guard following these rules holds
        while a body runs (a reservation is held during its body, given back only after it)."""
        inside: list[Books] = []
        self.run_with_state(script, inside)
        return tuple(inside)

    def _one(self, state: State, step: Call, script: Script, inside: list[Books] | None = None) -> tuple[str, int]:
        call = step.attempt
        if self.body_first:
            if inside is not None:
                inside.append(state.books())  # the body runs before anything is checked or counted
            if step.body in ("cancels", "cancels_fails"):
                state.cancelled = True
            if step.body in ("fails", "cancels_fails"):
                return ("fails", 1)
        refused = self.refusal(state, call, script.tool_calls, script.repetitions, script.granted)
        if refused is not None:
            counted = int(self.count_refused) + dict(self.refusal_counts).get(refused, 0)
            state.admitted += counted
            state.by_tool[call.tool] = state.by_tool.get(call.tool, 0) + counted
            if refused in self.refusal_seen:
                key = self.key_of(call)
                state.seen[key] = state.seen.get(key, 0) + 1
            return (REFUSAL[refused], int(self.body_first))
        key = self.key_of(call)
        if self.counts != "seen":
            state.admitted += 1
            state.by_tool[call.tool] = state.by_tool.get(call.tool, 0) + 1
        if self.counts != "admitted":
            state.seen[key] = state.seen.get(key, 0) + 1
        if inside is not None and not self.body_first:
            inside.append(state.books())
        if self.body_first:
            return ("Cancelled" if self.recheck and state.cancelled else "ran", 1)
        if step.body in ("cancels", "cancels_fails"):
            state.cancelled = True  # the run stops while the body runs; a failing body's error still settles the call
        failed = step.body in ("fails", "cancels_fails")
        if self.refund and (failed or self.refund_always):
            self._give_back(state, call.tool, key)
        if failed:
            return ("fails", 1)
        return ("Cancelled" if self.recheck and state.cancelled else "ran", 1)

    def _give_back(self, state: State, tool: str, key: str) -> None:
        if self.refund in ("budget", "both"):
            state.admitted -= 1
            state.by_tool[tool] = state.by_tool.get(tool, 0) - 1
        if self.refund in ("signature", "both"):
            state.seen[key] = state.seen.get(key, 0) - 1


REFERENCE = Rules()


@dataclass(frozen=True)
class Fault:
    """One known way to get the rules wrong: an id the tests name, the rules it follows, the words."""

    id: str
    rules: Rules
    words: str
    example: str = ""  # the words with an example from the call that showed the fault: {call}, {other}

    @property
    def said(self) -> str:
        """:attr:`words` in the notebook's language (:attr:`words` itself is the English)."""
        if self.rules.order != REFERENCE.order:
            return _order_words(self.rules.order, _)[1]
        return _(self.words)

    def said_at(self, script: Script, k: int) -> str:
        """:attr:`said`, with its example taken from the script that showed the fault: its call ``k`` (the
        first the fault answers differently) and the earlier call the fault's signature confuses it with.
        Without an example (or with no such earlier call), :attr:`said`."""
        other = self.confused_with(script, k)
        if not self.example or other is None:
            return self.said
        return _(self.example).format(call=script.calls[k].attempt, other=other)

    def confused_with(self, script: Script, k: int) -> Attempt | None:
        """The latest call before ``k``, admitted by the rules, that the fault's signature confuses call
        ``k`` with: the same signature under the fault's key but not labkit's ("repeats"), or the same under
        labkit's but not the fault's ("count as two calls")."""
        if self.rules.key == REFERENCE.key:
            return None
        call = script.calls[k].attempt
        answers = REFERENCE.run(script)
        for j in range(k - 1, -1, -1):
            if answers[j][0] not in ("ran", "fails", "Cancelled") or not answers[j][1]:
                continue  # refused: never counted
            other = script.calls[j].attempt
            same_here = self.rules.key_of(other) == self.rules.key_of(call)
            same_in_labkit = _key(REFERENCE.key, other) == _key(REFERENCE.key, call)
            if same_here != same_in_labkit:
                return other
        return None


def _check_words(check: str, _: Callable[[str], str]) -> str:
    """A check's name in a sentence, in the language ``_`` gives (the default, :func:`N_`: English)."""
    if check == "permission":
        return pgettext("a check in a sentence", "permission") if _ is not N_ else "permission"
    return _(CHECK_WORDS[check])


def _order_words(order: tuple[str, ...], _: Callable[[str], str] = N_) -> tuple[str, str]:
    """The fault id and the words of a guard that asks ``order``'s checks; ``_`` translates them
    (the default keeps the English: :data:`FAULTS` is made at import)."""
    missing = [c for c in CHECKS if c not in order]
    if missing:
        name = missing[0]
        ids = {
            "cancelled": "no_cancellation_check",
            "permission": "no_permission_rule",
            "tool_budget": "no_budget_rule",
            "repetition": "no_repetition_rule",
        }
        if name == "cancelled":
            return ids[name], _(
                "your guard does not check cancellation before the rules: a cancelled run admits nothing"
            )
        return ids[name], _(
            "your guard never refuses a call for {check}: it does not ask it, or its answer never says no"
        ).format(check=_check_words(name, _))
    for a, b in itertools.combinations(CHECKS, 2):
        if order.index(a) > order.index(b):
            return (
                "rules_in_wrong_order",
                _(
                    "your guard asks {second} before {first}; when both would refuse a call, "
                    "the first in labkit's order (cancellation, permission, tool budget, repetition) names the stop"
                ).format(second=_check_words(b, _), first=_check_words(a, _)),
            )
    raise AssertionError(order)


def _faults() -> tuple[Fault, ...]:
    faults = [
        Fault(
            "budget_admits_one_too_many",
            Rules(budget_slack=1),
            N_(
                "the tool budget admits one attempt too many: refuse once admitted >= tool_calls (`>` lets one more in)"
            ),
        ),
        Fault(
            "budget_refuses_one_too_early",
            Rules(budget_slack=-1),
            N_("the tool budget refuses one attempt too early: tool_calls attempts may run, the next is refused"),
        ),
        Fault(
            "repetition_admits_one_too_many",
            Rules(repeat_slack=1),
            N_("the repetition rule admits one repeat too many: refuse once a signature was seen >= repetitions times"),
        ),
        Fault(
            "repetition_refuses_one_too_early",
            Rules(repeat_slack=-1),
            N_("the repetition rule refuses too early: a signature may run `repetitions` times"),
        ),
        Fault(
            "signature_from_raw_text",
            Rules(key="raw"),
            N_(
                "the signature is taken from the raw text, so 42 and 42.0 count as two calls; use "
                "labkit.signature(call.tool, call.arguments) (tool name + canonical arguments, chapter 5)"
            ),
            N_(
                "the signature is taken from the raw text, so {other} and {call} count as two calls; use "
                "labkit.signature(call.tool, call.arguments) (tool name + canonical arguments, chapter 5)"
            ),
        ),
        Fault(
            "signature_from_parsed_text",
            Rules(key="parsed"),
            'the signature is taken from the model\'s text parsed as JSON, not from the bound arguments, so "42" '
            "and 42 count as two calls although both bind to 42; use labkit.signature(call.tool, call.arguments) "
            "(chapter 5)",
            N_(
                "the signature is taken from the model's text parsed as JSON, not from the bound arguments, so "
                "{other} and {call} count as two calls although both bind to the same arguments; use "
                "labkit.signature(call.tool, call.arguments) (chapter 5)"
            ),
        ),
        Fault(
            "signature_per_tool",
            Rules(key="tool"),
            N_(
                "the signature leaves the arguments' values out (it is the tool name alone, or with the argument"
                " names), so read_ticket(1) repeats read_ticket(2); the values count too"
            ),
            N_(
                "the signature leaves the arguments' values out (it is the tool name alone, or with the argument"
                " names), so {call} repeats {other}; the values count too"
            ),
        ),
        Fault(
            "signature_ignores_tool",
            Rules(key="arguments"),
            N_(
                "the signature leaves the tool name out (it is made of the arguments alone), so finish_review(42)"
                " repeats read_ticket(42); the tool name counts too"
            ),
            N_(
                "the signature leaves the tool name out (it is made of the arguments alone), so {call} repeats"
                " {other}; the tool name counts too"
            ),
        ),
        Fault(
            "failed_body_refunded",
            Rules(refund="budget"),
            N_(
                "a failed body's attempt is given back (or counted only when the body succeeds); the "
                "reservation stands even if the body fails"
            ),
        ),
        Fault(
            "failed_body_refunded",
            Rules(refund="both"),
            N_(
                "a failed body's attempt and its signature are given back (or counted only when the body "
                "succeeds); the reservation stands even if the body fails"
            ),
        ),
        Fault(
            "failed_body_refunded",
            Rules(refund="signature"),
            N_(
                "a failed body's signature is given back (its count in self.seen), so the same call may run again;"
                " the reservation stands even if the body fails"
            ),
        ),
        *(
            Fault(
                "given_back_after_every_body",
                Rules(refund=what, refund_always=True),
                words,
            )
            for what, words in (
                (
                    "budget",
                    N_(
                        "your guard gives the attempt's budget place back after every body, not only a failed one"
                        " (in a `finally:` block?): an admitted attempt counts for the whole run"
                    ),
                ),
                (
                    "signature",
                    N_(
                        "your guard gives the signature's count back after every body, not only a failed one"
                        " (in a `finally:` block?): an admitted attempt counts for the whole run"
                    ),
                ),
                (
                    "both",
                    N_(
                        "your guard gives the attempt and its signature back after every body, not only a failed"
                        " one (in a `finally:` block?): an admitted attempt counts for the whole run"
                    ),
                ),
            )
        ),
        *(
            Fault(
                "refused_calls_counted",
                Rules(refusal_counts=((check, 1),), refusal_seen=(check,)),  # the whole reservation, kept
                words,
            )
            for check, words in (
                (
                    "repetition",
                    N_(
                        "a call the repetition rule refuses still counts against the budget (reserved before the"
                        " repetition check and kept); only admitted attempts count"
                    ),
                ),
                (
                    "permission",
                    N_(
                        "a call refused for permission still counts against the budget (reserved before the"
                        " permission check and kept); only admitted attempts count"
                    ),
                ),
            )
        ),
        *(
            Fault(
                "refusal_gives_back",
                Rules(refusal_counts=((check, -1),)),
                words,
            )
            for check, words in (
                (
                    "repetition",
                    N_(
                        "your guard gives a budget place back when the repetition rule refuses a call, though that"
                        " call reserved nothing: a refusal changes no count"
                    ),
                ),
                (
                    "tool_budget",
                    N_(
                        "your guard gives a budget place back when the tool budget refuses a call, though that"
                        " call reserved nothing: a refusal changes no count"
                    ),
                ),
                (
                    "permission",
                    N_(
                        "your guard gives a budget place back when it refuses a call for permission, though that"
                        " call reserved nothing: a refusal changes no count"
                    ),
                ),
            )
        ),
        Fault(
            "permission_refuses_granted",
            Rules(permission="tool"),
            N_(
                "your guard refuses every call for permission, granted or not: it looks for something else than"
                " the call's capability in the grants (the tool's name?); check call.capability in self.granted"
            ),
        ),
        Fault(
            "budget_never_counted",
            Rules(counts="seen"),
            N_(
                "your guard never counts an admitted attempt: while each body ran, self.admitted held no more"
                " than before that call, so the tool budget never refuses a call; add one to it in the same"
                " `with` block as the checks"
            ),
        ),
        Fault(
            "repetition_never_counted",
            Rules(counts="admitted"),
            N_(
                "your guard never counts a signature: while each body ran, self.seen[key] held no more than"
                " before that call, so the repetition rule never refuses a call; add one to self.seen[key] in"
                " the same `with` block as the checks"
            ),
        ),
        Fault(
            "budget_per_signature",
            Rules(budget_per_signature=True),
            N_(
                "the tool budget is counted per signature (self.seen[key] against tool_calls); it counts every"
                " attempt of the run, whatever the call"
            ),
        ),
        Fault(
            "budget_per_tool",
            Rules(budget_per_tool=True),
            N_("the tool budget is counted per tool; it counts every attempt of the run, whatever the tool"),
        ),
        Fault(
            "refused_calls_counted",
            Rules(count_refused=True),
            N_("refused calls are counted against the budget; only admitted attempts count"),
        ),
        Fault(
            "no_recheck_after_body",
            Rules(recheck=False),
            N_(
                "cancellation is not checked again after the body: a run cancelled while the body ran must "
                "not report the body's result"
            ),
        ),
        Fault(
            "body_before_check",
            Rules(body_first=True),
            N_("the body runs before the checks, so refused calls ran their body; decide first, then run it"),
        ),
    ]
    for size in range(len(CHECKS), 0, -1):
        for order in itertools.permutations(CHECKS, size):
            in_order = list(order) == sorted(order, key=CHECKS.index)
            if order == CHECKS or (size < len(CHECKS) and not in_order):
                continue  # one change at a time: a check left out, or all four in another order
            fault_id, words = _order_words(order)
            faults.append(Fault(fault_id, Rules(order=order), words))
    return tuple(faults)


FAULTS = _faults()
"""Every single-field change of :data:`REFERENCE` the checker can name (rule orders included)."""

_SIMPLE_IDS = {
    "budget_admits_one_too_many",
    "budget_refuses_one_too_early",
    "failed_body_refunded",
    "given_back_after_every_body",
    "budget_never_counted",
    "body_before_check",
}  # counting refused calls cannot show with one budget: once full, it stays full

SIMPLE_FAULTS = tuple(
    f
    for f in FAULTS
    if (f.rules.order == ("cancelled", "permission", "repetition") or f.id in _SIMPLE_IDS)
    and f.rules.refund in ("", "budget")
)
"""The faults the one-budget exercise (``admit(body)``) can show: no permission, no signatures."""

_BOOK_WORDS = {
    "cancelled": (
        N_(
            "a call refused because the run was cancelled still adds one to its signature's count in self.seen:"
            " a refused call counts nothing (chapter 4)"
        ),
        N_(
            "a call refused because the run was cancelled still counts against the budget (self.admitted):"
            " a refused call counts nothing (chapter 4)"
        ),
    ),
    "permission": (
        N_(
            "a call refused for permission still adds one to its signature's count in self.seen: a refused call"
            " counts nothing (chapter 4)"
        ),
        "",
    ),
    "tool_budget": (
        N_(
            "a call the tool budget refuses still adds one to its signature's count in self.seen: a refused call"
            " counts nothing (chapter 4)"
        ),
        N_(
            "a call the tool budget refuses still counts against the budget (self.admitted): a refused call"
            " counts nothing (chapter 4)"
        ),
    ),
    "repetition": (
        N_(
            "a call the repetition rule refuses still adds one to its signature's count in self.seen: a refused"
            " call counts nothing (chapter 4)"
        ),
        "",
    ),
}

BOOK_FAULTS = tuple(
    Fault("miscounted", rules, words)
    for check, (seen_words, admitted_words) in _BOOK_WORDS.items()
    for rules, words in (
        (Rules(refusal_seen=(check,)), seen_words),
        (Rules(refusal_counts=((check, 1),)), admitted_words),
    )
    if words
)
"""Mistakes that change only the guard's books, never an answer (alone they are ``miscounted``, told by
the books): a refused call still counted, where the count it adds to already refuses, or refuses nothing
more. With another mistake that reads that count (a budget counted per signature, a place given back)
they change answers, so the checker tries them in pairs with :data:`FAULTS` (the permission and repetition
refusals counted against the budget change answers alone: they are :data:`FAULTS`' ``refused_calls_counted``)."""


# -- the scripts a guard is tried on ------------------------------------------------------------


def scripts(*, simple: bool = False, count: int = 160, seed: int = 10) -> tuple[Script, ...]:
    """The sequential scripts every guard is tried on, shortest first (deterministic).

    Args:
        simple: scripts for the one-budget exercise (distinct calls, every
            capability granted, no cancellation).
        count: how many generated scripts besides the hand-made ones.
        seed: the generator's seed (the same scripts every time).
    """
    r = random.Random(seed)
    made: list[Script] = []
    if simple:
        distinct = [attempt("read_ticket", f'{{"input": {n}}}', n) for n in range(1, 9)]
        for limit in (1, 2, 3):
            made.append(Script(tuple(Call(a) for a in distinct[: limit + 2]), tool_calls=limit, repetitions=9))
            made.append(
                Script(
                    (Call(distinct[0], "fails"), *(Call(a) for a in distinct[1 : limit + 2])),
                    tool_calls=limit,
                    repetitions=9,
                )
            )
        for _ in range(count // 4):
            n = r.randint(1, 6)
            calls = tuple(Call(distinct[i], r.choice(("ok", "ok", "fails"))) for i in range(n))
            made.append(Script(calls, tool_calls=r.choice((0, 1, 2, 3, 4)), repetitions=9))
        return tuple(sorted(dict.fromkeys(made), key=lambda s: len(s.calls)))
    r42, r42f, r1 = ALPHABET[0], ALPHABET[1], ALPHABET[2]
    distinct = [attempt("read_ticket", f'{{"input": {n}}}', n) for n in range(1, 9)]
    made += [  # hand-made: a signature asked three times, within the budget, with 1 and 2 repetitions
        Script((Call(r42), Call(r42f), Call(r42)), tool_calls=3, repetitions=1),
        Script((Call(r42), Call(r42f), Call(r42), Call(r1)), tool_calls=3, repetitions=2),
        Script((Call(r42),) * 5, tool_calls=5, repetitions=3),
        # one signature sent as two texts: 42 / 42.0, keys in either order, 1.10 / 1.1 as a Decimal
        *(
            Script((Call(a), Call(b)), tool_calls=3, repetitions=1)
            for a, b in ((ALPHABET[0], ALPHABET[1]), (ALPHABET[6], ALPHABET[7]), (ALPHABET[9], ALPHABET[10]))
        ),
        Script((Call(ALPHABET[6]), Call(ALPHABET[8])), tool_calls=3, repetitions=1),  # a list in another order
        *(Script((Call(ALPHABET[6]), Call(a)), tool_calls=3, repetitions=1) for a in LOOKALIKES),  # "A", "a "
        Script((Call(r42), Call(ALPHABET[11])), tool_calls=3, repetitions=1),  # "42" binds to 42: a repeat
        # budgets and repetitions of 0 and above 3
        Script((Call(r1),), tool_calls=0, repetitions=1),
        Script((Call(r1),), tool_calls=2, repetitions=0),
        # a body that fails after the run was cancelled during it: its attempt still counts (the books show it)
        Script((Call(r1, "cancels_fails"), Call(r42)), tool_calls=3, repetitions=1),
        Script((Call(r42), Call(r1, "cancels_fails")), tool_calls=2, repetitions=1),
        *(Script(tuple(Call(a) for a in distinct[: n + 1]), tool_calls=n, repetitions=1) for n in (4, 5, 6)),
    ]
    grants = (GRANTED, frozenset({"review.finish"}), frozenset({"ticket.read"}))
    for _ in range(count):
        n = r.randint(1, 6)
        picked: list[Call] = []
        cancelled = False
        for _ in range(n):
            cancel = not cancelled and r.random() < 0.08
            cancelled |= cancel
            body = r.choices(("ok", "fails", "cancels"), (10, 3, 1))[0]
            picked.append(Call(r.choice(ALPHABET), body, cancel))
        made.append(Script(tuple(picked), r.choice((0, 1, 2, 3, 3, 4)), r.choice((0, 1, 1, 2, 3)), r.choice(grants)))
    unique = list(dict.fromkeys(made))
    return tuple(sorted(unique, key=lambda s: len(s.calls)))
