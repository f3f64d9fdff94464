"""One live run, recorded: what appendix A shows a learner who has no server running yet.

The recording is ``data/live_complete.json``: scenario ``complete`` run live on llama.cpp's
``llama-server`` with the tiny reviewer (``make real-model``), written by
``scripts/record_live_sample.py``. ``tests/test_real_server.py`` runs the same live run again and
checks that the recording still says what the server does (only the tool-call ids, which the
server draws at random, may differ).

Shape of the returned mapping:

* ``"recorded on"``: the server and model, in words;
* ``"status"``, ``"exit_code"``, ``"text"``: as in a :class:`~labkit.RunOutcome`;
* ``"events"``: ``[kind, name, count]`` lists, in order;
* ``"transcript"``: the messages after the system message and the prompt, each
  ``{"role": ..., "text": ... or None, "tool_calls": [[name, arguments text, call id], ...]}``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["RECORDING", "live_complete"]

RECORDING = Path(__file__).with_name("data") / "live_complete.json"


def live_complete() -> dict[str, Any]:
    """The recorded live run of ``complete`` (see the module's docstring for its shape)."""
    return json.loads(RECORDING.read_text(encoding="utf-8"))
