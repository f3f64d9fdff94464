"""Old path of :mod:`labkit.core._machinery.sync`, kept for code not yet moved (``labkit/teaching/``).

The same module object, not a copy: its state (and anything a test replaces in it) is shared.
New code imports ``labkit.core._machinery.sync``.
"""

import sys

from ._machinery import sync
from ._machinery.sync import *  # noqa: F403  (the names, for type checkers)

sys.modules[__name__] = sync
