"""Draft for the lead: insert chapter 9's optional section "Two workers, one operation" (issue 20).

Usage:
    python scripts/_draft_ch9_two_workers.py [NOTEBOOK]    # default: notebooks/09_cancellation_persistence_replay.ipynb

Inserts the section's cells just before the ``## Questions`` heading, once
(a second run finds the section and changes nothing). Then re-execute the
chapter to store its outputs and rebuild the learner edition
(``python scripts/build_workbook.py``). The cells run on SQLite; with
``LABKIT_POSTGRES_URL`` set (e.g. ``postgresql://you@localhost/labkit``) the same
cells run on that PostgreSQL database. Their outputs are the same on both.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

TITLE = "## Optional: two workers, one operation"

INTRO = f"""{TITLE}

A host that outgrows one machine runs several workers, and two of them can pick up the same
request at the same moment. The store has to hold then too: the approval policy is consulted
**once** for the operation, one worker writes the effect, and the other adopts the recorded
decision and says that it wrote nothing. Every result says truthfully what *this* call did
(`decided_now`, `applied_now`).

These cells run on SQLite. To run them on PostgreSQL, the store for hosts on several machines, set
`LABKIT_POSTGRES_URL` (for example `postgresql://you@localhost/labkit`) before starting JupyterLab,
with `labkit[postgres]` installed: the same `DecisionStore` API, the same guarantees."""

SETUP = """where = os.environ.get("LABKIT_POSTGRES_URL") or str(Path(workdir.name) / "two-workers.sqlite")
asked = []                                          # one entry per consultation of the policy

def policy(tool, arguments):
    asked.append(arguments["ticket"])
    return True, "host policy: comments on ticket 42 are allowed\""""

ASK = """Two workers settle the same operation at the same moment, each with its own connection. How many
times is the policy consulted, and how many comments are written?"""

PREDICT = """my_consultations = 1
my_comments_written = 1"""

HINT = "Deciding happens with the operation locked: what does the second worker find once it gets the lock?"

RUN = """op_id = labkit.durable.operation_id(str(uuid.uuid4()), "post_comment", comment)   # a new request each run
settled = labkit.durable.settle_together(where, op_id, "post_comment", comment, policy, hosts=2)
{"decided it": sum(s.decided_now for s in settled), "wrote it": sum(s.applied_now for s in settled)}"""

CHECK_ASKED = """labkit.compare("policy consulted", my_consultations, len(asked))"""

CHECK_WRITTEN = """labkit.compare("comments written", my_comments_written, sum(s.applied_now for s in settled))"""

AFTER = """Once each. The first worker to lock the operation consulted the policy and recorded the
approval; the other waited at the lock and found the decision recorded: no second verdict, no
`DecisionConflict`. Then one of the two (not always the same) wrote the comment, and the other
found it written and said so. `settled[0].decided_now`, `settled[1].applied_now`... say which did what. The tests run the same race with 8 worker processes over 500 operations, killed at random
points and restarted, on SQLite and on PostgreSQL."""


def cells() -> list[nbformat.NotebookNode]:
    new = nbformat.v4
    predict = new.new_code_cell(PREDICT)
    predict.metadata = {"tags": ["solution"], "labkit": {"hint": HINT}}
    return [
        new.new_markdown_cell(INTRO),
        new.new_code_cell("import os\nimport uuid"),
        new.new_code_cell(SETUP),
        new.new_markdown_cell(ASK),
        predict,
        new.new_code_cell(RUN),
        new.new_code_cell(CHECK_ASKED),  # one compare per cell: a cell shows its last value only
        new.new_code_cell(CHECK_WRITTEN),
        new.new_markdown_cell(AFTER),
    ]


def insert(path: Path) -> bool:
    """Insert the section before ``## Questions``; return whether the notebook changed."""
    notebook = nbformat.read(path, as_version=4)
    sources = ["".join(c.source) for c in notebook.cells]
    if any(s.startswith(TITLE) for s in sources):
        return False
    at = next((i for i, s in enumerate(sources) if s.startswith("## Questions")), None)
    if at is None:
        raise SystemExit(f"{path}: no '## Questions' heading to insert before")
    notebook.cells[at:at] = cells()
    nbformat.validate(notebook)
    nbformat.write(notebook, path)
    return True


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "notebooks/09_cancellation_persistence_replay.ipynb")
    print(f"{target}: {'section inserted' if insert(target) else 'section already there, unchanged'}")
