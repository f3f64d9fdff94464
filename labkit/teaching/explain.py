"""Why a run ended, computed from the run itself: which rule decided, and which others would also have refused.

One engine behind every hint the workbook prints (:func:`labkit.check`, the
prediction widget, the capstone's :func:`~labkit.teaching.capstone.check_bingo`):
a hint that names a cause says what :func:`explain` measured, never a text
picked from the status alone.

How it measures. The run's own events and transcript say which rule decided
the stop, the attempt it refused and the counter it read. Then the same
script runs again (a *counterfactual* run) with that one rule loosened: the
refused capability granted, or the budget it read raised by
:data:`ROOM` attempts. The first refusal of that run, if any, is a rule that
would *also* have refused: the same attempt (same model call, same call id:
the guard asks its rules in a fixed order, so it came second), or a later one.
That rule is loosened in turn, and so on until the run ends by itself, a
loosened budget runs out of room, or the script does.

The deadline is never loosened (a script that hangs would hang the check), and
a counterfactual run is watched for at most :data:`WATCH_S` seconds. So the
deadline is said to refuse only when it did, or when a counterfactual run with
the run's own deadline (at most :data:`WATCH_S`) measured it.

A counterfactual run needs what the run was made of (its scenario and script):
:func:`labkit.run` and :meth:`labkit.Setup.arun` remember it for as long as the
outcome lives. For any other outcome (built by hand, a live model, a foreign runtime)
only the deciding rule is named.

Counterfactual runs run the scenario's tool bodies again, each on a fresh host
state: a body with an effect outside that state (a file, a global list) has
it again.

Core-light: the standard library and labkit's core only (no pandas, matplotlib
or ipywidgets).
"""

from __future__ import annotations

import dataclasses
import json
import threading
import weakref
from collections import Counter
from dataclasses import dataclass

from ..core.events import ControlEvent, StopReason
from ..core.limits import Limits
from ..loops.agents import result_kind
from ..loops.outcome import RunOutcome, RunStatus
from ..loops.review import ReviewTask
from ..loops.runner import Origin, Setup, origin_of, prepare, run
from ..loops.scenarios import Scenario
from ..transports.chat import PROVIDER_CANCELLED, Role, ToolCall
from . import _inputs
from .i18n import N_, _, cited, decimal, ngettext

__all__ = [
    "GUARD_ORDER",
    "ROOM",
    "RULE_NAMES",
    "WATCH_S",
    "Explanation",
    "Refusal",
    "count_feedback",
    "describe_call",
    "explain",
    "how_to",
    "square_hint",
    "status_feedback",
]

ROOM = 64
"""How many attempts a loosened budget gets beyond what the run had used (a counterfactual run)."""

WATCH_S = 0.5
"""The longest a counterfactual run is watched, in seconds (its deadline is the run's own, at most this)."""

_MAX_STEPS = 6  # loosen at most this many rules in a row (there are five, one permission per tool)

RULE_NAMES: dict[str, str] = {
    StopReason.PERMISSION_DENIED.value: N_("the permission rule"),
    StopReason.TOOL_BUDGET.value: N_("the tool budget"),
    StopReason.REPEATED_CALL.value: N_("the repetition rule"),
    StopReason.MODEL_BUDGET.value: N_("the model-call budget"),
    StopReason.DEADLINE_EXCEEDED.value: N_("the deadline"),
}
"""How a hint names each rule that can stop a run, by the status it gives (in English; a hint shows
them in the notebook's language). A hint uses these words only for a rule that refused, or would
have refused, in that run."""

GUARD_ORDER = (StopReason.PERMISSION_DENIED.value, StopReason.TOOL_BUDGET.value, StopReason.REPEATED_CALL.value)
"""The order the guard asks its rules on every tool call (chapter 4)."""

_CHAPTER = {
    StopReason.PERMISSION_DENIED.value: 4,
    StopReason.TOOL_BUDGET.value: 4,
    StopReason.REPEATED_CALL.value: 5,
    StopReason.MODEL_BUDGET.value: 6,
    StopReason.DEADLINE_EXCEEDED.value: 6,
}
"""The chapter that teaches each rule (tests/test_chapter_citations.py reads it from the chapters)."""

_RULES = frozenset(RULE_NAMES)

_HOST_RUNTIMES = frozenset({"function", "workflow"})
"""The runtimes of chapter 2 whose next step the host's code chooses (:mod:`labkit.teaching.runtimes`)."""

_CONDITIONS = (N_("finish_review succeeded"),)
"""The host conditions a hint may name, for the catalogue (``labkit.loops.review.ReviewTask.condition``
before its remark in brackets); another condition is shown as its scenario words it."""


def _names(names: list[str]) -> str:
    """``"a"``, ``"a and b"``, ``"a, b and c"`` in the notebook's language."""
    if len(names) < 2:
        return "".join(names)
    return _("{first} and {last}").format(first=", ".join(names[:-1]), last=names[-1])


