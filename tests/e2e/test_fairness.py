"""Event-loop fairness: while one call sends a shape that used to hold the loop for 0.5 to 3.2 s, a health check and
a small call still answer within 100 ms.

This is the one latency assertion in the suite, because it is the requirement itself (kubelet's probe timeout is
1 s). It is made robust for a loaded machine: probes go out every 10 ms without waiting for each other, so a stall
delays every probe sent during it, and the assertion is on the median of those probes, with a 100 ms bound against
a baseline of a few milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from bench.bench_loop_stall import SHAPES, probe
from tests.support import ServerProcess, start_server_process, stop_server_process

BOUND_SECONDS = 0.1


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    running = start_server_process()
    yield running
    stop_server_process(running)


@pytest.mark.parametrize("shape", list(SHAPES.values()), ids=list(SHAPES))
async def test_one_heavy_call_does_not_hold_the_event_loop(
    server: ServerProcess, shape: Callable[[], tuple[str, object]]
) -> None:
    method, request = shape()
    measured = await probe(server.target, method, request)
    assert measured.health, "no probe overlapped the heavy call"
    assert measured.health_median < BOUND_SECONDS, measured
    assert measured.small_call_median < BOUND_SECONDS, measured
