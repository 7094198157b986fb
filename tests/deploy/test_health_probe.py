"""deploy/health_probe.py, the sidecar's exec probe, against a real server: exit 0 only for SERVING."""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import AsyncIterator

import pytest
from prometheus_client import CollectorRegistry

from tests.deploy.support import DEPLOY
from verdict.config.keys import Config
from verdict.server.assembly import LIVENESS_SERVICE, READINESS_SERVICES, App, build_server

PROBE = DEPLOY / "health_probe.py"


async def probe(port: int, service: str) -> tuple[int, str]:
    """Run the probe as kubelet would (a child process); (exit status, what it printed)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(PROBE),
        "--address",
        f"127.0.0.1:{port}",
        "--service",
        service,
        "--timeout",
        "5",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode is not None
    return process.returncode, output.decode()


@pytest.fixture
async def started() -> AsyncIterator[tuple[App, int]]:
    """A server that accepts calls but has not reported ready yet (readiness NOT_SERVING, liveness SERVING)."""
    app, port = await build_server(Config(grpc_address="127.0.0.1:0", metrics_address=""), registry=CollectorRegistry())
    await app.server.start()
    yield app, port
    await app.stop(grace=0)


async def test_liveness_is_serving_from_the_start(started: tuple[App, int]) -> None:
    _app, port = started
    assert await probe(port, LIVENESS_SERVICE) == (0, "liveness: SERVING\n")


async def test_readiness_fails_until_ready_then_passes(started: tuple[App, int]) -> None:
    app, port = started
    for name in READINESS_SERVICES:
        status, output = await probe(port, name)
        assert status == 1
        assert output.endswith(": NOT_SERVING\n")
    await app.mark_ready()
    for name in READINESS_SERVICES:
        assert (await probe(port, name))[0] == 0


async def test_readiness_fails_again_once_shutdown_starts(started: tuple[App, int]) -> None:
    app, port = started
    await app.mark_ready()
    await app.health.drain(READINESS_SERVICES)
    status, output = await probe(port, READINESS_SERVICES[-1])
    assert (status, output) == (1, f"{READINESS_SERVICES[-1]}: NOT_SERVING\n")


async def test_unknown_name_fails(started: tuple[App, int]) -> None:
    _app, port = started
    assert await probe(port, "no.such.Service") == (1, "no.such.Service: NOT_FOUND\n")


async def test_nothing_listening_fails() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    status, output = await probe(port, LIVENESS_SERVICE)
    assert status == 1
    assert output == "liveness: UNAVAILABLE\n"


async def test_the_probe_speaks_tls_to_a_tls_server(tmp_path) -> None:
    from tests.certs import CertificateAuthority

    ca = CertificateAuthority(tmp_path / "ca")
    issued = ca.server()
    config = Config(
        grpc_address="127.0.0.1:0",
        metrics_address="",
        tls_cert_file=str(issued.cert_file),
        tls_key_file=str(issued.key_file),
    )
    app, port = await build_server(config, registry=CollectorRegistry())
    await app.start()
    try:
        process = await asyncio.create_subprocess_exec(
            sys.executable, str(PROBE), "--address", f"127.0.0.1:{port}", "--service", LIVENESS_SERVICE,
            "--ca-file", str(ca.cert_file), "--server-name", "localhost",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        output, _ = await asyncio.wait_for(process.communicate(), timeout=60)
        assert (process.returncode, output.decode()) == (0, "liveness: SERVING\n")
        assert await probe(port, LIVENESS_SERVICE) == (1, "liveness: UNAVAILABLE\n")  # plaintext cannot reach it
    finally:
        await app.stop(grace=0)
