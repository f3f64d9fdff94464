"""Durable decisions (labkit.durable): exactly one effect across real crashes and replays.

The crash tests run a real host process (tests/durable_worker.py), let it
reach a point, kill it with SIGKILL, and replay the same request. The
process tells the test where it is through its stdout pipe; nothing waits
on a timer.

Every test that takes ``where`` runs twice: on a SQLite file and on a real
PostgreSQL server the tests start (tests/postgres_server.py); without
PostgreSQL here, the second run is skipped and says why.
"""

import contextlib
import itertools
import json
import os
import re
import selectors
import signal
import sqlite3
import subprocess
import sys
import threading
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from postgres_server import fresh_database, running_postgres, unavailable

from labkit import ConfigurationError, ExecutionScope, Limits, MissingExtraError, RunHalted, durable
from labkit.core.arguments import _json_shaped
from labkit.core.signature import canonical
from labkit.durable import (
    DecisionConflict,
    DecisionStore,
    DurableError,
    OperationState,
    ProposalConflict,
    Settlement,
    durable_comment_tool,
    naive_comment_tool,
    operation_id,
    settle_together,
)

WORKER = Path(__file__).with_name("durable_worker.py")
ARGS = {"ticket": 42, "text": "Reproduced: HTTP 401 for a known account."}
APPROVE = lambda tool, arguments: (True, "approved by test")  # noqa: E731
_NUMBERS = itertools.count()


@pytest.fixture(scope="session")
def postgres_url():
    """One real PostgreSQL server for the session (skipped, saying why, when it cannot start here)."""
    why = unavailable()
    if why:
        pytest.skip(f"no PostgreSQL here: {why}")
    with running_postgres() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def where(request, tmp_path):
    """A fresh, empty store location: a SQLite file, or a new database on the test PostgreSQL server."""
    if request.param == "sqlite":
        return str(tmp_path / "decisions.sqlite")
    return fresh_database(request.getfixturevalue("postgres_url"), f"durable_{os.getpid()}_{next(_NUMBERS)}")


def query(where: str, sql: str) -> list[tuple]:
    """Rows of ``sql`` read straight from the database (not through the store)."""
    if where.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(where, autocommit=True) as connection:
            try:
                return [tuple(r) for r in connection.execute(sql).fetchall()]
            except psycopg.errors.UndefinedTable:
                return []
    with sqlite3.connect(where) as connection:
        try:
            return connection.execute(sql).fetchall()
        except sqlite3.OperationalError:  # the table is created by the first effect
            return []


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


def comments(db: str) -> list[tuple]:
    return query(db, "SELECT op_id, body FROM comments")


@pytest.mark.parametrize(
    ("pause_at", "state_after_crash"),
    [
        ("after-propose", OperationState.PROPOSED),
        ("after-decide", OperationState.APPROVED),
        ("inside-apply", OperationState.APPROVED),
        ("after-apply", OperationState.APPLIED),
    ],
)
def test_a_killed_host_loses_nothing_and_a_replay_applies_exactly_once(where, pause_at, state_after_crash):
    db = where
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


def test_another_request_id_is_another_operation(where):
    db = where
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


def test_a_proposal_is_immutable(where):
    with DecisionStore(where) as store:
        store.propose("op-1", "post_comment", ARGS)
        assert store.propose("op-1", "post_comment", dict(reversed(ARGS.items()))).arguments == ARGS
        with pytest.raises(ProposalConflict, match="immutable"):
            store.propose("op-1", "post_comment", {**ARGS, "text": "other"})
        with pytest.raises(Exception, match="immutable"):  # the database's own rule, below the store
            store._db.execute("UPDATE operations SET proposal = '{}' WHERE op_id = 'op-1'")
        assert store.get("op-1").arguments == ARGS


def test_a_decision_is_recorded_once_and_a_replay_keeps_it(where):
    with DecisionStore(where) as store:
        store.propose("op-1", "post_comment", ARGS)
        store.decide("op-1", True, "first")
        assert store.decide("op-1", True, "again").reason == "first"
        with pytest.raises(DecisionConflict, match="final"):
            store.decide("op-1", False, "changed my mind")
        with pytest.raises(Exception, match="cannot change"):
            store._db.execute("UPDATE operations SET state = 'rejected' WHERE op_id = 'op-1'")
        # a replay whose policy would now reject still follows the recorded approval
        op = store.settle("op-1", "post_comment", ARGS, lambda t, a: (False, "new policy"))
        assert op.state is OperationState.APPLIED and op.reason == "first"
        assert len(store.effects()) == 1


