"""The HTTP port's front door: what a curl user, a browser and a load balancer expect of an HTTP API, around the
Connect application (connect.py), which stays the only thing that answers RPCs.

An ASGI middleware, so nothing in the Connect runtime is patched:

- **Readable error details.** A Connect error carries each detail as base64 protobuf (`value`), which a person with
  curl cannot read. Every detail the service sends (ErrorInfo, BadRequest, RetryInfo, ...) also gets the Connect
  protocol's own readable form, `debug`: the detail as protobuf JSON. Clients that read `value` are unaffected.
- **Whole numbers as integers.** Python's protobuf JSON printer writes every double as `0.0`, and the evaluators'
  `details` (a `google.protobuf.Struct`, whose numbers are doubles on the wire) are mostly counts: `stall_count: 0.0`
  is noise in a shell script and a diff. A whole double within 2**53 is printed as an integer, as Go's protojson and
  JavaScript print it; the number is the same number to every JSON reader. Object keys of `details` are sorted, so
  two answers to the same call diff clean.
- **A body on every error status.** The runtime answers some refusals (an unsupported or missing Content-Type: 415;
  an unknown path: 404; a wrong HTTP method: 405) with an empty body. Each gets a Connect error body saying what to
  send instead.
- **Retry-After.** A refusal whose details carry RetryInfo (load shed, rate limited) gets the same hint as an HTTP
  `Retry-After` header (whole seconds, rounded up), which proxies, curl `--retry` and browsers understand.
- **Health over plain HTTP.** `GET /healthz` (liveness), `GET /readyz` (readiness) and `GET /health/NAME` (any name
  of the gRPC health service) answer from the same `Health` servicer as `grpc.health.v1.Health/Check`: 200 when
  SERVING, 503 otherwise, 404 for a name the service does not know. They are exempt from authentication, as the gRPC
  health service is, because a probe carries no token.
- **The API description.** `GET /openapi.json` serves the OpenAPI 3.1 document generated from the proto
  (`scripts/gen_openapi.py`, kept fresh by a test), so a team can generate a client or browse the API.
- **CORS by allowed origins** (`http_cors_allowed_origins`, empty by default: no cross-origin headers at all). An
  allowed origin's preflight is answered here; its calls get `Access-Control-Allow-Origin` and the response headers
  a Connect or gRPC-Web client reads exposed. A preflight from any other origin is refused (403, naming the key).

Only Connect unary JSON answers (`application/json`, the only kind a person reads) are rewritten, after they are
complete; binary, gRPC and gRPC-Web answers pass through unchanged, except that a gRPC-Web refusal (its trailer
frame) and a trailers-only gRPC refusal (its headers) get `Retry-After` from their `grpc-status-details-bin` too.
Every RPC is unary, so holding an answer back until it is complete costs one message of memory, never a stream.
"""

from __future__ import annotations

import base64
import gzip
import json
import math
from collections.abc import Awaitable, Callable, MutableMapping
from importlib import resources
from typing import Any

from google.protobuf import json_format, symbol_database
from google.protobuf.message import DecodeError, Message
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2

from verdict.server.health import Health

__all__ = [
    "API_DOCUMENT_PATH",
    "HEALTH_PATHS",
    "HttpDoor",
    "api_document",
    "readable",
]

