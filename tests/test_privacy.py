"""Arguments and signatures never leave the scope's memory (docs/guarantees.md, *Privacy of events*).

A secret-looking argument goes through admitted calls, a repetition halt and
a binding failure; it must not appear in the events, their DataFrame, the
counters, the outcome's summary, the console output or any log record
(captured at DEBUG, asyncio's included).
"""

from __future__ import annotations

import asyncio
import logging

import pytest
from reliability_kit import CAP, build, go

import labkit.cli
from labkit import Call, Limits, RunStatus, ScriptedTransport, canonical, signature
from labkit.teaching.frames import counters_frame, events_frame, outcomes_frame

SECRET = "sk-live-7f3a9c1e5b2d4f6a8c0e"
SECRET_ID = 918273645546372819


def _leaks(text: str) -> list[str]:
    found = [s for s in (SECRET, str(SECRET_ID), canonical(SECRET)) if s in text]
    found += [
        s for s in (signature("lookup", {"key": SECRET}), signature("read_ticket", {"input": SECRET_ID})) if s in text
    ]
    return found


def test_secret_arguments_stay_out_of_events_frames_and_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)

    async def lookup(key: str) -> str:
        return "found"

    script = [
        Call("lookup", {"key": SECRET}),
        Call("lookup", {"key": SECRET, "unexpected": SECRET}),  # a binding failure that mentions it twice
        Call("lookup", {"key": SECRET}),  # a repetition: halted
    ]
    agent, _, scope = build(script, {"lookup": lookup}, limits=Limits(repetitions=1))

    outcome = asyncio.run(go(agent))

    assert outcome.status is RunStatus.REPEATED_CALL
    assert any(SECRET in (c.arguments) for m in outcome.transcript for c in m.tool_calls)  # it did flow
    surfaces = {
        "events": repr(outcome.events) + " ".join(map(str, outcome.events)),
        "events json": " ".join(e.model_dump_json() for e in outcome.events),
        "events frame": events_frame(outcome).to_string() + events_frame(outcome).to_json(),
        "counters frame": counters_frame(outcome).to_string(),
        "outcomes frame": outcomes_frame({"run": outcome}).to_string(),
        "outcome": str(outcome) + repr(outcome.status) + repr(outcome.usage),
        "scope": repr(scope),
        "logs": caplog.text + " ".join(str(r.args) for r in caplog.records),
    }
    for surface, text in surfaces.items():
        assert _leaks(text) == [], surface


def test_secret_arguments_stay_out_of_the_console(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    real_prepare = labkit.cli.prepare

    def prepare_with_secret(scenario: str, **options: object):  # the console's own path, another model
        secret_model = ScriptedTransport(
            [Call("read_ticket", {"input": SECRET_ID}), Call("read_ticket", f'{{"input": "{SECRET}"}}')]
            + [Call("read_ticket", {"input": SECRET_ID})]
        )
        return real_prepare(scenario, **{**options, "transport": secret_model})

    monkeypatch.setattr(labkit.cli, "prepare", prepare_with_secret)
    for argv in (["run", "repeat"], ["run", "repeat", "--json"], ["run", "repeat", "--simple"]):
        code = labkit.cli.main(argv)
        captured = capsys.readouterr()
        assert code == 2
        assert "RepeatedCall" in captured.out
        assert _leaks(captured.out + captured.err) == [], argv
    assert _leaks(caplog.text) == []


def test_halt_messages_name_limits_not_arguments() -> None:
    from labkit import ExecutionScope, RunHalted

    scope = ExecutionScope(Limits(repetitions=1, tool_calls=1), {CAP})

    def lookup(key: str) -> str:
        return "found"

    tool = scope.tool("lookup", CAP, lookup)
    tool.invoke({"key": SECRET})
    for args in ({"key": SECRET}, {"key": SECRET + "x"}):
        with pytest.raises(RunHalted) as halt:
            tool.invoke(args)
        assert _leaks(str(halt.value)) == []
