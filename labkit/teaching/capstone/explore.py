"""Every interleaving of a few threads, one at a time: the guard checker's scheduler (chapter 10).

A race shows only when threads take turns at the wrong moment. Instead of
hoping for that moment, this module *makes* every moment happen, one after
another, like Microsoft's CHESS and tokio's ``loom``:

* the threads are real, but only one runs at a time: a thread runs until its
  next **scheduling point**, where the scheduler decides who runs next
  (the thread holding the baton hands it over and waits for it back);
* the points are the operations other threads can see: every read or write
  of an attribute of the guard (:class:`~labkit.teaching.capstone.GuardBase`
  reports them, so a switch can fall inside ``self.admitted += 1``), every
  operation on a dict, list, set or Counter it holds (watched copies put in
  place for the check), taking or releasing one of its locks (cooperative
  :class:`Lock`, :class:`RLock`, :class:`Semaphore` and :class:`Condition`
  put in place of threading's), ``pause()``, and entering a body. A guard
  whose state hides elsewhere (an object of its own, a module-level table)
  gets a switch before every line of its code too (a trace hook limited to
  the files it is written in): slower, and just as exhaustive;
* :func:`explore` replays the threads under every schedule that switches
  away from a running thread (a **preemption**) at most ``bound`` times,
  fewest preemptions first, and stops at the first schedule its judge
  rejects. Most real concurrency bugs need two preemptions at most (the
  CHESS result), so ``bound=2`` finds them in a few thousand schedules.

Everything is deterministic: the same schedule replays the same run. The cost
is a thread hand-off per switch (tens of microseconds) and a Python call per
point; docs/benchmarks.md has a row for a whole check.
"""

from __future__ import annotations

import collections
import linecache
import os
import sys
import threading
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

__all__ = ["Condition", "Execution", "Exploration", "Lock", "RLock", "Semaphore", "Step", "current", "explore"]

_local = threading.local()  # a worker's execution and its thread index


def current() -> Execution | None:
    """The execution the calling thread belongs to, or ``None`` outside the checker."""
    return getattr(_local, "execution", None)


class Abandoned(BaseException):
    """Unwinds a worker of an execution the scheduler gave up (a deadlock, a step cap, a hang)."""


@dataclass(frozen=True)
class Step:
    """One visible operation of one thread, in the order the schedule ran them.

    Attributes:
        thread: the thread's index (0 is "A", 1 is "B", ...).
        what: what it did, e.g. ``"reads admitted = 2"``, ``"takes lock"``, ``"runs its body"``.
        line: the learner's source line it was on (stripped), or ``""``.
        locks: the locks the thread held while doing it, by name (``"self.lock"``).
        name: the attribute read or written, or the lock taken or released.
        op: ``"read"``, ``"write"``, ``"acquire"``, ``"release"``, ``"body"``, ``"pause"``,
            ``"return"``, or ``""``.
        acquisition: which taking of the innermost lock held (so two locked steps differ).
        value: the value read or written, as text.
    """

    thread: int
    what: str
    line: str = ""
    locks: tuple[str, ...] = ()
    name: str = ""
    op: str = ""
    acquisition: int = 0
    value: str = ""


def thread_name(index: int) -> str:
    """``0 -> "A"``, ``1 -> "B"``, ..."""
    return chr(ord("A") + index)


_READY, _BLOCKED, _DONE = "ready", "blocked", "done"