Scope = MutableMapping[str, Any]
Event = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Event]]
Send = Callable[[Event], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

API_DOCUMENT_PATH = "/openapi.json"
"""Where the OpenAPI document of the service is served."""
HEALTH_PATHS = {"/healthz": "liveness", "/readyz": ""}
"""Plain HTTP probes and the gRPC health names they report (server/assembly.py: LIVENESS_SERVICE, the readiness
name "" that means the whole server)."""
HEALTH_PREFIX = "/health/"
"""`GET /health/NAME` reports any gRPC health name, e.g. /health/verdict.v1.VerdictService."""

_WHOLE_LIMIT = 2.0**53
"""Doubles are exact integers up to here; a bigger whole double is left as the printer wrote it."""
_DETAILS_TRAILER = b"grpc-status-details-bin"
_ALLOWED_METHODS = "GET, POST"
_ALLOWED_HEADERS = (
    "authorization, content-type, connect-protocol-version, connect-timeout-ms, connect-accept-encoding, "
    "connect-content-encoding, grpc-timeout, x-grpc-web, x-user-agent, x-request-id, traceparent"
)
_EXPOSED_HEADERS = (
    "grpc-status, grpc-message, grpc-status-details-bin, retry-after, content-encoding, connect-content-encoding"
)
_PREFLIGHT_MAX_AGE = "7200"
_HTTP_CODES = {
    400: "invalid_argument",
    401: "unauthenticated",
    403: "permission_denied",
    404: "unimplemented",
    405: "unimplemented",
    408: "deadline_exceeded",
    413: "resource_exhausted",
    415: "invalid_argument",
    429: "unavailable",
    502: "unavailable",
    503: "unavailable",
    504: "unavailable",
}
"""The Connect code an empty error status is given a body with: the Connect protocol's HTTP-to-code mapping, except
that a request the server cannot read (400, 415) is the caller's to fix, as the gRPC port says for undecodable
bytes."""
_EXPLANATIONS = {
    404: "no such path: RPCs are POST /verdict.v1.VerdictService/METHOD (see GET /openapi.json)",
    405: "RPCs accept POST (and GET with ?encoding=json&message=...); see GET /openapi.json",
    415: (
        "unsupported Content-Type {content_type!r}: send application/json or application/proto (Connect), "
        "application/grpc-web(+proto|+json) or application/grpc (HTTP/2)"
    ),
}


def readable(value: Any, *, sort: bool = False) -> Any:
    """`value` (parsed JSON) with every whole double within 2**53 as an integer, and the keys of every object under
    a `details` key (a Struct, whose key order is the map's) sorted; messages keep the proto's field order."""
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() and abs(value) < _WHOLE_LIMIT else value
    if isinstance(value, dict):
        keys = sorted(value) if sort else list(value)
        return {
            key: readable(value[key], sort=sort or (key == "details" and isinstance(value[key], dict))) for key in keys
        }
    if isinstance(value, list):
        return [readable(item, sort=sort) for item in value]
    return value


def _detail_message(type_name: str, payload: bytes) -> Message | None:
    """The detail as a protobuf message, when its type is one this process knows (google.rpc's error details, the
    service's own messages); None otherwise."""
    try:
        cls = symbol_database.Default().GetSymbol(type_name)
    except KeyError:
        return None
    message: Message = cls()
    try:
        message.ParseFromString(payload)
    except DecodeError:
        return None
    return message


def _padded(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4))


def _with_debug(error: dict[str, Any]) -> tuple[dict[str, Any], float | None]:
    """A Connect error body with `debug` beside each detail's `value`, and the RetryInfo delay if a detail has one."""
    retry: float | None = None
    details = error.get("details")
    if not isinstance(details, list):
        return error, None
    for detail in details:
        if not isinstance(detail, dict) or not isinstance(detail.get("value"), str):
            continue
        try:
            message = _detail_message(str(detail.get("type", "")), _padded(detail["value"]))
        except ValueError:
            continue
        if message is None:
            continue
        detail.setdefault("debug", json_format.MessageToDict(message))
        if isinstance(message, error_details_pb2.RetryInfo):
            retry = message.retry_delay.ToTimedelta().total_seconds()
    return error, retry


def _retry_after(seconds: float) -> bytes:
    return str(max(1, math.ceil(seconds))).encode()


def _grpc_retry(headers: list[tuple[bytes, bytes]]) -> float | None:
    """The RetryInfo delay in a trailers-only gRPC answer's `grpc-status-details-bin` header, if any."""
    for key, value in headers:
        if key.lower() != _DETAILS_TRAILER:
            continue
        try:
            status = status_pb2.Status.FromString(_padded(value.decode("ascii")))
        except (ValueError, DecodeError):
            return None
        for detail in status.details:
            if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                info = error_details_pb2.RetryInfo()
                detail.Unpack(info)
                seconds: float = info.retry_delay.ToTimedelta().total_seconds()
                return seconds
    return None


