"""Break the guard (chapter 10): a learner's guard, tried call by call and under every interleaving.

The learner writes a guard, a subclass of :class:`GuardBase` with an
``admit(call, body)`` method, and :func:`check_guard` judges it from what it
does, never from where its author put a hint:

1. **Alone.** Fresh guards answer a fixed set of short scripts (limits,
   grants, calls whose bodies succeed, fail or see the run cancelled), one
   call after another; every answer is compared with the rules
   (:class:`~labkit.teaching.capstone.rules.Rules`: labkit's guard, stated
   for one call at a time). A wrong answer is explained by the known faults
   that give exactly the learner's answers on every script, or else shown as
   it ran. A body must start outside the guard's locks (labkit runs it
   after the reservation, outside the lock): a body started under one is
   the fault ``body_under_lock``, whatever the answers.
2. **Together.** Two threads call ``admit`` at once, in three races (the
   budget's last place, room for both, the same call twice; with three
   threads, the last two places too), under every schedule with at most two
   preemptions (:mod:`.explore`). A schedule
   passes if some order of the two calls, run one after the other, gives
   the same answers, the same bodies and the same answers to the calls
   after the race. A failing schedule is shown step by step, with what the
   threads held when they read and changed the guard's state.

The older one-budget form of the exercise, ``admit(body) -> bool``, is
checked the same way against the tool budget alone.

Bound and time: 2 preemptions (:data:`BOUND`); a correct guard takes 866
schedules and under a second (0.86 s measured), a wrong one usually stops
within a few dozen (docs/benchmarks.md, section 7); ``threads=3`` about 20 s.
"""

from __future__ import annotations

import contextlib
import dis
import enum
import inspect
import itertools
import re
import textwrap
import threading
import types
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ...core.errors import UserError
from .. import progress as _progress
from ..i18n import N_, _, ngettext
from . import explore as _explore
from . import limits as _limits
from . import signatures as _signatures
from .explore import Condition, Execution, Lock, RLock, Semaphore, current, thread_name, watched
from .rules import (
    BOOK_FAULTS,
    FAULTS,
    GRANTED,
    REFERENCE,
    REFUSAL,
    SIMPLE_FAULTS,
    Attempt,
    Books,
    Call,
    Fault,
    Rules,
    Script,
    attempt,
    scripts,
)

__all__ = ["BodyFailed", "GuardBase", "GuardReport", "check_guard", "pause"]

BOUND = 2
"""Preemptions per schedule that :func:`check_guard` explores (CHESS: most races need two at most)."""

MAX_SCHEDULES = 20_000
"""The most schedules one race may run; a search it stops is reported as incomplete."""


class GuardBase:
    """A starting point for the guard exercise: the limits, the grants, a count, a table and a lock.

    Subclass it and write ``admit(call, body)``, the guard in front of one
    tool call. Return ``body()``'s result when the call is admitted, or, without
    running the body, the reason it is refused: ``"Cancelled"`` (the run is
    cancelled: :attr:`cancelled`), ``"PermissionDenied"``, ``"ToolBudget"`` or
    ``"RepeatedCall"``. A body that raises lets its error through.

    Args:
        tool_calls: attempts the guard may admit in all.
        repetitions: attempts admitted per signature (tool name + canonical arguments).
        granted: the capability names the host grants.

    Attributes:
        tool_calls, repetitions, granted: as given.
        admitted: attempts admitted so far (starts at 0).
        seen: signature -> attempts admitted with it (starts empty).
        lock: a :class:`threading.Lock`, for ``with self.lock:``.
        limit: the same as ``tool_calls`` (the one-budget exercise, ``admit(body)``).
    """

    _labkit_cancelled = False  # set by the checker on the instance; here for guards that skip super().__init__
    _labkit_watch: frozenset[str] | None = None

    def __init__(self, tool_calls: int = 3, repetitions: int = 1, granted: Iterable[str] = GRANTED) -> None:
        self.tool_calls = tool_calls
        self.repetitions = repetitions
        self.granted = frozenset(granted)
        self.admitted = 0
        self.seen: dict[str, int] = {}
        self.lock = threading.Lock()

    @property
    def limit(self) -> int:
        """The tool budget, under its name in the one-budget exercise."""
        return self.tool_calls

    @property
    def cancelled(self) -> bool:
        """Whether the run was cancelled (its deadline passed); the checker sets it, your guard reads it."""
        ex = current()
        if ex is not None:
            ex.point()
        value = object.__getattribute__(self, "_labkit_cancelled")
        if ex is not None:
            ex.note(f"reads cancelled = {value}", name="cancelled", op="read")
        return value

    def admit(self, call: Attempt, body: Callable[[], object]) -> object:
        """Admit ``call`` and return ``body()``, or return why it is refused; write this in a subclass."""
        raise NotImplementedError(f"{type(self).__name__}.admit(call, body) is not written yet")

    # Under the checker, every read and write of the guard's state is a scheduling point: another
    # thread may run just before it. Outside the checker these two cost one thread-local lookup.

    def __getattribute__(self, name: str) -> Any:
        ex = current()
        if ex is None or name[:2] == "__" or name.startswith("_labkit_"):
            return object.__getattribute__(self, name)
        watch = object.__getattribute__(self, "_labkit_watch")
        if watch is not None and name not in watch:
            return object.__getattribute__(self, name)
        if watch is None and name not in object.__getattribute__(self, "__dict__"):
            return object.__getattribute__(self, name)
        ex.point()
        value = object.__getattribute__(self, name)
        if isinstance(value, (Lock, Condition, Semaphore)):
            return value
        scalar = isinstance(value, (int, float, str, type(None)))
        ex.note(f"reads {name}" + (f" = {_short(value)}" if scalar else ""), name=name, op="read", value=_seen(value))
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        ex = current()
        if ex is not None:
            ex.point()
        object.__setattr__(self, name, value)
        if ex is not None:
            ex.written.add(name)
            ex.note(f"{name} = {_short(value)}", name=name, op="write", value=_seen(value))
            if ex.observe is not None:
                ex.observe.update(name, value)  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} admitted={object.__getattribute__(self, 'admitted')}/{self.tool_calls}>"


def _seen(value: object) -> str:
    """A value as a schedule compares it: what a thread saw, to tell whether another changed it."""
    try:
        return repr(value)
    except Exception:  # a learner's object whose repr fails: compare by identity
        return f"<{type(value).__name__} {id(value):x}>"


class _Snapshots:
    """Notes a change of a container the guard holds (``self.log.append(...)``) as a write.

    Called at every scheduling point: whatever changed since the last point was changed by the
    thread that ran in between (only one runs at a time).
    """

    def __init__(self, guard: object) -> None:
        self.guard = guard
        from .explore import _WATCHED

        self.names = [
            n
            for n, v in vars(guard).items()
            if not n.startswith("_labkit_") and _mutable(v) and type(v) not in _WATCHED.values()
        ]
        self.last = {n: _seen(vars(guard).get(n)) for n in self.names}

    def update(self, name: str, value: object) -> None:
        if name in self.last:
            self.last[name] = _seen(value)

    def __call__(self, ex: Execution) -> None:
        state = vars(self.guard)
        for name in self.names:
            now = _seen(state.get(name))
            if now != self.last[name]:
                self.last[name] = now
                ex.note(f"changes {name}", name=name, op="write", value=now)


def _short(value: object) -> str:
    if not isinstance(value, (int, float, str, type(None))):
        return f"<{type(value).__name__}>"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def pause() -> None:
    """Stand for work a real guard may do between two steps (a log line, a database read).

    Under :func:`check_guard` it is one more point where another thread may
    run; elsewhere it does nothing. It never decides the verdict: the
    checker tries a switch at every read and write of the guard's state.
    """
    ex = current()
    if ex is not None:
        ex.point()
        ex.note("pause()", op="pause")


class BodyFailed(RuntimeError):
    """What a failing body raises in the checker: ``admit`` should let it through (the attempt still counts)."""


_RAN = "ran"


class _Body:
    def __init__(self, guard: object, behaviour: str, label: str) -> None:
        self.guard = guard
        self.behaviour = behaviour
        self.label = label
        self.entered = 0
        self.inside: Books = (None, None)  # the guard's books as the body (last) started
        self.result = _Result(label)

    def __call__(self) -> object:
        ex = current()
        if ex is not None:
            ex.point()
            ex.note("runs its body", op="body")
        self.entered += 1
        self.inside = _books_of(self.guard)
        if self.behaviour in ("cancels", "cancels_fails"):
            object.__setattr__(self.guard, "_labkit_cancelled", True)
        if self.behaviour in ("fails", "cancels_fails"):
            raise BodyFailed(f"the body of {self.label} failed")
        return self.result


