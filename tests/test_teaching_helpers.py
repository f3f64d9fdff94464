"""labkit.teaching.frames and labkit.teaching.charts with several runs side by side, and events without a run."""

import sqlite3

import pytest

import labkit
from labkit.durable import DecisionStore, durable_comment_tool
from labkit.teaching.charts import counters_chart
from labkit.teaching.frames import OPERATION_COLUMNS, canonical_frame, events_frame, operations_frame


def test_events_frame_side_by_side_keeps_whole_numbers():
    runs = {"simple": labkit.run("changing", agent="simple"), "harness": labkit.run("changing")}
    frame = events_frame(runs)
    assert list(frame.columns.get_level_values(0).unique()) == ["simple", "harness"]
    assert frame["simple"].equals(frame["harness"])
    assert str(frame[("simple", "count")].dtype) == "int64"  # runs of one length: whole numbers, nothing blank
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


def test_canonical_frame_can_leave_the_comparison_to_the_reader():
    pairs = {"number": ('{"input": 42}', '{"input": 4.2e1}'), "case": ('"Login"', '"login"')}
    shown, hidden = canonical_frame(pairs), canonical_frame(pairs, show_same=False)
    assert list(hidden.columns) == [column for column in shown.columns if column != "same"]
    assert hidden.equals(shown.drop(columns="same"))


def test_operations_frame_lists_each_operation_once_with_its_state(tmp_path):
    comment = {"ticket": 42, "text": "Reproduced."}
    with DecisionStore(tmp_path / "decisions.sqlite") as store:
        assert operations_frame(store).empty and list(operations_frame(store).columns) == OPERATION_COLUMNS
        for _ in range(2):  # a replay of the same request is the same operation
            scope = labkit.ExecutionScope(labkit.Limits(), {"ticket.comment"})
            durable_comment_tool(scope, store, request_id="r-1").invoke(comment)
        pending = labkit.durable.operation_id("r-2", "post_comment", comment)
        store.propose(pending, "post_comment", comment)
        frame = operations_frame(store)
        assert list(frame.index) == [1, 2] and frame.index.name == "operation"
        assert frame["state"].tolist() == ["applied", "proposed"]
        assert frame["op_id"].tolist() == [op.op_id for op in store.operations()]
        assert frame.loc[2, "op_id"] == pending and frame.loc[2, "reason"] == "" and frame.loc[2, "result"] == ""
        assert frame.loc[1, "reason"] != "" and frame.loc[1, "result"] != ""
        assert "Reproduced." not in frame.to_string()  # the proposal (arguments) stays out of the table
    with pytest.raises(sqlite3.ProgrammingError):
        operations_frame(store)  # closed by the with block


@pytest.mark.parametrize("text", ["1e400", "-1e400", "NaN", '{"input": Infinity}', "[1, 1e999]"])
def test_canonical_frame_refuses_a_non_finite_number_clearly(text):
    with pytest.raises(labkit.InputError) as info:
        canonical_frame({"huge": (text, "1")})
    message = str(info.value)
    assert message.startswith("pair 'huge': ") and repr(text) in message and "not finite" in message
    assert isinstance(info.value, ValueError)  # still a ValueError, as before


@pytest.mark.parametrize(
    ("pairs", "named"),
    [
        (1e400, "not float"),
        ([('{"a": 1}', '{"a": 1}')], "not list"),
        ({"one side": '{"a": 1}'}, "pair 'one side': give two JSON texts"),
        ({"three": ("1", "2", "3")}, "pair 'three': give two JSON texts"),
        ({"a dict": ({"a": 1}, '{"a": 1}')}, "pair 'a dict': give two JSON texts"),
    ],
)
def test_canonical_frame_refuses_what_is_not_pairs_of_json_texts(pairs, named):
    with pytest.raises(labkit.InputError, match=named):
        canonical_frame(pairs)


def test_the_recorded_live_run_is_a_complete_run_with_the_servers_own_ids():
    """The recording appendix A shows holds what a live run holds (tests/test_real_server.py checks it against
    the server itself): the events of the scripted complete run, Completed, and tool calls under the server's ids."""
    from labkit.teaching.recorded import live_complete

    recorded = live_complete()
    scripted = labkit.run("complete")
    assert [tuple(e) for e in recorded["events"]] == [(e.kind.value, e.name, e.count) for e in scripted.events]
    assert (recorded["status"], recorded["exit_code"]) == ("Completed", 0)
    calls = [call for message in recorded["transcript"] for call in message["tool_calls"]]
    assert [name for name, _, _ in calls] == ["read_ticket", "finish_review"]
    ids = [call_id for _, _, call_id in calls]
    assert len(set(ids)) == 2 and not any(i.startswith("call_") for i in ids), "the server's ids, not labkit's"
    assert recorded["transcript"][-1] == {"role": "assistant", "text": recorded["text"], "tool_calls": []}
