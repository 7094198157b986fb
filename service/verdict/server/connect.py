"""The same RPCs on an HTTP port, over the Connect protocol: `curl -d '{"text": ...}'` for shell scripts and CI jobs,
gRPC-Web for browsers, and plain gRPC too, for clients that cannot reach the gRPC port.

The official Connect runtime for Python (`connectrpc`, conformance-tested) speaks the three protocols
(Connect with JSON or binary protobuf, unary GET included; gRPC; gRPC-Web) and Hypercorn serves it over HTTP/1.1
and HTTP/2 (cleartext, prior knowledge or upgrade), in the server's own event loop. Nothing is reimplemented: every
call goes to the same `VerdictServicer` method as a gRPC call, through a small adapter that gives it what it reads
from a gRPC context (the deadline, the metadata) and turns its `abort_with_status` into a `ConnectError` with the
same code, message and details (ErrorInfo, BadRequest). So validation, limits (`max_message_bytes` both ways,
deadlines), decision records, metrics (`grpc_server_*` with the same method labels) and the access log are shared.

The edge rule holds here too: nothing a caller sends yields `internal` or `unknown`. Requests that do not decode
(binary or JSON, POST or GET, any framing) get the gRPC port's answer, INVALID_ARGUMENT with reason
`UNDECODABLE_REQUEST` naming the field (`wire.undecodable`, `rpc.to_status`); the runtime's framing errors it reports
as INTERNAL (a compressed flag with no encoding) become that answer too; and gRPC over HTTP/1.1, which the runtime
cannot answer without trailers and used to turn into UNKNOWN and a traceback, is UNIMPLEMENTED.

The endpoints are built from the proto's service descriptor, like the gRPC handlers, so an RPC added to the proto is
served here too or the server fails at startup.
"""

from __future__ import annotations

import asyncio
import base64
import contextvars
import logging
import re
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import grpc

# The runtime's own Connect error encoder (status mapping, JSON body): not re-exported by connectrpc, so it is imported
# from its module; tests/server/test_connect*.py pin the body it writes.
from connectrpc._protocol import ConnectWireError
from connectrpc.code import Code
from connectrpc.codec import Codec
from connectrpc.compat import google_protobuf_codecs
from connectrpc.errors import ConnectError
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.request import RequestContext
from connectrpc.server import ConnectASGIApplication, Endpoint
from google.rpc import status_pb2
from hypercorn.config import Config as HypercornConfig
from hypercorn.utils import wrap_app
from protobuf.wkt import Any as ConnectAny

from verdict.config.keys import Config
from verdict.errors import ConfigError, InvalidArgument, VerdictError
from verdict.metrics import Metrics, grpc_code_label
from verdict.rpc import SERVICE_DESCRIPTOR, SERVICE_NAME, VerdictServicer, message_class, to_status
from verdict.rpc.context import CallContext, current_call, parse_traceparent
from verdict.rpc.decoding import Undecodable, undecodable
from verdict.security.gate import Caller
from verdict.security.tls import Certificates
from verdict.server.compression import BoundedGzip
from verdict.server.graders_http import ASGIApp, GradersHttp, is_graders_path, refusal
from verdict.server.http_transport import BodyDeadline, HttpTransport, StrictFraming, connection_cap
from verdict.server.interceptors.access_control import AccessInterceptor, publish, unpublish
from verdict.server.interceptors.admission import EXEMPT_METHODS, Admission
from verdict.server.interceptors.observe import MethodSeries, cancelled_code, log_access
from verdict.server.interceptors.tracing import Tracing
from verdict.waiting import loop_slot

__all__ = ["ConnectServer", "connect_application", "method_infos"]

log = logging.getLogger("verdict.connect")

_DETAILS_TRAILER = "grpc-status-details-bin"


