"""The spans of one run as a pandas table: which span, under which, with which counts.

Teaching helper: importing this module imports pandas; running a traced
scenario imports OpenTelemetry's SDK (``pip install 'labkit[telemetry]'``).
The spans are collected by a private tracer provider, so nothing is sent
anywhere and the global OpenTelemetry set-up is left alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from ..core.errors import InputError, UserError
from ..loops.outcome import RunOutcome
from ..loops.runner import Setup, prepare, run
from ..loops.telemetry import instrument
from . import _inputs
from .frames import BLANK

__all__ = ["SPAN_COLUMNS", "run_traced", "spans_frame"]

SPAN_COLUMNS = ["span", "parent", "operation", "tool call id", "outcome", "model calls", "tool calls", "error"]
"""The columns of :func:`spans_frame` (``start ms`` and ``duration ms`` are added with ``timings=True``)."""


def run_traced(scenario: Any, *, timings: bool = False, **options: Any) -> tuple[RunOutcome, pd.DataFrame]:
    """Run a scenario with spans on and return its outcome and its spans table.

    Args:
        scenario: a scenario name or :class:`~labkit.Scenario`, or a :class:`~labkit.Setup`
            from :func:`labkit.prepare` that has not run yet (then give no ``options``).
        timings: add ``start ms`` and ``duration ms`` columns (they vary run to run).
        **options: as :func:`labkit.prepare` (``agent``, ``limits``, ``transport``, ``stream``).

    Returns:
        ``(outcome, frame)``; see :func:`spans_frame`.

    Raises:
        UserError: OpenTelemetry's SDK is not installed; options given with a Setup.
        UnknownScenarioError: no such scenario.
        ScopeStateError: a Setup that already ran.
    """
    if isinstance(scenario, Setup) and options:
        raise UserError("a prepared Setup already has its agent, limits and transport; pass them to prepare()")
    try:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    except ImportError:
        raise UserError("spans need OpenTelemetry's SDK: pip install 'labkit[telemetry]'") from None
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    try:
        prepared = scenario if isinstance(scenario, Setup) else prepare(scenario, **options)
        setup = instrument(prepared, tracer=provider.get_tracer("labkit"))
        outcome = run(setup)
    finally:
        provider.shutdown()
    return outcome, spans_frame(exporter.get_finished_spans(), timings=timings)


def spans_frame(spans: Iterable[Any], *, timings: bool = False) -> pd.DataFrame:
    """Finished OpenTelemetry spans as a table, in start order, indexed from 1.

    Args:
        spans: ``ReadableSpan`` objects, e.g. from an ``InMemorySpanExporter``.
        timings: add ``start ms`` (from the first span's start) and ``duration ms``.

    Returns:
        Columns :data:`SPAN_COLUMNS`: the span name, its parent's name (empty
        for the run), ``gen_ai.operation.name``, the tool call id, the outcome
        (run status, tool outcome, or ``ok`` for a model call), the model
        and tool counters the span carries (a blank cell, ``""``, where the span carries
        none: a chat span has no tool counter, a tool span no model counter; never
        ``<NA>``), and ``error.type``. Span ids are
        left out: they are random. No span, no row.

    Raises:
        InputError: ``spans`` is not an iterable of finished spans (e.g. a RunOutcome:
            use :func:`run_traced` to get both).
    """
    if isinstance(spans, (str, bytes, RunOutcome)) or not isinstance(spans, Iterable):
        raise InputError(
            f"spans_frame needs finished OpenTelemetry spans, not {_inputs.what(spans)}; run_traced gives both"
        )
    spans = list(spans)
    odd = next((s for s in spans if not all(hasattr(s, a) for a in ("context", "start_time", "attributes"))), None)
    if odd is not None:
        raise InputError(f"spans_frame needs finished OpenTelemetry spans, not a {_inputs.what(odd)} among them")
    ordered = sorted(spans, key=lambda s: (s.start_time or 0, s.end_time or 0))
    names = {s.context.span_id: s.name for s in ordered}
    first = ordered[0].start_time if ordered else 0
    rows = []
    for span in ordered:
        a = dict(span.attributes or {})
        operation = a.get("gen_ai.operation.name", "")
        if operation == "invoke_agent":
            outcome = a.get("labkit.status", "")
            model_calls = a.get("labkit.model_calls")
        elif operation == "execute_tool":
            outcome = a.get("labkit.tool.outcome", "")
            model_calls = None
        else:
            outcome = "ok" if "error.type" not in a else "failed"
            model_calls = a.get("labkit.model_call")
        row = {
            "span": span.name,
            "parent": names.get(span.parent.span_id, "") if span.parent is not None else "",
            "operation": operation,
            "tool call id": a.get("gen_ai.tool.call.id", ""),
            "outcome": outcome,
            "model calls": model_calls,
            "tool calls": a.get("labkit.tool_calls"),
            "error": a.get("error.type", ""),
        }
        if timings:
            row["start ms"] = round(((span.start_time or 0) - first) / 1e6, 3)
            row["duration ms"] = round(((span.end_time or 0) - (span.start_time or 0)) / 1e6, 3)
        rows.append(row)
    columns = SPAN_COLUMNS + (["start ms", "duration ms"] if timings else [])
    frame = pd.DataFrame(rows, columns=columns)
    for column in ("model calls", "tool calls"):  # a counter this span does not carry: blank, never <NA>
        values = [row[column] for row in rows]
        whole = all(isinstance(value, int) for value in values)
        frame[column] = pd.Series(
            [BLANK if value is None else value for value in values],
            index=frame.index,
            dtype="int64" if whole else object,
        )
    frame.index = pd.RangeIndex(1, len(frame) + 1, name="step")
    return frame