def _web_retry(body: bytes) -> float | None:
    """The RetryInfo delay in a gRPC-Web answer's trailer frame (flag 0x80: `name: value` lines), if any."""
    offset = 0
    while offset + 5 <= len(body):
        flags, size = body[offset], int.from_bytes(body[offset + 1 : offset + 5], "big")
        frame = body[offset + 5 : offset + 5 + size]
        offset += 5 + size
        if flags & 0x80:
            lines = frame.decode("latin-1").split("\r\n")
            pairs = [line.split(":", 1) for line in lines if ":" in line]
            return _grpc_retry([(k.strip().encode(), v.strip().encode()) for k, v in pairs])
    return None


def _error_body(status: int, method: str, content_type: str) -> bytes:
    code = _HTTP_CODES.get(status, "unknown" if status < 500 else "internal")
    message = _EXPLANATIONS.get(status, f"HTTP {status}").format(content_type=content_type)
    body: dict[str, Any] = {"code": code, "message": message}
    if status == 415:
        field = "Content-Type"
        if method == "GET":
            field, message = "encoding", "unsupported encoding: a GET names ?encoding=json or ?encoding=proto"
            body["message"] = message
        violation = error_details_pb2.BadRequest(
            field_violations=[error_details_pb2.BadRequest.FieldViolation(field=field, description=message)]
        )
        info = error_details_pb2.ErrorInfo(
            reason="UNSUPPORTED_MEDIA_TYPE", domain="verdict.v1", metadata={"field": field}
        )
        body["details"] = [
            {
                "type": detail.DESCRIPTOR.full_name,
                "value": base64.b64encode(detail.SerializeToString()).decode().rstrip("="),
                "debug": json_format.MessageToDict(detail),
            }
            for detail in (info, violation)
        ]
    return json.dumps(body).encode()


def api_document() -> bytes:
    """The OpenAPI document shipped with the package (written by scripts/gen_openapi.py)."""
    return resources.files("verdict.server").joinpath("openapi.json").read_bytes()


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return ""


class _Rewriter:
    """Holds back a Connect JSON answer until it is complete, then sends it made readable (and, for a refusal with
    RetryInfo, with Retry-After). Anything else passes through as it comes."""

    def __init__(self, send: Send, cors: list[tuple[bytes, bytes]], method: str, content_type: str) -> None:
        self._send = send
        self._cors = cors
        self._method = method
        self._content_type = content_type
        self._start: Event | None = None
        self._chunks: list[bytes] = []
        self._holding = False
        self._web = False

    async def __call__(self, message: Event) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            headers = [(bytes(k), bytes(v)) for k, v in message.get("headers", ())]
            content_type = next((v for k, v in headers if k.lower() == b"content-type"), b"")
            status = int(message["status"])
            self._web = content_type.startswith(b"application/grpc-web") and not content_type.startswith(
                b"application/grpc-web-text"
            )
            self._holding = (
                self._web or content_type.startswith(b"application/json") or (status >= 400 and not content_type)
            )
            if not self._holding:
                retry = _grpc_retry(headers)
                if retry is not None:
                    headers.append((b"retry-after", _retry_after(retry)))
                message = {**message, "headers": headers + self._cors}
                await self._send(message)
                return
            self._start = {**message, "headers": headers}
            return
        if kind == "http.response.body" and self._holding:
            self._chunks.append(bytes(message.get("body", b"")))
            if message.get("more_body", False):
                return
            await self._flush(b"".join(self._chunks))
            return
        await self._send(message)

    async def _flush(self, body: bytes) -> None:
        assert self._start is not None
        status = int(self._start["status"])
        headers: list[tuple[bytes, bytes]] = self._start["headers"]
        encoding = next((v for k, v in headers if k.lower() == b"content-encoding"), b"identity").lower()
        extra: list[tuple[bytes, bytes]] = []
        if self._web:
            retry = _web_retry(body)
            if retry is not None:
                extra.append((b"retry-after", _retry_after(retry)))
        elif not body.strip() and status >= 400:
            body = _error_body(status, self._method, self._content_type)
            headers = [(k, v) for k, v in headers if k.lower() not in (b"content-type", b"content-encoding")]
            headers.append((b"content-type", b"application/json"))
        elif encoding in (b"identity", b"gzip"):
            body, retry = _rewritten(body, gzipped=encoding == b"gzip", error=status >= 400)
            if retry is not None:
                extra.append((b"retry-after", _retry_after(retry)))
        headers = [(k, v) for k, v in headers if k.lower() != b"content-length"]
        headers += [(b"content-length", str(len(body)).encode()), *extra, *self._cors]
        await self._send({**self._start, "headers": headers})
        await self._send({"type": "http.response.body", "body": body, "more_body": False})


