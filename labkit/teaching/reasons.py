"""The ``think:`` line after each wrong guess of :func:`labkit.compare`, computed from the two values.

:func:`labkit.compare` gets a guess and the value that happened, and nothing
else: it cannot know where the value came from. So every reason it gives is
true of the two values alone (a difference of type, of order, how many too
many, which items a list left out), and says what a value
*means* only when the calling code says it (``meaning=``):

* ``"exit code"``: a console exit code (the closed set of :mod:`labkit.cli`:
  0, 2, 64, 70, 74, 76, 78, 130): the line says what the code that happened
  means, and what the guessed one would have meant;
* ``"status"``: a run status (:class:`~labkit.RunStatus`): what each one is
  (also said, without ``meaning=``, when both values are status names);
* an event kind, e.g. ``"ModelCall"``: the value is how many events of that kind
  a run recorded; with ``runs=`` (the run, or ``{label: run}``, it was counted
  in) the line says where that count comes from in that run (a refused call
  records none, a failed body still counts, one model call per reply...);
* ``"<kind> count"``, e.g. ``"Middleware count"``: the count an event of that
  kind carries (chapter 8's anatomy of an event);
* a name of :data:`NAMED_MEANINGS` (``"bodies"``, ``"attempts"``, ``"text kept"``,
  ``"preemptions"``...): the sentence it names;
* any other text: a sentence saying what the value is or counts, shown after
  the computed difference.

A list or tuple is judged item by item, by position: each wrong item gets one
reason, items with the same reason share one line that names their positions.

Core-light: the standard library and labkit's core only.
"""

from __future__ import annotations

import numbers
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from enum import Enum
from typing import Any

from ..core.events import EventKind, StopReason
from ..loops.outcome import EXIT_CANCELLED, EXIT_CONFIG, EXIT_OUTPUT, EXIT_PROTOCOL, EXIT_USAGE, RunOutcome, RunStatus
from ..loops.running import origin_of
from ..transports.chat import Role
from .forms import number_in_text, truth_in_text, unquoted
from .i18n import N_, _, ngettext

__all__ = [
    "EXIT_MEANINGS",
    "STATUS_MEANINGS",
    "MeaningError",
    "as_answer",
    "check_meaning",
    "is_sequence",
    "is_truth",
    "reasons",
    "same",
]

_EXIT_FRAMEWORK = 70  # labkit.cli.EXIT_FRAMEWORK (the console is not imported for one number)

EXIT_MEANINGS: dict[int, str] = {
    0: N_("Completed (the host condition holds)"),
    2: N_("Incomplete or a controlled stop (a rule, the deadline or the provider ended the run)"),
    EXIT_USAGE: N_("a usage error: the console refused the command, so nothing ran"),
    _EXIT_FRAMEWORK: N_("the framework named by --runtime ended on an error of its own"),
    EXIT_OUTPUT: N_("the output could not be written"),
    EXIT_PROTOCOL: N_("the live endpoint answered with something that is not a chat completion"),
    EXIT_CONFIG: N_(
        "a configuration that cannot work: a live endpoint's (--live), or a framework not installed (--runtime)"
    ),
    EXIT_CANCELLED: N_("the caller cancelled the run (Ctrl+C)"),
}
"""What each exit code of labkit's console means (:mod:`labkit.cli`; in English, shown translated)."""

STATUS_MEANINGS: dict[str, str] = {
    RunStatus.COMPLETED.value: N_("the run ended and the host condition holds"),
    RunStatus.INCOMPLETE.value: N_("the run ended without a stop while the host condition is false"),
    RunStatus.PERMISSION_DENIED.value: N_("a call needed a capability the host did not grant"),
    RunStatus.REPEATED_CALL.value: N_(
        "a call asked for a signature already admitted `repetitions` times (with repetitions=0, any call)"
    ),
    RunStatus.TOOL_BUDGET.value: N_("a tool attempt came after `tool_calls` attempts had been admitted"),
    RunStatus.MODEL_BUDGET.value: N_("a model call came after `model_calls` calls had been made"),
    RunStatus.DEADLINE_EXCEEDED.value: N_("the deadline passed while something was still waiting"),
    RunStatus.PROVIDER_UNAVAILABLE.value: N_("a model call could not get an answer from the model's endpoint"),
}
"""What each status says happened (chapter 7's closed set; in English, shown translated)."""

