"""Durable decisions: settles per second for 1, 4 and 16 worker processes, on SQLite and on PostgreSQL.

``python -m benchmarks.durable [--operations N] [--postgres-url URL]`` prints one JSON line.

Each worker is its own process with its own :class:`~labkit.durable.DecisionStore`
on one shared database, and settles N operations of its own (propose, the
policy, the effect: three transactions each); every worker starts at one
barrier, and the figure is all settles over the wall time until the last
worker is done. Afterwards the database must hold exactly one effect per
operation, or the row reports an error. Without ``--postgres-url`` a
throw-away PostgreSQL cluster is started as the tests do
(``tests/postgres_server.py``); without PostgreSQL the rows say why they are missing.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from labkit.durable import DecisionStore, operation_id

WORKERS = (1, 4, 16)


def _worker(where: str, worker: int, operations: int, barrier: Any) -> None:
    store = DecisionStore(where)
    approve = lambda tool, arguments: (True, "benchmark")  # noqa: E731
    barrier.wait()
    for number in range(operations):
        arguments = {"worker": worker, "n": number}
        store.settle(operation_id("bench", "pay", arguments), "pay", arguments, approve)
    store.close()


def measure(where: str, workers: int, operations: int) -> dict[str, Any]:
    """Settles per second of ``workers`` processes settling ``operations`` each on the empty store ``where``."""
    DecisionStore(where).close()  # the schema, before the clock
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(workers + 1)
    procs = [context.Process(target=_worker, args=(where, w, operations, barrier)) for w in range(workers)]
    for proc in procs:
        proc.start()
    barrier.wait()
    started = time.perf_counter()
    for proc in procs:
        proc.join()
    wall = time.perf_counter() - started
    with DecisionStore(where) as store:
        effects = len(store.effects())
    row = {
        "workers": workers,
        "settles": workers * operations,
        "wall_s": wall,
        "settles_per_s": workers * operations / wall,
    }
    if effects != workers * operations or any(p.exitcode != 0 for p in procs):
        row["error"] = f"{effects} effects for {workers * operations} settles; exit codes {[p.exitcode for p in procs]}"
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--operations", type=int, default=200, help="operations settled by each worker")
    parser.add_argument("--postgres-url", help="an empty database to use (default: start a throw-away cluster)")
    args = parser.parse_args()
    result: dict[str, Any] = {"operations_per_worker": args.operations, "sqlite": [], "postgresql": []}
    with tempfile.TemporaryDirectory() as folder:
        for workers in WORKERS:
            result["sqlite"].append(measure(os.path.join(folder, f"bench-{workers}.sqlite"), workers, args.operations))
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the tests' own server fixture
    from postgres_server import fresh_database, running_postgres, unavailable

    if args.postgres_url:
        result["postgresql"] = [
            measure(fresh_database(args.postgres_url, f"bench_{w}"), w, args.operations) for w in WORKERS
        ]
    elif unavailable():
        result["postgresql_skipped"] = unavailable()
    else:
        with running_postgres() as url:
            result["postgresql"] = [measure(fresh_database(url, f"bench_{w}"), w, args.operations) for w in WORKERS]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
