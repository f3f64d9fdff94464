"""No per-run residue in the event loop: sequential runs that never yield leave a bounded number of timers."""

from __future__ import annotations

import asyncio

import labkit


def test_runs_awaited_back_to_back_leave_a_bounded_timer_queue() -> None:
    async def main() -> list[int]:
        loop = asyncio.get_running_loop()
        sizes = []
        for i in range(1, 1281):
            outcome = await labkit.arun("complete")  # a scripted run: no body or transport in it waits
            assert outcome.status is labkit.RunStatus.COMPLETED
            if i % 256 == 0:
                sizes.append(len(loop._scheduled))  # type: ignore[attr-defined]  # the loop's timer queue
        return sizes

    sizes = asyncio.run(main())
    # each run awaits its loop's own task, so the event loop runs and drops the cancelled deadline
    # timers; if nothing yielded, every run's timer would stay queued: 256, 512, ... 1280
    assert max(sizes) <= 100, sizes
