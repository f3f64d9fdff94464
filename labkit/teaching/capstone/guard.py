"""Break the guard (chapter 10): a threaded harness against a learner's guard.

The learner writes guards (subclasses of :class:`GuardBase`) with an
``admit(body) -> bool`` method; :func:`check_guard` releases many threads at
once against one guard and counts what it admitted and which bodies ran. It
passes only for a guard that checks and reserves in one step under its lock,
before the body (SPEC §3.1). :func:`pause`, called between the check and the
reservation, makes a race show every time rather than once in a while.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...core.errors import UserError

__all__ = ["GuardBase", "GuardReport", "GuardRound", "check_guard", "pause"]


class GuardBase:
    """A starting point for the guard exercise: a limit, a count and a lock.

    Subclass it and write ``admit(body)``: check the count against the limit,
    call :func:`pause` between the check and the reservation, reserve
    (``self.admitted += 1``), run ``body()``, and return ``True``; return
    ``False`` for a refusal (the body must not run).

    Attributes:
        limit: how many attempts may be admitted.
        admitted: attempts admitted so far (the guard's own count).
        lock: a :class:`threading.Lock`, for ``with self.lock:``.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.admitted = 0
        self.lock = threading.Lock()

    def admit(self, body: Callable[[], object]) -> bool:
        """Admit one attempt and run ``body``, or refuse it; write this in a subclass."""
        raise NotImplementedError(f"{type(self).__name__}.admit(body) is not written yet")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} admitted={self.admitted}/{self.limit}>"


_PAUSE_TIMEOUT_S = 0.5
_LOCKED_PAUSE_S = 0.02


class _Rendezvous:
    """The harness's side of :func:`pause` for one round: who is at the pause, and how many at once.

    A thread at the pause waits until every thread of the round is there too, so a guard whose
    check and reservation are not one locked step lets them all read the count before any of
    them reserves: the race shows every time. While the guard's own lock is held, the others
    cannot get there, so the pause only waits ``locked_wait_s`` (long enough for a thread that
    checks outside the lock to do so), and a correct guard costs milliseconds, not timeouts.
    """

    def __init__(self, guard: object, threads: int, timeout_s: float, locked_wait_s: float) -> None:
        self.lock = getattr(guard, "lock", None)
        self.threads = threads
        self.timeout_s = timeout_s
        self.locked_wait_s = locked_wait_s
        self.condition = threading.Condition()
        self.arrived = 0
        self.inside = 0
        self.most_inside = 0

    def _guard_locked(self) -> bool:
        locked = getattr(self.lock, "locked", None)
        return bool(locked()) if callable(locked) else False

    def pause(self) -> None:
        wait_s = self.locked_wait_s if self._guard_locked() else self.timeout_s
        with self.condition:
            self.arrived += 1
            self.inside += 1
            self.most_inside = max(self.most_inside, self.inside)
            self.condition.notify_all()
            self.condition.wait_for(lambda: self.arrived >= self.threads, wait_s)
            self.inside -= 1


_round = threading.local()  # a harness thread's round: pause() finds its rendezvous here
_harness_lock = threading.Lock()  # one harness at a time (the switch interval is process-wide)


def pause() -> None:
    """Stand for the work a real guard may do between its check and its reservation.

    Call it in ``admit`` right after the check. Under :func:`check_guard`
    it lets every other thread run up to the same point (if the guard lets
    them), so a race shows every time instead of once in a while; elsewhere
    it does nothing.
    """
    rendezvous = getattr(_round, "rendezvous", None)
    if rendezvous is not None:
        rendezvous.pause()


