"""``python -m benchmarks``: run every benchmark once, print the tables, write ``docs/benchmarks.md``.

Each implementation runs in its own fresh process (``benchmarks.worker``), in
interleaved rounds so that machine noise hits all of them alike; a row's figure
is the median over rounds of each round's median, and the spread is the range of
the round medians. All ratios on the page come from this one invocation.

Options: ``--rounds`` (default 3), ``--repeats`` per round (default 7),
``--quick`` (1 round, 3 repeats, smaller scale runs), ``--skip-notebooks``,
``--no-write`` (print only), ``--output PATH``.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .impls import IMPLS

PEERS = ("agent-framework", "pydantic-ai", "openai-agents", "langgraph")
DISTS = {
    "labkit": "labkit",
    "pydantic": "pydantic",
    "agent-framework": "agent-framework-core",
    "pydantic-ai": "pydantic-ai-slim",
    "openai-agents": "openai-agents",
    "langgraph": "langgraph",
    "langchain-core": "langchain-core",
}
TARGET_BARE_RATIO = 3.0
TARGET_PEER_FACTOR = 15.0
TARGET_GUARD_US = 3.0
TARGET_COLD_RATIO = 1.5
TARGET_NOTEBOOKS_S = 60.0
# issue 13
TARGET_SYNC_RUN_RATIO = 1.5  # sync labkit.run / await arun
TARGET_SYNC_BODY_RATIO = 1.3  # issue 21: a sync body in a run / the thread hand-off floor, both in the same run
TARGET_CLOSURE_RATIO = 1.2  # closure-body tools / module-level-body tools, per run
TARGET_COLD_MODEL_RATIO = 1.15  # console / (floor + one model class)
# issue 17
TARGET_CHECK_GUARD_S = 2.0  # one check_guard call on a correct guard, in a notebook cell
# issue 21: labkit against the reference floor (benchmarks/impls/floor.py)
TARGET_FLOOR_RATIO = 1.5  # a complete run / the floor's (stretch: 1.3)
TARGET_FLOOR_STRETCH = 1.3
TARGET_PEER_FACTOR_21 = 5.0  # and still this many times faster than the fastest framework


def paired_ratios(a: list[float], b: list[float]) -> tuple[float, float, float] | None:
    """Median and range of the per-round ratios a[i] / b[i] (rounds interleaved, so each pair shared its load)."""
    ratios = [x / y for x, y in zip(a, b, strict=False) if y]
    if not ratios:
        return None
    return statistics.median(ratios), min(ratios), max(ratios)


def verdict(cpu: float | None, wall: float | None, ok: Any) -> str:
    """'met' only when both clocks meet the target; never met on one clock while the other misses."""
    if cpu is None or wall is None:
        return "not measured on both clocks"
    c, w = ok(cpu), ok(wall)
    if c and w:
        return "met"
    if not c and not w:
        return "missed"
    return "not met: " + ("met in CPU time, missed in wall time" if c else "met in wall time, missed in CPU time")


def _json_of(cmd: list[str], timeout: float = 1800) -> dict[str, Any]:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(lines[-1])


def _import_time(key: str, repeats: int) -> float | None:
    imports = _json_of(
        [
            sys.executable,
            "-c",
            f"import json, importlib; m = importlib.import_module({IMPLS[key]!r}); "
            f"print(json.dumps({{'imports': m.IMPORTS}}))",
        ]
    )
    if "error" in imports:
        return None
    stmt = "import " + ", ".join(imports["imports"])
    code = f"import time; t = time.perf_counter(); {stmt}; print(time.perf_counter() - t)"
    samples = []
    for _ in range(repeats):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return None
        samples.append(float(done.stdout))
    return statistics.median(samples) * 1e3


def _versions() -> dict[str, str]:
    out = {}
    for label, dist in DISTS.items():
        try:
            out[label] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[label] = "not installed"
    return out


def _machine() -> str:
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        mem = (
            int(next(x for x in Path("/proc/meminfo").read_text().splitlines() if x.startswith("MemTotal")).split()[1])
            / 2**20
        )
        memory = f"{mem:.0f} GiB RAM"
    except (OSError, StopIteration, ValueError):
        memory = "RAM unknown"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores ({cpu}), {memory}; "
        f"Python {platform.python_version()}; load average at start {load:.1f}"
    )


def compare(rounds: int, repeats: int, skip: tuple[str, ...] = ()) -> dict[str, dict[str, Any]]:
    keys = [k for k in IMPLS if k not in skip]
    rows: dict[str, dict[str, Any]] = {}
    per_round: dict[str, list[float]] = {k: [] for k in keys}
    cpu_round: dict[str, list[float]] = {k: [] for k in keys}
    for r in range(rounds):
        for key in keys:
            print(f"  round {r + 1}/{rounds}: {key}", file=sys.stderr, flush=True)
            res = _json_of([sys.executable, "-m", "benchmarks.worker", key, "--repeats", str(repeats)])
            rows.setdefault(key, res)
            if "error" in res:
                rows[key] = res
                continue
            per_round[key].append(res["us"])
            cpu_round[key].append(res["cpu_us"])
            rows[key].update({k: res[k] for k in ("peak_kib", "rss_mib", "name", "style")})
    for key, samples in per_round.items():
        if samples:
            rows[key]["us"] = statistics.median(samples)
            rows[key]["spread"] = (min(samples), max(samples))
            rows[key]["cpu_us"] = statistics.median(cpu_round[key])
            rows[key]["cpu_rounds"] = cpu_round[key]
            rows[key]["wall_rounds"] = samples
    for key in keys:
        if "error" not in rows[key]:
            rows[key]["import_ms"] = _import_time(key, 5)
    return rows


def _fmt(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None else f"{x:,.{digits}f}"


def _range(r: tuple[float, float, float] | list[float] | None, digits: int = 2) -> str:
    if r is None:
        return "n/a"
    if len(r) == 3:
        return f"**{r[0]:.{digits}f}×** ({r[1]:.{digits}f}–{r[2]:.{digits}f})"
    return f"{r[0]:.{digits}f}–{r[1]:.{digits}f}"


def render(
    rows,
    guard,
    paired,
    scale,
    cold,
    notebooks,
    versions,
    machine,
    command,
    elapsed,
    note,
    capstone=None,
    durable=None,
    floor=None,
) -> str:
    base_import = rows["bare"].get("import_ms")
    base_mem = rows["bare"].get("peak_kib")
    out = [
        "# Benchmarks",
        "",
        "Generated by `" + command + "` (one invocation; every figure below comes from it, except the "
        "before/after gains quoted in the last section).",
        "",
        f"- Machine: {machine}.",
        "- **Clocks**: the targets are read from **CPU time** (this process, every thread), and every ratio is "
        "the **median of paired ratios**: the two sides are measured in alternating blocks (or in adjacent fresh "
        "processes of the same round), so load that comes and goes hits both sides of a pair alike; the range of "
        "the pairs is given beside it. Wall time is given too: when other jobs share the two cores (see the load "
        "average above) it is inflated and noisy. A target is called met only when it is met in CPU time *and* "
        "wall time.",
        "- Versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".",
        f"- Total benchmark time: {elapsed:.0f} s.",
    ]
    if note:
        out.append(f"- {note}")
    out += ["", "## Targets", ""]
    out += _floor_targets(rows, paired)
    out += _targets(rows, guard, paired, cold, notebooks)
    if (capstone or {}).get("correct"):
        c = capstone["correct"]
        out.append(
            f"- chapter 10's `check_guard` on a correct guard ≤ {TARGET_CHECK_GUARD_S:g} s (a notebook cell): "
            f"**{c['wall_s']:.2f} s** wall, {c['cpu_s']:.2f} s CPU ({c['schedules']:,} schedules, up to "
            f"{c['bound']} preemptions) — {'met' if c['wall_s'] <= TARGET_CHECK_GUARD_S else 'missed'}."
        )
    out += [
        "",
        "## 1. One `complete` run (3 model calls, 2 tool calls)",
        "",
        "Same scripted model (call 1 asks for `read_ticket(42)`, call 2 for `finish_review(42)`, call 3 says "
        '"Review finished."), same two tool bodies, limits 6 model calls / 4 tool calls in every implementation. '
        "Each run is verified before timing (both bodies entered once, 3 model calls as reported by the framework "
        "and seen by the script, final text) and again after. `async` rows are awaited inside one running event "
        "loop; `sync` rows are called from plain code (labkit's sync entry runs on an event loop kept open for "
        "the thread). Peers build their agent once and reuse it (their idiomatic use); labkit builds scope, tools, "
        "transport and agent for every run (one scope per request), and that cost is included. Each "
        "implementation runs in its own fresh process, every implementation once per round, rounds interleaved.",
        "",
        "| implementation | style | CPU µs per run (median) | × bare, CPU, paired (range) | wall µs per run | × bare, "
        "wall, paired | peak memory per run (KiB) | × bare | import (ms) | × bare | process RSS (MiB) |",
        "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for key, row in rows.items():
        if "error" in row:
            out.append(f"| {key} | | {row['error']} | | | | | | | | |")
            continue
        base = rows["bare" if row["style"] == "async" else "bare-sync"]
        cpu_r = paired_ratios(row.get("cpu_rounds", []), base.get("cpu_rounds", []))
        wall_r = paired_ratios(row.get("wall_rounds", []), base.get("wall_rounds", []))
        imp = row.get("import_ms")
        out.append(
            f"| {row['name']} | {row['style']} | {_fmt(row['cpu_us'])} | {_range(cpu_r, 1)} | {_fmt(row['us'])} | "
            f"{_fmt(wall_r[0] if wall_r else None)} | {_fmt(row['peak_kib'])} | "
            f"{_fmt(row['peak_kib'] / base_mem if base_mem else None)} | {_fmt(imp)} | "
            f"{_fmt(imp / base_import if imp and base_import else None)} | {_fmt(row['rss_mib'])} |"
        )
    out += [
        "",
        "× bare: async rows against the async bare loop, sync rows against the sync bare loop, paired round "
        "by round. Import time: the modules a user imports for that implementation, in a fresh process (median of 5, "
        "wall).",
        "",
    ]
    out += _floor_section(rows, paired, floor or {})
    out += [
        "## 2. The learner's paths (issue 13), paired in one process",
        "",
        "`python -m benchmarks.paired`: A and B alternate in blocks of the same number of calls "
        f"({paired.get('rounds', 'n/a')} rounds); ratio = A/B per round in CPU time, median (range); µs per call are "
        f"medians.",
        "",
        "| comparison | A | B | A/B, CPU (range) | A/B, wall | A CPU µs | B CPU µs | A wall µs | B wall µs |",
        "|---|---|---|---|---:|---:|---:|---:|---:|",
    ]
    labels = {
        "sync_run": ("sync `labkit.run(setup)` of `complete`", "`await setup.arun()` in a running loop"),
        "sync_run_in_a_loop": (
            "sync `labkit.run` inside a running loop (a notebook cell)",
            "`await setup.arun()` in that loop",
        ),
        "sync_body": ("sync body awaited inside a run (worker thread)", "the same body `async`"),
        "thread_handoff": (
            "the floor under `sync_body`: a future settled from a waiting thread",
            "the loop settling its own future",
        ),
        "sync_body_handoff": (
            "`sync_body`'s A: a sync body awaited inside a run",
            "`thread_handoff`'s A: the bare hand-off",
        ),
        "closure_tools": ("tools whose bodies are closures made per run", "the same tools, module-level bodies"),
    }
    for key, (a, b) in labels.items():
        p = paired.get(key)
        if not p:
            out.append(f"| {key} | {a} | {b} | {paired.get('error', 'n/a')} | | | | | |")
            continue
        out.append(
            f"| {key} | {a} | {b} | {_range((p['ratio'], *p['range']))} | {p['wall_ratio']:.2f} | "
            f"{p['a_cpu_us']:.1f} | {p['b_cpu_us']:.1f} | {p['a_wall_us']:.1f} | {p['b_wall_us']:.1f} |"
        )
    g = paired.get("growth")
    if g:
        held = ", ".join(f"{int(k):,} runs: {v:,.1f} KiB" for k, v in g["held_kib"].items())
        out += [
            "",
            f'Growth: {g["runs"]:,} sequential `await arun("complete")` in one task, nothing yielding between '
            f"them. Traced memory still held (after a full collection) — {held}. CPU µs per run (tracemalloc on, "
            f"which slows every allocation): first tenth {g['first_tenth_us']:.0f}, last tenth "
            f"{g['last_tenth_us']:.0f}.",
        ]
    out += [
        "",
        "## 3. Guard overhead per tool call",
        "",
        "Same scope, tool and binding; guarded = `tool.ainvoke(args)` / `tool.invoke(args)`, unguarded = "
        "`tool.bind(args)` then the body. Guarded and unguarded blocks alternate; the overhead is the median of "
        "each round's difference (range beside it). The scope sees hundreds of thousands of calls here, so every "
        "ToolCall event is new.",
        "",
        "| body | clock | guarded µs | unguarded µs | overhead µs (range) |",
        "|---|---|---:|---:|---|",
    ]
    if "async_overhead" in guard:
        for body, prefix in (
            ("async, awaited in a running loop", "async"),
            ("sync, `tool.invoke` from plain code", "sync"),
        ):
            for clock, c in (("CPU", "cpu_"), ("wall", "")):
                lo, hi = guard[f"{c}{prefix}_overhead_range"]
                out.append(
                    f"| {body} | {clock} | {guard[f'{c}{prefix}_guarded']:.2f} | "
                    f"{guard[f'{c}{prefix}_unguarded']:.2f} | "
                    f"{guard[f'{c}{prefix}_overhead']:.2f} ({lo:.2f}–{hi:.2f}) |"
                )
        out.append(
            f"| sync, awaited inside a run (worker thread, abandoned at the deadline) | CPU / wall | "
            f"{guard['cpu_sync_in_loop']:.1f} "
            f"/ {guard['sync_in_loop']:.1f} | | |"
        )
        out += [
            "",
            f"Admitted attempts equal ToolCall events after the whole measurement: {guard['admitted_equals_events']}.",
        ]
    else:
        out.append(f"| error | {guard.get('error')} | | | |")
    out += ["", "## 4. Scale", ""]
    conc, thr = scale.get("concurrent", {}), scale.get("threads", {})
    if conc:
        out.append(
            f"- {conc['runs']:,} concurrent `complete` runs in one event loop (half harness, half simple; each "
            f"with its own scope; the transport yields to the loop before every model call so runs interleave): "
            f"**{conc['miscounted']} miscounted**, {conc['runs_per_s']:,.0f} runs/s including `prepare` "
            f"({conc['runs_per_s_excluding_prepare']:,.0f} runs/s for the runs alone; wall time)."
        )
        if "gc_cpu_us_per_run" in conc:
            young, middle, full = conc["collections"]
            out.append(
                f"  CPU {conc['cpu_us_per_run']:.0f} µs per run, of which {conc['gc_cpu_us_per_run']:.0f} µs in the "
                f"garbage collector ({full} full collections, {middle} of generation 1, {young} of generation 0; "
                "every setup and outcome is kept until the end, so a full collection walks every live run)."
            )
    if thr:
        out.append(
            f"- One scope hammered by {thr['threads']} threads, {thr['calls']:,} guarded calls with a budget of "
            f"exactly "
            f"that many: exact counts **{thr['exact']}** (every call admitted once, ToolCall counts 1..N in order, "
            f"one more call halts with ToolBudget), {thr['guarded_calls_per_s']:,.0f} guarded calls/s (wall time)."
        )
    if "error" in scale:
        out.append(f"- error: {scale['error']}")
    out += ["", "## 5. Cold start", ""]
    if "console_ms" in cold:
        out += [
            "Fresh processes, commands interleaved, every command with bytecode (written to a private cache "
            "directory by warm-up runs, as an installed package has it; an editable install run with "
            "`PYTHONDONTWRITEBYTECODE` recompiles labkit in every process). CPU = user + system time of the child.",
            "",
            "| command | CPU ms (median) | wall ms (median) | wall range |",
            "|---|---:|---:|---|",
        ]
        labels = {
            "python_empty": "`python -c pass`",
            "floor": '`python -c "import asyncio, pydantic"`',
            "floor_with_a_model": "`import asyncio, pydantic` + one model class (the floor of a pydantic CLI)",
            "import_labkit": '`python -c "import labkit"`',
            "console": "`python -m labkit run complete`",
        }
        for key, label in labels.items():
            lo, hi = cold[f"{key}_spread_ms"]
            out.append(f"| {label} | {cold[key + '_cpu_ms']:.0f} | {cold[key + '_ms']:.0f} | {lo:.0f}–{hi:.0f} |")
        m, f = cold["cpu_ratio_console_to_floor_with_a_model_range"], cold["cpu_ratio_console_to_floor_range"]
        out += [
            "",
            "Console / (floor + one model class), paired per round: "
            f"{_range((cold['cpu_ratio_console_to_floor_with_a_model'], *m))} "
            f"in CPU time, {cold['wall_ratio_console_to_floor_with_a_model']:.2f}× in wall time. Console / "
            f"`import asyncio, pydantic`: {_range((cold['cpu_ratio_console_to_floor'], *f))} CPU, "
            f"{cold['wall_ratio_console_to_floor']:.2f}× wall. Console exit code {cold['console_exit_code']}. "
            f"Heavy modules loaded by `import labkit` and the console (pandas, matplotlib, ipywidgets, IPython, "
            f"Jupyter, numpy): **{cold['heavy_modules_loaded'] or 'none'}**.",
        ]
    else:
        out.append(f"error: {cold.get('error')}")
    out += ["", "## 6. Workbook verification", ""]
    if notebooks.get("skipped"):
        out.append("Skipped in this invocation (`--skip-notebooks`).")
    elif "error" in notebooks:
        out.append(f"error: {notebooks['error']}")
    else:
        names = ", ".join(notebooks["notebooks"]) or "none"
        out.append(f"Notebooks measured: {names}.")
        out.append(
            f"- pytest + nbval start: {notebooks['pytest_nbval_startup_s']:.2f} s per process; one kernel start: "
            f"{notebooks['kernel_start_s']:.2f} s; importing labkit with pandas, matplotlib and ipywidgets: "
            f"{notebooks['teaching_imports_s']:.2f} s per kernel."
        )
        if "serial_s" in notebooks:
            out.append(
                f"- `pytest --nbval` serially: **{notebooks['serial_s']:.1f} s** (exit {notebooks['serial_exit']}: "
                f"{notebooks['serial_summary']})."
            )
            out.append(
                f"- with pytest-xdist `-n {notebooks['workers']}` (`--dist loadfile`): "
                f"**{notebooks['parallel_s']:.1f} s** (exit {notebooks['parallel_exit']}: "
                f"{notebooks['parallel_summary']})."
            )
        else:
            out.append(f"- {notebooks.get('note')}")
    out += _capstone(capstone or {})
    out += _durable(durable or {})
    out += ["", "## What changed for these figures, and what remains", ""] + WHY + [""]
    out += [
        "## Reproduce",
        "",
        "```",
        "make bench            # = .venv/bin/python -m benchmarks (installs the bench extra first)",
        "python -m benchmarks --quick --no-write   # a fast look, prints only",
        "python -m benchmarks.paired              # only the paired rows of section 2",
        "python -m benchmarks.paired --only floor_harness floor_simple   # labkit / the reference floor",
        "python -m benchmarks.floor_profile       # where labkit's time goes beyond the floor (cProfile)",
        "```",
        "",
    ]
    return "\n".join(out)


def _capstone(capstone: dict[str, Any]) -> list[str]:
    out = [
        "",
        "## 7. Chapter 10's guard checker",
        "",
        "One `check_guard` call (median of 5 in one process, `benchmarks/capstone.py`): the guard answers every "
        "sequential script alone, then runs under every schedule of three two-thread races with up to "
        f"{capstone.get('bound', '?')} preemptions (one thread at a time, a switch possible at every read or write "
        "of its state and every lock operation). A correct guard explores them all; a wrong one stops at the first "
        "schedule that breaks it, fewest preemptions first.",
        "",
        "| guard | verdict | scripts | schedules | preemptions explored | wall s (range) | CPU s |",
        "|---|---|---:|---:|---:|---|---:|",
    ]
    if "error" in capstone or not capstone:
        out.append(f"| error | {capstone.get('error', 'not measured')} | | | | | |")
        return out
    for label, key in (("chapter 10's answer (right)", "correct"), ("check–pause–reserve (wrong)", "split")):
        c = capstone[key]
        verdict_text = "correct" if c["passed"] else ", ".join(c["faults"])
        lo, hi = c["wall_range"]
        out.append(
            f"| {label} | {verdict_text} | {c['scripts']} | {c['schedules']:,} | {c['bound']} | "
            f"{c['wall_s']:.2f} ({lo:.2f}–{hi:.2f}) | {c['cpu_s']:.2f} |"
        )
    return out


def _durable(durable: dict[str, Any]) -> list[str]:
    out = [
        "",
        "## 8. Durable decisions: settles per second",
        "",
        f"`benchmarks/durable.py`: 1, 4 and 16 worker processes, each with its own store on one shared database, "
        f"each settling {durable.get('operations_per_worker', '?')} operations of its own (propose, policy, effect: "
        "three transactions), started at one barrier; all settles over the wall time until the last worker ends. "
        "PostgreSQL is a throw-away local cluster (loopback, `fsync=off`, as in the tests).",
        "",
        "| back end | workers | settles | wall s | settles/s |",
        "|---|---:|---:|---:|---:|",
    ]
    if "error" in durable or not durable:
        out.append(f"| error | {durable.get('error', 'not measured')} | | | |")
        return out
    for backend in ("sqlite", "postgresql"):
        for row in durable.get(backend, []):
            shown = row.get("error") or f"{row['settles_per_s']:,.0f}"
            out.append(f"| {backend} | {row['workers']} | {row['settles']:,} | {row['wall_s']:.2f} | {shown} |")
    if durable.get("postgresql_skipped"):
        out.append(f"| postgresql | – | – | – | skipped: {durable['postgresql_skipped']} |")
    return out


def _fastest_peer(rows: dict, lab: dict) -> tuple[str, tuple, tuple] | None:
    """The fastest measured framework, and its CPU and wall time over ``lab``'s, paired per round (None
    when ``lab`` or every peer is unmeasured)."""
    peers = [k for k in PEERS if "cpu_rounds" in rows.get(k, {})]
    if "cpu_rounds" not in lab or not peers:
        return None
    fastest = min(peers, key=lambda k: rows[k]["cpu_us"])
    return (
        fastest,
        paired_ratios(rows[fastest]["cpu_rounds"], lab["cpu_rounds"]),
        paired_ratios(rows[fastest]["wall_rounds"], lab["wall_rounds"]),
    )


def _floor_targets(rows, paired) -> list[str]:
    """Issue 21's headline: a labkit ``complete`` run against the reference floor, paired in one process."""
    out = []
    shown = []
    for key, label in (("floor_harness", "harness"), ("floor_simple", "simple")):
        p = paired.get(key)
        if p:
            shown.append((label, p))
    if not shown:
        return ["- labkit `complete` ≤ 1.5× the reference floor: not measured."]
    worst_cpu = max(p["ratio"] for _, p in shown)
    worst_wall = max(p["wall_ratio"] for _, p in shown)
    figures = "; ".join(
        f"{label} {_range((p['ratio'], *p['range']))} CPU, {p['wall_ratio']:.2f}× wall" for label, p in shown
    )
    stretch = "met" if worst_cpu <= TARGET_FLOOR_STRETCH and worst_wall <= TARGET_FLOOR_STRETCH else "missed"
    out.append(
        f"- labkit `complete` ≤ {TARGET_FLOOR_RATIO:g}× the reference floor (issue 21; section 1, "
        f"`benchmarks/impls/floor.py`): {figures} — "
        f"{verdict(worst_cpu, worst_wall, lambda x: x <= TARGET_FLOOR_RATIO)} "
        f"(stretch ≤ {TARGET_FLOOR_STRETCH:g}×: {stretch})."
    )
    lab = rows.get("labkit-harness", {})
    if (peer := _fastest_peer(rows, lab)) is not None:
        fastest, c, w = peer
        out.append(
            f"- and still ≥ {TARGET_PEER_FACTOR_21:g}× faster than the fastest framework ({fastest}): "
            f"{_range(c, 1)} CPU, {w[0]:.1f}× wall — "
            f"{verdict(c[0], w[0], lambda x: x >= TARGET_PEER_FACTOR_21)}."
        )
    return out


