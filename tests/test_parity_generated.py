"""The generated differential parity test (issue 19): every loop, plain and streaming, one outcome.

Hypothesis writes scripts (replies with 0 to 3 calls, text with or without
calls, malformed JSON, unknown tools, repeated call ids, empty replies,
numbers as int, float, exponent or string, failing bodies, a provider that
is down, limits from 0 up: :mod:`parity_kit`) and each runs under labkit's
simple and harness loops and under every adapter. What can be observed
(status, ordered events, bodies entered, requests on the wire, the result
read per call id, the text; :class:`~labkit.adapters.divergences.Observable`)
must equal labkit's simple loop in the same mode, or be declared in
:data:`labkit.adapters.divergences.DIVERGENCES`. No exception may come out
of ``labkit.run`` under any loop.

``make test`` runs ``LABKIT_PARITY_EXAMPLES`` examples (default 200, derandomized);
``make fuzz`` runs 2,000 with a printed seed.
"""

from __future__ import annotations

import os

import parity_kit as kit
import pytest
from hypothesis import HealthCheck, given, settings

from labkit.adapters import RUNTIMES
from labkit.adapters.divergences import DIVERGENCES, Observable

EXAMPLES = int(os.environ.get("LABKIT_PARITY_EXAMPLES", "200"))
FUZZING = "LABKIT_PARITY_EXAMPLES" in os.environ
LOOPS = kit.installed_loops()


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not FUZZING,  # make test: the same scripts every time; make fuzz: a new seed, printed
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
@given(steps=kit.STEPS, limits=kit.LIMITS)
def test_every_loop_gives_labkit_s_outcome_or_a_declared_divergence(steps, limits) -> None:
    problems = kit.compare(steps, limits, LOOPS)
    assert not problems, f"script {steps!r} limits {limits!r}:\n" + "\n".join(problems)


DECLARED = [pytest.param(d, id=f"{d.runtime}-{d.when.value}") for d in DIVERGENCES] or [
    pytest.param(None, marks=pytest.mark.skip(reason="no divergence is declared"), id="none")
]


@pytest.mark.parametrize("item", DECLARED)
def test_each_declared_divergence_shows_on_its_example(item) -> None:
    if item.runtime not in LOOPS:
        pytest.skip(f"{RUNTIMES[item.runtime].distribution} is not installed")
    modes = [item.stream] if item.stream is not None else [False, True]
    for stream in modes:
        reference = kit.observe(item.example, item.limits, "simple", stream)
        got = kit.observe(item.example, item.limits, item.runtime, stream)
        differ = kit.differences(reference, got)
        assert differ, f"{item.runtime} no longer diverges on its example: remove the declaration"
        assert differ <= set(item.differs), f"differs in {sorted(differ - set(item.differs))} too"
        assert item.when in kit.features(item.example, item.limits)


def test_the_declarations_name_real_runtimes_and_observables() -> None:
    for item in DIVERGENCES:
        assert item.runtime in RUNTIMES, item
        assert item.differs and set(item.differs) <= set(Observable), item
        assert Observable.RAISED not in item.differs, "no framework exception may escape labkit.run"


def test_docs_adapters_md_s_generated_section_is_current() -> None:
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    result = subprocess.run(
        [sys.executable, "scripts/build_divergences.py", "--check"], cwd=root, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout
