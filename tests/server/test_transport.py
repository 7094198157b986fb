"""grpc-core's own call counts (channelz) reach `verdict_transport_calls_total`, calls the application refused and
calls it never saw alike."""

from __future__ import annotations

from typing import Any

import grpc
import grpc.aio
import pytest
from prometheus_client import CollectorRegistry

from verdict.metrics import Metrics
from verdict.server.transport import TransportCounts


async def _echo(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
    if request == b"refuse":
        await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "no")
    return request


async def test_every_call_grpc_core_started_is_counted_with_the_failed_ones() -> None:
    registry = CollectorRegistry()
    counts = TransportCounts(Metrics(registry))
    counts.update()  # whatever servers earlier tests left in this process are the baseline
    sample = registry.get_sample_value
    before = {event: sample("verdict_transport_calls_total", {"event": event}) or 0 for event in ("started", "failed")}
    server = grpc.aio.server()
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("t.Echo", {"Call": grpc.unary_unary_rpc_method_handler(_echo)}),)
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            call = channel.unary_unary("/t.Echo/Call")
            assert [await call(payload, timeout=30) for payload in (b"a", b"b")] == [b"a", b"b"]
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await call(b"refuse", timeout=30)
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        counts.update()
        assert (sample("verdict_transport_calls_total", {"event": "started"}) or 0) - before["started"] == 3
        assert (sample("verdict_transport_calls_total", {"event": "failed"}) or 0) - before["failed"] == 1
    finally:
        await server.stop(0)