@dataclass(frozen=True)
class Refusal:
    """One refusal by one rule: in the run, or in a counterfactual run of it.

    Attributes:
        rule: the status the rule gives (``"ToolBudget"``, ...; see :data:`RULE_NAMES`).
        attempt: what it refused, in words: ``"read_ticket(input=42)"``, ``"model call 7"``;
            for the deadline, what was still waiting (``"model call 1"``, ``"the body of read_ticket"``).
        read: the counter the rule read (the stop event's count): attempts admitted
            (tool budget), the signature's attempts (repetition), model calls made (model-call budget).
        limit: the limit it read the counter against (seconds for the deadline; ``None`` for permission).
        capability: for the permission rule, the capability not granted; else ``None``.
        where: ``(model calls made, call id)`` when it refused; two refusals with the same
            ``where`` refused the same attempt.
        same_attempt: for an "also" refusal, it refused the very attempt the deciding rule refused.
    """

    rule: str
    attempt: str
    read: int
    limit: float | None
    capability: str | None
    where: tuple[int, str | None]
    same_attempt: bool = False

    @property
    def name(self) -> str:
        """The rule's name in a hint, e.g. ``"the tool budget"`` (in the notebook's language)."""
        return _(RULE_NAMES[self.rule])

    @property
    def reason(self) -> str:
        """The numbers behind the refusal, e.g. ``"4 of 4 attempts already admitted"``."""
        limit = _number(self.limit)
        if self.rule == StopReason.PERMISSION_DENIED:
            return _("needs {capability}, not granted").format(capability=self.capability or _("a capability"))
        if self.rule == StopReason.TOOL_BUDGET:
            return _("{read} of {limit} attempts already admitted").format(read=self.read, limit=limit)
        if self.rule == StopReason.REPEATED_CALL and self.limit == 0:
            return _("repetitions=0 admits no attempt of any signature")
        if self.rule == StopReason.REPEATED_CALL:
            return _("same signature, already admitted {read} of {limit}").format(read=self.read, limit=limit)
        if self.rule == StopReason.MODEL_BUDGET:
            return _("{read} of {limit} model calls already made").format(read=self.read, limit=limit)
        if self.limit == 0:  # the deadline had passed as the run began: nothing waited
            return _("deadline_s=0 had passed before the run made its first call")
        return _("{limit} s passed while {attempt} was waiting").format(limit=limit, attempt=self.attempt)

    @property
    def reason_then(self) -> str:
        """:attr:`reason` as it would have been in a run that did not happen (an "also ... later" refusal):
        ``"once 4 of 4 attempts had been admitted"``, never "already admitted", which reads as a fact."""
        limit = _number(self.limit)
        if self.rule == StopReason.PERMISSION_DENIED:
            return _("it needs {capability}, not granted").format(capability=self.capability or _("a capability"))
        if self.rule == StopReason.TOOL_BUDGET:
            return _("once {read} of {limit} attempts had been admitted").format(read=self.read, limit=limit)
        if self.rule == StopReason.REPEATED_CALL and self.limit == 0:
            return _("as repetitions=0 admits no attempt of any signature")
        if self.rule == StopReason.REPEATED_CALL:
            return _("once that signature had been admitted {read} of {limit} times").format(
                read=self.read, limit=limit
            )
        if self.rule == StopReason.MODEL_BUDGET:
            return _("once {read} of {limit} model calls had been made").format(read=self.read, limit=limit)
        if self.limit == 0:
            return _("as deadline_s=0 passes before the run's first call")
        return _("after {limit} s, while {attempt} would still have been waiting").format(
            limit=limit, attempt=self.attempt
        )

    def sentence(self) -> str:
        """The refusal as the deciding cause, e.g. ``"the tool budget decided: read_ticket(input=5) came when ..."``."""
        if self.rule == StopReason.DEADLINE_EXCEEDED:
            return _("{rule} decided: {reason} (chapter 6)").format(rule=self.name, reason=self.reason)
        return cited(  # the chapter is known only now: cited as one taught, or one still ahead
            _("{rule} decided: it refused {attempt}, {reason} (chapter {chapter})").format(
                rule=self.name, attempt=self.attempt, reason=self.reason, chapter=_CHAPTER[self.rule]
            )
        )