def _floor_section(rows, paired, floor) -> list[str]:
    """labkit and the peers against the reference floor, and where labkit's extra time goes (cProfile)."""
    out = [
        "### Against the reference floor (issue 21)",
        "",
        "The reference floor (`benchmarks/impls/floor.py`) is the smallest honest guarded loop written by hand "
        "without labkit's core: the same four limits, the same locked reservation before every body, a pydantic "
        "argument model per tool (built once per tool, not per run), the control events labkit records in its "
        "order, the run in its own asyncio task with the deadline and abandonment, typed (pydantic) messages and "
        "the same final status. It reads only scenario data from labkit (the script, the tools' bodies, the "
        "limits). `tests/test_reference_floor.py` holds it to labkit's outcomes (status, events, body entries, "
        "tool results) on every seed scenario, which between them reach every stop reason, and on generated "
        "scripts, so it cannot be fast by skipping a check. Paired in one process (`python -m benchmarks.paired`, "
        "blocks of runs alternating, ratio per round, median and range):",
        "",
        "| comparison | A/B, CPU (range) | A/B, wall | A CPU µs | B CPU µs | A wall µs | B wall µs |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for key, label in (
        ("floor_harness", "labkit harness `complete` / floor `complete`"),
        ("floor_simple", "labkit simple / floor"),
    ):
        p = paired.get(key)
        if not p:
            out.append(f"| {label} | {paired.get('error', 'not measured')} | | | | | |")
            continue
        out.append(
            f"| {label} | {_range((p['ratio'], *p['range']))} | {p['wall_ratio']:.2f} | {p['a_cpu_us']:.1f} | "
            f"{p['b_cpu_us']:.1f} | {p['a_wall_us']:.1f} | {p['b_wall_us']:.1f} |"
        )
    base = rows.get("floor", {})
    if "cpu_rounds" in base:
        out += [
            "",
            "Beside the peers, each implementation of the table above against the floor's row (fresh processes, "
            "paired round by round):",
            "",
            "| implementation | × floor, CPU (range) | × floor, wall |",
            "|---|---|---:|",
        ]
        for key, row in rows.items():
            if key in ("floor", "bare", "bare-sync") or "cpu_rounds" not in row or row.get("style") != "async":
                continue
            c = paired_ratios(row["cpu_rounds"], base["cpu_rounds"])
            w = paired_ratios(row["wall_rounds"], base["wall_rounds"])
            out.append(f"| {row['name']} | {_range(c, 2)} | {_fmt(w[0] if w else None, 2)} |")
    out += _floor_profile(floor)
    out.append("")
    return out


