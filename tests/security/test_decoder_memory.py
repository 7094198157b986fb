"""The lenient decoder's diagnosis, before authentication, against a real server: a request nested past protobuf's
depth limit around one long string costs the server the request's bytes, not a copy of them at every level."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from tests.security.support import MIB, TOKEN, Hostile, healthy, peak_bytes, production_like
from tests.support import http_send, stop_server_process
from verdict.rpc.decoding import DIAGNOSE_DEPTH

EVALUATE = "/verdict.v1.VerdictService/Evaluate"
LONG = 16 * MIB - 4096
"""The long string: the request stays under the gRPC port's receive limit (max_batch_bytes, 16 MiB)."""
ALLOWED_GROWTH = 200 * MIB
"""The target for one request: the copy-at-every-level walk took 1.6 GB; one walk over views costs a few copies."""


def _field(number: int, payload: bytes) -> bytes:
    """One length-delimited protobuf field."""
    tag = (number << 3) | 2
    return _varint(tag) + _varint(len(payload)) + payload


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def nested_past_the_limit(size: int, wraps: int = DIAGNOSE_DEPTH // 2 + 10) -> bytes:
    """An EvaluateRequest whose `context` Struct holds a Value wrapped `wraps` times in list_value around one string
    of `size` bytes: Value -> ListValue -> Value ... is two messages per wrap, past the runtime's limit of 100."""
    value = _field(3, b"x" * size)  # Value.string_value
    for _ in range(wraps):
        value = _field(6, _field(1, value))  # Value.list_value { values: [value] }
    entry = _field(1, b"k") + _field(2, value)  # Struct.FieldsEntry
    return _field(4, _field(1, entry))  # EvaluateRequest.context { fields: [entry] }


def _call(port: int, data: bytes) -> grpc.StatusCode:
    with grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.max_send_message_length", 64 * MIB)]) as channel:
        call = channel.unary_unary(EVALUATE, request_serializer=None, response_deserializer=None)
        try:
            call(data, timeout=120)
        except grpc.RpcError as error:
            return error.code()
    return grpc.StatusCode.OK


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Hostile]:
    hostile = production_like(tmp_path)
    yield hostile
    stop_server_process(hostile.server)


def test_one_deep_request_costs_the_request_not_a_copy_per_level(server: Hostile) -> None:
    flat = _field(4, _field(1, _field(1, b"k") + _field(2, _field(3, b"x" * LONG))))
    assert _call(server.server.grpc_port, flat) == grpc.StatusCode.UNAUTHENTICATED
    baseline = peak_bytes(server.pid)
    attack = nested_past_the_limit(LONG)
    assert len(attack) <= 16 * MIB
    assert _call(server.server.grpc_port, attack) in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.UNAUTHENTICATED)
    grown = peak_bytes(server.pid) - baseline
    assert grown <= ALLOWED_GROWTH, f"peak memory grew {grown // MIB} MiB for one request"
    assert healthy(server.server.grpc_port)


def test_six_at_once_leave_health_answering(server: Hostile) -> None:
    """Six deep requests in flight together: the diagnosis is linear over views, so health still answers and the
    peak stays within six requests' worth of the bound."""
    attack = nested_past_the_limit(4 * MIB)
    baseline = peak_bytes(server.pid)
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        calls = [pool.submit(_call, server.server.grpc_port, attack) for _ in range(6)]
        assert healthy(server.server.grpc_port)
        codes = {call.result() for call in calls}
    assert codes <= {grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.UNAUTHENTICATED}
    assert peak_bytes(server.pid) - baseline <= ALLOWED_GROWTH


def test_the_http_port_diagnoses_over_views_too(server: Hostile) -> None:
    """The HTTP port runs the same diagnosis on up to max_message_bytes (4 MiB): the copy-per-level walk took 421 MB."""
    flat = _field(4, _field(1, _field(1, b"k") + _field(2, _field(3, b"x" * (4 * MIB - 4096)))))
    headers = {"Content-Type": "application/proto", "Authorization": f"Bearer {TOKEN}"}  # past the head's gate
    http_send(server.http_port, "POST", EVALUATE, flat, headers)
    baseline = peak_bytes(server.pid)
    status, _, _ = http_send(server.http_port, "POST", EVALUATE, nested_past_the_limit(4 * MIB - 8192), headers)
    assert status in (400, 401)
    assert peak_bytes(server.pid) - baseline <= 100 * MIB
