"""Start and stop real OpenAI-compatible servers for ``tests/test_real_server.py``.

The servers are built once, outside the repository, by ``make real-server``
(``scripts/build_real_server.sh``); :func:`find_build` reads where. Each
server runs on a free 127.0.0.1 port with one thread and one slot, serves the
tiny model ``tests/tiny_gguf.py`` writes, and is stopped by its process id
(``SIGKILL`` at teardown, so open connections are dropped at once).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Build", "RunningServer", "find_build", "start", "write_model"]

VERSION = os.environ.get("LLAMA_CPP_PYTHON_VERSION", "0.3.36")
TEMPLATE = "Qwen-Qwen2.5-7B-Instruct.jinja"  # llama.cpp's server reads it as the Hermes <tool_call> format


def build_dir() -> Path:
    """Where ``make real-server`` puts the build (the same rule as the script)."""
    root = os.environ.get("LABKIT_REAL_SERVER_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "labkit-real-server"
    )
    return Path(root) / VERSION


@dataclass(frozen=True)
class Build:
    """Paths recorded by the build script in its ``READY`` file."""

    llama_server: Path
    lib_dir: Path
    python: Path
    templates: Path


def find_build() -> Build | None:
    """The completed build, or ``None`` when ``make real-server`` has not been run."""
    ready = build_dir() / "READY"
    if not ready.is_file():
        return None
    values = dict(line.split("=", 1) for line in ready.read_text().splitlines() if "=" in line)
    build = Build(*(Path(values[k]) for k in ("llama_server", "lib_dir", "python", "templates")))
    return build if build.llama_server.is_file() and build.python.is_file() else None


def write_model(build: Build, path: Path, *, calls: bool = False, reviewer: bool = False) -> Path:
    """Write the tiny model with the build's own Python (it has the ``gguf`` package).

    ``calls``: the model also asks for tools in llama-cpp-python's function-calling format.
    ``reviewer``: the hand-built model whose replies follow the conversation (read, finish, answer).
    """
    script = Path(__file__).with_name("tiny_gguf.py")
    flags = (["--calls"] if calls else []) + (["--reviewer"] if reviewer else [])
    command = [str(build.python), str(script), str(path), str(build.templates / TEMPLATE)] + flags
    subprocess.run(command, check=True, timeout=120)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class RunningServer:
    """A started server: its API root, its process and its log file."""

    name: str
    base_url: str
    process: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        """Kill the server by its process id and reap it."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)


def _command(kind: str, build: Build, model: Path, port: int) -> tuple[list[str], dict[str, str]]:
    env = dict(os.environ)
    if kind == "llama-server":
        command = [
            str(build.llama_server),
            "-m", str(model), "--jinja", "--host", "127.0.0.1", "--port", str(port),
            "-t", "1", "-np", "1", "-c", "16384", "--temp", "0",
            "--presence-penalty", "25",
        ]  # fmt: skip
        env["LD_LIBRARY_PATH"] = f"{build.lib_dir}:{env.get('LD_LIBRARY_PATH', '')}"
        return command, env
    command = [
        str(build.python), "-m", "llama_cpp.server",
        "--model", str(model), "--host", "127.0.0.1", "--port", str(port),
        "--chat_format", "chatml-function-calling", "--n_threads", "1", "--n_ctx", "16384",
        "--interrupt_requests", "False",  # queue a second client instead of cutting the first one off
    ]  # fmt: skip
    env["LLAMA_CPP_LIB_PATH"] = str(build.lib_dir)
    return command, env


def start(kind: str, build: Build, model: Path, log_dir: Path, *, ready_s: float = 120.0) -> RunningServer:
    """Start ``kind`` (``"llama-server"`` or ``"llama-cpp-python"``) and wait until ``/v1/models`` answers.

    Raises:
        RuntimeError: the server exited or did not answer within ``ready_s``
            (the message ends with its log).
    """
    port = free_port()
    command, env = _command(kind, build, model, port)
    log = log_dir / f"{kind}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    server = RunningServer(kind, f"http://127.0.0.1:{port}/v1", process, log)
    deadline = time.monotonic() + ready_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            with urllib.request.urlopen(f"{server.base_url}/models", timeout=2) as answer:
                if answer.status == 200:
                    return server
        except (urllib.error.URLError, OSError):
            time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"{kind} did not start; its log:\n{log.read_text(errors='replace')[-3000:]}")