def _floor_profile(floor) -> list[str]:
    if "labkit" not in floor:
        return ["", f"Where the time goes: {floor.get('error', 'not measured')}."]
    lab, ref = floor["labkit"], floor["floor"]
    out = [
        "",
        f"Where labkit's extra time goes (`python -m benchmarks.floor_profile`: {floor['runs']:,} runs of each under "
        "cProfile, each function's own time given to the file it is written in, pydantic-core's compiled "
        "validators to pydantic, any other builtin to the files that called it; each side scaled to its CPU µs per "
        "run measured without the profiler in the same process: estimates, which overstate code made of many small "
        "calls). µs per run:",
        "",
        "| where | labkit harness | floor | labkit − floor |",
        "|---|---:|---:|---:|",
    ]
    names = sorted(set(lab["layers_us"]) | set(ref["layers_us"]), key=lambda k: -lab["layers_us"].get(k, 0.0))
    for name in names:
        a, b = lab["layers_us"].get(name, 0.0), ref["layers_us"].get(name, 0.0)
        out.append(f"| {name} | {a:.1f} | {b:.1f} | {a - b:+.1f} |")
    out.append(
        f"| **total (measured)** | {lab['cpu_us']:.1f} | {ref['cpu_us']:.1f} | {lab['cpu_us'] - ref['cpu_us']:+.1f} |"
    )
    out += ["", "The same run by stage (cumulative: the function and all it calls; µs per run):", ""]
    out += ["| stage | labkit harness | floor |", "|---|---:|---:|"]
    elsewhere = {
        "of which the run's tools": "built once per tool",
        "the origin kept beside the outcome": "none",
    }
    for name, value in lab["stages_us"].items():
        mine = ref["stages_us"].get(name)
        out.append(f"| {name} | {value:.1f} | {_fmt(mine) if mine is not None else elsewhere.get(name, '–')} |")
    own = sum(v - ref["layers_us"].get(k, 0.0) for k, v in lab["layers_us"].items() if k.startswith("labkit/"))
    own -= sum(v for k, v in ref["layers_us"].items() if k.startswith("benchmarks/"))
    rest = ", ".join(
        f"{name} {lab['layers_us'].get(name, 0.0) - ref['layers_us'].get(name, 0.0):+.1f} µs"
        for name in ("asyncio", "pydantic", "other (standard library)")
    )
    out += [
        "",
        f"Of the {lab['cpu_us'] - ref['cpu_us']:+.1f} µs per run, labkit's own code (its files, less the floor's "
        f"own code and the scenario data both read) accounts for {own:+.1f} µs; the libraries under both: {rest}. "
        + _stage_differences(lab, ref)
        + FLOOR_WHY,
    ]
    return out


