"""The explorer panel and the prediction widget, driven from code (no browser, no kernel).

Expected statuses and counts come from the table of README.md, *The scenarios*; limit changes are
reasoned from the guard's order (docs/guarantees.md, *Limits are exact*) (tool budget before repetition).
"""

from __future__ import annotations

import asyncio
import base64
import re
import subprocess
import sys

import pytest
from support import SCENARIO_TABLE  # noqa: E402  (README.md, *The scenarios*: scenario -> status, ToolCall, ModelCall)

import labkit
from labkit import SCENARIOS, Limits, RunStatus, UnknownScenarioError, UserError
from labkit.teaching.widgets import Explorer, Prediction, explorer, predict

SMALL_DEADLINE_S = 0.1  # the slider's minimum: the deadline scenario waits this long, no more


def test_the_table_covers_every_scenario():
    assert set(SCENARIO_TABLE) == set(SCENARIOS)


def test_explorer_shows_every_scenario_and_both_agents():
    panel = explorer()
    assert isinstance(panel, Explorer)
    assert list(panel.scenario.options) == list(SCENARIOS)
    assert panel.scenario.value == "repeat" and panel.agent.value == "harness"
    assert set(panel.agent.options) == {"harness", "simple"}
    assert SCENARIOS["repeat"].summary in panel.children[1].value
    assert panel.outcome is None and "Not run yet" in panel.status_html


def test_sliders_start_from_the_scenario_limits():
    panel = explorer("budget")
    own = SCENARIOS["budget"].limits
    assert list(panel.sliders) == ["model_calls", "tool_calls", "repetitions", "deadline_s"]
    assert panel.sliders["model_calls"].value == own.model_calls == 1
    assert panel.sliders["tool_calls"].value == own.tool_calls
    assert panel.sliders["repetitions"].value == own.repetitions
    # the 120 s default is above the slider's 5 s maximum: shown, and run, as 5 s
    assert panel.sliders["deadline_s"].value == panel.sliders["deadline_s"].max == 5.0
    assert panel.limits == own.with_(deadline_s=5.0)
    assert explorer("deadline").limits.deadline_s == SCENARIOS["deadline"].limits.deadline_s == 1.0


def test_slider_ranges_are_the_lesson_ones():
    sliders = explorer().sliders
    assert [(s.min, s.max) for s in sliders.values()] == [(0, 10), (0, 10), (0, 5), (0.1, 5.0)]


def test_slider_changes_reach_the_limits():
    panel = explorer("repeat")
    panel.sliders["model_calls"].value = 3
    panel.sliders["tool_calls"].value = 7
    panel.sliders["repetitions"].value = 0
    panel.sliders["deadline_s"].value = 0.5
    assert panel.limits == Limits(model_calls=3, tool_calls=7, repetitions=0, deadline_s=0.5)
    assert "repetitions=0" in repr(panel)


def test_changing_the_scenario_resets_the_sliders():
    panel = explorer("repeat")
    panel.sliders["model_calls"].value = 9
    panel.sliders["repetitions"].value = 4
    panel.scenario.value = "budget"
    assert panel.limits == SCENARIOS["budget"].limits.with_(deadline_s=5.0)
    assert SCENARIOS["budget"].summary in panel.children[1].value
    panel.scenario = "deadline"  # a name can be assigned directly
    assert panel.scenario.value == "deadline"
    assert panel.limits.deadline_s == 1.0 and panel.limits.model_calls == Limits().model_calls


def test_the_panel_can_start_at_a_chapters_limits():
    chapter = Limits()  # the chapter's limits: 120 s, more than the slider's usual 5 s
    panel = explorer("complete", limits=chapter)
    assert panel.limits == chapter, "shown, and run, as given: not cut to 5 s"
    assert panel.sliders["deadline_s"].max == chapter.deadline_s
    assert f"deadline_s={chapter.deadline_s:g}" in repr(panel)
    tight = Limits(model_calls=2, tool_calls=1, deadline_s=0.5)
    short = explorer("repeat", limits=tight)
    assert short.limits == tight and short.sliders["deadline_s"].max == 5.0
    assert short.run().limits == tight
    short.scenario.value = "budget"  # another scenario: its own limits, as without the argument
    assert short.limits == SCENARIOS["budget"].limits.with_(deadline_s=5.0)
    with pytest.raises(UserError, match="limits must be a labkit.Limits"):
        explorer("repeat", limits={"model_calls": 2})