_COUNT_MEANINGS: dict[str, str] = {
    "ModelCall": N_("the model calls admitted so far, this one included"),
    "Middleware": N_("the calls the middleware has observed so far, all tools together, this one included"),
    "ToolCall": N_("the tool attempts admitted so far, all tools together, this one included"),
    "PermissionDenied": N_("the tool attempts admitted before the refused call"),
    "ToolBudget": N_("the tool attempts admitted: the limit that was reached"),
    "RepeatedCall": N_("the attempts this one signature already had: the per-signature limit"),
    "ModelBudget": N_("the model calls admitted: the limit that was reached"),
    "DeadlineExceeded": N_("the tool attempts admitted when the deadline passed"),
    "ProviderUnavailable": N_("the model calls admitted, the one that failed included"),
}
"""What an event's count counts, by its kind (chapter 8's anatomy of an event)."""


NAMED_MEANINGS: dict[str, str] = {
    "stop kept": N_(
        "the guard refused the call before the cancellation reached the run (a task is cancelled at its next"
        " await), and the scope keeps a stop it has recorded: the caller's cancellation decides what the caller"
        " gets, not what the record says"
    ),
    "bodies": N_("a body runs only for an attempt the guard admitted: a refused call never runs one"),
    "attempts": N_("every attempt the guard admitted counts, whatever its body did; a refused call counts nothing"),
    "text kept": N_("a run the host stopped withholds the model's text; a run that ended by itself keeps it"),
    "execute_tool spans": N_("one execute_tool span per tool call the loop invoked, refused or not"),
    "preemptions": N_("the fewest preemptions (switches while the running thread could go on) that break the guard"),
    "bodies under max_turns": N_("max_turns bounds model calls only: every body of every turn runs"),
    "bodies, one signature": N_(
        "identical calls share one signature, so the per-signature limit (repetitions) caps the bodies that"
        " run, or the tool budget when it is the smaller of the two"
    ),
    "bodies, own signatures": N_(
        "calls that each have a signature of their own run bodies up to the tool budget alone, while"
        " repetitions is at least 1"
    ),
    "caller wins": N_(
        "the caller gets its cancellation back (CancelledError), even when a rule stopped the run at the same"
        " moment: the caller wins, and the stop stays only in the scope's record"
    ),
    "provider cancelled": N_(
        "a cancellation that neither the caller nor the deadline made is the provider's own: the run returns"
        " ProviderUnavailable, never DeadlineExceeded, and raises nothing to the caller"
    ),
    "late effect": N_(
        "a body that ignores its token runs on after the run has returned: the deadline ends the run, not the"
        " body, and the body's effect comes late"
    ),
    "operation ids": N_(
        "one comment per operation id: the id comes from the request id and the call's signature, and a"
        " replay of an operation already applied writes nothing"
    ),
    "one decision": N_(
        "the policy is consulted once per operation, with the operation locked: a later worker finds the"
        " decision recorded and never asks again"
    ),
    "one effect": N_("one worker writes the effect; every other finds the operation applied and writes nothing"),
    "host's side": N_(
        "True when the scenario's grants or limits, which the host keeps once the script is gone, decide its"
        " status; False when its script did: a model that follows its instructions completes it"
    ),
    "found in": N_(
        "'alone' when calls made one after another already break the guard, 'race' only when it takes two"
        " threads at once: a guard wrong for one call at a time needs no race to show it"
    ),
    "review recorded": N_(
        "True only when finish_review succeeded, its body running to the end and recording the review; a body"
        " that ran and failed records nothing. That is the host condition, whatever the model's text says"
    ),
    "signatures": N_(
        "the guard admits a call whose bound, canonical arguments are new and refuses the first one it has"
        " already admitted once; after that refusal the run is stopped, so every later call is refused too"
    ),
}
"""What a value the chapters compare is, by a short name the calling code gives (``meaning="bodies"``)."""


_GUARD_STOPS = frozenset({"PermissionDenied", "ToolBudget", "RepeatedCall"})
"""The stops a tool's guard decides: the refused call reached the guard (after the middleware, in a loop)."""


class MeaningError(ValueError):
    """``meaning=`` or ``runs=`` given to :func:`labkit.compare` in a form it cannot read."""


