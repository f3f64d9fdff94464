"""Interactive panels for the workbook: the explorer and the prediction widget (chapters 1 and 3).

Teaching helper: importing this module imports ipywidgets, pandas and
matplotlib (``import labkit`` never does).

* :func:`explorer` — choose a scenario, an agent and the four limits, press
  Run, and see the status, the events table and the counters-vs-limits chart
  update in place.
* :func:`predict` — say which status will end a run and how many ``ToolCall``
  events it will record, then run it and see each guess marked right or wrong.

Both are ordinary ``ipywidgets.VBox`` objects: put one as the last line of a
cell to show it. Both can also be driven from code (set a control's
``value``, call ``.run()``), which is how the tests and the notebooks' check
cells use them. Neither prints anything: the tables and the chart are placed
into ``Output`` widgets as display data, so nothing leaks to the cell's
stdout (see NOTEBOOK-TESTING: printing into an ``Output`` widget fails nbval).
A cell that shows a panel still carries a widget view that nbval cannot
compare: give it the ``nbval-ignore-output`` cell tag.
"""

from __future__ import annotations

import base64
import html
import io
from typing import Any

import ipywidgets as w

from ..core.errors import UserError
from ..core.limits import Limits
from ..loops.outcome import RunOutcome, RunStatus
from ..loops.runner import AgentKind, run
from ..loops.scenarios import SCENARIOS, Scenario, get_scenario
from . import progress as _progress
from .charts import counters_chart
from .frames import events_frame
from .i18n import N_, _
from .predict import Check, Mystery, _check_one

__all__ = ["SUMMARIES", "Explorer", "Prediction", "explorer", "predict", "scenario_summary"]

AGENTS: tuple[AgentKind, ...] = ("harness", "simple")

SUMMARIES: dict[str, str] = {
    "complete": N_("reads ticket 42, finishes the review, then says 'Review finished.'"),
    "incomplete": N_("says 'Review finished.' at once without calling any tool"),
    "forbidden": N_("the well-behaved model, but the host does not grant ticket.read"),
    "repeat": N_("the broken record: asks for read_ticket(42) on every call"),
    "changing": N_("asks for read_ticket(1), read_ticket(2), ... (a new id on every call)"),
    "budget": N_("the well-behaved model, with a budget of one model call"),
    "deadline": N_("the model never answers; the run has a 1 s deadline"),
    "unavailable": N_("the transport cannot connect to the model endpoint"),
}
"""The seed scenarios' summaries (:data:`labkit.SCENARIOS`, whose core stays English), by name, for the panel."""


def scenario_summary(scenario: Scenario) -> str:
    """``scenario.summary`` in the notebook's language: a seed scenario's from :data:`SUMMARIES`, while
    it is the English text there (a summary changed in the core, or a declared scenario's own, is
    shown as it is)."""
    english = SUMMARIES.get(scenario.name)
    return _(english) if english is not None and english == scenario.summary else scenario.summary


_STYLE = {"description_width": "13em"}
_WIDE = w.Layout(width="34em")


def _check_agent(agent: str) -> AgentKind:
    if agent not in AGENTS:
        raise UserError(f"unknown agent {agent!r}; choose 'harness' or 'simple'")
    return agent


def _limit_sliders(deadline_max: float = 5.0) -> dict[str, w.IntSlider | w.FloatSlider]:
    """The four limit sliders by :class:`Limits` field name (the ranges of :class:`Limits`, kept small for a
    lesson; the deadline's up to ``deadline_max`` seconds)."""
    return {
        "model_calls": w.IntSlider(min=0, max=10, description=_("model calls"), style=_STYLE, layout=_WIDE),
        "tool_calls": w.IntSlider(min=0, max=10, description=_("tool attempts"), style=_STYLE, layout=_WIDE),
        "repetitions": w.IntSlider(min=0, max=5, description=_("attempts per signature"), style=_STYLE, layout=_WIDE),
        # A short maximum: the deadline scenario waits for its deadline, and the kernel waits with it.
        "deadline_s": w.FloatSlider(
            min=0.1,
            max=deadline_max,
            step=0.1,
            readout_format=".1f",
            description=_("deadline (s)"),
            style=_STYLE,
            layout=_WIDE,
        ),
    }


