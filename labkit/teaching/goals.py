"""The hints of a goal exercise: the learner designs a host (chapter 7's hosts, chapter 11's scenario) for an ending.

A goal is no guess: nobody "said" or "counted" anything. So after a missed ending the hint speaks of the
design: what the learner's limits or grants let through in *their* run (measured by
:func:`~labkit.teaching.explain.explain`), and what the ending aimed for needs, without the numbers to set.

Core-light: the standard library and labkit's core only.
"""

from __future__ import annotations

from ..core.events import StopReason
from ..loops.outcome import RunOutcome, RunStatus
from .i18n import N_, _, ngettext

__all__ = ["design_feedback"]

_LIMIT = {
    StopReason.TOOL_BUDGET.value: "tool_calls",
    StopReason.REPEATED_CALL.value: "repetitions",
    StopReason.MODEL_BUDGET.value: "model_calls",
    StopReason.DEADLINE_EXCEEDED.value: "deadline_s",
}
"""The limit each rule reads (the permission rule reads the grants)."""

_NEEDS = {
    RunStatus.COMPLETED.value: N_(
        "Completed needs every call the model makes let through, and the host condition true when the model stops"
    ),
    RunStatus.INCOMPLETE.value: N_(
        "Incomplete needs every call let through while the model stops before the host condition holds"
    ),
    RunStatus.PERMISSION_DENIED.value: N_(
        "PermissionDenied needs a call of a tool whose capability the host leaves out of its grants,"
        " before any limit refuses"
    ),
    RunStatus.REPEATED_CALL.value: N_(
        "RepeatedCall needs the repetition rule to refuse first: a signature asked for again once `repetitions`"
        " attempts of it were admitted, while the other limits still have room"
    ),
    RunStatus.TOOL_BUDGET.value: N_(
        "ToolBudget needs the tool budget to refuse first: `tool_calls` attempts admitted, then one more asked"
        " for, while the other limits still have room"
    ),
    RunStatus.MODEL_BUDGET.value: N_(
        "ModelBudget needs the model-call budget to refuse first: the model asks again after `model_calls`"
        " calls, while every tool call was let through"
    ),
    RunStatus.DEADLINE_EXCEEDED.value: N_(
        "DeadlineExceeded needs something still waiting when `deadline_s` passes, before any other rule refuses"
    ),
    RunStatus.PROVIDER_UNAVAILABLE.value: N_(
        "ProviderUnavailable needs a model call that gets no answer, before any rule refuses"
    ),
}
"""What each ending needs of a design (in English; shown in the notebook's language)."""


def _let_through(outcome: RunOutcome, decided: str | None, rule_name: str | None) -> str:
    """What the design let through in its run: the admitted attempts, and what then refused (or how it ended)."""
    admitted = outcome.count("ToolCall")
    if decided is None:
        return ngettext(
            "your design let {n} tool attempt through and the run ended {status} without a refusal",
            "your design let {n} tool attempts through and the run ended {status} without a refusal",
            admitted,
        ).format(n=admitted, status=outcome.status.value)
    if decided == StopReason.PERMISSION_DENIED:
        return ngettext(
            "your grants let {n} tool attempt through before the permission rule refused a call",
            "your grants let {n} tool attempts through before the permission rule refused a call",
            admitted,
        ).format(n=admitted)
    limit = _LIMIT[decided]
    value = getattr(outcome.limits, limit)
    return ngettext(
        "your run admitted {n} tool attempt before {rule} refused ({limit}={value})",
        "your run admitted {n} tool attempts before {rule} refused ({limit}={value})",
        admitted,
    ).format(limit=limit, value=f"{value:g}" if isinstance(value, float) else value, n=admitted, rule=rule_name)


_UNGUARDED = {
    "unbound": N_(
        "a call of the model never reached the guard: its arguments did not bind to the tool's parameters"
        " (its result in the transcript says why), so no rule judged it"
    ),
    "unknown tool": N_("a call of the model never reached the guard: it named a tool the agent does not have"),
}
"""What the run shows of a call that no rule judged (read by the loop's own ``result_kind``)."""


def _unguarded(outcome: RunOutcome) -> list[str]:
    """One line per way a call of this run reached no guard: arguments that did not bind, an unknown tool."""
    from ..loops.agents import result_kind
    from ..transports.chat import Role

    kinds = {result_kind(m.text) for m in outcome.transcript if m.role is Role.TOOL}
    return [_(line) for kind, line in _UNGUARDED.items() if kind in kinds]


def design_feedback(outcome: RunOutcome, aimed: str | None, count: int | None) -> list[str]:
    """The lines (without ``think:``) after a design missed its ending ``aimed`` (a status) or its ToolCall
    ``count``: what the run shows the design let through, and what the ending needs; ``[]`` when it reached both.

    Every cause named is measured (:func:`~labkit.teaching.explain.explain`); the limit to set is never given.
    """
    wrong_status = aimed is not None and aimed != outcome.status.value
    wrong_count = count is not None and count != outcome.count("ToolCall")
    if not wrong_status and not wrong_count:
        return []
    from .explain import explain

    explanation = explain(outcome)
    decided = explanation.decided
    lines: list[str] = []
    if wrong_status:
        first, *rest = explanation.lines(also=1, must=aimed)
        lines.append(_("your design ended {status}; {cause}").format(status=outcome.status.value, cause=first))
        lines.extend(rest)
        lines.extend(_unguarded(outcome))
        lines.append(_(_NEEDS[aimed]) if aimed in _NEEDS else aimed or "")
        return lines
    assert count is not None
    through = _let_through(outcome, decided.rule if decided else None, decided.name if decided else None)
    admitted = outcome.count("ToolCall")
    if count > admitted:
        need = _("the {ending} ending needs more ToolCall events: let more attempts through before the stop").format(
            ending=outcome.status.value
        )
    else:
        need = _("the {ending} ending needs fewer ToolCall events: the stop must come sooner").format(
            ending=outcome.status.value
        )
    lines = [_("{through}; {need}").format(through=through, need=need)]
    if count > admitted:  # a rule that would also have refused that very call must let it through too
        lines.extend(explanation.also_sentence(r) for r in explanation.also if r.same_attempt)
    return lines
