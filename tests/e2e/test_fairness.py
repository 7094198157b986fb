"""Event-loop fairness: while one call sends a shape that used to hold the loop for 0.5 to 3.2 s, a health check and
a small call still answer within 100 ms.

This is the one latency assertion in the suite, because it is the requirement itself (kubelet's probe timeout is
1 s). It is made robust for a loaded machine: probes go out every 10 ms without waiting for each other, so a stall
delays every probe sent during it, and the assertion is on the median of those probes, with a 100 ms bound against
a baseline of a few milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import grpc
import grpc.aio
import pytest
from grpc_status import rpc_status

from bench.bench_loop_stall import SHAPES, probe
from tests.support import Running, ServerProcess, start_server_process, stop_server_process
from verdict.v1 import verdict_pb2

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


async def test_work_moved_off_the_loop_answers_as_it_did_on_it(running: Running) -> None:
    """A big request takes the off-loop path (config parsed and context converted in the parse pool): its answers and
    errors must be exactly those of a small request."""
    padding = "\n".join(f"# comment line {i}" for i in range(400))
    bad_yaml = f"type: output_numeric\noperator: about\ntarget: 3\n{padding}"
    big_context: dict[str, Any] = {"context": {f"k{i}": i for i in range(3000)}, "captured": {"n": {"output": "7"}}}
    request = verdict_pb2.EvaluateRequest(config=verdict_pb2.EvaluatorConfig(yaml=bad_yaml), output="5")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await running.stub.Evaluate(request, timeout=30)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    status = rpc_status.from_call(caught.value)
    assert status is not None
    assert "operator" in status.message
    good_yaml = f"type: output_numeric\noperator: ge\ntarget: 3\nsource: ${{captured.n.output}}\n{padding}"
    request = verdict_pb2.EvaluateRequest(config=verdict_pb2.EvaluatorConfig(yaml=good_yaml), output="1")
    request.context.update(big_context)
    assert request.ByteSize() > 16 * 1024
    response = await running.stub.Evaluate(request, timeout=30)
    assert response.verdict == "yes"
    assert response.details["value"] == 7
