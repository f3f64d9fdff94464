"""Benchmarks for labkit (issue 6): the "complete" scenario in labkit, a bare loop and the peer frameworks.

Not part of the test run. ``python -m benchmarks`` (or ``make bench``) prints the
comparison table and writes ``docs/benchmarks.md``. The peers come from the
optional ``bench`` extra: ``pip install -e ".[bench]"``.
"""
