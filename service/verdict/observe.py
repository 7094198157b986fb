"""Per-call observation: the go-grpc-prometheus metric set and a log context, for every service the server hosts.

One interceptor wraps every handler (VerdictService, Health, reflection) so `grpc_server_*` counts all of them the
same way. It only observes: status codes are decided by the servicers. Label children are looked up once per method
and cached, so the per-call cost is a dict lookup and a few counter increments.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc
import grpc.aio

from verdict.metrics import GRPC_CODE_LABELS, Metrics, grpc_code_label

__all__ = ["CallContext", "CallContextFilter", "MetricsInterceptor", "current_call"]

log = logging.getLogger("verdict.rpc")


@dataclass(frozen=True)
class CallContext:
    """What a log line about the current call should carry."""

    method: str
    request_id: str
    deadline_seconds: float | None
    principal: str = ""
    """The authenticated principal (never a token); empty until the access interceptor has authenticated the call."""


current_call: contextvars.ContextVar[CallContext | None] = contextvars.ContextVar("verdict_call", default=None)


class CallContextFilter(logging.Filter):
    """Adds `%(call)s` to every log record: the RPC method, the caller's x-request-id, the deadline it gave and (with
    auth on) the principal, so a
    warning from a judge or a parse can be traced to the call that caused it. Outside a call it is `-`."""

    def filter(self, record: logging.LogRecord) -> bool:
        call = current_call.get()
        if call is None:
            record.call = "-"
        else:
            deadline = "none" if call.deadline_seconds is None else f"{call.deadline_seconds:.1f}s"
            principal = f" principal={call.principal}" if call.principal else ""
            record.call = f"{call.method} request_id={call.request_id or '-'} deadline={deadline}{principal}"
        return True


_TYPES = {
    (False, False): "unary",
    (False, True): "server_stream",
    (True, False): "client_stream",
    (True, True): "bidi_stream",
}


class _MethodSeries:
    """The cached label children of one method."""

    def __init__(self, metrics: Metrics, full_method: str, grpc_type: str) -> None:
        service, _, method = full_method.lstrip("/").rpartition("/")
        labels = {"grpc_type": grpc_type, "grpc_service": service, "grpc_method": method}
        self.method = method
        self.started = metrics.grpc_started.labels(**labels)
        self.received = metrics.grpc_msg_received.labels(**labels)
        self.sent = metrics.grpc_msg_sent.labels(**labels)
        self.seconds = metrics.grpc_handling_seconds.labels(**labels)
        self.handled = {code: metrics.grpc_handled.labels(**labels, grpc_code=code) for code in GRPC_CODE_LABELS}

    def finish(self, started: float, code: grpc.StatusCode) -> None:
        self.handled[grpc_code_label(code)].inc()
        self.seconds.observe(time.perf_counter() - started)


def _final_code(context: grpc.aio.ServicerContext[Any, Any], error: BaseException | None) -> grpc.StatusCode:
    if isinstance(error, asyncio.CancelledError):
        # grpc.aio cancels the handler both when the client cancels and when the call's deadline passes; the client
        # sees DEADLINE_EXCEEDED in the second case, and an alert on DeadlineExceeded must see it too.
        remaining = context.time_remaining()
        if remaining is not None and remaining <= 0:
            return grpc.StatusCode.DEADLINE_EXCEEDED
        return grpc.StatusCode.CANCELLED
    code = context.code()
    if code is None or (isinstance(code, int) and code == 0):
        return grpc.StatusCode.OK if error is None else grpc.StatusCode.UNKNOWN
    if isinstance(code, grpc.StatusCode):
        return code
    return next((c for c in grpc.StatusCode if c.value[0] == code), grpc.StatusCode.UNKNOWN)


class MetricsInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Counts started/handled calls and messages, and times them, per service and method."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics
        self._series: dict[str, _MethodSeries] = {}
        self._wrapped: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}
        """Per method: the handler last seen and its observed wrapper. grpc.aio asks the interceptor on every call,
        and the generic handlers return the same handler object each time, so the wrapper is built once per method
        instead of once per call (the wrapper keeps no per-call state)."""

    def _series_for(self, method: str, grpc_type: str) -> _MethodSeries:
        series = self._series.get(method)
        if series is None:
            series = self._series[method] = _MethodSeries(self._metrics, method, grpc_type)
        return series

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        method = handler_call_details.method
        cached = self._wrapped.get(method)
        if cached is not None and cached[0] is handler:
            return cached[1]
        wrapped = self._wrap(method, handler)
        self._wrapped[method] = (handler, wrapped)
        return wrapped

    def _wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        grpc_type = _TYPES[(handler.request_streaming, handler.response_streaming)]
        series = self._series_for(method, grpc_type)
        if handler.unary_unary:
            return grpc.unary_unary_rpc_method_handler(
                _observe_unary(series, handler.unary_unary),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream:
            return grpc.unary_stream_rpc_method_handler(
                _observe_stream(series, handler.unary_stream, client_streams=False),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.stream_stream:
            return grpc.stream_stream_rpc_method_handler(
                _observe_stream(series, handler.stream_stream, client_streams=True),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler


def _observe_unary(series: _MethodSeries, behavior: Any) -> Any:
    async def observed(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        started = time.perf_counter()
        series.started.inc()
        series.received.inc()
        remaining = context.time_remaining()
        token = current_call.set(CallContext(series.method, _request_id(context), remaining))
        error: BaseException | None = None
        try:
            response = await behavior(request, context)
        except BaseException as exc:
            error = exc
            raise
        finally:
            code = _final_code(context, error)
            series.finish(started, code)
            current_call.reset(token)
        if code == grpc.StatusCode.OK:
            series.sent.inc()
        return response

    return observed


def _observe_stream(series: _MethodSeries, behavior: Any, *, client_streams: bool) -> Any:
    """Streaming handlers come in two shapes: async generators (reflection), whose yields are counted as sent, and
    coroutines that call `context.write` (health's Watch), which get a context that counts each write."""

    async def begin(request: Any) -> tuple[float, Any]:
        series.started.inc()
        if client_streams:
            return time.perf_counter(), _count_received(request, series)
        series.received.inc()
        return time.perf_counter(), request

    if inspect.isasyncgenfunction(behavior):

        async def observed_generator(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
            started, request = await begin(request)
            error: BaseException | None = None
            try:
                async for response in behavior(request, context):
                    series.sent.inc()
                    yield response
            except BaseException as exc:
                error = exc
                raise
            finally:
                series.finish(started, _final_code(context, error))

        return observed_generator

    async def observed_coroutine(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        started, request = await begin(request)
        error: BaseException | None = None
        try:
            return await behavior(request, _CountingWrites(context, series))
        except BaseException as exc:
            error = exc
            raise
        finally:
            series.finish(started, _final_code(context, error))

    return observed_coroutine


class _CountingWrites:
    """The servicer context of a streaming call, counting each message written through it as sent."""

    def __init__(self, context: grpc.aio.ServicerContext[Any, Any], series: _MethodSeries) -> None:
        self._context = context
        self._sent = series.sent

    async def write(self, message: Any) -> None:
        await self._context.write(message)
        self._sent.inc()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)


async def _count_received(requests: AsyncIterator[Any], series: _MethodSeries) -> AsyncIterator[Any]:
    async for request in requests:
        series.received.inc()
        yield request


def _request_id(context: grpc.aio.ServicerContext[Any, Any]) -> str:
    for key, value in context.invocation_metadata() or ():
        if key == "x-request-id":
            return str(value)
    return ""