def _books_of(guard: object) -> Books:
    """The guard's ``admitted`` and the counts above 0 in its ``seen``, now (:data:`.rules.Books`): read past
    the checker's hooks (``dict.values`` of a watched dict is no scheduling point)."""
    state = object.__getattribute__(guard, "__dict__")
    admitted, seen = state.get("admitted"), state.get("seen")
    counts = None
    if isinstance(seen, dict):
        counts = tuple(sorted(n for n in dict.values(seen) if isinstance(n, int) and n))
    return (admitted if isinstance(admitted, int) and not isinstance(admitted, bool) else None), counts


class _Result:
    __slots__ = ("label",)

    def __init__(self, label: str) -> None:
        self.label = label

    def __repr__(self) -> str:
        return f"<result of {self.label}>"


# -- the checker's view of one guard ---------------------------------------------------------


@dataclass
class _Subject:
    cls: type
    simple: bool
    files: frozenset[str]
    watch: frozenset[str] | None = None
    written: set[str] = field(default_factory=set)
    reset: Callable[[], None] = lambda: None  # frees the module-level locks the check swapped in
    body_under_lock: tuple[Script, tuple[str, ...]] | None = None  # the first script whose body ran locked
    in_bodies: dict[Script, tuple[Books, ...]] = field(default_factory=dict)  # each script alone: books in bodies

    def make(self, script: Script) -> Any:
        self.reset()
        if self.simple:
            guard = self.cls(script.tool_calls)
        else:
            try:
                guard = self.cls(tool_calls=script.tool_calls, repetitions=script.repetitions, granted=script.granted)
            except TypeError:  # a constructor with other parameter names: by position
                guard = self.cls(script.tool_calls, script.repetitions, script.granted)
        _adopt_locks(guard)
        if self.watch is not None:  # what its threads assign, and every container it holds
            mutable = {n for n, v in vars(guard).items() if not n.startswith("_labkit_") and _mutable(v)}
            object.__setattr__(guard, "_labkit_watch", self.watch | mutable)
        return guard

    def call(self, guard: Any, step: Call, inside: list[Books] | None = None) -> tuple[str, int]:
        """One ``admit`` call, its answer in the rules' words and the bodies it ran; ``inside`` receives the
        guard's books as its body started, when it ran one."""
        if step.cancel_before:
            object.__setattr__(guard, "_labkit_cancelled", True)
        body = _Body(guard, step.body, str(step.attempt))
        try:
            answer = guard.admit(body) if self.simple else guard.admit(step.attempt, body)
        except BodyFailed:
            _saw(body, inside)
            return ("fails", body.entered)
        except _explore.Abandoned:
            raise
        except Exception as exc:
            return (f"raised {type(exc).__name__}: {exc}", body.entered)
        _saw(body, inside)
        if self.simple:
            if answer is True:
                return (_RAN, body.entered)
            if answer is False:
                return ("ToolBudget", body.entered)
            return (f"returned {answer!r}, not True or False", body.entered)
        if answer is body.result:
            return (_RAN, body.entered)
        if isinstance(answer, str):  # a str subclass (labkit's StopReason, a StrEnum of its own) by its text,
            answer = str.__str__(answer)  # never by its own == (which could say yes to anything)
        if answer in REFUSAL.values():
            return (answer, body.entered)
        if body.entered:
            return ("returned something else than what body() returned", body.entered)
        return (f"returned {_returned(answer)}, not a refusal ({', '.join(REFUSAL.values())})", body.entered)


def _saw(body: _Body, inside: list[Books] | None) -> None:
    """Keeps the guard's books as the body started, when one ran."""
    if inside is not None and body.entered:
        inside.append(body.inside)


def _returned(answer: object) -> str:
    """What ``admit`` returned, short: an Enum member by its name (``Reason.TOOL_BUDGET``), else :func:`_short`."""
    if isinstance(answer, enum.Enum):
        return f"{type(answer).__name__}.{answer.name}"
    return _short(answer)


def _mutable(value: object) -> bool:
    """Whether ``value`` can change in place (a container, an object): not a number, a text, a lock, a module."""
    immutable = (
        int,
        float,
        complex,
        str,
        bytes,
        bool,
        type(None),
        frozenset,
        tuple,
        Lock,
        Condition,
        Semaphore,
        types.ModuleType,
        *_REAL_SYNC,
    )
    return not isinstance(value, immutable) and not callable(value)


_REAL_LOCK = type(threading.Lock())
_REAL_RLOCKS = tuple({type(threading.RLock()), threading._PyRLock})  # type: ignore[attr-defined]


_REAL_SYNC = (_REAL_LOCK, *_REAL_RLOCKS, threading.Condition, threading.Semaphore)


def _checker_lock(value: object, name: str, made: dict[int, tuple[object, object]]) -> object | None:
    if not isinstance(value, _REAL_SYNC):
        return None
    if id(value) in made:  # the same lock under two names stays one lock
        return made[id(value)][1]
    new: object
    if isinstance(value, _REAL_LOCK):
        new = Lock(f"self.{name}")
    elif isinstance(value, _REAL_RLOCKS):
        new = RLock(f"self.{name}")
    elif isinstance(value, threading.Semaphore):  # BoundedSemaphore too
        new = Semaphore(value._value, f"self.{name}")
    else:
        inner = _checker_lock(value._lock, name, made)
        new = Condition(inner if isinstance(inner, Lock) else None, f"self.{name}")
    made[id(value)] = (value, new)  # keeps value alive, so its id is not reused
    return new


def _adopt_locks(guard: object) -> None:
    """Put checker locks in place of the guard's threading locks, and watched copies in place of its
    dicts, lists, sets and Counters (two levels deep), keeping what is shared shared."""
    made: dict[int, tuple[object, object]] = {}
    names = dict.fromkeys(vars(guard))
    for cls in type(guard).__mro__:
        if cls in (GuardBase, object):
            continue
        names.update(dict.fromkeys(n for n in vars(cls) if not n.startswith("__")))
    for name in names:
        if name.startswith("_labkit_"):
            continue
        try:
            value = object.__getattribute__(guard, name)
        except AttributeError:
            continue
        replacement = _adopted(value, name, made, depth=2)
        if replacement is not None:
            object.__setattr__(guard, name, replacement)


def _adopted(value: object, name: str, made: dict[int, tuple[object, object]], depth: int) -> object | None:
    """The checker's version of ``value`` (a lock, or a watched container), or ``None`` to keep it."""
    if isinstance(value, (Lock, Condition, Semaphore)):
        return None
    if id(value) in made:  # the same object under two names stays one object
        return made[id(value)][1]
    lock = _checker_lock(value, name, made)
    if lock is not None:
        return lock
    if depth and isinstance(value, (list, dict)):  # locks and containers kept inside a container
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in list(items):
            inner = _adopted(item, f"{name}[{key!r}]", made, depth - 1)
            if inner is not None:
                value[key] = inner
    copy = watched(value, name)
    if copy is not None:
        made[id(value)] = (value, copy)
    return copy


def _hidden_state(guard: object, cls: type) -> bool:
    """Whether some state the guard uses is out of the checker's hooks (then every line is a switch point)."""
    from .explore import _WATCHED

    def hidden(value: object) -> bool:
        if type(value) in _WATCHED.values() and isinstance(value, Iterable):  # a watched dict, list, set or deque
            return any(hidden(v) for v in (value.values() if isinstance(value, dict) else value))
        return _mutable(value)

    if any(hidden(v) for n, v in vars(guard).items() if not n.startswith("_labkit_")):
        return True
    for code in _methods_code(cls):
        names = set(code.co_names) | {n for c in code.co_consts if inspect.iscode(c) for n in c.co_names}
        if "__dict__" in names or "vars" in names:
            return True
        func_globals = _globals_of(cls, code)
        if any(_mutable(func_globals.get(n)) and not isinstance(func_globals.get(n), type) for n in names):
            return True
        if set(code.co_freevars) - {"__class__"}:  # a closure over state of its own
            return True
    return False


def _globals_of(cls: type, code: Any) -> dict[str, Any]:
    return next((f.__globals__ for f in _functions(cls) if f.__code__ is code), {})


def _learner_files(cls: type) -> frozenset[str]:
    return frozenset(func.__code__.co_filename for func in _functions(cls))


def _functions(cls: type) -> list[Any]:
    """The functions a guard class defines (methods, static and class methods, decorated ones unwrapped)."""
    found = []
    for klass in cls.__mro__:
        if klass in (GuardBase, object):
            continue
        for value in vars(klass).values():
            func = getattr(value, "__func__", value)
            if isinstance(func, property):
                found += [f for f in (func.fget, func.fset, func.fdel) if f is not None]
                continue
            with contextlib.suppress(ValueError):
                func = inspect.unwrap(func)
            if getattr(func, "__code__", None) is not None:
                found.append(func)
    return found


def _methods_code(cls: type) -> list[Any]:
    return [func.__code__ for func in _functions(cls)]


