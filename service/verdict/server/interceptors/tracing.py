"""OpenTelemetry server spans, one per call on both ports, exported over OTLP/HTTP when `otlp_endpoint` is set.

A caller that sends a W3C `traceparent` (parsed once per call into the call context, rpc/context.py) sees Verdict's
span as a child of its own in its tracing backend; without one, the span starts a trace of its own, sampled at
`otlp_sample_ratio`. Each span is named `package.Service/Method`, of kind SERVER, with the `rpc.*` attributes of
OpenTelemetry's RPC conventions (`rpc.system` is `grpc` on the gRPC port and `connect_rpc` on the HTTP port), the
final status code, and the verdict of a Verify answer or a short Evaluate routing key.

The SDK (`opentelemetry-sdk`, the OTLP/HTTP exporter) is imported by `Tracing.from_config` only, and only when
tracing is configured: with `otlp_endpoint` empty, assembly.py puts no tracing layer in the chain and passes none to
the HTTP port, so the default path neither imports it nor pays for it per call. Spans are batched and exported off
the event loop by the SDK's batch processor (a full queue drops spans, never blocks a call); `Tracing.shutdown`, at
the end of the drain, exports what is left.

Only unary calls get spans: the long-lived streams (health's Watch, reflection) would make spans as long as a
connection, which says nothing about a call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import grpc
import grpc.aio

from verdict.config.keys import Config
from verdict.rpc.context import TraceContext, current_call, parse_traceparent
from verdict.server.interceptors.base import HandlerInterceptor, Shape, rewrap
from verdict.server.interceptors.observe import _final_code

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Span

__all__ = ["Tracing", "TracingInterceptor", "traces_url"]

_SERVER_ERRORS = frozenset(
    {
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.UNIMPLEMENTED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DATA_LOSS,
    }
)
"""The codes OpenTelemetry's RPC conventions mark as a server span's error; the others (INVALID_ARGUMENT...) are
the caller's, and the span's status stays unset."""

_ROUTING_KEY_MAX = 64
"""An Evaluate routing key longer than this is not put on the span: a key is a word, and a long one is model text."""


def traces_url(endpoint: str) -> str:
    """The OTLP/HTTP traces URL of a collector's base URL (`/v1/traces` appended unless it is already there)."""
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith("/v1/traces") else f"{endpoint}/v1/traces"


class Tracing:
    """Starts and ends the server spans of calls, with one tracer provider of this process's own (never the global
    one, so an embedding program's tracing is left alone)."""

    def __init__(self, provider: TracerProvider) -> None:
        from opentelemetry.context import Context
        from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, StatusCode, TraceFlags
        from opentelemetry.trace.propagation import set_span_in_context

        self.provider = provider
        self._tracer = provider.get_tracer("verdict")
        self._empty = Context

        def remote(trace: TraceContext) -> Context:
            """The context of a caller's span: a non-recording remote span, which the new span becomes a child of."""
            flags = TraceFlags(TraceFlags.SAMPLED if trace.sampled else TraceFlags.DEFAULT)
            span = SpanContext(int(trace.trace_id, 16), int(trace.span_id, 16), is_remote=True, trace_flags=flags)
            return set_span_in_context(NonRecordingSpan(span))

        self._remote = remote
        self._server = SpanKind.SERVER
        self._error = StatusCode.ERROR

    @classmethod
    def from_config(cls, config: Config) -> Tracing | None:
        """The tracing of `config` (None when `otlp_endpoint` is empty): batched OTLP/HTTP export to the endpoint,
        parent-based sampling at `otlp_sample_ratio`."""
        if not config.otlp_endpoint:
            return None
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

        provider = TracerProvider(
            resource=Resource.create({"service.name": config.otlp_service_name}),
            sampler=ParentBased(TraceIdRatioBased(config.otlp_sample_ratio)),
        )
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=traces_url(config.otlp_endpoint))))
        return cls(provider)

    def start(self, full_method: str, parent: TraceContext | None, system: str) -> Span:
        """A started server span for one call of `full_method` ("/package.Service/Method") under `parent`."""
        name = full_method.lstrip("/")
        service, _, method = name.rpartition("/")
        return self._tracer.start_span(
            name,
            context=self._remote(parent) if parent is not None else self._empty(),
            kind=self._server,
            attributes={"rpc.system": system, "rpc.service": service, "rpc.method": method},
        )

    def finish(self, span: Span, code: grpc.StatusCode, response: Any = None, *, connect: bool = False) -> None:
        """End the call's span with its final status code (also as Connect's error code on the HTTP port) and,
        where the answer has one, its verdict."""
        if span.is_recording():
            span.set_attribute("rpc.grpc.status_code", code.value[0])
            if connect and code != grpc.StatusCode.OK:
                span.set_attribute("rpc.connect_rpc.error_code", code.name.lower())
            verdict = _verdict(response)
            if verdict:
                span.set_attribute("verdict.verdict", verdict)
            if code in _SERVER_ERRORS:
                span.set_status(self._error, code.name)
        span.end()

    def connect(
        self,
        call: Callable[[Any, Any], Awaitable[Any]],
        full_method: str,
        code_of: Callable[[BaseException | None, Any], grpc.StatusCode],
    ) -> Callable[[Any, Any], Awaitable[Any]]:
        """An HTTP-port endpoint function (connect.py) inside a span: `code_of(error, ctx)` is the port's own
        mapping of the call's outcome to a status code."""

        async def traced(request: Any, ctx: Any) -> Any:
            traceparent = ctx.request_headers.get("traceparent", "")
            span = self.start(full_method, parse_traceparent(traceparent) if traceparent else None, "connect_rpc")
            error: BaseException | None = None
            response: Any = None
            try:
                response = await call(request, ctx)
                return response
            except BaseException as exc:
                error = exc
                raise
            finally:
                self.finish(span, code_of(error, ctx), response, connect=True)

        return traced

    def shutdown(self) -> None:
        """Export the spans still queued and stop the exporter (blocking: call it off the event loop)."""
        self.provider.shutdown()


def _verdict(response: Any) -> str:
    """The verdict of an answer: a VerifyVerdict's name, or an Evaluate routing key short enough to be one."""
    if response is None or not hasattr(response, "DESCRIPTOR"):
        return ""
    field = response.DESCRIPTOR.fields_by_name.get("verdict")
    if field is None:
        return ""
    value = response.verdict
    if field.enum_type is not None:
        number = field.enum_type.values_by_number.get(value)
        return str(number.name) if number is not None else str(value)
    return str(value) if isinstance(value, str) and len(value) <= _ROUTING_KEY_MAX else ""


class TracingInterceptor(HandlerInterceptor):
    """The gRPC port's tracing layer: a server span around each unary call, parented by the call context's trace
    (so it sits inside the metrics layer, which sets that context)."""

    def __init__(self, tracing: Tracing) -> None:
        self.tracing = tracing

    def intercept_handler(self, handler: grpc.RpcMethodHandler, full_method: str) -> grpc.RpcMethodHandler:
        return rewrap(handler, lambda behavior, shape: self._traced(behavior, shape, full_method), "unary_unary")

    def _traced(self, behavior: Any, _shape: Shape, full_method: str) -> Any:
        tracing = self.tracing

        async def traced(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            call = current_call.get()
            span = tracing.start(full_method, call.trace if call is not None else None, "grpc")
            error: BaseException | None = None
            response: Any = None
            try:
                response = await behavior(request, context)
                return response
            except BaseException as exc:
                error = exc
                raise
            finally:
                tracing.finish(span, _final_code(context, error), response)

        return traced
