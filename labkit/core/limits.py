"""The four limits of a run, and the counters read against them.

docs/guarantees.md, *Limits are exact*; chapter 6, *The four limits*.

* :class:`Limits`: model calls, tool attempts, attempts per signature, deadline.
* :class:`Usage`: a scope's counters at one moment, field for field beside its limits.
* :func:`_limits`: what a scope or a run accepts as limits, validated where it is received.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import LimitsError

__all__ = ["Limits", "Usage"]


class Limits(BaseModel):
    """Hard bounds the host puts on one run.

    Zero is a real limit meaning "none admitted", never "unset". Variants are
    made with :meth:`with_` (or ``model_copy(update=...)``), which validate
    the new values.

    Raises:
        pydantic.ValidationError: a negative value, a wrong type (``"3"``,
            ``True``, ``2.5`` for a count) or an unknown field; the error
            names the field.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, allow_inf_nan=False)

    model_calls: int = Field(6, ge=0)
    """Transport attempts admitted per run, first call and every follow-up (docs/guarantees.md, *Limits are exact*)."""

    tool_calls: int = Field(4, ge=0)
    """Tool attempts admitted per run across all tools; failed bodies count (chapter 4, *The guard, step by step*)."""

    repetitions: int = Field(1, ge=0)
    """Attempts admitted per signature, i.e. per tool name + canonical arguments (docs/guarantees.md, *Signatures*)."""

    deadline_s: float = Field(120.0, ge=0)
    """Wall-clock seconds for the whole run, model calls and tool bodies included (chapter 6, *One deadline for
    the whole run*)."""

    def with_(self, **changes: object) -> Limits:
        """Return a validated copy with some fields changed, e.g. ``limits.with_(model_calls=1)``."""
        return type(self).model_validate({**self.model_dump(), **changes})

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Limits:
        """As pydantic's ``model_copy``, but ``update`` is validated like :meth:`with_`."""
        if update:
            return self.with_(**update)
        return super().model_copy(deep=deep)

    def __str__(self) -> str:
        return (
            f"model_calls={self.model_calls} tool_calls={self.tool_calls} "
            f"repetitions={self.repetitions} deadline_s={self.deadline_s:g}"
        )


class Usage(NamedTuple):
    """Counters of a scope at one moment, to read against its :class:`~labkit.Limits`."""

    model_calls: int
    """Transport attempts admitted."""
    tool_calls: int
    """Tool attempts admitted (failed bodies included)."""
    repetitions: int
    """The highest attempt count of any one signature."""
    elapsed_s: float
    """Seconds since the scope started (0.0 before it starts)."""


def _limits(limits: object) -> Limits:
    """Accept :class:`Limits`, a mapping of its fields, or ``None`` (the defaults); validate it here.

    A ``Limits`` is validated again: ``model_construct`` skips validation, and
    a NaN deadline or a negative count would otherwise make an unbounded run.
    """
    if limits is None:
        return Limits()
    if isinstance(limits, Limits):
        fields = limits.__dict__  # its field values, whatever way it was built
    elif isinstance(limits, Mapping):
        fields = dict(limits)
    else:
        raise LimitsError(f"limits must be labkit.Limits or a mapping of its fields, not {type(limits).__name__}")
    try:
        checked = Limits.model_validate(fields)
    except ValidationError as exc:
        raise LimitsError(f"limits do not validate: {limits_problems(exc)}") from exc
    return limits if isinstance(limits, Limits) else checked


def limits_problems(exc: ValidationError) -> str:
    """What is wrong with limits, one clause per problem: a name that is no limit says which are, and the
    one it was likely meant for (``deadline: not a limit (did you mean deadline_s?)``)."""
    names = list(Limits.model_fields)
    problems = []
    for error in exc.errors(include_url=False):
        where = ".".join(map(str, error["loc"])) or "limits"
        if error["type"] == "extra_forbidden":
            import difflib  # only for a misspelt limit

            close = difflib.get_close_matches(where, names, n=1, cutoff=0.5)
            hint = f" (did you mean {close[0]}?)" if close else ""
            problems.append(f"{where}: not a limit{hint}")
        else:
            problems.append(f"{where}: {error['msg']}")
    if any(error["type"] == "extra_forbidden" for error in exc.errors(include_url=False)):
        problems.append(f"the limits are {', '.join(names)}")
    return "; ".join(problems)
