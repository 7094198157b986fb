"""The /metrics server on `[::]` (the default, and what the manifests use) must answer over IPv4 too.

asyncio binds IPv6 sockets with IPV6_V6ONLY, so a plain `start_server("::", ...)` listens on IPv6 only, and
Prometheus scraping a pod's IPv4 address, or Docker's port mapping, is refused. `make image-test` found it.
"""

from __future__ import annotations

import asyncio
import socket

import pytest

from tests.server.test_scrape import get, scraping


async def test_all_interfaces_answer_over_ipv4_and_ipv6() -> None:
    if not socket.has_dualstack_ipv6():
        pytest.fail("this machine has no dual-stack IPv6 sockets; the property cannot be checked here")
    async with scraping(metrics_address="[::]:0") as http:
        for host in ("127.0.0.1", "[::1]"):
            status, _, body = await get(f"http://{host}:{http.port}/metrics")
            assert status == 200, host
            assert b"verdict_" in body, host


async def test_one_address_stays_that_address() -> None:
    async with scraping(metrics_address="127.0.0.1:0") as http:
        with pytest.raises(ConnectionRefusedError):
            await asyncio.open_connection("::1", http.port)
