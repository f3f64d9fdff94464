"""Durable decisions (labkit.durable): exactly one effect across real crashes and replays.

The crash tests run a real host process (tests/durable_worker.py), let it
reach a point, kill it with SIGKILL, and replay the same request. The
process tells the test where it is through its stdout pipe; nothing waits
on a timer.
"""

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from labkit import ExecutionScope, Limits, RunHalted
from labkit.durable import (
    DecisionConflict,
    DecisionStore,
    DurableError,
    OperationState,
    ProposalConflict,
    durable_comment_tool,
    naive_comment_tool,
    operation_id,
)

WORKER = Path(__file__).with_name("durable_worker.py")
ARGS = {"ticket": 42, "text": "Reproduced: HTTP 401 for a known account."}
APPROVE = lambda tool, arguments: (True, "approved by test")  # noqa: E731


def run_worker(db: Path, pause_at: str, request_id: str = "req-1") -> str:
    """Start the worker; if it pauses, kill it with SIGKILL there. Returns what it printed."""
    proc = subprocess.Popen(
        [sys.executable, str(WORKER), str(db), request_id, pause_at],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline().strip()
    if pause_at != "never":
        assert line == pause_at, f"worker did not reach {pause_at}: {line!r}"
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait() == -signal.SIGKILL
    else:
        proc.stdin.close()
        assert proc.wait() == 0
    proc.stdout.close()
    if proc.stdin and not proc.stdin.closed:
        proc.stdin.close()
    return line


def comments(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as connection:
        try:
            return connection.execute("SELECT op_id, body FROM comments").fetchall()
        except sqlite3.OperationalError:  # the table is created by the first effect
            return []


@pytest.mark.parametrize(
    ("pause_at", "state_after_crash"),
    [
        ("after-propose", OperationState.PROPOSED),
        ("after-decide", OperationState.APPROVED),
        ("inside-apply", OperationState.APPROVED),
        ("after-apply", OperationState.APPLIED),
    ],
)
def test_a_killed_host_loses_nothing_and_a_replay_applies_exactly_once(tmp_path, pause_at, state_after_crash):
    db = tmp_path / "decisions.sqlite"
    run_worker(db, pause_at)

    store = DecisionStore(db)
    op_id = operation_id("req-1", "post_comment", ARGS)
    op = store.get(op_id)
    assert op is not None, "the proposal was persisted before the crash"
    assert op.state is state_after_crash
    applied = state_after_crash is OperationState.APPLIED
    assert len(store.effects()) == int(applied)
    assert len(comments(db)) == int(applied), "the effect is in the same transaction as 'applied'"
    assert [p.op_id for p in store.pending()] == ([] if applied else [op_id])
    store.close()

    assert run_worker(db, "never") == "final applied 1"
    assert run_worker(db, "never") == "final applied 1"  # a second replay writes nothing either

    store = DecisionStore(db)
    assert store.effects() == [(op_id, "post_comment", store.get(op_id).proposal)]
    assert comments(db) == [(op_id, ARGS["text"])]
    assert store.pending() == []
    assert store.get(op_id).arguments == ARGS
    store.close()


def test_another_request_id_is_another_operation(tmp_path):
    db = tmp_path / "decisions.sqlite"
    run_worker(db, "never", "req-1")
    run_worker(db, "never", "req-2")
    with DecisionStore(db) as store:
        assert len(store.effects()) == 2


def test_operation_id_follows_the_signature():
    assert operation_id("r", "post_comment", {"ticket": 42, "text": "a"}) == operation_id(
        "r", "post_comment", {"text": "a", "ticket": 42.0}
    )
    assert operation_id("r", "post_comment", {"ticket": 42, "text": "a"}) != operation_id(
        "r", "post_comment", {"ticket": 42, "text": "A"}
    )
    assert operation_id("r", "post_comment", ARGS) != operation_id("s", "post_comment", ARGS)
    with pytest.raises(Exception, match="request_id"):
        operation_id("", "post_comment", ARGS)


def test_a_proposal_is_immutable():
    with DecisionStore(":memory:") as store:
        store.propose("op-1", "post_comment", ARGS)
        assert store.propose("op-1", "post_comment", dict(reversed(ARGS.items()))).arguments == ARGS
        with pytest.raises(ProposalConflict, match="immutable"):
            store.propose("op-1", "post_comment", {**ARGS, "text": "other"})
        with pytest.raises(sqlite3.IntegrityError, match="immutable"):
            store._db.execute("UPDATE operations SET proposal = '{}' WHERE op_id = 'op-1'")
        assert store.get("op-1").arguments == ARGS


def test_a_decision_is_recorded_once_and_a_replay_keeps_it():
    with DecisionStore(":memory:") as store:
        store.propose("op-1", "post_comment", ARGS)
        store.decide("op-1", True, "first")
        assert store.decide("op-1", True, "again").reason == "first"
        with pytest.raises(DecisionConflict, match="final"):
            store.decide("op-1", False, "changed my mind")
        with pytest.raises(sqlite3.IntegrityError, match="cannot change"):
            store._db.execute("UPDATE operations SET state = 'rejected' WHERE op_id = 'op-1'")
        # a replay whose policy would now reject still follows the recorded approval
        op = store.settle("op-1", "post_comment", ARGS, lambda t, a: (False, "new policy"))
        assert op.state is OperationState.APPLIED and op.reason == "first"
        assert len(store.effects()) == 1


def test_nothing_is_applied_without_an_approval():
    with DecisionStore(":memory:") as store:
        store.propose("op-1", "post_comment", ARGS)
        with pytest.raises(DurableError, match="proposed"):
            store.apply("op-1")
        store.decide("op-1", False, "no")
        with pytest.raises(DurableError, match="rejected"):
            store.apply("op-1")
        with pytest.raises(DurableError, match="no operation"):
            store.apply("op-404")
        assert store.effects() == []
        op = store.settle("op-1", "post_comment", ARGS, APPROVE)
        assert op.state is OperationState.REJECTED and store.effects() == []


def test_a_failing_effect_writes_nothing_and_can_be_retried():
    with DecisionStore(":memory:") as store:
        store.propose("op-1", "post_comment", ARGS)
        store.decide("op-1", True, "ok")

        def broken(connection, operation):
            raise RuntimeError("remote side down")

        with pytest.raises(RuntimeError):
            store.apply("op-1", broken)
        assert store.effects() == [] and store.get("op-1").state is OperationState.APPROVED
        assert store.apply("op-1").state is OperationState.APPLIED
        assert len(store.effects()) == 1


def test_scope_counters_reset_with_a_new_run_but_the_durable_tool_writes_once(tmp_path):
    posted: list = []
    for _ in range(2):  # two runs, e.g. before and after a restart
        scope = ExecutionScope(Limits(), {"ticket.comment"})
        naive_comment_tool(scope, posted).invoke(ARGS)
    assert len(posted) == 2

    db = tmp_path / "decisions.sqlite"
    results = []
    for _ in range(2):
        with DecisionStore(db) as store:
            scope = ExecutionScope(Limits(), {"ticket.comment"})
            results.append(durable_comment_tool(scope, store, "req-1").invoke(ARGS))
    assert results[0].endswith("applied now")
    assert results[1].endswith("already applied, nothing written")
    with DecisionStore(db) as store:
        assert len(store.effects()) == 1


def test_the_durable_tool_is_still_guarded():
    with DecisionStore(":memory:") as store:
        scope = ExecutionScope(Limits(), set())  # ticket.comment not granted
        tool = durable_comment_tool(scope, store, "req-1")
        with pytest.raises(RunHalted):
            tool.invoke(ARGS)
        assert store.operations() == []  # refused before the body: nothing proposed


def test_the_host_policy_rejects_other_tickets():
    with DecisionStore(":memory:") as store:
        scope = ExecutionScope(Limits(), {"ticket.comment"})
        result = durable_comment_tool(scope, store, "req-1").invoke({"ticket": 7, "text": "x"})
        assert "rejected" in result and store.effects() == []
