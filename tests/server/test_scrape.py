"""The /metrics server: prometheus_client's exposition and negotiation, TLS, auth, and its bounds, over real sockets."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import ssl
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from tests.certs import CertificateAuthority, SecretVolume, certificate_shown
from tests.support import make_config
from verdict.server.assembly import build_server, start_metrics_server
from verdict.server.scrape import MetricsHttpServer

TOKEN = "prometheus-token-0123456789abcdef"


@contextlib.asynccontextmanager
async def scraping(**overrides: Any) -> AsyncIterator[MetricsHttpServer]:
    registry = CollectorRegistry()
    config = make_config(**{"metrics_address": "127.0.0.1:0", **overrides})
    app, _ = await build_server(config, registry=registry, env={"PATH": "/usr/bin:/bin"})
    http = await start_metrics_server(app, registry)
    assert http is not None
    try:
        yield http
    finally:
        await http.close()
        await app.stop(grace=0)


def fetch(url: str, *, context: ssl.SSLContext | None = None, **headers: str) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 - a URL the test built
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as response:  # noqa: S310
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


async def get(url: str, **kwargs: Any) -> tuple[int, dict[str, str], bytes]:
    return await asyncio.to_thread(fetch, url, **kwargs)


async def test_the_exposition_and_its_negotiation() -> None:
    async with scraping() as http:
        url = f"http://127.0.0.1:{http.port}/metrics"
        status, headers, body = await get(url)
        assert status == 200
        assert headers["Content-Type"].startswith("text/plain; version=0.0.4")
        assert b"# TYPE grpc_server_started_total counter" in body
        status, headers, body = await get(url, Accept="application/openmetrics-text; version=1.0.0")
        assert headers["Content-Type"].startswith("application/openmetrics-text")
        assert body.endswith(b"# EOF\n")
        status, headers, body = await get(url, **{"Accept-Encoding": "gzip"})
        assert headers["Content-Encoding"] == "gzip"
        assert b"verdict_build_info" in gzip.decompress(body)
        assert (await get(f"http://127.0.0.1:{http.port}/other"))[0] == 404
        request = urllib.request.Request(url, method="POST", data=b"x")
        with pytest.raises(urllib.error.HTTPError) as caught:
            await asyncio.to_thread(urllib.request.urlopen, request, timeout=10)
        assert caught.value.code == 405


async def test_tls_with_a_rotating_certificate_and_auth(tmp_path: Path) -> None:
    ca = CertificateAuthority(tmp_path / "ca")
    first, second = ca.server("first"), ca.server("second")
    prometheus = ca.issue("prometheus", sans=("URI:spiffe://verdict.test/prometheus",))
    volume = SecretVolume(tmp_path / "tls", {"tls.crt": first.cert, "tls.key": first.key})
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "principals:\n"
        "  prometheus: {metrics: true, certificates: [spiffe://verdict.test/prometheus]}\n"
        "  runner: {rpcs: ['*']}\n"
    )
    tokens = SecretVolume(tmp_path / "tokens", {"prometheus": TOKEN.encode(), "runner": b"runner-0123456789abcdef"})
    overrides = {
        "tls_cert_file": volume.path("tls.crt"),
        "tls_key_file": volume.path("tls.key"),
        "tls_client_ca_file": str(ca.cert_file),
        "tls_client_auth": "require",
        "auth_policy_file": str(policy),
        "auth_tokens_dir": str(tokens.directory),
        "metrics_requires_auth": True,
    }
    async with scraping(**overrides) as http:
        url = f"https://localhost:{http.port}/metrics"
        with_cert = ssl.create_default_context(cadata=ca.cert.decode())
        with_cert.load_cert_chain(prometheus.cert_file, prometheus.key_file)
        status, _, body = await get(url, context=with_cert)
        assert status == 200
        assert b"grpc_server_handled_total" in body

        runner = ca.issue("runner-client", common_name="unknown-client")
        as_runner = ssl.create_default_context(cadata=ca.cert.decode())
        as_runner.load_cert_chain(runner.cert_file, runner.key_file)
        status, headers, _ = await get(url, context=as_runner)
        assert status == 401
        assert headers["WWW-Authenticate"].startswith("Bearer")
        assert (await get(url, context=as_runner, Authorization=f"Bearer {TOKEN}"))[0] == 200
        assert (await get(url, context=as_runner, Authorization="Bearer runner-0123456789abcdef"))[0] == 403
        assert (await get(url, context=as_runner, Authorization="Basic cm9vdDpyb290"))[0] == 401

        volume.update({"tls.crt": second.cert, "tls.key": second.key})
        seen = await asyncio.to_thread(certificate_shown, http.port, with_cert)
        assert seen == ssl.PEM_cert_to_DER_cert(second.cert.decode())


async def test_connections_over_the_cap_are_closed_and_slow_ones_time_out() -> None:
    async with scraping(metrics_max_connections=4, metrics_read_timeout_seconds=0.5) as http:
        idle = [await asyncio.open_connection("127.0.0.1", http.port) for _ in range(10)]
        refused = 0
        for reader, _ in idle[4:]:
            with contextlib.suppress(ConnectionError):
                if await asyncio.wait_for(reader.read(1), timeout=10) == b"":
                    refused += 1
        assert refused == 6
        assert http.connections <= 4
        for reader, _ in idle[:4]:  # closed at the read timeout, having sent nothing
            with contextlib.suppress(ConnectionError):
                assert await asyncio.wait_for(reader.read(1), timeout=10) == b""
        for _, writer in idle:
            writer.close()
        status, _, _ = await get(f"http://127.0.0.1:{http.port}/metrics")
        assert status == 200
