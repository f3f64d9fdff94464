"""The core: the lesson in code. Read this package first.

One execution scope per run holds the limits, the counters and the events,
and guards every tool body (docs/guarantees.md states each rule; chapter 4
teaches the guard). Read the modules in this order:

1. :mod:`~labkit.core.limits`: the four limits of a run (docs/guarantees.md, *Limits are exact*).
2. :mod:`~labkit.core.events`: ordered control events and stop reasons (chapter 8, *Anatomy of an event*).
3. :mod:`~labkit.core.signature`: tool name + canonical arguments (docs/guarantees.md, *Signatures*).
4. :mod:`~labkit.core.scope`: the execution scope and the tool guard, the heart (chapter 4, *The guard, step by step*).
5. :mod:`~labkit.core.bodies`: what a tool body may be and how it runs (chapter 4, *The guard, step by step*).
6. :mod:`~labkit.core.errors`: labkit's exceptions, a user's mistakes apart from a run's stops.

The private helpers ``_sync`` (a coroutine run from sync code), ``_workers``
(threads a stuck body cannot hold) and ``_frozen`` (read-only JSON) serve the
scope; they are not part of the lesson.

Core-light: the standard library and pydantic only. The public names are
re-exported by :mod:`labkit` itself (``labkit.Limits``, ``labkit.ExecutionScope``, ...).
"""
