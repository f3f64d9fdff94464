"""A host for the kill-and-replay race of tests/test_durable.py: settles every operation of a shared list.

Usage: python durable_race_worker.py STORE WORKER OPERATIONS ORDER_SEED

STORE is a SQLite file or a postgresql:// URL shared by every worker. The
worker settles operations ``race-0`` ... ``race-<OPERATIONS - 1>`` in an order
of its own (all workers settle the same ones, so they race), printing one
line per settled operation (``<op_id> <decided_now> <applied_now>``) and
``finished`` at the end. The policy approves and, inside the decision's
transaction, writes one ``consultations`` row; the effect writes one
``ledger`` row inside the apply transaction. Both are rolled back if the
worker is killed before its step commits.
"""

import random
import sys

from labkit.durable import DecisionStore, operation_id


def main() -> None:
    where, worker, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    mark = "%s" if where.startswith("postgresql://") else "?"
    store = DecisionStore(where)

    def policy(tool, arguments):
        store.connection.execute(
            f"INSERT INTO consultations (op_id, worker) VALUES ({mark}, {mark})", (arguments["op"], worker)
        )
        return True, f"approved by worker {worker}"

    def effect(connection, operation):
        connection.execute(f"INSERT INTO ledger (op_id, worker) VALUES ({mark}, {mark})", (operation.op_id, worker))
        return f"written by worker {worker}"

    order = list(range(count))
    random.Random(seed).shuffle(order)
    for number in order:
        arguments = {"op": f"race-{number}", "amount": number}
        op_id = operation_id("race", "pay", arguments)
        settled = store.settle(op_id, "pay", arguments, policy, effect)
        print(op_id, int(settled.decided_now), int(settled.applied_now), flush=True)
    print("finished", flush=True)


if __name__ == "__main__":
    main()