@dataclass(frozen=True)
class Explanation:
    """Why one run ended, as measured by :func:`explain`.

    Attributes:
        outcome: the run.
        decided: the rule that stopped it, or ``None`` when no rule did (``Completed``,
            ``Incomplete``, ``ProviderUnavailable``).
        also: the other rules that would have refused had the ones before them not stopped
            the run, in the order they would have refused (each measured in a counterfactual run).
        ending: how the last counterfactual run ended, in words (e.g. ``"the script ran out
            at model call 3"``), or ``None`` when no counterfactual run was made.
        replayed: counterfactual runs were made (the run's origin was known and scripted).
        condition: the host condition in words, when known.
        ungranted: the tools the model asked for whose capability the run did not grant, in the
            order first asked (whether or not a call of them reached the guard); ``None`` when the
            run's origin, and so its grants, is not known.
        runtime: the chapter 2 runtime that made the run (``"function"``, ``"workflow"``,
            ``"simple"``, ``"harness"``: :func:`labkit.teaching.runtimes.runtime_of`), or ``None``.
            A plain function or a workflow has no loop: its hints speak of the host's code.
    """

    outcome: RunOutcome
    decided: Refusal | None
    also: tuple[Refusal, ...] = ()
    ending: str | None = None
    replayed: bool = False
    condition: str | None = None
    ungranted: tuple[str, ...] | None = None
    runtime: str | None = None

    @property
    def host_code(self) -> bool:
        """The host's code chose every step (a plain function or a workflow): no loop ran."""
        return self.runtime in _HOST_RUNTIMES

    @property
    def rules(self) -> frozenset[str]:
        """Every rule that refused or would have refused (statuses such as ``"ToolBudget"``)."""
        return frozenset(r.rule for r in (self.decided, *self.also) if r is not None)

    def refusal(self, rule: str) -> Refusal | None:
        """The first refusal by ``rule`` (the deciding one or an "also"), or ``None``."""
        return next((r for r in (self.decided, *self.also) if r is not None and r.rule == rule), None)

    def also_sentence(self, refusal: Refusal) -> str:
        """One "also" refusal in words, with the guard's order when it refused the same attempt."""
        decided = self.decided
        assert decided is not None
        if refusal.same_attempt:
            return _(
                "{rule} would also have refused that call ({reason}), but the guard asks {first} first (chapter 4)"
            ).format(rule=refusal.name, reason=refusal.reason, first=decided.name)
        # every refusal before this one was lifted in the counterfactual run that found it: name them all
        lifted = _names(list(dict.fromkeys(r.name for r in (decided, *self.also[: self.also.index(refusal)]))))
        if refusal.rule == StopReason.DEADLINE_EXCEEDED:
            line = _("without {first}, {rule} would have ended the run ({reason})")
            return line.format(first=lifted, rule=refusal.name, reason=refusal.reason_then)
        line = _("without {first}, {rule} would have refused {attempt} later ({reason})")
        return line.format(first=lifted, rule=refusal.name, attempt=refusal.attempt, reason=refusal.reason_then)

    def cause(self, said: str | None = None) -> str:
        """The cause in one clause: the deciding rule, or how the run ended when no rule refused.

        ``said`` is the learner's guess, when there is one: "no rule refused anything" opens the clause
        only when the guess was a stop by a rule (or no guess is known), since it answers that guess.
        """
        if self.decided is not None:
            return self.decided.sentence()
        status, outcome = self.outcome.status, self.outcome
        no_rule = _("no rule refused anything: ") if said is None or said in _RULES else ""
        if status is RunStatus.PROVIDER_UNAVAILABLE:
            made = outcome.count("ModelCall")
            if (outcome.hint or "").startswith(PROVIDER_CANCELLED):  # the provider gave up, nobody cancelled the run
                failed = _("model call {n} was cancelled by the provider itself while nobody cancelled the run")
            else:
                failed = _("model call {n} could not reach the model endpoint")
            return _("{no_rule}{failed}, a failure the host reports as ProviderUnavailable (chapter 7)").format(
                no_rule=no_rule, failed=failed.format(n=made)
            )
        condition = (self.condition or "").split(" (")[0]  # the seed's condition carries a remark in brackets
        condition = _(condition) if condition else condition  # a scenario's condition, in the notebook's language
        if self.host_code:  # no loop ran: the host's code returned, and its text is its own
            if status is RunStatus.COMPLETED:
                return _(
                    "{no_rule}the host's code returned and the host condition holds: {condition} (chapter 3)"
                ).format(no_rule=no_rule, condition=condition or _(_CONDITIONS[0]))
            if not outcome.text:  # nothing to distrust: say so, not that a text "proves nothing"
                return _(
                    "{no_rule}the host's code returned no text, and the host condition ({condition})"
                    " is false (chapter 3)"
                ).format(no_rule=no_rule, condition=condition or _(_CONDITIONS[0]))
            return _(
                "{no_rule}the host's code returned while the host condition ({condition}) is false;"
                " the text it returned proves nothing (chapter 3)"
            ).format(no_rule=no_rule, condition=condition or _(_CONDITIONS[0]))
        if status is RunStatus.COMPLETED:
            if condition:
                return _(
                    "{no_rule}the run ended by itself and the host condition holds: {condition} (chapter 3)"
                ).format(no_rule=no_rule, condition=condition)
            return _("{no_rule}the run ended by itself and the host condition holds (chapter 3)").format(
                no_rule=no_rule
            )
        if not outcome.text:
            if condition:
                return _(
                    "{no_rule}the run ended by itself with no final text, and the host condition ({condition})"
                    " is false (chapter 3)"
                ).format(no_rule=no_rule, condition=condition)
            return _(
                "{no_rule}the run ended by itself with no final text, and the host condition is false (chapter 3)"
            ).format(no_rule=no_rule)
        if condition:
            return _(
                "{no_rule}the run ended by itself while the host condition ({condition}) is false;"
                " its final text proves nothing (chapter 3)"
            ).format(no_rule=no_rule, condition=condition)
        return _(
            "{no_rule}the run ended by itself while the host condition is false;"
            " its final text proves nothing (chapter 3)"
        ).format(no_rule=no_rule)

    def lines(self, *, also: int = 2, must: str | None = None) -> list[str]:
        """The cause, then up to ``also`` refusals of the very attempt that was refused (the guard's
        order decided between them), and ``must``'s rule when it would have refused later (the
        learner guessed it: when would it have spoken?). Other later refusals are left out: a rule
        the learner did not name, in a run that did not happen, only hides the cause."""
        lines = [self.cause(must)]
        shown = [r for r in self.also if r.same_attempt][:also]
        wanted = self.refusal(must) if must in _RULES else None
        if wanted is not None and wanted is not self.decided and wanted not in shown:
            shown.append(wanted)
        lines.extend(self.also_sentence(r) for r in shown)
        return lines


