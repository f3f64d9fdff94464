"""Predict a run, then check: the status, the ToolCall count and, if you like, every event.

Core-light: no pandas or Jupyter import. The interactive prediction widget
lives in :mod:`labkit.teaching.widgets`.

* :func:`check` compares a prediction with a run. With ``events=[...]`` it
  also prints a line-by-line diff of the predicted and the recorded events;
  after a wrong guess it prints ``think:`` lines computed from the run by
  :func:`labkit.teaching.explain.explain`: which rule decided, with the run's
  numbers, and which other rules would also have refused (measured by running
  the same script again with the deciding rule loosened).
* :func:`mystery` / :func:`mysteries` give "mystery scripts": a scripted model,
  limits and grants, shown as a step list with the scenario's name hidden, so
  the outcome has to be worked out from the rules (docs/guarantees.md), not read from a
  name. ``mystery("C").run()`` runs one.

A guess may be left as ``...`` (or ``None``): the learner edition of the
workbook ships predict cells as ``my_status = ...``. Checking such a guess
never fails; it prints a line asking for the guess and keeps the answer hidden.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..core.errors import InputError, UnknownScenarioError
from ..core.events import ControlEvent, StopReason
from ..core.limits import Limits
from ..loops.outcome import RunOutcome
from ..loops.scenarios import ALL_CAPABILITIES, Scenario
from ..transports.chat import ChatRequest
from ..transports.scripted import Call, Fail, Hang, Reply, Say, Step
from . import _inputs
from . import forms as _forms
from . import progress as _progress
from .i18n import N_, _
from .i18n import label as _label
from .layout import LINE_WIDTH as _LINE_WIDTH
from .layout import fit
from .reasons import MeaningError, as_answer, check_meaning, is_sequence, reasons, relabelled, same

__all__ = ["Check", "Checks", "Comparison", "Mystery", "check", "compare", "mysteries", "mystery"]


def _how_to_guess() -> str:
    return _("fill in your guess in the predict cell above, run it, then run this cell again")


def _no_guess_text() -> str:
    """The line of a value not guessed yet (in the notebook's language, :mod:`labkit.teaching.i18n`)."""
    return _("no guess yet: {how}").format(how=_how_to_guess())


EventGuess = tuple[str, str, int]
"""A predicted event: ``(kind, name, count)``, e.g. ``("ModelCall", "model", 1)``."""


def _no_guess(value: object) -> bool:
    """``...`` or ``None``, or a per-label guess whose every value is (the learner edition's ``{"a": ..., ...}``)."""
    if isinstance(value, Mapping):
        return all(v is None or v is Ellipsis for v in value.values())
    return value is None or value is Ellipsis


def _unguessed(value: object) -> bool:
    """:func:`compare`'s "no guess yet": ``...`` (the learner edition's scaffold), or a per-label guess
    whose every value is ``...``. ``None`` is a guess like any other value there: a stop reason, a
    result, a text can be ``None``, and a learner who writes ``None`` has guessed."""
    if isinstance(value, Mapping):
        return all(v is Ellipsis for v in value.values())
    return value is Ellipsis


_LABEL_WIDTH = 15  # the narrowest label column; a longer label widens it
_VALUE_WIDTH = 18  # the narrowest value column; a longer value widens it


def _widths(
    lines: Sequence[tuple[str, object, object]], unguessed: Callable[[object], bool] = _no_guess
) -> tuple[int, int]:
    """Column widths that fit every label and value of ``lines``, with at least two spaces after each."""
    label = max([_LABEL_WIDTH - 1, *(len(what) for what, _, _ in lines)]) + 1
    values = [
        len(_forms.shown(a, b)) for _, said, was in lines for a, b in ((said, was), (was, said)) if not unguessed(a)
    ]
    return label, max([_VALUE_WIDTH - 1, *values]) + 1


def _line(
    what: str,
    said: object,
    was: object,
    widths: tuple[int, int] | None = None,
    unguessed: Callable[[object], bool] = _no_guess,
    words: tuple[str, str] | None = None,
) -> str:
    label, value = widths or _widths([(what, said, was)], unguessed)
    if unguessed(said):
        return f"{what:<{label}} {_no_guess_text()}"
    mark = _("right") if same(said, was) else _("not this time")
    said, was = _forms.shown(said, was), _forms.shown(was, said)  # '2' beside 2: never alike
    you_said, it_was = words or (_("you said"), _("it was"))
    line = f"{what:<{label}} {you_said} {said!s:<{value}} {it_was} {was!s:<{value}} {mark}"
    if len(line) <= _LINE_WIDTH:
        return line
    # too wide for a notebook's output area, which would wrap it mid-word: "it was" goes under
    # "you said", and the verdict ends the second line
    lead = max(len(you_said), len(it_was))
    second = f"{'':<{label}} {it_was:<{lead}} {was!s:<{value}} {mark}"
    if len(second) > _LINE_WIDTH:  # the padding would push the verdict past the edge: two spaces are enough
        second = f"{'':<{label}} {it_was:<{lead}} {was!s}  {mark}"
    return f"{what:<{label}} {you_said:<{lead}} {said!s}\n{second}"


def _event_text(event: EventGuess) -> str:
    kind, name, count = event
    return f"{kind} {name} {count}"


def _count_meaning(kind: str) -> str | None:
    """What a ``kind`` event's count counts (chapter 8's anatomy of an event), for a line after a wrong count."""
    meanings = {
        "ModelCall": _("the model calls admitted so far, this one included"),
        "Middleware": _("the calls the middleware has observed so far, all tools together, this one included"),
        "ToolCall": _("the tool attempts admitted so far, all tools together, this one included"),
        "PermissionDenied": _("the tool attempts admitted before the refused call"),
        "ToolBudget": _("the tool attempts admitted: the limit that was reached"),
        "RepeatedCall": _("the attempts this one signature already had: the per-signature limit"),
        "ModelBudget": _("the model calls admitted: the limit that was reached"),
        "DeadlineExceeded": _("the tool attempts admitted when the deadline passed"),
        "ProviderUnavailable": _("the model calls admitted, the one that failed included"),
    }
    return meanings.get(kind)


def _events_diff(said: tuple[EventGuess, ...], was: tuple[EventGuess, ...], label: int = _LABEL_WIDTH) -> list[str]:
    """Predicted against recorded events, aligned on each event's kind and name, so one forgotten event
    does not shift the rest and a wrong count is shown on its own event's row. The ``think:`` lines come
    from what was recorded: after a wrong count, what that kind's count counts; after a wrong name, the
    names the run gave that kind; after an event it did not record, the counts it recorded for that kind
    and name, or that it recorded none; after an event the guess left out, how many of that kind each side
    has and the event it came right after (one line each, for the first such event)."""
    you_said, it_was = _("you said"), _("it was")
    width = max([len(_event_text(e)) for e in (*said, *was)] + [len(you_said), len(it_was)]) + 2
    events = _("events")
    lines = [f"{events:<{label}} {you_said:<{width}}{it_was:<{width}}"]
    miscounted: list[str] = []
    renamed: list[EventGuess] = []
    unrecorded: list[EventGuess] = []
    left_out: list[int] = []  # where, in the run's events, an event the guess does not have

    def row(left: str, right: str, mark: str) -> None:
        lines.append(f"{'':<{label}} {left:<{width}}{right:<{width}}{mark}")

    def pair(guess: EventGuess, event: EventGuess) -> None:
        if guess == event:
            row(_event_text(guess), _event_text(event), _("right"))
            return
        row(_event_text(guess), _event_text(event), _("not this time"))
        if guess[:2] == event[:2] and event[0] not in miscounted:  # the same event, counted otherwise
            miscounted.append(event[0])
        elif guess[0] == event[0] and all(guess[1] != name for kind, name, _c in was if kind == guess[0]):
            renamed.append(guess)  # the same kind, under a name the run never gave it
        elif guess[:2] != event[:2]:
            unrecorded.append(guess)

    kinds_and_names = [event[:2] for event in said], [event[:2] for event in was]
    matcher = difflib.SequenceMatcher(None, *kinds_and_names, autojunk=False)
    for _op, i1, i2, j1, j2 in matcher.get_opcodes():
        left, right = said[i1:i2], was[j1:j2]
        for k in range(max(len(left), len(right))):
            if k < len(left) and k < len(right):
                pair(left[k], right[k])
            elif k < len(left):  # an event the run recorded as often as guessed is only in another place
                moved = was.count(left[k]) >= said.count(left[k])
                row(_event_text(left[k]), "-", _("in another place") if moved else _("not recorded"))
                if not moved:
                    unrecorded.append(left[k])
            else:
                moved = said.count(right[k]) >= was.count(right[k])
                row("-", _event_text(right[k]), _("in another place") if moved else _("you left it out"))
                if not moved:
                    left_out.append(j1 + k)
    if label > len(events) and any(len(line) > _LINE_WIDTH for line in lines):
        return _events_diff(said, was, len(events))  # too wide for the output area: the rows start nearer its edge
    for kind in miscounted:
        meaning = _count_meaning(kind)
        if meaning is not None:
            lines.append(_("think: a {kind} event's count is {meaning}").format(kind=kind, meaning=meaning))
    lines.extend(_recorded_lines(renamed[:1], unrecorded[:1], was))
    lines.extend(_left_out_lines(left_out[:1], said, was))
    if said != was and sorted(said) == sorted(was):
        lines.append(_("think: the run recorded every event you listed, each as often, but in another order"))
    stop = was[-1] if was and was[-1][0] in StopReason._value2member_map_ else None
    if stop is not None and stop in said[:-1]:  # events guessed after the stop the run ended on
        lines.append(
            _("think: the run records nothing after its stop, {event}: the first stop wins").format(
                event=_event_text(stop)
            )
        )
    return lines


def _left_out_lines(places: Sequence[int], said: Sequence[EventGuess], was: Sequence[EventGuess]) -> list[str]:
    """For a recorded event the guess does not have (by its place in ``was``): how many events of that kind
    the run recorded and the guess listed, and the event it came right after: ``think:`` lines."""
    lines = []
    for place in places:
        kind = was[place][0]
        counts = {"recorded": sum(e[0] == kind for e in was), "listed": sum(e[0] == kind for e in said)}
        if place == 0:
            line = _(
                "think: {kind} events, the run recorded {recorded} and your list {listed}; the one you left out,"
                " {event}, is the run's first event"
            )
        else:
            line = _(
                "think: {kind} events, the run recorded {recorded} and your list {listed}; the one you left out,"
                " {event}, came right after {previous}"
            )
        lines.append(
            line.format(
                kind=kind,
                event=_event_text(was[place]),
                previous=_event_text(was[place - 1]) if place else "",
                **counts,
            )
        )
    return lines


def _recorded_lines(
    renamed: Sequence[EventGuess], unrecorded: Sequence[EventGuess], was: Sequence[EventGuess]
) -> list[str]:
    """What the run recorded, for a guessed event under another name or one it did not record: ``think:`` lines."""
    lines = []
    for kind, name, _count in renamed:
        names = ", ".join(dict.fromkeys(n for k, n, _c in was if k == kind))
        lines.append(
            _("think: the run named its {kind} events {names}, not {name}").format(kind=kind, names=names, name=name)
        )
    for kind, name, count in unrecorded:
        counts = [str(c) for k, n, c in was if (k, n) == (kind, name)]
        if (kind, name, count) in was:  # recorded, but fewer times or in another place than guessed
            line = _(
                'think: the run\'s {kind} events for {name} count {counts}, in the order of the "it was" column'
            ).format(kind=kind, name=name, counts=", ".join(counts))
        elif counts:
            line = _("think: the run recorded no {event}: its {kind} events for {name} count {counts}").format(
                event=_event_text((kind, name, count)), kind=kind, name=name, counts=", ".join(counts)
            )
        else:
            line = _("think: the run recorded no {kind} event for {name}").format(kind=kind, name=name)
        lines.append(line)
    return lines


# -- feedback computed from the run (labkit.teaching.explain) ------------------------------------


def _feedback(
    outcome: RunOutcome,
    status: Any,
    tool_calls: Any,
    events: Any,
    goal: bool = False,
) -> tuple[str, ...]:
    """The ``think:`` lines after wrong guesses; every cause they name is measured by
    :func:`~labkit.teaching.explain.explain`. A value that cannot be read (:class:`~labkit.teaching.forms.Unreadable`)
    gets the line saying why; with ``goal``, the values are an ending aimed for (:mod:`labkit.teaching.goals`)."""
    lines = [v.problem for v in (status, tool_calls, events) if isinstance(v, _forms.Unreadable)]
    status = None if isinstance(status, _forms.Unreadable) else status
    tool_calls = None if isinstance(tool_calls, _forms.Unreadable) else tool_calls
    events = None if isinstance(events, _forms.Unreadable) else events
    if goal:
        from .goals import design_feedback  # reruns only after a missed ending

        lines.extend(design_feedback(outcome, status, tool_calls))
        return tuple(_("think: {line}").format(line=line) for line in lines)
    wrong_status = status is not None and status != outcome.status.value
    wrong_count = tool_calls is not None and tool_calls != outcome.count("ToolCall")
    if wrong_status or wrong_count:
        from .explain import count_feedback, explain, status_feedback  # reruns only after a wrong guess

        explanation = explain(outcome)
        if wrong_status:
            lines.extend(status_feedback(explanation, status))
        if wrong_count:
            # the status stays hidden while it is not guessed: the count's line then names no rule
            lines.extend(count_feedback(explanation, tool_calls, name_rule=status is not None))
    if events is not None:
        recorded = {e.kind.value for e in outcome.events}
        guessed = {kind for kind, _, _ in events}
        if "Middleware" in recorded and "Middleware" not in guessed:
            # true of every run: a call for no tool, or in a reply that is not run, reaches no middleware
            lines.append(
                _(
                    "a call the guard sees passes the middleware first (a Middleware event),"
                    " even a call the guard then refuses"
                )
            )
    return tuple(_("think: {line}").format(line=line) for line in lines)


# -- checks ---------------------------------------------------------------------------------------


class Comparison(NamedTuple):
    """One guessed value next to what happened (``said`` is ``...`` when there is no guess yet).

    ``meaning`` and ``runs`` are what the calling code said the value is (:func:`compare`); printed,
    every wrong guess ends with one ``think:`` line per wrong value (:mod:`labkit.teaching.reasons`).
    """

    what: str
    said: Any
    was: Any
    meaning: str | None = None
    runs: Any = None

    @property
    def guessed(self) -> bool:
        """A guess was given (anything but ``...``; ``None`` is a guess here, see :func:`compare`)."""
        return not _unguessed(self.said)

    @property
    def right(self) -> bool:
        """The guess equals what happened (``False`` without a guess); one guess per label is right
        only when every label is guessed (not ``...``) and right."""
        if not self.guessed:
            return False
        if isinstance(self.said, Mapping) and isinstance(self.was, Mapping):
            return self.said.keys() == self.was.keys() and all(
                self.said[key] is not Ellipsis and same(self.said[key], self.was[key]) for key in self.was
            )
        return same(self.said, self.was)

    def __str__(self) -> str:
        return fit(self._text())  # a line wider than the output area is wrapped at words (labkit.teaching.layout)

    def _text(self) -> str:
        self = self._replace(what=_label(self.what))  # shown in the notebook's language (recorded in English)
        if not self.guessed:  # one line while the predict cell is empty, even for one guess per label
            return _line(self.what, ..., self.was, unguessed=_unguessed)
        if isinstance(self.said, Mapping) and isinstance(self.was, Mapping):
            # one guess per label (e.g. per runtime): one aligned line per label of the run; a label
            # the guess leaves out is no guess yet for that label (as in check), never "not this time"
            keys = list(self.was) + [key for key in self.said if key not in self.was]
            lines = [
                (f"{self.what} [{key}]", self.said.get(key, ...), self.was.get(key, _forms.ABSENT)) for key in keys
            ]
            widths = _widths(lines, _unguessed)
            text = [_line(*line, widths, _unguessed) for line in lines]
            for key, (what, said, was) in zip(keys, lines, strict=True):
                if _unguessed(said):
                    continue
                if key not in self.was:
                    text.append(_("think: {what}: no value is labelled {key}").format(what=what, key=key))
                    continue
                text.extend(reasons(what, said, was, self.meaning, self.runs, key))
            return "\n".join(text)
        text = [_line(self.what, self.said, self.was, unguessed=_unguessed)]
        if is_sequence(self.said) and is_sequence(self.was) and not same(self.said, self.was):
            # a wrong list, item by item: [1], [2], ... (an item one list has not shows as -)
            items = [
                (f"{self.what} [{i + 1}]", _at(self.said, i), _at(self.was, i))
                for i in range(max(len(self.said), len(self.was)))
            ]
            widths = _widths(items, _unguessed)
            text.extend(_line(*item, widths, _unguessed) for item in items)
        text.extend(reasons(self.what, self.said, self.was, self.meaning, self.runs, None))
        return "\n".join(text)

    def _repr_pretty_(self, printer: object, cycle: bool) -> None:
        printer.text(str(self))  # type: ignore[attr-defined]


class Check(NamedTuple):
    """A prediction next to what happened.

    ``predicted_status`` / ``predicted_tool_calls`` are ``None`` when the
    learner has not guessed yet (or, for the count, when it was not asked).

    Attributes:
        predicted_events: the predicted ``(kind, name, count)`` events; ``None``
            when events were not asked for, ``...`` when asked but not guessed yet.
        actual_events: the recorded events as ``(kind, name, count)``.
        feedback: after a wrong guess, ``"think: ..."`` lines computed from the
            run: the rule that decided, the rules that would also have refused,
            why not the guess (empty when right or not guessed).
        asked_tool_calls: the ToolCall count was asked for (``check(..., tool_calls=...)``);
            ``False`` when only the status (and maybe the events) is judged.
        goal: the status and count are an ending the learner's own design aims for (``check(..., goal=True)``),
            not a guess: the lines read "aimed for", and the hints speak of the design.
    """

    predicted_status: str | None
    actual_status: str
    predicted_tool_calls: int | None
    actual_tool_calls: int
    predicted_events: Any = None
    actual_events: tuple[EventGuess, ...] = ()
    feedback: tuple[str, ...] = ()
    asked_tool_calls: bool = True
    goal: bool = False

    @property
    def guessed(self) -> bool:
        """Every guess asked for was given: the status, the count (when asked) and the events (when asked)."""
        return (
            self.predicted_status is not None
            and (self.predicted_tool_calls is not None or not self.asked_tool_calls)
            and self.predicted_events is not Ellipsis
        )

    @property
    def right(self) -> bool:
        """The status was predicted, and the ToolCall count and the events, when they were asked for."""
        return (
            self.guessed
            and self.predicted_status == self.actual_status
            and (self.predicted_tool_calls == self.actual_tool_calls or not self.asked_tool_calls)
            and (self.predicted_events is None or self.predicted_events == self.actual_events)
        )

    @property
    def unguessed(self) -> bool:
        """No guess was given at all (the predict cell still holds ``...``)."""
        return (
            self.predicted_status is None
            and self.predicted_tool_calls is None
            and self.predicted_events in (None, Ellipsis)
        )

    def _no_guess_line(self, label: str = "") -> str:
        what = _("the status") + (_(" and the ToolCall count") if self.asked_tool_calls else "")
        what += _(" and the events") if self.predicted_events is Ellipsis else ""
        return _("no guess yet{label} for {what}: {how}").format(label=label, what=what, how=_how_to_guess())

    def __str__(self) -> str:
        return fit(self._text())  # a line wider than the output area is wrapped at words (labkit.teaching.layout)

    def _text(self) -> str:
        if self.unguessed:  # one line, not one per value, while the predict cell is empty
            return self._no_guess_line()
        pairs: list[tuple[str, object, object]] = [(_("status"), self.predicted_status, self.actual_status)]
        if self.asked_tool_calls:
            pairs.append((_("ToolCall count"), self.predicted_tool_calls, self.actual_tool_calls))
        widths = _widths(pairs)  # one column width for both lines, sized to their content
        words = (_("aimed for"), _("it was")) if self.goal else None
        lines = [_line(*pair, widths, words=words) for pair in pairs]
        if self.predicted_events is Ellipsis:
            events = _("events")
            lines.append(f"{events:<{widths[0]}} {_no_guess_text()}")
        elif self.predicted_events is not None and not isinstance(self.predicted_events, _forms.Unreadable):
            lines.extend(_events_diff(self.predicted_events, self.actual_events, widths[0]))
        lines.extend(self.feedback)
        return "\n".join(lines)

    def _repr_pretty_(self, printer: object, cycle: bool) -> None:
        printer.text(str(self))  # type: ignore[attr-defined]


class Checks(tuple):
    """Several labelled :class:`Check` results, e.g. one per agent.

    Prints one block per distinct verdict, headed by the labels it is true for (``[simple, harness]``),
    in the order the labels came; index by label (``checks["simple"]``) for one run's :class:`Check`.
    """

    __slots__ = ()

    def __new__(cls, items: Mapping[str, Check] | tuple[tuple[str, Check], ...]) -> Checks:
        pairs = tuple(items.items()) if isinstance(items, Mapping) else tuple(items)
        return super().__new__(cls, pairs)

    @property
    def right(self) -> bool:
        """Every labelled check is right."""
        return all(c.right for _, c in self)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            for label, c in self:
                if label == key:
                    return c
            raise KeyError(key)
        return super().__getitem__(key)

    def __str__(self) -> str:
        return fit(self._text())  # a line wider than the output area is wrapped at words (labkit.teaching.layout)

    def _text(self) -> str:
        if self and all(c.unguessed for _, c in self):  # one line for the whole cell while nothing is guessed
            return self[0][1]._no_guess_line(f" ({', '.join(label for label, _ in self)})")
        # Runs whose verdicts read the same share one block: six identical blocks hide the one that differs.
        groups: dict[str, list[str]] = {}
        for label, c in self:
            groups.setdefault(c._text(), []).append(label)
        return "\n".join(f"[{', '.join(labels)}]\n{text}" for text, labels in groups.items())

    def __repr__(self) -> str:
        return f"Checks({', '.join(f'{label}: right={c.right}' for label, c in self)})"

    def _repr_pretty_(self, printer: object, cycle: bool) -> None:
        printer.text(str(self))  # type: ignore[attr-defined]


def _triples(events: Sequence[ControlEvent]) -> tuple[EventGuess, ...]:
    return tuple((e.kind.value, e.name, e.count) for e in events)


def _events_guess(events: Any) -> Any:
    if events is None or events is Ellipsis:
        return events
    return _forms.events_form(events)


def _check_one(
    outcome: RunOutcome, status: Any, tool_calls: Any, events: Any, asked_tool_calls: bool = True, goal: bool = False
) -> Check:
    said_status = None if _no_guess(status) else status
    said_tools = None if _no_guess(tool_calls) or not asked_tool_calls else tool_calls
    said_events = None if events is Ellipsis else events
    return Check(
        said_status,
        outcome.status.value,
        said_tools,
        outcome.count("ToolCall"),
        events,
        _triples(outcome.events),
        _feedback(outcome, said_status, said_tools, said_events, goal),
        asked_tool_calls,
        goal,
    )


class _NotAsked:
    """The default of :func:`check`'s ``tool_calls`` and ``events``: not asked for. A default of its own,
    so that a learner's ``my_tool_calls = None`` reads as no guess yet, never as "not asked" (which
    would leave the count out and call the check right)."""

    def __repr__(self) -> str:
        return "<not asked>"


NOT_ASKED: Any = _NotAsked()


def check(
    outcome: RunOutcome | Mapping[str, RunOutcome],
    *,
    status: str | None = None,
    tool_calls: int | None = NOT_ASKED,
    events: Sequence[tuple[str, str, int] | ControlEvent] | None = NOT_ASKED,
    what: str | None = None,
    chapter: str | None = None,
    goal: bool = False,
) -> Check | Checks:
    """Compare a prediction with ``outcome`` (or with each of several labelled outcomes).

    Args:
        outcome: the run, or ``{label: outcome}`` (e.g. one per agent) to
            check one prediction against each.
        status: the predicted status, e.g. ``"RepeatedCall"`` (a :class:`RunStatus`
            value); ``...`` or ``None`` means "no guess yet". With several outcomes,
            one guess for all or ``{label: status}``, one per run.
        tool_calls: the predicted number of ``ToolCall`` events (a whole number: ``2`` or ``2.0``);
            ``...`` or ``None`` means "no guess yet"; left out, the count is not asked for and
            only the status (and the events, if given) is judged. With several
            outcomes, one for all or ``{label: count}``.
        events: optional: the predicted events in order, as ``(kind, name,
            count)`` tuples, e.g. ``[("ModelCall", "model", 1),
            ("Middleware", "read_ticket", 1), ...]``; the printed check then
            holds a line-by-line diff. Left out, events are not asked for;
            ``...`` or ``None`` means "no guess yet".
        what: the prediction's name in your progress (:func:`labkit.progress`); default
            ``"status and ToolCall count"`` (``"status, ToolCall count and events"`` with events),
            told apart from other checks by the notebook cell it runs in.
        chapter: the chapter to record it under when the notebook's name is not known (a script).
        goal: ``status`` (and ``tool_calls``) are the ending the learner's own design aims for (their hosts,
            their scenario), not a guess: each line reads "aimed for", and after a miss the ``think:`` lines say
            what the design let through and what the ending needs (:mod:`labkit.teaching.goals`).

    A value in a form that cannot be the answer (``"two"`` for a count, ``"Complete"`` for a status) is
    no error: the check shows it, is not right, and a ``think:`` line says why (:mod:`labkit.teaching.forms`).
    A count written as a text of digits (``"2"``) is that number.

    Each check is recorded in your progress (:mod:`labkit.teaching.progress`: a local file in your
    own copy of the workbook, never in the repository, sent nowhere): tried or not, right or not.

    Returns:
        A :class:`Check`, or :class:`Checks` for a mapping. Without a guess the
        printed line asks for one and does not reveal the answer. After a
        wrong guess the printed check ends with ``think: ...`` lines computed
        from the run (:func:`labkit.teaching.explain.explain`): the rule that
        decided, with the run's numbers (e.g. ``"the tool budget decided: it
        refused read_ticket(input=5), 4 of 4 attempts already admitted"``), the
        rules that would also have refused (``"... would also have refused that
        call ..., but the guard asks the tool budget first"``, or ``"without the
        tool budget, ... would have refused model call 7 later"``), and why the
        guessed status did not happen, from the counters. Working out the
        "also" rules re-runs the same script (a few runs, each watched at most
        0.5 s); only after a wrong guess.

    Raises:
        InputError: ``status`` is not a status name (the message lists them),
            ``tool_calls`` is not a whole number, ``events`` is not a list of
            ``(kind, name, count)`` with known kinds, or ``outcome`` is not a
            RunOutcome (a Setup, a scenario or a mystery must be run first) or is an
            empty mapping, or a per-label guess names a label no run has (or is given
            for a single outcome). (``InputError`` is a ``ValueError``.)
    """
    asked = tool_calls is not NOT_ASKED  # left out: the count is not asked for; ``...`` or None: asked, no guess yet
    tool_calls = None if not asked else tool_calls
    events_asked = events is not NOT_ASKED
    guess = _events_guess(... if events is None else events) if events_asked else None
    result: Check | Checks
    if isinstance(outcome, Mapping):
        pairs = _inputs.outcomes(outcome, "check")
        labels = [label for label, _ in pairs]
        statuses = _per_label("status", status, labels, _status_guess)
        counts = _per_label("tool_calls", tool_calls, labels, _count_guess)
        result = Checks(
            {label: _check_one(o, statuses[label], counts[label], guess, asked, goal) for label, o in pairs}
        )
        attempted = all(c.guessed for _, c in result)
    else:
        if isinstance(status, Mapping) or isinstance(tool_calls, Mapping):
            raise InputError("one guess per label needs one outcome per label: pass {label: outcome}")
        result = _check_one(
            _inputs.outcome(outcome, "check"), _status_guess(status), _count_guess(tool_calls), guess, asked, goal
        )
        attempted = result.guessed
    label = what or _check_label(events_asked, asked)
    _progress.record("check", label, attempted=attempted, right=result.right, chapter=chapter)
    return result


def _check_label(events: bool, tool_calls: bool) -> str:
    """A check's name in the progress file: what it asked for (``"status and ToolCall count"``)."""
    asked = ["status", *(["ToolCall count"] if tool_calls else []), *(["events"] if events else [])]
    return ", ".join(asked[:-1]) + " and " + asked[-1] if len(asked) > 1 else asked[0]


def _status_guess(status: Any) -> Any:
    """The status named by a guess, or the guess itself when there is none yet (``...``, ``None``).

    A name is judged as :func:`~labkit.teaching.reasons.same` judges texts: ``"repeatedcall "``
    names ``RepeatedCall``, since no two statuses differ only in case or spaces around them."""
    if _no_guess(status):
        return status
    return _forms.status_form(status)


def _count_guess(tool_calls: Any) -> Any:
    if _no_guess(tool_calls):
        return tool_calls
    return _forms.count_form(tool_calls)  # a numpy count from a table, 2.0 and "2" are 2


def _per_label(name: str, guess: Any, labels: list[str], valid: Callable[[Any], Any]) -> dict[str, Any]:
    """One guess for every label: the same guess for all, or ``{label: guess}`` (a missing label: no guess yet)."""
    if not isinstance(guess, Mapping):
        return dict.fromkeys(labels, valid(guess))
    guess = relabelled(guess, labels)  # "Harness " names the run labelled harness
    unknown = [str(label) for label in guess if label not in labels]
    if unknown:
        raise InputError(
            f"{name}: no run is labelled {', '.join(map(repr, unknown))}; the runs are: {', '.join(labels)}"
        )
    return {label: valid(guess.get(label)) for label in labels}


def _at(values: Sequence[Any], index: int) -> Any:
    return values[index] if index < len(values) else _forms.ABSENT


def _plain(value: Any) -> Any:
    """``value``, or each value of a mapping, in the form it is judged and printed in (``reasons.as_answer``)."""
    if isinstance(value, Mapping):
        return {key: as_answer(item) for key, item in value.items()}
    return as_answer(value)


def compare(
    what: str,
    guess: Any,
    actual: Any,
    *,
    meaning: str | None = None,
    runs: RunOutcome | Mapping[str, RunOutcome] | None = None,
    chapter: str | None = None,
) -> Comparison:
    """Compare any one guessed value with what happened (e.g. admitted attempts).

    Args:
        what: a short label, e.g. ``"admitted"``; also the prediction's name in your progress.
        guess: the learner's guess; ``...`` means "no guess yet" (``None`` is a guess like any other
            value: a stop reason or a result can be ``None``).
            A mapping compared with a mapping (one guess per label, e.g. per
            runtime) prints one aligned line per label, ``what [label]``; a label
            the guess leaves out is "no guess yet" for that label (as in :func:`check`),
            a guessed label no value has shows ``it was -``. It is right only if every
            label is guessed and right.
            A list or tuple compared with a list or tuple is judged item by item, by position.
        actual: the observed value.
        meaning: what the value is, when the reason should say it (:mod:`labkit.teaching.reasons`):
            ``"exit code"`` (the console's closed set: what each code means), ``"status"``, an event
            kind such as ``"ModelCall"`` (a count of those events; with ``runs=``, where it comes
            from), ``"Middleware count"`` (an event's own count), a short name the chapters use
            (``"bodies"``, ``"attempts"``, ``"text kept"``...: ``reasons.NAMED_MEANINGS``), or a
            sentence of your own saying what the value counts. ``None``: the reason says only what the two values show.
        runs: with an event kind as ``meaning``, the run the count was read from, or
            ``{label: run}`` for one count per label.
        chapter: the chapter to record it under when the notebook's name is not known (a script).

    The comparison is recorded in your progress, as :func:`check` is (:func:`labkit.progress`).

    Returns:
        A :class:`Comparison`; printed, one line (one per label; for a wrong list, one per item
        too), and after every wrong guess one ``think:`` line per wrong value or group of wrong
        items: what differs (a type, the order, items left out, how many too many), and what the
        values mean when ``meaning`` says it. A guess is right when it means the answer
        (:func:`labkit.teaching.reasons.same`): a text with spaces around it or in another case,
        ``2.0`` or a numpy number for ``2``, a tuple for a list, an exception class for its name.
        ``compare`` does not know where ``actual`` came from, so it names no cause the calling code
        did not give it.

    Raises:
        InputError: ``meaning`` is not a text, or ``runs`` is given without an event kind as
            ``meaning`` or is not a RunOutcome (or ``{label: RunOutcome}``).
    """
    try:
        check_meaning(meaning, runs)
    except MeaningError as exc:
        raise InputError(str(exc)) from None
    guess, actual = _plain(guess), _plain(actual)  # a numpy array or a pandas Series is its list of values
    if isinstance(guess, Mapping) and isinstance(actual, Mapping):
        guess = relabelled(guess, actual)  # "Function" names the value labelled function
    result = Comparison(what, guess, actual, meaning, runs)
    _progress.record("compare", str(what), attempted=result.guessed, right=result.right, chapter=chapter)
    return result


# -- mystery scripts ------------------------------------------------------------------------------


def _describe_call(call: Call) -> str:
    if isinstance(call.arguments, str):
        return _("{tool} with raw arguments {arguments}").format(tool=call.name, arguments=call.arguments)
    arguments = ", ".join(f"{key}={value!r}" for key, value in call.arguments.items())
    return f"{call.name}({arguments})"


def _describe_step(step: Step) -> str:
    then = _(", then ")
    if isinstance(step, str):
        return _('answers "{text}" (no tool call)').format(text=step)
    if isinstance(step, Say):
        return _('answers "{text}" (no tool call)').format(text=step.text)
    if isinstance(step, Call):
        return _("asks for {call}").format(call=_describe_call(step))
    if isinstance(step, Hang):
        return _("never answers")
    if isinstance(step, Fail):
        return _("fails to connect ({error})").format(error=type(step.error).__name__)
    if isinstance(step, Reply):
        asks = then.join(_describe_call(c) for c in step.calls)
        return _('answers "{text}" and asks for {calls}').format(text=step.text, calls=asks)
    calls = list(step)
    return _("asks for {n} calls in one reply: {calls}").format(
        n=len(calls), calls=then.join(_describe_call(c) for c in calls)
    )


class _Forever:
    """A step function for a model that never runs out, with its rule in words."""

    def __init__(self, words: str, step: Callable[[int], Step]) -> None:
        self.words = words
        self._step = step

    def __call__(self, number: int, request: ChatRequest) -> Step:
        return self._step(number)


@dataclass(frozen=True)
class Mystery:
    """A hidden scenario: a scripted model, the host's limits and grants, and no name.

    Show it (as a cell's value, or ``print``) to read its step list; predict
    the status, the ``ToolCall`` count and the events; then :meth:`run` it
    and :func:`check` your prediction.

    Attributes:
        key: ``"A"``, ``"B"``, ... (see :func:`mysteries`).
        script: the scripted model: a list of steps, or a rule for every call.
        limits: the run's limits.
        capabilities: the capabilities the host grants.
    """

    key: str
    script: Sequence[Step] | _Forever
    limits: Limits = Limits()
    capabilities: frozenset[str] = ALL_CAPABILITIES

    @property
    def steps(self) -> tuple[str, ...]:
        """The model's behaviour in words, one line per model call (or one rule for every call)."""
        if isinstance(self.script, _Forever):
            return (_(self.script.words),)
        return tuple(
            _("call {n}: {step}").format(n=n, step=_describe_step(step)) for n, step in enumerate(self.script, start=1)
        )

    def scenario(self) -> Scenario:
        """The mystery as a :class:`~labkit.Scenario` (named ``"mystery A"``, its summary hidden)."""
        return Scenario(
            f"mystery {self.key}",
            "a mystery script: read its steps, limits and grants",
            self.script,
            self.limits,
            self.capabilities,
        )

    def run(self, agent: str = "harness") -> RunOutcome:
        """Run the mystery once with ``agent`` (``"harness"`` or ``"simple"``) and return its outcome.

        Raises:
            UserError: an unknown agent.
        """
        from ..loops.runner import run  # the runner is core; imported here so predict stays import-light

        return run(self.scenario(), agent=agent)  # type: ignore[arg-type]

    def __str__(self) -> str:
        granted = ", ".join(sorted(self.capabilities)) or _("nothing")
        tools = _("Tools visible to the model: read_ticket (needs ticket.read), finish_review (needs review.finish)")
        lines = [
            _("Mystery {key}").format(key=self.key),
            _("The model, one step per model call:"),
            *(f"  {line}" for line in self.steps),
            _("Limits: {limits}").format(limits=self.limits),
            _("Granted: {granted}").format(granted=granted),
            tools,
        ]
        return fit("\n".join(lines))  # wrapped at words to the output area (labkit.teaching.layout)

    def __repr__(self) -> str:
        return f"Mystery({self.key!r})"

    def _repr_pretty_(self, printer: object, cycle: bool) -> None:
        printer.text(str(self))  # type: ignore[attr-defined]


_READ_42 = Call("read_ticket", {"input": 42})
_FINISH_42 = Call("finish_review", {"input": 42})
_DONE = "Review finished."

_MYSTERIES = (
    # Reads, then claims success: the host condition decides (Incomplete).
    Mystery("A", (_READ_42, _DONE)),
    # The broken record with two attempts per signature (RepeatedCall after 2 admitted).
    Mystery(
        "B",
        _Forever(N_("every call: asks for read_ticket(input=42)"), lambda n: _READ_42),
        Limits(repetitions=2),
    ),
    # Reads the wrong ticket first, then does the job, with two tool attempts: NotFound is a result
    # that costs an attempt, so the finish is the third attempt (ToolBudget).
    Mystery("C", (Call("read_ticket", {"input": 7}), _READ_42, _FINISH_42, _DONE), Limits(tool_calls=2)),
    # Two ids in turn, two attempts each: budget and repetition would both refuse call 5;
    # the guard asks the budget first (ToolBudget).
    Mystery(
        "D",
        _Forever(
            N_("call n: asks for read_ticket(input=42) when n is odd, read_ticket(input=7) when n is even"),
            lambda n: Call("read_ticket", {"input": 42 if n % 2 else 7}),
        ),
        Limits(repetitions=2),
    ),
    # Both tools in one reply (Completed with two model calls).
    Mystery("E", ([_READ_42, _FINISH_42], _DONE)),
    # A new id every call, with two model calls and two tool attempts: the model budget refuses first.
    Mystery(
        "F",
        _Forever(N_("call n: asks for read_ticket(input=n)"), lambda n: Call("read_ticket", {"input": n})),
        Limits(model_calls=2, tool_calls=2),
    ),
    # The well-behaved model, review.finish not granted (PermissionDenied after one admitted read).
    Mystery("G", (_READ_42, _FINISH_42, _DONE), capabilities=frozenset({"ticket.read"})),
    # Does the whole job, then never sends its final reply: the work is done, but the deadline
    # decides (DeadlineExceeded, not Completed).
    Mystery("H", (_READ_42, _FINISH_42, Hang()), Limits(deadline_s=0.3)),
    # The same call twice in one reply (RepeatedCall within one model call).
    Mystery("I", ([_READ_42, _READ_42], _FINISH_42, _DONE)),
    # Does the whole job, then the endpoint fails on the last model call: the work is done, but the
    # failure decides (ProviderUnavailable, not Completed).
    Mystery("J", (_READ_42, _FINISH_42, Fail(ConnectionError("connection refused")))),
    # The same endpoint failure, with two model calls allowed: the third call is refused before it is
    # sent, so the endpoint is never asked and cannot fail (ModelBudget, not ProviderUnavailable).
    Mystery("K", (_READ_42, _FINISH_42, Fail(ConnectionError("connection refused"))), Limits(model_calls=2)),
)
_BY_KEY = {m.key: m for m in _MYSTERIES}


def mysteries() -> tuple[str, ...]:
    """The keys of the mystery scripts, in order: ``("A", "B", ...)``."""
    return tuple(_BY_KEY)


def mystery(key: str) -> Mystery:
    """Return the mystery script called ``key`` (``"A"``, ``"B"``, ...; lower case works too).

    Raises:
        UnknownScenarioError: no such mystery; the message lists the keys.
    """
    found = _BY_KEY.get(key.upper()) if isinstance(key, str) else None
    if found is None:
        raise UnknownScenarioError(f"unknown mystery {key!r}; choose one of: {', '.join(_BY_KEY)}")
    return found
