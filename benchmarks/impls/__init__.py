"""One module per implementation of the "complete" run.

Each module defines ``NAME`` (table label), ``STYLE`` (``"async"``: awaited
inside one running event loop; ``"sync"``: called from plain code), ``IMPORTS``
(what a user imports, for the import-time column) and ``make()``, which
returns a zero-argument callable doing one full run and returning the
verified-able triple ``(entries, completed, model_calls, text)``.
"""

IMPLS = {
    "bare": "benchmarks.impls.bare",
    "bare-sync": "benchmarks.impls.bare_sync",
    "floor": "benchmarks.impls.floor",
    "labkit-harness": "benchmarks.impls.labkit_harness",
    "labkit-simple": "benchmarks.impls.labkit_simple",
    "labkit-sync": "benchmarks.impls.labkit_sync",
    "agent-framework": "benchmarks.impls.agent_framework",
    "agent-framework+labkit": "benchmarks.impls.labkit_maf",
    "pydantic-ai": "benchmarks.impls.pydantic_ai",
    "pydantic-ai+labkit": "benchmarks.impls.labkit_pydantic_ai",
    "openai-agents": "benchmarks.impls.openai_agents",
    "openai-agents+labkit": "benchmarks.impls.labkit_openai_agents",
    "langgraph": "benchmarks.impls.langgraph",
}
"""Implementation key -> module, in table order."""