class _CallAdapter:
    """What the servicer and the access gate read from a gRPC servicer context, answered from a Connect request
    context. The verified client certificate's names (`identities`, by peer address, filled by the transport's TLS
    handshake) are answered as gRPC's auth context holds them, so the gate maps a certificate to the same principal
    on both ports."""

    def __init__(self, ctx: RequestContext[Any, Any], identities: Mapping[str, tuple[str, ...]]) -> None:
        self._ctx = ctx
        self._identities = identities

    def peer(self) -> str:
        return f"http:{self._ctx.client_address or 'unknown'}"

    def auth_context(self) -> dict[str, list[bytes]]:
        names = self._identities.get(self._ctx.client_address or "", ())
        return {"x509_subject_alternative_name": [name.encode() for name in names]} if names else {}

    def time_remaining(self) -> float | None:
        remaining = self._ctx.timeout_ms
        return None if remaining is None else max(0.0, remaining / 1000)

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        headers = self._ctx.request_headers
        return tuple((key.lower(), value) for key, value in headers.allitems())

    async def abort_with_status(self, status: grpc.Status) -> None:
        raise connect_error(status)


def connect_error(status: grpc.Status) -> ConnectError:
    """The gRPC rich status the servicer built, as a ConnectError: same code, message and details."""
    code = Code[grpc.StatusCode(status.code).name if isinstance(status.code, grpc.StatusCode) else "UNKNOWN"]
    details = []
    for key, value in status.trailing_metadata or ():
        if key == _DETAILS_TRAILER:
            rich = status_pb2.Status.FromString(value)
            details = [ConnectAny(type_url=detail.type_url, value=detail.value) for detail in rich.details]
    return ConnectError(code, status.details or "", details)


_JSON_FIELD = re.compile(r"Failed to parse (\w+) field")


class _LenientCodec:
    """A codec whose refusals are the gRPC port's answer: INVALID_ARGUMENT, reason UNDECODABLE_REQUEST, naming the
    field. The runtime's own answer is a bare `invalid_argument` whose message quotes the parser ("unmarshal message:
    ...SystemError...") and carries no details, so a caller could not tell which field to fix."""

    def __init__(self, codec: Codec[Any, Any]) -> None:
        self._codec = codec

    def name(self) -> str:
        return self._codec.name()

    def encode(self, message: Any) -> bytes:
        return self._codec.encode(message)

    def decode(self, data: bytes | bytearray, message_class: type[Any]) -> Any:
        try:
            return self._codec.decode(data, message_class)
        except Exception as exc:  # any refusal by the parser is the caller's bytes (JSON raises several kinds)
            descriptor = message_class.DESCRIPTOR
            if self._codec.name() == "proto":
                refused = undecodable(descriptor, memoryview(data), exc)
            else:
                named = _JSON_FIELD.search(str(exc))
                refused = Undecodable(descriptor.full_name, named.group(1) if named else "", str(exc) or repr(exc))
            raise connect_error(to_status(refused.error())) from None


_PROTOCOL_ERROR = "protocol error:"


class _EdgeRule:
    """A metadata interceptor that keeps the edge rule for what the runtime refuses before any handler runs.

    connectrpc reports a gRPC or gRPC-Web message with the compressed flag set and no `grpc-encoding` as INTERNAL
    (as grpc-go does). That is the caller's framing, so it becomes INVALID_ARGUMENT with the gRPC port's details.
    Only the runtime's framing errors ("protocol error: ...") are rewritten: an INTERNAL from the servicer is a real
    server fault and stays one."""

    async def on_start(self, ctx: RequestContext[Any, Any]) -> None:
        return None

    async def on_end(self, token: None, ctx: RequestContext[Any, Any], error: Exception | None, /) -> None:
        if (
            isinstance(error, ConnectError)
            and error.code in (Code.INTERNAL, Code.UNKNOWN)
            and error.message.startswith(_PROTOCOL_ERROR)
        ):
            refused = InvalidArgument(
                f"request is not a valid gRPC message: {error.message.removeprefix(_PROTOCOL_ERROR).strip()}",
                field="request",
                reason="UNDECODABLE_REQUEST",
            )
            raise connect_error(to_status(refused)) from None


