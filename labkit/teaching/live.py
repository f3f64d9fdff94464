"""Appendix A's lines about a live run, in the notebook's language: what was sent, what came back, or why nothing ran.

The appendix runs the chapters' scenarios against a real model server. What the
server and the model exchange is data and stays as it was sent (the system
prompt, the tools' descriptions, the model's text); what the appendix says about
it (a run that could not start, a cell skipped, a run's summary) is shown here,
through the catalogue, so that the French edition prints French.

Core-light: the standard library and labkit's core only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..core.errors import ConfigurationError, MissingExtraError
from ..loops.outcome import RunOutcome, RunStatus
from . import one_line
from .i18n import N_, _, decimal, ngettext

__all__ = [
    "describe",
    "run_live",
    "same_status",
    "show_recorded",
    "show_tools",
    "show_transcript",
    "skipped",
    "summary",
]

_RECORDED_ON = (N_("llama.cpp's llama-server, the tiny reviewer (make real-model)"),)
"""The recording's ``"recorded on"`` words (``labkit/teaching/data/live_complete.json``), shown translated."""


def describe(profile: Any) -> str:
    """A :class:`~labkit.LiveProfile` in one line: model, address, where the key comes from (never the key),
    timeout and retries, as ``profile.describe()`` says it for the console, in the notebook's language."""
    key = _("key from ${env}").format(env=profile.api_key_env) if profile.api_key_env else _("no key")
    return _("model {model} at {url}, {key}, timeout {timeout} s, retries {retries}").format(
        model=profile.model,
        url=profile.base_url,
        key=key,
        timeout=decimal(profile.timeout_s),
        retries=profile.max_retries,
    )


def show_tools(request: Any) -> None:
    """Print the tools a chat request offers the model, each with its arguments' schema, and the output cap.
    The tools' names and descriptions are printed as sent (the model reads them in English)."""
    for tool in request.tools:
        print(f"{tool.name}: {tool.description}")
        print("    " + _("arguments: {schema}").format(schema=tool.parameters))
    print(_("output cap per call (max_tokens): {cap}").format(cap=request.max_output_tokens))


def run_live(name: str, profile: Any, **options: Any) -> RunOutcome | None:
    """Scenario ``name`` run against the server of ``profile`` (a :class:`~labkit.LiveProfile`), or ``None``,
    with one line saying why, when it cannot run: the live extra or its configuration is missing, no server
    answers at the profile's address, or the server answered with a failure before any tool ran."""
    from ..loops.runner import run
    from ..transports.live import LiveTransport  # imported where a live run is asked for

    try:
        outcome = run(name, transport=LiveTransport(profile), **options)
    except (ConfigurationError, MissingExtraError) as exc:
        print(_("Not run: {reason}").format(reason=one_line(exc)))
        return None
    if outcome.status is RunStatus.PROVIDER_UNAVAILABLE and outcome.count("ToolCall") == 0:
        if "cannot reach" in (outcome.hint or ""):
            print(_("No live run: no server answers at {url}.").format(url=profile.base_url))
            print(_("Start one (section 2), then run this cell again."))
        else:  # a server that started but failed: its own message
            print(_("No live run: the server failed: {hint}").format(hint=outcome.hint))
        return None
    return outcome


def skipped() -> None:
    """Print why a cell that reads the live run shows nothing: there is no live run."""
    print(_("Skipped: no live run (section 4)."))


_LIVE_SAME = N_(
    "True when your model's live run ended with the scripted run's status: the host's grants or limits"
    " decided it, or your model did what the script does; False when your model decided otherwise"
)
"""What ``same_status``'s values mean when they come from live runs (the stand-in's: ``"host's side"``)."""


def same_status(
    runs: Mapping[str, RunOutcome], names: Sequence[str], *, stand_in: Callable[[], Any]
) -> tuple[dict[str, bool], str]:
    """For each scenario of ``names``, whether it ended with its scripted run's status, read from what ran,
    and what those values mean (a ``meaning`` for :func:`labkit.compare`).

    When every one of them ran live (``runs`` holds ``"NAME, live"`` beside ``"NAME, scripted"``, as
    appendix A's table does), the answer is the live runs' own; else each scenario is run again with
    ``stand_in()`` as its transport (a model that follows its instructions). One line says which runs
    the answer comes from."""
    from ..loops.runner import run

    if names and all(f"{name}, live" in runs and f"{name}, scripted" in runs for name in names):
        print(_("Compared with the live runs of the table above (your server's model)."))
        same = {name: runs[f"{name}, live"].status == runs[f"{name}, scripted"].status for name in names}
        return same, _LIVE_SAME
    print(_("No live runs to compare with: compared with the stand-in, run here."))
    return {name: run(name, transport=stand_in()).status == run(name).status for name in names}, "host's side"


def summary(outcome: RunOutcome, *, text: bool = False, beside: RunOutcome | None = None) -> str:
    """A live run in one line: ``"Completed (exit 0): 3 model calls, 2 tool calls"``; with ``text``, a second
    line with its text (or that it was withheld); with ``beside`` (the same scenario run another way, e.g.
    plain beside streamed), whether the two recorded the same events."""
    models, tools = outcome.count("ModelCall"), outcome.count("ToolCall")
    calls = _("{models}, {tools}").format(
        models=ngettext("{n} model call", "{n} model calls", models).format(n=models),
        tools=ngettext("{n} tool call", "{n} tool calls", tools).format(n=tools),
    )
    line = _("{status} (exit {code}): {calls}").format(status=outcome.status.value, code=outcome.exit_code, calls=calls)
    if beside is not None:
        same = _("yes") if outcome.events == beside.events else _("no")
        line += _("; the same events as the other run: {same}").format(same=same)
    if text:
        shown = _("withheld") if outcome.text is None else repr(outcome.text)
        line += "\n" + _("text: {text}").format(text=shown)
    return line


def show_transcript(messages: Any) -> None:
    """Print a transcript after its prompt, one message a line (``assistant: read_ticket {...} (id ...)``):
    messages of a run (:class:`~labkit.Message`), or of the recording (``{"role", "text", "tool_calls"}``)."""
    for message in messages:
        if isinstance(message, dict):
            role, text = message["role"], message["text"]
            calls = "; ".join(f"{name} {arguments} (id {id_})" for name, arguments, id_ in message["tool_calls"])
        else:
            role, text = message.role.value, message.text
            calls = "; ".join(f"{c.name} {c.arguments} (id {c.id})" for c in message.tool_calls)
        print(f"{role:>9}: {calls or text}")


def show_recorded(recorded: dict[str, Any]) -> None:
    """Print the recorded live run (:func:`labkit.teaching.recorded.live_complete`): where it was recorded,
    its status, exit code and text, then its transcript."""
    where = recorded["recorded on"]
    print(_("recorded on {where}").format(where=_(where)))
    print(
        _("{status} (exit {code}), text: {text}").format(
            status=recorded["status"], code=recorded["exit_code"], text=repr(recorded["text"])
        )
    )
    show_transcript(recorded["transcript"])
