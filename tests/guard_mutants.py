"""Chapter 10's right guard with a learner's mistakes injected: the space the guard checker is tested on.

A guard is written out as source text, as a learner writes it (a module of its own, so the checker
quotes its lines), from slots: the signature, the four checks in their order, the reservation, the
lock around them, and what comes after the body. A :class:`Mutation` changes one or a few slots in
one way a learner does (``str(arguments)`` for the signature, ``>`` for ``>=``, a refund in ``except``
or ``finally``, a check before the lock, ...). Its oracle is the mutation itself: the fault ids the
checker must name for it (:attr:`Mutation.faults`), written here from what the mutation does, never
from the checker's answer. Two mutations of different slots combine (:func:`combine`); their ids are
the union, less those the other hides (:attr:`Mutation.hides`).
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

CHECK = {
    "cancel": ["if self.cancelled:", '    return "Cancelled"'],
    "permission": ["if call.capability not in self.granted:", '    return "PermissionDenied"'],
    "budget": ["if self.admitted >= self.tool_calls:", '    return "ToolBudget"'],
    "repetition": ["if self.seen.get(key, 0) >= self.repetitions:", '    return "RepeatedCall"'],
}
ORDER = ("cancel", "permission", "budget", "repetition")
RESERVE = ["self.admitted += 1", "self.seen[key] = self.seen.get(key, 0) + 1"]
AFTER = ["result = body()", 'return "Cancelled" if self.cancelled else result']
SIGNATURE = "labkit.signature(call.tool, call.arguments)"


@dataclass(frozen=True)
class Mutation:
    """One mistake: the slots it changes (``slot=value``), its kind, and the fault ids it must get."""

    name: str
    kind: str  # signature, budget, repetition, capability, refund, cancellation, lock
    faults: frozenset[str]
    slots: tuple[tuple[str, object], ...] = ()
    hides: frozenset[str] = frozenset()  # ids of the other mutation of a pair this one keeps from showing
    alone: bool = True  # found on the scripts alone (else in a race)

    def slot(self, name: str, default: object) -> object:
        return dict(self.slots).get(name, default)


def _m(name: str, kind: str, faults: str | set[str], alone: bool = True, hides: set[str] = frozenset(), **slots):  # type: ignore[no-untyped-def]
    ids = frozenset({faults} if isinstance(faults, str) else faults)
    return Mutation(name, kind, ids, tuple(sorted(slots.items())), frozenset(hides), alone)


def _checks(**changed: list[str]) -> dict[str, list[str]]:
    return dict(changed)


SPLIT, MERGED = "signature_tells_equal_calls_apart", "signature_merges_different_calls"
SIGNATURES = [
    _m("sig_str", "signature", SPLIT, key="call.tool + str(call.arguments)"),
    _m("sig_repr", "signature", SPLIT, key="repr((call.tool, dict(call.arguments)))"),
    _m("sig_json_no_sort_keys", "signature", "raised", key="call.tool + json.dumps(call.arguments)"),  # Decimal
    _m("sig_json_default_str", "signature", SPLIT, key="json.dumps([call.tool, call.arguments], default=str)"),
    _m("sig_json_of_raw", "signature", SPLIT, key="call.tool + json.dumps(json.loads(call.raw))"),
    _m("sig_raw", "signature", "signature_from_raw_text", key="call.tool + call.raw"),
    _m(
        "sig_raw_stripped",
        "signature",
        {"signature_from_raw_text", MERGED},
        key='call.tool + call.raw.replace(" ", "")',
    ),
    _m(
        "sig_parsed", "signature", "signature_from_parsed_text", key="labkit.signature(call.tool, json.loads(call.raw))"
    ),
    # the tool and its argument names only: on every script the same as the tool name alone (one id, said so)
    _m("sig_sorted_keys_only", "signature", "signature_per_tool", key="call.tool + str(sorted(call.arguments))"),
    _m(
        "sig_values_only",
        "signature",
        {"signature_ignores_tool", SPLIT},
        key="str(list(call.arguments.values()))",
    ),
    _m("sig_tool_only", "signature", "signature_per_tool", key="call.tool"),
    _m("sig_arguments_only", "signature", "signature_ignores_tool", key="labkit.canonical(dict(call.arguments))"),
    _m("sig_casefolded", "signature", MERGED, key="labkit.signature(call.tool, call.arguments).casefold()"),
    _m("sig_stripped", "signature", MERGED, key='labkit.signature(call.tool, call.arguments).replace(" ", "")'),
    _m(
        "sig_lists_sorted",
        "signature",
        MERGED,
        key="labkit.signature(call.tool, {k: sorted(v) if isinstance(v, list) else v for k, v in call.arguments.items()})",  # noqa: E501
    ),
]

BUDGETS = [
    _m(
        "budget_greater_than",
        "budget",
        "budget_admits_one_too_many",
        checks=_checks(budget=["if self.admitted > self.tool_calls:", '    return "ToolBudget"']),
    ),
    _m(
        "budget_one_too_early",
        "budget",
        "budget_refuses_one_too_early",
        checks=_checks(budget=["if self.admitted + 1 >= self.tool_calls:", '    return "ToolBudget"']),
    ),
    _m(
        "budget_per_tool",
        "budget",
        "budget_per_tool",
        init=["self.per_tool = {}"],
        checks=_checks(budget=["if self.per_tool.get(call.tool, 0) >= self.tool_calls:", '    return "ToolBudget"']),
        reserve=[*RESERVE, "self.per_tool[call.tool] = self.per_tool.get(call.tool, 0) + 1"],
    ),
    _m(
        "budget_per_signature",
        "budget",
        "budget_per_signature",
        checks=_checks(budget=["if self.seen.get(key, 0) >= self.tool_calls:", '    return "ToolBudget"']),
    ),
    _m(  # counted once the body returned: a failed body is never counted
        "budget_counted_after_body",
        "budget",
        "failed_body_refunded",
        reserve=RESERVE[1:],
        after=[
            "result = body()",
            "with self.lock:",
            "    self.admitted += 1",
            'return "Cancelled" if self.cancelled else result',
        ],
    ),
    _m(  # counted after the body, even a failed one: every answer alone is right, a race shows it
        "budget_counted_after_body_finally",
        "budget",
        "check_and_reserve_in_two_steps",
        alone=False,
        reserve=RESERVE[1:],
        after=[
            "try:",
            "    result = body()",
            "finally:",
            "    with self.lock:",
            "        self.admitted += 1",
            'return "Cancelled" if self.cancelled else result',
        ],
    ),
    _m("budget_never_counted", "budget", "budget_never_counted", reserve=RESERVE[1:]),
]

REPETITIONS = [
    _m(
        "repetition_greater_than",
        "repetition",
        "repetition_admits_one_too_many",
        checks=_checks(repetition=["if self.seen.get(key, 0) > self.repetitions:", '    return "RepeatedCall"']),
    ),
    _m(
        "repetition_one_too_early",
        "repetition",
        "repetition_refuses_one_too_early",
        checks=_checks(repetition=["if self.seen.get(key, 0) + 1 >= self.repetitions:", '    return "RepeatedCall"']),
    ),
    _m(  # reserves, then asks the repetition rule of the count it just made, and keeps the reservation
        "repetition_checked_after_reserving",
        "repetition",
        "refused_calls_counted",
        order=ORDER[:3],
        reserve=[*RESERVE, "if self.seen[key] > self.repetitions:", '    return "RepeatedCall"'],
    ),
    _m(
        "repetition_counted_on_refusal",
        "repetition",
        "miscounted",
        checks=_checks(
            repetition=[
                "if self.seen.get(key, 0) >= self.repetitions:",
                "    self.seen[key] = self.seen.get(key, 0) + 1",
                '    return "RepeatedCall"',
            ]
        ),
    ),
    _m("repetition_never_counted", "repetition", "repetition_never_counted", reserve=RESERVE[:1]),
]

CAPABILITIES = [
    _m(
        "capability_after_budget",
        "capability",
        "rules_in_wrong_order",
        order=("cancel", "budget", "permission", "repetition"),
    ),
    _m(
        "capability_after_repetition",
        "capability",
        "rules_in_wrong_order",
        order=("cancel", "budget", "repetition", "permission"),
    ),
    _m(
        "capability_tool_name_in_grants",
        "capability",
        "permission_refuses_granted",
        checks=_checks(permission=["if call.tool not in self.granted:", '    return "PermissionDenied"']),
    ),
    _m(  # the grants of the chapter, not this guard's: every capability is in them
        "capability_against_the_chapter_grants",
        "capability",
        "no_permission_rule",
        checks=_checks(permission=["if call.capability not in GRANTED:", '    return "PermissionDenied"']),
    ),
    _m("capability_never_checked", "capability", "no_permission_rule", order=("cancel", "budget", "repetition")),
]

_REFUND = {
    "budget": ["self.admitted -= 1"],
    "signature": ["self.seen[key] -= 1"],
    "both": ["self.admitted -= 1", "self.seen[key] -= 1"],
}


def _refund(what: str, clause: str) -> list[str]:
    ending = ["    raise"] if clause == "except Exception:" else []
    return [
        "try:",
        "    result = body()",
        clause,
        "    with self.lock:",
        *("        " + line for line in _REFUND[what]),
        *ending,
        'return "Cancelled" if self.cancelled else result',
    ]


REFUNDS = [
    *(
        _m(f"refund_{w}_on_failure", "refund", "failed_body_refunded", after=_refund(w, "except Exception:"))
        for w in _REFUND
    ),
    *(
        _m(f"refund_{w}_after_every_body", "refund", "given_back_after_every_body", after=_refund(w, "finally:"))
        for w in _REFUND
    ),
    _m(
        "refund_on_refusal",
        "refund",
        "refusal_gives_back",
        checks=_checks(
            repetition=[
                "if self.seen.get(key, 0) >= self.repetitions:",
                "    self.admitted -= 1",
                '    return "RepeatedCall"',
            ]
        ),
    ),
]

CANCELLATIONS = [
    _m("no_cancellation_check", "cancellation", "no_cancellation_check", order=ORDER[1:]),
    _m("no_recheck_after_body", "cancellation", "no_recheck_after_body", after=["return body()"]),
]

LOCKS = [
    _m("lock_none", "lock", "check_outside_lock", alone=False, lock="none"),
    _m("lock_check_outside", "lock", "check_outside_lock", alone=False, lock="check outside"),
    _m("lock_reserve_outside", "lock", "reservation_outside_lock", alone=False, lock="reserve outside"),
    _m("lock_body_inside", "lock", "body_under_lock", alone=False, lock="body inside"),
]

SINGLES = [*SIGNATURES, *BUDGETS, *REPETITIONS, *CAPABILITIES, *REFUNDS, *CANCELLATIONS, *LOCKS]


@dataclass(frozen=True)
class Guard:
    """A guard's source, from one or two mutations."""

    mutations: tuple[Mutation, ...]
    name: str = field(default="")

    @property
    def faults(self) -> frozenset[str]:
        """The ids the checker may name: each mutation's, the ones found alone first; or what two mistakes
        make together: the body under the lock, then code after it that takes the lock again, deadlocks;
        a signature's count given back that was never added raises ``KeyError``."""
        names = {m.name for m in self.mutations}
        after = [line for m in self.mutations for line in m.slot("after", [])]  # type: ignore[attr-defined]
        if "lock_body_inside" in names and any("with self.lock" in line for line in after):
            return frozenset({"deadlock"})
        if "repetition_never_counted" in names and any("self.seen[key] -= 1" in line for line in after):
            return frozenset({"raised"})
        alone = [m for m in self.mutations if m.alone]
        shown = alone or list(self.mutations)
        return frozenset().union(*(m.faults for m in shown))

    def source(self) -> str:
        def slot(name: str, default: object) -> object:
            for m in self.mutations:
                if name in dict(m.slots):
                    return m.slot(name, default)
            return default

        checks: dict[str, list[str]] = {**CHECK}
        for m in self.mutations:
            checks.update(m.slot("checks", {}))  # type: ignore[arg-type]
        order = slot("order", ORDER)
        decide = [line for name in order for line in checks[name]]  # type: ignore[union-attr]
        reserve = list(slot("reserve", RESERVE))  # type: ignore[call-overload]
        after = list(slot("after", AFTER))  # type: ignore[call-overload]
        lock = slot("lock", "one")
        locked = ["with self.lock:", *("    " + line for line in decide + reserve)]
        if lock == "none":
            locked = decide + reserve
        elif lock == "check outside":
            locked = [*decide, "with self.lock:", *("    " + line for line in reserve)]
        elif lock == "reserve outside":
            locked = ["with self.lock:", *("    " + line for line in decide), *reserve]
        elif lock == "body inside":
            locked = ["with self.lock:", *("    " + line for line in decide + reserve + after)]
            after = []
        init = list(slot("init", []))  # type: ignore[call-overload]
        lines = ["class Guard(GuardBase):"]
        if init:
            lines += [
                "    def __init__(self, *args, **kwargs):",
                "        super().__init__(*args, **kwargs)",
                *("        " + line for line in init),
                "",
            ]
        body = [f"key = {slot('key', SIGNATURE)}", *locked, *after]
        lines += ["    def admit(self, call, body):", *("        " + line for line in body)]
        head = "import json\n\nimport labkit\nfrom labkit.teaching.capstone import GuardBase\n\n"
        head += 'GRANTED = frozenset({"ticket.read", "review.finish"})\n\n\n'
        return head + "\n".join(lines) + "\n"

    def load(self, folder: Path) -> type:
        name = "mutant_" + "_".join(m.name for m in self.mutations) or "mutant_right"
        path = folder / f"{name}.py"
        path.write_text(self.source())
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        cls = module.Guard
        cls.__name__ = cls.__qualname__ = "_".join(m.name for m in self.mutations) or "Right"
        return cls


def combine(a: Mutation, b: Mutation) -> Guard | None:
    """The guard with both mistakes, or ``None`` when they change the same slot (one would undo the other)."""
    if {n for n, _ in a.slots} & {n for n, _ in b.slots} - {"checks"}:
        return None
    if set(dict(a.slots).get("checks", {})) & set(dict(b.slots).get("checks", {})):  # type: ignore[arg-type]
        return None
    return Guard((a, b))


PAIRS = [g for a, b in itertools.combinations(SINGLES, 2) if a.kind != b.kind and (g := combine(a, b)) is not None]


def indent(text: str) -> str:
    return textwrap.indent(text, "    ")
