"""Property-based fuzzing of the HTTP port (Connect, gRPC-Web) against the same real server as the gRPC fuzz.

The messages are drawn by the gRPC suite's strategies (every evaluator's configuration, contexts holding non-finite
and 5000-digit numbers, state tokens, workspaces, completion text) and sent in each encoding the port accepts:
Connect binary and JSON by POST, Connect JSON by GET, gRPC-Web binary. Beside them, bytes: random and mutated bodies
under every content type, JSON with hostile tokens spliced in, bad compression and timeout headers, GET query
strings, gRPC-Web frames with random flags and lengths. Whatever is sent, the caller gets a caller's code (or an
HTTP-level 404/405/415), never `internal`, `unknown`, a 5xx or a traceback; the `fuzz` fixture then checks that no
process of any call is left and that the server holds no more descriptors than before.
"""

from __future__ import annotations

import base64
import json
import urllib.parse
from typing import Any

from google.protobuf import json_format, message
from hypothesis import given
from hypothesis import strategies as st

from tests.reliability.support import FuzzServer
from tests.reliability.test_fuzz import TEXT, VALUES, configs, evaluate_request
from tests.support import grpc_frame
from verdict.v1 import verdict_pb2

SERVICE = "/verdict.v1.VerdictService"
METHODS = ["VerifyResponse", "Evaluate", "ListEvaluators"]
ENCODINGS = ["proto", "json", "get", "grpc-web"]
JSON_POISON = [
    "NaN",
    "-Infinity",
    "1e400",
    "9" * 5000,
    "1" + "0" * 400,
    '"\\ud800"',
    '"\\u0000"',
    "[" * 200,
    '{"a":' * 150,
    "null",
    "true",
    '""',
    "{}",
    "[]",
    "\xff",
    ",",
    ":",
    '"',
]
CONTENT_TYPES = [
    "application/proto",
    "application/json",
    "application/json; charset=utf-8",
    "application/grpc-web+proto",
    "application/grpc-web+json",
    "application/grpc-web",
    "application/grpc-web-text",
    "application/connect+proto",
    "application/grpc",
    "application/grpc+proto",
    "text/plain",
    "",
]
HEADERS = st.dictionaries(
    st.sampled_from(
        [
            "Content-Encoding",
            "Connect-Content-Encoding",
            "grpc-encoding",
            "Connect-Timeout-Ms",
            "grpc-timeout",
            "Connect-Protocol-Version",
            "Accept-Encoding",
            "traceparent",
            "x-request-id",
        ]
    ),
    st.one_of(
        st.sampled_from(["gzip", "identity", "br", "zstd", "1", "7", "0", "-1", "9" * 40, "1S", "10m", "xyz"]),
        st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=20),
    ),
    max_size=3,
)


def _json(request: message.Message, draw: Any) -> bytes:
    """The request in JSON; where protobuf's JSON printer refuses (a NaN in a Value), a hand-built document with
    the same drawn values, NaN and Infinity tokens included (Python's json writes them, as careless clients do)."""
    try:
        return json_format.MessageToJson(request).encode()
    except (ValueError, TypeError, json_format.SerializeToJsonError):
        return json.dumps({"context": draw(VALUES), "output": draw(TEXT)}, default=str).encode()


def _send(fuzz: FuzzServer, rpc: str, request: message.Message, encoding: str, draw: Any) -> str:
    path = f"{SERVICE}/{rpc}"
    if encoding == "proto":
        return fuzz.http("POST", path, request.SerializeToString(), {"Content-Type": "application/proto"})
    if encoding == "json":
        return fuzz.http("POST", path, _json(request, draw), {"Content-Type": "application/json"})
    if encoding == "get":
        query = urllib.parse.urlencode({"encoding": "json", "message": _json(request, draw)})
        return fuzz.http("GET", f"{path}?{query}")
    body = grpc_frame(request.SerializeToString())
    return fuzz.http("POST", path, body, {"Content-Type": "application/grpc-web+proto"})


@given(data=st.data())
def test_http_messages_for_every_rpc_and_encoding(fuzz: FuzzServer, data: st.DataObject) -> None:
    """The gRPC suite's messages, in every encoding the HTTP port accepts."""
    rpc = data.draw(st.sampled_from(METHODS))
    request: message.Message
    if rpc == "Evaluate":
        request = evaluate_request(data.draw, data.draw(configs()))
    elif rpc == "VerifyResponse":
        request = verdict_pb2.VerifyResponseRequest(
            text=data.draw(TEXT), finish_reason=data.draw(st.sampled_from(["", "stop", "length", "\x00"]))
        )
    else:
        request = verdict_pb2.ListEvaluatorsRequest()
    _send(fuzz, rpc, request, data.draw(st.sampled_from(ENCODINGS)), data.draw)
    assert fuzz.faults == []


VALID = {
    "VerifyResponse": verdict_pb2.VerifyResponseRequest(text="```json\n{}\n```", finish_reason="stop"),
    "Evaluate": verdict_pb2.EvaluateRequest(
        config=verdict_pb2.EvaluatorConfig(yaml="type: output_numeric\noperator: eq\ntarget: 3"), output="3"
    ),
    "ListEvaluators": verdict_pb2.ListEvaluatorsRequest(),
}


