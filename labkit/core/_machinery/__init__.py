"""What makes Python keep the core's promises, and keep them fast: not part of the lesson.

The lesson files of :mod:`labkit.core` say *what* a run promises; each module here is one
mechanism that Python needs to keep a promise, or that makes a run cheaper. Each says what it
buys, with the benchmark that measured it (CPU time, "off / on" for a run, so above 1 means it
pays; the project keeps a speed trick only when it buys at least 5 % of a run):

* :mod:`.workers`: daemon worker threads, reused, never joined, that a stuck sync body cannot
  hold. Buys the promise "the deadline does not wait for a sync body" (a body on
  ``asyncio.to_thread`` would hold the run, and the interpreter's exit); reusing the threads
  instead of one per call buys ×0.36 (0.26–0.89) per sync call (``benchmarks.paired``,
  ``sync_body`` against ``thread_handoff``; docs/benchmarks.md, *What changed for these figures*).
  :func:`~.workers.run_body` returns its future for the caller to await (no coroutine of its own,
  nor one in :mod:`labkit.core.bodies`): ~8,000 of ~136,000 instructions per sync body in a run,
  6 % (callgrind, every thread; ``benchmarks.paired``'s ``sync_body_handoff`` calls).
* :mod:`.sync`: the sync bridge, a coroutine run to its end from sync code (``labkit.run``, a
  direct ``invoke`` of an async body), in a script, a console or a running Jupyter kernel, with
  Ctrl+C as the caller's cancellation. Each thread keeps its event loop open for the next run
  (loop reuse): ×0.41 (0.32–0.53) per sync run, and ×0.30 (0.24–0.64) inside a running loop
  (``benchmarks.paired``, ``sync_run`` and ``sync_run_in_a_loop``; same section).
* :mod:`.abandon`: a task that ignores its cancellation is abandoned after
  :data:`~labkit.core.cancellation.ABANDON_GRACE_S`, and taken out of its loop's task list so
  that closing the loop does not wait for it either. A promise, not a speed-up: no benchmark row
  (docs/guarantees.md, *Cancellation reaches the transport and the bodies*).
* :mod:`.shapes`: a body's shape (its argument model) shared by bodies made of the same parts,
  and per-model caches of the signature keys and the JSON Schema text. Without it every run
  reads its bodies and builds their pydantic models anew: ×12 (6.5–37) a complete run
  (``python -m benchmarks.tricks``, ``shared_shapes``, median of 201 interleaved rounds);
  closures made per run cost what module-level bodies cost (``benchmarks.paired``,
  ``closure_tools``: 7.5× before, 1.0× after).
* :mod:`.shared_events`: recorded events become cached, frozen :class:`~labkit.ControlEvent`
  values shared between runs: ×1.07 (0.67–2.56) a complete run (``python -m benchmarks.tricks``,
  ``shared_events``, 201 rounds; earlier, paired fresh processes: 7–10 % of a run).
* :mod:`.checked`: a ``Limits`` and a ``frozenset`` of grants, which cannot change, pass the scope's
  door checks once per object (anything else is checked every time; a value that fails is never
  remembered): checking them every run costs ×1.04–1.08 a complete run, median 1.05 (six paired
  runs of 101–301 interleaved rounds, the door checks on against off in one process; ``python -m
  benchmarks.tricks``, ``door_checks_once``).
* :mod:`.unlocked`: step 4's re-check after a tool body reads the run's token and deadline without
  the lock when nothing has happened (anything else takes the locked check): about 3,000 of ~55,000
  instructions per guarded call, 5.5 % of the call and ~10 % of the guard's own overhead (callgrind,
  ``benchmarks.guard``'s calls; docs/benchmarks.md, section 3).
* :mod:`.frozen`: read-only JSON containers, for the tool specs runs share, so one run (or a
  transport) cannot alter what the next run shows the model. A promise, not a speed-up: sharing
  the specs is what is cheap; freezing them keeps that safe.

One trick sits outside the core, where a run is assembled: a declared :class:`labkit.Tool` reads
its body once, when it is declared, and each run binds that reading to its fresh state
(:meth:`labkit.Tool.bind`, through the scope's ``_register``) instead of looking the shape up again:
reading it every run costs ×1.08–1.10 a complete run (four paired runs of 101–151 interleaved rounds,
the old ``bind`` against the new in one process; ``python -m benchmarks.tricks``, ``declared_tools``).

The one trick left in a lesson file is :class:`~labkit.CancelToken`'s lazily made
``threading.Event`` (:mod:`labkit.core.cancellation`): ×1.05–1.08 a complete run
(``python -m benchmarks.tricks``, ``lazy_token_event``), written beside it.

Nothing is imported here: ``import labkit`` loads each module when a lesson file needs it
(``frozen`` only with the first tool spec).
"""
