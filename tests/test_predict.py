"""labkit.check / labkit.compare: predictions against runs, including "no guess yet"."""

import pytest

import labkit
from labkit.predict import Checks

REPEAT = labkit.run("repeat")


def test_a_right_prediction():
    c = labkit.check(REPEAT, status="RepeatedCall", tool_calls=1)
    assert c.right and c.guessed
    assert "right" in str(c) and "not this time" not in str(c)


def test_a_wrong_prediction_shows_the_answer():
    c = labkit.check(REPEAT, status="ToolBudget", tool_calls=4)
    assert not c.right
    assert str(c).count("not this time") == 2 and "RepeatedCall" in str(c)


@pytest.mark.parametrize("missing", [..., None])
def test_no_guess_yet_is_friendly_and_keeps_the_answer_hidden(missing):
    c = labkit.check(REPEAT, status=missing, tool_calls=missing)
    assert not c.right and not c.guessed
    text = str(c)
    assert text.count("no guess yet") == 2
    assert "RepeatedCall" not in text


def test_half_a_guess_checks_the_half_given():
    c = labkit.check(REPEAT, status="RepeatedCall", tool_calls=...)
    lines = str(c).splitlines()
    assert "right" in lines[0] and "no guess yet" in lines[1]


def test_several_runs_at_once():
    runs = {"simple": labkit.run("repeat", agent="simple"), "harness": REPEAT}
    checks = labkit.check(runs, status="RepeatedCall", tool_calls=1)
    assert isinstance(checks, Checks) and checks.right
    assert checks["simple"].right and checks["harness"].right
    assert str(checks).startswith("[simple]\n") and "[harness]" in str(checks)
    assert not labkit.check(runs, status="RepeatedCall", tool_calls=2).right


def test_a_status_that_does_not_exist_is_a_clear_error():
    with pytest.raises(ValueError, match="choose one of: Completed"):
        labkit.check(REPEAT, status="Repeated", tool_calls=1)
    with pytest.raises(ValueError, match="whole number"):
        labkit.check(REPEAT, status="RepeatedCall", tool_calls="1")


def test_compare_one_value():
    assert labkit.compare("admitted", 4, 4).right
    assert "not this time" in str(labkit.compare("admitted", 3, 4))
    blank = labkit.compare("admitted", ..., 4)
    assert not blank.right and "no guess yet" in str(blank) and "4" not in str(blank)