def check_meaning(meaning: object, runs: object) -> None:
    """Raise :class:`MeaningError` for a ``meaning``/``runs`` pair :func:`reasons` cannot read."""
    if meaning is not None and not isinstance(meaning, str):
        raise MeaningError(f"meaning is a short text such as 'exit code' or 'ModelCall', not {meaning!r}")
    if runs is None:
        return
    if meaning not in EventKind._value2member_map_:
        raise MeaningError(
            "runs= tells where an event count comes from: give an event kind as meaning too, e.g. meaning='ModelCall',"
            f" not {meaning!r}"
        )
    values = runs.values() if isinstance(runs, Mapping) else [runs]
    if not all(isinstance(run, RunOutcome) for run in values):
        raise MeaningError("runs is the RunOutcome the count was read from, or {label: RunOutcome}")


def is_sequence(value: object) -> bool:
    """A list or tuple answer, judged item by item (a string is one value)."""
    return isinstance(value, (list, tuple))


def _number(value: object) -> bool:
    return isinstance(value, numbers.Number) and not is_truth(value)


def _kind(value: object) -> str:
    """The kind of a value in a learner's words: ``"a truth value"``, ``"a number"``, ``"a text"``..."""
    if value is None:
        return _("no value")
    if is_truth(value):
        return _("a truth value")
    if _number(value):
        return _("a number")
    if isinstance(value, str):
        return _("a text")
    if is_sequence(value):
        return _("a list")
    if isinstance(value, Mapping):
        return _("one value per label")
    if isinstance(value, type):
        return _("a class")
    return _("a {type} object").format(type=type(value).__name__)


def is_truth(value: object) -> bool:
    """``True`` or ``False``, Python's or numpy's (a pandas ``.any()`` gives ``np.True_``, not a ``bool``)."""
    kind = type(value)
    return isinstance(value, bool) or (kind.__module__ == "numpy" and kind.__name__ in ("bool", "bool_"))


def as_answer(value: object) -> object:
    """An answer in the form it is judged in.

    * an exception class or instance is its name (``asyncio.CancelledError`` answers ``"CancelledError"``);
    * a one-dimensional numpy array, pandas Series or Index is the list of its values
      (``frame["count"]`` answers ``[1, 2]``: a column read from a chapter's table is a list).
    """
    if isinstance(value, type) and issubclass(value, BaseException):
        return value.__name__
    if isinstance(value, BaseException):
        return type(value).__name__
    if type(value).__module__.split(".")[0] in ("numpy", "pandas") and getattr(value, "ndim", None) == 1:
        return value.tolist()  # type: ignore[attr-defined]
    return value


_NAMES = frozenset(name.casefold() for enum in (RunStatus, StopReason, EventKind) for name in enum._value2member_map_)
"""The closed sets of names a guess may give: statuses, stop reasons, event kinds (chapters 4 to 8)."""


_EXCEPTION = re.compile(r"[A-Z]\w*(Error|Exception)|KeyboardInterrupt|SystemExit|GeneratorExit")
_DOTTED = re.compile(r"[a-z_][\w.]*\.\w+")


def _texts_same(said: str, was: str) -> bool:
    """Two texts as :func:`same` reads them: spaces around and case aside; ``said`` without one pair of
    quotes around it (:func:`.forms.unquoted`) unless the answer is itself quoted; a name of labkit's
    closed sets with spaces or underscores inside (``"Permission Denied"``); an exception's name with its
    module before it (``"asyncio.CancelledError"``)."""
    answer = was.strip()
    text = (said.strip() if answer[:1] in "\"'`" else unquoted(said)).casefold()
    want = answer.casefold()
    if text == want:
        return True
    if want in _NAMES and re.sub(r"[\s_]", "", text) == want:
        return True
    return bool(_EXCEPTION.fullmatch(answer)) and bool(_DOTTED.fullmatch(text)) and text.rpartition(".")[2] == want