def _outside_state(cls: type) -> list[str]:
    """Globals and enclosing-function variables a guard's own methods assign (``global n; n += 1``)."""
    found: list[str] = []

    def walk(code: Any, cells: frozenset[str]) -> None:
        for ins in dis.get_instructions(code):
            outside = ins.opname == "STORE_GLOBAL" or (
                ins.opname == "STORE_DEREF" and ins.argval in code.co_freevars and ins.argval not in cells
            )
            if outside and ins.argval not in found:
                found.append(ins.argval)
        for const in code.co_consts:
            if inspect.iscode(const):  # a nested function: the method's own variables are not outside
                walk(const, cells | frozenset(code.co_cellvars) | frozenset(code.co_varnames))

    for code in _methods_code(cls):
        walk(code, frozenset({"__class__"}))
    return found


def _problem_kind(problem: str) -> str:
    """The fault id of a schedule the scheduler gave up, or of an error outside ``admit``'s answers."""
    if problem.startswith("deadlock"):
        return "deadlock"
    if problem.startswith("the guard did something different"):
        return "nondeterministic"
    if problem.startswith("admit did not return"):
        return "hang"
    return "raised"


def _alone(
    subject: _Subject,
    script: Script,
    files: frozenset[str],
    books: list[tuple[object, object]] | None = None,
    inside: list[Books] | None = None,
) -> tuple[tuple[str, int], ...] | str:
    """A script's answers from a fresh guard in one thread, or the problem that stopped it; ``books``
    receives the guard's ``admitted`` and ``seen`` after the last call, ``inside`` its books as each body
    started."""
    answers: list[tuple[str, int]] = []
    written: set[str] = set()

    def calls() -> None:
        ex = current()
        ex.written = written  # type: ignore[union-attr]
        guard = subject.make(script)
        for step in script.calls:
            answers.append(subject.call(guard, step, inside))
        if books is not None:
            books.append((getattr(guard, "admitted", None), dict(getattr(guard, "seen", None) or {})))

    ex = Execution([calls], [], files, max_steps=5_000, timeout_s=2.0)
    ex.written = written
    ex.run()
    subject.written |= written
    held = next((s.locks for s in ex.steps if s.op == "body" and s.locks), None)
    if held and subject.body_under_lock is None:
        subject.body_under_lock = (script, held)
    if ex.problem:
        return ex.problem
    if ex.errors[0] is not None:
        err = ex.errors[0]
        return f"{type(err).__name__}: {err}"
    return tuple(answers)


_AFTER_ADMITTED = {
    "ok": N_("its body ran"),
    "fails": N_("its body failed"),
    "cancels": N_("the run was cancelled while its body ran"),
    "cancels_fails": N_("the run was cancelled while its body ran, then the body failed"),
}
"""What happened to an admitted call after its reservation, by its body's behaviour (a script's ``Call.body``)."""


def _books_words(admitted: object, seen: object, state: Any, simple: bool) -> tuple[str, str]:
    """The guard's books and the rules' (attempts admitted, and the counts per signature), in words."""
    counts = sorted(n for n in seen.values() if n) if isinstance(seen, dict) else seen
    said = _("self.admitted is {admitted}").format(admitted=admitted)
    if not simple:
        said += _(" and self.seen counts {counts}").format(counts=counts if counts != [] else _("nothing"))
    rules = _("the rules count {admitted} admitted").format(admitted=state.admitted)
    if not simple:
        by_signature = sorted(n for n in state.seen.values() if n)
        rules += _(" and {counts} per signature").format(counts=by_signature or _("nothing"))
    return said, rules


def _books_differ(admitted: object, seen: object, state: Any, simple: bool) -> bool:
    if admitted != state.admitted:
        return True
    counts = sorted(n for n in seen.values() if n) if isinstance(seen, dict) else None
    return not simple and counts != sorted(n for n in state.seen.values() if n)


def _books_total(admitted: int, seen: dict[Any, Any], simple: bool) -> int:
    return admitted + (0 if simple else sum(n for n in seen.values() if isinstance(n, int)))


def _miscounted(
    subject: _Subject, kept: Sequence[tuple[Script, object, object]], simple: bool
) -> tuple[str, ...] | None:
    """The first call after which the guard's books (``self.admitted``, and ``self.seen``'s counts)
    differ from the rules', when every answer was right: an attempt counts once admitted, whatever
    happens after it (its body fails, the run is cancelled during it), and a refused call counts
    nothing. A guard that keeps its books under names of its own (``admitted`` and ``seen`` never
    moved, in any script) is judged by its answers only; ``None`` when nothing differs.

    The script whose books differ at its end is run again call by call (a fresh guard on each
    prefix) to find the call that made them differ, and the why names what that call did."""
    if not any(admitted or seen for _script, admitted, seen in kept):
        return None  # its own books: judged by its answers only
    for script, admitted, seen in kept:
        if not isinstance(admitted, int) or not isinstance(seen, dict):
            return None
        _answers, state = REFERENCE.run_with_state(script)
        if not _books_differ(admitted, seen, state, simple):
            continue
        before: tuple[int, dict[Any, Any], Any] = (0, {}, REFERENCE.run_with_state(replace(script, calls=()))[1])
        for n in range(1, len(script.calls) + 1):
            prefix = replace(script, calls=script.calls[:n])
            books: list[tuple[object, object]] = []
            _alone(subject, prefix, subject.files, books)
            now_admitted, now_seen = books[0] if books else (admitted, seen)
            answers, now_state = REFERENCE.run_with_state(prefix)
            if isinstance(now_admitted, int) and isinstance(now_seen, dict):
                if _books_differ(now_admitted, now_seen, now_state, simple):
                    break
                before = (now_admitted, now_seen, now_state)
        else:  # the books differ only at the end of the whole script: say so for the whole script
            n, now_admitted, now_seen, now_state, answers = len(script.calls), admitted, seen, state, _answers
        call, answer = script.calls[n - 1], answers[n - 1]
        said, rules = _books_words(now_admitted, now_seen, now_state, simple)
        rules_moved = _books_total(now_state.admitted, now_state.seen, simple) - _books_total(
            before[2].admitted, before[2].seen, simple
        )
        if isinstance(now_admitted, int) and isinstance(now_seen, dict):
            yours_moved = _books_total(now_admitted, now_seen, simple) - _books_total(before[0], before[1], simple)
        else:
            yours_moved = rules_moved
        if rules_moved > 0 and yours_moved < rules_moved:
            why = _(
                "your guard gave back (or never counted) the attempt of {call}, which it had admitted ({answer}):"
                " an admitted attempt counts whatever happens after it, even when its body fails or the run is"
                " cancelled while it runs (chapter 4); the host reports these counts"
            ).format(call=call.attempt, answer=_(_AFTER_ADMITTED[call.body]))
        elif rules_moved == 0 and yours_moved > 0:
            why = _(
                "your guard counted {call}, which it refused ({answer}), as an attempt: a refused call counts"
                " nothing (chapter 4); the host reports these counts"
            ).format(call=call.attempt, answer=_answer(answer[0]))
        else:
            why = _(
                "an attempt counts once it is admitted, even if its body fails or the run is cancelled while it"
                " runs, and a refused call counts nothing (chapter 4): the host reports these counts"
            )
        return (
            why,
            _("  alone, every call got the rules' answer, but after {calls}").format(
                calls=", ".join(map(str, script.calls[:n]))
            ),
            _("  with {setting}: {said}; {rules}").format(setting=script.setting(), said=said, rules=rules),
        )
    return None


# -- races ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Race:
    name: str
    script: Script  # the calls before the race, and the limits
    racing: tuple[Call, ...]
    after: tuple[Call, ...]

    def setting(self, threads: int, simple: bool = False) -> str:
        before = ", ".join(str(c.attempt) for c in self.script.calls)
        at_once = _(" and ").join(
            _("{call} in {thread}").format(call=c.attempt, thread=thread_name(i))
            for i, c in enumerate(self.racing[:threads])
        )
        limits = _("a limit of {n}").format(n=self.script.tool_calls) if simple else self.script.setting()
        if before:
            return _("{limits};\n    {before} first, then {at_once} at once").format(
                limits=limits, before=before, at_once=at_once
            )
        return _("{limits};\n    {at_once} at once").format(limits=limits, at_once=at_once)


def _race_words(name: str) -> str:
    """A race's name in the notebook's language."""
    places = re.fullmatch(r"the budget's last (\d+) places", name)
    if places is not None:
        return _("the budget's last {n} places").format(n=places[1])
    return _(name)