class Execution:
    """One run of ``len(functions)`` threads under one schedule (a list of choices to replay).

    Use :func:`explore`; an execution is built and run by it. Inside a worker,
    :func:`current` returns the execution, and guard code reports its points
    with :meth:`point` and :meth:`note`.
    """

    def __init__(
        self,
        functions: Sequence[Callable[[], object]],
        prefix: Sequence[int],
        files: frozenset[str],
        max_steps: int,
        timeout_s: float,
        lines: bool = False,
    ) -> None:
        self.functions = list(functions)
        self.lines = lines
        self.prefix = list(prefix)
        self.files = files
        self.max_steps = max_steps
        self.timeout_s = timeout_s
        n = len(self.functions)
        self.state = [_READY] * n
        self.waiting_on: list[object | None] = [None] * n
        self.timed = [False] * n
        self.held: list[list[tuple[str, int]]] = [[] for _ in range(n)]  # (lock name, acquisition number)
        self.results: list[object] = [None] * n
        self.errors: list[BaseException | None] = [None] * n
        self.decisions: list[tuple[tuple[int, ...], int, int | None]] = []
        self.steps: list[Step] = []
        self.points = 0
        self.written: set[str] = set()  # names of the guard's attributes its threads assigned
        self.observe: Callable[[Execution], None] | None = None  # called at every point (state snapshots)
        self.problem: str | None = None
        self._turn = [threading.Semaphore(0) for _ in range(n)]
        self._finished = threading.Event()
        self._abandoned = False
        self.running = 0  # the thread whose turn it is
        self._acquisitions = 0

    # -- what guard code calls ------------------------------------------------------------

    def me(self) -> int:
        return _local.index

    def point(self) -> None:
        """A scheduling point: the scheduler may let another thread run before the next operation."""
        self.points += 1
        if self.points > self.max_steps:
            self._give_up(f"admit did not return after {self.max_steps:,} steps (an endless loop?)")
        if self.observe is not None:
            self.observe(self)
        self._schedule(self.me())

    def note(self, what: str, *, name: str = "", op: str = "", value: str = "") -> None:
        """Record the operation the calling thread does now (after its :meth:`point`)."""
        if self._abandoned:
            return  # what threads do while unwinding a given-up schedule is not part of it
        i = self.me()
        held = self.held[i]
        self.steps.append(
            Step(i, what, self._learner_line(), tuple(n for n, _ in held), name, op, held[-1][1] if held else 0, value)
        )

    def _trace(self, frame: Any, event: str, arg: object) -> Any:
        if event == "call" and frame.f_code.co_filename in self.files:
            return self._trace_lines
        return None

    def _trace_lines(self, frame: Any, event: str, arg: object) -> Any:
        if event == "line" and current() is self:
            self.point()  # a switch before every line of the learner's code
        return self._trace_lines

    # -- the scheduler --------------------------------------------------------------------

    def _choose(self, running: int | None) -> int | None:
        enabled = tuple(t for t, s in enumerate(self.state) if s == _READY)
        if not enabled:
            timed = [t for t, s in enumerate(self.state) if s == _BLOCKED and self.timed[t]]
            if not timed:
                return None
            # every thread waits: a timed wait is the one that can end, by timing out
            self.state[timed[0]] = _READY
            self.waiting_on[timed[0]] = "timed out"
            enabled = (timed[0],)
        k = len(self.decisions)
        current_enabled = running if running in enabled else None
        if k < len(self.prefix):
            chosen = self.prefix[k]
            if chosen not in enabled:
                self._give_up(
                    "the guard did something different when run again under the same schedule "
                    "(random numbers, the clock, or state shared between guards?)"
                )
        else:
            chosen = current_enabled if current_enabled is not None else enabled[0]
        self.decisions.append((enabled, chosen, current_enabled))
        return chosen

    def _schedule(self, i: int) -> None:
        chosen = self._choose(i)
        if chosen is None:
            waits = ", ".join(
                f"{thread_name(t)} waits for {_lock_name(self.waiting_on[t])}"
                for t, s in enumerate(self.state)
                if s == _BLOCKED
            )
            self._give_up(f"deadlock: {waits} (a lock taken twice, or never released?)")
        if chosen != i:
            self._hand_over(chosen)
            self._wait_turn(i)

    def _hand_over(self, chosen: int) -> None:
        self.running = chosen
        self._turn[chosen].release()

    def _wait_turn(self, i: int) -> None:
        # no time limit: however slow the machine, the turn comes (a given-up execution releases every turn)
        self._turn[i].acquire()
        if self._abandoned:
            raise Abandoned
        # the turn is ours again

    def _give_up(self, problem: str) -> NoReturn:
        if self.problem is None:
            self.problem = problem
        self._abandoned = True
        for turn in self._turn:
            turn.release()
        self._finished.set()
        raise Abandoned

    def block(self, on: object, timed: bool) -> None:
        """The calling thread cannot go on until ``on`` (a lock or condition) lets it; run another."""
        i = self.me()
        self.state[i] = _BLOCKED
        self.waiting_on[i] = on
        self.timed[i] = timed
        self._schedule(i)

    def wake(self, on: object, count: int | None = None) -> int:
        """Threads blocked on ``on`` may run again (all, or ``count`` of them); returns how many."""
        woken = 0
        for t, waiting in enumerate(self.waiting_on):
            if waiting is on and self.state[t] == _BLOCKED and (count is None or woken < count):
                self.state[t] = _READY
                self.waiting_on[t] = None
                woken += 1
        return woken

    def _worker(self, i: int) -> None:
        _local.execution, _local.index = self, i
        try:
            self._wait_turn(i)
            if self.lines:
                sys.settrace(self._trace)
            self.results[i] = self.functions[i]()
        except Abandoned:
            return
        except BaseException as exc:  # reported by the judge, with the thread that raised it
            self.errors[i] = exc
        finally:
            if self.lines:
                sys.settrace(None)
            _local.execution = None
        self.state[i] = _DONE
        try:
            nxt = self._choose(None)
        except Abandoned:
            return
        if nxt is not None:
            self._hand_over(nxt)
        elif any(s == _BLOCKED for s in self.state):
            try:
                self._schedule(i)  # raises: the threads left are all blocked
            except Abandoned:
                return
        else:
            self._finished.set()

    def run(self) -> Execution:
        """Run the threads under this execution's schedule; returns when all are done or it gave up."""
        workers = [threading.Thread(target=self._worker, args=(i,), daemon=True) for i in range(len(self.functions))]
        for worker in workers:
            worker.start()
        first = self._choose(None)
        assert first is not None
        self._hand_over(first)
        stuck = _watch(self, workers)
        if stuck:
            self.problem = self.problem or (
                f"admit did not return within {self.timeout_s:g} s: waiting for something the checker does not "
                "control (a multiprocessing lock, an Event, a queue, I/O?); a threading Lock, RLock, Condition or "
                "Semaphore it can schedule"
            )
            self._abandoned = True
            for turn in self._turn:
                turn.release()
        for worker in workers:
            worker.join(0.5 if stuck else None)  # a stuck worker may never end: it is a daemon
        return self

    # -- reading the schedule ---------------------------------------------------------------

    @property
    def preemptions(self) -> int:
        """How many times this schedule switched away from a thread that could have gone on."""
        return sum(current is not None and chosen != current for _, chosen, current in self.decisions)

    def acquisition(self) -> int:
        self._acquisitions += 1
        return self._acquisitions

    def _learner_line(self) -> str:
        frame: types.FrameType | None = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename in self.files:
                return linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
            frame = frame.f_back
        return ""