def test_nothing_is_applied_without_an_approval(where):
    with DecisionStore(where) as store:
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


def test_a_failing_effect_writes_nothing_and_can_be_retried(where):
    with DecisionStore(where) as store:
        store.propose("op-1", "post_comment", ARGS)
        store.decide("op-1", True, "ok")

        def broken(connection, operation):
            raise RuntimeError("remote side down")

        with pytest.raises(RuntimeError):
            store.apply("op-1", broken)
        assert store.effects() == [] and store.get("op-1").state is OperationState.APPROVED
        assert store.apply("op-1").state is OperationState.APPLIED
        assert len(store.effects()) == 1


def test_scope_counters_reset_with_a_new_run_but_the_durable_tool_writes_once(where):
    posted: list = []
    for _ in range(2):  # two runs, e.g. before and after a restart
        scope = ExecutionScope(Limits(), {"ticket.comment"})
        naive_comment_tool(scope, posted).invoke(ARGS)
    assert len(posted) == 2

    db = where
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


# -- exactly as proposed, consulted once, truthful results (issue 20) ------------------------------------


def test_the_proposal_comes_back_exactly_as_proposed_and_the_policy_judges_it(where):
    proposed = {
        "amount": 1000,
        "big": 2**70 + 1,
        "price": Decimal("12345678901234567890.123"),
        "rate": Decimal("1.10"),
        "ratio": 0.1,
        "note": "ticket 42",
        "tags": [3, 1],
    }
    seen = []
    with DecisionStore(where) as store:
        settled = store.settle("op-1", "pay", proposed, lambda tool, arguments: (seen.append(arguments) or True, "ok"))
        assert seen == [proposed]
        for got in (seen[0], store.get("op-1").arguments, settled.arguments):
            assert got == proposed
            assert [type(v) for v in got.values()] == [type(v) for v in proposed.values()]
            assert got["rate"].as_tuple() == Decimal("1.10").as_tuple()  # 1.10, not 1.1
        assert store.get("op-1").signature != store.get("op-1").proposal  # the signature beside, not instead
        # the same proposal in another form keeps the first one
        # (docs/guarantees.md, *Signatures*: 1000 and 1000.0, 1.10 and 1.1)
        again = store.propose("op-1", "pay", {**proposed, "amount": 1000.0, "rate": Decimal("1.1")})
        assert again.arguments["amount"] == 1000 and type(again.arguments["amount"]) is int


def test_a_settlement_says_what_this_call_did(where):
    with DecisionStore(where) as store:
        first = store.settle("op-1", "post_comment", ARGS, APPROVE)
        again = store.settle("op-1", "post_comment", ARGS, APPROVE)
        assert isinstance(first, Settlement)
        assert (first.proposed_now, first.decided_now, first.applied_now) == (True, True, True)
        assert (again.proposed_now, again.decided_now, again.applied_now) == (False, False, False)
        assert first.state is again.state is OperationState.APPLIED
        no = store.settle("op-2", "post_comment", ARGS, lambda t, a: (False, "no"))
        assert (no.decided_now, no.applied_now, no.state) == (True, False, OperationState.REJECTED)
        store.propose("op-3", "post_comment", ARGS)
        store.decide("op-3", True, "by hand")
        assert store.apply("op-3").applied_now and not store.apply("op-3").applied_now


def test_an_effect_and_a_policy_may_read_and_write_the_store(where):
    with DecisionStore(where) as store:
        read = []

        def policy(tool, arguments):
            read.append(store.get("op-1").state)
            return True, "ok"

        def effect(connection, operation):
            read.extend([store.get(operation.op_id).state, len(store.effects()), repr(store)])
            store.propose("op-follow-up", "notify", {"about": operation.op_id})  # a nested write: a savepoint
            with contextlib.suppress(ProposalConflict):  # the failed inner step leaves the outer transaction whole
                store.propose("op-follow-up", "notify", {"about": "something else"})
            return "done"

        worker = threading.Thread(
            target=lambda: read.append(store.settle("op-1", "post_comment", ARGS, policy, effect))
        )
        worker.start()
        worker.join(60)  # a deadlock would keep the thread here
        assert not worker.is_alive(), "settle blocked inside its own policy or effect"
        settled = read.pop()
        assert settled.applied_now and settled.result == "done"
        assert read[:3] == [OperationState.PROPOSED, OperationState.APPROVED, 1]  # the effect sees its own row
        assert read[3].startswith("<DecisionStore ")
        assert store.get("op-follow-up").arguments == {"about": "op-1"}