@dataclass(frozen=True)
class GuardRound:
    """What one round of :func:`check_guard` counted.

    Attributes:
        admitted: ``admit`` calls that returned ``True``.
        refused: ``admit`` calls that returned ``False``.
        bodies_started: how many times a body was entered.
        most_at_pause: the most threads between a check and a reservation
            (inside :func:`pause`) at the same moment.
        pauses: how many times :func:`pause` was called.
        problems: one line per thread whose ``admit`` raised, returned
            something else than ``True``/``False``, or never returned.
    """

    admitted: int
    refused: int
    bodies_started: int
    most_at_pause: int
    pauses: int
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class GuardReport:
    """The verdict of :func:`check_guard`: the worst round's counts and what is wrong, if anything.

    Attributes:
        guard: the guard class's name.
        limit: the limit each guard was made with.
        threads: threads released together in each round.
        rounds: every round's counts.
        problems: what the counts show is wrong; empty for a correct guard.
    """

    guard: str
    limit: int
    threads: int
    rounds: tuple[GuardRound, ...]
    problems: tuple[str, ...]

    @property
    def passed(self) -> bool:
        """Every round admitted exactly ``limit`` attempts, one at a time, and ran exactly their bodies."""
        return not self.problems

    @property
    def worst(self) -> GuardRound:
        """The round that admitted the most attempts (then started the most bodies)."""
        return max(self.rounds, key=lambda r: (r.admitted, r.bodies_started, r.most_at_pause))

    @property
    def admitted(self) -> int:
        """Attempts admitted in the worst round."""
        return self.worst.admitted

    @property
    def bodies_started(self) -> int:
        """Bodies entered in the worst round."""
        return self.worst.bodies_started

    @property
    def most_at_pause(self) -> int:
        """The most threads at the pause at once, in the worst round."""
        return self.worst.most_at_pause

    def __str__(self) -> str:
        w = self.worst
        lines = [
            (
                f"{self.guard}: {self.threads} threads at once against a limit of {self.limit}, "
                f"{len(self.rounds)} rounds (the worst shown)"
            ),
            f"  admitted          {w.admitted}{_over(w.admitted, self.limit)}",
            f"  refused           {w.refused}",
            f"  bodies started    {w.bodies_started}{_over(w.bodies_started, self.limit)}",
            f"  at pause at once  {w.most_at_pause}",
        ]
        if self.passed:
            lines.append(
                "correct: exactly the limit admitted, one check-and-reserve at a time, no body before its check"
            )
        else:
            lines.append("not a correct guard:")
            lines.extend(f"  - {problem}" for problem in self.problems)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"GuardReport(guard={self.guard!r}, passed={self.passed}, admitted={self.admitted}/{self.limit})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))


def _over(count: int, limit: int) -> str:
    return f"   {count - limit} over the limit of {limit}" if count > limit else ""


_JOIN_TIMEOUT_S = 5.0


def _one_round(guard_class: type, limit: int, threads: int, pause_timeout_s: float) -> GuardRound:
    guard = guard_class(limit)
    rendezvous = _Rendezvous(guard, threads, pause_timeout_s, _LOCKED_PAUSE_S)
    barrier = threading.Barrier(threads)
    counts = {"bodies": 0}
    counts_lock = threading.Lock()
    results: list[object] = [None] * threads
    finished = [False] * threads

    def body() -> None:
        with counts_lock:
            counts["bodies"] += 1

    def attempt(index: int) -> None:
        _round.rendezvous = rendezvous  # this thread's pause() calls belong to this round only
        try:
            barrier.wait()
            results[index] = guard.admit(body)
        except Exception as exc:  # the learner's admit failed: reported, not raised
            results[index] = exc
        finished[index] = True

    workers = [threading.Thread(target=attempt, args=(i,), daemon=True) for i in range(threads)]
    for worker in workers:
        worker.start()
    deadline = time.monotonic() + _JOIN_TIMEOUT_S
    for worker in workers:
        worker.join(max(deadline - time.monotonic(), 0.0))
    problems: dict[str, int] = {}
    for index, result in enumerate(results):
        if not finished[index]:
            problem = f"admit did not return within {_JOIN_TIMEOUT_S:g} s (a deadlock? e.g. taking self.lock twice)"
        elif isinstance(result, Exception):
            problem = f"admit raised {type(result).__name__}: {result}"
        elif not isinstance(result, bool):
            problem = f"admit returned {result!r}, not True (admitted, body ran) or False (refused)"
        else:
            continue
        problems[problem] = problems.get(problem, 0) + 1
    done = [r for i, r in enumerate(results) if finished[i]]
    return GuardRound(
        admitted=sum(r is True for r in done),
        refused=sum(r is False for r in done),
        bodies_started=counts["bodies"],
        most_at_pause=rendezvous.most_inside,
        pauses=rendezvous.arrived,
        problems=tuple(f"{p} ({n} of {threads} threads)" for p, n in problems.items()),
    )


