"""The capstone's two exercises and their checks (chapter 10).

* **Status bingo.** The learner writes eight :class:`ScriptedModel` s, one per
  :class:`~labkit.RunStatus`, and :func:`check_bingo` runs each under both
  agents and answers with one line per status: right, or which status came
  instead, the counters, and a hint naming the rule that decides.
* **Break the guard.** The learner writes guards (subclasses of
  :class:`GuardBase`) with an ``admit(call, body)`` method; :func:`check_guard`
  runs each alone on short scripts against the reference rules
  (:mod:`.rules`), then under every schedule of two racing threads with up to
  two preemptions (:mod:`.explore`), and names what breaks it: the wrong call,
  or the shortest breaking schedule and what the threads held
  (docs/teaching-helpers.md).

Core-light: the standard library and labkit's core only. Nothing here raises
for an unfinished exercise (``...`` in the learner edition): the checks say
what is missing instead.

Example::

    board = new_board()
    board["Incomplete"] = ScriptedModel(["Review finished."])
    check_bingo(board)          # eight lines, one per status
    check_guard(MyGuard)        # alone, then every schedule of the races: a verdict
"""

from .bingo import AGENTS, BINGO_LIMITS, Bingo, ScriptedModel, Square, check_bingo, new_board
from .guard import BodyFailed, GuardBase, GuardReport, check_guard, pause
from .rules import Attempt, Rules

__all__ = [
    "AGENTS",
    "Attempt",
    "BINGO_LIMITS",
    "BodyFailed",
    "Bingo",
    "GuardBase",
    "GuardReport",
    "Rules",
    "ScriptedModel",
    "Square",
    "check_bingo",
    "check_guard",
    "new_board",
    "pause",
]