# -- reading one run ------------------------------------------------------------------------------


def _number(value: float | None) -> str:
    return "?" if value is None else decimal(value)


def _stop_event(outcome: RunOutcome) -> tuple[int, ControlEvent] | None:
    for index, event in enumerate(outcome.events):
        if event.kind in StopReason._value2member_map_:
            return index, event
    return None


def describe_call(call: ToolCall) -> str:
    """A tool call as a learner reads it: ``read_ticket(input=42)`` (raw text when not a JSON object)."""
    try:
        arguments = json.loads(call.arguments) if isinstance(call.arguments, str) else call.arguments
    except (TypeError, ValueError):
        arguments = None
    if not isinstance(arguments, dict):
        return _("{tool} with arguments {arguments}").format(tool=call.name, arguments=call.arguments)
    text = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
    return f"{call.name}({text})"


def _refused_call(outcome: RunOutcome, reason: str) -> tuple[ToolCall | None, int]:
    """The call the stop refused (the first ``refused: <reason>`` result) and the model call that asked for it."""
    for request in outcome.tool_requests:  # each result matched within its own reply (ids may come again)
        if (request.result or "").startswith(f"refused: {reason}"):
            return request.call, request.reply
    return None, outcome.count("ModelCall")


def _waiting(outcome: RunOutcome, index: int) -> str:
    """What was still running when the deadline passed: the last event before the stop says."""
    before = outcome.events[index - 1] if index > 0 else None
    if before is not None and before.kind == "ToolCall":
        return _("the body of {tool}").format(tool=before.name)
    if before is not None and before.kind == "ModelCall":
        return _("model call {n}").format(n=before.count)
    return _("the run")


def _refusal(outcome: RunOutcome, scenario: Scenario | None) -> Refusal | None:
    """The rule that stopped ``outcome`` with its numbers; ``None`` if no rule did."""
    found = _stop_event(outcome)
    if found is None or found[1].kind not in _RULES:
        return None
    index, stop = found
    rule, limits = stop.kind.value, outcome.limits
    if rule == StopReason.MODEL_BUDGET:
        return Refusal(
            rule,
            _("model call {n}").format(n=stop.count + 1),
            stop.count,
            limits.model_calls,
            None,
            (stop.count + 1, None),
        )
    if rule == StopReason.DEADLINE_EXCEEDED:
        return Refusal(
            rule, _waiting(outcome, index), stop.count, limits.deadline_s, None, (outcome.count("ModelCall"), None)
        )
    call, reply = _refused_call(outcome, rule)
    attempt = describe_call(call) if call is not None else stop.name
    where = (reply, call.id if call is not None else None)
    if rule == StopReason.PERMISSION_DENIED:
        capability = None
        if scenario is not None:
            capability = next((t.capability for t in scenario.tools if t.name == stop.name), None)
        return Refusal(rule, attempt, stop.count, None, capability, where)
    limit = limits.tool_calls if rule == StopReason.TOOL_BUDGET else limits.repetitions
    return Refusal(rule, attempt, stop.count, limit, None, where)


# -- counterfactual runs --------------------------------------------------------------------------


def _replay_agent(origin: Origin) -> str | None:
    """The loop a counterfactual run of ``origin`` runs in: its own (``"simple"``, ``"harness"``), or, for a
    framework's loop, labkit's harness, while no divergence is declared: every framework's loop ends every
    script as labkit's own loops do (``tests/test_parity_generated.py``, ``labkit.adapters.divergences``),
    so a hint on a framework's run says what the same measurement says on labkit's. ``None``: not replayable."""
    if origin.agent is not None:
        return origin.agent
    from ..adapters.divergences import DIVERGENCES  # data only (no framework is imported)

    return "harness" if not DIVERGENCES else None


def _replayable(origin: Origin | None) -> bool:
    return origin is not None and origin.script is not None and _replay_agent(origin) is not None


def _rerun(origin: Origin, limits: Limits, capabilities: frozenset[str]) -> RunOutcome | BaseException:
    variant = dataclasses.replace(origin.scenario, script=origin.script, capabilities=capabilities, limits=limits)
    try:
        setup = prepare(
            variant,
            agent=_replay_agent(origin),  # type: ignore[arg-type]
            stream=origin.stream,
            concurrent_tool_calls=origin.concurrent_tool_calls,
        )
        return run(setup)
    except Exception as exc:  # the script ran out, or raised: the counterfactual run ends there
        return exc


