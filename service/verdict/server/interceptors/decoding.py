"""Undecodable requests are the caller's mistake for every service the server hosts, not only VerdictService.

grpcio answers a request its deserializer refuses with UNKNOWN ("Exception deserializing request") or INTERNAL,
which blames the server for the caller's bytes and fires the server-error alerts at a caller's will: a health probe
with invalid UTF-8 in `service` was enough. VerdictService decodes leniently itself (`wire.py`); this interceptor gives
the health service and reflection the same rule: a request that does not decode is INVALID_ARGUMENT naming the field
(reason `UNDECODABLE_REQUEST`), whichever handler shape (unary, server streaming, bidirectional) serves it.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import grpc.aio

from verdict.rpc.decoding import Undecodable, undecodable
from verdict.rpc.status import to_status
from verdict.server.interceptors.base import HandlerInterceptor, Shape, rewrap

__all__ = ["LenientDecoding"]


class LenientDecoding(HandlerInterceptor):
    """Wraps every handler's request deserializer so that a refusal becomes INVALID_ARGUMENT, not UNKNOWN."""

    def intercept_handler(self, handler: grpc.RpcMethodHandler, full_method: str) -> grpc.RpcMethodHandler:
        if handler.request_deserializer is None:
            return handler
        return rewrap(handler, _refusing, request_deserializer=_lenient(handler.request_deserializer))


def _refusing(behavior: Any, shape: Shape) -> Any:
    return _refusing_stream(behavior) if shape.startswith("stream_") else _refusing_unary(behavior)


def _lenient(deserializer: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    message_class = getattr(deserializer, "__self__", None)
    descriptor = getattr(message_class, "DESCRIPTOR", None)

    def decode(data: bytes) -> Any:
        try:
            return deserializer(data)
        except Exception as exc:  # DecodeError, or whatever a generated deserializer raises for garbage
            if descriptor is None:
                return Undecodable("request", "", str(exc) or type(exc).__name__)
            return undecodable(descriptor, data, exc)

    decode.message_class = message_class  # type: ignore[attr-defined]  # for verdict.rpc.stepwise.message_class_of
    return decode


async def _refuse(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
    if isinstance(request, Undecodable):
        await context.abort_with_status(to_status(request.error()))


def _refusing_unary(behavior: Any) -> Any:
    if inspect.isasyncgenfunction(behavior):

        async def refusing_generator(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
            await _refuse(request, context)
            async for response in behavior(request, context):
                yield response

        return refusing_generator

    async def refusing(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        await _refuse(request, context)
        return await behavior(request, context)

    return refusing


def _refusing_stream(behavior: Any) -> Any:
    async def checked(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
        async for request in requests:
            await _refuse(request, context)
            yield request

    if inspect.isasyncgenfunction(behavior):

        async def refusing_generator(
            requests: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[Any]:
            async for response in behavior(checked(requests, context), context):
                yield response

        return refusing_generator

    async def refusing(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        return await behavior(checked(requests, context), context)

    return refusing