def test_an_effect_that_fails_rolls_back_its_nested_writes(where):
    with DecisionStore(where) as store:

        def effect(connection, operation):
            store.propose("op-side", "notify", {"about": operation.op_id})
            raise RuntimeError("remote side down")

        with pytest.raises(RuntimeError):
            store.settle("op-1", "post_comment", ARGS, APPROVE, effect)
        assert store.get("op-side") is None and store.effects() == []
        assert store.get("op-1").state is OperationState.APPROVED  # the decision stands: a replay only applies
        assert store.settle("op-1", "post_comment", ARGS, lambda t, a: 1 / 0).applied_now


def test_two_hosts_settling_one_operation_consult_the_policy_once(where):
    consulted = []
    inside = threading.Event()
    results = {}

    def slow_policy(tool, arguments):  # holds the operation while the other host arrives
        consulted.append("a")
        inside.set()
        threading.Event().wait(0.2)  # not a timing assertion: either order must give the same record
        return True, "approved by host a"

    def other_policy(tool, arguments):
        consulted.append("b")
        return False, "host b would have rejected"

    def host(name, policy, started=None):
        if started is not None:
            started.wait(30)
        with DecisionStore(where) as own:  # each host its own connection, as two machines
            results[name] = own.settle("op-1", "post_comment", ARGS, policy)

    with DecisionStore(where):
        pass  # the schema exists before the hosts start
    hosts = [
        threading.Thread(target=host, args=("a", slow_policy)),
        threading.Thread(target=host, args=("b", other_policy, inside)),
    ]
    for h in hosts:
        h.start()
    for h in hosts:
        h.join(60)
    assert consulted == ["a"]  # b adopted a's decision: no DecisionConflict, no second verdict
    assert results["a"].decided_now and not results["b"].decided_now
    assert results["b"].state is OperationState.APPLIED and results["b"].reason == "approved by host a"
    assert [results["a"].applied_now, results["b"].applied_now].count(True) == 1
    assert len(query(where, "SELECT op_id FROM effects")) == 1


def test_a_postgresql_store_without_psycopg_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(MissingExtraError, match=r"labkit\[postgres\]"):
        DecisionStore("postgresql://nobody@127.0.0.1:1/none")


def test_an_unreachable_postgresql_store_is_one_line(postgres_url):
    port = postgres_url.rsplit(":", 1)[1].split("/")[0]
    with pytest.raises(ConfigurationError, match="cannot connect to the PostgreSQL store") as error:
        DecisionStore(postgres_url.replace(f":{port}/", ":1/"))
    assert "\n" not in str(error.value)


# -- the race: many hosts, one database, killed and restarted at random points ----------------------------

RACE_WORKER = Path(__file__).with_name("durable_race_worker.py")
RACE_WORKERS = 8
RACE_OPERATIONS = 500
KILLS_PER_WORKER = 2


