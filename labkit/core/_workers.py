"""Old path of :mod:`labkit.core._machinery.workers`, kept for code not yet moved (``labkit/teaching/``).

The same module object, not a copy: its state (and anything a test replaces in it) is shared.
New code imports ``labkit.core._machinery.workers``.
"""

import sys

from ._machinery import workers
from ._machinery.workers import *  # noqa: F403  (the names, for type checkers)

sys.modules[__name__] = workers
