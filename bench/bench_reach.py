"""What the observation features and the HTTP port cost per call, as ratios measured in the same run.

1. Decision records (file sink, digests only; then with the raw request) vs the same server without a decision log.
2. JSON log lines with an access line per call (written to a file) vs no access line.
3. VerifyResponse over the HTTP port (Connect, binary protobuf, HTTP/1.1 keep-alive) vs over gRPC.

Calls are sequential over one connection, so the figures are latency per call, not throughput under load. Each
figure is the best of three rounds, because the machine is shared and the first round pays for warming caches.
"""

from __future__ import annotations

import asyncio
import http.client
import logging
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import grpc.aio
from prometheus_client import CollectorRegistry

from verdict.config.keys import Config
from verdict.server.assembly import build_server
from verdict.server.logs import configure_logging
from verdict.v1 import verdict_pb2, verdict_pb2_grpc

CALLS = 300
REQUEST = verdict_pb2.VerifyResponseRequest(
    text="Here is the fix:\n\n```python\ndef add(a, b):\n    return a + b\n```\n", finish_reason="stop"
)


async def _per_call(config: Config, call: Callable[[Any, int], Awaitable[None]]) -> float:
    return min([await _round(config, call) for _ in range(3)])


async def _round(config: Config, call: Callable[[Any, int], Awaitable[None]]) -> float:
    app, port = await build_server(config, registry=CollectorRegistry(), env={})
    await app.start()
    try:
        target = app.http.port if app.http is not None else port
        for _ in range(20):  # warm-up
            await call(app, target)
        started = time.perf_counter()
        for _ in range(CALLS):
            await call(app, target)
        return (time.perf_counter() - started) / CALLS
    finally:
        await app.stop(grace=1)


def _grpc_call() -> Callable[[Any, int], Awaitable[None]]:
    channels: dict[int, verdict_pb2_grpc.VerdictServiceStub] = {}

    async def call(app: Any, port: int) -> None:
        stub = channels.get(port)
        if stub is None:
            stub = channels[port] = verdict_pb2_grpc.VerdictServiceStub(grpc.aio.insecure_channel(f"127.0.0.1:{port}"))
        await stub.VerifyResponse(REQUEST, timeout=10)

    return call


def _http_call() -> Callable[[Any, int], Awaitable[None]]:
    body = REQUEST.SerializeToString()
    connections: dict[int, http.client.HTTPConnection] = {}

    def post(port: int) -> None:
        connection = connections.get(port)
        if connection is None:
            connection = connections[port] = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request(
            "POST",
            "/verdict.v1.VerdictService/VerifyResponse",
            body=body,
            headers={"Content-Type": "application/proto"},
        )
        reply = connection.getresponse()
        reply.read()
        assert reply.status == 200, reply.status

    async def call(app: Any, port: int) -> None:
        await asyncio.to_thread(post, port)

    return call


async def _measure() -> list[str]:
    lines = []
    with tempfile.TemporaryDirectory() as scratch:
        base = {"grpc_address": "127.0.0.1:0", "metrics_address": "", "access_log_level": "OFF"}
        plain = await _per_call(Config(**base), _grpc_call())  # type: ignore[arg-type]
        digests = await _per_call(
            Config(**base, decision_log="file", decision_log_path=f"{scratch}/d.log"),  # type: ignore[arg-type]
            _grpc_call(),
        )
        raw = await _per_call(
            Config(**base, decision_log="file", decision_log_path=f"{scratch}/r.log", decision_log_raw=True),  # type: ignore[arg-type]
            _grpc_call(),
        )
        lines.append(f"gRPC VerifyResponse, no decision log: {plain * 1e6:.0f} µs/call")
        lines.append(f"decision records (digests): {digests * 1e6:.0f} µs/call, x{digests / plain:.2f}")
        lines.append(f"decision records (raw request): {raw * 1e6:.0f} µs/call, x{raw / plain:.2f}")

        with (Path(scratch) / "server.log").open("w") as sink:
            configure_logging("json", "INFO", stream=sink)
            logged = await _per_call(Config(**{**base, "access_log_level": "INFO"}), _grpc_call())  # type: ignore[arg-type]
            logging.getLogger().handlers.clear()
        lines.append(f"JSON access line per call: {logged * 1e6:.0f} µs/call, x{logged / plain:.2f}")

        grpc_again = await _per_call(Config(**base), _grpc_call())  # type: ignore[arg-type]
        http = await _per_call(Config(**base, http_address="127.0.0.1:0"), _http_call())  # type: ignore[arg-type]
        lines.append(
            f"HTTP port (Connect, binary, HTTP/1.1): {http * 1e6:.0f} µs/call vs gRPC {grpc_again * 1e6:.0f} µs/call, "
            f"x{http / grpc_again:.2f} (http.client in a worker thread, one keep-alive connection)"
        )
    return lines


def run() -> Iterator[str]:
    yield from asyncio.run(_measure())