_SLICE_S = 0.25  # how often the watch looks at a running execution


def _watch(ex: Execution, workers: Sequence[threading.Thread]) -> bool:
    """Wait for ``ex`` to end; ``True`` when its running thread is stuck where the scheduler cannot reach it.

    Whether a guard is stuck never depends on how busy the machine is. A point reached, or a turn handed
    over, is progress: the watch waits on. Without progress, the thread whose turn it is is stuck when,
    for ``ex.timeout_s``, it either sleeps outside the scheduler (blocked on an Event, a queue, a
    multiprocessing lock, I/O: the operating system says it sleeps) or computes without a point (an
    endless loop: its own CPU time, not the clock, is counted). A thread waiting for the processor is
    neither, however long it waits. Where the operating system cannot be asked (no ``/proc``), the clock
    is counted instead, from the last progress.
    """
    seen, still, cpu_from = -1, 0.0, 0.0
    while not ex._finished.wait(_SLICE_S):
        progress = ex.points + len(ex.decisions)
        worker = workers[ex.running]
        state, cpu = _thread_state(worker)
        if progress != seen:
            seen, still, cpu_from = progress, 0.0, cpu
            continue
        if state is None:  # no /proc: the clock
            still += _SLICE_S
        elif state == "S" and not _in_scheduler(worker):
            still += _SLICE_S  # asleep in something the scheduler does not control
        elif state == "R":
            still = cpu - cpu_from  # computing without a point
        if still >= ex.timeout_s:
            return True
    return False