def _loosen(refusal: Refusal, limits: Limits, capabilities: frozenset[str]) -> tuple[Limits, frozenset[str]] | None:
    rule = refusal.rule
    if rule == StopReason.PERMISSION_DENIED:
        if refusal.capability is None or refusal.capability in capabilities:
            return None
        return limits, capabilities | {refusal.capability}
    if rule == StopReason.TOOL_BUDGET:
        return limits.with_(tool_calls=max(limits.tool_calls, refusal.read) + ROOM), capabilities
    if rule == StopReason.REPEATED_CALL:
        return limits.with_(repetitions=max(limits.repetitions, refusal.read) + ROOM), capabilities
    if rule == StopReason.MODEL_BUDGET:
        return limits.with_(model_calls=max(limits.model_calls, refusal.read) + ROOM), capabilities
    return None  # the deadline is never loosened: a script that hangs would hang the check


def _ended(result: RunOutcome | BaseException) -> str:
    if isinstance(result, BaseException):
        name = type(result).__name__
        if name == "ScriptExhausted":
            return _("the script would then have run out")
        return _("the run would then have raised {error}").format(error=name)
    return _("the run would then have ended {status}").format(status=result.status.value)


def _chain(origin: Origin, outcome: RunOutcome, decided: Refusal) -> tuple[tuple[Refusal, ...], str | None]:
    limits, capabilities = outcome.limits, frozenset(origin.scenario.capabilities)
    watch = min(outcome.limits.deadline_s, WATCH_S)
    loosened: set[str] = set()
    also: list[Refusal] = []
    current = decided
    for _step in range(_MAX_STEPS):
        step = _loosen(current, limits, capabilities)
        if step is None:
            return tuple(also), None
        limits, capabilities = step
        if current.rule != StopReason.PERMISSION_DENIED:
            loosened.add(current.rule)
        result = _rerun(origin, limits.with_(deadline_s=watch), capabilities)
        if isinstance(result, BaseException):
            return tuple(also), _ended(result)
        found = _refusal(result, origin.scenario)
        if found is None:
            return tuple(also), _ended(result)
        if found.rule == StopReason.DEADLINE_EXCEEDED and watch < outcome.limits.deadline_s:
            return tuple(also), _("it was still running after {watch} s (not watched longer)").format(
                watch=decimal(watch)
            )
        if found.rule in loosened:
            return tuple(also), _("nothing else refused in {room} more attempts").format(room=ROOM)
        found = dataclasses.replace(found, same_attempt=found.rule in GUARD_ORDER and found.where == decided.where)
        if found.rule == StopReason.DEADLINE_EXCEEDED:  # the run's own deadline, measured: nothing after it
            return (*also, found), None
        also.append(found)
        current = found
    return tuple(also), None


def _ungranted(outcome: RunOutcome, scenario: Scenario) -> tuple[str, ...]:
    """The tools the model asked for whose capability ``scenario`` (the run's grants) leaves out."""
    needs = {tool.name: tool.capability for tool in scenario.tools}
    asked = (r.call.name for r in outcome.tool_requests)
    return tuple(dict.fromkeys(n for n in asked if n in needs and needs[n] not in scenario.capabilities))


_cache: dict[int, tuple[weakref.ref, Explanation]] = {}
_cache_lock = threading.Lock()
_CACHE_KEPT = 256


def explain(outcome: RunOutcome | Setup) -> Explanation:
    """Explain why ``outcome`` ended: the deciding rule, and which others would also have refused.

    Args:
        outcome: a run's :class:`~labkit.RunOutcome` (its origin is known when it came from
            :func:`labkit.run` or a :class:`~labkit.Setup`), or a prepared
            :class:`~labkit.Setup` that has not run yet (it is run here).

    Returns:
        An :class:`Explanation`. Computed once per outcome (later calls return the same one,
        for the last 256 outcomes explained).
        For a rule stop with a known scripted origin, up to five counterfactual runs are made,
        each watched at most :data:`WATCH_S` seconds.

    Raises:
        InputError: ``outcome`` is neither a RunOutcome nor a Setup.
        ScopeStateError: a Setup that already served its run.
    """
    if isinstance(outcome, Setup):
        outcome = run(outcome)
    outcome = _inputs.outcome(outcome, "explain")
    with _cache_lock:
        entry = _cache.get(id(outcome))
    if entry is not None and entry[0]() is outcome:
        return entry[1]
    origin = origin_of(outcome)
    scenario = origin.scenario if origin is not None else None
    decided = _refusal(outcome, scenario)
    condition = scenario.condition if scenario is not None else None
    from .runtimes import runtime_of  # light: the runtimes of chapter 2 and what made each run

    runtime = runtime_of(outcome)
    if runtime is not None and condition is None:
        condition = ReviewTask.condition  # every runtime of chapter 2 runs the review
    ungranted = _ungranted(outcome, scenario) if scenario is not None else None
    also: tuple[Refusal, ...] = ()
    ending = None
    replayed = False
    if decided is not None and _replayable(origin):
        also, ending = _chain(origin, outcome, decided)  # type: ignore[arg-type]
        replayed = True
    explanation = Explanation(outcome, decided, also, ending, replayed, condition, ungranted, runtime)
    with _cache_lock:
        _cache[id(outcome)] = (weakref.ref(outcome), explanation)
        while len(_cache) > _CACHE_KEPT:
            del _cache[next(iter(_cache))]
    return explanation


