"""Oracles for the workbook's verdicts, independent of ``labkit.teaching.explain`` (issue 17, item 3).

Two kinds of oracle live here, both computed from what ran, never from the
engine that writes the hints:

* :func:`oracle` — which rules refused, or would have refused, in a run: a
  rule R "would have refused" when a run of the same script, with every
  *other* rule loosened (the other budgets raised by far more than the
  engine's room, every capability granted unless R is the permission rule),
  ends with R's status. Loosening the other rules changes nothing before
  their first refusal, so any rule the engine finds by loosening one rule
  after another refuses there too. The deadline counts only when that run
  (with the run's own small deadline) measured it.
* :class:`Facts` — what a generated run did, counted from its tools' own log
  (every body records what it was given and how it ended) and its transcript:
  which calls were admitted, which bodies failed or answered NotFound, which
  calls named no tool or did not bind, which were refused.

:func:`generated_runs` is the hypothesis strategy for the runs: scripts of
``Call``/``Say``/``Hang``/``Fail`` steps and batches (repeated and changed
arguments, unknown tools, arguments that do not bind, failing bodies), limits
from 0 up, capability sets, both agents, plain or streaming.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

import labkit
from labkit import Call, Fail, Hang, Limits, Reply, RunOutcome, RunStatus, Say, Tool
from labkit.loops.review import ReviewTask, _finish_review, _read_ticket
from labkit.loops.scenarios import ALL_CAPABILITIES, Scenario

BIG = 200  # far more than the engine's own room (labkit.teaching.explain.ROOM)
WATCHED_S = 1.0  # an oracle run's deadline at most; a longer one is not measured
HANG_DEADLINE_S = 0.03  # a generated script with a Hang gets this deadline (counterfactual runs wait for it)

RULES = ("PermissionDenied", "ToolBudget", "RepeatedCall", "ModelBudget", "DeadlineExceeded")
GUARD_RULES = ("PermissionDenied", "ToolBudget", "RepeatedCall")
STATUSES = tuple(s.value for s in RunStatus)

NAMED = {
    "PermissionDenied": (r"\bpermission\b", r"\bnot granted\b"),
    "ToolBudget": (r"\btool budget\b", r"\btool-call budget\b"),
    "RepeatedCall": (r"\brepetition\b",),
    "ModelBudget": (r"\bmodel-call budget\b", r"\bmodel budget\b"),
    "DeadlineExceeded": (r"\bdeadline\b",),
}
"""The words that name each rule in a hint (word-bounded: ``deadline_s`` and ``repetitions`` are limits' names)."""

RULE_WORDS = {
    "PermissionDenied": "the permission rule",
    "ToolBudget": "the tool budget",
    "RepeatedCall": "the repetition rule",
    "ModelBudget": "the model-call budget",
    "DeadlineExceeded": "the deadline",
}
"""A rule's name as a hint's subject (``"the tool budget decided"``), written out here, not imported."""


def named_rules(text: str) -> set[str]:
    """The rules ``text`` names, by the words of :data:`NAMED`."""
    lowered = text.lower()
    return {rule for rule, patterns in NAMED.items() if any(re.search(p, lowered) for p in patterns)}


def named_statuses(text: str) -> set[str]:
    """The status names (``"ToolBudget"``, ...) that appear in ``text`` as words."""
    return {s for s in STATUSES if re.search(rf"\b{s}\b", text)}


def _run(scenario: Scenario, agent: str, stream: bool = False, concurrent: bool = False) -> RunOutcome | Exception:
    try:
        return labkit.run(scenario, agent=agent, stream=stream, concurrent_tool_calls=concurrent)
    except Exception as exc:  # a script that runs out: that run ends without any rule
        return exc


def oracle_runs(
    scenario: Scenario, agent: str, outcome: RunOutcome, stream: bool = False, concurrent: bool = False
) -> dict[str, list[RunOutcome]]:
    """Each rule that refused in ``outcome`` or would have, with the runs that measured it.

    The deciding rule's first run is ``outcome`` itself; every other rule R maps to the run of the
    same script with every other rule loosened, which ended with R's status (its first refusal by R
    is the attempt R would have refused). The permission rule can refuse once per capability: its
    runs go on granting each capability it refused, until it refuses no more.
    """
    found: dict[str, list[RunOutcome]] = {}
    if outcome.status.value in RULES:
        found[outcome.status.value] = [outcome]
    limits = outcome.limits
    every = frozenset(ALL_CAPABILITIES | {t.capability for t in scenario.tools})
    measured_deadline = min(limits.deadline_s, WATCHED_S)
    loose = {
        "model_calls": limits.model_calls + BIG,
        "tool_calls": limits.tool_calls + BIG,
        "repetitions": limits.repetitions + BIG,
    }
    kept_field = {"ToolBudget": "tool_calls", "RepeatedCall": "repetitions", "ModelBudget": "model_calls"}
    for rule in ("ToolBudget", "RepeatedCall", "ModelBudget"):
        if rule in found:
            continue
        kept = kept_field[rule]
        chosen = Limits(**{**loose, kept: getattr(limits, kept), "deadline_s": measured_deadline})
        result = _run(dataclasses.replace(scenario, limits=chosen, capabilities=every), agent, stream, concurrent)
        if isinstance(result, RunOutcome) and result.status.value == rule:
            found[rule] = [result]
    grants = frozenset(scenario.capabilities)
    permission = found.get("PermissionDenied", [])
    for _ in range(len(every) + 1):
        if permission:
            refused = first_refused(permission[-1], "PermissionDenied")
            grants = grants | {CAPABILITY.get(refused[1].split("(")[0], "") if refused else ""}
        chosen = Limits(**loose, deadline_s=measured_deadline)
        result = _run(dataclasses.replace(scenario, limits=chosen, capabilities=grants), agent, stream, concurrent)
        if not (isinstance(result, RunOutcome) and result.status.value == "PermissionDenied"):
            break
        permission.append(result)
    if permission:
        found["PermissionDenied"] = permission
    if limits.deadline_s <= WATCHED_S and "DeadlineExceeded" not in found:
        chosen = Limits(**loose, deadline_s=limits.deadline_s)
        result = _run(dataclasses.replace(scenario, limits=chosen, capabilities=every), agent, stream, concurrent)
        if isinstance(result, RunOutcome) and result.status is RunStatus.DEADLINE_EXCEEDED:
            found["DeadlineExceeded"] = [result]
    return found


def oracle(
    scenario: Scenario, agent: str, outcome: RunOutcome, stream: bool = False, concurrent: bool = False
) -> set[str]:
    """The rules that refused in ``outcome`` or would have, each measured with every other rule loosened."""
    return set(oracle_runs(scenario, agent, outcome, stream, concurrent))


# -- the generated runs' tools: the review fixture's bodies, each logging what it did -----------------


class LoggedTask(ReviewTask):
    """The review's host state plus ``log``: one ``(tool, input, ending)`` per body run, in order.

    ``ending`` is ``"ok"``, ``"NotFound"`` (a result) or ``"raised"`` (the body failed).
    """

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, int, str]] = []


