"""The baseline as plain sync code: the same loop and guard as :mod:`.bare`, no event loop."""

from __future__ import annotations

import json

from .. import common
from .bare import GRANTED, Halt

NAME = "bare Python loop, sync"
STYLE = "sync"
IMPORTS = ("json",)

TOOLS = {
    "read_ticket": ("ticket.read", common.read_ticket_body),
    "finish_review": ("review.finish", common.finish_review_body),
}


def model(messages: list[dict]) -> dict:
    name, text = common.next_step()
    if name:
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": f"call-{len(messages)}", "name": name, "arguments": common.ARGUMENTS}],
        }
    return {"role": "assistant", "content": text, "tool_calls": []}


def run_loop(prompt: str) -> tuple[str | None, int]:
    counts = {"model": 0, "tool": 0}
    seen: dict[str, int] = {}
    events: list[tuple[str, str, int]] = []
    messages = [{"role": "system", "content": common.INSTRUCTIONS}, {"role": "user", "content": prompt}]
    for _ in range(common.MODEL_CALLS + 1):
        if counts["model"] >= common.MODEL_CALLS:
            raise Halt("ModelBudget")
        counts["model"] += 1
        events.append(("ModelCall", "model", counts["model"]))
        reply = model(messages)
        messages.append(reply)
        if not reply["tool_calls"]:
            return reply["content"], counts["model"]
        for call in reply["tool_calls"]:
            capability, body = TOOLS[call["name"]]
            args = json.loads(call["arguments"])
            key = call["name"] + ":" + json.dumps(args, sort_keys=True)
            if capability not in GRANTED:
                raise Halt("PermissionDenied")
            if counts["tool"] >= common.TOOL_CALLS:
                raise Halt("ToolBudget")
            if seen.get(key, 0) >= 1:
                raise Halt("RepeatedCall")
            counts["tool"] += 1
            seen[key] = seen.get(key, 0) + 1
            events.append(("ToolCall", call["name"], counts["tool"]))
            try:
                result = body(**args)
            except Exception as exc:
                result = f"error: {exc}"
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    return None, counts["model"]


def make():
    def run():
        state = common.RunState()
        token = common.current.set(state)
        try:
            text, model_calls = run_loop(common.PROMPT)
        finally:
            common.current.reset(token)
        return common.reported(state, model_calls, text)

    return run