# -- hints ----------------------------------------------------------------------------------------


def _why_not(explanation: Explanation, said: str) -> str | None:
    """Why the guessed status did not happen, from the run's counters (never naming a rule that did not refuse)."""
    outcome = explanation.outcome
    usage, limits = outcome.usage, outcome.limits
    actual = outcome.status
    if said in explanation.rules:
        return None  # its refusal is already said
    if said == StopReason.REPEATED_CALL:
        return _why_not_repeated(limits.repetitions, usage.repetitions)
    if said == StopReason.TOOL_BUDGET:
        if usage.tool_calls < limits.tool_calls:
            return ngettext(
                "only {used} of {limit} tool attempts was used (chapter 4)",
                "only {used} of {limit} tool attempts were used (chapter 4)",
                usage.tool_calls,
            ).format(used=usage.tool_calls, limit=limits.tool_calls)
        return ngettext(
            "{used} of {limit} tool attempts was used and no attempt came after it:"
            " a limit refuses the next attempt, never the last one admitted (chapter 4)",
            "{used} of {limit} tool attempts were used and no attempt came after them:"
            " a limit refuses the next attempt, never the last one admitted (chapter 4)",
            usage.tool_calls,
        ).format(used=usage.tool_calls, limit=limits.tool_calls)
    if said == StopReason.MODEL_BUDGET:
        if explanation.runtime == "function":
            return _("a plain function asks no model: 0 of {limit} model calls were made (chapter 2)").format(
                limit=limits.model_calls
            )
        if explanation.runtime == "workflow" and usage.model_calls < limits.model_calls:
            return ngettext(
                "only {made} of {limit} model calls was made: one for each question the host's code asked (chapter 2)",
                "only {made} of {limit} model calls were made: one for each question the host's code asked (chapter 2)",
                usage.model_calls,
            ).format(made=usage.model_calls, limit=limits.model_calls)
        if usage.model_calls < limits.model_calls:
            return ngettext(
                "only {made} of {limit} model calls was made; every follow-up"
                " after tool results counts as one (chapter 6)",
                "only {made} of {limit} model calls were made; every follow-up"
                " after tool results counts as one (chapter 6)",
                usage.model_calls,
            ).format(made=usage.model_calls, limit=limits.model_calls)
        return ngettext(
            "{made} of {limit} model calls was made and no call came after it:"
            " a limit refuses the next call, never the last one made (chapter 6)",
            "{made} of {limit} model calls were made and no call came after them:"
            " a limit refuses the next call, never the last one made (chapter 6)",
            usage.model_calls,
        ).format(made=usage.model_calls, limit=limits.model_calls)
    if said == StopReason.PERMISSION_DENIED:
        return _why_not_permission(explanation.ungranted, _unknown_tools(outcome))
    if said == StopReason.DEADLINE_EXCEEDED:
        elapsed = decimal(usage.elapsed_s, ".2f")
        if float(f"{usage.elapsed_s:.2f}") >= limits.deadline_s:  # rounded up to it: "0.50 s of the 0.5 s" would clash
            return _("the run ended just before its {deadline} s had passed (chapter 6)").format(
                deadline=decimal(limits.deadline_s)
            )
        return _("the run took {elapsed} s of the {deadline} s it had (chapter 6)").format(
            elapsed=elapsed, deadline=decimal(limits.deadline_s)
        )
    if said == RunStatus.PROVIDER_UNAVAILABLE:
        made = outcome.count("ModelCall")
        if explanation.runtime == "function":
            return _("a plain function calls no model: no model call could fail to connect (chapter 2)")
        if sum(m.role is Role.ASSISTANT for m in outcome.transcript) < made:  # the last one never answered
            return _(
                "no model call failed to connect: model call {n} was still waiting for its answer"
                " when the run stopped (chapter 7)"
            ).format(n=made)
        if actual == RunStatus.MODEL_BUDGET:  # the call a script might have failed was refused, never sent
            return _(
                "every model call made got an answer, and the one the model-call budget refused was never sent:"
                " it could not fail to connect (chapter 7)"
            )
        return _("every model call got an answer: none failed to connect (chapter 7)")
    if said == RunStatus.COMPLETED and actual.is_stop:
        return _("a run the host stopped is never Completed: its text is withheld (chapter 7)")
    if said == RunStatus.INCOMPLETE and actual.is_stop and explanation.host_code:
        return _("Incomplete is the host's code returning by itself; this one was stopped (chapter 7)")
    if said == RunStatus.INCOMPLETE and actual.is_stop:
        return _("Incomplete is a loop that ended by itself; this one was stopped (chapter 7)")
    return None


