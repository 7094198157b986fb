"""The HTTP port keeps the edge rule: nothing a caller sends yields `internal` or `unknown`, a 500 or a traceback.

Hostile bodies, headers, query strings and framing for each protocol the port speaks (Connect JSON and binary, unary
GET, gRPC-Web, gRPC), each answered with the Connect code a caller can act on and, where the request did not decode,
the same details the gRPC port gives (ErrorInfo `UNDECODABLE_REQUEST`, BadRequest naming the field); after each, the
server still answers a good call.
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import threading
import urllib.parse
from collections.abc import Iterator

import pytest
from google.rpc import error_details_pb2, status_pb2

from tests.support import HTTP_SERVER_FAULTS, connect_outcome, grpc_frame, http_send, make_config, serving

SERVICE = "/verdict.v1.VerdictService"
JSON = {"Content-Type": "application/json"}
PROTO = {"Content-Type": "application/proto"}
GRPC_WEB = {"Content-Type": "application/grpc-web+proto"}
LIMIT = 64 * 1024


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    """A server with an HTTP port, in its own event loop thread (the probes are plain blocking HTTP)."""
    ready: dict[str, int] = {}
    started = threading.Event()
    stop: asyncio.Event | None = None
    loop = asyncio.new_event_loop()

    async def main() -> None:
        nonlocal stop
        stop = asyncio.Event()
        async with serving(make_config(http_address="127.0.0.1:0", max_message_bytes=LIMIT)) as running:
            assert running.app.http is not None
            ready["port"] = running.app.http.port
            started.set()
            await stop.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    assert started.wait(60), "the server did not start"
    yield ready["port"]
    assert stop is not None
    loop.call_soon_threadsafe(stop.set)
    thread.join(30)


def details(body: bytes) -> dict[str, bytes]:
    return {item["type"]: base64.b64decode(item["value"] + "==") for item in json.loads(body).get("details", [])}


def healthy(port: int) -> None:
    status, _headers, body = http_send(
        port, "POST", f"{SERVICE}/VerifyResponse", b'{"text": "```json\\n{}\\n```"}', JSON
    )
    assert (status, json.loads(body)["verdict"]) == (200, "VERIFY_VERDICT_OK")


HOSTILE: dict[str, tuple[str, str, bytes, dict[str, str], str]] = {
    # name: (method, path, body, headers, expected outcome)
    "proto, invalid UTF-8 in a string": ("POST", "VerifyResponse", b"\x0a\x02\xff\xfe", PROTO, "invalid_argument"),
    "proto, truncated varint": ("POST", "Evaluate", b"\x22\x80\x80\x80\x80\x10", PROTO, "invalid_argument"),
    "JSON, invalid UTF-8": ("POST", "VerifyResponse", b'{"text": "\xff\xfe"}', JSON, "invalid_argument"),
    "JSON, malformed": ("POST", "VerifyResponse", b'{"text": ', JSON, "invalid_argument"),
    "JSON, empty body": ("POST", "VerifyResponse", b"", JSON, "invalid_argument"),
    "JSON, a top-level string": ("POST", "Evaluate", b'"\\ud800"', JSON, "invalid_argument"),
    "JSON, a byte-order mark": ("POST", "Evaluate", b"\xef\xbb\xbf{}", JSON, "invalid_argument"),
    "JSON, wrong type": ("POST", "VerifyResponse", b'{"text": 5}', JSON, "invalid_argument"),
    "JSON, lone surrogate": ("POST", "VerifyResponse", b'{"text": "\\ud800"}', JSON, "invalid_argument"),
    "JSON, NaN in context": (
        "POST",
        "Evaluate",
        b'{"config": {"yaml": "type: exit_code"}, "context": {"x": NaN}}',
        JSON,
        "invalid_argument",
    ),
    "JSON, -Infinity in context": (
        "POST",
        "Evaluate",
        b'{"config": {"yaml": "type: exit_code"}, "context": {"x": -Infinity}}',
        JSON,
        "invalid_argument",
    ),
    "JSON, 1e400 as target": (
        "POST",
        "Evaluate",
        b'{"config": {"output_numeric": {"operator": "eq", "target": 1e400}}, "output": "3"}',
        JSON,
        "invalid_argument",
    ),
    "JSON, a 5000-digit integer": (
        "POST",
        "Evaluate",
        b'{"context": {"x": ' + b"9" * 5000 + b"}}",
        JSON,
        "invalid_argument",
    ),
    "JSON, a 400-digit integer in a Value": (
        "POST",
        "Evaluate",
        b'{"context": {"x": 1' + b"0" * 400 + b"}}",
        JSON,
        "invalid_argument",
    ),
    "JSON, int32 overflow": ("POST", "Evaluate", b'{"exitCode": 99999999999999999999}', JSON, "invalid_argument"),
    "JSON, NaN as an int32": ("POST", "Evaluate", b'{"exitCode": NaN}', JSON, "invalid_argument"),
    "JSON, 30000-deep array": (
        "POST",
        "Evaluate",
        b'{"context": {"x": ' + b"[" * 30000 + b"]" * 30000 + b"}}",
        JSON,
        "invalid_argument",
    ),
    "JSON, 3000-deep Struct": (
        "POST",
        "Evaluate",
        b'{"context": {"x": ' + b'{"a": ' * 3000 + b"1" + b"}" * 3000 + b"}}",
        JSON,
        "invalid_argument",
    ),
    "JSON, oversized": (
        "POST",
        "VerifyResponse",
        json.dumps({"text": "x" * 2 * LIMIT}).encode(),
        JSON,
        "resource_exhausted",
    ),
    "proto, oversized": ("POST", "VerifyResponse", b"\x0a\x80\x80\x08" + b"x" * 2 * LIMIT, PROTO, "resource_exhausted"),
    "gzip, oversized once inflated": (
        "POST",
        "VerifyResponse",
        gzip.compress(b'{"text": "' + b"a" * 40 * LIMIT + b'"}'),
        {**JSON, "Content-Encoding": "gzip"},
        "resource_exhausted",
    ),
    "gzip, garbage": ("POST", "VerifyResponse", b"not gzip", {**JSON, "Content-Encoding": "gzip"}, "invalid_argument"),
    "compression nobody supports": (
        "POST",
        "VerifyResponse",
        b"{}",
        {**JSON, "Content-Encoding": "br"},
        "unimplemented",
    ),
    "content type text/plain": ("POST", "VerifyResponse", b"{}", {"Content-Type": "text/plain"}, "invalid_argument"),
    "no content type": ("POST", "VerifyResponse", b"{}", {}, "invalid_argument"),
    "unknown method": ("POST", "Nope", b"{}", JSON, "unimplemented"),
    "PUT": ("PUT", "VerifyResponse", b"{}", JSON, "unimplemented"),
    "timeout header not a number": (
        "POST",
        "VerifyResponse",
        b"{}",
        {**JSON, "Connect-Timeout-Ms": "abc"},
        "invalid_argument",
    ),
    "protocol version 7": (
        "POST",
        "VerifyResponse",
        b"{}",
        {**JSON, "Connect-Protocol-Version": "7"},
        "invalid_argument",
    ),
    "GET without message": ("GET", "Evaluate?encoding=json", b"", {}, "invalid_argument"),
    "GET, message not JSON": ("GET", "Evaluate?encoding=json&message=%7B", b"", {}, "invalid_argument"),
    "GET, bad base64": ("GET", "Evaluate?encoding=json&base64=1&message=%25%25", b"", {}, "invalid_argument"),
    "GET, undecodable proto": (
        "GET",
        "Evaluate?encoding=proto&base64=1&message=" + base64.urlsafe_b64encode(b"\x22\x80\x80\x80\x80\x10").decode(),
        b"",
        {},
        "invalid_argument",
    ),
    "GET, invalid UTF-8": ("GET", "Evaluate?encoding=json&message=%FF%FE", b"", {}, "invalid_argument"),
    "GET, NaN": (
        "GET",
        "Evaluate?encoding=json&message=" + urllib.parse.quote('{"context": {"x": NaN}}'),
        b"",
        {},
        "invalid_argument",
    ),
    "GET, gzip garbage": ("GET", "Evaluate?encoding=json&compression=gzip&message=abc", b"", {}, "invalid_argument"),
    "GET, unknown encoding": ("GET", "Evaluate?encoding=xml&message=x", b"", {}, "invalid_argument"),
    "gRPC-Web, truncated prefix": ("POST", "VerifyResponse", b"\x00\x00\x00", GRPC_WEB, "3"),
    "gRPC-Web, length beyond the body": ("POST", "VerifyResponse", b"\x00\x00\x00\x10\x00ab", GRPC_WEB, "3"),
    "gRPC-Web, compressed flag without an encoding": (
        "POST",
        "VerifyResponse",
        grpc_frame(b"\x0a\x01a", 1),
        GRPC_WEB,
        "3",
    ),
    "gRPC-Web, compressed flag, garbage gzip": (
        "POST",
        "VerifyResponse",
        grpc_frame(b"garbage", 1),
        {**GRPC_WEB, "grpc-encoding": "gzip"},
        "3",
    ),
    "gRPC-Web, unknown flags": ("POST", "VerifyResponse", grpc_frame(b"", 0x7E), GRPC_WEB, "3"),
    "gRPC-Web, undecodable message": ("POST", "VerifyResponse", grpc_frame(b"\x0a\x02\xff\xfe"), GRPC_WEB, "3"),
    "gRPC-Web, 4 GiB promised": ("POST", "VerifyResponse", b"\x00\xff\xff\xff\xff", GRPC_WEB, "8"),
    "gRPC-Web, two messages to a unary RPC": (
        "POST",
        "VerifyResponse",
        grpc_frame(b"") + grpc_frame(b""),
        GRPC_WEB,
        "12",
    ),
    "gRPC-Web, bad grpc-timeout": ("POST", "VerifyResponse", grpc_frame(b""), {**GRPC_WEB, "grpc-timeout": "xyz"}, "3"),
    "gRPC-Web JSON, malformed": (
        "POST",
        "VerifyResponse",
        grpc_frame(b'{"text": '),
        {"Content-Type": "application/grpc-web+json"},
        "3",
    ),
    "gRPC over HTTP/1.1": ("POST", "VerifyResponse", grpc_frame(b""), {"Content-Type": "application/grpc"}, "12"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_input_gets_a_callers_code_and_the_server_stays_healthy(port: int, name: str) -> None:
    method, path, body, headers, expected = HOSTILE[name]
    status, answered, raw = http_send(port, method, f"{SERVICE}/{path}", body, headers)
    got = connect_outcome(status, answered, raw)
    assert got not in HTTP_SERVER_FAULTS, (name, got, raw[:300])
    assert status < 500 or got == "unimplemented", (name, status, raw[:300])
    assert b"Traceback" not in raw
    assert got == expected, (name, got, raw[:300])
    healthy(port)


@pytest.mark.parametrize(
    ("body", "content_type", "field"),
    [
        (b"\x0a\x02\xff\xfe", "application/proto", "text"),
        (b'{"text": ', "application/json", "request"),
        (b'{"context": {"x": ' + b"9" * 5000 + b"}}", "application/json", "request"),
    ],
)
def test_undecodable_requests_carry_the_grpc_ports_details(
    port: int, body: bytes, content_type: str, field: str
) -> None:
    """The same answer as the gRPC port for bytes that do not decode: reason UNDECODABLE_REQUEST, the field named."""
    path = f"{SERVICE}/VerifyResponse" if field == "text" or body.startswith(b'{"text') else f"{SERVICE}/Evaluate"
    status, _headers, raw = http_send(port, "POST", path, body, {"Content-Type": content_type})
    assert status == 400
    assert json.loads(raw)["code"] == "invalid_argument"
    found = details(raw)
    info = error_details_pb2.ErrorInfo.FromString(found["google.rpc.ErrorInfo"])
    assert (info.reason, info.domain, info.metadata["field"]) == ("UNDECODABLE_REQUEST", "verdict.v1", field)
    violation = error_details_pb2.BadRequest.FromString(found["google.rpc.BadRequest"]).field_violations[0]
    assert violation.field == field


def test_grpc_web_undecodable_message_names_the_field_in_its_trailer(port: int) -> None:
    status, headers, raw = http_send(
        port, "POST", f"{SERVICE}/VerifyResponse", grpc_frame(b"\x0a\x02\xff\xfe"), GRPC_WEB
    )
    assert status == 200
    assert connect_outcome(status, headers, raw) == "3"
    trailer = raw[raw.rfind(b"\x80") + 5 :].decode()
    fields = dict(line.split(": ", 1) for line in trailer.split("\r\n") if ": " in line)
    rich = base64.b64decode(fields["grpc-status-details-bin"] + "==")
    decoded = status_pb2.Status.FromString(rich)
    info = error_details_pb2.ErrorInfo()
    decoded.details[0].Unpack(info)
    assert (info.reason, info.metadata["field"]) == ("UNDECODABLE_REQUEST", "text")
