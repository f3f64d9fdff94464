"""labkit.check / labkit.compare: predictions against runs, including "no guess yet"."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import labkit
from labkit.teaching.predict import Checks


def shown(verdict: object) -> str:
    """What a verdict prints, before its lines are wrapped to the output area (tests/test_message_width.py)."""
    return verdict._text()  # type: ignore[attr-defined]


REPEAT = labkit.run("repeat")


def test_a_right_prediction():
    c = labkit.check(REPEAT, status="RepeatedCall", tool_calls=1)
    assert c.right and c.guessed
    assert "right" in shown(c) and "not this time" not in shown(c)


def test_a_wrong_prediction_shows_the_answer():
    c = labkit.check(REPEAT, status="ToolBudget", tool_calls=4)
    assert not c.right
    assert shown(c).count("not this time") == 2 and "RepeatedCall" in shown(c)


@pytest.mark.parametrize("missing", [..., None])
def test_no_guess_yet_is_friendly_and_keeps_the_answer_hidden(missing):
    c = labkit.check(REPEAT, status=missing, tool_calls=...)
    assert not c.right and not c.guessed
    text = shown(c)
    assert text.splitlines() == [text] and text.startswith("no guess yet for the status and the ToolCall count")
    assert "RepeatedCall" not in text


def test_a_count_left_out_is_not_asked_only_the_status_is_judged():
    """``check(outcome, status=...)`` alone judges the status (a per-label status with its think: lines,
    as chapter 7 asks), where ``tool_calls=...`` asks for a count not guessed yet."""
    assert labkit.check(REPEAT, status="RepeatedCall").right
    wrong = labkit.check(REPEAT, status="ToolBudget")
    assert not wrong.right and wrong.guessed and "ToolCall count" not in shown(wrong)
    assert any(line.startswith("think: you said ToolBudget") for line in wrong.feedback)
    assert shown(labkit.check(REPEAT, status=...)).startswith("no guess yet for the status:")
    pending = labkit.check(REPEAT, status="RepeatedCall", tool_calls=...)
    assert not pending.right and not pending.guessed
    runs = {"a": REPEAT, "b": labkit.run("changing")}
    both = labkit.check(runs, status={"a": "RepeatedCall", "b": "ToolBudget"})
    assert both.right and "ToolCall count" not in shown(both)


def test_an_empty_predict_cell_is_one_line_for_every_run_it_checks():
    runs = {"simple": labkit.run("repeat", agent="simple"), "harness": REPEAT}
    text = shown(labkit.check(runs, status=..., tool_calls=...))
    assert text.splitlines() == [text] and "(simple, harness)" in text and "RepeatedCall" not in text
    half = shown(labkit.check(runs, status="RepeatedCall", tool_calls=...))  # a guess given: one block per verdict
    assert half.startswith("[simple, harness]\n") and half.count("no guess yet") == 1


def test_half_a_guess_checks_the_half_given():
    c = labkit.check(REPEAT, status="RepeatedCall", tool_calls=...)
    lines = shown(c).splitlines()
    assert "right" in lines[0] and "no guess yet" in lines[1]


def test_several_runs_at_once():
    runs = {"simple": labkit.run("repeat", agent="simple"), "harness": REPEAT}
    checks = labkit.check(runs, status="RepeatedCall", tool_calls=1)
    assert isinstance(checks, Checks) and checks.right
    assert checks["simple"].right and checks["harness"].right
    assert shown(checks).startswith("[simple, harness]\n") and shown(checks).count("status") == 1
    assert not labkit.check(runs, status="RepeatedCall", tool_calls=2).right


def test_a_status_that_does_not_exist_is_a_verdict_never_an_error():
    """A check cell never raises for a value's form: "Run All" goes on, and the verdict says why."""
    result = labkit.check(REPEAT, status="Repeated", tool_calls=1)
    assert not result.right and "think: 'Repeated' is not a status; the statuses are: Completed" in str(result)
    assert labkit.check(REPEAT, status="RepeatedCall", tool_calls="1").right  # a text of digits is the number


