"""The per-call layers folded into one wrapper per method, built once, instead of grpc.aio's interceptor pipeline.

grpc.aio runs a server's `interceptors=` on every call: each `intercept_service` is a coroutine awaited in turn,
with a continuation built for it, before the method's handler is even known, and the handler each returns is then
looked up again. For a tiny call that pipeline, four deep, cost more than the call's own work. Every interceptor
of this server only rewrites handlers (`HandlerInterceptor.intercept_handler`), so the rewriting can be done ahead
of time: `Chain.wrap` applies the layers outermost first to a method's handler once, and `ChainedRegistration` does
it as handlers are registered on a server, which then runs no interceptor at all (`interceptors=None`, grpc.aio's
fast path). A registered method (health, reflection) is wrapped at registration; a generic handler is asked per call
as grpc.aio always does, and its answer for a method is wrapped on first sight and looked up in a dict after that.

A layer whose feature is off is not in the chain (assembly.py decides, once), so it costs nothing per call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import grpc
import grpc.aio

from verdict.server.interceptors.base import HandlerInterceptor

__all__ = ["Chain", "ChainedRegistration", "Except"]


class Layer(Protocol):
    def intercept_handler(self, handler: grpc.RpcMethodHandler, full_method: str) -> grpc.RpcMethodHandler: ...


class Chain:
    """Handler rewriters applied outermost first: the first layer sees the call first and its answer last."""

    def __init__(self, layers: Sequence[HandlerInterceptor | Layer]) -> None:
        self.layers = tuple(layers)

    def wrap(self, handler: grpc.RpcMethodHandler, full_method: str) -> grpc.RpcMethodHandler:
        for layer in reversed(self.layers):
            handler = layer.intercept_handler(handler, full_method)
        return handler


class Except:
    """A layer applied to every service but the ones named (whose handlers already do its job themselves)."""

    def __init__(self, layer: HandlerInterceptor | Layer, *services: str) -> None:
        self._layer = layer
        self._prefixes = tuple(f"/{service}/" for service in services)

    def intercept_handler(self, handler: grpc.RpcMethodHandler, full_method: str) -> grpc.RpcMethodHandler:
        if full_method.startswith(self._prefixes):
            return handler
        return self._layer.intercept_handler(handler, full_method)


class _ChainedGeneric(grpc.GenericRpcHandler):  # type: ignore[misc]
    """A generic handler whose answers come wrapped by the chain, each method's wrapper built once."""

    def __init__(self, inner: grpc.GenericRpcHandler, chain: Chain) -> None:
        self._inner = inner
        self._chain = chain
        self._wrapped: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        handler = self._inner.service(handler_call_details)
        if handler is None:
            return None
        method = handler_call_details.method
        cached = self._wrapped.get(method)
        if cached is not None and cached[0] is handler:
            return cached[1]
        wrapped = self._chain.wrap(handler, method)
        self._wrapped[method] = (handler, wrapped)
        return wrapped


class Registrar(Protocol):
    """Where handlers are registered: a `grpc.aio.Server`, or several (`verdict.server.accept.AcceptLoops`)."""

    def add_generic_rpc_handlers(self, generic_rpc_handlers: Sequence[grpc.GenericRpcHandler]) -> None: ...

    def add_registered_method_handlers(
        self, service_name: str, method_handlers: Mapping[str, grpc.RpcMethodHandler]
    ) -> None: ...


class ChainedRegistration:
    """Stands in for a `grpc.aio.Server` where services are registered (`add_*_to_server`, reflection), and
    registers their handlers with the chain around them."""

    def __init__(self, server: Registrar | grpc.aio.Server, chain: Chain) -> None:
        self._server = server
        self._chain = chain

    def add_generic_rpc_handlers(self, generic_rpc_handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        self._server.add_generic_rpc_handlers(tuple(_ChainedGeneric(h, self._chain) for h in generic_rpc_handlers))

    def add_registered_method_handlers(
        self, service_name: str, method_handlers: Mapping[str, grpc.RpcMethodHandler]
    ) -> None:
        self._server.add_registered_method_handlers(
            service_name,
            {name: self._chain.wrap(h, f"/{service_name}/{name}") for name, h in method_handlers.items()},
        )