def _figure_png(outcome: RunOutcome) -> str:
    """The counters chart of ``outcome`` as base64 PNG text (PNG: nbval does not compare it)."""
    figure = counters_chart(outcome)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=80)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _display_data(data: dict[str, str]) -> dict[str, Any]:
    return {"output_type": "display_data", "data": data, "metadata": {}}


def _status_line(scenario: str, agent: str, outcome: RunOutcome) -> str:
    text = _("withheld") if outcome.text is None else html.escape(repr(outcome.text))
    where = _("{scenario} / {agent}, limits {limits}").format(
        scenario=html.escape(scenario), agent=html.escape(agent), limits=html.escape(str(outcome.limits))
    )
    return (
        f"<b>{html.escape(outcome.status.value)}</b> &middot; "
        + _("exit code {code}").format(code=outcome.exit_code)
        + f" &middot; ToolCall {outcome.count('ToolCall')} &middot; ModelCall {outcome.count('ModelCall')} &middot; "
        + _("text: {text}").format(text=text)
        + f"<br><span style='opacity:0.7'>{where}</span>"
    )


class Explorer(w.VBox):
    """A panel to change the scenario, the agent and the limits, and re-run.

    Attributes:
        scenario: the scenario ``Dropdown`` (value: a name from :data:`labkit.SCENARIOS`, or the
            declared scenario's name). Assigning a name (``panel.scenario = "changing"``) or a
            :class:`~labkit.Scenario` sets the dropdown.
        agent: the agent ``ToggleButtons`` (``"harness"`` or ``"simple"``); a name can be assigned too.
        sliders: the limit sliders by :class:`~labkit.Limits` field name:
            ``model_calls``, ``tool_calls``, ``repetitions`` (``IntSlider``),
            ``deadline_s`` (``FloatSlider``, seconds). They start at the
            ``limits`` given, else at the scenario's own, and are reset to a
            scenario's own limits when the scenario changes; a deadline above
            the slider's maximum (5 s, or the given limits' deadline if that is
            longer) shows (and runs) as that maximum.
        run_button: the Run ``Button``.
        status_line: the ``HTML`` status line; its markup is :attr:`status_html`.
        events_output, chart_output: the ``Output`` widgets holding the events
            table and the counters chart of the last run.
        outcome: the last :class:`~labkit.RunOutcome`, or ``None`` before the first run.
    """

    def __init__(
        self, scenario: str | Scenario = "repeat", agent: str = "harness", limits: Limits | None = None
    ) -> None:
        chosen = get_scenario(scenario)
        if limits is not None and not isinstance(limits, Limits):
            raise UserError(f"limits must be a labkit.Limits or None, not {type(limits).__name__}")
        # the seed scenarios, and a declared one (labkit.scenario) by its name, first
        self._choices: dict[str, Scenario] = dict(SCENARIOS)
        if self._choices.get(chosen.name) is not chosen:
            self._choices = {chosen.name: chosen, **{k: v for k, v in SCENARIOS.items() if k != chosen.name}}
        self._scenario = w.Dropdown(
            options=list(self._choices), value=chosen.name, description=_("scenario"), style=_STYLE, layout=_WIDE
        )
        self._summary = w.HTML(layout=w.Layout(margin="0 0 0 13.5em"))
        self._agent = w.ToggleButtons(options=list(AGENTS), value=_check_agent(agent))
        # A chapter's own limits (e.g. the default 120 s) start the panel as they are, not cut to 5 s.
        self.sliders = _limit_sliders(max(5.0, limits.deadline_s) if limits is not None else 5.0)
        self.run_button = w.Button(description=_("Run"), button_style="primary", icon="play")
        self.status_line = w.HTML(_("Not run yet: choose the limits, then press <b>Run</b>."))
        self.events_output = w.Output()
        self.chart_output = w.Output()
        self.outcome: RunOutcome | None = None

        self._show_scenario(chosen, limits)
        self._scenario.observe(lambda change: self._show_scenario(self._choices[change["new"]]), names="value")
        self.run_button.on_click(lambda _button: self.run())
        super().__init__(
            [
                self._scenario,
                self._summary,
                w.HBox([w.Label(_("agent"), layout=w.Layout(width="13em", justify_content="flex-end")), self._agent]),
                *self.sliders.values(),
                self.run_button,
                self.status_line,
                w.HBox([self.events_output, self.chart_output]),
            ]
        )
        self.add_class("labkit-explorer")  # CSS hooks, used by the browser test
        self.status_line.add_class("labkit-status")

    # -- the controls -------------------------------------------------------------------------

    @property
    def scenario(self) -> w.Dropdown:
        """The scenario dropdown; assign a scenario name to choose it."""
        return self._scenario

    @scenario.setter
    def scenario(self, name: str | Scenario) -> None:
        if isinstance(name, str) and name in self._choices:
            self._scenario.value = name
            return
        chosen = get_scenario(name)
        if self._choices.get(chosen.name) is not chosen:
            self._choices = {chosen.name: chosen, **{k: v for k, v in self._choices.items() if k != chosen.name}}
            self._scenario.options = list(self._choices)
        self._scenario.value = chosen.name

    @property
    def agent(self) -> w.ToggleButtons:
        """The agent toggle; assign ``"harness"`` or ``"simple"`` to choose it."""
        return self._agent

    @agent.setter
    def agent(self, name: str) -> None:
        self._agent.value = _check_agent(name)

    @property
    def limits(self) -> Limits:
        """The :class:`~labkit.Limits` the sliders show now (what the next run uses)."""
        return Limits(**{field: slider.value for field, slider in self.sliders.items()})

    @property
    def status_html(self) -> str:
        """The status line's HTML: status, exit code, ToolCall/ModelCall counts, text or "withheld"."""
        return self.status_line.value

    def _show_scenario(self, scenario: Scenario, limits: Limits | None = None) -> None:
        self._summary.value = f"<i>{html.escape(scenario_summary(scenario))}</i>"
        shown = limits if limits is not None else scenario.limits
        for field, slider in self.sliders.items():
            slider.value = min(max(getattr(shown, field), slider.min), slider.max)

    # -- running ------------------------------------------------------------------------------

    def run(self) -> RunOutcome:
        """Run the chosen scenario with the chosen agent and limits, and show the result in place.

        This is what the Run button does. It blocks until the run ends (at
        most the deadline slider's value), and works inside a running
        Jupyter kernel.

        Returns:
            The run's :class:`~labkit.RunOutcome` (also kept as :attr:`outcome`).
        """
        scenario, agent, limits = self._scenario.value, self._agent.value, self.limits
        self.run_button.disabled = True
        self.status_line.value = _("Running {scenario} / {agent}…").format(
            scenario=html.escape(scenario), agent=html.escape(agent)
        )
        outcome = None
        try:
            outcome = run(self._choices[scenario], agent=agent, limits=limits)
        finally:
            self.run_button.disabled = False
            if outcome is None:  # an error or the caller's interrupt: say so, and let it propagate
                self.status_line.value = _("The run did not return an outcome (see the cell's traceback).")
        self.outcome = outcome
        frame = events_frame(outcome)
        self.events_output.outputs = (_display_data({"text/html": frame.to_html(), "text/plain": frame.to_string()}),)
        self.chart_output.outputs = (
            _display_data({"image/png": _figure_png(outcome), "text/plain": "<counters against limits>"}),
        )
        self.status_line.value = _status_line(scenario, agent, outcome)
        return outcome

    def __repr__(self) -> str:
        return f"Explorer(scenario={self._scenario.value!r}, agent={self._agent.value!r}, limits={self.limits})"


