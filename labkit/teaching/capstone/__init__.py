"""The capstone's two exercises and their checks (chapter 10).

* **Status bingo.** The learner writes eight :class:`ScriptedModel` s, one per
  :class:`~labkit.RunStatus`, and :func:`check_bingo` runs each under both
  agents and answers with one line per status: right, or which status came
  instead, the counters, and a hint naming the rule that decides.
* **Break the guard.** The learner writes guards (subclasses of
  :class:`GuardBase`) with an ``admit(body)`` method; :func:`check_guard`
  releases many threads at once against one guard and counts what it
  admitted and which bodies ran. It passes only for a guard that checks and
  reserves in one step under its lock, before the body (SPEC §3.1).

Core-light: the standard library and labkit's core only. Nothing here raises
for an unfinished exercise (``...`` in the learner edition): the checks say
what is missing instead.

Example::

    board = new_board()
    board["Incomplete"] = ScriptedModel(["Review finished."])
    check_bingo(board)          # eight lines, one per status
    check_guard(MyGuard)        # threads, counts, verdict
"""

from .bingo import AGENTS, BINGO_LIMITS, Bingo, ScriptedModel, Square, check_bingo, new_board
from .guard import BodyFailed, GuardBase, GuardReport, check_guard, pause
from .rules import Attempt

__all__ = [
    "AGENTS",
    "Attempt",
    "BINGO_LIMITS",
    "BodyFailed",
    "Bingo",
    "GuardBase",
    "GuardReport",
    "ScriptedModel",
    "Square",
    "check_bingo",
    "check_guard",
    "new_board",
    "pause",
]
