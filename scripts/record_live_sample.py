"""Record one live run of ``complete`` on llama.cpp's server with the tiny reviewer, for appendix A.

Usage:
    make real-server                        # once: builds llama-server (cached outside the repository)
    python scripts/record_live_sample.py    # writes labkit/teaching/data/live_complete.json

Appendix A shows this recording when no server answers, labelled as a recording, so that a learner
without a server still sees what a live run looks like: the server's own tool-call ids, the
arguments as the text the model wrote, the results, the final text. ``tests/test_real_server.py``
runs the same live run again and checks that the recording still says what the server does (the
same events, the same status, the same texts; only the ids, which the server draws at random,
differ).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "labkit" / "teaching" / "data" / "live_complete.json"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import labkit  # noqa: E402


def record(outcome: labkit.RunOutcome, server: str) -> dict:
    """What appendix A shows of a live run: status, exit code, events, and the transcript after the prompt."""
    return {
        "recorded on": server,
        "status": outcome.status.value,
        "exit_code": outcome.exit_code,
        "text": outcome.text,
        "events": [[e.kind.value, e.name, e.count] for e in outcome.events],
        "transcript": [
            {
                "role": message.role.value,
                "text": message.text,
                "tool_calls": [[c.name, c.arguments, c.id] for c in message.tool_calls],
            }
            for message in outcome.transcript[2:]
        ],
    }


def comparable(sample: dict) -> dict:
    """``sample`` without what the server draws at random (its tool-call ids) or names (its label)."""
    return {
        **{k: v for k, v in sample.items() if k not in ("transcript", "recorded on")},
        "transcript": [
            {**m, "tool_calls": [[name, arguments] for name, arguments, _ in m["tool_calls"]]}
            for m in sample["transcript"]
        ],
    }


def live_run(base_url: str) -> labkit.RunOutcome:
    profile = labkit.LiveProfile(base_url=base_url, model="tiny", timeout_s=120)
    return labkit.run("complete", transport=labkit.LiveTransport(profile))


def main() -> int:
    import real_servers

    build = real_servers.find_build()
    if build is None:
        print("llama-server is not built yet: run `make real-server` first", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as folder:
        model = real_servers.write_model(build, Path(folder) / "tiny-reviewer.gguf", reviewer=True)
        server = real_servers.start("llama-server", build, model, Path(folder))
        try:
            outcome = live_run(server.base_url)
        finally:
            server.stop()
    SAMPLE.parent.mkdir(exist_ok=True)
    sample = record(outcome, "llama.cpp's llama-server, the tiny reviewer (make real-model)")
    SAMPLE.write_text(json.dumps(sample, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {SAMPLE.relative_to(ROOT)}: {outcome.status.value}, {len(outcome.events)} events")
    return 0


if __name__ == "__main__":
    sys.exit(main())