def test_compare_one_value():
    assert labkit.compare("admitted", 4, 4).right
    assert "not this time" in shown(labkit.compare("admitted", 3, 4))
    blank = labkit.compare("admitted", ..., 4)
    assert not blank.right and "no guess yet" in shown(blank) and "4" not in shown(blank)


# -- events in a prediction, and feedback aimed at the misconception ------------------------------

REPEAT_EVENTS = [
    ("ModelCall", "model", 1),
    ("Middleware", "read_ticket", 1),
    ("ToolCall", "read_ticket", 1),
    ("ModelCall", "model", 2),
    ("Middleware", "read_ticket", 2),
    ("RepeatedCall", "read_ticket", 1),
]


def test_a_right_prediction_with_events():
    c = labkit.check(REPEAT, status="RepeatedCall", tool_calls=1, events=REPEAT_EVENTS)
    assert c.right and c.feedback == ()
    event_lines = shown(c).splitlines()[3:]  # status, ToolCall count, the events header, then one line per event
    assert len(event_lines) == len(REPEAT_EVENTS)
    assert all(line.rstrip().endswith("right") for line in event_lines)
    assert "think:" not in shown(c)


def test_a_forgotten_event_is_shown_where_it_belongs():
    guess = [e for e in REPEAT_EVENTS if e[0] != "Middleware"]
    c = labkit.check(REPEAT, status="RepeatedCall", tool_calls=1, events=guess)
    assert not c.right
    lines = shown(c).splitlines()
    missing = [line for line in lines if line.rstrip().endswith("you left it out")]
    assert len(missing) == 2 and all("Middleware read_ticket" in line for line in missing)
    assert sum(line.rstrip().endswith("right") for line in lines) == 2 + 4  # status, count and four events
    assert any("passes the middleware first" in line for line in c.feedback)


def test_a_wrong_event_is_marked_and_an_extra_one_is_not_recorded():
    guess = [*REPEAT_EVENTS[:5], ("ToolCall", "read_ticket", 2), ("RepeatedCall", "read_ticket", 1)]
    text = shown(labkit.check(REPEAT, status="RepeatedCall", tool_calls=1, events=guess))
    assert "ToolCall read_ticket 2" in text and "not recorded" in text


def test_wrong_status_feedback_names_the_rule_that_decided_with_the_runs_numbers():
    c = labkit.check(REPEAT, status="ToolBudget", tool_calls=1)
    first = c.feedback[0]
    assert first.startswith("think: you said ToolBudget, but the repetition rule decided")
    assert "read_ticket(input=42)" in first and f"1 of {REPEAT.limits.repetitions}" in first
    # the tool budget was guessed: the run says when it would have refused (the fifth identical call)
    assert any("the tool budget would have refused" in line and "later" in line for line in c.feedback)
    assert shown(c).endswith(c.feedback[-1])


def test_guard_order_feedback_only_when_two_rules_refuse_the_same_call():
    outcome = labkit.mystery("D").run()  # read 42 / read 7 in turn, two attempts each: call 5 is 42 again
    feedback = labkit.check(outcome, status="RepeatedCall", tool_calls=4).feedback
    assert feedback[0].startswith("think: you said RepeatedCall, but the tool budget decided")
    assert any(
        "repetition rule would also have refused that call" in line and "asks the tool budget first" in line
        for line in feedback
    )


def test_no_guard_order_feedback_when_the_other_rule_never_refuses():
    """The issue's example: in `changing` every id is new, so no line may blame the guard's order."""
    feedback = labkit.check(labkit.run("changing"), status="RepeatedCall", tool_calls=4).feedback
    text = " ".join(feedback)
    assert "asks the tool budget first" not in text and "repetition rule" not in text
    assert "no call asked for one of them again" in text


@pytest.mark.parametrize(
    ("key", "said", "words"),
    [
        ("A", "Completed", "its final text proves nothing"),
        ("C", "Completed", "the tool budget decided: it refused finish_review(input=42), 2 of 2"),
        ("F", "ToolBudget", "the tool budget would have refused"),
        ("G", "Completed", "needs review.finish, not granted"),
        ("J", "Completed", "could not reach the model endpoint"),
        ("H", "Completed", "the deadline decided: 0.3 s passed while model call 3 was waiting"),
        ("D", "RepeatedCall", "asks the tool budget first"),
    ],
)
def test_each_wrong_guess_gets_feedback_from_its_run(key, said, words):
    outcome = labkit.mystery(key).run()
    feedback = labkit.check(outcome, status=said, tool_calls=outcome.count("ToolCall")).feedback
    assert feedback[0].startswith(f"think: you said {said}, but")
    assert any(words in line for line in feedback)