def _thread_state(worker: threading.Thread) -> tuple[str | None, float]:
    """The thread's state as the operating system sees it (``"R"`` running or waiting for the processor,
    ``"S"`` asleep, ...) and the CPU seconds it used; ``(None, 0.0)`` where ``/proc`` cannot tell."""
    try:
        with open(f"/proc/self/task/{worker.native_id}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None, 0.0
    return fields[0], (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _in_scheduler(worker: threading.Thread) -> bool:
    """Whether the thread waits in the scheduler itself (for its turn, or for a lock the scheduler gives)."""
    frame = sys._current_frames().get(worker.ident or -1)
    while frame is not None:
        if frame.f_code.co_filename == __file__ and frame.f_code.co_name == "_wait_turn":
            return True
        frame = frame.f_back
    return False


def _lock_name(lock: object) -> str:
    return getattr(lock, "name", None) or "a lock"


# -- cooperative locks: what the checker puts in place of a guard's threading locks --------


class Lock:
    """A :class:`threading.Lock` the scheduler can see: taking it is a scheduling point.

    Outside an execution it works as a plain lock for one thread (taking it
    twice raises instead of hanging).
    """

    reentrant = False

    def __init__(self, name: str = "lock") -> None:
        self.name = name
        self.owner: int | None = None
        self.depth = 0

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        ex = current()
        me = ex.me() if ex is not None else -1
        if ex is not None:
            ex.point()
        while self.owner is not None and not (self.reentrant and self.owner == me):
            if not blocking:
                if ex is not None:  # a failed try: let the holder run first (no preemption counted)
                    ex.note(f"tries {self.name}: taken")
                    ex.block(self, timed=True)
                    ex.waiting_on[me] = None
                return False
            if ex is None:
                raise RuntimeError(f"{self.name} is already held: taking it again would wait forever")
            ex.note(f"waits for {self.name}")
            ex.block(self, timed=timeout is not None and timeout >= 0)
            if ex.waiting_on[me] == "timed out":
                ex.waiting_on[me] = None
                return False
        self.owner = me
        self.depth += 1
        if ex is not None:
            if self.depth == 1:
                ex.held[me].append((self.name, ex.acquisition()))
            ex.note(f"takes {self.name}", name=self.name, op="acquire")
        return True

    def release(self) -> None:
        ex = current()
        me = ex.me() if ex is not None else -1
        if self.owner is None or self.owner != me:
            raise RuntimeError(f"release of {self.name}, which this thread does not hold")
        self.depth -= 1
        if self.depth:
            return
        self.owner = None
        if ex is not None:
            ex.note(f"releases {self.name}", name=self.name, op="release")
            ex.held[me] = [h for h in ex.held[me] if h[0] != self.name]
            ex.wake(self)

    def locked(self) -> bool:
        return self.owner is not None

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"<checker {type(self).__name__} {self.name} {'held' if self.owner is not None else 'free'}>"


class RLock(Lock):
    """A :class:`threading.RLock` the scheduler can see."""

    reentrant = True


class Semaphore:
    """A :class:`threading.Semaphore` (or ``BoundedSemaphore``) the scheduler can see."""

    def __init__(self, value: int = 1, name: str = "semaphore") -> None:
        self.name = name
        self.value = value
        self.holders: list[int] = []

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        ex = current()
        me = ex.me() if ex is not None else -1
        if ex is not None:
            ex.point()
        while self.value <= 0:
            if ex is None:
                raise RuntimeError(f"{self.name} is at 0: taking it would wait forever")
            if not blocking:
                ex.note(f"tries {self.name}: at 0")
                ex.block(self, timed=True)
                ex.waiting_on[me] = None
                return False
            ex.note(f"waits for {self.name}")
            ex.block(self, timed=timeout is not None)
            if ex.waiting_on[me] == "timed out":
                ex.waiting_on[me] = None
                return False
        self.value -= 1
        self.holders.append(me)
        if ex is not None:
            ex.held[me].append((self.name, ex.acquisition()))
            ex.note(f"takes {self.name}", name=self.name, op="acquire")
        return True

    def release(self, n: int = 1) -> None:
        ex = current()
        me = ex.me() if ex is not None else -1
        self.value += n
        if me in self.holders:
            self.holders.remove(me)
        if ex is not None:
            ex.note(f"releases {self.name}", name=self.name, op="release")
            ex.held[me] = [h for h in ex.held[me] if h[0] != self.name]
            ex.wake(self)

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


class Condition:
    """A :class:`threading.Condition` the scheduler can see (over a checker lock)."""

    def __init__(self, lock: Lock | None = None, name: str = "condition") -> None:
        self.name = name
        self.lock = lock if lock is not None else RLock(name)

    def acquire(self, *args: object) -> bool:
        return self.lock.acquire(*args)  # type: ignore[arg-type]

    def release(self) -> None:
        self.lock.release()

    def __enter__(self) -> bool:
        return self.lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self.lock.release()

    def wait(self, timeout: float | None = None) -> bool:
        ex = current()
        if ex is None:
            return False  # one thread: nobody can notify it
        me = ex.me()
        depth, self.lock.depth = self.lock.depth, 1
        self.lock.release()
        ex.note(f"waits on {self.name}")
        ex.block(self, timed=timeout is not None)
        timed_out = ex.waiting_on[me] == "timed out"
        ex.waiting_on[me] = None
        self.lock.acquire()
        self.lock.depth = depth
        return not timed_out

    def wait_for(self, predicate: Callable[[], bool], timeout: float | None = None) -> bool:
        result = predicate()
        while not result:
            if not self.wait(timeout) and timeout is not None:
                return predicate()
            result = predicate()
        return result

    def notify(self, n: int = 1) -> None:
        ex = current()
        if ex is not None:
            ex.wake(self, n)

    def notify_all(self) -> None:
        ex = current()
        if ex is not None:
            ex.wake(self)


# -- watched containers: what the checker puts in place of a guard's dicts, lists, sets and Counters --

_WRITES = frozenset(
    {
        "__setitem__",
        "__delitem__",
        "setdefault",
        "pop",
        "popitem",
        "update",
        "clear",
        "append",
        "extend",
        "insert",
        "remove",
        "add",
        "discard",
        "__iadd__",
        "__ior__",
        "__isub__",
        "__iand__",
        "sort",
        "reverse",
        "appendleft",
        "popleft",
        "extendleft",
        "rotate",
        "subtract",
        "difference_update",
        "intersection_update",
        "symmetric_difference_update",
    }
)
_READS = frozenset(
    {
        "__getitem__",
        "get",
        "__contains__",
        "__len__",
        "__iter__",
        "keys",
        "values",
        "items",
        "copy",
        "count",
        "index",
        "most_common",
        "total",
        "elements",
        "__eq__",
        "__or__",
        "__and__",
        "__sub__",
        "issubset",
        "issuperset",
        "union",
        "intersection",
        "difference",
        "isdisjoint",
    }
)


class _Inside(threading.local):
    depth = 0  # 1 while a watched method runs in this thread: the calls it makes itself are not points


_inside = _Inside()

_Root = type[dict[Any, Any] | list[Any] | set[Any] | collections.deque[Any]]
_ROOTS: tuple[_Root, ...] = (dict, list, set, collections.deque)  # no class has two of them (their layouts conflict)


def _watched_method(root: _Root, name: str, original: Callable[..., object]) -> Callable[..., object]:
    op = "write" if name in _WRITES else "read"

    def method(self: Any, *args: object, **kwargs: object) -> object:
        ex = current()
        if ex is None or _inside.depth:
            return original(self, *args, **kwargs)
        ex.point()
        _inside.depth = 1
        try:
            result = original(self, *args, **kwargs)
            value = root.__repr__(self)
        finally:
            _inside.depth = 0
        label = self.__dict__.get("_labkit_name", "a container")
        verb = "changes" if op == "write" else "reads"
        ex.note(f"{verb} {label}", name=label, op=op, value=value)
        return result

    method.__name__ = name
    return method


_WATCHED: dict[type, type] = {}


def _watched_class(cls: type) -> type:
    if cls not in _WATCHED:
        root = next(b for b in _ROOTS if b in cls.__mro__)
        methods = {
            name: _watched_method(root, name, getattr(cls, name))
            for name in _READS | _WRITES
            if callable(getattr(cls, name, None))
        }
        _WATCHED[cls] = type(f"Watched{cls.__name__.title()}", (cls,), methods)
    return _WATCHED[cls]


def watched(value: object, name: str) -> object | None:
    """A copy of ``value`` (a dict, list, set, deque or a subclass such as Counter) whose every
    operation is a scheduling point, or ``None`` for anything else."""
    cls = type(value)
    if not issubclass(cls, (dict, list, set, collections.deque)) or cls in _WATCHED.values():
        return None
    try:
        watched_cls = _watched_class(cls)
        if isinstance(value, collections.defaultdict):
            copy = watched_cls(value.default_factory, value)
        elif isinstance(value, collections.deque):
            copy = watched_cls(value, maxlen=value.maxlen)
        else:
            copy = watched_cls(value)
        copy.__dict__.update(getattr(value, "__dict__", {}))
        copy.__dict__["_labkit_name"] = name
    except Exception:  # a subclass with its own constructor: leave it (its lines are traced instead)
        return None
    return copy


# -- exploring every schedule -----------------------------------------------------------------


@dataclass
class Exploration:
    """What :func:`explore` did.

    Attributes:
        schedules: how many schedules it ran.
        bound: the most preemptions a schedule had.
        complete: every schedule within the bound was run (``False``: the
            ``max_schedules`` cap stopped it first).
        failure: the first rejected execution (fewest preemptions), or ``None``.
        verdict: the judge's words for it.
    """

    schedules: int = 0
    bound: int = 0
    complete: bool = True
    failure: Execution | None = None
    verdict: str = ""
    by_bound: dict[int, int] = field(default_factory=dict)


@dataclass
class _Node:
    enabled: tuple[int, ...]
    current: int | None
    chosen: int
    tried: set[int]
    preemptions_before: int

    def cost(self, choice: int) -> int:
        return int(self.current is not None and choice != self.current)


def explore(
    make: Callable[[], tuple[Sequence[Callable[[], object]], Callable[[Execution], str | None]]],
    *,
    files: frozenset[str],
    bound: int = 2,
    max_schedules: int = 20_000,
    max_steps: int = 5_000,
    timeout_s: float = 2.0,
    lines: bool = False,
) -> Exploration:
    """Run ``make()``'s threads under every schedule with at most ``bound`` preemptions.

    Args:
        make: called once per schedule; returns the thread functions (fresh
            state each time) and a judge that reads the finished execution
            and returns ``None`` (fine) or what is wrong, in words.
        files: the source files whose lines name a step (the learner's code).
        bound: the most preemptions per schedule (0 runs each thread to its
            end or until it blocks before the next starts).
        max_schedules: a cap on the schedules run in all.
        max_steps: a cap on the points of one schedule (an endless loop).
        timeout_s: the longest a running thread may sleep outside the scheduler, or compute without a
            point (its own CPU time), before the schedule is given up (:func:`_watch`): never the clock.
        lines: a switch is also possible before every line of ``files``'
            code (for state the guard's own hooks cannot see: many more
            schedules).

    Returns:
        An :class:`Exploration`. Bounds are explored in increasing order, so
        a failure found is one with the fewest preemptions that break it.
    """
    result = Exploration()
    for level in range(bound + 1):
        result.bound = level
        before = result.schedules
        prefix: list[int] = []
        stack: list[_Node] = []
        while True:
            if result.schedules >= max_schedules:
                result.complete = False
                return result
            functions, judge = make()
            ex = Execution(functions, prefix, files, max_steps, timeout_s, lines).run()
            result.schedules += 1
            verdict = ex.problem or judge(ex)
            if verdict is not None and (ex.preemptions == level or ex.problem):
                result.failure, result.verdict = ex, verdict
                result.by_bound[level] = result.schedules - before
                return result
            preemptions = stack[-1].preemptions_before + stack[-1].cost(stack[-1].chosen) if stack else 0
            for enabled, chosen, cur in ex.decisions[len(stack) :]:
                node = _Node(enabled, cur, chosen, {chosen}, preemptions)
                stack.append(node)
                preemptions += node.cost(chosen)
            while stack:
                node = stack[-1]
                alternative = next(
                    (
                        t
                        for t in node.enabled
                        if t not in node.tried and node.preemptions_before + node.cost(t) <= level
                    ),
                    None,
                )
                if alternative is None:
                    stack.pop()
                    continue
                node.tried.add(alternative)
                node.chosen = alternative
                prefix = [n.chosen for n in stack]
                break
            if not stack:
                break
        result.by_bound[level] = result.schedules - before
    return result
