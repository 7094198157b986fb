"""What the server adds per call, as ratios measured in the same run.

1. The metrics interceptor: VerifyResponse through the full server vs the same server built without the interceptor.
2. The whole service vs a bare grpc.aio echo of the same request: the fixed cost of our layers (decode, domain types,
   verification, encode) relative to what grpc.aio costs anyway.

Calls are sequential over one channel, so the figure is latency per call, not throughput under load.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import grpc
import grpc.aio
from prometheus_client import CollectorRegistry

from verdict.config.keys import Config
from verdict.metrics import Metrics
from verdict.rpc import SERVICE_NAME, VerdictServicer, method_handlers
from verdict.server.assembly import build_components
from verdict.server.interceptors.observe import MetricsInterceptor
from verdict.v1 import verdict_pb2, verdict_pb2_grpc

CALLS = 400
REQUEST = verdict_pb2.VerifyResponseRequest(
    text="Here is the fix:\n\n```python\ndef add(a, b):\n    return a + b\n```\n\nand the config:\n\n```json\n"
    '{"retries": 3}\n```\n',
    finish_reason="stop",
)


async def _serve(interceptor: bool) -> tuple[grpc.aio.Server, int, Any]:
    config = Config(grpc_address="127.0.0.1:0", metrics_address="")
    metrics = Metrics(CollectorRegistry())
    components = build_components(config, metrics, {})
    server = grpc.aio.server(interceptors=[MetricsInterceptor(metrics)] if interceptor else [])
    server.add_registered_method_handlers(
        SERVICE_NAME, method_handlers(VerdictServicer(components.verifier, components.evaluations))
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, port, components


async def _echo_server() -> tuple[grpc.aio.Server, int]:
    async def echo(request: bytes, context: Any) -> bytes:
        return request

    handler = grpc.method_handlers_generic_handler(
        SERVICE_NAME, {"VerifyResponse": grpc.unary_unary_rpc_method_handler(echo)}
    )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, port


async def _time_calls(port: int, raw: bool = False) -> float:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        if raw:
            call = channel.unary_unary(f"/{SERVICE_NAME}/VerifyResponse")
            payload: Any = REQUEST.SerializeToString()
        else:
            call = verdict_pb2_grpc.VerdictServiceStub(channel).VerifyResponse
            payload = REQUEST
        for _ in range(50):
            await call(payload)
        started = time.perf_counter()
        for _ in range(CALLS):
            await call(payload)
        return (time.perf_counter() - started) / CALLS


async def _measure() -> dict[str, float]:
    results: dict[str, float] = {}
    for name, interceptor in (("with interceptor", True), ("without interceptor", False)):
        server, port, components = await _serve(interceptor)
        results[name] = await _time_calls(port)
        await server.stop(0)
        await components.aclose()
    server, port = await _echo_server()
    results["echo"] = await _time_calls(port, raw=True)
    await server.stop(0)
    return results


def run() -> Iterator[str]:
    results = asyncio.run(_measure())
    yield (
        f"VerifyResponse (python + json block, incl. bash-free checks), {CALLS} sequential calls: "
        f"with metrics interceptor / without = {results['with interceptor'] / results['without interceptor']:.2f}x"
    )
    overhead = results["with interceptor"] / results["echo"]
    yield f"full VerifyResponse / bare grpc.aio echo of the same bytes = {overhead:.2f}x"