def _stage_differences(lab, ref) -> str:
    """labkit − floor per stage, from the figures as the table shows them (one decimal), and their sum."""
    shown = {
        name: round(value, 1) - round(ref["stages_us"].get(name, 0.0), 1)
        for name, value in lab["stages_us"].items()
        if not name.startswith("of which")
    }
    parts = ", ".join(f"{name.split(':')[0].split(' (')[0]} {diff:+.1f} µs" for name, diff in shown.items())
    total = round(lab["cpu_us"], 1) - round(ref["cpu_us"], 1)
    return (
        f"By stage, labkit − floor: {parts}; together {sum(shown.values()):+.1f} µs against the {total:+.1f} µs "
        "measured (the profile overstates code made of many small calls, and the loop's own lines between the "
        "stages are not in them). "
    )


FLOOR_WHY = (
    "In those stages, `prepare` still builds per run what the floor builds once per tool or not at all: the run's "
    "scope (its door checks pass a frozen `Limits` and a `frozenset` of grants once per object), the run's two "
    "guarded tools (each binds the shape its declared `Tool` read once), a scripted transport that checks its "
    "script again, the agent's argument checks, its tool specs and its middleware pipeline; the floor's start "
    "makes a scope, a host state and a dict of its tools. Each model call builds a pydantic `ChatRequest` (the "
    "floor: a named tuple) and goes through the counting client, which asks the scripted transport for the whole "
    "reply (`ScriptedTransport.complete`: no async generator, no chunk); the floor's is one coroutine that "
    "returns the message. Each tool call goes through the middleware pipeline, `ainvoke`, the JSON decoded with "
    "exact numbers and then validated, labkit's canonical signature, the rules as functions of an `Attempt` "
    "record and the check after the body; the floor takes the same steps as plain method calls and lets pydantic "
    "read the JSON. Around the loop, labkit checks the agent and the prompt, enters the scope, copies a context "
    "for the loop's task and, at the finish, builds a pydantic `RunOutcome` with `ControlEvent` models and the "
    "usage, and keeps the run's origin beside it; the floor makes its task and its timer and returns a named "
    "tuple of plain event tuples."
)