@pytest.mark.parametrize("agent", ["harness", "simple"])
@pytest.mark.parametrize("name", list(SCENARIO_TABLE))
def test_run_gives_the_spec_outcome_and_shows_it(name, agent):
    panel = explorer(name, agent)
    if name == "deadline":
        panel.sliders["deadline_s"].value = SMALL_DEADLINE_S
    outcome = panel.run()
    status, tool_calls, model_calls = SCENARIO_TABLE[name]
    assert panel.outcome is outcome
    assert (outcome.status, outcome.count("ToolCall"), outcome.count("ModelCall")) == (status, tool_calls, model_calls)
    assert outcome.limits == panel.limits
    line = panel.status_html
    assert f"<b>{status}</b>" in line
    assert f"exit code {outcome.exit_code}" in line
    assert f"ToolCall {tool_calls}" in line and f"ModelCall {model_calls}" in line
    assert f"{name} / {agent}" in line
    if RunStatus(status).is_stop:
        assert "text: withheld" in line
    else:
        assert "Review finished." in line and "withheld" not in line


def test_events_table_and_chart_are_replaced_in_place():
    panel = explorer("repeat")
    first = panel.run()
    panel.sliders["repetitions"].value = 5
    second = panel.run()
    (events,) = panel.events_output.outputs  # replaced, not appended
    (chart,) = panel.chart_output.outputs
    rows = events["data"]["text/plain"].splitlines()[2:]  # header and index-name lines first
    assert [row.split()[1] for row in rows] == [str(e.kind) for e in second.events]
    assert len(second.events) != len(first.events)
    assert "<table" in events["data"]["text/html"] and "ToolBudget" in events["data"]["text/html"]
    assert base64.b64decode(chart["data"]["image/png"]).startswith(b"\x89PNG\r\n\x1a\n")


def test_a_limit_change_changes_the_outcome():
    panel = explorer("repeat")
    assert panel.run().status == "RepeatedCall"
    before = panel.status_html
    # two attempts per signature: the broken record gets one more read, then the same stop
    panel.sliders["repetitions"].value = 2
    twice = panel.run()
    assert (twice.status, twice.count("ToolCall")) == ("RepeatedCall", 2)
    assert panel.status_html != before
    # five per signature: the global tool budget (4, checked first) stops it instead
    panel.sliders["repetitions"].value = 5
    budget = panel.run()
    assert (budget.status, budget.count("ToolCall")) == ("ToolBudget", Limits().tool_calls)
    assert "<b>ToolBudget</b>" in panel.status_html
    # one model call: the second request to the model is refused
    panel.sliders["model_calls"].value = 1
    assert panel.run().status == "ModelBudget"


def test_the_run_button_runs_the_panel():
    panel = explorer("complete", "simple")
    panel.run_button.click()
    assert panel.outcome is not None and panel.outcome.status == "Completed"
    assert not panel.run_button.disabled


def test_the_agent_toggle_reaches_the_run():
    panel = explorer("changing")
    panel.agent = "simple"
    panel.run()
    assert "changing / simple" in panel.status_html


def test_the_panel_runs_inside_a_running_event_loop():
    async def in_a_kernel_like_loop():
        return explorer("repeat").run()

    assert asyncio.run(in_a_kernel_like_loop()).status == "RepeatedCall"


def test_bad_choices_are_clear_errors():
    with pytest.raises(UnknownScenarioError, match="choose one of"):
        explorer("nope")
    with pytest.raises(UserError, match="'harness' or 'simple'"):
        explorer("repeat", "clever")
    panel = explorer()
    with pytest.raises(UnknownScenarioError):
        panel.scenario = "nope"
    with pytest.raises(UserError):
        panel.agent = "clever"
    assert panel.scenario.value == "repeat" and panel.agent.value == "harness"


# -- the prediction widget --------------------------------------------------------------------


def test_prediction_offers_every_status_after_a_placeholder():
    widget = predict("repeat")
    assert isinstance(widget, Prediction)
    labels = [label for label, _ in widget.status_choice.options]
    assert labels == ["choose…", *(s.value for s in RunStatus)]
    assert widget.status_choice.value is None


def test_prediction_shows_choose_in_both_boxes_until_a_guess_and_again_after_it_is_cleared():
    """An empty box would look broken: both dropdowns show their "choose…" option (ipywidgets selects no option,
    and shows nothing, for a value of None alone)."""
    widget = predict("repeat")
    for box in (widget.status_choice, widget.tool_calls_choice):
        assert (box.index, box.label, box.value) == (0, "choose…", None)
    widget.status_choice, widget.tool_calls_choice = "RepeatedCall", 1
    assert (widget.status_choice.label, widget.tool_calls_choice.label) == ("RepeatedCall", "1")
    widget.status_choice, widget.tool_calls_choice = None, None
    for box in (widget.status_choice, widget.tool_calls_choice):
        assert (box.index, box.label, box.value) == (0, "choose…", None)


