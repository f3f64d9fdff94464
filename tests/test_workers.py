"""labkit.core._machinery.workers: sync bodies on a worker pool that a stuck body never holds (docs/guarantees.md)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading

import pytest

import labkit
from labkit import Call, CountingClient, ExecutionScope, Limits, RunStatus, ScriptedTransport, SimpleAgent, run_sync
from labkit.core._machinery.workers import run_body


def _thread_name() -> int:
    return threading.get_ident()


def test_an_idle_worker_is_reused() -> None:
    async def one_after_another() -> set[int]:
        return {await run_body(_thread_name, {}) for _ in range(20)}

    # idle workers left by earlier tests may take a call too (any idle worker may): count new threads
    before = {thread.ident for thread in threading.enumerate() if thread.name == "labkit-worker"}
    used = run_sync(one_after_another())
    assert threading.get_ident() not in used
    assert len(used - before) <= 1  # twenty calls in a row: at most one new worker, then it is reused


def test_a_stuck_body_never_holds_the_next_call() -> None:
    release = threading.Event()

    def stuck() -> int:
        release.wait(30)
        return threading.get_ident()

    async def main() -> int:
        task = asyncio.ensure_future(run_body(stuck, {}))
        await asyncio.sleep(0.01)  # the stuck body holds its worker now
        try:
            return await asyncio.wait_for(run_body(_thread_name, {}), 10)
        finally:
            task.cancel()

    try:
        other = run_sync(main())
    finally:
        release.set()
    assert other != threading.get_ident()


class _Custom(BaseException):
    pass


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (ValueError("v"), ValueError),
        (StopIteration(), RuntimeError),  # a future refuses StopIteration: it arrives as the cause of a RuntimeError
        (StopAsyncIteration(), StopAsyncIteration),
        (GeneratorExit(), GeneratorExit),
        (_Custom(), _Custom),
        (KeyboardInterrupt(), KeyboardInterrupt),
        (SystemExit(3), SystemExit),
        (asyncio.CancelledError(), asyncio.CancelledError),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, BaseException) else "",
)
def test_every_exception_class_settles_the_call(raised: BaseException, expected: type[BaseException]) -> None:
    def body() -> None:
        raise raised

    async def call() -> str:
        try:
            await asyncio.wait_for(run_body(body, {}), 10)  # a call left unsettled would time out here
        except expected as exc:
            if expected is RuntimeError:
                assert exc.__cause__ is raised
            return "settled"
        except TimeoutError:
            return "left waiting"
        return "returned"

    # KeyboardInterrupt and SystemExit leave the loop as they would from a task, so run the call in a thread
    result: list[object] = []

    def in_thread() -> None:
        try:
            result.append(asyncio.run(call()))
        except expected:
            result.append("settled")

    thread = threading.Thread(target=in_thread)
    thread.start()
    thread.join(30)
    assert result == ["settled"]


def test_a_stuck_body_in_a_run_does_not_hold_the_next_run() -> None:
    release = threading.Event()

    def stubborn(input: int) -> str:
        release.wait(30)
        return "late"

    def quick(input: int) -> str:
        return "quick"

    def one_run(body) -> labkit.RunOutcome:
        scope = ExecutionScope(Limits(deadline_s=0.2), {"x"})
        tool = scope.tool("slow", "x", body)
        transport = ScriptedTransport([Call("slow", {"input": 1}), "done"])
        agent = SimpleAgent(CountingClient(transport, scope), [tool], instructions="go")
        return run_sync(labkit.run_agent(agent, "go", is_complete=lambda: True))

    try:
        first = one_run(stubborn)
        second = one_run(quick)
    finally:
        release.set()
    assert first.status is RunStatus.DEADLINE_EXCEEDED
    assert second.status is RunStatus.COMPLETED


_STUCK_AT_EXIT = textwrap.dedent(
    """
    import threading, time
    import labkit
    from labkit import Call, CountingClient, ExecutionScope, Limits, ScriptedTransport, SimpleAgent

    def stuck(input: int) -> str:
        threading.Event().wait()  # never returns
        return "never"

    scope = ExecutionScope(Limits(deadline_s=0.1), {"x"})
    tool = scope.tool("stuck", "x", stuck)
    transport = ScriptedTransport([Call("stuck", {"input": 1}), "done"])
    agent = SimpleAgent(CountingClient(transport, scope), [tool], instructions="go")
    print(labkit.run_sync(labkit.run_agent(agent, "go", is_complete=lambda: True)).status, flush=True)
    """
)


def test_a_stuck_body_does_not_hold_interpreter_exit() -> None:
    # a process held at exit by its stuck worker would never end: subprocess.run raises TimeoutExpired
    done = subprocess.run([sys.executable, "-c", _STUCK_AT_EXIT], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "DeadlineExceeded"