def _why_not_repeated(limit: int, most: int) -> str:
    """Why no call was refused as a repetition, from ``repetitions`` (``limit``) and the most attempts any one
    signature had admitted (``most``): each case says one thing, so no number reads against another."""
    if limit == 0:
        return _(
            "repetitions=0 refuses the first attempt of any signature, and no call was asked of that rule (chapter 5)"
        )
    if most == 0:
        return ngettext(
            "no tool attempt was admitted: a signature is refused only after {limit} admitted attempt (chapter 5)",
            "no tool attempt was admitted: a signature is refused only after {limit} admitted attempts (chapter 5)",
            limit,
        ).format(limit=limit)
    if most < limit:
        return ngettext(
            "no signature reached the limit of {limit} admitted attempt: the most admitted for one was {most}"
            " (chapter 5)",
            "no signature reached the limit of {limit} admitted attempts: the most admitted for one was {most}"
            " (chapter 5)",
            limit,
        ).format(limit=limit, most=most)
    return ngettext(
        "each signature was admitted at most {limit} time, the limit, and no call asked for one of them again"
        " (chapter 5)",
        "each signature was admitted at most {limit} times, the limit, and no call asked for one of them again"
        " (chapter 5)",
        limit,
    ).format(limit=limit)


def _unknown_tools(outcome: RunOutcome) -> tuple[str, ...]:
    """The names the model asked for that are no tool of the run (each answered by the loop, no guard asked)."""
    return tuple(dict.fromkeys(r.call.name for r in outcome.tool_requests if result_kind(r.result) == "unknown tool"))


def _why_not_permission(ungranted: tuple[str, ...] | None, unknown: tuple[str, ...] = ()) -> str:
    """Why no call was refused for its capability: every tool asked for was granted, or none of the
    calls for one that was not reached the guard (its arguments did not bind, or it came after the stop);
    a name that is no tool of the run has no capability and no guard: the loop answers it."""
    if unknown:
        line = ngettext(
            "{names} is no tool of this host: no guard and no capability exist for it, the loop answers the"
            " call with an error and nothing is refused (chapter 7)",
            "{names} are no tools of this host: no guard and no capability exist for it, the loop answers the"
            " call with an error and nothing is refused (chapter 7)",
            len(unknown),
        ).format(names=", ".join(unknown))
        return line if not ungranted else f"{line}; {_why_not_permission(ungranted)}"
    if ungranted is None:  # the grants are not known: say only what the run's events show
        return _("no call the guard saw needed a capability that was left out (chapter 4)")
    if not ungranted:
        return _(
            "every tool asked for had its capability granted: is a tool the model can see one it may run? (chapter 4)"
        )
    return ngettext(
        "{names} was asked for without its capability granted, but no such call reached the guard (chapter 4)",
        "{names} were asked for without their capability granted, but no such call reached the guard (chapter 4)",
        len(ungranted),
    ).format(names=", ".join(ungranted))


def status_feedback(explanation: Explanation, said: str) -> list[str]:
    """The lines after a wrong status guess ``said``: the measured cause, the other refusals, why not ``said``.

    Returns:
        One to four short lines, without the ``think:`` prefix; ``[]`` when ``said`` is right.
    """
    if said == explanation.outcome.status.value:
        return []
    first, *rest = explanation.lines(must=said)
    lines = [_("you said {said}, but {cause}").format(said=said, cause=first), *rest]
    why = _why_not(explanation, said)
    if why is not None:
        lines.append(why)
    return lines


def count_feedback(explanation: Explanation, said: int, *, name_rule: bool = True) -> list[str]:
    """The line after a wrong ``ToolCall`` count ``said`` (``[]`` when right).

    Args:
        explanation: the run, explained.
        said: the guessed count.
        name_rule: the line may name the rule that refused; ``False`` while the status is not
            guessed yet (naming the rule would give the status away).
    """
    admitted = explanation.outcome.count("ToolCall")
    if said == admitted:
        return []
    decided = explanation.decided
    unseen = sum(result_kind(r.result) in _NO_GUARD for r in explanation.outcome.tool_requests)
    unseen += _after_halt(explanation.outcome)  # a call after the stop is one more the learner may have counted
    if said == admitted + 1 and decided is not None and decided.rule in GUARD_ORDER and not unseen:
        who = _("the attempt {rule} refused").format(rule=decided.name) if name_rule else _("the refused attempt")
        return [
            _("you counted {counted}: {who} records none (it was refused before its body)").format(
                counted=_events(said), who=who
            )
        ]
    names = [e.name for e in explanation.outcome.events if e.kind == "ToolCall"]
    listed = f" ({', '.join(names)})" if 0 < len(names) <= 6 else ""
    return [
        ngettext(
            "you counted {counted}, there was {admitted}{listed}: one each time the guard admitted an attempt{notes}",
            "you counted {counted}, there were {admitted}{listed}: one each time the guard admitted an attempt{notes}",
            admitted,
        ).format(counted=_events(said), admitted=admitted, listed=listed, notes=_count_notes(explanation.outcome))
    ]


_NO_GUARD = frozenset({"unknown tool", "unbound", "cut", "repeated ids"})
"""Results of calls that reached no guard (:func:`~labkit.loops.agents.result_kind`): another reason a
count may be one too many, so the "one refused attempt" reading is not the only one."""


def _events(count: int) -> str:
    """``"1 ToolCall event"``, ``"3 ToolCall events"``."""
    return ngettext("{n} ToolCall event", "{n} ToolCall events", count).format(n=count)


_AFTER_HALT = "the run was already stopped"
"""The result a call gets when its turn comes after the run stopped (the scope's ``RunHalted``, chapter 5):
no rule judged it, and it records no event."""


