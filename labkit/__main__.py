"""``python -m labkit ...``: the same console as the ``labkit`` command.

Python imports the package before this module runs, so a Ctrl+C during
that import is Python's own; from here on it exits 130 quietly.
"""

import sys

from .loops.outcome import EXIT_CANCELLED  # already imported with the package

try:
    from .cli import main
except KeyboardInterrupt:
    print("cancelled by the caller", file=sys.stderr)
    sys.exit(EXIT_CANCELLED)

sys.exit(main())
