"""Durable decisions on SQLite: a write that happens once, even across a crash and a replay (SPEC §7).

Loop bounds live in one :class:`~labkit.ExecutionScope` and die with it: a
new run (after a restart, or a retry by the caller) admits the same call
again. That is right for loop control and wrong for a write. This module is
the other mechanism the lesson points to, on the standard library's
``sqlite3``:

1. **operation id** — derived from the caller's request id and the call's
   signature (:func:`operation_id`), so a replay of the same request names
   the same operation; it is persisted *before* any effect.
2. **immutable proposal** — the canonical arguments, stored with the id;
   proposing the same id with other arguments raises, and a trigger refuses
   any ``UPDATE`` of a stored proposal.
3. **recorded decision** — ``approved`` or ``rejected`` with a reason,
   recorded once; a trigger allows only ``proposed -> approved|rejected ->
   (approved) applied``.
4. **one transaction** — :meth:`DecisionStore.apply` writes the effect row
   (table ``effects``, primary key = operation id) and marks the operation
   ``applied`` in a single ``BEGIN IMMEDIATE`` transaction.

What it guarantees, for effects written through :meth:`DecisionStore.apply`
into this same database: after any crash (even ``SIGKILL``) at any point,
replaying the request with :meth:`DecisionStore.settle` leaves exactly one
effect row per operation and loses no proposal or decision; an operation
is never applied without a recorded approval.

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
import sqlite3
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from os import PathLike
from typing import Any

from .core.errors import LabkitError, UserError
from .core.scope import ExecutionScope, GuardedTool
from .core.signature import canonical, signature

__all__ = [
    "DecisionConflict",
    "DecisionStore",
    "DurableError",
    "Operation",
    "OperationState",
    "ProposalConflict",
    "durable_comment_tool",
    "naive_comment_tool",
    "operation_id",
]

_SCHEMA = """
BEGIN IMMEDIATE;
CREATE TABLE IF NOT EXISTS operations (
    op_id    TEXT PRIMARY KEY,
    tool     TEXT NOT NULL,
    proposal TEXT NOT NULL,
    state    TEXT NOT NULL CHECK (state IN ('proposed', 'approved', 'rejected', 'applied')),
    reason   TEXT,
    result   TEXT
);
CREATE TABLE IF NOT EXISTS effects (
    op_id   TEXT PRIMARY KEY REFERENCES operations (op_id),
    tool    TEXT NOT NULL,
    payload TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS proposal_is_immutable
BEFORE UPDATE OF op_id, tool, proposal ON operations
BEGIN
    SELECT RAISE(ABORT, 'a stored proposal is immutable');
END;
CREATE TRIGGER IF NOT EXISTS decision_is_recorded_once
BEFORE UPDATE OF state, reason ON operations
WHEN NOT (
    (OLD.state = 'proposed' AND NEW.state IN ('approved', 'rejected'))
    OR (OLD.state = 'approved' AND NEW.state = 'applied' AND NEW.reason IS OLD.reason)
)
BEGIN
    SELECT RAISE(ABORT, 'a recorded decision cannot change');
END;
CREATE TRIGGER IF NOT EXISTS applied_is_final
BEFORE UPDATE ON operations
WHEN OLD.state = 'applied'
BEGIN
    SELECT RAISE(ABORT, 'an applied operation is final');
END;
CREATE TRIGGER IF NOT EXISTS effects_are_append_only
BEFORE UPDATE ON effects
BEGIN
    SELECT RAISE(ABORT, 'an effect row is never rewritten');
END;
COMMIT;
"""


class DurableError(LabkitError):
    """A durable operation cannot go on as asked; the message says why."""


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


@dataclass(frozen=True, slots=True)
class Operation:
    """One durable operation as stored.

    Attributes:
        op_id: the operation id.
        tool: the tool whose call this is.
        proposal: the canonical JSON text of the arguments (immutable).
        state: the :class:`OperationState`.
        reason: the decision's reason (``None`` until decided).
        result: the effect's result text (``None`` until applied).
    """

    op_id: str
    tool: str
    proposal: str
    state: OperationState
    reason: str | None
    result: str | None

    @property
    def arguments(self) -> Any:
        """The proposal parsed back from JSON."""
        return json.loads(self.proposal)


Decide = Callable[[str, Any], tuple[bool, str]]
"""``decide(tool, arguments) -> (approved, reason)``: the host's policy for a new proposal."""

Effect = Callable[[sqlite3.Connection, Operation], str | None]
"""``effect(connection, operation) -> result text``: extra writes inside the apply transaction."""


def operation_id(request_id: str, tool: str, arguments: Mapping[str, Any]) -> str:
    """The id of one requested call: stable across replays of the same request.

    Args:
        request_id: the caller's id for the request (e.g. an idempotency key);
            a retry or a replay after a restart must reuse it.
        tool: the tool name.
        arguments: the bound arguments (JSON-shaped).

    Returns:
        ``"op-"`` followed by 16 hex digits of a SHA-256 over the request id
        and the call's signature (:func:`labkit.signature`, SPEC §3.2), so
        ``42`` and ``42.0`` name one operation.
    """
    if not request_id:
        raise UserError("request_id must be a non-empty string: it is what makes a replay the same operation")
    digest = hashlib.sha256((request_id + "\0" + signature(tool, arguments)).encode()).hexdigest()
    return "op-" + digest[:16]


class DecisionStore:
    """Operations, decisions and effects in one SQLite database file.

    Args:
        path: the database file (created if missing), or ``":memory:"`` for a
            store that does not survive its process.

    Safe to share between threads of one process (one connection behind a
    lock); several processes may open the same file (SQLite locks it).
    """

    def __init__(self, path: str | PathLike[str]) -> None:
        self.path = str(path)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30.0)
        self._db.execute("PRAGMA foreign_keys = ON")
        with self._lock:
            self._db.executescript(_SCHEMA)

    # -- plumbing -----------------------------------------------------------------------

    def _transaction(self) -> _Transaction:
        return _Transaction(self)

    def _row(self, op_id: str) -> Operation | None:
        row = self._db.execute(
            "SELECT op_id, tool, proposal, state, reason, result FROM operations WHERE op_id = ?", (op_id,)
        ).fetchone()
        return None if row is None else Operation(row[0], row[1], row[2], OperationState(row[3]), row[4], row[5])

    def _require(self, op_id: str) -> Operation:
        op = self._row(op_id)
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
        return f"<DecisionStore operations={len(self.operations())} effects={len(self.effects())}>"

    # -- the three steps ----------------------------------------------------------------

    def propose(self, op_id: str, tool: str, arguments: Mapping[str, Any]) -> Operation:
        """Persist a proposal under ``op_id`` before anything else happens (idempotent).

        Returns:
            The stored operation (the existing one on a replay).

        Raises:
            ProposalConflict: ``op_id`` already holds another tool or other arguments.
        """
        text = canonical(arguments)
        with self._transaction():
            existing = self._row(op_id)
            if existing is None:
                self._db.execute(
                    "INSERT INTO operations (op_id, tool, proposal, state) VALUES (?, ?, ?, 'proposed')",
                    (op_id, tool, text),
                )
                return self._require(op_id)
        if (existing.tool, existing.proposal) != (tool, text):
            raise ProposalConflict(
                f"operation {op_id!r} already proposes {existing.tool}({existing.proposal}); "
                f"a proposal is immutable, so {tool}({text}) needs a new operation id"
            )
        return existing

    def decide(self, op_id: str, approved: bool, reason: str) -> Operation:
        """Record the host's decision on a proposal, once (idempotent for the same verdict).

        Raises:
            DurableError: no such operation.
            DecisionConflict: a different verdict is already recorded.
        """
        with self._transaction():
            op = self._require(op_id)
            if op.state is OperationState.PROPOSED:
                state = OperationState.APPROVED if approved else OperationState.REJECTED
                self._db.execute("UPDATE operations SET state = ?, reason = ? WHERE op_id = ?", (state, reason, op_id))
                return self._require(op_id)
        was_approved = op.state is not OperationState.REJECTED
        if was_approved != bool(approved):
            raise DecisionConflict(
                f"operation {op_id!r} was already {'approved' if was_approved else 'rejected'} ({op.reason}); "
                "a recorded decision is final"
            )
        return op

    def apply(self, op_id: str, effect: Effect | None = None) -> Operation:
        """Write the effect and mark the operation applied, in one transaction; a replay writes nothing.

        The effect is one row in ``effects`` keyed by the operation id, plus
        whatever ``effect(connection, operation)`` writes through the given
        connection (same transaction; its return value is the result text).

        Returns:
            The applied operation (unchanged if it was already applied).

        Raises:
            DurableError: no such operation, not decided yet, or rejected.
            Exception: whatever ``effect`` raised (then nothing was written).
        """
        with self._transaction():
            op = self._require(op_id)
            if op.state is OperationState.APPLIED:
                return op
            if op.state is not OperationState.APPROVED:
                raise DurableError(f"operation {op_id!r} is {op.state.value}: only an approved operation is applied")
            self._db.execute(
                "INSERT INTO effects (op_id, tool, payload) VALUES (?, ?, ?)", (op_id, op.tool, op.proposal)
            )
            result = effect(self._db, op) if effect is not None else None
            result = result if result is not None else f"{op.tool} applied"
            self._db.execute("UPDATE operations SET state = 'applied', result = ? WHERE op_id = ?", (result, op_id))
            return self._require(op_id)

    def settle(self, op_id: str, tool: str, arguments: Mapping[str, Any], decide: Decide,
               effect: Effect | None = None) -> Operation:
        """Take an operation as far as it can go, skipping every step already recorded (replay-safe).

        Propose (or find the same proposal), decide with ``decide(tool,
        arguments)`` only if no decision is recorded, then apply if approved.

        Returns:
            The operation: ``applied`` or ``rejected``.

        Raises:
            ProposalConflict: ``op_id`` holds a different proposal.
        """
        op = self.propose(op_id, tool, arguments)
        if op.state is OperationState.PROPOSED:
            approved, reason = decide(tool, op.arguments)
            op = self.decide(op_id, approved, reason)
        if op.state is OperationState.APPROVED:
            op = self.apply(op_id, effect)
        return op

    # -- reading --------------------------------------------------------------------------

    def get(self, op_id: str) -> Operation | None:
        """The stored operation, or ``None``."""
        with self._lock:
            return self._row(op_id)

    def operations(self) -> list[Operation]:
        """Every operation, in insertion order."""
        with self._lock:
            ids = [r[0] for r in self._db.execute("SELECT op_id FROM operations ORDER BY rowid")]
            return [self._require(i) for i in ids]

    def pending(self) -> list[Operation]:
        """Operations a crash left unfinished (``proposed`` or ``approved``): replay these."""
        return [op for op in self.operations() if op.state in (OperationState.PROPOSED, OperationState.APPROVED)]

    def effects(self) -> list[tuple[str, str, str]]:
        """Every effect row as ``(op_id, tool, payload)``, in the order written."""
        with self._lock:
            return [tuple(r) for r in self._db.execute("SELECT op_id, tool, payload FROM effects ORDER BY rowid")]


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any exception) under the store's lock."""

    def __init__(self, store: DecisionStore) -> None:
        self._store = store

    def __enter__(self) -> None:
        self._store._lock.acquire()
        try:
            self._store._db.execute("BEGIN IMMEDIATE")
        except BaseException:
            self._store._lock.release()
            raise

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        try:
            self._store._db.execute("COMMIT" if exc_type is None else "ROLLBACK")
        finally:
            self._store._lock.release()


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
        before = store.get(op_id)
        op = store.settle(op_id, "post_comment", arguments, _only_ticket_42)
        if op.state is OperationState.REJECTED:
            return f"{op_id}: rejected ({op.reason})"
        done_before = before is not None and before.state is OperationState.APPLIED
        return f"{op_id}: {'already applied, nothing written' if done_before else 'applied now'}"

    return scope.tool("post_comment", "ticket.comment", post_comment)