def relabelled(guess: Mapping[Any, Any], labels: Iterable[Any]) -> dict[Any, Any]:
    """``guess`` with each key that names one of ``labels`` loosely (case, spaces, one pair of quotes: as
    :func:`same` reads a text) under that label; other keys as they are."""
    loose: dict[str, list[Any]] = {}
    for label in labels:
        if isinstance(label, str):
            loose.setdefault(label.strip().casefold(), []).append(label)
    keyed: dict[Any, Any] = {}
    for key, value in guess.items():
        found = loose.get(unquoted(key).casefold(), []) if isinstance(key, str) else []
        keyed[found[0] if len(found) == 1 and found[0] not in guess else key] = value
    return keyed


def same(said: object, was: object) -> bool:
    """Whether a guess is the answer, as a reader judges it, not only as ``==`` does.

    * a truth value never equals a number (Python holds ``True == 1``, but a yes/no guessed ``1``
      or an exit code guessed ``False`` is not the answer); the text ``"True"`` or ``"false"`` is that
      truth value where the answer is one, as ``"2"`` is the number 2 where the answer is a number;
    * texts are the same when they differ only in spaces around them or in upper and lower case
      (``"repeatedcall "`` names ``RepeatedCall``: no answer of the course differs from another
      only so);
    * a quoted text (``"'ToolBudget'"``, ``"'admitted'"``) is the text inside the quotes, unless the
      answer is itself quoted; a status, stop reason or event kind may have spaces inside
      (``"Tool Budget"``); an exception's name may come with its module (``"asyncio.CancelledError"``);
    * a list and a tuple with the same items in the same order are the same answer, as are two
      mappings with the same keys and the same values (a key in another case or with spaces names the
      same label: :func:`relabelled`); a numpy array or a pandas Series is the list of its values; a
      text for a one-item list is that item;
    * an answer that is a set has no order: a list, tuple or set of the same items, each once, is it;
    * an exception class or instance is its name.
    """
    said, was = as_answer(said), as_answer(was)
    said, was = _as_truth(said, was), _as_truth(was, said)  # "True" for a yes/no is True (labkit.teaching.forms)
    if is_truth(said) != is_truth(was):
        return False
    said, was = _as_number(said, was), _as_number(was, said)  # "2" for a count is 2 (labkit.teaching.forms)
    if isinstance(said, str) and isinstance(was, str):
        return _texts_same(said, was)
    if isinstance(said, str) and isinstance(was, (list, tuple)) and len(was) == 1:
        return same(said, was[0])
    if isinstance(was, (set, frozenset)) and isinstance(said, (list, tuple, set, frozenset)):
        # an answer given as a set has no order: any list of its items, each once, is it
        return (
            len(said) == len(was)
            and all(any(same(a, b) for b in was) for a in said)
            and all(any(same(a, b) for a in said) for b in was)
        )
    if isinstance(said, (list, tuple)) and isinstance(was, (list, tuple)):  # is_sequence, spelt for mypy
        return len(said) == len(was) and all(same(a, b) for a, b in zip(said, was, strict=True))
    if isinstance(said, Mapping) and isinstance(was, Mapping):
        said = relabelled(said, was)
        return said.keys() == was.keys() and all(same(said[key], was[key]) for key in was)
    try:
        return bool(said == was)
    except (TypeError, ValueError):  # an array compared item by item has no one truth value
        return False


def _as_truth(value: object, other: object) -> object:
    """A text ``"True"``/``"False"`` as its truth value when ``other`` is a truth value."""
    written = truth_in_text(value) if is_truth(other) else None
    return value if written is None else written


def _as_number(value: object, other: object) -> object:
    """A text of digits as its number when ``other`` is a number (never a truth value): one rule for every check."""
    written = number_in_text(value) if _number(other) else None
    return value if written is None else written


def _one(value: object) -> str:
    if isinstance(value, Enum):  # a StopReason or a RunStatus reads as its name
        value = value.value
    if isinstance(value, str) and value.casefold() in _NAMES and value == value.strip():
        return value  # a status, stop reason or event kind reads as its name, as forms.shown shows it
    return repr(value) if isinstance(value, str) else str(value)


def _name(value: object) -> str:
    """A status as its name (``PermissionDenied``, unquoted), whether a text or a StopReason."""
    return str(value.value) if isinstance(value, Enum) else str(value)


def _exit_meaning(code: object) -> str:
    meaning = EXIT_MEANINGS.get(code) if isinstance(code, int) and not isinstance(code, bool) else None
    if meaning is None:
        codes = ", ".join(str(c) for c in sorted(EXIT_MEANINGS))
        return _("no exit code of labkit's console, which uses only {codes}").format(codes=codes)
    return _(meaning)


