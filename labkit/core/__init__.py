"""The core: the lesson in code. Read this package first.

One execution scope per run holds the limits, the counters and the events,
and guards every tool body (SPEC §3). Read the modules in the order SPEC §3
tells the story:

1. :mod:`~labkit.core.limits`: the four limits of a run (SPEC §3).
2. :mod:`~labkit.core.events`: ordered control events and stop reasons (SPEC §3.6).
3. :mod:`~labkit.core.signature`: tool name + canonical arguments (SPEC §3.2).
4. :mod:`~labkit.core.scope`: the execution scope and the tool guard (SPEC §3.1, the heart).
5. :mod:`~labkit.core.bodies`: what a tool body may be and how it runs (SPEC §3.1 steps 1 and 3).
6. :mod:`~labkit.core.errors`: labkit's exceptions, a user's mistakes apart from a run's stops.

The private helpers ``_sync`` (a coroutine run from sync code), ``_workers``
(threads a stuck body cannot hold) and ``_frozen`` (read-only JSON) serve the
scope; they are not part of the lesson.

Core-light: the standard library and pydantic only. The public names are
re-exported by :mod:`labkit` itself (``labkit.Limits``, ``labkit.ExecutionScope``, ...).
"""