def explorer(scenario: str | Scenario = "repeat", agent: str = "harness", limits: Limits | None = None) -> Explorer:
    """Build the explorer panel for ``scenario`` and ``agent`` (show it as a cell's last line).

    Args:
        scenario: the scenario chosen at first: a name in :data:`labkit.SCENARIOS`, or a
            :class:`~labkit.Scenario` (e.g. declared with :func:`labkit.scenario`: it is added
            to the dropdown, first).
        agent: ``"harness"`` (default) or ``"simple"``.
        limits: the limits the sliders start at, e.g. the chapter's (``labkit.Limits()``: 120 s);
            the deadline slider then reaches their deadline. ``None`` (default): the scenario's
            own limits, with the deadline cut to the slider's 5 s. Choosing another scenario
            resets the sliders to its own limits.

    Raises:
        UnknownScenarioError: no such scenario, or not a name or a Scenario (the message lists the names).
        UserError: an unknown agent, or ``limits`` that is not a :class:`~labkit.Limits`.
    """
    return Explorer(scenario, agent, limits)


class Prediction(w.VBox):
    """Predict a run's status and ``ToolCall`` count, then run it and check each guess.

    Attributes:
        status_choice: the status ``Dropdown``; its value is a :class:`~labkit.RunStatus`
            value, or ``None`` while the "choose…" placeholder is shown. A
            status name can be assigned (``p.status_choice = "RepeatedCall"``).
        tool_calls_choice: the ``Dropdown`` for the predicted ``ToolCall`` count; its
            value is ``None`` while the "choose…" placeholder is shown (a press without a
            count records no guess), and an int can be assigned.
        run_button: the "Run and check" ``Button``.
        result_line: the ``HTML`` result; its markup is :attr:`result_html`
            (after a wrong guess it ends with the check's ``think:`` feedback).
        outcome: the last run's :class:`~labkit.RunOutcome`, or ``None``.
        last_check: the last :class:`~labkit.Check`, or ``None``.
    """

    def __init__(
        self, scenario: str | Scenario | Mystery, agent: str = "harness", limits: Limits | None = None
    ) -> None:
        self._mystery = scenario if isinstance(scenario, Mystery) else None
        if self._mystery is not None and limits is not None:
            raise UserError("a mystery has its own limits (they are part of the puzzle); leave limits out")
        self._scenario_obj = scenario.scenario() if isinstance(scenario, Mystery) else get_scenario(scenario)
        self._agent_name = _check_agent(agent)
        if limits is not None and not isinstance(limits, Limits):
            raise UserError(f"limits must be a labkit.Limits or None, not {type(limits).__name__}")
        self._limits = limits
        shown = limits if limits is not None else self._scenario_obj.limits
        self._status = w.Dropdown(
            options=[(_("choose…"), None), *((s.value, s.value) for s in RunStatus)],  # no status chosen yet
            index=0,  # "choose…" shown; value=None would select no option and show an empty box
            description=_("status"),
            style=_STYLE,
        )
        self._tool_calls = w.Dropdown(  # empty at first, like the status: no guess until one is chosen
            options=[(_("choose…"), None), *((str(n), n) for n in range(max(10, shown.tool_calls) + 1))],
            index=0,
            description=_("ToolCall events"),
            style=_STYLE,
        )
        self.run_button = w.Button(description=_("Run and check"), button_style="primary", icon="check")
        self.result_line = w.HTML(_("Choose a status and a ToolCall count, then press <b>Run and check</b>."))
        self.outcome: RunOutcome | None = None
        self.last_check: Check | None = None
        self.run_button.on_click(lambda _button: self.run())
        if self._mystery is not None:  # the step list, never a scenario name
            heading = w.HTML(
                _("Predict: how will this run end ({agent})?").format(agent=html.escape(self._agent_name))
                + f"<pre>{html.escape(str(self._mystery))}</pre>"
            )
        else:
            heading = w.HTML(
                _("Predict: how will <b>{scenario}</b> ({agent}, limits {limits}) end?").format(
                    scenario=html.escape(self._scenario_obj.name),
                    agent=html.escape(self._agent_name),
                    limits=html.escape(str(shown)),
                )
            )
        super().__init__([heading, self._status, self._tool_calls, self.run_button, self.result_line])
        self.add_class("labkit-prediction")
        self.result_line.add_class("labkit-result")

    @property
    def status_choice(self) -> w.Dropdown:
        """The status dropdown (value ``None`` until a status is chosen)."""
        return self._status

    @status_choice.setter
    def status_choice(self, status: str | None) -> None:
        if status is not None and status not in RunStatus._value2member_map_:
            raise UserError(f"{status!r} is not a status; choose one of: {', '.join(RunStatus)}")
        if status is None:
            _choose(self._status)
        else:
            self._status.value = str(status)

    @property
    def tool_calls_choice(self) -> w.Dropdown:
        """The predicted ToolCall count (value ``None`` until a count is chosen)."""
        return self._tool_calls

    @tool_calls_choice.setter
    def tool_calls_choice(self, count: int | None) -> None:
        if count is None:
            _choose(self._tool_calls)
        else:
            self._tool_calls.value = count

    @property
    def progress_label(self) -> str:
        """The prediction's name in your progress.

        ``"widget: mystery D (harness)"`` or ``"widget: repeat (simple)"``.
        """
        name = f"mystery {self._mystery.key}" if self._mystery is not None else self._scenario_obj.name
        return f"widget: {name} ({self._agent_name})"

    @property
    def result_html(self) -> str:
        """The result line's HTML: each guess marked right or wrong, or why nothing ran."""
        return self.result_line.value

    def run(self) -> Check | None:
        """Run the scenario and check both guesses; this is what the button does.

        Returns:
            The :class:`~labkit.Check`, or ``None`` when no status or no count was chosen
            (then nothing runs, nothing counts as a guess, and the result line asks for it).
        """
        predicted, count = self._status.value, self._tool_calls.value
        if predicted is None or count is None:
            self.result_line.value = (
                _("<b>Choose a status first</b>: nothing was run.")
                if predicted is None
                else _("<b>Choose a ToolCall count first</b>: nothing was run.")
            )
            _progress.record("widget", self.progress_label, attempted=False, right=False)
            return None
        self.run_button.disabled = True
        self.result_line.value = _("Running…")
        outcome = None
        try:
            outcome = run(self._scenario_obj, agent=self._agent_name, limits=self._limits)
        finally:
            self.run_button.disabled = False
            if outcome is None:  # an error or the caller's interrupt: say so, and let it propagate
                self.result_line.value = _("The run did not return an outcome (see the cell's traceback).")
        result = _check_one(outcome, predicted, count, None)
        self.outcome, self.last_check = outcome, result
        _progress.record("widget", self.progress_label, attempted=True, right=result.right)

        def line(what: str, said: object, was: object) -> str:
            right = said == was
            word, colour = (_("right"), "#1e8449") if right else (_("not this time"), "#c0392b")
            mark = f"<b style='color:{colour}'>{word}</b>"
            return (
                _("{what}: you said {said}, it was {was}").format(
                    what=what, said=html.escape(str(said)), was=html.escape(str(was))
                )
                + f" &mdash; {mark}"
            )

        self.result_line.value = "<br>".join(
            [
                line(_("status"), result.predicted_status, result.actual_status),
                line(_("ToolCall count"), result.predicted_tool_calls, result.actual_tool_calls),
                *(f"<i>{html.escape(think)}</i>" for think in result.feedback),
            ]
        )
        return result

    def __repr__(self) -> str:
        return (
            f"Prediction(scenario={self._mystery or self._scenario_obj.name!r}, agent={self._agent_name!r},"
            f" status={self._status.value!r}, tool_calls={self._tool_calls.value})"
        )


def _choose(box: w.Dropdown) -> None:
    """Show ``box``'s "choose…" option, whose value is ``None``. ipywidgets takes a value of ``None`` for "no
    option selected" and empties the box, so the value is cleared first and the option selected after."""
    box.value = None
    box.index = 0


def predict(scenario: str | Scenario | Mystery, agent: str = "harness", limits: Limits | None = None) -> Prediction:
    """Build a prediction widget for one run of ``scenario`` or of a mystery script.

    Args:
        scenario: a name from :data:`labkit.SCENARIOS`, a :class:`~labkit.Scenario`,
            or a :class:`~labkit.Mystery` (``labkit.mystery("D")``): the widget
            then shows the mystery's step list, limits and grants, and no name.
        agent: ``"harness"`` (default) or ``"simple"``.
        limits: the run's limits; the scenario's own when ``None`` (a mystery
            keeps its own: giving limits with a mystery is an error).

    Raises:
        UnknownScenarioError: no such scenario.
        UserError: an unknown agent, ``limits`` that is not a :class:`~labkit.Limits`,
            or limits given with a mystery.
    """
    return Prediction(scenario, agent, limits)
