"""Several grpc.aio servers on one port in one process, so that accepting calls keeps pace with their arrival.

grpc.aio accepts one call at a time per server: one `request_call` is outstanding, and the next is issued only after
the accepted call's completion has travelled from grpc-core through its poller thread to the event loop and the loop
has run it, several loop turns per call. While the loop runs long steps (a parse of many blocks, a busy minute), each
of those turns waits behind them, the accept rate falls below the arrival rate, and the excess waits inside
grpc-core, where no Python code can see or refuse it: at twice the capacity that wait was the accepted calls' whole
latency and most refusals arrived after it. Each server has its own accept loop, so `ACCEPT_LOOPS` servers sharing
the port (SO_REUSEPORT: the kernel spreads connections over them) accept that many calls per loop turn; in a bench
whose loop ran 20 ms steps, four took the answers a loop could give from 53 to 141 per second (eight: 146).

A connection belongs to the one server whose listener accepted it, so the calls of one connection are accepted by one
server, and the kernel's hash of the connection decides which. Within a server, each registered method of the busy
services keeps several requests for its next call outstanding (acceptors.py), which is what keeps accepting at the
arrival rate under overload; the servers only spread that work over listeners.

`AcceptLoops` offers the part of `grpc.aio.Server` the assembly uses (registration, binding, start, stop) and does
each on every server. The port is shared with SO_REUSEPORT, which would also let a second process bind it silently,
so a single process first checks that the address is free with a plain socket (as a bind without SO_REUSEPORT would).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import grpc
import grpc.aio

from verdict.errors import ConfigError
from verdict.server import acceptors
from verdict.server.acceptors import Acceptors

__all__ = ["ACCEPT_LOOPS", "AcceptLoops"]

log = logging.getLogger("verdict.server")

ACCEPT_LOOPS = 4
"""Servers (accept loops) per process on the gRPC port. With several requests outstanding per method (acceptors.py)
more servers gained nothing at twice the capacity (4 and 16: accepted p99 13.6-14.0 and 13.7-16.7 times the unloaded
one, two runs each); without them, 16 servers had brought it from 250 to 14-244, by how connections hashed."""


class AcceptLoops:
    """`count` grpc.aio servers that register, bind, start and stop together on one port."""

    def __init__(
        self,
        options: Sequence[tuple[str, Any]],
        count: int = ACCEPT_LOOPS,
        *,
        shared: bool = False,
        busy_services: Sequence[str] = (),
    ) -> None:
        """`shared`: the port is meant to be shared with other processes (the supervisor's workers), so it is not
        checked for being free first. `busy_services`: the services whose registered methods get more than one
        outstanding request per server (acceptors.py)."""
        self._check = count > 1 and not shared
        self._busy = tuple(f"/{service}/" for service in busy_services)
        self._registered: dict[str, grpc.RpcMethodHandler] = {}
        self.acceptors: list[Acceptors] = []
        """The extra accept coroutines of each server, once started (empty when grpcio lacks what they use)."""
        arguments = list(options)
        if count > 1:
            arguments = [(key, _share(key, value, count)) for key, value in options if key != "grpc.so_reuseport"]
            arguments.append(("grpc.so_reuseport", 1))
        self.servers = [grpc.aio.server(options=arguments) for _ in range(count)]

    def add_generic_rpc_handlers(self, generic_rpc_handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        for server in self.servers:
            server.add_generic_rpc_handlers(generic_rpc_handlers)

    def add_registered_method_handlers(
        self, service_name: str, method_handlers: Mapping[str, grpc.RpcMethodHandler]
    ) -> None:
        for server in self.servers:
            server.add_registered_method_handlers(service_name, dict(method_handlers))
        self._registered.update({f"/{service_name}/{name}": handler for name, handler in method_handlers.items()})

    def add_insecure_port(self, address: str) -> int:
        return self._bind(address, None)

    def add_secure_port(
        self, address: str, credentials: grpc.ServerCredentials | Callable[[], grpc.ServerCredentials]
    ) -> int:
        """`credentials` may be a factory, called once per server: dynamic credentials (a certificate fetcher)
        belong to one server each."""
        return self._bind(address, credentials)

    def _bind(
        self, address: str, credentials: grpc.ServerCredentials | Callable[[], grpc.ServerCredentials] | None
    ) -> int:
        """Bind the first server to `address`, the others to the port it got; 0 when any bind fails (grpc's own
        convention, which the caller turns into a ConfigError)."""
        host, _, port_text = address.rpartition(":")
        if self._check and port_text.isdigit() and int(port_text) and host:
            _check_free(host, int(port_text))
        port = 0
        for index, server in enumerate(self.servers):
            where = address if index == 0 else f"{host}:{port}"
            if credentials is None:
                bound = server.add_insecure_port(where)
            else:
                bound = server.add_secure_port(where, credentials() if callable(credentials) else credentials)
            if index == 0:
                port = bound
            if not bound or bound != port:
                return 0
        return port

    async def start(self) -> None:
        for server in self.servers:
            await server.start()
        busy = [method for method in self._registered if method.startswith(self._busy)] if self._busy else []
        if not busy:
            return
        if not acceptors.available():
            log.warning("this grpcio's internals differ from 1.85's: one outstanding call request per method")
            return
        for server in self.servers:
            extra = Acceptors(server, self._registered, busy)
            extra.start()
            self.acceptors.append(extra)

    async def stop(self, grace: float | None) -> None:
        await asyncio.gather(*(server.stop(grace) for server in self.servers))
        await asyncio.gather(*(extra.stop() for extra in self.acceptors))


def _share(key: str, value: Any, count: int) -> Any:
    """A per-listener bound split over the servers, so that together they hold what the configuration says (the
    kernel spreads connections evenly on average, not exactly, so one server may refuse a little early)."""
    if key == "grpc.max_allowed_incoming_connections" and isinstance(value, int):
        return max(1, -(-value // count))
    return value


def _check_free(host: str, port: int) -> None:
    """Raise ConfigError when something already listens on host:port (SO_REUSEPORT would otherwise share it)."""
    name = host.strip("[]")
    family = socket.AF_INET6 if ":" in name else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((name, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise ConfigError("grpc_address", f"cannot bind {host}:{port} (in use)") from None
            # any other failure (a name, an address not on this host) is left to grpc's own bind to report
