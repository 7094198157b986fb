"""The /metrics server on `[::]` (the default, and what the manifests use) must answer over IPv4 too.

asyncio binds IPv6 sockets with IPV6_V6ONLY, so a plain `start_server("::", ...)` listens on IPv6 only, and
Prometheus scraping a pod's IPv4 address, or Docker's port mapping, is refused. `make image-test` found it.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator

import pytest
from prometheus_client import CollectorRegistry

from tests.support import make_config
from tests.test_scrape import get
from verdict.scrape import MetricsHttpServer
from verdict.server import build_server, start_metrics_server


@contextlib.asynccontextmanager
async def metrics_on(address: str) -> AsyncIterator[MetricsHttpServer]:
    registry = CollectorRegistry()
    app, _ = await build_server(make_config(metrics_address=address), registry=registry, env={"PATH": "/usr/bin:/bin"})
    http = await start_metrics_server(app, registry)
    assert http is not None
    try:
        yield http
    finally:
        await http.close()
        await app.stop(grace=0)


async def test_all_interfaces_answer_over_ipv4_and_ipv6() -> None:
    if not socket.has_dualstack_ipv6():
        pytest.fail("this machine has no dual-stack IPv6 sockets; the property cannot be checked here")
    async with metrics_on("[::]:0") as http:
        for host in ("127.0.0.1", "[::1]"):
            status, _, body = await get(f"http://{host}:{http.port}/metrics")
            assert status == 200, host
            assert b"verdict_" in body, host


async def test_one_address_stays_that_address() -> None:
    async with metrics_on("127.0.0.1:0") as http:
        with pytest.raises(ConnectionRefusedError):
            await asyncio.open_connection("::1", http.port)
