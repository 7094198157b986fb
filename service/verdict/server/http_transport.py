"""The HTTP port's connections: the gRPC port's bounds, held by Verdict rather than left to Hypercorn's defaults.

Hypercorn's own `worker_serve` accepts every connection, gives a TLS handshake 60 s and a request body forever: 1,500
slow bodies without credentials stayed open for 75 s, held 444 MB and, under a low descriptor limit, starved the
gRPC port and the health listener. `HttpTransport` serves the same Hypercorn protocol stack (HTTP/1.1, HTTP/2, the
ASGI app) from its own accept callback, which:

- holds at most `max_connections` connections; more are closed as they arrive (as grpc-core does on the gRPC port),
  and the cap never exceeds a quarter of the process's descriptor limit, so this port cannot take the descriptors
  the gRPC port, /metrics, the health listener and the child processes need;
- does TLS itself, after counting the connection, with `handshake_timeout` (the gRPC port's), from the server's
  `Certificates` so a rotated certificate is picked up like on the other ports; with `tls_client_auth: require` the
  handshake demands a client certificate, and its names are handed to the gate (`identities`) exactly as gRPC's
  auth context hands them over, so a certificate maps to the same principal on both ports;
- leaves the request head to Hypercorn's keep-alive timer (a connection counts as idle until a complete head has
  arrived, so a head that never completes is closed after `keep_alive_timeout`) and bounds the body with
  `BodyDeadline`: the whole body, not each read, must arrive within `body_timeout`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import ssl
from collections.abc import Awaitable, Callable
from typing import Any

from connectrpc.code import Code
from connectrpc.errors import ConnectError
from hypercorn.asyncio.lifespan import Lifespan
from hypercorn.asyncio.tcp_server import TCPServer
from hypercorn.asyncio.worker_context import WorkerContext
from hypercorn.config import Config as HypercornConfig
from hypercorn.config import Sockets
from hypercorn.typing import AppWrapper
from hypercorn.utils import parse_socket_addr
from prometheus_client import Counter

from verdict.security.tls import Certificates, ssl_peer_identities

__all__ = ["DESCRIPTOR_SHARE", "BodyDeadline", "HttpTransport", "StrictFraming", "connection_cap"]

log = logging.getLogger("verdict.http")

DESCRIPTOR_SHARE = 4
"""The HTTP port holds at most 1/DESCRIPTOR_SHARE of RLIMIT_NOFILE in connections."""


def connection_cap(configured: int, soft_limit: int | None = None) -> int:
    """The connections the HTTP port may hold: `configured`, but never more than its share of the descriptor limit
    (at least 8, so a tiny limit still serves)."""
    limit = soft_limit if soft_limit is not None else resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if limit == resource.RLIM_INFINITY or limit <= 0:
        return configured
    return max(8, min(configured, limit // DESCRIPTOR_SHARE))


class BodyDeadline:
    """ASGI middleware: the request body must be complete within `seconds` of the request head; past that the call
    is DEADLINE_EXCEEDED (in the caller's protocol) and, its body unread, the connection is closed by Hypercorn."""

    def __init__(self, app: Any, seconds: float) -> None:
        self._app = app
        self._seconds = seconds

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self._app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._seconds
        complete = False

        async def bounded() -> Any:
            nonlocal complete
            if complete:
                return await receive()
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                raise ConnectError(
                    Code.DEADLINE_EXCEEDED, f"the request body did not arrive within {self._seconds:g} s"
                ) from None
            if message.get("type") != "http.request" or not message.get("more_body", False):
                complete = True
            return message

        await self._app(scope, bounded, send)


class StrictFraming:
    """ASGI middleware: an HTTP/1.x request that sets both Content-Length and Transfer-Encoding is refused with 400
    and its connection closed (RFC 9112 section 6.1: a server MAY reject it and MUST close the connection after). h11
    lets Transfer-Encoding win and keeps the connection, which is how a proxy in front that reads Content-Length
    instead would be made to smuggle a second request to us."""

    def __init__(self, app: Any) -> None:
        self._app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") == "http" and scope.get("http_version") in ("1.0", "1.1"):
            names = {name.lower() for name, _ in scope.get("headers", ())}
            if b"content-length" in names and b"transfer-encoding" in names:
                body = b"request sets both Content-Length and Transfer-Encoding\n"
                await send(
                    {
                        "type": "http.response.start",
                        "status": 400,
                        "headers": [
                            (b"content-type", b"text/plain"),
                            (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body, "more_body": False})
                return
        await self._app(scope, receive, send)


class _Connection(TCPServer):
    """Hypercorn's connection, closed as soon as its client has gone and no call is in flight on it.

    Hypercorn 0.18 sees a client close its connection (end of file) but keeps the connection until its keep-alive
    timer fires: the read loop ends, and the connection's task group still waits for the idle timer. Measured: every
    connection a client closed after its answer held its place under the cap and its descriptor for the whole
    `http_idle_timeout_seconds` (5 s), so 256 calls within 5 s from clients that open a connection per call (curl,
    http.client, most scripts) filled the port, and every connection after them was reset until the timers ran out.
    Here the idle timer, once nothing more can be read, closes the connection at once; a call still in flight when
    the client half-closes is answered first (the timer starts only when the connection goes idle)."""

    _read_done = False

    async def _read_data(self) -> None:
        await super()._read_data()
        self._read_done = True
        running = self.idle_task._handle
        if running is not None and not running.done():  # idle already: close now rather than at the timer
            await self.idle_task.restart(self._task_group, self._idle_timeout)

    async def _idle_timeout(self) -> None:
        if self._read_done:
            await asyncio.shield(self._initiate_server_close())
            return
        await super()._idle_timeout()


class HttpTransport:
    """Accepts the HTTP port's connections and runs Hypercorn's protocol stack on each (see the module docstring)."""

    def __init__(
        self,
        app: AppWrapper,
        config: HypercornConfig,
        sockets: Sockets,
        *,
        certificates: Certificates | None,
        max_connections: int,
        handshake_timeout: float,
        rejected: Counter,
    ) -> None:
        self._app = app
        self._config = config
        self._sockets = sockets
        self._certificates = certificates
        self.max_connections = max_connections
        self._handshake_timeout = handshake_timeout
        self._rejected = rejected
        self._open: set[asyncio.StreamWriter] = set()
        self.identities: dict[str, tuple[str, ...]] = {}
        """Verified client certificate names by peer address (`host:port`, as the ASGI scope's `client`)."""

    @property
    def connections(self) -> int:
        return len(self._open)

    async def serve(self, shutdown: Callable[[], Awaitable[Any]]) -> None:
        """Serve until `shutdown()` returns, then let open connections finish for `graceful_timeout` seconds."""
        loop = asyncio.get_running_loop()
        state: dict[str, Any] = {}
        lifespan = Lifespan(self._app, self._config, loop, state)
        lifespan_task = loop.create_task(lifespan.handle_lifespan())
        await lifespan.wait_for_startup()
        context = WorkerContext(None)
        tasks: set[asyncio.Task[None]] = set()

        async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            if task is not None:
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            await self._connection(reader, writer, context, state)

        listening = self._sockets.secure_sockets + self._sockets.insecure_sockets
        servers = [await asyncio.start_server(accepted, backlog=self._config.backlog, sock=sock) for sock in listening]
        try:
            await shutdown()
        finally:
            await context.terminated.set()
            for server in servers:
                server.close()
            if tasks:
                _, pending = await asyncio.wait(list(tasks), timeout=self._config.graceful_timeout)
                for task in pending:
                    task.cancel()
            for writer in list(self._open):
                writer.transport.abort()
            await lifespan.wait_for_shutdown()
            lifespan_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await lifespan_task

    async def _connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, context: WorkerContext, state: Any
    ) -> None:
        if len(self._open) >= self.max_connections:
            self._rejected.labels(reason="too_many").inc()
            writer.transport.abort()
            return
        self._open.add(writer)
        peer = ""
        try:
            if self._certificates is not None:
                try:
                    async with asyncio.timeout(self._handshake_timeout):
                        await writer.start_tls(self._certificates.http_ssl_context())
                except TimeoutError:
                    self._rejected.labels(reason="timeout").inc()
                    return
                except (ssl.SSLError, OSError):
                    self._rejected.labels(reason="tls").inc()
                    return
                sock = writer.get_extra_info("socket")
                host, port = parse_socket_addr(sock.family, sock.getpeername()) or ("", 0)
                peer = f"{host}:{port}"
                ssl_object = writer.get_extra_info("ssl_object")
                self.identities[peer] = ssl_peer_identities(ssl_object.getpeercert() if ssl_object else None)
            await _Connection(self._app, asyncio.get_running_loop(), self._config, context, state, reader, writer)
        except (ConnectionError, OSError):
            pass
        finally:
            self._open.discard(writer)
            self.identities.pop(peer, None)
            writer.transport.abort()