async def read_ticket(task: LoggedTask, input: int) -> str:
    """Read a support ticket by its id. Only ticket 42 is in scope."""
    text = await _read_ticket(task, input)
    task.log.append(("read_ticket", input, "NotFound" if text.startswith("NotFound") else "ok"))
    return text


async def finish_review(task: LoggedTask, input: int) -> str:
    """Mark the review of ticket 42 as finished. Requires ticket 42 to have been read."""
    try:
        text = await _finish_review(task, input)
    except Exception:
        task.log.append(("finish_review", input, "raised"))
        raise
    task.log.append(("finish_review", input, "ok"))
    return text


TOOLS = (Tool("read_ticket", "ticket.read", read_ticket), Tool("finish_review", "review.finish", finish_review))
TOOL_NAMES = frozenset(t.name for t in TOOLS)
CAPABILITY = {t.name: t.capability for t in TOOLS}

GOOD_ARGUMENTS = ({"input": 42}, {"input": 42}, {"input": 42.0}, {"input": 7}, {"input": 1})
BAD_ARGUMENTS = ('{"input": "x"}', "{}", '{"input": true}', "not json")
"""Arguments that never bind to ``input: int`` (a ``ToolArgumentsError`` before the guard)."""


# -- the strategy ------------------------------------------------------------------------------------