def _status_meaning(status: object) -> str | None:
    meaning = STATUS_MEANINGS.get(status) if isinstance(status, str) else None
    return None if meaning is None else _(meaning)


def _difference(said: Any, was: Any) -> str:
    """``"2 too many"`` / ``"1 too few"`` for two different numbers."""
    gap = said - was
    if gap == int(gap):
        gap = int(gap)
    plural = abs(gap) if isinstance(gap, int) else 2  # gettext's plural forms take a whole number
    if gap > 0:
        return ngettext("{n} too many", "{n} too many", plural).format(n=gap)
    return ngettext("{n} too few", "{n} too few", plural).format(n=-gap)


def _runs_of(runs: object, label: object) -> list[RunOutcome]:
    if isinstance(runs, RunOutcome):
        return [runs]
    if isinstance(runs, Mapping) and label in runs:
        return [runs[label]]
    return []


def _model_calls(run: RunOutcome) -> str:
    """Where a run's ModelCall events come from, read from the run."""
    from .runtimes import runtime_of  # light: the runtimes of chapter 2 and what made each run

    made = run.count("ModelCall")
    runtime = runtime_of(run)
    if runtime == "function":
        return _("a plain function asks no model, so it records no ModelCall event")
    if runtime == "workflow":
        return ngettext(
            "one ModelCall event for each question the host's code asked a model: it asked {n}",
            "one ModelCall event for each question the host's code asked a model: it asked {n}",
            made,
        ).format(n=made)
    replies = [m for m in run.transcript if m.role is Role.ASSISTANT]
    asking = sum(bool(m.tool_calls) for m in replies)
    line = ngettext(
        "one ModelCall event for each model call admitted; the loop asks again after each reply that asks"
        " for tools ({n} did here)",
        "one ModelCall event for each model call admitted; the loop asks again after each reply that asks"
        " for tools ({n} did here)",
        asking,
    ).format(n=asking)
    origin = origin_of(run)
    if origin is not None and origin.stream:
        line += _("; a streamed reply is one model call, counted once before its first piece")
    if run.status is RunStatus.MODEL_BUDGET:
        line += _("; the call the model-call budget refused records none")
    elif run.status is RunStatus.PROVIDER_UNAVAILABLE:
        line += _("; the call that failed was admitted, and counted, before it was sent")
    elif replies and not replies[-1].tool_calls and len(replies) == made:
        line += _("; the reply that asked for no tool ended the loop")
    return line


def _tool_calls(run: RunOutcome) -> str:
    """Where a run's ToolCall events come from, with what in it a learner may have miscounted."""
    from .explain import _count_notes  # the same notes as check's count line
    from .runtimes import runtime_of

    if runtime_of(run) == "workflow":
        return _(
            "the host's code calls the guarded tools itself, one ToolCall event per admitted attempt; a workflow"
            " runs no tool a model asks for, so a call in the model's reply records nothing"
        )
    if runtime_of(run) == "function":
        return _("the host's code calls the guarded tools itself, one ToolCall event per admitted attempt")
    notes = _count_notes(run)
    if not notes and run.status.value in _GUARD_STOPS:
        notes = " (" + _("a refused call records none") + ")"
    return _("one ToolCall event each time the guard admitted an attempt{notes}").format(notes=notes)


def _middleware(run: RunOutcome) -> str:
    from .runtimes import runtime_of

    if runtime_of(run) in ("function", "workflow"):
        return _("the host's code calls the guarded tools itself: there is no loop, so no middleware")
    line = _("one Middleware event for each call the loop passes to its middleware, all tools together")
    if run.status.value in _GUARD_STOPS:
        line += _("; the middleware sees a call before the guard does, so a refused call has one too")
    return line


def _event_count(kind: str, run: RunOutcome) -> str:
    if kind == "ModelCall":
        return _model_calls(run)
    if kind == "ToolCall":
        return _tool_calls(run)
    if kind == "Middleware":
        return _middleware(run)
    return _("one {kind} event for each time it happened in the run").format(kind=kind)