def _start_race_worker(where: str, worker: int, seed: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(RACE_WORKER), where, str(worker), str(RACE_OPERATIONS), str(seed)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow  # about 10 s per back end: 8 processes, 4000 settles, 16 kills and restarts
def test_racing_hosts_killed_at_random_points_apply_each_operation_once(where):
    """8 workers settle the same 500 operations; each is SIGKILLed twice at a random point and restarted.

    A kill lands wherever the worker is when the test has read its chosen
    number of lines: inside a propose, a policy, an effect or between them.

    Afterwards every operation is applied, with exactly one effect row, one
    ledger row (the effect's own write) and one consultation of the policy
    (recorded in the decision's transaction), and every worker's last run
    ended without an exception.
    """
    import random

    with DecisionStore(where) as store:  # the schema, and the two tables the workers' policy and effect write
        store.connection.execute("CREATE TABLE consultations (op_id TEXT NOT NULL, worker TEXT NOT NULL)")
        store.connection.execute("CREATE TABLE ledger (op_id TEXT NOT NULL, worker TEXT NOT NULL)")
    chance = random.Random(20)
    kills_left = dict.fromkeys(range(RACE_WORKERS), KILLS_PER_WORKER)
    finished, killed_codes, reports = {}, [], []
    watch = selectors.DefaultSelector()

    def start(worker: int) -> None:
        proc = _start_race_worker(where, worker, chance.randrange(10**6))
        watch.register(
            proc.stdout, selectors.EVENT_READ, (worker, proc, chance.randrange(1, RACE_OPERATIONS // 2), [0])
        )

    for worker in range(RACE_WORKERS):
        start(worker)
    while watch.get_map():
        for key, _ in watch.select():
            worker, proc, kill_after, seen = key.data
            line = proc.stdout.readline()
            if line and line.strip() != "finished":
                reports.append((worker, *line.split()))
                seen[0] += 1
                if not (kills_left[worker] and seen[0] >= kill_after):
                    continue
                os.kill(proc.pid, signal.SIGKILL)  # wherever its next settle is: propose, decide or apply
                kills_left[worker] -= 1
                killed_codes.append(proc.wait())
                watch.unregister(proc.stdout)
                proc.stdout.close()
                proc.stderr.close()
                start(worker)  # restarted: replays every operation, in another order
                continue
            watch.unregister(proc.stdout)
            finished[worker] = (proc.wait(), proc.stderr.read())
            proc.stdout.close()
            proc.stderr.close()
    # Every kill was sent while its worker had half its list or more to go; one that finds the
    # worker already done (its output is buffered ahead of us) is not a kill mid-settle.
    assert len(killed_codes) == RACE_WORKERS * KILLS_PER_WORKER
    assert killed_codes.count(-signal.SIGKILL) >= RACE_WORKERS, killed_codes
    assert {w: code for w, (code, _) in finished.items()} == dict.fromkeys(range(RACE_WORKERS), 0), finished
    assert not any("Traceback" in err for _, err in finished.values())

    with DecisionStore(where) as store:
        operations = store.operations()
        assert len(operations) == RACE_OPERATIONS
        assert {op.state for op in operations} == {OperationState.APPLIED}
        assert len(store.effects()) == RACE_OPERATIONS
    per_op = lambda table: query(where, f"SELECT op_id, COUNT(*) FROM {table} GROUP BY op_id")  # noqa: E731
    assert len(per_op("effects")) == RACE_OPERATIONS and {n for _, n in per_op("effects")} == {1}
    assert len(per_op("ledger")) == RACE_OPERATIONS and {n for _, n in per_op("ledger")} == {1}
    assert len(per_op("consultations")) == RACE_OPERATIONS and {n for _, n in per_op("consultations")} == {1}
    # what the hosts said they did: never two "I decided" or two "I wrote it" for one operation
    for column in (2, 3):
        said = [r[1] for r in reports if r[column] == "1"]
        assert len(said) == len(set(said))


def test_settle_together_is_chapter_nines_race(where):
    asked = []
    settled = settle_together(
        where, "op-1", "post_comment", ARGS, lambda t, a: (asked.append(a) or True, "ok"), hosts=3
    )
    assert asked == [ARGS]
    # one host recorded the decision and one wrote the effect (not always the same one: the
    # decider may lose the apply step's lock to another host, which then writes it, truthfully)
    assert [s.decided_now for s in settled].count(True) == 1 and [s.applied_now for s in settled].count(True) == 1
    assert [s.proposed_now for s in settled].count(True) == 1
    assert {s.state for s in settled} == {OperationState.APPLIED}
    with pytest.raises(ZeroDivisionError):
        settle_together(where, "op-2", "post_comment", ARGS, lambda t, a: 1 / 0)


@settings(max_examples=60, deadline=None)
@given(
    first=st.dictionaries(st.text(max_size=6), st.one_of(st.integers(), st.text(max_size=8), st.booleans()), max_size=3)
)
def test_a_conflict_names_both_proposals_with_spaces_between_arguments_and_strings_untouched(
    tmp_path_factory: pytest.TempPathFactory, first: dict[str, object]
) -> None:
    """Between arguments the message has spaces, so a notebook can wrap it; every string inside is the
    canonical signature's, character for character (a ", " inside a text is not changed)."""
    second = {**first, "extra, key: x": 1}
    with DecisionStore(tmp_path_factory.mktemp("conflict") / "store.sqlite") as store:
        store.propose("op", "post", first)
        with pytest.raises(ProposalConflict) as raised:
            store.propose("op", "post", second)
    message = str(raised.value)
    for arguments in (first, second):
        exact = canonical(_json_shaped(arguments))
        shown = durable._spaced(exact)
        assert f"post({shown})" in message
        assert json.loads(shown) == json.loads(exact)
        tokens = [t for t in re.split(r'("(?:[^"\\]|\\.)*")', shown)]
        assert "".join(t if t.startswith('"') else t.replace(", ", ",").replace(": ", ":") for t in tokens) == exact
        assert "," not in "".join(t for t in tokens if not t.startswith('"')).replace(", ", "")
