"""The core: the lesson in code. Read this package first.

One execution scope per run holds the limits, the counters and the events,
and guards every tool body (docs/guarantees.md states each rule; chapter 4
teaches the guard). Read the modules in this order; each reads top to bottom:

1. :mod:`~labkit.core.limits`: the four limits of a run and the counters read against them
   (docs/guarantees.md, *Limits are exact*).
2. :mod:`~labkit.core.events`: ordered control events and stop reasons (chapter 8, *Anatomy of an event*).
3. :mod:`~labkit.core.signature`: tool name + canonical arguments (docs/guarantees.md, *Signatures*).
4. :mod:`~labkit.core.arguments`: what an argument value may be: numbers exact, booleans never numbers.
5. :mod:`~labkit.core.binding`: step 1 of a call: what a body may be, its argument model, bind.
6. :mod:`~labkit.core.rules`: step 2: the rules that can refuse a call, public functions of one frozen record.
7. :mod:`~labkit.core.bodies`: step 3: how a body runs, outside the lock, with the run's cancellation.
8. :mod:`~labkit.core.guarded`: the guarded tool: bind, admit, body, re-check (chapter 4, *The guard, step
   by step*).
9. :mod:`~labkit.core.cancellation`: how a run stops: the first stop wins, the caller's cancellation wins.
10. :mod:`~labkit.core.lifecycle`: one owner for the run (``await scope.run(work)``): its own task, the
    deadline, a stop from outside, the caller, abandonment, the finish.
11. :mod:`~labkit.core.scope`: the execution scope, one per run: what it holds, admits and records.
12. :mod:`~labkit.core.errors`: labkit's exceptions, a user's mistakes apart from a run's stops.

What makes Python keep these promises (worker threads, the sync bridge and its kept loops,
abandonment, shared shapes and events, read-only JSON) is the private package
:mod:`labkit.core._machinery`, whose docstring says what each piece buys, with its benchmark.

Core-light: the standard library and pydantic only. The public names are
re-exported by :mod:`labkit` itself (``labkit.Limits``, ``labkit.ExecutionScope``, ...).
"""
