"""``python -m labkit ...``: the same console as the ``labkit`` command."""

import sys

from .cli import main

sys.exit(main())