def _races(simple: bool, limit: int, threads: int) -> tuple[_Race, ...]:
    """The races: the budget with 1 .. threads-1 places left, room for every thread, and (with
    signatures) the same call from every thread. The calls after a race ask every racing call again
    and fill the rest of the budget, so a count or a table entry one thread overwrote shows."""
    ids = [attempt("read_ticket", f'{{"input": {n}}}', n) for n in range(1, 20)]
    reps = 9 if simple else 1
    races = []
    for places in range(1, threads):
        before = ids[: (limit - places) if simple else 1]
        tool_calls = len(before) + places
        racing = ids[len(before) : len(before) + threads]
        races.append(
            _Race(
                N_("the budget's last place") if places == 1 else f"the budget's last {places} places",  # _race_words
                Script(tuple(Call(a) for a in before), tool_calls=tool_calls, repetitions=reps),
                tuple(Call(a) for a in racing),
                (Call(ids[len(before) + threads]),),
            )
        )
    racing = ids[:threads]
    again = () if simple else tuple(Call(a) for a in racing)
    races.append(
        _Race(
            N_("room for every thread"),
            Script((), tool_calls=threads + 2, repetitions=reps),
            tuple(Call(a) for a in racing),
            (*again, *(Call(a) for a in ids[threads : threads + 3])),
        )
    )
    if not simple:
        r42, r42f = attempt("read_ticket", '{"input": 42}', 42), attempt("read_ticket", '{"input": 42.0}', 42)
        races.append(
            _Race(
                N_("the same call twice"),
                Script((), tool_calls=threads + 2),
                tuple(Call(a) for a in (r42, r42f, r42)[:threads]),
                (Call(r42), Call(ids[0])),
            )
        )
    return tuple(races)


@dataclass
class _RaceRun:
    race: _Race
    threads: int
    simple: bool
    answers: tuple[tuple[str, int], ...] = ()
    after: tuple[tuple[str, int], ...] = ()
    allowed: list[tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]] = field(default_factory=list)
    lock_per_call: bool = False  # admit makes its own lock each time (_lock_per_call)


def _expected(race: _Race, threads: int) -> list[tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]]:
    """Per order of the racing calls: each thread's answer, and the answers of the calls after."""
    outcomes: list[tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]] = []
    n_before = len(race.script.calls)
    for order in itertools.permutations(range(threads)):
        calls = (*race.script.calls, *(race.racing[i] for i in order), *race.after)
        answers = REFERENCE.run(Script(calls, race.script.tool_calls, race.script.repetitions, race.script.granted))
        by_thread = tuple(answers[n_before + order.index(i)] for i in range(threads))  # thread i ran at order.index(i)
        outcomes.append((by_thread, answers[n_before + threads :]))
    return outcomes


def _answers_text(answers: Sequence[tuple[str, int]], calls: Sequence[Call] | None = None) -> str:
    parts = []
    for i, (answer, bodies) in enumerate(answers):
        who = str(calls[i].attempt) if calls is not None else thread_name(i)
        extra = (
            ""
            if (answer in (_RAN, "fails")) == bool(bodies) and bodies <= 1
            else ngettext(" ({n} body)", " ({n} bodies)", bodies).format(n=bodies)
        )
        parts.append(f"{who} {_answer(answer)}{extra}")
    return ", ".join(parts)


def _race_once(
    subject: _Subject, race: _Race, threads: int, files: frozenset[str], bound: int, max_schedules: int, lines: bool
) -> tuple[_explore.Exploration, _RaceRun]:
    allowed = _expected(race, threads)
    shown = _RaceRun(race, threads, subject.simple, allowed=allowed, lock_per_call=_lock_per_call(subject.cls))

    def make() -> tuple[list[Callable[[], object]], Callable[[Execution], str | None]]:
        guard = subject.make(race.script)
        for step in race.script.calls:
            subject.call(guard, step)
        answers: list[tuple[str, int]] = [("did not return", 0)] * threads
        snapshots = _Snapshots(guard)

        def worker(i: int) -> Callable[[], None]:
            def go() -> None:
                ex = current()
                ex.observe = snapshots  # type: ignore[union-attr]
                answers[i] = subject.call(guard, race.racing[i])
                snapshots(ex)  # type: ignore[arg-type]  # what this thread changed since its last point
                ex.note(f"returns {answers[i][0]}", op="return")  # type: ignore[union-attr]

            return go

        def judge(ex: Execution) -> str | None:
            for i, err in enumerate(ex.errors):
                if err is not None:
                    return f"{thread_name(i)} raised {type(err).__name__}: {err}"
            after = tuple(subject.call(guard, step) for step in race.after)
            shown.answers, shown.after = tuple(answers), after
            if (tuple(answers), after) in allowed:
                return None
            return "wrong"

        return [worker(i) for i in range(threads)], judge

    result = _explore.explore(make, files=files, bound=bound, max_schedules=max_schedules, lines=lines)
    return result, shown


# -- why a schedule broke the guard --------------------------------------------------------------


def _reservation_reads(steps: Sequence[Any], j: int) -> set[int]:
    """The reads that are part of the write ``steps[j]`` itself: its thread's reads of the same state just
    before the write, with nothing else of its own in between (``self.admitted += 1`` reads once before it
    writes, ``self.seen[key] = self.seen.get(key, 0) + 1`` twice, ``n = self.seen.get(key, 0)`` and then
    ``self.seen[key] = n + 1`` too, and ``self.seen.setdefault(key, 0)`` then ``self.seen[key] += 1``, a write
    between): the read-half of a reservation, not a check. A check reads some other state too (the limit
    it compares with) or holds a lock the reservation does not."""
    own = steps[j]
    found: set[int] = set()
    for k in range(j - 1, -1, -1):
        step = steps[k]
        if step.thread != own.thread:
            continue
        if step.op not in ("read", "write") or step.name != own.name:
            break
        if step.op == "read":
            found.add(k)
    return found


def _witness(ex: Execution, lock_per_call: bool = False) -> tuple[str, list[str], str]:
    """The fault a failing schedule shows, from what each thread held when it read and wrote the state.

    The witness is a thread's write of some state (its reservation) made from a read that another
    thread's write had made stale in between: its last such read is its check. The reads that belong
    to the reservation statement itself (:func:`_reservation_reads`) are not a check. ``lock_per_call``:
    the guard's ``admit`` makes a lock each time it runs (a lock nobody else takes, which the checker
    does not see).
    """
    steps = ex.steps
    for j, own in enumerate(steps):
        if own.op != "write":
            continue
        stale = _stale_check(steps, j)
        if stale is None:
            continue
        found = _diagnosis(stale[0], own, stale[1], lock_per_call)
        if found is not None:
            return found
    return "unexplained", [], ""


def _stale_check(steps: Sequence[Any], j: int) -> tuple[Any, Any] | None:
    """The check ``steps[j]`` (a write) was made from, and another thread's write that made it stale in
    between: its thread's last read of the same state that some other thread's write changed before the
    write; the reads of the reservation statement itself are not a check. ``None`` when there is none."""
    own = steps[j]
    rmw = _reservation_reads(steps, j)
    for k in range(j - 1, -1, -1):
        read = steps[k]
        if read.thread != own.thread or read.name != own.name or read.op != "read" or k in rmw:
            continue  # the read of `x += 1` is part of the reservation, not the check
        other = next(
            (
                s
                for s in steps[k + 1 : j]
                if s.thread != own.thread and s.op == "write" and s.name == own.name and s.value != read.value
            ),
            None,
        )
        if other is not None:
            return read, other
    return None


def _diagnosis(read: Any, own: Any, other: Any, lock_per_call: bool) -> tuple[str, list[str], str] | None:
    """The fault, the why and the state of a reservation (``own``) made from a check (``read``) that
    ``other`` made stale, from the locks each held; ``None`` when they held the right lock throughout."""
    a, b = thread_name(read.thread), thread_name(other.thread)
    found = _lock_fault(read, own, other, lock_per_call, a, b)
    if found is None:
        return None
    at = f" (`{read.line}`)" if read.line else ""
    seen = _(
        "{a} checked {state}{at}, then {b} changed it ({change}), then {a} reserved anyway ({reservation})"
    ).format(
        a=a,
        b=b,
        state=read.what[len("reads ") :],
        at=at,
        change=_what_words(other.what),
        reservation=_what_words(own.what),
    )
    return found[0], [seen, found[1]], own.name


def _lock_fault(read: Any, own: Any, other: Any, lock_per_call: bool, a: str, b: str) -> tuple[str, str] | None:
    """Which lock was missing, or wrong, at the check, the reservation or the other thread's change: the
    fault id and its why, in the order a learner fixes them; ``None`` when the locks were right."""
    name = own.name
    if lock_per_call and not read.locks and not own.locks:
        return "lock_per_call", _(
            "admit makes a new lock each time it runs, so {a} and {b} each held a lock of their own"
            " and neither kept the other out: make the lock once, in __init__ (self.lock), and take"
            " that one in every call"
        ).format(a=a, b=b)
    if not read.locks:
        return "check_outside_lock", _(
            "{a}'s check of {state} held no lock: put the check and the reservation in one `with self.lock:` block"
        ).format(a=a, state=name)
    if not own.locks:
        return "reservation_outside_lock", _(
            "{a}'s check of {state} held the lock, but its reservation of {state} was made outside it,"
            " after {b} had changed {state}: reserve in the same `with` block as the check"
        ).format(a=a, b=b, state=name)
    if not set(read.locks) & set(own.locks):
        return "two_locks", _(
            "{a} checked {state} under {check_locks} and reserved it under {reserve_locks}:"
            " two different locks do not keep each other out; use one"
        ).format(a=a, state=name, check_locks=", ".join(read.locks), reserve_locks=", ".join(own.locks))
    if read.acquisition != own.acquisition:
        return "check_and_reserve_in_two_steps", _(
            "{a} released {lock} between its check of {state} and its reservation:"
            " two locked steps are not one; check and reserve in one `with` block"
        ).format(a=a, lock=read.locks[-1], state=name)
    if not other.locks:
        return "reservation_outside_lock", _(
            "{b} changed {state} holding no lock: every change of the state goes under the lock"
        ).format(b=b, state=other.name)
    return None