def _meant(meaning: str | None, said: Any, was: Any, runs: object, label: object) -> str | None:
    """What the calling code said the value is, for a value that differs (``None`` when not said)."""
    if meaning is None:
        return None
    if meaning == "exit code":
        return _("{was} means {was_means}; {said} would mean {said_means}").format(
            was=was, was_means=_exit_meaning(was), said=_one(said), said_means=_exit_meaning(said)
        )
    if meaning == "status" and isinstance(was, StopReason):  # a scope's record (scope.stop_reason), not a run's status
        return _recorded_stop(said, was)
    if meaning == "status":
        return _statuses(said, was)
    if meaning in EventKind._value2member_map_:
        found = _runs_of(runs, label)
        if found:
            return _event_count(meaning, found[0])
        return _("the number of {kind} events the run recorded").format(kind=meaning)
    if meaning.endswith(" count") and meaning[: -len(" count")] in _COUNT_MEANINGS:
        kind = meaning[: -len(" count")]
        return _("a {kind} event's count is {meaning}").format(kind=kind, meaning=_(_COUNT_MEANINGS[kind]))
    if meaning == "stop kept" and was is None:
        return None  # no stop recorded: the guard refused nothing before the cancellation, so none is said
    if meaning in NAMED_MEANINGS:
        return _(NAMED_MEANINGS[meaning])
    return meaning


NONE_MEANINGS: dict[str, str] = {
    "stop kept": N_("no stop recorded"),
    "status": N_("no stop recorded"),
}
"""What ``None`` answers, for the meanings whose question offers it (a scope that recorded no stop)."""


def _recorded_stop(said: object, was: StopReason) -> str:
    """Why a scope's stop reason is ``was``: the first stop it recorded stays, whatever came after."""
    first = _(
        "the scope keeps the first stop it records: once stopped it admits nothing more, so every later"
        " call is refused and the reason stays {was}"
    ).format(was=was.value)
    said = said.value if isinstance(said, Enum) else said
    if isinstance(said, str) and said in STATUS_MEANINGS and said not in StopReason._value2member_map_:
        return _("{first}; {said} is a run's status, never a stop a scope records").format(first=first, said=said)
    return first


def _none_line(said: object, was: object, meaning: str | None) -> str:
    """A wrong value where one side is ``None``, a legitimate answer: "you said None (no stop recorded)..."."""
    means = NONE_MEANINGS.get(meaning or "")
    none = _("None ({means})").format(means=_(means)) if means else "None"
    if said is None:
        return _("you said {none}; it was {was}").format(none=none, was=_one(was))
    return _("it was {none}, not {said}").format(none=none, said=_one(said))


def _statuses(said: object, was: object) -> str | None:
    said_means, was_means = _status_meaning(said), _status_meaning(was)
    if said_means is None and was_means is None:
        return None
    if said_means is None:
        return _("{was} says {was_means}; {said} is none of the eight statuses").format(
            was=_name(was), was_means=was_means, said=_name(said)
        )
    if was_means is None:
        return _("{said} would say {said_means}; {was} is none of the eight statuses").format(
            said=_name(said), said_means=said_means, was=_name(was)
        )
    return _("{was} says {was_means}; {said} would say {said_means}").format(
        was=_name(was), was_means=was_means, said=_name(said), said_means=said_means
    )