def test_prediction_refuses_to_run_without_a_status():
    widget = predict("repeat")
    assert widget.run() is None
    assert "Choose a status first" in widget.result_html
    assert widget.outcome is None


@pytest.mark.parametrize("name", ["repeat", "changing", "complete"])
def test_right_guesses_are_marked_right(name):
    status, tool_calls, _ = SCENARIO_TABLE[name]
    widget = predict(name)
    widget.status_choice.value = status
    widget.tool_calls_choice.value = tool_calls
    result = widget.run()
    assert result is not None and result.right
    assert widget.result_html.count("right") == 2 and "not this time" not in widget.result_html
    assert widget.outcome.status == status and widget.last_check == result


def test_each_wrong_guess_is_marked_not_this_time_as_check_does():
    widget = predict("repeat", agent="simple")
    widget.status_choice = "Completed"
    widget.tool_calls_choice = SCENARIO_TABLE["repeat"][1]
    result = widget.run()
    assert not result.right
    status_line, count_line, *_feedback = widget.result_html.split("<br>")
    assert "you said Completed, it was RepeatedCall" in status_line and "not this time" in status_line
    assert "right" in count_line
    widget.status_choice = "RepeatedCall"
    widget.tool_calls_choice = 3
    widget.run_button.click()
    status_line, count_line, *_feedback = widget.result_html.split("<br>")
    assert "right" in status_line and "not this time" in count_line and "you said 3, it was 1" in count_line


def test_prediction_runs_with_the_given_limits():
    widget = predict("repeat", limits=Limits(repetitions=5))
    widget.status_choice = "ToolBudget"
    widget.tool_calls_choice = 4
    assert widget.run().right
    assert "repetitions=5" in widget.children[0].value


def test_prediction_bad_input_is_a_clear_error():
    with pytest.raises(UnknownScenarioError):
        predict("nope")
    with pytest.raises(UserError, match="Limits"):
        predict("repeat", limits={"repetitions": 2})
    widget = predict("repeat")
    with pytest.raises(UserError, match="not a status"):
        widget.status_choice = "Stopped"
    assert widget.status_choice.value is None


def test_import_labkit_does_not_load_the_widgets():
    code = "import sys, labkit; print(sorted(m for m in ('ipywidgets', 'pandas', 'matplotlib') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_prediction_of_a_mystery_shows_its_steps_not_a_name():
    m = labkit.mystery("D")
    widget = predict(m, agent="simple")
    heading = widget.children[0].value
    assert "Mystery D" in heading and "read_ticket(input=7)" in heading and "repetitions=2" in heading
    assert not any(re.search(rf"\b{name}\b", heading) for name in labkit.SCENARIOS)  # deadline_s is a limit
    widget.status_choice = "ToolBudget"
    widget.tool_calls_choice = 4
    assert widget.run().right
    assert widget.outcome.events == m.run(agent="simple").events
    assert "think:" not in widget.result_html


def test_a_wrong_guess_on_a_mystery_gets_its_feedback():
    widget = predict(labkit.mystery("D"))
    widget.status_choice = "RepeatedCall"
    widget.tool_calls_choice = 4
    result = widget.run()
    assert not result.right
    status_line, count_line, think, also, *_rest = widget.result_html.split("<br>")
    assert "not this time" in status_line and "right" in count_line
    assert think.startswith("<i>think: you said RepeatedCall, but the tool budget decided")
    assert "would also have refused that call" in also and "asks the tool budget first" in also


def test_a_mystery_keeps_its_own_limits():
    with pytest.raises(UserError, match="own limits"):
        predict(labkit.mystery("A"), limits=Limits())


def test_a_prediction_starts_with_no_count_and_a_press_without_one_runs_nothing():
    """No count is filled in for the learner: pressing with a status but no count is no guess."""
    widget = predict(labkit.mystery("C"))
    assert widget.tool_calls_choice.value is None and widget.status_choice.value is None
    widget.status_choice = "ToolBudget"
    assert widget.run() is None
    assert "Choose a ToolCall count first" in widget.result_html and widget.outcome is None
    widget.tool_calls_choice = 0
    assert widget.run() is not None and widget.outcome is not None
