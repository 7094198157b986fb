"""Helper threads get the GIL from a loop that never blocks: a `HandoffPool`'s jobs finish while the loop is kept
busy, the loop looks (and naps) only while jobs are in flight, and the server's default executor (what
`asyncio.to_thread` uses) is such a pool.

The busy loop (`tests.support.busy_loop_until`) never waits in its selector, as a saturated server's loop. With a
plain `ThreadPoolExecutor` the jobs below did not finish in 30 s of it, twice out of two (an idle 2-core machine;
bench/NOTES.md, "Helper threads starved by a busy loop"); with the hand-over they took 0.7 s. The bound here is 120 s.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from typing import Any

import pytest

from tests.support import busy_loop_until, gil_hungry_chains, needs_the_gil_often
from verdict.config.keys import Config
from verdict.handoff import HandoffPool, looks_of
from verdict.server.lifecycle import serve

BUSY_FOR = 120.0
"""Seconds the loop is kept busy at most: a bound the jobs' work (about a second) meets on any machine."""


def test_jobs_finish_while_the_loop_never_blocks() -> None:
    async def main() -> tuple[list[int], int]:
        pool = HandoffPool(2)
        try:
            jobs = asyncio.ensure_future(gil_hungry_chains(pool, chains=2, length=10))
            await busy_loop_until(jobs, BUSY_FOR)
            assert jobs.done(), f"the pool's jobs did not finish in {BUSY_FOR:.0f} s of a busy loop"
            return jobs.result(), looks_of(asyncio.get_running_loop()).naps
        finally:
            pool.shutdown(wait=True)

    totals, naps = asyncio.run(main())
    assert totals == [200, 200]
    assert naps > 0, "the loop never napped while jobs were in flight"


def test_the_loop_looks_only_while_jobs_are_in_flight() -> None:
    async def main() -> tuple[bool, bool, bool]:
        pool = HandoffPool(1)
        loop = asyncio.get_running_loop()
        try:
            looks = looks_of(loop)
            looking_before = looks.looking
            job = loop.run_in_executor(pool, time.sleep, 20 * sys.getswitchinterval())
            looking_at_submit = looks.looking  # no loop turn since the submit: the first look is due
            await job
            # the job ended before its result reached the loop; the next look, due within a switch interval of the
            # last, runs before this sleep ends (timers run in the order they are due) and finds nothing in flight
            await asyncio.sleep(3 * sys.getswitchinterval())
            return looking_before, looking_at_submit, looks.looking
        finally:
            pool.shutdown(wait=True)

    looking_before, looking_at_submit, looking_later = asyncio.run(main())
    assert not looking_before
    assert looking_at_submit
    assert not looking_later  # nothing is scheduled any more


def test_a_job_submitted_outside_a_loop_runs_as_in_any_pool() -> None:
    with HandoffPool(1) as pool:
        assert pool.submit(needs_the_gil_often).result(timeout=60) == 20


def test_a_refused_submission_leaves_nothing_in_flight() -> None:
    async def main() -> bool:
        pool = HandoffPool(1)
        pool.shutdown()
        loop = asyncio.get_running_loop()
        with pytest.raises(RuntimeError):
            await loop.run_in_executor(pool, needs_the_gil_often)
        await asyncio.sleep(3 * sys.getswitchinterval())
        return looks_of(loop).looking

    assert asyncio.run(main()) is False


def test_the_servers_default_executor_is_a_handoff_pool(tmp_path: Any) -> None:
    """`asyncio.to_thread` in the server goes to a `HandoffPool`. The server runs in this process and is stopped by
    the SIGTERM its own handler takes (installed before it reports ready)."""
    seen: dict[str, object] = {}

    def on_ready(record: dict[str, Any]) -> None:
        loop = asyncio.get_running_loop()
        seen["executor"] = loop._default_executor  # type: ignore[attr-defined]  # asyncio has no public getter
        seen["port"] = record["grpc_port"]
        os.kill(os.getpid(), signal.SIGTERM)

    config = Config(grpc_address="127.0.0.1:0", metrics_address="")
    assert asyncio.run(serve(config, on_ready=on_ready)) == 0
    assert isinstance(seen["executor"], HandoffPool)
    assert int(str(seen["port"])) > 0
