"""More than one call asked of grpc-core at a time per registered method: accepting keeps pace under overload.

A grpc.aio server asks grpc-core for the next call of each registered method one at a time: it issues one
`request_registered_call`, awaits it, hands the call to a task, and only then issues the next. Each of those steps is a
turn of the event loop (the completion travels from grpc-core's poller thread to the loop, the waiting coroutine
wakes, the next request is issued), and under overload every turn waits behind the loop's other work, so the server
accepts a few dozen calls a second per method while hundreds arrive. The excess waits inside grpc-core, where no Python
code sees it: admission control cannot refuse it, no metric counts it, and its callers' deadlines run out there (at
twice the capacity, the accepted calls' p99 was 250 times the unloaded one, and refusals took 0.7 s to arrive).

`Acceptors` keeps `EXTRA_ACCEPTS` more requests outstanding per registered method of the services named, each in a
coroutine of its own doing what grpc.aio's own loop does for a registered method: ask, then hand the accepted call to
grpc.aio's own handling (`_handle_rpc` with the server's handlers, in grpc.aio's own task wrapper), then ask again.
Calls are handled exactly as grpc.aio handles them (the same handler lookup, deserialization, status and
cancellation), only more of them are taken in per loop turn.

These are grpc.aio's internal names (grpcio 1.85: `AioServer._request_registered_call`, `_MethodResolver`,
`_handle_rpc`, `_schedule_rpc_coro`). `available()` checks each before any is used; when a grpcio release changes
them, the server logs one warning and runs with grpc.aio's own single request per method, as it did before.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Mapping
from typing import Any

import grpc
import grpc.aio

__all__ = ["EXTRA_ACCEPTS", "Acceptors", "available"]

log = logging.getLogger("verdict.server")

EXTRA_ACCEPTS = 7
"""Requests outstanding per registered method and server beyond grpc.aio's own one. Each is a future and a small
grpc-core record, nothing while idle."""

_HANDLE_RPC = ("method_name", "method_resolver", "interceptors", "rpc_state", "loop", "concurrency_exceeded")
_SCHEDULE = ("rpc_coro", "rpc_state", "loop", "method_name")


def _cygrpc() -> Any:
    from grpc._cython import cygrpc

    return cygrpc


def available() -> bool:
    """Whether this grpcio has the internals `Acceptors` uses, with the signatures it was written against."""
    try:
        cygrpc = _cygrpc()
        return (
            _parameters(cygrpc._handle_rpc) == _HANDLE_RPC
            and _parameters(cygrpc._schedule_rpc_coro) == _SCHEDULE
            and hasattr(cygrpc._MethodResolver, "resolve_handler")
            and hasattr(cygrpc.AioServer, "_request_registered_call")
            and isinstance(cygrpc._RequestCallError, type)
        )
    except (ImportError, AttributeError, TypeError, ValueError):
        return False


def _parameters(function: Any) -> tuple[str, ...]:
    return tuple(inspect.signature(function).parameters)


class Acceptors:
    """The extra accept coroutines of one started grpc.aio server, for the registered methods given."""

    def __init__(
        self,
        server: grpc.aio.Server,
        registered: Mapping[str, grpc.RpcMethodHandler],
        methods: list[str],
        extra: int = EXTRA_ACCEPTS,
    ) -> None:
        """`registered`: every registered handler of the server by its full name (what its own resolver holds);
        `methods`: the full names to accept more of."""
        self._server = server
        self._registered = dict(registered)
        self._methods = methods
        self._extra = extra
        self._loops: list[asyncio.Task[None]] = []
        self._calls: set[asyncio.Task[Any]] = set()
        """The accepted calls' tasks (the loop holds only weak references to tasks)."""
        self.accepted = 0
        """Calls these coroutines accepted (grpc.aio's own loop accepts the others)."""

    def start(self) -> None:
        cygrpc = _cygrpc()
        core = self._server._server  # the cygrpc.AioServer behind grpc.aio's Server
        resolver = cygrpc._MethodResolver([], self._registered)
        loop = asyncio.get_running_loop()
        for method in self._methods:
            for _ in range(self._extra):
                self._loops.append(loop.create_task(self._accept(cygrpc, core, resolver, loop, method)))

    @property
    def running(self) -> int:
        """Accept coroutines still asking for calls."""
        return sum(1 for task in self._loops if not task.done())

    async def _accept(
        self, cygrpc: Any, core: Any, resolver: Any, loop: asyncio.AbstractEventLoop, method: str
    ) -> None:
        name = method.encode()
        while core.is_running():
            try:
                state = await core._request_registered_call(name)
            except cygrpc._RequestCallError:
                # grpc-core failed the request: the server is shutting down (grpc.aio's own loop asks again while it
                # still runs, and so does this one)
                continue
            coroutine = cygrpc._handle_rpc(method, resolver, (), state, loop, False)
            task = loop.create_task(cygrpc._schedule_rpc_coro(coroutine, state, loop, method), name="rpc_task")
            self._calls.add(task)
            task.add_done_callback(self._calls.discard)
            self.accepted += 1

    async def stop(self) -> None:
        """End the accept coroutines (after the server stopped: grpc-core has failed their requests by then)."""
        for task in self._loops:
            task.cancel()
        await asyncio.gather(*self._loops, return_exceptions=True)
        self._loops.clear()