_NAME = st.sampled_from(["read_ticket", "read_ticket", "finish_review", "finish_review", "audit_log"])
_ARGUMENTS = st.one_of(st.sampled_from(GOOD_ARGUMENTS), st.sampled_from(GOOD_ARGUMENTS), st.sampled_from(BAD_ARGUMENTS))
CALL = st.builds(Call, _NAME, _ARGUMENTS, st.sampled_from([None, None, None, None, "same"]))
STEP = st.one_of(  # weighted by repetition (one_of picks a branch uniformly): mostly calls
    CALL,
    CALL,
    CALL,
    CALL,
    st.lists(CALL, min_size=2, max_size=3),
    st.lists(CALL, min_size=2, max_size=3),
    st.builds(Reply, st.sampled_from(["Reading it now.", ""]), st.lists(CALL, min_size=1, max_size=2)),
    st.sampled_from(["Review finished.", Say("done"), ""]),
    st.sampled_from([Hang(), Fail(ConnectionError("down")), Fail(asyncio.CancelledError("the provider gave up"))]),
)


@dataclass(frozen=True)
class _Cycle:
    """A step function replaying ``steps`` for ever: call n takes step (n - 1) mod len(steps)."""

    steps: tuple[Any, ...]

    def __call__(self, number: int, request: Any) -> Any:
        return self.steps[(number - 1) % len(self.steps)]


@dataclass(frozen=True)
class Plan:
    """One generated run: its scenario and how it is run. Prints as something a reader can paste."""

    steps: tuple[Any, ...]
    limits: Limits
    grant: frozenset[str]
    agent: str
    stream: bool = False
    concurrent: bool = False
    cycle: bool = False
    """The script as a step function that starts again after its last step (a model that never runs out)."""
    function: Any = None
    """A step function ``(call_number, request) -> step`` to run instead of ``steps`` (a seed scenario's)."""

    def step(self, number: int) -> Any:
        """The step model call ``number`` takes (from 1)."""
        if self.function is not None:
            return self.function(number, None)
        if self.cycle:
            return _Cycle(self.steps)(number, None)
        return self.steps[number - 1]

    def scenario(self) -> Scenario:
        return labkit.scenario(
            "generated",
            tools=TOOLS,
            script=self.function or (_Cycle(self.steps) if self.cycle else list(self.steps)),
            done=lambda task: task.completed,
            condition=ReviewTask.condition,
            state=LoggedTask,
            capabilities=self.grant,
            limits=self.limits,
        )


@st.composite
def plans(draw: Any, agent: str | None = None) -> Plan:
    """A generated :class:`Plan`: 1 to 8 steps, mostly ending with text; limits from 0 up, mostly the defaults."""
    steps = draw(st.lists(STEP, min_size=1, max_size=6))
    if draw(st.booleans()):  # now and then the well-behaved model's two calls somewhere in the script
        at = draw(st.integers(0, len(steps)))
        steps[at:at] = [Call("read_ticket", {"input": 42}), Call("finish_review", {"input": 42})]
    if draw(st.integers(0, 3)):  # mostly a script that ends with text (else it may run out)
        steps.append("Review finished.")
    hangs = any(isinstance(s, Hang) for s in steps)
    limits = Limits(
        model_calls=draw(st.sampled_from([6, 6, 6, 4, 3, 2, 1, 0])),
        tool_calls=draw(st.sampled_from([4, 4, 4, 3, 2, 1, 0])),
        repetitions=draw(st.sampled_from([1, 1, 1, 2, 0])),
        deadline_s=HANG_DEADLINE_S if hangs else Limits().deadline_s,
    )
    grant = draw(st.sampled_from([ALL_CAPABILITIES, ALL_CAPABILITIES, frozenset({"ticket.read"}), frozenset()]))
    chosen = agent or draw(st.sampled_from(["simple", "harness"]))
    concurrent = draw(st.sampled_from([False, False, False, True]))  # the calls of one reply at once (chapter 8)
    cycle = draw(st.sampled_from([False, False, False, True]))
    return Plan(tuple(steps), limits, grant, chosen, draw(st.booleans()), concurrent, cycle)


