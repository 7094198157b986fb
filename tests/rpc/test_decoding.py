"""The lenient request decoder: bytes the protobuf runtime refuses become an `Undecodable` naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from verdict.rpc.decoding import DIAGNOSE_DEPTH, DIAGNOSE_STEPS, Undecodable, diagnose, lenient_decoder, varint
from verdict.v1 import verdict_pb2


def _with_bad_utf8(request: verdict_pb2.EvaluateRequest, marker: bytes) -> bytes:
    data = request.SerializeToString()
    assert marker in data
    return data.replace(marker, b"\xff" + marker[1:])


def test_valid_bytes_decode_to_the_message() -> None:
    request = verdict_pb2.EvaluateRequest(output="42", exit_code=1)
    decoded = lenient_decoder(verdict_pb2.EvaluateRequest)(request.SerializeToString())
    assert decoded == request


def test_invalid_utf8_in_a_top_level_string_names_the_field() -> None:
    data = _with_bad_utf8(verdict_pb2.EvaluateRequest(output="MARKER"), b"MARKER")
    decoded = lenient_decoder(verdict_pb2.EvaluateRequest)(data)
    assert decoded == Undecodable("verdict.v1.EvaluateRequest", "output", "output is not valid UTF-8 (byte 0)")


def test_invalid_utf8_in_a_nested_string_names_the_path() -> None:
    request = verdict_pb2.EvaluateRequest(config=verdict_pb2.EvaluatorConfig(yaml="MARKER"))
    decoded = lenient_decoder(verdict_pb2.EvaluateRequest)(_with_bad_utf8(request, b"MARKER"))
    assert isinstance(decoded, Undecodable)
    assert decoded.field == "config.yaml"


def test_nesting_past_the_limit_names_the_top_level_field() -> None:
    value: Any = {"x": 1}
    for _ in range(DIAGNOSE_DEPTH):
        value = {"x": value}
    request = verdict_pb2.EvaluateRequest()
    request.context.update({"captured": value})
    field, problem = diagnose(verdict_pb2.EvaluateRequest.DESCRIPTOR, request.SerializeToString())
    assert field == "context"
    assert f"more than {DIAGNOSE_DEPTH} messages deep" in problem


def test_truncated_bytes_blame_no_field_and_keep_the_runtime_message() -> None:
    data = verdict_pb2.EvaluateRequest(output="x" * 50).SerializeToString()[:10]
    decoded = lenient_decoder(verdict_pb2.EvaluateRequest)(data)
    assert isinstance(decoded, Undecodable)
    assert decoded.field == ""
    assert decoded.problem  # the runtime's own words, since the walk found nothing to blame


@pytest.mark.parametrize(("data", "value", "end"), [(b"\x00", 0, 1), (b"\x7f", 127, 1), (b"\xac\x02", 300, 2)])
def test_varint(data: bytes, value: int, end: int) -> None:
    assert varint(data + b"\x01", 0) == (value, end)


def test_a_varint_cut_short_raises_index_error() -> None:
    with pytest.raises(IndexError):
        varint(b"\x80", 0)


def test_the_walk_gives_up_after_its_step_budget() -> None:
    """A fault hidden behind more fields than the budget is not searched for: the walk runs on the event loop."""
    bad = verdict_pb2.EvaluateRequest(output="MARKER").SerializeToString().replace(b"MARKER", b"\xffARKER")
    padding = b"\x10\x01" * (DIAGNOSE_STEPS + 1)  # exit_code = 1, repeated
    assert diagnose(verdict_pb2.EvaluateRequest.DESCRIPTOR, bad)[0] == "output"
    assert diagnose(verdict_pb2.EvaluateRequest.DESCRIPTOR, padding + bad) == ("", "")


def test_a_length_past_the_end_blames_nothing() -> None:
    data = b"\x1a\xff\xff\x03" + b"x" * 10  # a length-delimited field announcing 64 KiB, ten bytes given
    assert diagnose(verdict_pb2.EvaluateRequest.DESCRIPTOR, data) == ("", "")
