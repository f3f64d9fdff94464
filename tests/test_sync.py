"""labkit.core._machinery.sync: a sync run reuses its thread's event loop, and nothing else survives the run."""

from __future__ import annotations

import asyncio
import contextvars
import os
import signal
import subprocess
import sys
import textwrap
import threading

import pytest
from support import sigint_as_in_a_terminal

import labkit
from labkit import RunStatus, run_sync

_marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="unset")


async def _loop_of_this_run() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


def test_runs_in_one_thread_share_a_loop_and_other_threads_get_their_own() -> None:
    first, second = run_sync(_loop_of_this_run()), run_sync(_loop_of_this_run())
    other: list[asyncio.AbstractEventLoop] = []
    thread = threading.Thread(target=lambda: other.append(run_sync(_loop_of_this_run())))
    thread.start()
    thread.join()
    assert first is second
    assert other[0] is not first
    assert not first.is_closed() and not first.is_running()


def test_a_context_variable_set_in_a_run_stays_in_that_run() -> None:
    async def set_and_read() -> str:
        seen = _marker.get()
        _marker.set("set by the run")
        return seen

    token = _marker.set("caller")
    try:
        assert run_sync(set_and_read()) == "caller"  # each run starts from a copy of the caller's context
        assert run_sync(set_and_read()) == "caller"  # not from what the previous run left
        assert _marker.get() == "caller"
    finally:
        _marker.reset(token)


def test_a_task_left_behind_is_cancelled_before_the_run_returns() -> None:
    cancelled = threading.Event()

    async def forever() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def leaves_a_task() -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(forever())
        await asyncio.sleep(0)  # let it start waiting
        return task

    task = run_sync(leaves_a_task())
    assert cancelled.is_set() and task.cancelled()
    assert not asyncio.all_tasks(run_sync(_loop_of_this_run()))


def test_a_failed_run_leaves_a_working_loop() -> None:
    async def fails() -> None:
        asyncio.get_running_loop().create_task(asyncio.sleep(60))
        raise ValueError("the run failed")

    with pytest.raises(ValueError, match="the run failed"):
        run_sync(fails())
    loop = run_sync(_loop_of_this_run())
    assert not asyncio.all_tasks(loop)
    assert labkit.run("complete").status is RunStatus.COMPLETED


def test_no_event_loop_is_installed_for_the_thread() -> None:
    def in_a_fresh_thread() -> None:
        run_sync(_loop_of_this_run())
        with pytest.raises(RuntimeError):  # asyncio.run would leave none either: no loop outlives the call as "current"
            asyncio.get_event_loop_policy().get_event_loop()

    failures: list[BaseException] = []

    def target() -> None:
        try:
            in_a_fresh_thread()
        except BaseException as exc:
            failures.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    assert not failures, failures


_INTERRUPTED_THIRD_RUN = textwrap.dedent(
    """
    import asyncio
    from labkit import ChatChunk, Limits, prepare, run

    class Waiting:
        name = "waiting"
        cancelled = False

        async def send(self, request):
            print("ready", flush=True)
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                Waiting.cancelled = True
                raise
            yield ChatChunk(text="never")

    print(run("complete").status, run("complete").status, flush=True)  # two runs on the kept loop
    setup = prepare("deadline", limits=Limits(deadline_s=30), transport=Waiting())
    try:
        run(setup)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    print(f"transport cancelled={Waiting.cancelled} stop={setup.scope.stop_reason}", flush=True)
    print("after:", run("complete").status, flush=True)  # the next run gets a working loop
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process")
def test_ctrl_c_cancels_a_run_on_the_kept_loop() -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", _INTERRUPTED_THIRD_RUN],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=sigint_as_in_a_terminal,
    )
    try:
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("ready"):
                break
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert lines[0].strip() == "Completed Completed"
    assert "interrupted" in out
    assert "transport cancelled=True stop=None" in out
    assert "after: Completed" in out
