"""labkit.frames and labkit.charts with several runs side by side, and events without a run."""

import labkit
from labkit.charts import counters_chart
import pytest

from labkit.frames import canonical_frame, events_frame


def test_events_frame_side_by_side_keeps_whole_numbers():
    runs = {"simple": labkit.run("changing", agent="simple"), "harness": labkit.run("changing")}
    frame = events_frame(runs)
    assert list(frame.columns.get_level_values(0).unique()) == ["simple", "harness"]
    assert frame["simple"].equals(frame["harness"])
    assert str(frame[("simple", "count")].dtype) == "Int64"
    assert len(frame) == len(runs["simple"].events)


def test_events_frame_of_bare_events():
    scope = labkit.ExecutionScope(labkit.Limits(), {"ticket.read"})
    read, _ = labkit.ReviewTask().tools(scope)
    read.invoke({"input": 42})
    frame = events_frame(scope.events)
    assert frame.to_dict("list") == {"kind": ["ToolCall"], "name": ["read_ticket"], "count": [1]}


def test_counters_chart_draws_one_panel_per_run():
    runs = {"simple": labkit.run("budget", agent="simple"), "harness": labkit.run("budget")}
    fig = counters_chart(runs)
    assert [ax.get_title() for ax in fig.axes] == ["simple: ModelBudget", "harness: ModelBudget"]
    assert len(counters_chart(runs["simple"]).axes) == 1


def test_canonical_frame_follows_the_signature_rules():
    frame = canonical_frame(
        {
            "number": ('{"input": 42}', '{"input": 4.2e1}'),
            "keys": ('{"a": 1, "b": 2}', '{"b": 2, "a": 1}'),
            "case": ('"Login"', '"login"'),
            "bool": ("true", "1"),
        }
    )
    assert frame["same"].to_dict() == {"number": True, "keys": True, "case": False, "bool": False}
    assert frame.loc["number", "canonical left"] == '{"input":42}'
    with pytest.raises(ValueError, match="'broken'"):
        canonical_frame({"broken": ("{", "1")})