def test_counting_the_refused_attempt_gets_its_own_feedback():
    (think,) = labkit.check(REPEAT, status="RepeatedCall", tool_calls=2).feedback
    assert "the attempt the repetition rule refused records none" in think
    (think,) = labkit.check(REPEAT, status="RepeatedCall", tool_calls=0).feedback
    assert "you counted 0 ToolCall events, there was 1" in think


def test_no_event_guess_yet_keeps_the_answer_hidden():
    c = labkit.check(REPEAT, status=..., tool_calls=..., events=...)
    assert not c.guessed and not c.right and c.feedback == ()
    text = shown(c)
    assert text.splitlines() == [text] and "the status and the ToolCall count and the events" in text
    assert "RepeatedCall" not in text and "Middleware" not in text


def test_events_given_as_control_events_or_left_out():
    assert labkit.check(REPEAT, status="RepeatedCall", tool_calls=1, events=list(REPEAT.events)).right
    without = labkit.check(REPEAT, status="RepeatedCall", tool_calls=1)
    assert without.right and without.predicted_events is None and "events" not in str(without)


@pytest.mark.parametrize(
    ("events", "words"),
    [
        ("ModelCall model 1", "list of (kind, name, count)"),
        ([("ModelCall", "model")], "event 1 must be a (kind, name, count)"),
        ([("ModelCal", "model", 1)], "is not an event kind; the kinds are: ModelCall"),
        ([("ModelCall", "model", "one")], "whole number"),
        ([("ModelCall", 7, 1)], "the name is a tool name"),
    ],
)
def test_bad_event_guesses_are_verdicts_that_say_why(events, words):
    result = labkit.check(REPEAT, status="RepeatedCall", tool_calls=1, events=events)
    assert not result.right
    assert any(line.startswith("think: ") and words in line for line in str(result).splitlines()), str(result)


def test_checking_something_that_is_not_a_run_is_a_clear_error():
    with pytest.raises(labkit.InputError, match="RunOutcome"):
        labkit.check("repeat", status="RepeatedCall", tool_calls=1)


# -- mystery scripts ------------------------------------------------------------------------------

# What each mystery does: (status, ToolCall events, ModelCall events), worked out by hand from docs/guarantees.md.
MYSTERY_TABLE = {
    "A": ("Incomplete", 1, 2),
    "B": ("RepeatedCall", 2, 3),
    "C": ("ToolBudget", 2, 3),
    "D": ("ToolBudget", 4, 5),
    "E": ("Completed", 2, 2),
    "F": ("ModelBudget", 2, 2),
    "G": ("PermissionDenied", 1, 2),
    "H": ("DeadlineExceeded", 2, 3),
    "I": ("RepeatedCall", 1, 1),
    "J": ("ProviderUnavailable", 2, 3),
    "K": ("ModelBudget", 2, 2),  # the failing third call is refused before it is sent
}


def test_the_mystery_keys():
    assert labkit.mysteries() == tuple(MYSTERY_TABLE)
    assert labkit.mystery("d") is labkit.mystery("D")
    with pytest.raises(labkit.UnknownScenarioError, match="choose one of: A, B"):
        labkit.mystery("Z")


@pytest.mark.parametrize("key", list(MYSTERY_TABLE))
@pytest.mark.parametrize("agent", ["simple", "harness"])
def test_each_mystery_ends_as_worked_out(key, agent):
    outcome = labkit.mystery(key).run(agent=agent)
    assert (outcome.status.value, outcome.count("ToolCall"), outcome.count("ModelCall")) == MYSTERY_TABLE[key]


