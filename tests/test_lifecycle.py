"""The scope owns its run: ``await scope.run(work)`` (labkit.core.lifecycle), with no agent around it.

The runner's tests (test_runner, test_cancellation) hold the same rules through ``run_agent``; these
hold them at the scope itself, with a plain coroutine as the loop.
"""

from __future__ import annotations

import asyncio

import pytest

from labkit import ExecutionScope, Limits, ProviderUnavailable, ScopeStateError, StopReason

LIMITS = Limits(model_calls=2, tool_calls=2, repetitions=1, deadline_s=5)


def _scope(**changes: object) -> ExecutionScope:
    return ExecutionScope(LIMITS.with_(**changes), {"x"})


def test_a_loop_that_returns_ends_with_its_value_and_no_stop() -> None:
    scope = _scope()

    def double(n: int) -> int:
        return 2 * n

    scope.tool("double", "x", double)

    async def work() -> int:
        return 7

    ended = asyncio.run(scope.run(work))
    assert (ended.value, ended.stop, ended.abandoned, ended.provider_error) == (7, None, False, None)
    assert ended.usage.tool_calls == 0 and ended.events == ()
    assert scope.tools == ()  # finished: the scope let go of its tools


def test_a_refused_call_names_the_end_and_withholds_the_value() -> None:
    scope = _scope()

    async def lookup(n: int) -> int:
        return n

    tool = scope.tool("lookup", "x", lookup)

    async def work() -> int:
        await tool.ainvoke({"n": 1})
        await tool.ainvoke({"n": 1})  # the same signature again: RepeatedCall
        return 1

    ended = asyncio.run(scope.run(work))
    assert ended.stop is StopReason.REPEATED_CALL and ended.value is None
    assert [e.kind.value for e in ended.events] == ["ToolCall", "RepeatedCall"]


def test_the_deadline_abandons_a_loop_that_ignores_its_cancellation() -> None:
    scope = _scope(deadline_s=0.05)
    released = asyncio.Event()

    async def work() -> None:
        try:
            await asyncio.sleep(10)
        finally:
            await released.wait()  # ignores the cancellation in its cleanup

    async def main() -> object:
        ended = await scope.run(work)
        released.set()  # the abandoned loop may end now; nothing it does is recorded
        for _ in range(3):
            await asyncio.sleep(0)
        return ended

    ended = asyncio.run(main())
    assert ended.stop is StopReason.DEADLINE_EXCEEDED and ended.abandoned  # type: ignore[attr-defined]


def test_a_provider_failure_is_a_stop_with_its_message() -> None:
    scope = _scope()

    async def work() -> None:
        scope.before_model_call()
        raise ProviderUnavailable("connection refused")

    ended = asyncio.run(scope.run(work))
    assert ended.stop is StopReason.PROVIDER_UNAVAILABLE and ended.provider_error == "connection refused"
    assert [e.kind.value for e in ended.events] == ["ModelCall", "ProviderUnavailable"]


def test_the_caller_wins_over_a_stop_recorded_at_the_same_time() -> None:
    scope = _scope()

    async def lookup(n: int) -> int:
        return n

    tool = scope.tool("lookup", "x", lookup)

    async def main() -> None:
        entered = asyncio.Event()

        async def work() -> None:
            await tool.ainvoke({"n": 1})
            entered.set()
            await asyncio.sleep(10)

        run = asyncio.ensure_future(scope.run(work))
        await entered.wait()
        scope._stop_for(StopReason.DEADLINE_EXCEEDED, "run")  # a stop, recorded as the caller gives up
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run

    asyncio.run(main())
    assert scope.stop_reason is StopReason.DEADLINE_EXCEEDED  # recorded, yet the caller was told it cancelled


def test_a_scope_serves_one_run() -> None:
    scope = _scope()

    async def work() -> int:
        return 1

    asyncio.run(scope.run(work))
    with pytest.raises(ScopeStateError):
        asyncio.run(scope.run(work))