def _diagnose(rounds: Sequence[GuardRound], limit: int, threads: int) -> tuple[str, ...]:
    found: list[str] = []

    def add(problem: str) -> None:
        if problem not in found:
            found.append(problem)

    for r in rounds:
        for problem in r.problems:
            add(problem)
        if r.problems:
            continue
        if r.bodies_started > r.admitted:
            add(
                f"{r.bodies_started - r.admitted} bodies ran for calls the guard refused: the check came "
                "after the body; check and reserve first, then run the body"
            )
        if r.admitted > limit and r.most_at_pause > 1:
            add(
                f"{r.admitted} admitted against a limit of {limit}: {r.most_at_pause} threads were between "
                "their check and their reservation at once, so they all read the count before any reserved; "
                "put the check and the reservation in one step under self.lock"
            )
        elif r.admitted > limit:
            add(
                f"{r.admitted} admitted against a limit of {limit}: the count was read and raised in separate "
                "steps; check and reserve under self.lock, with pause() between them"
            )
        elif r.most_at_pause > 1:
            add(
                f"{r.most_at_pause} threads were at pause() at once: the code around it is not under one "
                "lock; another thread can change the count between a check and its reservation"
            )
        if r.admitted < limit:
            add(
                f"only {r.admitted} admitted with {threads} threads asking and a limit of {limit}: admit up to the limit"
            )
        if r.bodies_started < r.admitted:
            add(
                f"{r.admitted - r.bodies_started} admitted calls never ran their body: run body() once per admitted call"
            )
        if r.admitted and r.pauses < r.admitted:
            add(
                "pause() was not called for every admitted attempt: call it between the check and the "
                "reservation, as the exercise asks (without it the harness cannot show a race)"
            )
    return tuple(found)


def check_guard(
    guard_class: type,
    *,
    limit: int = 3,
    threads: int = 8,
    rounds: int = 3,
    pause_timeout_s: float = _PAUSE_TIMEOUT_S,
) -> GuardReport:
    """Release ``threads`` threads at once on a fresh guard, ``rounds`` times, and judge the counts.

    Each round makes ``guard_class(limit)``; every thread waits at a barrier,
    then calls ``guard.admit(body)``. The harness counts ``True`` (admitted)
    and ``False`` (refused) answers and the bodies that started. While it
    runs, :func:`pause` waits until every thread has reached it (or
    ``pause_timeout_s``; a few milliseconds while the guard's ``lock`` is
    held, since the others then cannot get there), so a guard whose check and reservation are not one
    locked step over-admits every time, not once in a while; the thread
    switch interval is shortened too, and restored after.

    Args:
        guard_class: a class taking the limit, with ``admit(body) -> bool``
            (e.g. a :class:`GuardBase` subclass).
        limit: the limit each guard is made with (at least 1, below ``threads``).
        threads: threads per round.
        rounds: how many fresh guards to try; the report shows the worst.
        pause_timeout_s: the longest one :func:`pause` waits for the others
            while the guard's lock is free.

    Returns:
        A :class:`GuardReport`; ``.passed`` is true only if every round
        admitted exactly ``limit`` attempts, one thread at the pause at a
        time, one body per admitted attempt and none for a refusal. Errors in
        ``admit`` are reported in it, never raised.

    Raises:
        UserError: ``guard_class`` is not a class, or the numbers are out of range.
    """
    if not isinstance(guard_class, type):
        raise UserError(f"check_guard takes the guard class itself (e.g. check_guard(Guard)), not {guard_class!r}")
    for name, value in (("limit", limit), ("threads", threads), ("rounds", rounds)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise UserError(f"{name} must be a whole number >= 1, not {value!r}")
    if threads <= limit:
        raise UserError(f"threads ({threads}) must be more than the limit ({limit}), or nothing is ever refused")
    if isinstance(pause_timeout_s, bool) or not isinstance(pause_timeout_s, (int, float)) or pause_timeout_s <= 0:
        raise UserError(f"pause_timeout_s must be a number of seconds > 0, not {pause_timeout_s!r}")
    try:
        guard_class(limit)
    except Exception as exc:  # the learner's constructor failed: one clear line
        raise UserError(f"{guard_class.__name__}({limit}) failed: {type(exc).__name__}: {exc}") from None
    with _harness_lock:
        interval = sys.getswitchinterval()
        sys.setswitchinterval(1e-5)  # switch threads often, so interleavings show without a pause too
        try:
            done = tuple(_one_round(guard_class, limit, threads, pause_timeout_s) for _ in range(rounds))
        finally:
            sys.setswitchinterval(interval)
    return GuardReport(guard_class.__name__, limit, threads, done, _diagnose(done, limit, threads))