@pytest.mark.parametrize("key", list(MYSTERY_TABLE))
def test_a_mystery_shows_its_steps_and_hides_its_name(key):
    m = labkit.mystery(key)
    text = str(m)
    assert text.startswith(f"Mystery {key}\n") and f"Limits: {m.limits}" in text
    assert all(line in text for line in m.steps)
    for name in labkit.SCENARIOS:
        assert not re.search(rf"\b{name}\b", text, re.IGNORECASE), name
    status, _, _ = MYSTERY_TABLE[key]
    assert status not in text


def test_a_mystery_step_list_reads_as_the_script():
    assert labkit.mystery("I").steps == (
        "call 1: asks for 2 calls in one reply: read_ticket(input=42), then read_ticket(input=42)",
        "call 2: asks for finish_review(input=42)",
        'call 3: answers "Review finished." (no tool call)',
    )
    assert labkit.mystery("G").capabilities == frozenset({"ticket.read"})
    assert "Granted: ticket.read\n" in str(labkit.mystery("G"))
    assert labkit.mystery("J").steps[-1] == "call 3: fails to connect (ConnectionError)"
    assert labkit.mystery("H").steps[-1] == "call 3: never answers"


def test_a_mystery_displays_as_its_step_list_in_ipython():
    printed = []

    class Printer:
        def text(self, value):
            printed.append(value)

    m = labkit.mystery("B")
    m._repr_pretty_(Printer(), False)
    assert printed == [str(m)] and repr(m) == "Mystery('B')"


@pytest.mark.parametrize(
    ("what", "said", "was"),
    [
        ("reported as", "ProviderUnavailable", "ProviderUnavailable"),
        ("attempts per signature", 3, 2),
        ("a label of sixteen", "RepeatedCall", "DeadlineExceeded"),
        ("admitted", 3, 3),
    ],
)
def test_a_comparison_line_sizes_its_columns_to_its_content(what, said, was) -> None:
    text = shown(labkit.compare(what, said, was)).splitlines()
    line = text[0]
    assert len(text) == (1 if said == was else 2)  # one verdict line, and one think: line after a wrong guess
    columns = re.split(r" {2,}", line.strip())  # columns are at least two spaces apart
    assert columns == [what, f"you said {said}", f"it was {was}", "right" if said == was else "not this time"]


def test_a_check_aligns_its_lines_on_the_widest_value() -> None:
    outcome = labkit.run("unavailable")
    text = shown(labkit.check(outcome, status="ProviderUnavailable", tool_calls=0))
    status, count = text.splitlines()[:2]
    assert re.split(r" {2,}", status) == [
        "status",
        "you said ProviderUnavailable",
        "it was ProviderUnavailable",
        "right",
    ]
    assert re.split(r" {2,}", count) == ["ToolCall count", "you said 0", "it was 0", "right"]
    assert status.index("it was") == count.index("it was") and status.index("right") == count.index("right")


def test_compare_of_two_mappings_prints_one_aligned_line_per_label_and_keeps_a_blank_guess_hidden():
    from labkit.teaching.predict import compare

    lines = shown(
        compare(
            "status",
            {"function": "Completed", "simple": "Completed"},
            {"function": "Completed", "simple": "Incomplete"},
        )
    ).splitlines()
    reasons = [line for line in lines if line.startswith("think: ")]
    lines = [line for line in lines if not line.startswith("think: ")]
    assert [reason.split(":")[1] for reason in reasons] == [" status [simple]"]  # one reason, for the wrong label
    assert [line.split("  ")[0] for line in lines] == ["status [function]", "status [simple]"]
    assert lines[0].endswith("right") and lines[1].endswith("not this time")
    assert len({line.index("it was") for line in lines}) == 1  # aligned
    left_out = compare("n", {"a": 1}, {"a": 1, "b": 2})  # a label the guess leaves out: no guess yet, not wrong
    assert not left_out.right and shown(left_out).splitlines()[1].startswith("n [b]           no guess yet")
    assert "it was -" in shown(compare("n", {"a": 1, "c": 3}, {"a": 1}))
    assert "no guess yet" in shown(compare("status", ..., {"a": "Completed"}))
    assert "Completed" not in shown(compare("status", ..., {"a": "Completed"}))


