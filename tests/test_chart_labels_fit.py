"""Every label the counters chart can draw lies inside its panel and the figure, in both languages.

The limits and the scripts are generated (each rule deciding, a ghost bar near the panel's edge, counters
at zero); the oracle is matplotlib's own renderer: each text's bounding box, measured after drawing.
"""

from __future__ import annotations

import functools

import matplotlib
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import labkit
from labkit.teaching import i18n
from labkit.teaching.charts import counters_chart

matplotlib.use("Agg")

READ = labkit.Call("read_ticket", {"input": 42})
SCRIPTS = {
    "rereader": [READ, READ, labkit.Call("finish_review", {"input": 42}), "Review finished."],
    "reads": [READ, labkit.Call("read_ticket", {"input": 7}), labkit.Call("read_ticket", {"input": 8}), "done"],
}


@functools.cache
def _run(script: str, tool_calls: int, repetitions: int, model_calls: int) -> labkit.RunOutcome:
    limits = labkit.Limits(tool_calls=tool_calls, repetitions=repetitions, model_calls=model_calls)
    return labkit.run(labkit.Scenario("chart", "a generated run", SCRIPTS[script], limits))


def _outside(fig) -> list[str]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)  # a closed figure has lost its backend's canvas: draw it as the notebook does
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    frame = fig.bbox
    problems = []
    for text in fig.findobj(matplotlib.text.Text):
        if not text.get_visible() or not text.get_text().strip():
            continue
        box = text.get_window_extent(renderer)
        if box.x0 < frame.x0 - 0.5 or box.x1 > frame.x1 + 0.5 or box.y0 < frame.y0 - 0.5 or box.y1 > frame.y1 + 0.5:
            problems.append(f"outside the figure: {text.get_text()!r}")
        if text.get_gid() and text.axes is not None and box.x1 > text.axes.get_window_extent(renderer).x1 + 0.5:
            problems.append(f"past its panel: {text.get_text()!r}")
    return problems


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(sorted(SCRIPTS)),
    st.tuples(st.integers(0, 4), st.integers(0, 3), st.integers(0, 4)),
    st.sampled_from(["en", "fr"]),
    st.integers(1, 3),
)
def test_every_counter_label_lies_inside_its_panel_and_the_figure(script, limits, language, panels):
    run = _run(script, *limits)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(i18n.ENV, language)
        figure = counters_chart(run) if panels == 1 else counters_chart({str(i): run for i in range(panels)})
        labels = [t.get_gid() for ax in figure.axes for t in ax.texts if t.get_gid()]
        assert labels, "every chart labels its bars"
        assert _outside(figure) == [], (language, limits, run.status)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.text("abcdefgh,!", min_size=1, max_size=12), min_size=1, max_size=20).map(" ".join))
def test_an_outcomes_table_shows_every_text_whole(text):
    """pandas cut a text past 50 characters ("Review finished. Nothing was written outside h..."): never here."""
    from labkit.loops.outcome import RunOutcome, RunStatus
    from labkit.teaching.frames import outcomes_frame

    ran = labkit.run("complete")
    run = RunOutcome(
        status=RunStatus.COMPLETED, text=text, events=ran.events, transcript=ran.transcript, limits=ran.limits
    )
    table = outcomes_frame({"a": run, "b": ran})
    assert " ".join(text.split()) in " ".join(repr(table).split())
    html = table._repr_html_()
    assert html is not None and text.strip().split()[-1] in html and "..." not in html.replace(text, "")
    assert " ".join(text.split()) in " ".join(table.to_string().split())
    assert type(table.head(1)).__name__ == "WholeText"  # a slice keeps the whole texts
