"""A host process for tests/test_durable.py: settles one operation, pausing where told so the test can kill it.

Usage: python durable_worker.py DB REQUEST_ID PAUSE_AT   (DB: a SQLite file or a postgresql:// URL)
PAUSE_AT: after-propose | after-decide | inside-apply | after-apply | never

At the pause point it prints the point's name on stdout and blocks reading
stdin (the test holds the pipe open and sends SIGKILL). Without a pause it
prints the final state.
"""

import sys

from labkit.durable import DecisionStore, operation_id

ARGUMENTS = {"ticket": 42, "text": "Reproduced: HTTP 401 for a known account."}


def pause(point: str, wanted: str) -> None:
    if point == wanted:
        print(point, flush=True)
        sys.stdin.read()  # blocks until killed


def main() -> None:
    db, request_id, wanted = sys.argv[1:4]
    store = DecisionStore(db)
    op_id = operation_id(request_id, "post_comment", ARGUMENTS)
    op = store.propose(op_id, "post_comment", ARGUMENTS)
    pause("after-propose", wanted)
    if op.state == "proposed":
        op = store.decide(op_id, True, "host policy: ticket 42")
    pause("after-decide", wanted)

    def effect(connection, operation):
        mark = "%s" if db.startswith("postgresql://") else "?"  # psycopg's placeholders, or sqlite3's
        connection.execute("CREATE TABLE IF NOT EXISTS comments (op_id TEXT PRIMARY KEY, body TEXT)")
        connection.execute(
            f"INSERT INTO comments VALUES ({mark}, {mark})", (operation.op_id, operation.arguments["text"])
        )
        pause("inside-apply", wanted)
        return "comment stored"

    if op.state == "approved":
        op = store.apply(op_id, effect)
    pause("after-apply", wanted)
    print(f"final {op.state} {len(store.effects())}", flush=True)


if __name__ == "__main__":
    main()