def _scalar(said: Any, was: Any, meaning: str | None, runs: object, label: object) -> str:
    """The one reason a single wrong value gets, without its ``think: what:`` prefix."""
    said, was = as_answer(said), as_answer(was)  # an exception given for its name is judged by the name
    said, was = _as_truth(said, was), _as_truth(was, said)  # "True" for a yes/no is True, as same() reads it
    said, was = _as_number(said, was), _as_number(was, said)  # "2" for a count is 2, as same() reads it
    if is_truth(said) != is_truth(was) and said == was:
        return _(
            "you said {said!r} ({said_type}), it was {was!r} ({was_type}):"
            " a truth value (True/False) and a number are different answers"
        ).format(said=said, said_type=type(said).__name__, was=was, was_type=type(was).__name__)
    if said != was and str(said) == str(was):
        return _(
            "you said {said} ({said_type}), it was {was} ({was_type}): they print alike but are not the same value"
        ).format(said=repr(said), said_type=type(said).__name__, was=repr(was), was_type=type(was).__name__)
    meant = _meant(meaning, said, was, runs, label)
    if said is None or was is None:  # None is an answer like any other (e.g. no stop recorded)
        line = _none_line(said, was, meaning)
        return line if meant is None else _("{reason}; {meaning}").format(reason=line, meaning=meant)
    same_kind = _kind(said) == _kind(was)
    if not same_kind and meaning == "exit code":
        meant = _("{was} means {was_means}").format(was=was, was_means=_exit_meaning(was))
    if meaning is None and _status_meaning(said) and _status_meaning(was):
        meant = _statuses(said, was)  # two status names: what each says is true wherever they came from
    if same_kind and meant is not None and (meaning in ("exit code", "status") or _status_meaning(said)):
        return meant  # it names both values already
    if not same_kind:
        line = _("the answer is {was_kind} ({was}), you gave {said_kind} ({said})").format(
            was_kind=_kind(was), was=_one(was), said_kind=_kind(said), said=_one(said)
        )
    elif _number(said):
        line = _difference(said, was)
    elif is_truth(said):
        line = _("it was {was}, not {said}").format(was=was, said=said)
    elif isinstance(said, str):
        line = _("it was {was}, not {said}").format(was=_one(was), said=_one(said))
    else:
        line = _("it was {was}, not {said}").format(was=_one(was), said=_one(said))
    return line if meant is None else _("{reason}; {meaning}").format(reason=line, meaning=meant)


ONE_ANSWER_EACH = frozenset({"exit code", "status", "signatures"})
"""Meanings whose list holds one answer per item the setup listed (an exit code per command, an outcome per
call): two wrong items there are two mistakes, each told at its place, never "another order", which would
name a cause (putting the items in the wrong order) that a swap of two values does not show. A list of what
happened in order (span outcomes, admitted tools) keeps the order line."""


def _positions(indexes: Sequence[int]) -> str:
    return ", ".join(f"[{i + 1}]" for i in indexes)


def _items(
    what: str, said: Sequence[Any], was: Sequence[Any], meaning: str | None, runs: object, label: object
) -> list[str]:
    """One reason per wrong item of a list, by position (from 1); items with the same reason share a line."""
    wrong = [i for i in range(max(len(said), len(was))) if i >= len(said) or i >= len(was) or not same(said[i], was[i])]
    if not wrong:
        return []

    def line(indexes: Sequence[int], text: str, *left_out: Any) -> str:
        if left_out and len(set(map(repr, left_out))) == 1:
            text = _with_meaning(text, left_out[0], meaning, runs, label)
        return _("think: {what} {where}: {reason}").format(what=what, where=_positions(indexes), reason=text)

    if meaning not in ONE_ANSWER_EACH and len(said) == len(was) and Counter(map(repr, said)) == Counter(map(repr, was)):
        return [line(wrong, _("the same items as the answer in another order: the order is part of it"))]
    if not said:
        text = ngettext(
            "your list is empty; the answer has {m} item", "your list is empty; the answer has {m} items", len(was)
        ).format(m=len(was))
        return [line(range(len(was)), text, *was)]
    if len(said) < len(was) and _subsequence(said, was):
        missing = _missing(said, was)  # positions in the answer
        text = ngettext(
            "you left out {items}; with it in its place, your list would be the answer",
            "you left out {items}; with them in their places, your list would be the answer",
            len(missing),
        ).format(items=", ".join(_one(was[i]) for i in missing))
        return [line(missing, text, *(was[i] for i in missing))]
    if not was:
        text = _("the answer is an empty list: none of your items is in it")
        return [line(range(len(said)), _with_meaning(text, said[0], meaning, runs, label))]
    if len(said) > len(was) and _subsequence(was, said):
        extra = _missing(was, said)  # positions in your list
        text = ngettext(
            "{items} is not in the answer; without it, your list is the answer",
            "{items} are not in the answer; without them, your list is the answer",
            len(extra),
        ).format(items=", ".join(_one(said[i]) for i in extra))
        return [line(extra, _with_meaning(text, said[extra[0]], meaning, runs, label))]
    groups: dict[str, list[int]] = {}
    for i in wrong:
        if i >= len(said):
            text = ngettext(
                "you left it out: your list has {n} item, the answer {m}",
                "you left it out: your list has {n} items, the answer {m}",
                len(said),
            ).format(n=len(said), m=len(was))
            text = _with_meaning(text, was[i], meaning, runs, label)
        elif i >= len(was):
            text = ngettext(
                "the answer has no such item: it has {m} item, your list {n}",
                "the answer has no such item: it has {m} items, your list {n}",
                len(was),
            ).format(n=len(said), m=len(was))
        else:
            text = _scalar(said[i], was[i], meaning, runs, label)
        groups.setdefault(text, []).append(i)
    return [line(indexes, text) for text, indexes in groups.items()]