def _rewritten(body: bytes, *, gzipped: bool, error: bool) -> tuple[bytes, float | None]:
    """The readable form of a Connect JSON body (and a RetryInfo delay for an error); the body unchanged when it is
    not JSON."""
    try:
        parsed = json.loads(gzip.decompress(body) if gzipped else body)
    except (ValueError, OSError, EOFError):
        return body, None
    retry = None
    if error and isinstance(parsed, dict):
        parsed, retry = _with_debug(parsed)
    text = json.dumps(readable(parsed), ensure_ascii=False, indent=None if error else 2).encode()
    return (gzip.compress(text) if gzipped else text), retry


class HttpDoor:
    """The ASGI application of the HTTP port: health, the API document and CORS here, RPCs to `app`."""

    def __init__(self, app: ASGIApp, *, health: Health | None = None, allowed_origins: tuple[str, ...] = ()) -> None:
        self._app = app
        self._health = health
        self._origins = frozenset(allowed_origins)
        self._document = api_document()

    def _cors(self, scope: Scope) -> list[tuple[bytes, bytes]] | None:
        """The CORS headers for this request: None when it has no Origin or CORS is off, [] for an origin that is not
        allowed (the browser then refuses to show the answer)."""
        origin = _header(scope, b"origin")
        if not origin or not self._origins:
            return None
        if origin not in self._origins and "*" not in self._origins:
            return []
        return [
            (b"access-control-allow-origin", origin.encode("latin-1")),
            (b"access-control-expose-headers", _EXPOSED_HEADERS.encode()),
            (b"vary", b"Origin"),
        ]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await self._app(scope, receive, send)
            return
        method, path = scope.get("method", ""), scope.get("path", "")
        cors = self._cors(scope)
        if method == "OPTIONS" and cors is not None and _header(scope, b"access-control-request-method"):
            await self._preflight(cors, send)
            return
        if method in ("GET", "HEAD") and (path in HEALTH_PATHS or path.startswith(HEALTH_PREFIX)):
            await self._probe(path, method, cors or [], send)
            return
        if method in ("GET", "HEAD") and path == API_DOCUMENT_PATH:
            await _answer(send, 200, self._document, cors or [], head=method == "HEAD")
            return
        await self._app(scope, receive, _Rewriter(send, cors or [], method, _header(scope, b"content-type")))

    async def _preflight(self, cors: list[tuple[bytes, bytes]], send: Send) -> None:
        if not cors:
            body = {
                "code": "permission_denied",
                "message": "this origin is not allowed cross-origin calls (http_cors_allowed_origins)",
            }
            await _answer(send, 403, json.dumps(body).encode(), [(b"vary", b"Origin")])
            return
        allowed = [
            *cors,
            (b"access-control-allow-methods", _ALLOWED_METHODS.encode()),
            (b"access-control-allow-headers", _ALLOWED_HEADERS.encode()),
            (b"access-control-max-age", _PREFLIGHT_MAX_AGE.encode()),
        ]
        await _answer(send, 204, b"", allowed)

    async def _probe(self, path: str, method: str, cors: list[tuple[bytes, bytes]], send: Send) -> None:
        name = HEALTH_PATHS.get(path, path.removeprefix(HEALTH_PREFIX))
        status = None if self._health is None else self._health.status(name)
        if status is None:
            unknown = {"code": "not_found", "message": f"unknown health name {name!r}"}
            await _answer(send, 404, json.dumps(unknown).encode(), cors, head=method == "HEAD")
            return
        label = health_pb2.HealthCheckResponse.ServingStatus.Name(status)
        http_status = 200 if status == health_pb2.HealthCheckResponse.SERVING else 503
        body = json.dumps({"service": name, "status": label}).encode()
        await _answer(send, http_status, body, cors, head=method == "HEAD")


async def _answer(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]], *, head: bool = False
) -> None:
    start = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
        *headers,
    ]
    await send({"type": "http.response.start", "status": status, "headers": start})
    await send({"type": "http.response.body", "body": b"" if head else body, "more_body": False})
