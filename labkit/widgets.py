"""PLACEHOLDER for the interactive panels (the real module replaces this file at merge).

Only the two signatures the chapters call exist here, each returning a plain
``ipywidgets.VBox`` that says what the real panel will do. Importing this
module imports ipywidgets (the core never does).
"""

from __future__ import annotations

import ipywidgets as widgets

__all__ = ["explorer", "predict"]


def explorer(scenario: str = "repeat", *, agent: str = "harness") -> widgets.VBox:
    """Placeholder: the scenario explorer panel for ``scenario`` run by ``agent``."""
    return widgets.VBox(
        [widgets.HTML(f"<b>Explorer</b> (placeholder): scenario <code>{scenario}</code>, agent <code>{agent}</code>")]
    )


def predict(scenario: str = "repeat", *, agent: str = "simple") -> widgets.VBox:
    """Placeholder: the prediction widget for ``scenario`` run by ``agent``."""
    return widgets.VBox(
        [widgets.HTML(f"<b>Predict</b> (placeholder): scenario <code>{scenario}</code>, agent <code>{agent}</code>")]
    )