_CANCELLED_CODES = {Code.CANCELED: grpc.StatusCode.CANCELLED}


def _grpc_code(error: BaseException | None, ctx: RequestContext[Any, Any]) -> grpc.StatusCode:
    if error is None:
        return grpc.StatusCode.OK
    if isinstance(error, ConnectError):
        return _CANCELLED_CODES.get(error.code) or grpc.StatusCode[error.code.name]
    if isinstance(error, asyncio.CancelledError):
        remaining = ctx.timeout_ms
        return cancelled_code(None if remaining is None else remaining / 1000)
    return grpc.StatusCode.UNKNOWN


def _endpoint_function(
    behavior: Callable[[Any, Any], Awaitable[Any]],
    series: MethodSeries,
    admission: Admission | None,
    access: AccessInterceptor | None,
    identities: Mapping[str, tuple[str, ...]],
    tracing: Tracing | None = None,
) -> Callable[[Any, RequestContext[Any, Any]], Awaitable[Any]]:
    async def admitted(request: Any, adapter: _CallAdapter) -> Any:
        """The gRPC port's admission control, shared: one bound on running and queued calls for both ports."""
        if admission is None:
            return await behavior(request, adapter)
        try:
            await admission.enter(adapter.time_remaining())
        except VerdictError as shed:
            admission.refused(series.method, shed)
            raise connect_error(to_status(shed)) from None
        begun = time.monotonic()
        token = loop_slot.set(admission.place())
        try:
            return await behavior(request, adapter)
        finally:
            loop_slot.reset(token)
            admission.leave(time.monotonic() - begun)

    async def call(request: Any, ctx: RequestContext[Any, Any]) -> Any:
        started = time.perf_counter()
        series.started.inc()
        series.received.inc()
        headers = ctx.request_headers
        traceparent = headers.get("traceparent", "")
        context = CallContext(
            series.method,
            headers.get("x-request-id", ""),
            None if ctx.timeout_ms is None else ctx.timeout_ms / 1000,
            parse_traceparent(traceparent) if traceparent else None,
            "",
            "connect",
        )
        token = current_call.set(context)
        adapter = _CallAdapter(ctx, identities)
        error: BaseException | None = None
        try:
            if access is None:
                return await admitted(request, adapter)
            at_head = _admitted_at_head.get()
            if at_head is not None:  # HeadGate admitted the call before its body was read, and releases it
                caller, connection = at_head
                context.learned["principal"] = caller.principal
            else:
                try:
                    caller, connection = access.admit(SERVICE_NAME, series.method, adapter)
                except VerdictError as refused:
                    access.record_refusal(series.method, refused)
                    raise connect_error(to_status(refused)) from None
            published = publish(caller)
            try:
                return await admitted(request, adapter)
            finally:
                unpublish(published)
                if at_head is None:
                    access.release(caller, connection)
        except BaseException as exc:
            error = exc
            raise
        finally:
            code = _grpc_code(error, ctx)
            series.finish(started, code)
            if code == grpc.StatusCode.OK:
                series.sent.inc()
            if series.access_level is not None:
                log_access(series.access_level, series.full_method, grpc_code_label(code), started)
            current_call.reset(token)

    return call if tracing is None else tracing.connect(call, series.full_method, _grpc_code)


_admitted_at_head: contextvars.ContextVar[tuple[Caller, str] | None] = contextvars.ContextVar(
    "verdict_admitted_at_head", default=None
)
"""The caller and connection key HeadGate admitted for the request being served (None: not admitted at the head)."""


class _HeadAdapter:
    """What the access gate reads from a call, answered from an ASGI request head: the `authorization` header, the
    verified certificate names of the connection (by peer address, as `_CallAdapter`) and the same peer key, so
    the per-connection limit counts the same connection on both paths."""

    def __init__(self, scope: Any, identities: Mapping[str, tuple[str, ...]]) -> None:
        client = scope.get("client")
        self._address = f"{client[0]}:{client[1]}" if client else ""
        self._headers = scope.get("headers", ())
        self._identities = identities

    def peer(self) -> str:
        return f"http:{self._address or 'unknown'}"

    def auth_context(self) -> dict[str, list[bytes]]:
        names = self._identities.get(self._address, ())
        return {"x509_subject_alternative_name": [name.encode() for name in names]} if names else {}

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return tuple((bytes(k).decode("latin-1").lower(), bytes(v).decode("latin-1")) for k, v in self._headers)