# -- one guess per labelled run -------------------------------------------------------------------


def test_one_guess_per_label_is_checked_against_its_own_run():
    runs = {"one attempt": labkit.run("complete", limits=labkit.Limits(tool_calls=1)), "room": labkit.run("complete")}
    result = labkit.check(
        runs, status={"one attempt": "ToolBudget", "room": "Completed"}, tool_calls={"one attempt": 1, "room": 2}
    )
    assert result.right and [c.predicted_status for _, c in result] == ["ToolBudget", "Completed"]
    swapped = labkit.check(runs, status={"one attempt": "Completed", "room": "ToolBudget"}, tool_calls=2)
    assert not swapped.right and not swapped["one attempt"].right and not swapped["room"].right
    assert swapped["one attempt"].feedback  # a wrong per-label guess still gets its think: lines


def test_a_label_left_out_of_the_guess_is_no_guess_yet():
    runs = {"a": labkit.run("complete"), "b": labkit.run("repeat")}
    result = labkit.check(runs, status={"a": "Completed"}, tool_calls={"a": 2})
    assert result["a"].right and result["b"].unguessed and not result.right


@pytest.mark.parametrize(
    ("status", "tool_calls", "words"),
    [
        ({"nope": "Completed"}, 2, "status: no run is labelled 'nope'; the runs are: a, b"),
        ("Completed", {"c": 1}, "tool_calls: no run is labelled 'c'"),
    ],
)
def test_a_bad_per_label_guess_is_one_clear_error(status, tool_calls, words):
    runs = {"a": labkit.run("complete"), "b": labkit.run("repeat")}
    with pytest.raises(labkit.InputError, match=re.escape(words)):
        labkit.check(runs, status=status, tool_calls=tool_calls)


def test_per_label_guesses_need_labelled_runs():
    with pytest.raises(labkit.InputError, match="one guess per label needs one outcome per label"):
        labkit.check(labkit.run("complete"), status={"a": "Completed"})


@pytest.mark.parametrize(
    ("notebook", "kept", "dropped"),
    [
        ("01_a_loop_needs_an_owner.ipynb", [], ["(chapter 4)", "(chapter 7)"]),
        ("04_the_boundary_around_the_tool_body.ipynb", ["(this chapter)"], ["(chapter 7)"]),  # it teaches the budget
        ("09_cancellation_persistence_replay.ipynb", ["(chapter 4)", "(chapter 7)"], []),
        (None, ["(chapter 4)", "(chapter 7)"], []),  # the chapter is not known: every pointer stays
    ],
)
def test_feedback_points_only_to_chapters_already_reached(monkeypatch, notebook, kept, dropped):
    """A chapter not reached yet is cited by what it adds ("chapter 7 lists every status"), never as taught."""
    from labkit.teaching import i18n

    monkeypatch.delenv(i18n.CHAPTER_ENV, raising=False)
    monkeypatch.setattr(i18n, "notebook_path", lambda shell: notebook)
    feedback = " ".join(labkit.check(labkit.mystery("C").run(), status="Completed", tool_calls=2).feedback)
    assert "the tool budget decided" in feedback and "never Completed" in feedback
    assert all(ref in feedback for ref in kept) and not any(ref in feedback for ref in dropped), feedback
    assert ("(this chapter)" in kept) == ("(chapter 4)" not in feedback and "(this chapter)" in feedback), feedback
    for ref in dropped:
        assert f"(chapter {ref[-2]} " in feedback, feedback


_RUNS = {
    f"{name} {agent}": labkit.run(name, agent=agent) for name in labkit.SCENARIOS for agent in ("simple", "harness")
}