# -- what a run did, counted independently -------------------------------------------------------------


@dataclass
class Facts:
    """What one run did, from its tools' log and its transcript (never from labkit.teaching.explain).

    Attributes:
        admitted: ``(tool, input)`` of every admitted attempt, in order (the bodies' log).
        failed: how many admitted bodies raised.
        not_found: how many answered NotFound.
        unknown: how many requested calls named no tool (no event, no guard).
        unknown_names: the names those calls gave, in the order first asked.
        unbound: how many requested calls had arguments that did not bind (no guard).
        refused: how many calls were refused before their body (``refused:`` results).
        after_halt: how many of those came after the run had stopped (no rule judged them).
        ungranted_asked: a call reached the guard (it bound) for a tool whose capability is not granted.
        ungranted_requested: the tools the model asked for whose capability is not granted (whether or not
            a call of them bound, ran or came after the stop), in the order first asked.
        repeat_came: a call reached the guard whose signature was already admitted ``repetitions`` times.
        answered: every model call got a reply (none hung or failed).
        not_run_reply: a reply's call ids repeated, so none of its calls ran.
    """

    admitted: list[tuple[str, int]] = field(default_factory=list)
    failed: int = 0
    not_found: int = 0
    unknown: int = 0
    unknown_names: list[str] = field(default_factory=list)
    unbound: int = 0
    after_halt: int = 0
    refused: int = 0
    ungranted_asked: bool = False
    ungranted_requested: list[str] = field(default_factory=list)
    repeat_came: bool = False
    answered: bool = True
    not_run_reply: bool = False

    @property
    def count(self) -> int:
        return len(self.admitted)

    @property
    def most_repeated(self) -> int:
        return max(Counter(self.admitted).values(), default=0)