class HeadGate:
    """ASGI middleware: every RPC (and the graders routes) is authenticated and authorized as soon as its request
    head is complete, before one byte of its body is read.

    Without it the Connect runtime read the whole body (up to `max_message_bytes`, 4 MiB) into memory and the gate
    looked at the token only then, so any caller without credentials could make the port hold
    `http_max_connections` x 4 MiB. The check is the access interceptor's own `admit` (same gate, policy, limits
    and `verdict_auth_decisions_total` counts); an admitted call keeps its in-flight slots until its answer is sent
    (the body upload counts against the limits too) and the endpoint uses this admission instead of admitting again.
    A refusal is answered in the caller's protocol (Connect: 401/403/429 with the error body; gRPC and gRPC-Web:
    trailers-only with `grpc-status`; the graders routes: OpenAI's error object), the body unread: over HTTP/1.1
    Hypercorn then closes the connection (the request is not complete), over HTTP/2 the stream is ended."""

    def __init__(
        self,
        app: ASGIApp,
        access: AccessInterceptor,
        series: Mapping[str, MethodSeries],
        identities: Mapping[str, tuple[str, ...]],
    ) -> None:
        self._app = app
        self._access = access
        self._series = series
        self._identities = identities

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or not self._access.active:
            await self._app(scope, receive, send)
            return
        path = scope.get("path", "")
        graders = is_graders_path(path)
        series = self._series.get(f"/{SERVICE_NAME}/Evaluate" if graders else path)
        if series is None:  # not an RPC: the runtime answers 404 without reading the body
            await self._app(scope, receive, send)
            return
        started = time.perf_counter()
        adapter = _HeadAdapter(scope, self._identities)
        metadata = dict(adapter.invocation_metadata())
        traceparent = metadata.get("traceparent", "")
        context = CallContext(
            series.method,
            metadata.get("x-request-id", ""),
            None,
            parse_traceparent(traceparent) if traceparent else None,
            "",
            "connect",
        )
        call = current_call.set(context)
        try:
            caller, connection = self._access.admit(SERVICE_NAME, series.method, adapter)
        except VerdictError as refused:
            self._access.record_refusal(series.method, refused)
            status = to_status(refused)
            series.started.inc()
            series.finish(started, grpc.StatusCode(status.code))
            if series.access_level is not None:
                log_access(series.access_level, series.full_method, grpc_code_label(status.code), started)
            await _refuse(scope, send, status, graders=graders)
            return
        finally:
            current_call.reset(call)
        token = _admitted_at_head.set((caller, connection))
        try:
            await self._app(scope, receive, send)
        finally:
            _admitted_at_head.reset(token)
            self._access.release(caller, connection)