@settings(max_examples=60, deadline=None)
@given(
    labels=st.lists(st.sampled_from(sorted(_RUNS)), min_size=1, max_size=6, unique=True),
    status=st.sampled_from([..., *labkit.RunStatus]),
    tool_calls=st.sampled_from([..., 0, 1, 2, 4]),
)
def test_runs_share_a_block_exactly_when_their_verdicts_read_the_same(labels, status, tool_calls):
    """Each block is headed by the labels whose own check prints its text: every label once, blocks in the order
    of their first label, labels in the order given."""
    runs = {label: _RUNS[label] for label in labels}
    guess = status if status is ... else str(status)
    checks = labkit.check(runs, status=guess, tool_calls=tool_calls)
    if all(checks[label].unguessed for label in labels):
        return  # one line for the whole cell (tested above)
    text = shown(checks)
    headed = re.findall(r"^\[(.+)\]$", text, flags=re.MULTILINE)
    blocks = [block.split("\n", 1)[1] for block in re.split(r"\n(?=\[)", text)]
    grouped = [group.split(", ") for group in headed]
    assert sorted(label for group in grouped for label in group) == sorted(labels)  # every label once
    order = [[labels.index(label) for label in group] for group in grouped]
    assert all(o == sorted(o) for o in order) and [o[0] for o in order] == sorted(o[0] for o in order)
    for group, block in zip(grouped, blocks, strict=True):
        assert all(shown(checks[label]) == block for label in group)
    assert len(set(blocks)) == len(blocks)  # two blocks never read the same


@settings(max_examples=80, deadline=None)
@given(truth=st.booleans(), as_mapping=st.booleans())
def test_a_truth_value_never_passes_for_a_number_nor_the_reverse(truth: bool, as_mapping: bool):
    number = int(truth)  # Python holds True == 1 and False == 0; an exit code guessed False is still wrong
    for said, was in ((truth, number), (number, truth)):
        if as_mapping:
            said, was = {"run": said}, {"run": was}
        result = labkit.compare("exit code", said, was)
        assert not result.right and "not this time" in shown(result)
        assert "a truth value (True/False) and a number are different answers" in shown(result)
    assert labkit.compare("exit code", number, number).right and labkit.compare("kept", truth, truth).right


@settings(max_examples=120, deadline=None)
@given(
    label=st.sampled_from(sorted(_RUNS)),
    edits=st.lists(
        st.tuples(st.sampled_from(["drop", "recount", "add"]), st.integers(0, 30), st.integers(-2, 2)), max_size=3
    ),
)
def test_the_events_diff_keeps_both_lists_in_order_and_shows_a_wrong_count_on_its_own_row(label, edits):
    """Guesses made from the run's own events by dropping one, recounting one or adding one: every event of
    each side appears once, in order, in its column; a row pairs two events of one kind and name at most
    with counts that differ, and then the diff says what that kind's count counts."""
    run = _RUNS[label]
    was = [(e.kind.value, e.name, e.count) for e in run.events]
    said = list(was)
    for op, where, delta in edits:
        if op == "drop" and said:
            del said[where % len(said)]
        elif op == "recount" and said and delta:
            kind, name, count = said[where % len(said)]
            said[where % len(said)] = (kind, name, max(0, count + delta))
        elif op == "add":
            said.insert(where % (len(said) + 1), ("ToolCall", "read_ticket", 9))
    text = shown(labkit.check(run, status=run.status.value, events=said))
    rows = [
        line
        for line in text.splitlines()[
            text.splitlines().index(next(line for line in text.splitlines() if line.startswith("events"))) + 1 :
        ]
        if line.startswith(" ")
    ]
    cells = [re.split(r"\s{2,}", row.strip()) for row in rows]
    left = [c[0] for c in cells if c[0] != "-"]
    right = [c[1] for c in cells if c[1] != "-"]
    assert left == [f"{k} {n} {c}" for k, n, c in said] and right == [f"{k} {n} {c}" for k, n, c in was]
    recounted = {a.split()[0] for a, b, *_ in cells if a != b and "-" not in (a, b) and a.split()[:2] == b.split()[:2]}
    for kind in recounted:
        assert f"think: a {kind} event's count is " in text
    assert text.count("event's count is") == len(recounted)
    assert all(row.endswith("right") for row in rows) == (said == was)


