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
accept loop, and the kernel's hash of the connection decides which: with as many servers as connections, several
still share a server. At twice the capacity with eight client connections (bench/bench_load.py, one worker), the
accepted calls' p99 was 250 times the unloaded p99 with 4 servers, 46 with 8, 14-16 with 16 or 32 (one run each):
sixteen, at a cost of one listening socket each (no thread, no measurable memory).

`AcceptLoops` offers the part of `grpc.aio.Server` the assembly uses (registration, binding, start, stop) and does
each on every server. The port is shared with SO_REUSEPORT, which would also let a second process bind it silently,
so a single process first checks that the address is free with a plain socket (as a bind without SO_REUSEPORT would).
"""

from __future__ import annotations

import asyncio
import errno
import socket
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import grpc
import grpc.aio

from verdict.errors import ConfigError

__all__ = ["ACCEPT_LOOPS", "AcceptLoops"]

ACCEPT_LOOPS = 16
"""Servers (accept loops) per process on the gRPC port: enough that a few dozen connections seldom share one (the
module docstring has the measurement); each costs a listening socket."""


class AcceptLoops:
    """`count` grpc.aio servers that register, bind, start and stop together on one port."""

    def __init__(self, options: Sequence[tuple[str, Any]], count: int = ACCEPT_LOOPS, *, shared: bool = False) -> None:
        """`shared`: the port is meant to be shared with other processes (the supervisor's workers), so it is not
        checked for being free first."""
        self._check = count > 1 and not shared
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

    async def stop(self, grace: float | None) -> None:
        await asyncio.gather(*(server.stop(grace) for server in self.servers))


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
