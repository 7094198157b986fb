"""The /metrics HTTP server: bounded, on the server's event loop, TLS and auth when configured.

prometheus_client's own server (`start_http_server`) is a `ThreadingHTTPServer`: one thread per connection and no
read timeout, so 200 clients that connect and send nothing hold 200 threads and 200 sockets for as long as they
like. This one runs in the event loop that serves gRPC, with three bounds:

- at most `metrics_max_connections` connections at once; one more is closed as soon as it is accepted;
- `metrics_read_timeout_seconds` for the TLS handshake plus the request headers, and again for sending the answer,
  so a slow client (slowloris) holds a slot for that long at most;
- request headers at most 16 KiB, one request per connection (`Connection: close`; a scrape every 15-60 s gains
  nothing from keep-alive).

`[::]` (all interfaces) is one dual-stack socket: asyncio alone would bind it IPv6-only, and Prometheus, kubelet and
Docker's port mapping reach a pod over IPv4.

It answers `GET`/`HEAD` on `/metrics` (and `/`) with prometheus_client's exposition, negotiating the OpenMetrics
format from `Accept` and gzip from `Accept-Encoding` exactly as prometheus_client does. With `tls_cert_file` the port
speaks TLS only, with the same (rotating) certificate as gRPC; with `metrics_requires_auth` a scrape needs a bearer
token or a client certificate of a principal the policy allows `metrics` (401 / 403 otherwise).
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import logging
import socket
import ssl

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from verdict.errors import ConfigError
from verdict.metrics import Metrics
from verdict.security.gate import Gate, bearer_token
from verdict.security.tls import Certificates, ssl_peer_identities

__all__ = ["MetricsHttpServer"]

log = logging.getLogger("verdict.scrape")

MAX_HEADER_BYTES = 16 * 1024
_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Not Allowed"}


class MetricsHttpServer:
    """Serves one registry's exposition; `await start()` binds, `await close()` stops and closes every connection."""

    def __init__(
        self,
        registry: CollectorRegistry,
        metrics: Metrics,
        gate: Gate,
        certificates: Certificates | None,
        *,
        max_connections: int,
        read_timeout_seconds: float,
    ) -> None:
        self._registry = registry
        self._metrics = metrics
        self._gate = gate
        self._certificates = certificates
        self.max_connections = max_connections
        self._read_timeout = read_timeout_seconds
        self._server: asyncio.Server | None = None
        self.port = 0
        """The bound port, once started."""
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def connections(self) -> int:
        """Connections held now."""
        return len(self._writers)

    async def start(self, address: str) -> int:
        """Bind `host:port` and serve; the bound port. Raises ConfigError naming `metrics_address` on failure."""
        host, _, port = address.rpartition(":")
        host = host.strip("[]")
        try:
            if host in ("::", "") and socket.has_dualstack_ipv6():
                # asyncio sets IPV6_V6ONLY on every IPv6 socket it binds, so `[::]` alone would refuse IPv4, which is
                # how Prometheus, kubelet and Docker's port mapping reach a pod. One socket for both families instead.
                sock = socket.create_server(("::", int(port)), family=socket.AF_INET6, backlog=128, dualstack_ipv6=True)
                self._server = await asyncio.start_server(self._serve, sock=sock, limit=MAX_HEADER_BYTES)
            else:
                self._server = await asyncio.start_server(
                    self._serve, host or None, int(port), limit=MAX_HEADER_BYTES, backlog=128
                )
        except OSError as exc:
            raise ConfigError("metrics_address", f"cannot bind {address}: {exc.strerror or exc}") from None
        return int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        if self._server is None:
            return
        self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        with contextlib.suppress(Exception):
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self._writers) >= self.max_connections:
            self._metrics.metrics_connections_rejected.labels(reason="too_many").inc()
            writer.transport.abort()
            return
        self._writers.add(writer)
        try:
            async with asyncio.timeout(self._read_timeout):
                if self._certificates is not None:
                    await writer.start_tls(self._certificates.ssl_context())
                head = await reader.readuntil(b"\r\n\r\n")
            status, headers, body = self._answer(head, writer)
            lines = [f"HTTP/1.1 {status} {_REASONS[status]}", *(f"{k}: {v}" for k, v in headers.items())]
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
            async with asyncio.timeout(self._read_timeout):
                await writer.drain()
        except TimeoutError:
            self._metrics.metrics_connections_rejected.labels(reason="timeout").inc()
        except ssl.SSLError:
            self._metrics.metrics_connections_rejected.labels(reason="tls").inc()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, OSError):
            pass
        finally:
            self._writers.discard(writer)
            writer.transport.abort()

    def _answer(self, head: bytes, writer: asyncio.StreamWriter) -> tuple[int, dict[str, str], bytes]:
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        parts = request_line.split(" ")
        if len(parts) != 3:
            return _plain(400, "bad request line")
        method, target, _version = parts
        headers: dict[str, str] = {}
        for line in header_lines:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        if method not in ("GET", "HEAD"):
            status, extra, body = _plain(405, "only GET and HEAD")
            return status, {**extra, "Allow": "GET, HEAD"}, body
        if target.split("?", 1)[0] not in ("/metrics", "/"):
            return _plain(404, "not found; scrape /metrics")
        ssl_object = writer.get_extra_info("ssl_object")
        identities = ssl_peer_identities(ssl_object.getpeercert() if ssl_object is not None else None)
        authorization = headers.get("authorization")
        token = bearer_token(authorization)
        # A header of another scheme is a wrong credential, not a missing one.
        decision, _ = self._gate.metrics_allowed(token if authorization is None or token else "", identities)
        if decision == 401:
            status, extra, body = _plain(401, "bearer token or client certificate required")
            return status, {**extra, "WWW-Authenticate": 'Bearer realm="verdict"'}, body
        if decision != 200:
            return _plain(decision, "forbidden")
        encoder, content_type = choose_encoder(headers.get("accept", ""))
        body = encoder(self._registry)
        response = {"Content-Type": content_type}
        if "gzip" in headers.get("accept-encoding", ""):
            body = gzip.compress(body)
            response["Content-Encoding"] = "gzip"
        response["Content-Length"] = str(len(body))
        response["Connection"] = "close"
        return 200, response, b"" if method == "HEAD" else body


def _plain(status: int, text: str) -> tuple[int, dict[str, str], bytes]:
    body = (text + "\n").encode()
    return status, {"Content-Type": "text/plain", "Content-Length": str(len(body)), "Connection": "close"}, body