async def _refuse(scope: Any, send: Any, status: grpc.Status, *, graders: bool) -> None:
    """The refusal `status` in the protocol the request head names, without reading its body. Over HTTP/1.x the
    answer says `connection: close`, which it is: the unread body cannot be skipped without reading it."""
    error = connect_error(status)
    close = [(b"connection", b"close")] if scope.get("http_version") in ("1.0", "1.1") else []
    content_type = b""
    for key, value in scope.get("headers", ()):
        if bytes(key).lower() == b"content-type":
            content_type = bytes(value).lower()
    if graders:
        code, body = refusal(error)
    elif content_type.startswith(b"application/grpc"):  # gRPC and gRPC-Web: trailers-only, in the headers
        headers = [
            (b"content-type", content_type),
            (b"grpc-status", str(grpc.StatusCode(status.code).value[0]).encode()),
            (b"grpc-message", urllib.parse.quote(status.details or "").encode()),
            *close,
        ]
        for key, value in status.trailing_metadata or ():
            if key == _DETAILS_TRAILER:
                headers.append((key.encode(), base64.b64encode(value).rstrip(b"=")))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return
    else:
        wire = ConnectWireError.from_exception(error)
        code, body = wire.to_http_status().code, wire.to_json_bytes()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *close]
    await send({"type": "http.response.start", "status": code, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def method_infos() -> dict[str, MethodInfo[Any, Any]]:
    """Connect's description of every RPC of the service, from the proto's descriptor (servers and clients)."""
    return {
        method.name: MethodInfo(
            name=method.name,
            service_name=SERVICE_NAME,
            input=message_class(method.input_type),
            output=message_class(method.output_type),
            # Every RPC answers from its request alone (state travels in the request): safe to send as GET.
            idempotency_level=IdempotencyLevel.NO_SIDE_EFFECTS,
            stream_type=StreamType.UNARY,
        )
        for method in SERVICE_DESCRIPTOR.methods
    }


class _VerdictConnectApp(ConnectASGIApplication[VerdictServicer]):
    @property
    def path(self) -> str:
        return f"/{SERVICE_NAME}"

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """gRPC (not gRPC-Web) needs HTTP trailers, which Hypercorn offers on HTTP/2 only. The runtime raises on such
        a request (UNKNOWN to the caller, a traceback in the log); a caller who sent gRPC over HTTP/1.1 gets
        UNIMPLEMENTED in a trailers-only answer instead, saying what to use."""
        if scope.get("type") == "http" and "http.response.trailers" not in scope.get("extensions", {}):
            content_type = dict(scope.get("headers", ())).get(b"content-type", b"")
            if content_type.startswith(b"application/grpc") and not content_type.startswith(b"application/grpc-web"):
                message = "gRPC needs HTTP/2 on this port; over HTTP/1.1 use Connect or gRPC-Web"
                await send(
                    {
                        "type": "http.response.start",
                        "status": 200,
                        "headers": [
                            (b"content-type", content_type),
                            (b"grpc-status", str(grpc.StatusCode.UNIMPLEMENTED.value[0]).encode()),
                            (b"grpc-message", urllib.parse.quote(message).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
        await super().__call__(scope, receive, send)


def connect_application(
    servicer: VerdictServicer,
    metrics: Metrics,
    config: Config,
    *,
    access: AccessInterceptor | None = None,
    admission: Admission | None = None,
    identities: Mapping[str, tuple[str, ...]] | None = None,
    tracing: Tracing | None = None,
) -> ASGIApp:
    """The ASGI application serving every RPC of the proto's service over Connect, gRPC and gRPC-Web. With `access`
    (the gRPC port's interceptor) every call is authenticated, authorized and limited exactly as on that port; with
    `admission` (the gRPC port's, shared) it is admitted or shed by the same bound on running and queued calls.
    `identities` are the verified client certificate names by peer address (`HttpTransport.identities`); with
    `tracing` every call gets a server span (interceptors/tracing.py)."""
    peers: Mapping[str, tuple[str, ...]] = identities if identities is not None else {}
    access_level = None if config.access_log_level == "OFF" else logging.getLevelName(config.access_log_level)

    all_series = {
        f"/{SERVICE_NAME}/{method.name}": MethodSeries(metrics, f"/{SERVICE_NAME}/{method.name}", "unary", access_level)
        for method in SERVICE_DESCRIPTOR.methods
    }

    def endpoints(service: VerdictServicer) -> Mapping[str, Any]:
        table: dict[str, Any] = {}
        for method in SERVICE_DESCRIPTOR.methods:
            info = method_infos()[method.name]
            series = all_series[f"/{SERVICE_NAME}/{method.name}"]
            behavior = getattr(service, method.name)
            table[f"/{SERVICE_NAME}/{method.name}"] = Endpoint.unary(
                info,
                _endpoint_function(
                    behavior, series, None if method.name in EXEMPT_METHODS else admission, access, peers, tracing
                ),
            )
        return table

    application = _VerdictConnectApp(
        service=servicer,
        endpoints=endpoints,
        interceptors=[_EdgeRule()],
        read_max_bytes=config.max_message_bytes,
        codecs=[_LenientCodec(codec) for codec in google_protobuf_codecs()],
        compressions=[BoundedGzip()],
    )
    # OpenAI's graders run/validate routes, through the same door as Evaluate (graders_http.py).
    evaluate = all_series[f"/{SERVICE_NAME}/Evaluate"]
    served = GradersHttp(
        application,
        lambda behavior: _endpoint_function(behavior, evaluate, admission, access, peers, tracing),
        servicer.Evaluate,
        max_bytes=config.max_message_bytes,
    )
    return served if access is None else HeadGate(served, access, all_series, peers)


class ConnectServer:
    """The HTTP port: Hypercorn's protocol stack serving the Connect application in this event loop, behind
    `HttpTransport`'s connection bounds (a cap, the handshake timeout, deadlines for the head and the body).

    The socket is bound at construction, so an address in use fails startup with a ConfigError naming
    `http_address` before anything else starts, and port 0 can be read back."""

    def __init__(
        self,
        app: ASGIApp,
        config: Config,
        metrics: Metrics,
        *,
        certificates: Certificates | None = None,
        identities: dict[str, tuple[str, ...]] | None = None,
        reuse_port: bool = False,
    ) -> None:
        address = config.http_address
        self._config = HypercornConfig()
        self._config.bind = [address]
        # Hypercorn sets SO_REUSEPORT on the sockets it binds exactly when it runs several worker processes (its only
        # other use of `workers` is on Windows). Verdict's supervisor runs the workers, each binding this same port.
        self._config.workers = 2 if reuse_port else 1
        self._config.accesslog = None  # Verdict's own access log covers these calls, in the configured format
        self._config.errorlog = logging.getLogger("verdict.http")
        self._config.graceful_timeout = config.grace_period_seconds
        self._config.h2_max_inbound_frame_size = 2**14
        self._config.h2_max_concurrent_streams = max(1, min(config.max_concurrent_streams or 100, 100))
        self._config.keep_alive_timeout = config.http_idle_timeout_seconds
        self._config.read_timeout = max(1, int(config.http_body_timeout_seconds))
        try:
            self._sockets = self._config.create_sockets()
        except OSError as exc:
            raise ConfigError("http_address", f"cannot bind {address}: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise ConfigError("http_address", f"must be host:port, got {address!r} ({exc})") from None
        listening = self._sockets.secure_sockets + self._sockets.insecure_sockets
        for sock in listening:
            # Listening now (the transport listens again when it starts) makes connections made right after start()
            # wait in the backlog instead of being refused.
            sock.listen(self._config.backlog)
        self.port = int(listening[0].getsockname()[1])
        self.transport = HttpTransport(
            wrap_app(
                StrictFraming(BodyDeadline(app, config.http_body_timeout_seconds)),
                self._config.wsgi_max_body_size,
                "asgi",
            ),
            self._config,
            self._sockets,
            certificates=certificates,
            max_connections=connection_cap(config.http_max_connections),
            handshake_timeout=config.handshake_timeout_seconds,
            rejected=metrics.http_connections_rejected,
        )
        if identities is not None:
            self.transport.identities = identities
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.ensure_future(self.transport.serve(self._stop.wait))

    async def stop(self, grace: float) -> None:
        """Stop accepting, let calls in flight finish for up to `grace` seconds, then close."""
        self._config.graceful_timeout = grace
        self._stop.set()
        if self._task is None:
            for sock in self._sockets.secure_sockets + self._sockets.insecure_sockets:
                sock.close()
            return
        try:
            await asyncio.wait_for(asyncio.shield(self._task), timeout=grace + 5)
        except TimeoutError:
            self._task.cancel()
        except Exception:
            log.exception("HTTP server stopped with an error")