@given(
    rpc=st.sampled_from([*METHODS, "Nope"]),
    content_type=st.sampled_from(CONTENT_TYPES),
    body=st.one_of(st.binary(max_size=300), st.just(b"")),
    flips=st.lists(st.tuples(st.integers(0, 10_000), st.integers(1, 255)), max_size=4),
    headers=HEADERS,
    framed=st.booleans(),
    flags=st.one_of(st.sampled_from([0, 1, 0x80, 0x81]), st.integers(0, 255)),
)
def test_http_bytes_under_every_content_type(
    fuzz: FuzzServer,
    rpc: str,
    content_type: str,
    body: bytes,
    flips: list[tuple[int, int]],
    headers: dict[str, str],
    framed: bool,
    flags: int,
) -> None:
    """Random bodies, and valid ones (binary or JSON) with flipped bytes, under any content type and hostile headers;
    for gRPC and gRPC-Web, wrapped in a frame with drawn flags (compressed, end-of-stream, unknown bits)."""
    if flips and rpc in VALID:
        valid = VALID[rpc]
        encoded = bytearray(
            json_format.MessageToJson(valid).encode() if "json" in content_type else valid.SerializeToString()
        )
        for position, mask in flips:
            if encoded:
                encoded[position % len(encoded)] ^= mask
        body = bytes(encoded)
    if framed and content_type.startswith("application/grpc"):
        body = grpc_frame(body, flags)
    fuzz.http("POST", f"{SERVICE}/{rpc}", body, {**headers, **({"Content-Type": content_type} if content_type else {})})
    assert fuzz.faults == []


@given(
    rpc=st.sampled_from(METHODS),
    position=st.integers(0, 10_000),
    poison=st.lists(st.one_of(st.sampled_from(JSON_POISON), st.text(max_size=10)), min_size=1, max_size=3).map("".join),
    as_get=st.booleans(),
    base64_query=st.booleans(),
)
def test_http_json_with_hostile_tokens(
    fuzz: FuzzServer, rpc: str, position: int, poison: str, as_get: bool, base64_query: bool
) -> None:
    """A valid JSON request with NaN, Infinity, huge numbers, lone surrogates, deep nesting or noise spliced in, by
    POST or as a GET `message=` (plain or base64)."""
    text = json_format.MessageToJson(VALID[rpc])
    cut = position % (len(text) + 1)
    spliced = (text[:cut] + poison + text[cut:]).encode("utf-8", "surrogatepass")
    path = f"{SERVICE}/{rpc}"
    if as_get:
        if base64_query:
            query = f"encoding=json&base64=1&message={base64.urlsafe_b64encode(spliced).decode().rstrip('=')}"
        else:
            query = f"encoding=json&message={urllib.parse.quote_from_bytes(spliced)}"
        fuzz.http("GET", f"{path}?{query}")
    else:
        fuzz.http("POST", path, spliced, {"Content-Type": "application/json"})
    assert fuzz.faults == []


def _nested(depth: int, leaf: bytes) -> bytes:
    """An EvaluateRequest whose `context` holds a Value wrapped `depth` times in list_value around `leaf`."""

    def field(number: int, payload: bytes) -> bytes:
        length, out = len(payload), bytearray()
        while True:
            out.append((length & 0x7F) | (0x80 if length >> 7 else 0))
            length >>= 7
            if not length:
                break
        return bytes([(number << 3) | 2]) + bytes(out) + payload

    value = field(3, leaf)
    for _ in range(depth):
        value = field(6, field(1, value))
    return field(4, field(1, field(1, b"k") + field(2, value)))


@given(
    shape=st.sampled_from(["nested", "gzip_members", "gzip_cut", "gzip_then_garbage"]),
    depth=st.integers(0, 80),
    members=st.integers(1, 400),
    leaf=st.binary(max_size=64),
    grpc_web=st.booleans(),
)
def test_http_byte_level_shapes_before_authentication(
    fuzz: FuzzServer, shape: str, depth: int, members: int, leaf: bytes, grpc_web: bool
) -> None:
    """The byte-level shapes an attacker sent before authentication: protobuf nested past the runtime's depth limit
    around a leaf (invalid UTF-8 included), bodies of many gzip members, gzip cut short or followed by garbage, as
    Connect with Content-Encoding or as a compressed gRPC-Web frame. Never a server fault."""
    import gzip

    payload = _nested(depth, leaf)
    if shape == "gzip_members":
        payload = gzip.compress(payload) + gzip.compress(b"") * members
    elif shape == "gzip_cut":
        payload = gzip.compress(payload)[: max(1, members % 40)]
    elif shape == "gzip_then_garbage":
        payload = gzip.compress(payload) + leaf
    compressed = shape != "nested"
    if grpc_web:
        headers = {"Content-Type": "application/grpc-web+proto", **({"grpc-encoding": "gzip"} if compressed else {})}
        body = grpc_frame(payload, 1 if compressed else 0)
    else:
        headers = {"Content-Type": "application/proto", **({"Content-Encoding": "gzip"} if compressed else {})}
        body = payload
    fuzz.http("POST", f"{SERVICE}/Evaluate", body, headers)
    assert fuzz.faults == []
