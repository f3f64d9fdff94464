"""The two databases under :class:`labkit.durable.DecisionStore`: what differs between SQLite and PostgreSQL.

The store writes one SQL text for both (``?`` placeholders, ``INSERT ... ON
CONFLICT (op_id) DO NOTHING``); a :class:`Dialect` says how to connect, how
a transaction begins, how an operation's row is locked, and creates the
tables with the rules that keep a proposal immutable and a decision final.

* **SQLite** (the embedded default): ``BEGIN IMMEDIATE`` takes the file's
  write lock, so a transaction is alone among writers; no row lock needed.
* **PostgreSQL** (psycopg 3, ``labkit[postgres]``): ``BEGIN`` then ``SELECT
  ... FOR UPDATE`` locks the one operation; other operations go on. The
  schema is created under an advisory lock, as several hosts may start at once.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .core.errors import ConfigurationError, MissingExtraError

_SQLITE_SCHEMA = """
BEGIN IMMEDIATE;
CREATE TABLE IF NOT EXISTS operations (
    op_id     TEXT PRIMARY KEY,
    tool      TEXT NOT NULL,
    proposal  TEXT NOT NULL,
    signature TEXT NOT NULL,
    state     TEXT NOT NULL CHECK (state IN ('proposed', 'approved', 'rejected', 'applied')),
    reason    TEXT,
    result    TEXT
);
CREATE TABLE IF NOT EXISTS effects (
    op_id   TEXT PRIMARY KEY REFERENCES operations (op_id),
    tool    TEXT NOT NULL,
    payload TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS proposal_is_immutable
BEFORE UPDATE OF op_id, tool, proposal, signature ON operations
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

_POSTGRES_SCHEMA = """
CREATE TABLE IF NOT EXISTS operations (
    seq       BIGSERIAL UNIQUE,
    op_id     TEXT PRIMARY KEY,
    tool      TEXT NOT NULL,
    proposal  TEXT NOT NULL,
    signature TEXT NOT NULL,
    state     TEXT NOT NULL CHECK (state IN ('proposed', 'approved', 'rejected', 'applied')),
    reason    TEXT,
    result    TEXT
);
CREATE TABLE IF NOT EXISTS effects (
    seq     BIGSERIAL UNIQUE,
    op_id   TEXT PRIMARY KEY REFERENCES operations (op_id),
    tool    TEXT NOT NULL,
    payload TEXT NOT NULL
);
CREATE OR REPLACE FUNCTION labkit_operation_rules() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.state = 'applied' THEN
        RAISE EXCEPTION 'an applied operation is final';
    END IF;
    IF (NEW.op_id, NEW.tool, NEW.proposal, NEW.signature)
       IS DISTINCT FROM (OLD.op_id, OLD.tool, OLD.proposal, OLD.signature) THEN
        RAISE EXCEPTION 'a stored proposal is immutable';
    END IF;
    IF NOT ((OLD.state = 'proposed' AND NEW.state IN ('approved', 'rejected'))
            OR (OLD.state = 'approved' AND NEW.state = 'applied' AND NEW.reason IS NOT DISTINCT FROM OLD.reason)) THEN
        RAISE EXCEPTION 'a recorded decision cannot change';
    END IF;
    RETURN NEW;
END $$;
CREATE OR REPLACE TRIGGER operation_rules BEFORE UPDATE ON operations
    FOR EACH ROW EXECUTE FUNCTION labkit_operation_rules();
CREATE OR REPLACE FUNCTION labkit_effects_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'an effect row is never rewritten';
END $$;
CREATE OR REPLACE TRIGGER effects_are_append_only BEFORE UPDATE ON effects
    FOR EACH ROW EXECUTE FUNCTION labkit_effects_append_only();
"""

_SCHEMA_LOCK = 0x6C61626B  # any constant: the advisory lock hosts take while one creates the schema


@dataclass(frozen=True)
class Dialect:
    """What one database needs that the other does not (see the module docstring)."""

    name: str
    connect: Callable[[str], Any]
    create_schema: Callable[[Any], None]
    begin: str
    lock_row: str  # appended to a SELECT of one operation inside a transaction
    order: str  # the column giving insertion order
    placeholder: str

    def sql(self, text: str) -> str:
        """``text`` with its ``?`` placeholders in this database's style."""
        return text if self.placeholder == "?" else text.replace("?", self.placeholder)


def _sqlite_connect(path: str) -> sqlite3.Connection:
    try:
        db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30.0)
        db.execute("PRAGMA foreign_keys = ON")
    except sqlite3.Error as exc:
        raise ConfigurationError(f"cannot open the SQLite store {path!r}: {exc}") from None
    return db


def _sqlite_schema(db: sqlite3.Connection) -> None:
    db.executescript(_SQLITE_SCHEMA)


def _postgres_connect(url: str) -> Any:
    try:
        import psycopg
    except ImportError:
        raise MissingExtraError("a postgresql:// store needs psycopg 3: pip install 'labkit[postgres]'") from None
    try:
        return psycopg.connect(url, autocommit=True)  # the store says BEGIN and COMMIT itself
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigurationError(f"cannot connect to the PostgreSQL store: {first}") from None


def _postgres_ready(db: Any) -> bool:
    """Whether the tables and their rules exist (the last statement of the schema made the last trigger)."""
    query = "SELECT count(*) FROM pg_trigger WHERE tgname IN ('operation_rules', 'effects_are_append_only')"
    return db.execute(query).fetchone()[0] == 2


def _postgres_schema(db: Any) -> None:
    # Replacing a trigger locks its table against writers: a host starting while others settle
    # would deadlock with them. So the schema is made once, by the first host, under an advisory
    # lock, and every later host only looks.
    if _postgres_ready(db):
        return
    db.execute("BEGIN")
    try:
        db.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        if not _postgres_ready(db):
            db.execute(_POSTGRES_SCHEMA)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


SQLITE = Dialect("sqlite", _sqlite_connect, _sqlite_schema, "BEGIN IMMEDIATE", "", "rowid", "?")
POSTGRES = Dialect("postgresql", _postgres_connect, _postgres_schema, "BEGIN", " FOR UPDATE", "seq", "%s")


def dialect_for(path: str) -> Dialect:
    """PostgreSQL for a ``postgresql://`` (or ``postgres://``) URL, SQLite for anything else (a file path)."""
    return POSTGRES if path.startswith(("postgresql://", "postgres://")) else SQLITE
