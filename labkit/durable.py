"""Durable decisions: a write that happens once, across crashes, replays and racing hosts
(chapter 9, *A durable decision*).

Loop bounds live in one :class:`~labkit.ExecutionScope` and die with it: a
new run (after a restart, or a retry by the caller) admits the same call
again. That is right for loop control and wrong for a write. This module is
the other mechanism the lesson points to, on the standard library's
``sqlite3`` (the embedded default) or on PostgreSQL (``postgresql://`` URL,
psycopg 3) with the same API and guarantees (:mod:`labkit._durable_sql`):

1. **operation id** — derived from the caller's request id and the call's
   signature (:func:`operation_id`), so a replay of the same request names
   the same operation; it is persisted *before* any effect.
2. **immutable proposal** — the arguments exactly as proposed (every digit,
   each number its own type) with their signature beside them, stored with
   the id; proposing the same id with other arguments raises, and a trigger
   refuses any ``UPDATE`` of a stored proposal.
3. **recorded decision** — ``approved`` or ``rejected`` with a reason,
   recorded once: :meth:`DecisionStore.settle` consults the policy with the
   operation locked, so racing hosts consult it once and the others adopt
   the recorded decision; a trigger allows only ``proposed ->
   approved|rejected -> (approved) applied``.
4. **one transaction** — the effect row (table ``effects``, primary key =
   operation id) is written and the operation marked ``applied`` in a
   single transaction; every result says whether *this* call wrote it
   (:class:`Settlement`).

What it guarantees, for effects written through :meth:`DecisionStore.apply`
into this same database: after any crash (even ``SIGKILL``) at any point,
replaying the request with :meth:`DecisionStore.settle` leaves exactly one
effect row per operation and loses no proposal or decision, however many
hosts settle it at once; an operation is never applied without a recorded
approval.

What it does not guarantee: an effect *outside* this database (an HTTP
call, an e-mail, a payment API) cannot join the transaction, so it becomes
at-most-once or at-least-once depending on where it sits; making it exactly
once needs the remote side to accept the operation id as an idempotency
key. It does not authenticate who decided, does not bound the loop (that is
the scope's job), and a different request id is a different operation.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from os import PathLike
from typing import Any

from ._durable_sql import Dialect, dialect_for
from .core.arguments import _json_shaped
from .core.errors import LabkitError, UserError
from .core.scope import ExecutionScope, GuardedTool
from .core.signature import NonFiniteNumber, canonical, signature

__all__ = [
    "DecisionConflict",
    "DecisionStore",
    "DurableError",
    "Operation",
    "OperationState",
    "ProposalConflict",
    "Settlement",
    "durable_comment_tool",
    "naive_comment_tool",
    "operation_id",
    "settle_together",
]


class DurableError(LabkitError):
    """A durable operation cannot go on as asked; the message says why."""


def _spaced(signature: str) -> str:
    """A canonical signature with a space after each comma and colon, so a message can wrap between arguments."""
    return _BETWEEN_ARGUMENTS.sub(lambda m: m.group(1) or m.group(2) + " ", signature)  # strings kept as they are


_BETWEEN_ARGUMENTS = re.compile(r'("(?:[^"\\]|\\.)*")|([,:])')


class ProposalConflict(DurableError):
    """The operation id already holds a different proposal (proposals are immutable)."""


class DecisionConflict(DurableError):
    """The operation already has a different recorded decision (decisions are final)."""


class OperationState(StrEnum):
    """Where an operation is: ``proposed -> approved|rejected``, then ``approved -> applied``."""

    PROPOSED = "proposed"
    APPROVED = "approved"
    REJECTED = "rejected"
    APPLIED = "applied"


# -- the proposal, exactly as proposed (chapter 9, *A durable decision*) ---------------------


def proposal_text(arguments: Mapping[str, Any]) -> str:
    """The JSON text a proposal is stored as: every value exactly as given.

    Keys keep their order; an ``int`` keeps every digit, a ``float`` is
    written as Python's shortest round-trip text (``0.1``, ``1e+22``), a
    ``Decimal`` with all its digits and a capital ``E`` (``1.10E0``), which a
    float's text never has: :func:`proposal_arguments` gives each back as its
    own type. Tuples become lists and sets lists in canonical order, as in
    signatures (docs/guarantees.md, *Signatures*).

    Raises:
        NonFiniteNumber: a NaN or an infinity (no exact value to keep).
        TypeError: a value with no JSON form.
    """
    return _write(_json_shaped(dict(arguments)))


def _write(value: Any) -> str:
    if value is None or isinstance(value, (bool, str)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise NonFiniteNumber(f"{value!r} is not a finite number")
        return repr(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise NonFiniteNumber(f"{value!r} is not a finite number")
        text = str(value)
        return text if "E" in text else text + "E0"
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(str(k), ensure_ascii=False) + ":" + _write(v) for k, v in value.items()) + "}"
    return "[" + ",".join(_write(v) for v in value) + "]"


def _read_number(text: str) -> float | Decimal:
    return Decimal(text) if "E" in text else float(text)


def proposal_arguments(text: str) -> Any:
    """A stored proposal text back as the values that were proposed (see :func:`proposal_text`)."""
    return json.loads(text, parse_float=_read_number)


@dataclass(frozen=True, slots=True)
class Operation:
    """One durable operation as stored.

    Attributes:
        op_id: the operation id.
        tool: the tool whose call this is.
        proposal: the arguments as proposed, as JSON text (:func:`proposal_text`; immutable).
        state: the :class:`OperationState`.
        reason: the decision's reason (``None`` until decided).
        result: the effect's result text (``None`` until applied).
        signature: the canonical text of the arguments (docs/guarantees.md, *Signatures*), kept
            beside the proposal: two proposals are the same when their
            signatures are.
    """

    op_id: str
    tool: str
    proposal: str
    state: OperationState
    reason: str | None
    result: str | None
    signature: str

    @property
    def arguments(self) -> Any:
        """The proposal as it was proposed: ``1000`` is the int ``1000``, a ``Decimal`` keeps every digit."""
        return proposal_arguments(self.proposal)


@dataclass(frozen=True, slots=True)
class Settlement:
    """What one call of :meth:`DecisionStore.settle` (or ``apply``) did, and where it left the operation.

    Attributes:
        operation: the operation as stored after this call.
        proposed_now: this call stored the proposal (else it was there).
        decided_now: this call consulted the policy and recorded its decision
            (else the recorded decision was adopted: another host, or an earlier run, made it).
        applied_now: this call wrote the effect (else it was written before, or never: rejected).
    """

    operation: Operation
    proposed_now: bool
    decided_now: bool
    applied_now: bool

    # the operation's fields, read through (``settle(...).state`` as before)
    op_id = property(lambda self: self.operation.op_id)
    tool = property(lambda self: self.operation.tool)
    proposal = property(lambda self: self.operation.proposal)
    state = property(lambda self: self.operation.state)
    reason = property(lambda self: self.operation.reason)
    result = property(lambda self: self.operation.result)
    arguments = property(lambda self: self.operation.arguments)


Decide = Callable[[str, Any], tuple[bool, str]]
"""``decide(tool, arguments) -> (approved, reason)``: the host's policy for a new proposal.

