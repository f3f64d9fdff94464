"""The ``labkit`` command's entry point, kept outside the package on purpose.

Importing anything from ``labkit`` first runs ``labkit/__init__.py``, which
imports pydantic and the core: a Ctrl+C during those imports would end the
command with a traceback. This module imports only ``sys``, so the
interrupt is caught from the command's first instruction: it exits 130
with one line on stderr, as a Ctrl+C during the run does (SPEC §4).
"""

import sys

EXIT_CANCELLED = 130  # labkit.EXIT_CANCELLED, which cannot be imported before labkit is


def main() -> int:
    """Import the console and run it; a Ctrl+C at any point exits 130 quietly."""
    try:
        from labkit.cli import main as console

        return console()
    except KeyboardInterrupt:  # during the imports; the console handles it from then on
        try:  # noqa: SIM105 - contextlib.suppress would be one more import before the console starts
            print("cancelled by the caller", file=sys.stderr, flush=True)
        except (OSError, ValueError):
            pass
        return EXIT_CANCELLED