def _with_meaning(text: str, was: Any, meaning: str | None, runs: object, label: object) -> str:
    """``text`` about an item left out, with what that item means when the calling code said it."""
    if meaning == "exit code":
        return _("{text}; {was} means {was_means}").format(text=text, was=was, was_means=_exit_meaning(was))
    if meaning is None or meaning == "status":
        return text
    meant = _meant(meaning, ..., was, runs, label)
    return text if meant is None else _("{reason}; {meaning}").format(reason=text, meaning=meant)


def _subsequence(short: Sequence[Any], long: Sequence[Any]) -> bool:
    it = iter(long)
    return all(any(same(s, x) for x in it) for s in short)


def _missing(short: Sequence[Any], long: Sequence[Any]) -> list[int]:
    """The positions of ``long`` the items of ``short`` (a subsequence of it) do not take, first match first."""
    taken, j = [], 0
    for s in short:
        while not same(long[j], s):
            j += 1
        taken.append(j)
        j += 1
    return [i for i in range(len(long)) if i not in taken]


def _unordered(said: Any, was: Any) -> str:
    """Why a list or set of items is not the answer's set: items left out, items not in it, or an item twice."""
    missing = [b for b in was if not any(same(a, b) for a in said)]
    extra = [a for a in said if not any(same(a, b) for b in was)]
    parts = []
    if missing:
        parts.append(_("you left out {items}").format(items=", ".join(sorted(map(_one, missing)))))
    if extra:
        parts.append(
            ngettext("{items} is not in the answer", "{items} are not in the answer", len(extra)).format(
                items=", ".join(map(_one, extra))
            )
        )
    if not parts:
        parts.append(_("the answer has each item once, and your guess gives one of them more than once"))
    return _("the order does not count here, the items do: {parts}").format(parts=_("; ").join(parts))


def reasons(
    what: str, said: Any, was: Any, meaning: str | None = None, runs: object = None, label: object = None
) -> list[str]:
    """The ``think:`` lines for one wrong value (``[]`` when it is right): one line for a single value,
    one per group of wrong items for a list (see the module's docstring)."""
    said, was = as_answer(said), as_answer(was)
    if same(said, was):
        return []
    if isinstance(was, (set, frozenset)) and isinstance(said, (list, tuple, set, frozenset)):
        return [_("think: {what}: {reason}").format(what=what, reason=_unordered(said, was))]
    if isinstance(said, (set, frozenset)) and is_sequence(was):
        return [
            _("think: {what}: {reason}").format(
                what=what, reason=_("the answer is a list, in its order, and a set has no order: give a list")
            )
        ]
    if is_sequence(said) and is_sequence(was):
        return _items(what, said, was, meaning, runs, label)
    if isinstance(was, Mapping) and not isinstance(said, Mapping):
        labels = ", ".join(str(k) for k in was)
        return [
            _("think: {what}: the answer has one value per label ({labels}): give {{label: value}}").format(
                what=what, labels=labels
            )
        ]
    if isinstance(said, Mapping) and isinstance(was, Mapping) and said.keys() != was.keys():
        return [
            _("think: {what}: the labels are {labels}, not {said}").format(
                what=what, labels=", ".join(map(str, was)), said=", ".join(map(str, said))
            )
        ]
    if isinstance(said, Mapping) and isinstance(was, Mapping):
        return [  # a dict answer inside one label: one line per key that differs
            _("think: {what}: {key}: {reason}").format(
                what=what, key=key, reason=_scalar(said[key], was[key], meaning, runs, label)
            )
            for key in was
            if not same(said[key], was[key])
        ]
    return [_("think: {what}: {reason}").format(what=what, reason=_scalar(said, was, meaning, runs, label))]