It runs while the operation is locked (SQLite: the database's write lock;
PostgreSQL: the operation's row), so that it is consulted once per
operation: keep it quick, and record a slow approval later with
:meth:`DecisionStore.decide` instead."""

Effect = Callable[[Any, Operation], "str | None"]
"""``effect(connection, operation) -> result text``: extra writes inside the apply transaction.

``connection`` is the store's own: a ``sqlite3.Connection`` (placeholders
``?``) or a ``psycopg.Connection`` (placeholders ``%s``). The effect may also
read the store (:meth:`DecisionStore.get`, ...) and sees its own writes."""


def operation_id(request_id: str, tool: str, arguments: Mapping[str, Any]) -> str:
    """The id of one requested call: stable across replays of the same request.

    Args:
        request_id: the caller's id for the request (e.g. an idempotency key);
            a retry or a replay after a restart must reuse it.
        tool: the tool name.
        arguments: the bound arguments (JSON-shaped).

    Returns:
        ``"op-"`` followed by 16 hex digits of a SHA-256 over the request id
        and the call's signature (:func:`labkit.signature`, docs/guarantees.md, *Signatures*), so
        ``42`` and ``42.0`` name one operation.
    """
    if not request_id:
        raise UserError("request_id must be a non-empty string: it is what makes a replay the same operation")
    digest = hashlib.sha256((request_id + "\0" + signature(tool, _json_shaped(dict(arguments)))).encode()).hexdigest()
    return "op-" + digest[:16]


class DecisionStore:
    """Operations, decisions and effects in one database: a SQLite file, or PostgreSQL.

    Args:
        path: a SQLite database file (created if missing), ``":memory:"`` for
            a store that does not survive its process, or a
            ``postgresql://user@host:port/db`` URL (needs ``labkit[postgres]``,
            psycopg 3): the same API and guarantees for hosts on several machines.

    Safe to share between threads of one process (one connection behind a
    reentrant lock: a policy or an effect may read the store); several
    processes or machines may open the same database (SQLite locks the file,
    PostgreSQL locks the operation's row).

    Raises:
        MissingExtraError: a PostgreSQL URL without psycopg installed.
        DurableError: the database cannot be opened (the message says why).
    """

    def __init__(self, path: str | PathLike[str]) -> None:
        self.path = str(path)
        self._dialect: Dialect = dialect_for(self.path)
        self._lock = threading.RLock()
        self._depth = 0  # open transactions of this connection: a nested one is a savepoint
        self._db = self._dialect.connect(self.path)
        with self._lock:
            self._dialect.create_schema(self._db)

    @property
    def connection(self) -> Any:
        """The store's own connection (``sqlite3`` or psycopg), for a policy or effect writing in its transaction.

        A policy runs inside the decision's transaction and an effect inside
        the apply transaction: what they write through this connection is
        committed with that step, or rolled back with it (an audit row of
        the consultation, for instance). Placeholders: ``?`` on SQLite, ``%s``
        on PostgreSQL.
        """
        return self._db

    # -- plumbing -----------------------------------------------------------------------

    def _sql(self, text: str, params: tuple[Any, ...] = ()) -> Any:
        return self._db.execute(self._dialect.sql(text), params)

    def _transaction(self) -> _Transaction:
        return _Transaction(self)

    def _row(self, op_id: str, *, lock: bool = False) -> Operation | None:
        query = "SELECT op_id, tool, proposal, state, reason, result, signature FROM operations WHERE op_id = ?"
        row = self._sql(query + (self._dialect.lock_row if lock else ""), (op_id,)).fetchone()
        return None if row is None else Operation(row[0], row[1], row[2], OperationState(row[3]), *row[4:])

    def _require(self, op_id: str, *, lock: bool = False) -> Operation:
        op = self._row(op_id, lock=lock)
        if op is None:
            raise DurableError(f"no operation {op_id!r} was proposed in this store")
        return op

    def close(self) -> None:
        """Close the connection (a crashed process never gets here, and loses nothing)."""
        self._db.close()

    def __enter__(self) -> DecisionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<DecisionStore {self._dialect.name} operations={len(self.operations())} effects={len(self.effects())}>"

    # -- the three steps ----------------------------------------------------------------

    def propose(self, op_id: str, tool: str, arguments: Mapping[str, Any]) -> Operation:
        """Persist a proposal under ``op_id`` before anything else happens (idempotent).

        The arguments are stored exactly as given (:func:`proposal_text`) and
        their signature beside them; proposing the same id again with equal
        arguments (the same signature: ``42`` and ``42.0``, keys in another
        order) finds the stored proposal, which stays as first proposed.

        Returns:
            The stored operation (the existing one on a replay).

        Raises:
            ProposalConflict: ``op_id`` already holds another tool or other arguments.
        """
        return self._propose(op_id, tool, arguments)[0]

    def _propose(self, op_id: str, tool: str, arguments: Mapping[str, Any]) -> tuple[Operation, bool]:
        text = proposal_text(arguments)
        sign = canonical(_json_shaped(dict(arguments)))
        with self._transaction():
            inserted = (
                self._sql(
                    "INSERT INTO operations (op_id, tool, proposal, signature, state) VALUES (?, ?, ?, ?, 'proposed')"
                    " ON CONFLICT (op_id) DO NOTHING",
                    (op_id, tool, text, sign),
                ).rowcount
                == 1
            )
            stored = self._require(op_id)
        if (stored.tool, stored.signature) != (tool, sign):
            raise ProposalConflict(
                f"operation {op_id!r} already proposes {stored.tool}({_spaced(stored.signature)}); "
                f"a proposal is immutable, so {tool}({_spaced(sign)}) needs a new operation id"
            )
        return stored, inserted

    def decide(self, op_id: str, approved: bool, reason: str) -> Operation:
        """Record the host's decision on a proposal, once (idempotent for the same verdict).

        Raises:
            DurableError: no such operation.
            DecisionConflict: a different verdict is already recorded.
        """
        with self._transaction():
            op = self._require(op_id, lock=True)
            if op.state is OperationState.PROPOSED:
                return self._record(op_id, bool(approved), reason)
        was_approved = op.state is not OperationState.REJECTED
        if was_approved != bool(approved):
            raise DecisionConflict(
                f"operation {op_id!r} was already {'approved' if was_approved else 'rejected'} ({op.reason}); "
                "a recorded decision is final"
            )
        return op

    def _record(self, op_id: str, approved: bool, reason: str) -> Operation:
        state = OperationState.APPROVED if approved else OperationState.REJECTED
        self._sql("UPDATE operations SET state = ?, reason = ? WHERE op_id = ?", (state.value, reason, op_id))
        return self._require(op_id)

    def apply(self, op_id: str, effect: Effect | None = None) -> Settlement:
        """Write the effect and mark the operation applied, in one transaction; a replay writes nothing.

        The effect is one row in ``effects`` keyed by the operation id, plus
        whatever ``effect(connection, operation)`` writes through the given
        connection (same transaction; its return value is the result text).

        Returns:
            A :class:`Settlement`: ``applied_now`` says whether this call
            wrote the effect (``False``: it was applied before).

        Raises:
            DurableError: no such operation, not decided yet, or rejected.
            Exception: whatever ``effect`` raised (then nothing was written).
        """
        with self._transaction():
            op = self._require(op_id, lock=True)
            if op.state is OperationState.APPLIED:
                return Settlement(op, proposed_now=False, decided_now=False, applied_now=False)
            if op.state is not OperationState.APPROVED:
                raise DurableError(f"operation {op_id!r} is {op.state.value}: only an approved operation is applied")
            return Settlement(self._write_effect(op, effect), proposed_now=False, decided_now=False, applied_now=True)

    def _write_effect(self, op: Operation, effect: Effect | None) -> Operation:
        self._sql("INSERT INTO effects (op_id, tool, payload) VALUES (?, ?, ?)", (op.op_id, op.tool, op.proposal))
        result = effect(self._db, op) if effect is not None else None
        result = result if result is not None else f"{op.tool} applied"
        self._sql("UPDATE operations SET state = 'applied', result = ? WHERE op_id = ?", (result, op.op_id))
        return self._require(op.op_id)

    def settle(
        self, op_id: str, tool: str, arguments: Mapping[str, Any], decide: Decide, effect: Effect | None = None
    ) -> Settlement:
        """Take an operation as far as it can go, skipping every step already recorded (replay-safe).

        Three transactions, each one step (chapter 9, *A durable decision*): propose (or find the
        same proposal); then, with the operation locked, consult ``decide(tool,
        arguments)`` only if no decision is recorded — ``arguments`` being the
        stored proposal, exactly as first proposed — and record its verdict;
        then, locked again, apply if approved. Hosts settling one operation at
        the same time wait for each other at the lock: the policy is consulted
        once, and the others adopt the recorded decision (no
        :class:`DecisionConflict`). A crash between steps loses nothing: a
        replay goes on from the last recorded step.

        Returns:
            A :class:`Settlement`: the operation (``applied`` or ``rejected``)
            and what *this* call did (``proposed_now``, ``decided_now``, ``applied_now``).

        Raises:
            ProposalConflict: ``op_id`` holds a different proposal.
            Exception: whatever ``decide`` or ``effect`` raised (that step is
                not recorded; a replay does it again).
        """
        op, proposed_now = self._propose(op_id, tool, arguments)
        decided_now = applied_now = False
        if op.state is OperationState.PROPOSED:
            with self._transaction():
                op = self._require(op_id, lock=True)
                if op.state is OperationState.PROPOSED:  # still undecided now that it is ours
                    approved, reason = decide(op.tool, op.arguments)
                    op = self._record(op_id, bool(approved), reason)
                    decided_now = True
        if op.state is OperationState.APPROVED:
            with self._transaction():
                op = self._require(op_id, lock=True)
                if op.state is OperationState.APPROVED:
                    op = self._write_effect(op, effect)
                    applied_now = True
        return Settlement(op, proposed_now, decided_now, applied_now)

    # -- reading --------------------------------------------------------------------------

    def get(self, op_id: str) -> Operation | None:
        """The stored operation, or ``None``."""
        with self._lock:
            return self._row(op_id)

    def operations(self) -> list[Operation]:
        """Every operation, in the order first proposed."""
        with self._lock:
            ids = [r[0] for r in self._sql(f"SELECT op_id FROM operations ORDER BY {self._dialect.order}")]
            return [self._require(i) for i in ids]

    def pending(self) -> list[Operation]:
        """Operations a crash left unfinished (``proposed`` or ``approved``): replay these."""
        return [op for op in self.operations() if op.state in (OperationState.PROPOSED, OperationState.APPROVED)]

    def effects(self) -> list[tuple[str, str, str]]:
        """Every effect row as ``(op_id, tool, payload)``, in the order written."""
        with self._lock:
            rows = self._sql(f"SELECT op_id, tool, payload FROM effects ORDER BY {self._dialect.order}")
            return [tuple(r) for r in rows]


class _Transaction:
    """One transaction of the store's connection under its reentrant lock; a nested one is a savepoint.

    The outer one begins with the dialect's ``begin`` (SQLite: ``BEGIN
    IMMEDIATE``, the file's write lock) and commits, or rolls back on any
    exception; one opened inside it (a policy or an effect that writes
    through the store) is a ``SAVEPOINT`` released or rolled back alone.
    """

    def __init__(self, store: DecisionStore) -> None:
        self._store = store

    def __enter__(self) -> None:
        store = self._store
        store._lock.acquire()
        try:
            store._db.execute(store._dialect.begin if store._depth == 0 else f"SAVEPOINT labkit_{store._depth}")
        except BaseException:
            store._lock.release()
            raise
        store._depth += 1

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        store = self._store
        store._depth -= 1
        try:
            if store._depth == 0:
                store._db.execute("COMMIT" if exc_type is None else "ROLLBACK")
            elif exc_type is None:
                store._db.execute(f"RELEASE SAVEPOINT labkit_{store._depth}")
            else:
                store._db.execute(f"ROLLBACK TO SAVEPOINT labkit_{store._depth}")
                store._db.execute(f"RELEASE SAVEPOINT labkit_{store._depth}")
        finally:
            store._lock.release()


def settle_together(
    where: str | PathLike[str],
    op_id: str,
    tool: str,
    arguments: Mapping[str, Any],
    decide: Decide,
    effect: Effect | None = None,
    *,
    hosts: int = 2,
) -> list[Settlement]:
    """Settle one operation from ``hosts`` hosts at once, each with its own connection (chapter 9's race).

    Each host is a thread that opens its own :class:`DecisionStore` on
    ``where`` (as a second machine would), waits for the others at a barrier,
    then calls :meth:`DecisionStore.settle`. The store's guarantee: the
    policy is consulted once, one host writes the effect, the others adopt
    the decision and report that they wrote nothing.

    Returns:
        One :class:`Settlement` per host, in host order.

    Raises:
        Exception: the first exception a host raised (after every host ended).
    """
    if type(hosts) is not int or hosts < 1:
        raise UserError(f"hosts is an int >= 1, not {hosts!r}")
    DecisionStore(where).close()  # the schema exists before the hosts race
    barrier = threading.Barrier(hosts)
    results: list[Any] = [None] * hosts

    def host(number: int) -> None:
        try:
            with DecisionStore(where) as own:
                barrier.wait()
                results[number] = own.settle(op_id, tool, arguments, decide, effect)
        except BaseException as exc:  # handed to the caller below, never lost in a thread
            results[number] = exc

    threads = [threading.Thread(target=host, args=(n,)) for n in range(hosts)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results


# -- the chapter 9 fixture: posting a comment on ticket 42 -------------------------------


def _only_ticket_42(tool: str, arguments: Any) -> tuple[bool, str]:
    if arguments.get("ticket") == 42:
        return True, "host policy: comments on ticket 42 are allowed"
    return False, "host policy: only ticket 42 is in scope"


def naive_comment_tool(scope: ExecutionScope, posted: list[dict[str, Any]]) -> GuardedTool:
    """``post_comment(ticket, text)`` guarded by ``scope`` only: each admitted call appends to ``posted``.

    Capability ``ticket.comment``. The scope stops a repeat *within* its run;
    a new scope (a new run, a restart) posts the same comment again.
    """

    def post_comment(ticket: int, text: str) -> str:
        """Post a comment on a ticket."""
        posted.append({"ticket": ticket, "text": text})
        return f"posted comment #{len(posted)}"

    return scope.tool("post_comment", "ticket.comment", post_comment)


def durable_comment_tool(scope: ExecutionScope, store: DecisionStore, request_id: str) -> GuardedTool:
    """The same ``post_comment(ticket, text)`` whose body settles a durable operation in ``store``.

    The operation id comes from ``request_id`` and the call's signature; the
    host policy approves comments on ticket 42 only; the comment is the
    effect row. A replay of the same request (new scope, new process) finds
    the operation and writes nothing.

    Returns:
        A guarded tool (capability ``ticket.comment``) whose result names the
        operation and says whether this call wrote the comment or found it done.
    """

    def post_comment(ticket: int, text: str) -> str:
        """Post a comment on a ticket, once per request."""
        arguments = {"ticket": ticket, "text": text}
        op_id = operation_id(request_id, "post_comment", arguments)
        settled = store.settle(op_id, "post_comment", arguments, _only_ticket_42)
        if settled.state is OperationState.REJECTED:
            return f"{op_id}: rejected ({settled.reason})"
        return f"{op_id}: {'applied now' if settled.applied_now else 'already applied, nothing written'}"

    return scope.tool("post_comment", "ticket.comment", post_comment)