def _after_halt(outcome: RunOutcome) -> int:
    """How many calls came after the run had stopped (each answered "refused: ...: the run was already stopped")."""
    return sum(_AFTER_HALT in (m.text or "") for m in outcome.transcript if m.role is Role.TOOL)


def _count_notes(outcome: RunOutcome) -> str:
    """What in *this* run a learner may have miscounted, each read from the call's result by the loop's own
    :func:`~labkit.loops.agents.result_kind`: admitted bodies that failed or answered NotFound (counted),
    calls that reached no guard (an unknown tool, arguments that did not bind, a reply not run) and
    refusals (not counted)."""
    results = [m.text or "" for m in outcome.transcript if m.role is Role.TOOL]
    kinds = Counter(result_kind(text) for text in results)
    notes = []
    failed = kinds["failed"]
    if failed:
        notes.append(
            ngettext(
                "{n} call failed in its body and still counted",
                "{n} calls failed in their bodies and still counted",
                failed,
            ).format(n=failed)
        )
    not_found = sum(result_kind(text) == "result" and text.startswith("NotFound") for text in results)
    if not_found:
        notes.append(
            ngettext(
                "{n} call answered NotFound, a result, and counted",
                "{n} calls answered NotFound, a result, and counted",
                not_found,
            ).format(n=not_found)
        )
    if kinds["unknown tool"]:
        unknown = kinds["unknown tool"]
        names = ", ".join(dict.fromkeys(call.name for call in outcome.unknown_tool_requests))
        notes.append(
            ngettext(
                "{n} call asked for {names}, a tool the host does not have, and recorded no event",
                "{n} calls asked for tools the host does not have, {names}, and recorded no event",
                unknown,
            ).format(n=unknown, names=names)
        )
    if kinds["unbound"]:
        unbound = kinds["unbound"]
        notes.append(
            ngettext(
                "{n} call had arguments that did not bind and recorded none",
                "{n} calls had arguments that did not bind and recorded none",
                unbound,
            ).format(n=unbound)
        )
    if kinds["cut"] or kinds["repeated ids"]:
        notes.append(_("a reply cut at the output-token cap, or whose call ids repeat, runs none of its calls"))
    after = _after_halt(outcome)
    if after:
        notes.append(
            ngettext(
                "{n} call came after the run had stopped: no rule judged it and it recorded none",
                "{n} calls came after the run had stopped: no rule judged them and they recorded none",
                after,
            ).format(n=after)
        )
    refusals = sum(e.kind.value in ("PermissionDenied", "ToolBudget", "RepeatedCall") for e in outcome.events)
    if kinds["refused"] > after or refusals:  # a runtime with no loop has no transcript: its refusals are events
        notes.append(_("a refused call records none"))
    return f" ({'; '.join(notes)})" if notes else ""


_HOW_TO = {
    RunStatus.COMPLETED: N_(
        "for Completed, read_ticket(42) and then finish_review(42) must succeed before the model answers with text"
    ),
    RunStatus.INCOMPLETE: N_(
        "for Incomplete, answer with text (a str or Say) while finish_review(42) has not succeeded"
    ),
    RunStatus.PERMISSION_DENIED: N_(
        "for PermissionDenied, call a tool whose capability the square leaves out of grant="
    ),
    RunStatus.REPEATED_CALL: N_(
        "for RepeatedCall, ask again for a call (same tool, same canonical arguments) already"
        " admitted `repetitions` times (chapter 5)"
    ),
    RunStatus.TOOL_BUDGET: N_(
        "for ToolBudget, get `tool_calls` attempts admitted, then ask for one more, each with"
        " its own signature (chapter 4)"
    ),
    RunStatus.MODEL_BUDGET: N_(
        "for ModelBudget, keep the model asking for tools until a call beyond `model_calls` is needed (chapter 6)"
    ),
    RunStatus.DEADLINE_EXCEEDED: N_(
        "for DeadlineExceeded, something must still be waiting when `deadline_s` passes, e.g. Hang() (chapter 6)"
    ),
    RunStatus.PROVIDER_UNAVAILABLE: N_(
        "for ProviderUnavailable, a model call must get no answer: a Fail step with a connection error,"
        " or with the provider cancelling its own request (chapter 9)"
    ),
}
"""What a bingo square needs for each status, said without naming a rule as a cause (in English;
:func:`how_to` says it in the notebook's language)."""


def how_to(wanted: RunStatus) -> str:
    """What a script needs to end with ``wanted``, in one clause (names no rule as a cause)."""
    return _(_HOW_TO[RunStatus(wanted)])


def square_hint(explanation: Explanation, wanted: RunStatus) -> str:
    """The bingo hint for a square that wanted ``wanted``: the measured cause, then what ``wanted`` needs.

    One line of ``;``-separated clauses, e.g. ``"the tool budget decided: it refused read_ticket(input=42),
    1 of 1 attempts already admitted (chapter 4); the repetition rule would also have refused that call
    (same signature, already admitted 1 of 1), but the guard asks the tool budget first (chapter 4);
    for RepeatedCall, ..."``.
    """
    return _("; ").join([*explanation.lines(also=1, must=RunStatus(wanted).value), how_to(wanted)])
