"""Serve the tiny reviewer model on llama.cpp's own server, in the foreground, for a live run.

Usage:
    make real-server                  # once: builds llama-server (10 to 30 minutes on 2 cores, cached)
    python scripts/real_model.py      # or `make real-model`; PORT=N picks the port (default 8080)

It writes the reviewer (``tests/tiny_gguf.py --reviewer``: about 78k weights,
all but 329 of them zero, set by hand, that reads ticket 42, finishes its
review, then answers; no download) next to the build, starts ``llama-server`` on 127.0.0.1 with the
flags the tests use (``--jinja`` for tool calls, one thread, one slot,
temperature 0), and prints the profile to give labkit. Ctrl+C stops it.
Appendix A (``notebooks/appendix_a_real_model.ipynb``) walks through it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import real_servers  # noqa: E402  (the tests' own way to find the build and start a server)


def main(argv: list[str]) -> int:
    port = int(argv[0]) if argv else int(os.environ.get("PORT") or 8080)
    build = real_servers.find_build()
    if build is None:
        print(
            f"llama-server is not built yet: run `make real-server` first (10 to 30 minutes on 2 cores; "
            f"it is cached in {real_servers.build_dir()})",
            file=sys.stderr,
        )
        return 1
    model = real_servers.write_model(build, real_servers.build_dir() / "tiny-reviewer.gguf", reviewer=True)
    command, env = real_servers._command("llama-server", build, model, port)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=2):
            print(f"something already answers at {base_url}: stop it, or pick another port (PORT=N)", file=sys.stderr)
            return 1
    except (urllib.error.URLError, OSError):
        pass
    print(f"serving the tiny reviewer at {base_url} (Ctrl+C stops it)")
    print(f"  labkit run complete --live --base-url {base_url} --model tiny")
    print(f"  or in Python: labkit.LiveProfile(base_url={base_url!r}, model='tiny')")
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # a plain kill stops the server too
    try:
        return server.wait()
    except KeyboardInterrupt:
        server.terminate()
        server.wait(timeout=30)
        print("\nstopped")
        return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