def _binds(arguments: str) -> int | None:
    """``input`` as the guard binds it, or ``None`` when the arguments would not bind (the fixture's ``int``)."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return None
    if not isinstance(value, dict) or set(value) != {"input"}:
        return None
    number = value["input"]
    if isinstance(number, bool) or not isinstance(number, (int, float)) or number != int(number):
        return None
    return int(number)


def answered(outcome: RunOutcome) -> list[tuple[labkit.Message, dict[str, str]]]:
    """Each model reply with the results that follow it, by call id (an id may come again in a later reply)."""
    replies: list[tuple[labkit.Message, dict[str, str]]] = []
    for message in outcome.transcript:
        if message.role is labkit.Role.ASSISTANT:
            replies.append((message, {}))
        elif message.role is labkit.Role.TOOL and replies:
            replies[-1][1].setdefault(message.tool_call_id or "", message.text or "")
    return replies


def first_refused(outcome: RunOutcome, rule: str) -> tuple[tuple[int, int], str] | None:
    """Where the first call refused by ``rule`` was asked (reply number, place in the reply) and it in words."""
    for number, (reply, results) in enumerate(answered(outcome), start=1):
        for place, call in enumerate(reply.tool_calls):
            if results.get(call.id, "").startswith(f"refused: {rule}"):
                return (number, place), _words(call.name, call.arguments)
    return None


def _words(name: str, arguments: str) -> str:
    """A call as a hint writes it: ``read_ticket(input=42)``, the arguments as the model sent them."""
    value = json.loads(arguments)
    return f"{name}({', '.join(f'{key}={item!r}' for key, item in value.items())})"


def refusal_numbers(run: RunOutcome, rule: str) -> tuple[str, str]:
    """What refused and the numbers behind it, as ``(attempt, reason)``, counted from ``run`` (which ``rule`` ended)."""
    limits = run.limits
    if rule == "ModelBudget":
        made = run.count("ModelCall")
        return f"model call {made + 1}", f"{made} of {limits.model_calls} model calls already made"
    if rule == "DeadlineExceeded":
        before = list(itertools.takewhile(lambda e: e.kind.value not in RULES, run.events))
        last = before[-1] if before else None
        waiting = (
            f"the body of {last.name}"
            if last is not None and last.kind.value == "ToolCall"
            else f"model call {last.count}"
            if last is not None and last.kind.value == "ModelCall"
            else "the run"
        )
        return waiting, f"{limits.deadline_s:g} s passed while {waiting} was waiting"
    where = first_refused(run, rule)
    attempt = where[1] if where is not None else "?"
    if rule == "PermissionDenied":
        name = attempt.split("(")[0]
        return attempt, f"needs {CAPABILITY.get(name, 'a capability')}, not granted"
    if rule == "ToolBudget":
        return attempt, f"{run.count('ToolCall')} of {limits.tool_calls} attempts already admitted"
    if limits.repetitions == 0:  # the first attempt is refused: no "same signature" came before it
        return attempt, "repetitions=0 admits no attempt of any signature"
    return attempt, f"same signature, already admitted {limits.repetitions} of {limits.repetitions}"


def facts(outcome: RunOutcome, task: LoggedTask, plan: Plan) -> Facts:
    """Count what ``outcome`` did (see :class:`Facts`); ``task`` is the run's host state."""
    found = Facts(admitted=[(tool, value) for tool, value, _ in task.log])
    found.failed = sum(ending == "raised" for *_, ending in task.log)
    found.not_found = sum(ending == "NotFound" for *_, ending in task.log)
    seen: Counter = Counter()
    replies = answered(outcome)
    found.answered = len(replies) == outcome.count("ModelCall")
    for reply, _ in replies:
        for call in reply.tool_calls:
            ungranted = call.name in CAPABILITY and CAPABILITY[call.name] not in plan.grant
            if ungranted and call.name not in found.ungranted_requested:
                found.ungranted_requested.append(call.name)
    for reply, results in replies:
        if len({c.id for c in reply.tool_calls}) < len(reply.tool_calls):
            found.not_run_reply = True  # a reply whose ids repeat runs none of its calls
            continue
        for call in reply.tool_calls:
            result = results.get(call.id, "")
            if result.startswith("refused:"):
                found.refused += 1
                if "already stopped" in result:
                    found.after_halt += 1
                    continue  # refused unasked after the stop: the loop looked no further at it
            if call.name not in TOOL_NAMES:
                found.unknown += 1
                if call.name not in found.unknown_names:
                    found.unknown_names.append(call.name)
                continue
            value = _binds(call.arguments)
            if value is None:
                found.unbound += 1
                continue
            if CAPABILITY[call.name] not in plan.grant:
                found.ungranted_asked = True
            if seen[(call.name, value)] >= plan.limits.repetitions:
                found.repeat_came = True
            if not result.startswith(("refused:", "cancelled:")):
                seen[(call.name, value)] += 1
    return found


def run_plan(plan: Plan) -> tuple[RunOutcome, LoggedTask] | None:
    """Run ``plan`` once: its outcome and host state, or ``None`` when the script ran out (no outcome)."""
    setup = labkit.prepare(
        plan.scenario(),
        agent=plan.agent,  # type: ignore[arg-type]
        stream=plan.stream,
        concurrent_tool_calls=plan.concurrent,
    )
    try:
        outcome = labkit.run(setup)
    except labkit.ScriptExhausted:
        return None
    return outcome, setup.task
