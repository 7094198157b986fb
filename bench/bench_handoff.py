"""Helper threads under a loop that never blocks: the same jobs through a `HandoffPool` and through a plain thread pool.

A busy asyncio loop polls its selector with a zero timeout every turn, which hands the GIL back before a waiting
thread can take it, so a helper thread (a child's start, a parse off the loop, `asyncio.to_thread`) can wait for as
long as the loop stays busy (verdict/handoff.py). Each side runs 2 chains of 10 jobs, each job taking the GIL 20 times
(`time.sleep(0)`), beside a loop of two coroutines that spin 1 ms between yields; a side that has not finished within
`BOUND_SECONDS` is reported as such. The hand-over's price is the loop's time spent in naps while the jobs ran.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Iterator

from tests.support import GIL_HAND_BACKS, busy_loop_until, gil_hungry_chains
from verdict.handoff import NAP_SECONDS, HandoffPool, looks_of

BOUND_SECONDS = 10.0
CHAINS, LENGTH = 2, 10


async def _side(pool: concurrent.futures.ThreadPoolExecutor) -> tuple[float | None, int]:
    """Seconds the jobs took beside the busy loop (None: not done within the bound), and the loop's naps."""
    loop = asyncio.get_running_loop()
    started = time.perf_counter()
    jobs = asyncio.create_task(gil_hungry_chains(pool, CHAINS, LENGTH))
    await busy_loop_until(jobs, BOUND_SECONDS)
    elapsed = time.perf_counter() - started if jobs.done() else None
    if not jobs.done():
        jobs.cancel()
        await asyncio.gather(jobs, return_exceptions=True)
    return elapsed, looks_of(loop).naps


def _measure(pool: concurrent.futures.ThreadPoolExecutor) -> tuple[float | None, int]:
    try:
        return asyncio.run(_side(pool))
    finally:
        pool.shutdown(wait=True)  # the busy loop has stopped: starved jobs finish now


def run() -> Iterator[str]:
    jobs = CHAINS * LENGTH
    handed, naps = _measure(HandoffPool(CHAINS))
    plain, _ = _measure(concurrent.futures.ThreadPoolExecutor(CHAINS))

    def said(seconds: float | None) -> str:
        return f"{seconds:.2f} s" if seconds is not None else f"not done in {BOUND_SECONDS:.0f} s"

    yield (
        f"{jobs} jobs of {GIL_HAND_BACKS} GIL hand-backs beside a loop that never blocks: HandoffPool {said(handed)}, "
        f"plain thread pool {said(plain)} (the HandoffPool must finish; a plain pool may not)"
    )
    if handed:
        yield (
            f"  the hand-over's price: {naps} naps of {NAP_SECONDS * 1e6:.0f} us = "
            f"{naps * NAP_SECONDS / handed:.1%} of the loop's time while the jobs ran"
        )