def _targets(rows, guard, paired, cold, notebooks) -> list[str]:
    """One line per target: the CPU figure (paired median and range), the wall figure, and a verdict on both."""
    out = []
    lab, bare = rows.get("labkit-harness", {}), rows.get("bare", {})
    if "cpu_rounds" in lab and "cpu_rounds" in bare:
        c = paired_ratios(lab["cpu_rounds"], bare["cpu_rounds"])
        w = paired_ratios(lab["wall_rounds"], bare["wall_rounds"])
        out.append(
            f"- labkit `complete` (harness, awaited) ≤ {TARGET_BARE_RATIO:g}× the bare loop: {_range(c, 1)} CPU, "
            f"{w[0]:.1f}× wall — {verdict(c[0], w[0], lambda x: x <= TARGET_BARE_RATIO)}."
        )
    peers = [k for k in PEERS if "cpu_rounds" in rows.get(k, {})]
    if (peer := _fastest_peer(rows, lab)) is not None:
        fastest, c, w = peer
        out.append(
            f"- ≥ {TARGET_PEER_FACTOR:g}× faster than the fastest framework ({fastest}): {_range(c, 1)} CPU, "
            f"{w[0]:.1f}× wall — {verdict(c[0], w[0], lambda x: x >= TARGET_PEER_FACTOR)}."
        )
    elif not peers:
        out.append(
            f"- ≥ {TARGET_PEER_FACTOR:g}× faster than the fastest framework: not measured (peer frameworks not "
            f"installed)."
        )
    if "cpu_async_overhead" in guard:
        worst_cpu = max(guard["cpu_async_overhead"], guard["cpu_sync_overhead"])
        worst_wall = max(guard["async_overhead"], guard["sync_overhead"])
        out.append(
            f"- guard overhead per tool call ≤ {TARGET_GUARD_US:g} µs: CPU {guard['cpu_async_overhead']:.1f} µs async "
            f"body, {guard['cpu_sync_overhead']:.1f} µs sync body; wall {guard['async_overhead']:.1f} / "
            f"{guard['sync_overhead']:.1f} µs — {verdict(worst_cpu, worst_wall, lambda x: x <= TARGET_GUARD_US)}."
        )
    p = paired.get("sync_run")
    if p:
        out.append(
            f"- sync `labkit.run` ≤ {TARGET_SYNC_RUN_RATIO:g}× `await arun()`: {_range((p['ratio'], *p['range']))} "
            f"CPU, "
            f"{p['wall_ratio']:.2f}× wall — "
            f"{verdict(p['ratio'], p['wall_ratio'], lambda x: x <= TARGET_SYNC_RUN_RATIO)}."
        )
    p = paired.get("sync_run_in_a_loop")
    if p:
        out.append(
            "- (no target) sync `labkit.run` inside a running loop, as in a notebook cell: "
            f"{_range((p['ratio'], *p['range']))} "
            f"`await arun()` in CPU time, {p['wall_ratio']:.2f}× wall."
        )
    p = paired.get("sync_body_handoff")
    if p:
        out.append(
            f"- a sync body inside a run ≤ {TARGET_SYNC_BODY_RATIO:g}× the thread hand-off floor measured in the same "
            f"run (`sync_body_handoff`, paired): {_range((p['ratio'], *p['range']))} CPU, {p['wall_ratio']:.2f}× wall "
            f"({p['a_cpu_us']:.1f} against {p['b_cpu_us']:.1f} µs CPU per call) — "
            f"{verdict(p['ratio'], p['wall_ratio'], lambda x: x <= TARGET_SYNC_BODY_RATIO)} "
            "(stuck-body tests pass: tests/test_workers.py)."
        )
    p = paired.get("closure_tools")
    if p:
        out.append(
            f"- closure-body tools ≤ {TARGET_CLOSURE_RATIO:g}× module-level bodies per run: "
            f"{_range((p['ratio'], *p['range']))} CPU, "
            f"{p['wall_ratio']:.2f}× wall — "
            f"{verdict(p['ratio'], p['wall_ratio'], lambda x: x <= TARGET_CLOSURE_RATIO)}."
        )
    g = paired.get("growth")
    if g:
        held = list(g["held_kib"].values())
        flat = held[-1] <= max(4 * held[0], 64.0)  # held memory does not grow with the number of runs
        out.append(
            f"- retained memory after {g['runs']:,} sequential runs flat: {held[0]:,.1f} KiB held after the first "
            f"1 %, {held[-1]:,.1f} KiB after all — {'met' if flat else 'missed'} (memory has one clock)."
        )
    if "cpu_ratio_console_to_floor_with_a_model" in cold:
        c = (cold["cpu_ratio_console_to_floor_with_a_model"], *cold["cpu_ratio_console_to_floor_with_a_model_range"])
        w = cold["wall_ratio_console_to_floor_with_a_model"]
        older = verdict(
            cold["cpu_ratio_console_to_floor"], cold["wall_ratio_console_to_floor"], lambda x: x <= TARGET_COLD_RATIO
        )
        out.append(
            f'- `labkit run complete` ≤ {TARGET_COLD_MODEL_RATIO:g}× "floor + one model class": {_range(c)} CPU, '
            f"{w:.2f}× wall — {verdict(c[0], w, lambda x: x <= TARGET_COLD_MODEL_RATIO)}. (The older target, "
            f"≤ {TARGET_COLD_RATIO:g}× `import asyncio, pydantic`: {cold['cpu_ratio_console_to_floor']:.2f}× CPU, "
            f"{cold['wall_ratio_console_to_floor']:.2f}× wall — "
            f"{older}: "
            "the first pydantic model class alone costs about as much again as that floor.)"
        )
    if notebooks.get("parallel_s") is not None:
        best = min(notebooks["parallel_s"], notebooks["serial_s"])
        out.append(
            f"- workbook verification under {TARGET_NOTEBOOKS_S:g} s: **{best:.1f} s** wall "
            f"({'met' if best <= TARGET_NOTEBOOKS_S else 'missed'}; {len(notebooks['notebooks'])} notebooks)."
        )
    return out