# -- the events' think: lines say what the run recorded, for any one change to its events --------------


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_every_think_line_after_a_changed_event_is_true_of_the_run(data):
    outcome = labkit.run(data.draw(st.sampled_from(sorted(labkit.SCENARIOS))), agent="harness")
    was = [(e.kind.value, e.name, e.count) for e in outcome.events]
    said = list(was)
    at = data.draw(st.integers(0, len(was) - 1))
    kind, name, count = was[at]
    change = data.draw(st.sampled_from(["rename", "recount", "add", "drop", "kind", "move"]))
    if change == "rename":
        said[at] = (kind, data.draw(st.sampled_from(["run", "model", "read_ticket", "finish_review", "x"])), count)
    elif change == "recount":
        said[at] = (kind, name, count + data.draw(st.sampled_from([-1, 1, 2])))
    elif change == "add":
        said.insert(at, (data.draw(st.sampled_from([k.value for k in labkit.EventKind])), name, count + 1))
    elif change == "drop":
        del said[at]
    elif change == "move":
        said.insert(data.draw(st.integers(0, len(was) - 1)), said.pop(at))
    else:
        said[at] = (data.draw(st.sampled_from([k.value for k in labkit.EventKind])), name, count)
    result = labkit.check(outcome, status=outcome.status.value, events=said)
    text = result._text().replace("\n       ", " ")  # the verdict's lines, unwrapped
    assert result.right is (said == was), text
    recorded = {(k, n) for k, n, _c in was}
    for row in text.splitlines():  # an event the run recorded as often as it is listed is never "not recorded"
        guess = re.fullmatch(r"\s+(\w+) (\S+) (-?\d+)\s+-\s+not recorded", row)
        if guess:
            event = (guess[1], guess[2], int(guess[3]))
            assert was.count(event) < said.count(event), row
        left_out = re.fullmatch(r"\s+-\s+(\w+) (\S+) (-?\d+)\s+you left it out", row)
        if left_out:
            event = (left_out[1], left_out[2], int(left_out[3]))
            assert said.count(event) < was.count(event), row
    thinks = [x for x in text.splitlines() if x.startswith("think:")]
    assert bool(thinks) is (said != was), text  # a wrong list always gets a line saying where to look
    for line in thinks:
        if m := re.fullmatch(r"think: the run named its (\w+) events (.+), not (\S+)", line):
            assert m[2].split(", ") == list(dict.fromkeys(n for k, n, _c in was if k == m[1])), line
            assert (m[1], m[3]) not in recorded, line
        elif m := re.fullmatch(
            r"think: the run recorded no (\w+) (\S+) (-?\d+): its \w+ events for \S+ count (.+)", line
        ):
            assert (m[1], m[2], int(m[3])) not in was, line
            assert m[4].split(", ") == [str(c) for k, n, c in was if (k, n) == (m[1], m[2])], line
        elif m := re.fullmatch(r"think: the run's (\w+) events for (\S+) count (.+), in the order .+", line):
            assert m[3].split(", ") == [str(c) for k, n, c in was if (k, n) == (m[1], m[2])], line
        elif m := re.fullmatch(r"think: the run recorded no (\w+) event for (\S+)", line):
            assert (m[1], m[2]) not in recorded, line
        elif m := re.fullmatch(r"think: the run records nothing after its stop, (\w+) (\S+) (-?\d+): .+", line):
            stop = (m[1], m[2], int(m[3]))
            assert was[-1] == stop and stop in said[:-1], line
        elif m := re.fullmatch(
            r"think: (\w+) events, the run recorded (\d+) and your list (\d+); the one you left out,"
            r" (\w+) (\S+) (-?\d+), (?:is the run's first event|came right after (\w+) (\S+) (-?\d+))",
            line,
        ):
            event = (m[4], m[5], int(m[6]))
            assert m[1] == m[4] and said.count(event) < was.count(event), line
            assert (int(m[2]), int(m[3])) == (sum(e[0] == m[1] for e in was), sum(e[0] == m[1] for e in said)), line
            places = [i for i, e in enumerate(was) if e == event]
            if m[7] is None:
                assert places[0] == 0, line
            else:
                assert any(i > 0 and was[i - 1] == (m[7], m[8], int(m[9])) for i in places), line
        elif line.startswith("think: the run recorded every event you listed"):
            assert said != was and sorted(said) == sorted(was), line
        else:
            assert re.fullmatch(r"think: a \w+ event's count is .+|think: a call the guard sees passes.+", line), line
