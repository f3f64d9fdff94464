"""No per-run residue in the event loop: sequential runs that never yield leave a bounded number of timers."""

from __future__ import annotations

import asyncio

import labkit
from labkit.runner import TIDY_EVERY


def test_runs_awaited_back_to_back_leave_a_bounded_timer_queue() -> None:
    async def main() -> list[int]:
        loop = asyncio.get_running_loop()
        sizes = []
        for i in range(1, 20 * TIDY_EVERY + 1):
            outcome = await labkit.arun("complete")  # a scripted run: nothing in it yields to the loop
            assert outcome.status is labkit.RunStatus.COMPLETED
            if i % (4 * TIDY_EVERY) == 0:
                sizes.append(len(loop._scheduled))  # type: ignore[attr-defined]  # the loop's timer queue
        return sizes

    sizes = asyncio.run(main())
    # without the periodic yield every run's cancelled deadline timer stays queued: 256, 512, ... 1280
    assert max(sizes) <= 2 * TIDY_EVERY + 100, sizes