_LOCK_MAKERS = frozenset({"Lock", "RLock", "Semaphore", "BoundedSemaphore", "Condition"})


def _lock_per_call(cls: type) -> bool:
    """Whether a method of the guard other than ``__init__`` makes a lock (``with threading.Lock():``)."""
    for func in _functions(cls):
        if func.__name__ == "__init__":
            continue
        codes = [func.__code__, *(c for c in func.__code__.co_consts if inspect.iscode(c))]
        for code in codes:
            if any(
                ins.opname in ("LOAD_ATTR", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_METHOD") and ins.argval in _LOCK_MAKERS
                for ins in dis.get_instructions(code)
            ):
                return True
    return False


def _schedule_lines(ex: Execution, focus: str = "", limit: int = 12) -> list[str]:
    """The failing schedule, one line per turn of a thread: what it held, changed and ran.

    Reads are shown for ``focus`` (the state the witness is about) or, without one, for the
    attributes some thread assigned.
    """
    writes = {s.name for s in ex.steps if s.op == "write"}
    reads = {focus} if focus else writes
    shown = [
        s
        for s in ex.steps
        if s.op in ("acquire", "release", "body", "return", "pause", "write")
        or (s.op == "read" and s.name in reads)
        or s.what.startswith(("wait", "tries"))
    ]
    turns: list[tuple[int, list[str]]] = []
    for step in shown:
        if not turns or turns[-1][0] != step.thread:
            turns.append((step.thread, []))
        whats = turns[-1][1]
        if step.op == "pause" and whats and whats[-1].startswith("pause()"):
            count = int(whats[-1].split("×")[1]) if "×" in whats[-1] else 1
            whats[-1] = f"pause() ×{count + 1}"  # a run of pauses is one item
        else:
            whats.append(_what_words(step.what))
    lines: list[str] = []
    for thread, whats in turns:
        for k in range(0, len(whats), 4):
            lead = thread_name(thread) if k == 0 else " "
            lines.append(f"    {lead}  " + " · ".join(whats[k : k + 4]))
    if len(lines) > limit:  # keep how it starts and how it ends
        head, tail = (limit - 1) // 2, limit - 1 - (limit - 1) // 2
        lines = [*lines[:head], _("    ... ({n} lines)").format(n=len(lines) - head - tail), *lines[-tail:]]
    return lines


_WHAT_PATTERNS = tuple(
    (re.compile(pattern), words)
    for pattern, words in (
        (r"takes (?P<lock>.+)", N_("takes {lock}")),
        (r"releases (?P<lock>.+)", N_("releases {lock}")),
        (r"tries (?P<lock>.+): taken", N_("tries {lock}: taken")),
        (r"tries (?P<lock>.+): at 0", N_("tries {lock}: at 0")),
        (r"waits for (?P<lock>.+)", N_("waits for {lock}")),
        (r"waits on (?P<lock>.+)", N_("waits on {lock}")),
        (r"reads (?P<state>.+)", N_("reads {state}")),
        (r"changes (?P<state>.+)", N_("changes {state}")),
        (r"runs its body", N_("runs its body")),
        (r"returns (?P<answer>.+)", N_("returns {answer}")),
    )
)
"""What a thread did at one step of a schedule (:meth:`Execution.note`'s words, which the checker reads
in English), as a report shows it."""


def _what_words(what: str) -> str:
    """One step of a schedule in the notebook's language (``x = 1`` and ``pause()`` are code: as they are)."""
    for pattern, words in _WHAT_PATTERNS:
        match = pattern.fullmatch(what)
        if match is not None:
            found = match.groupdict()
            if "answer" in found:
                found["answer"] = _answer(found["answer"])
            return _(words).format(**found)
    return what


# -- the verdict --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GuardReport:
    """The verdict of :func:`check_guard`, computed from what the guard did.

    Attributes:
        guard: the guard class's name.
        problems: what is wrong, one sentence each; empty for a correct guard.
        faults: the ids of the faults found (``"check_outside_lock"``,
            ``"budget_admits_one_too_many"``, ...; see ``rules.FAULTS`` and
            the race faults in the module docstring); empty for a correct guard.
        details: the lines that show it: the call it got wrong, or the
            breaking schedule, one line per turn of a thread.
        scripts: sequential scripts tried (calls one after another).
        schedules: schedules run in the races.
        bound: preemptions per schedule explored.
        admitted: in the race shown (the breaking one, else the first), calls
            that were admitted (their body ran or failed).
        bodies_started: in the race shown, bodies entered.
        found_in: ``"alone"`` (a call made one after another got a wrong
            answer), ``"race"`` (a schedule of two threads broke it), or ``""``.
        preemptions: switches away from a running thread in the breaking
            schedule (0 when none broke it).
        summary: for a correct guard, what was tried.
    """

    guard: str
    problems: tuple[str, ...]
    faults: tuple[str, ...] = ()
    details: tuple[str, ...] = ()
    scripts: int = 0
    schedules: int = 0
    bound: int = BOUND
    admitted: int = 0
    bodies_started: int = 0
    summary: str = ""
    found_in: str = ""
    preemptions: int = 0
    shown: tuple[Script, int] | None = field(default=None, repr=False, compare=False)

    @property
    def passed(self) -> bool:
        """Every call alone got the rules' answer and no explored schedule broke the guard."""
        return not self.problems

    def __str__(self) -> str:
        if self.passed:
            lines = [_("{guard}: correct").format(guard=self.guard), f"  {self.summary}"]
        else:
            lines = [
                _("{guard}: not a correct guard").format(guard=self.guard),
                *self.details,
                *(_("  why: {problem}").format(problem=p) for p in self.problems),
            ]
        return "\n".join(_wrap(part) for line in lines for part in line.split("\n"))

    def __repr__(self) -> str:
        return f"GuardReport(guard={self.guard!r}, passed={self.passed}, faults={self.faults!r})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))


def _explain_alone(
    subject: _Subject,
    tried: list[tuple[Script, tuple[tuple[str, int], ...]]],
    faults: Sequence[Fault],
    shown: tuple[Script, int] | None = None,
    books: Callable[[Rules], int] = lambda rules: 0,
) -> tuple[tuple[str, ...], list[str], list[str]]:
    """The known faults that give the learner's answers on every script tried (singles, then pairs), or
    else the signature the guard was seen to use (:mod:`.signatures`), alone or with one known fault: their
    ids, their words (with the example from ``shown``, the script and the call the report shows:
    :meth:`Fault.said_at`) and the lines of the probe an example came from. Of the faults that give every
    answer, those whose books differ least from the guard's (``books``: :func:`_books_disagree`) are
    named: single faults before pairs, and pairs only when no single fault agrees with every book."""

    def same(rules: Rules) -> bool:
        return all(rules.run(script) == answers for script, answers in tried)

    def said(fault: Fault) -> str:
        return fault.said_at(*shown) if shown is not None else fault.said

    differ: list[tuple[tuple[Fault, ...], int]] = [((f,), books(f.rules)) for f in faults if same(f.rules)]
    single = min((n for _fs, n in differ), default=None)
    if single != 0:  # a pair only where it agrees with the books better than every single fault
        books_only = () if subject.simple else itertools.product(faults, BOOK_FAULTS)  # alone, no answer changes
        for f, g in (*itertools.combinations(faults, 2), *books_only):
            merged = _merge(f.rules, g.rules) if f.id != g.id else None
            if merged is not None and same(merged) and (single is None or books(merged) < single):
                differ.append(((f, g), books(merged)))
    least = min((n for _fs, n in differ), default=0)
    found = [fs for fs, n in differ if n == least]
    learned = None
    if not subject.simple and (not found or any(f.rules.key != REFERENCE.key for f in found[0])):
        learned = _signatures.learned_rules(lambda script: _alone(subject, script, subject.files))
    by_id = {f.id: f for f in faults if f.example}

    def known(fault_id: str, pair: tuple[Attempt, Attempt]) -> str:
        return _(by_id[fault_id].example).format(other=pair[0], call=pair[1])

    keyed = [f for f in (found[0] if found else ()) if f.rules.key != REFERENCE.key]
    if found and (not keyed or learned is None or _signatures.same_signature(keyed[0].rules, learned)):
        ids, words = _found_words(found, said)
        if not keyed or learned is None:
            return ids, words, []
        _ids, seen_words, lines = _signatures.signature_words(learned, known, shown)  # its example: what ran
        return ids, [seen_words[0] if w == said(keyed[0]) else w for w in words], lines
    if learned is None:
        return _explain_limits(subject, same, faults, said) or ((), [], [])

    plain = [f for f in faults if f.rules.key == REFERENCE.key]
    with_learned = [(f, _merge(f.rules, learned)) for f in plain]
    tries: list[tuple[Fault | None, Rules]] = [(None, learned)]
    tries += sorted(((f, m) for f, m in with_learned if m is not None), key=lambda fm: books(fm[1]))
    for extra, rules in tries:  # the faults the books agree with first
        if same(rules):
            ids, words, lines = _signatures.signature_words(learned, known, shown)
            if extra is not None:
                ids, words = (*ids, extra.id), [*words, said(extra)]
            return ids, words, lines
    if found:
        return (*_found_words(found, said), [])
    return _explain_limits(subject, same, faults, said) or ((), [], [])


def _explain_limits(
    subject: _Subject, same: Callable[[Rules], bool], faults: Sequence[Fault], said: Callable[[Fault], str]
) -> tuple[tuple[str, ...], list[str], list[str]] | None:
    """The limits the guard was seen to apply (:mod:`.limits`), alone or with one known fault, when they
    give every answer the guard gave: their ids, words and probe lines; ``None`` otherwise."""

    def ask(script: Script) -> tuple[tuple[tuple[str, int], ...] | str, tuple[object, object] | None]:
        books: list[tuple[object, object]] = []
        answers = _alone(subject, script, subject.files, books)
        return answers, books[0] if books else None

    learned = _limits.learned_limits(ask, subject.simple)
    if learned is None:
        return None
    tries: list[tuple[Fault | None, Rules | None]] = [(None, learned)]
    tries += [(f, _merge(f.rules, learned)) for f in faults]
    for extra, rules in tries:
        if rules is not None and same(rules):
            ids, words, lines = _limits.limit_words(learned)
            if extra is not None:
                ids, words = (*ids, extra.id), [*words, said(extra)]
            return ids, words, lines
    return None


def _found_words(found: Sequence[tuple[Fault, ...]], said: Callable[[Fault], str]) -> tuple[tuple[str, ...], list[str]]:
    """The ids and the words of the known faults that explain every answer: each single one (at most two said),
    or the first pair, and a line for another pair no script tells from it."""
    ids = tuple(dict.fromkeys(f.id for faults in found for f in faults))
    if len(found[0]) == 1:
        return ids, list(dict.fromkeys(said(faults[0]) for faults in found))[:2]
    words = [said(f) for f in found[0]]
    first = {f.id for f in found[0]}
    other = next((f for faults in found[1:] for f in faults if f.id not in first), None)
    if other is not None:
        words.append(
            _("no script tells this from another mistake, which gives every answer the same: {words}").format(
                words=said(other)
            )
        )
    return ids, words


def _merge(a: Rules, b: Rules) -> Rules | None:
    changes = {}
    for name in Rules.__dataclass_fields__:
        va, vb, vr = getattr(a, name), getattr(b, name), getattr(REFERENCE, name)
        if va != vr and vb != vr:
            return None
        changes[name] = va if va != vr else vb
    return Rules(**changes)


def check_guard(
    guard_class: type,
    *,
    limit: int = 3,
    threads: int = 2,
    bound: int = BOUND,
    rounds: int | None = None,
    pause_timeout_s: float | None = None,
) -> GuardReport:
    """Judge a guard class: every call alone against the rules, then every schedule of the races.

    Args:
        guard_class: a :class:`GuardBase` subclass with ``admit(call, body)``
            (or the one-budget form, ``admit(body) -> bool``).
        limit: the tool budget of the one-budget form's races (at least 1).
        threads: threads per race, 2 or 3 (3 costs about 50 times more).
        bound: the most preemptions per schedule, 0 to 3.
        rounds, pause_timeout_s: accepted for notebooks written for the
            earlier harness; they change nothing (every schedule is explored).

    Returns:
        A :class:`GuardReport`. Errors inside ``admit`` are reported in it, never raised.

    Raises:
        UserError: ``guard_class`` is not a class, its constructor fails, or
            the numbers are out of range.
    """
    simple = _checked_arguments(guard_class, limit, threads, bound)
    subject = _Subject(guard_class, simple, _learner_files(guard_class))
    try:
        subject.make(Script((), tool_calls=limit))
    except Exception as exc:  # the learner's constructor failed: one clear line
        raise UserError(f"{guard_class.__name__}(...) failed: {type(exc).__name__}: {exc}") from None
    outside = _outside_state(guard_class)
    if outside:
        report = GuardReport(
            guard_class.__name__,
            (
                _(
                    "the guard writes a global or an enclosing variable ({names}): a guard's counts belong"
                    " to the guard, one per run, so keep them on self"
                ).format(names=", ".join(outside)),
            ),
            ("state_outside_self",),
            found_in="alone",
        )
        _record(guard_class, report)
        return report
    with _module_locks(guard_class) as reset:
        subject.reset = reset
        report = _judge(guard_class, subject, simple, limit, threads, bound)
    _record(guard_class, report)
    return report


def _checked_arguments(guard_class: type, limit: int, threads: int, bound: int) -> bool:
    """Whether ``guard_class`` is the one-budget form (``admit(self, body)``), once its arguments are usable.

    Raises:
        UserError: not a class, no ``admit``, no threads in this Python, or a number out of range.
    """
    if not isinstance(guard_class, type):
        raise UserError(f"check_guard takes the guard class itself (e.g. check_guard(Guard)), not {guard_class!r}")
    if not _threads_start():
        raise UserError(
            _(
                "check_guard runs your guard in threads, and this Python cannot start one (in the browser,"
                " JupyterLite's Python has no threads): run this check in JupyterLab, on Binder or on your machine"
            )
        )
    for name, value, low, high in (("limit", limit, 1, 9), ("threads", threads, 2, 3), ("bound", bound, 0, 3)):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise UserError(f"{name} must be a whole number from {low} to {high}, not {value!r}")
    admit = getattr(guard_class, "admit", None)
    if not callable(admit):
        raise UserError(f"{guard_class.__name__} has no admit method: write admit(self, call, body)")
    try:
        params = [
            p
            for p in inspect.signature(admit).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    simple = len(params) == 2  # admit(self, body): the one-budget form
    return simple


def _threads_start() -> bool:
    """Whether this Python can start a thread: the checker runs each call of a guard in one
    (Pyodide, the Python of JupyterLite, raises ``RuntimeError`` at ``start``)."""
    try:
        thread = threading.Thread(target=lambda: None, daemon=True)
        thread.start()
    except RuntimeError:
        return False
    thread.join()
    return True


def _record(guard_class: type, report: GuardReport) -> None:
    """Your guard in your progress (labkit.progress); a guard the chapter gives you to break is not yours.

    A class defined in a notebook cell not tagged ``exercise`` (``TwoStepGuard``, ``RefundGuard``: the
    predictions about them are the ``compare`` cells after them) is not recorded. When the notebook
    cannot be read, the guard is recorded.
    """
    if _progress.defined_in_exercise(guard_class.__name__) is False:
        return
    _progress.record("guard", f"guard {guard_class.__name__}", attempted=True, right=report.passed)


@contextlib.contextmanager
def _module_locks(cls: type) -> Iterator[Callable[[], None]]:
    """Checker locks in place of the module-level locks a guard's methods use, for the check only.

    Yields a function that frees them again (between schedules: a given-up schedule may leave one held).
    """
    swapped: list[tuple[dict[str, Any], str, object, Lock | Semaphore]] = []
    made: dict[int, tuple[object, object]] = {}
    for code in _methods_code(cls):
        func_globals = _globals_of(cls, code)
        names = set(code.co_names) | {n for c in code.co_consts if inspect.iscode(c) for n in c.co_names}
        for name in sorted(names):
            original = func_globals.get(name)
            if isinstance(original, _REAL_SYNC) and not isinstance(original, threading.Condition):
                lock = _checker_lock(original, name, made)
                assert isinstance(lock, (Lock, Semaphore))  # a threading Lock, RLock or Semaphore: its checker twin
                lock.name = name
                func_globals[name] = lock
                swapped.append((func_globals, name, original, lock))

    def reset() -> None:
        for _, _, original, lock in swapped:
            if isinstance(lock, Lock):
                lock.owner, lock.depth = None, 0
            else:
                lock.value, lock.holders = original._value, []  # type: ignore[attr-defined]

    try:
        yield reset
    finally:
        for func_globals, name, original, _ in swapped:
            func_globals[name] = original


def _judge(guard_class: type, subject: _Subject, simple: bool, limit: int, threads: int, bound: int) -> GuardReport:
    """The verdict: the scripts alone (a wrong answer, wrong books, a body under a lock), then the races."""
    name = guard_class.__name__
    tried, kept_books, stopped = _run_alone(name, subject, simple)
    if stopped is not None:
        return stopped
    report = _alone_verdict(name, subject, tried, kept_books)
    if report is not None:
        return report
    return _judge_races(name, subject, limit, threads, bound, tried)


Tried = list[tuple[Script, tuple[tuple[str, int], ...]]]
"""The scripts a guard answered alone, each with its answers."""


def _run_alone(
    name: str, subject: _Subject, simple: bool
) -> tuple[Tried, list[tuple[Script, object, object]], GuardReport | None]:
    """Every script on a fresh guard: the answers, the books after each, and the report of a script the
    scheduler gave up (a deadlock, an endless loop, a hang), which ends the check."""
    tried: Tried = []
    kept_books: list[tuple[Script, object, object]] = []
    for script in scripts(simple=simple):
        books: list[tuple[object, object]] = []
        inside: list[Books] = []
        answers = _alone(subject, script, subject.files, books, inside)
        subject.in_bodies[script] = tuple(inside)
        if books:
            kept_books.append((script, *books[0]))
        if isinstance(answers, str):
            report = GuardReport(
                name,
                (_("with one thread: {problem}").format(problem=_problem_words(answers)),),
                (_problem_kind(answers),),
                (_on_script(script),),
                len(tried) + 1,
                found_in="alone",
            )
            return tried, kept_books, report
        tried.append((script, answers))
    return tried, kept_books, None


def _on_script(script: Script) -> str:
    return _("  on: {setting}; {calls}").format(setting=script.setting(), calls=", ".join(map(str, script.calls)))


def _alone_verdict(
    name: str, subject: _Subject, tried: Tried, kept_books: list[tuple[Script, object, object]]
) -> GuardReport | None:
    """What the scripts alone show: a raise or a wrong answer, then wrong books, then a body run under a
    lock; ``None`` when they show nothing wrong."""
    raised = next(((s, a) for s, a in tried if any(x.startswith("raised ") for x, _b in a)), None)
    wrong = raised or next(((s, a) for s, a in tried if REFERENCE.run(s) != a), None)
    if wrong is not None:
        return _report_alone(name, subject, tried, wrong, kept_books)
    miscounted = _miscounted(subject, kept_books, subject.simple)
    if miscounted is not None:
        return GuardReport(name, (miscounted[0],), ("miscounted",), miscounted[1:], len(tried), found_in="alone")
    if subject.body_under_lock is None:
        return None
    script, held = subject.body_under_lock
    problem = _(
        "its body ran while it held {locks}: labkit runs the body outside the lock (chapter 4, step 3),"
        " so that a slow or stuck body holds up no other call; reserve under the lock, leave the"
        " `with` block, then call body()"
    ).format(locks=", ".join(held))
    return GuardReport(name, (problem,), ("body_under_lock",), (_on_script(script),), len(tried), found_in="alone")


def _judge_races(name: str, subject: _Subject, limit: int, threads: int, bound: int, tried: Tried) -> GuardReport:
    """Every schedule of every race, up to ``bound`` preemptions: the first that breaks the guard, or the
    summary of a correct guard."""
    subject.watch = frozenset(subject.written)
    lines = _hidden_state(subject.make(Script((), tool_calls=limit)), subject.cls)
    schedules = 0
    incomplete: list[str] = []
    first: _RaceRun | None = None
    races = _races(subject.simple, limit, threads)
    for race in races:
        result, run = _race_once(subject, race, threads, subject.files, bound, max_schedules=MAX_SCHEDULES, lines=lines)
        schedules += result.schedules
        if not result.complete:
            incomplete.append(
                _("{race}: up to {bound} preemptions complete").format(
                    race=_race_words(race.name), bound=result.bound - 1
                )
            )
        if result.failure is not None:
            return _report_race(name, run, result, len(tried), schedules)
        if first is None:
            first = run
    summary = _passed_summary(tried, len(races), threads, bound, schedules, incomplete)
    answers = first.answers if first else ()
    return GuardReport(
        name, (), (), (), len(tried), schedules, bound, _admitted(answers), sum(b for _, b in answers), summary
    )


def _passed_summary(
    tried: Tried, races: int, threads: int, bound: int, schedules: int, incomplete: Sequence[str]
) -> str:
    """What a correct guard was tried on, and the races a cap on schedules left incomplete."""
    summary = _(
        "every call alone got the rules' answer ({scripts} scripts, {calls} calls), and no schedule of"
        " {races} races of {threads} threads with up to {bound} preemptions broke it ({schedules} schedules)"
    ).format(
        scripts=len(tried),
        calls=sum(len(s.calls) for s, _ in tried),
        races=races,
        threads=threads,
        bound=bound,
        schedules=f"{schedules:,}",
    )
    if incomplete:
        summary += _(
            "; the cap of {cap} schedules per race stopped the search before it had tried every"
            " schedule ({incomplete}): what was not tried was not judged"
        ).format(cap=f"{MAX_SCHEDULES:,}", incomplete=", ".join(incomplete))
    return summary


_WIDTH = 100  # a notebook output line, unwrapped


def _wrap(line: str) -> str:
    """A long report line folded at spaces, continued under its own indentation (and two more spaces)."""
    if len(line) <= _WIDTH:
        return line
    lead = line[: len(line) - len(line.lstrip())]
    return textwrap.fill(
        line.strip(),
        _WIDTH,
        initial_indent=lead,
        subsequent_indent=lead + "  ",
        break_on_hyphens=False,
        break_long_words=False,
    )


def _admitted(answers: Sequence[tuple[str, int]]) -> int:
    return sum(a in (_RAN, "fails") for a, _ in answers)


def _report_alone(
    name: str,
    subject: _Subject,
    tried: list[tuple[Script, tuple[tuple[str, int], ...]]],
    wrong: tuple[Script, tuple[tuple[str, int], ...]],
    kept_books: Sequence[tuple[Script, object, object]] = (),
) -> GuardReport:
    script, answers = wrong
    right = REFERENCE.run(script)
    k = next(i for i, (a, b) in enumerate(zip(answers, right, strict=True)) if a != b)
    k = next((i for i, (a, _b) in enumerate(answers) if a.startswith("raised ")), k)  # a raise is the fault shown
    faults = SIMPLE_FAULTS if subject.simple else FAULTS
    ids, words, probe_lines = _explain_alone(subject, tried, faults, (script, k), _books_disagree(subject, kept_books))
    before = ", ".join(f"{c.attempt} {_answer(a[0])}" for c, a in zip(script.calls[:k], right[:k], strict=True))
    setting = script.setting() if not subject.simple else _("a limit of {n}").format(n=script.tool_calls)
    details = [
        (
            _("  alone, with {setting}, after {before}").format(setting=setting, before=before)
            if before
            else _("  alone, with {setting}").format(setting=setting)
        ),
        _("  {call}: your guard {yours}; the rules: {rules}").format(
            call=script.calls[k], yours=_answer_words(answers[k]), rules=_answer_words(right[k])
        ),
    ]
    special = _answer_problem(answers[k], right[k], tried)
    if words:
        problems = tuple(words)
        details += probe_lines
    elif special is not None:
        problems, ids = special[:2]
        if special[2]:
            details = []  # every call got the same non-answer: no call to show
    else:
        problems = (
            _(
                "{call} got another answer than the rules give: your guard {yours}, where the rules {rules}; no"
                " known mistake explains every answer, so look at what your guard counted before it (above)"
            ).format(call=script.calls[k], yours=_answer_words(answers[k]), rules=_answer_words(right[k])),
        )
        books = _books_before(subject, script, k, kept_books)
        if books is not None:
            details.append(books)
    return GuardReport(
        name, problems, ids or ("unexplained",), tuple(details), len(tried), found_in="alone", shown=(script, k)
    )


def _answer_problem(
    yours: tuple[str, int], right: tuple[str, int], tried: list[tuple[Script, tuple[tuple[str, int], ...]]]
) -> tuple[tuple[str, ...], tuple[str, ...], bool] | None:
    """The problem, the fault ids and whether to show no call, for an answer no rules give: admit not
    written, an error raised or a non-answer returned, a refusal after the body ran; ``None`` otherwise."""
    unwritten = ("returned None, not a refusal (Cancelled, PermissionDenied, ToolBudget, RepeatedCall)", 0)
    if yours[0].startswith("raised NotImplementedError") or all(a == unwritten for _, result in tried for a in result):
        problem = _("admit is not written yet: return body()'s result, or why the call is refused")
        return (problem,), ("admit_not_written",), True
    if yours[0].startswith(("raised", "returned")):
        kind = "raised" if yours[0].startswith("raised") else "not_a_refusal"
        if yours[0] == "returned something else than what body() returned":
            kind = "not_the_body_result"
        return (_("admit {answer}").format(answer=_answer(yours[0])),), (kind,), False
    if yours[0] == right[0] and yours[0] in REFUSAL.values() and yours[1] > right[1]:
        problem = _(  # the right refusal, but the body ran before it: the checks came too late
            "this call got the rules' answer, {status}, but only after its body ran: a refused call runs"
            " no body, so every check comes before body()"
        ).format(status=yours[0])
        return (problem,), ("body_before_check",), False
    return None


def _books_disagree(subject: _Subject, kept_books: Sequence[tuple[Script, object, object]]) -> Callable[[Rules], int]:
    """How often rules' books differ from what the guard's books were seen to hold: at the end of each script
    (:func:`_books_differ`), and as each body started, part by part (:meth:`Rules.books_in_bodies`). The
    bodies tell apart faults which answer every script alike and end with the same books: a count never
    added to holds nothing for the body running, one given back after every body holds it until the body
    ends (``budget_never_counted``, ``given_back_after_every_body``). A guard whose ``admitted`` and
    ``seen`` never moved keeps its books under names of its own: every rule agrees with it (0)."""
    seen_books = [*((a, s) for _script, a, s in kept_books), *itertools.chain(*subject.in_bodies.values())]
    if not any(admitted or seen for admitted, seen in seen_books):
        return lambda rules: 0
    parts = [  # admitted, seen: the parts the guard keeps under those names
        any(isinstance(admitted, int) for admitted, _seen in seen_books),
        not subject.simple and any(isinstance(seen, (dict, tuple)) for _admitted, seen in seen_books),
    ]
    known: dict[Rules, int] = {}

    def count(rules: Rules) -> int:
        if rules not in known:
            n = 0
            for script, admitted, seen in kept_books:
                books = isinstance(admitted, int) and isinstance(seen, dict)
                n += books and _books_differ(admitted, seen, rules.run_with_state(script)[1], subject.simple)
            for script, inside in subject.in_bodies.items():
                predicted = rules.books_in_bodies(script)
                n += abs(len(predicted) - len(inside))
                for seen, rule in zip(inside, predicted, strict=False):  # a body too many or too few: counted above
                    n += sum(kept and a != b for kept, a, b in zip(parts, seen, rule, strict=True))
            known[rules] = n
        return known[rules]

    return count


def _books_before(
    subject: _Subject, script: Script, k: int, kept_books: Sequence[tuple[Script, object, object]]
) -> str | None:
    """The guard's books just before call ``k`` of ``script`` (a fresh guard runs the calls before it),
    next to the rules'; ``None`` for a guard that keeps its books under names of its own (``admitted``
    and ``seen`` never moved in any script) or whose books are not a count and a table."""
    if not any(admitted or seen for _script, admitted, seen in kept_books):
        return None
    books: list[tuple[object, object]] = []
    _alone(subject, replace(script, calls=script.calls[:k]), subject.files, books)
    if not books or not isinstance(books[0][0], int) or not isinstance(books[0][1], dict):
        return None
    state = REFERENCE.run_with_state(replace(script, calls=script.calls[:k]))[1]
    said, rules = _books_words(*books[0], state, subject.simple)
    return _("  just before it: {said}; {rules}").format(said=said, rules=rules)


def _answer_words(answer: tuple[str, int]) -> str:
    text, bodies = answer
    if text == "ran":
        said = _("ran it")
    elif text == "fails":
        said = _("ran it (the body failed)")
    elif text in REFUSAL.values():
        said = _("refused it: {status}").format(status=text)
    else:
        said = _answer(text)
    if text not in ("ran", "fails") and bodies:
        said += ngettext(", after running its body", ", after running its body {n} times", bodies).format(n=bodies)
    if text in ("ran", "fails") and bodies != 1:
        said += ngettext(" (its body ran {n} time)", " (its body ran {n} times)", bodies).format(n=bodies)
    return said


_ANSWERS = {"ran": N_("ran"), "fails": N_("fails"), "did not return": N_("did not return")}
"""An answer of ``admit`` in a report's words (a refusal is its status, which stays as it is)."""

_ANSWER_PATTERNS = (
    (re.compile(r"returned (?P<value>.*), not True or False"), N_("returned {value}, not True or False")),
    (
        re.compile(r"returned something else than what body\(\) returned"),
        N_("returned something else than what body() returned"),
    ),
    (
        re.compile(r"returned (?P<value>.*), not a refusal \((?P<refusals>[^()]*)\)"),
        N_("returned {value}, not a refusal ({refusals})"),
    ),
    (re.compile(r"raised (?P<error>.*)"), N_("raised {error}")),
)


def _answer(text: str) -> str:
    """An answer (``"ran"``, ``"ToolBudget"``, ``"raised ValueError: ..."``) in the notebook's language; the
    answers themselves stay English (they are compared with the rules' answers)."""
    if text in _ANSWERS:
        return _(_ANSWERS[text])
    for pattern, words in _ANSWER_PATTERNS:
        match = pattern.fullmatch(text)
        if match is not None:
            return _(words).format(**match.groupdict())
    return text


_PROBLEM_PATTERNS = (
    (
        re.compile(r"admit did not return after (?P<steps>[\d,]+) steps \(an endless loop\?\)"),
        N_("admit did not return after {steps} steps (an endless loop?)"),
    ),
    (
        re.compile(r"deadlock: (?P<waits>.*) \(a lock taken twice, or never released\?\)"),
        N_("deadlock: {waits} (a lock taken twice, or never released?)"),
    ),
    (re.compile(r"(?P<thread>[A-Z]) raised (?P<error>.*)", re.S), N_("{thread} raised {error}")),
)


def _problem_words(problem: str) -> str:
    """A problem the scheduler or a lone run gave (English: :func:`_problem_kind` reads it) in the
    notebook's language, when it is one of the common ones."""
    for pattern, words in _PROBLEM_PATTERNS:
        match = pattern.fullmatch(problem)
        if match is not None:
            found = match.groupdict()
            if "waits" in found:  # "A waits for self.lock, B waits for ..."
                found["waits"] = ", ".join(_waits_words(part) for part in found["waits"].split(", "))
            return _(words).format(**found)
    return problem


def _waits_words(wait: str) -> str:
    """``"A waits for self.lock"`` (the scheduler's words for a deadlock) in the notebook's language."""
    match = re.fullmatch(r"(?P<thread>[A-Z]) waits for (?P<lock>.+)", wait)
    return _("{thread} waits for {lock}").format(**match.groupdict()) if match is not None else wait


def _report_race(
    name: str, run: _RaceRun, result: _explore.Exploration, scripts_tried: int, schedules: int
) -> GuardReport:
    ex = result.failure
    assert ex is not None
    race = run.race
    if ex.problem:
        return GuardReport(
            name,
            (_("with {threads} threads: {problem}").format(threads=run.threads, problem=_problem_words(ex.problem)),),
            (_problem_kind(ex.problem),),
            (_("  race: {setting}").format(setting=race.setting(run.threads, run.simple)), *_schedule_lines(ex)),
            scripts_tried,
            schedules,
            found_in="race",
            preemptions=ex.preemptions,
        )
    fault, why, focus = _witness(ex, run.lock_per_call)
    if fault == "unexplained":
        bodies = sum(b for _, b in run.answers)
        if bodies > _admitted(run.answers):
            fault, why = (
                "body_for_refused_call",
                [_("a body ran for a call the guard refused: decide first, then run the body")],
            )
        elif not any(step.op == "acquire" for step in ex.steps):  # its state out of sight, and no lock at all
            fault, why = (
                "check_outside_lock",
                [
                    _(
                        "no thread took a lock in this schedule, so one call's checks and reservation ran while"
                        " the other's did: put the checks and the reservation in one `with self.lock:` block"
                    )
                ],
            )
        elif _admitted(run.answers) < max(_admitted(a) for a, _b in run.allowed):
            fault, why = "too_few_admitted", [_("the guard refused a call that no order of the calls refuses")]
    allowed = _(" or ").join(dict.fromkeys(_answers_text(a) for a, _b in run.allowed))
    after = ", ".join(f"{c.attempt} {_answer(a)}" for c, (a, _b) in zip(race.after, run.allowed[0][1], strict=True))
    # not strict: run.after stays () (or another schedule's) when a thread raised before the judge ran the calls after
    yours_after = ", ".join(f"{c.attempt} {_answer(a)}" for c, (a, _b) in zip(race.after, run.after, strict=False))
    details = [
        _("  race ({race}): {setting}").format(
            race=_race_words(race.name), setting=race.setting(run.threads, run.simple)
        ),
        _("  your guard: {answers}; then {after}").format(answers=_answers_text(run.answers), after=yours_after),
        _("  the rules, in some order: {allowed}; then {after}").format(allowed=allowed, after=after),
        ngettext(
            "  the shortest schedule that breaks it ({n} preemption, found in {schedules} schedules):",
            "  the shortest schedule that breaks it ({n} preemptions, found in {schedules} schedules):",
            ex.preemptions,
        ).format(n=ex.preemptions, schedules=f"{result.schedules:,}"),
        *_schedule_lines(ex, focus),
    ]
    problem = why[-1] if why else _("one schedule of the race gives answers no order of the calls gives")
    return GuardReport(
        name,
        (problem,),
        (fault,),
        tuple([*details, *(f"  {w}" for w in why[:-1])]),
        scripts_tried,
        schedules,
        result.bound,
        _admitted(run.answers),
        sum(b for _, b in run.answers),
        found_in="race",
        preemptions=ex.preemptions,
    )
