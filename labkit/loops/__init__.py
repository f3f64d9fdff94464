"""The loops that run inside a scope, and what a run ends with (chapters 2, 3 and 7).

Read in this order:

1. :mod:`~labkit.loops.review`: the task fixture, a review of ticket 42 (chapter 3, *The task*).
2. :mod:`~labkit.loops.agents`: the ``simple`` and ``harness`` agents and their middleware
   (chapter 2, *What the harness turns on — and off*).
3. :mod:`~labkit.loops.outcome`: run statuses, the run outcome and exit codes
   (docs/guarantees.md, *Every stop has one name, and it is not relabelled*).
4. :mod:`~labkit.loops.running`: an agent run in its scope, every ending turned into an outcome.
5. :mod:`~labkit.loops.scenarios`: the eight scripted scenarios of the lesson (README.md, *The scenarios*).
6. :mod:`~labkit.loops.telemetry`: OpenTelemetry spans by composition. Loaded
   only when used (``import labkit`` does not import it).
7. :mod:`~labkit.loops.runner`: a scenario end to end (``prepare``, ``arun``, ``run``), with
   spans when a tracer is set.
"""