HARDENING = (
    "Hardening (issue 11) took some of that back for exactness: measured afterwards, paired fresh processes, "
    "`prepare` + `arun` of `complete` went from ~66-74 µs to ~105-113 µs of CPU (×1.6) at the merge of the "
    "hardened core. Where it went, per run: control events built anew instead of shared (7 models, ~8 µs); the "
    "run's loop in a task of its own, so the deadline can abandon a cleanup that ignores cancellation (a future, a "
    "context, a task and two more event-loop turns, ~7 µs); a body's shape read from what it is made of instead "
    "of a per-function cache that kept runs alive (~5 µs for two tools); limits and capabilities checked at the "
    "scope's door (~2.3 µs); the guard asking its rules in their documented order and checking again after a body "
    "(~1.3 µs for two calls); argument checks of the agents (~1 µs). Issue 13 recovered part of it (below); the "
    "task, the shape key and the door checks are the behaviour itself and stay."
)

WHY = [
    "Earlier passes (one commit each): the tools' JSON Schemas were regenerated on every run; a cancelled deadline "
    "timer kept every finished run alive until the loop iterated again; signatures and keyword arguments went through "
    "`model_dump`; every control event was validated anew; messages and requests were rebuilt per run. A complete "
    "run went from ~650 µs to ~65-75 µs of CPU (`prepare` included).",
    "",
    HARDENING,
    "",
    "Issue 13 (the gains below were measured before and after each change, paired and interleaved in CPU "
    "time, outside this invocation; the commit messages carry them): the sync `labkit.run` keeps one event loop per "
    "thread (an `asyncio.Runner` held open, a fresh context per run, leftover tasks cancelled after it), and swaps "
    "the Ctrl+C handler without the `signal` module's enum conversion, which formatted the task's repr on every "
    "run: measured against the previous new-loop-per-run path, ×0.41 (0.32–0.53) in CPU time. Called inside a "
    "running loop (a notebook cell), the run goes to a reused worker thread with its own kept loop instead of a new "
    "thread and a new loop: ×0.30 (0.24–0.64), 470 → 140 µs of CPU per run. A sync body awaited inside a run goes "
    "to a pool of daemon worker threads in which a stuck worker is never idle again (so it holds no other call, "
    "run, or the interpreter's exit): ×0.36 (0.26–0.89) of a thread per call in CPU time. Argument models are keyed "
    "by what they are made of, not by the body function, so tools whose bodies are closures made per run reuse "
    "them (7.5× → 1.0× module-level bodies). A finished run is no reference cycle: the scope lets go of its tools "
    "when the run ends, and the run of its loop's task (whose exception, after a provider failure, held the run's "
    "frame): ×0.84 (0.84–0.85) CPU per run with 10,000 runs live in one loop. The core builds its events, requests "
    "and outcomes with their constructors (the models' validator called directly, and the enum's private value "
    "map, were removed: each bought under 5 % of a run, about 3 %, 1.5 % and 0.5 %; together ×1.055); events, "
    "frozen values that run after run repeats, are shared between runs through a cache (×0.90-0.93 of a run, over "
    "the 5 % bar), and a body's shape is looked up with less work (×0.955 of `prepare`).",
    "",
    "Issue 21, toward a run at most 1.5× the reference floor (before/after measured outside this invocation: "
    "each commit's tree against the floor, `python -m benchmarks.paired --only floor_harness floor_simple "
    "--rounds 21`, the trees interleaved over four rounds on a loaded machine; medians of the four, harness / "
    "simple): at the start 1.83× / 1.84×. A scripted transport answers a non-streaming call whole "
    "(`ScriptedTransport.complete`, used by the counting client when a transport class has it; a subclass that "
    "changes `send` is still answered through it), so a model call makes no async generator, no chunk and no "
    "assembly: 1.73× / 1.68×. A declared `Tool` reads its body once, when it is declared, and each run binds "
    "that reading to its fresh state: 1.59× / 1.52× (the trick off / on, `python -m benchmarks.tricks`, "
    "`declared_tools`: ×1.08–1.10). A `Limits` and a `frozenset` of grants, which cannot change, pass the "
    "scope's door checks once per object (`labkit/core/_machinery/checked.py`): 1.45× / 1.48× (`door_checks_once`: "
    "×1.04–1.08). A run's `Origin` is made when `origin_of` asks, and the counting client reads a transport's "
    "`retries` at its first failure: 1.44× / 1.44×. What is left over the floor is spread over the lesson's own "
    "steps, none over 5 % of a run: a pydantic `ChatRequest` per model call (~1.5 µs each; `model_construct` is "
    "slower), the agent's argument checks, specs and pipeline (~3 µs), the scope's own start and finish (the "
    "loop's task in a context that knows its scope, the final events and usage, ~4 µs), a validated `RunOutcome` "
    "(~3 µs), and per tool call the observing middleware, the exact-number JSON decoding and the rules as "
    "functions of an `Attempt` (~2 µs each call).",
    "",
    "Issue 21's guard, sync-body and console targets (before/after in instructions, from callgrind, which "
    "a loaded machine does not disturb: 2,000 calls of `benchmarks.guard`'s in one process, every thread "
    "counted for a sync body; CPU time follows at roughly 8,000 instructions per µs): a cancellation check "
    "reads one `Enum` member instead of two (reading one costs ~1,000 instructions in Python 3.11, through "
    "`EnumType.__getattr__`), a plain result (a str, a number, a dict...) answers the awaitable and generator "
    "checks at once, the reservation reuses the attempt's signature count, and step 4's re-check reads the "
    "token and the deadline without the lock when nothing happened (`labkit/core/_machinery/unlocked.py`): "
    "the guard's own instructions per call went from 34,700 to 26,200 (async body) and from 37,100 to 28,600 "
    "(sync body), -24 %. A sync body's worker future is awaited by the caller, with no coroutine of "
    "`run_body`'s or `bodies`' own: 136,300 to 128,200 instructions per sync body in a run, against 61,400 "
    "for the bare hand-off.",
    "",
    "A later pass, counted the same way (5,000 calls): a call's keyword arguments are the bound model's own "
    "fields, read and never changed, and are no longer copied: -350 of ~52,500 instructions per guarded call, "
    "async and sync. Each piece of the guard alone (5,000 calls of it, less an empty call): the admission "
    "~15,700 instructions (its lock ~2,000, the check before the rules ~2,300, the `Attempt` ~4,200, the three "
    "rules ~4,500, the reservation ~2,800), the signature and keyword arguments ~6,600, step 4's re-check "
    "~2,100, the result checks ~1,300. A sync `invoke` from plain code also asks whether a loop runs in its "
    "thread: `asyncio.get_running_loop()`, which raises when none does, costs ~3,100 instructions, the private "
    "`asyncio._get_running_loop()` ~400; 2,700 of ~54,600 per call is 4.9 %, under the project's 5 % bar for "
    "a private lookup, so it is not taken.",
    "",
    "What remains: the guard's overhead is now about the rules themselves: the lock taken for the admission "
    "(~2,000 instructions), the frozen `Attempt` record (~4,000) and the three rules asked in order (~4,500), "
    "the canonical signature (~6,500) and the locked reservation; what is left of glue is a coroutine layer "
    "and a few calls. A sync body in a run adds to the bare hand-off its binding and its guard (~8 µs of "
    "the ~30 µs hand-off: alone they put it over 1.25×) and the pool's own bookkeeping (a context copy, a "
    "job queue, the idle count); the hand-off's cost itself is two thread wake-ups and asyncio's wake-up of its "
    "loop, which depend on where the scheduler puts the threads (one CPU: 26 µs, two: ~50-70 µs). The console's "
    'cold start beyond "floor + one model class" is labkit\'s own ten pydantic model classes (~6-12 ms, '
    "every one used by a run but `ChatChunk`, under 1 ms), `argparse` with `gettext` (~3 % of the console's "
    "CPU), `runpy` for `python -m`, and the interpreter's exit with more modules loaded; in instructions the "
    "console is only ~1.12× that floor, so the rest of the CPU ratio is cache and memory work, not code that "
    "could be deferred; nothing unneeded is imported (tests/test_coldstart.py). With every run kept alive, "
    "the garbage collector's full passes walk every live run (CPython starts one when long-lived objects have "
    "grown by a quarter), about 7 passes for 10,000 live runs: see section 4.",
]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--skip-notebooks", action="store_true")
    parser.add_argument("--notebooks-dir", default="notebooks")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--output", default="docs/benchmarks.md")
    parser.add_argument(
        "--only-labkit", action="store_true", help="skip the peer frameworks (they are slow to install)"
    )
    parser.add_argument("--note", default="", help="a line added to the page's header")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.repeats = 1, 3
    command = (
        "python -m benchmarks"
        + (" --quick" if args.quick else "")
        + (f" --rounds {args.rounds}" if args.rounds != 3 and not args.quick else "")
        + (" --skip-notebooks" if args.skip_notebooks else "")
        + (" --only-labkit" if args.only_labkit else "")
    )
    started = time.perf_counter()
    machine = _machine()
    print("comparison ...", file=sys.stderr, flush=True)
    rows = compare(args.rounds, args.repeats, skip=PEERS if args.only_labkit else ())
    print("guard overhead ...", file=sys.stderr, flush=True)
    guard = _json_of([sys.executable, "-m", "benchmarks.guard"])
    print("paired (sync run, sync body, closure tools, growth) ...", file=sys.stderr, flush=True)
    paired_cmd = [sys.executable, "-m", "benchmarks.paired"] + (
        ["--rounds", "3", "--growth", "10000"] if args.quick else []
    )
    paired = _json_of(paired_cmd, timeout=3600)
    paired.setdefault("rounds", 3 if args.quick else 9)
    print("where labkit's time goes beyond the reference floor (cProfile) ...", file=sys.stderr, flush=True)
    floor = _json_of([sys.executable, "-m", "benchmarks.floor_profile"] + (["--runs", "300"] if args.quick else []))
    print("scale ...", file=sys.stderr, flush=True)
    scale_cmd = [sys.executable, "-m", "benchmarks.scale"] + (
        ["--runs", "2000", "--calls", "300"] if args.quick else []
    )
    scale = _json_of(scale_cmd)
    print("cold start ...", file=sys.stderr, flush=True)
    cold = _json_of([sys.executable, "-m", "benchmarks.coldstart"] + (["--repeats", "5"] if args.quick else []))
    if args.skip_notebooks:
        notebooks: dict[str, Any] = {"skipped": True}
    else:
        print("notebooks ...", file=sys.stderr, flush=True)
        notebooks = _json_of([sys.executable, "-m", "benchmarks.notebooks", "--dir", args.notebooks_dir])
    print("guard checker ...", file=sys.stderr, flush=True)
    capstone = _json_of([sys.executable, "-m", "benchmarks.capstone"] + (["--repeats", "2"] if args.quick else []))
    print("durable decisions ...", file=sys.stderr, flush=True)
    durable = _json_of([sys.executable, "-m", "benchmarks.durable"] + (["--operations", "50"] if args.quick else []))
    note = args.note or ""
    page = render(
        rows,
        guard,
        paired,
        scale,
        cold,
        notebooks,
        _versions(),
        machine,
        command,
        time.perf_counter() - started,
        note,
        capstone,
        durable,
        floor,
    )
    print(page)
    if not args.no_write:
        path = Path(args.output)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page)
        print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
