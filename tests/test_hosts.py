"""Chapter 7's host exercise: a host still ``...`` is neither run nor judged (labkit.teaching.hosts)."""

from __future__ import annotations

import pytest

import labkit
from labkit.teaching.hosts import check_hosts, written

REREADER = [
    labkit.Call("read_ticket", {"input": 42}),
    labkit.Call("read_ticket", {"input": 42}),
    labkit.Call("finish_review", {"input": 42}),
    "Review finished.",
]
ENDINGS = {"Completed": 3, "RepeatedCall": 1, "ToolBudget": 2, "ModelBudget": 3}


def _runs(hosts: dict[str, object]) -> dict[str, labkit.RunOutcome]:
    return {
        ending: labkit.run(labkit.Scenario("re-reader", "reads 42 twice", REREADER, limits))
        for ending, limits in written(hosts).items()
    }


def test_no_host_written_gives_guidance_and_no_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    runs = _runs(dict.fromkeys(ENDINGS, ...))
    assert runs == {}
    assert "no host yet for Completed, RepeatedCall, ToolBudget, ModelBudget" in capsys.readouterr().out
    shown = str(check_hosts(runs, ENDINGS))
    assert shown.startswith("no hosts yet")
    assert "right" not in shown and "not this time" not in shown


def test_written_hosts_are_checked_and_the_others_named(capsys: pytest.CaptureFixture[str]) -> None:
    hosts = dict.fromkeys(ENDINGS, ...)
    hosts["Completed"] = labkit.Limits(repetitions=2)  # right: the second read is admitted
    hosts["ModelBudget"] = labkit.Limits()  # wrong: the default ends RepeatedCall
    runs = _runs(hosts)
    assert list(runs) == ["Completed", "ModelBudget"]
    capsys.readouterr()
    result = check_hosts(runs, ENDINGS)
    assert "no host yet for RepeatedCall, ToolBudget" in capsys.readouterr().out
    by_label = {label: c.right for label, c in result}
    assert by_label == {"Completed": True, "ModelBudget": False}


def test_a_host_that_is_not_limits_is_one_clear_error() -> None:
    with pytest.raises(labkit.InputError, match="write it as a labkit.Limits"):
        written({"Completed": {"repetitions": 2}})
