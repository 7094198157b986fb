"""A big request decoded in steps is the message one decode gives, field for field, and lets the loop run between
its steps (verdict.rpc.stepwise)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from google.protobuf import struct_pb2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verdict.rpc import stepwise
from verdict.rpc.decoding import lenient_decoder
from verdict.rpc.messages import context_dict
from verdict.rpc.stepwise import (
    context_in_steps,
    decode_in_steps,
    message_class_of,
    remember_wire,
    wire_bytes,
    wire_size,
)
from verdict.v1 import verdict_pb2


@pytest.fixture
def tiny_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Steps of 48 bytes, so that small messages are split and descended into as 4 MB ones are."""
    monkeypatch.setattr(stepwise, "STEP_BYTES", 48)
    monkeypatch.setattr(stepwise, "WALK_FIELDS_PER_STEP", 3)


def decode(message_class: Any, data: bytes) -> Any:
    return asyncio.run(decode_in_steps(message_class, data))


json_values = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=12), children, max_size=6),
    max_leaves=60,
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(context=st.dictionaries(st.text(max_size=12), json_values, max_size=8), output=st.text(max_size=200))
def test_any_evaluate_request_decodes_to_the_same_message(
    tiny_steps: None, context: dict[str, Any], output: str
) -> None:
    request = verdict_pb2.EvaluateRequest(config=verdict_pb2.EvaluatorConfig(yaml="type: exit_code"), output=output)
    request.context.update(context)
    request.tool_calls.add(id="1", name="search", arguments='{"q": "x"}')
    request.tool_calls.add(id="2", name="fetch", arguments="{}")
    request.logprobs.extend([-0.5, -1.25])
    data = request.SerializeToString()
    assert decode(verdict_pb2.EvaluateRequest, data) == request


def test_merge_semantics_survive_the_split(tiny_steps: None) -> None:
    """The cases where a decode is not a plain copy: a later map entry replaces an earlier one with the same key, a
    later oneof member wins, a singular message seen twice is merged, repeated fields append."""
    first = struct_pb2.Struct()
    first.update({"key": {"old": "x" * 60, "kept": False}, "other": 1})
    second = struct_pb2.Struct()
    second.update({"key": {"new": "y" * 60}})
    oneof = struct_pb2.Struct()
    oneof.update({"other": ["now", "a", "list", "z" * 50]})
    data = first.SerializeToString() + second.SerializeToString() + oneof.SerializeToString()
    assert decode(struct_pb2.Struct, data) == struct_pb2.Struct.FromString(data)

    request = verdict_pb2.EvaluateRequest(output="a" * 70)
    request.context.update({"a": "b" * 70})
    again = verdict_pb2.EvaluateRequest(output="c")
    again.context.update({"z": "y" * 70})
    again.tool_calls.add(id="9", name="n" * 60)
    data = request.SerializeToString() + again.SerializeToString() + again.SerializeToString()
    assert decode(verdict_pb2.EvaluateRequest, data) == verdict_pb2.EvaluateRequest.FromString(data)


def test_unknown_fields_are_kept_as_a_decode_keeps_them(tiny_steps: None) -> None:
    request = verdict_pb2.EvaluateRequest(output="o" * 80)
    data = request.SerializeToString() + b"\xf8\x07\x05" + b"\xfa\x07\x40" + b"u" * 64  # fields 127 (varint, bytes)
    decoded = decode(verdict_pb2.EvaluateRequest, data)
    assert decoded is not None
    assert decoded.SerializeToString() == verdict_pb2.EvaluateRequest.FromString(data).SerializeToString()


@pytest.mark.parametrize(
    "garbage",
    [
        b"\x22\xff\xff\xff\xff\x0f",  # a length past the end
        b"\x22\x05\x0a\x03\x0a\x01",  # a nested message cut short
        b"\x0b\x00",  # a group start (wire type 3)
        b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",  # a tag varint longer than 64 bits
    ],
)
def test_bytes_that_are_not_a_message_give_none_for_the_runtimes_diagnosis(tiny_steps: None, garbage: bytes) -> None:
    prefix = verdict_pb2.EvaluateRequest(output="p" * 60).SerializeToString()
    assert decode(verdict_pb2.EvaluateRequest, prefix + garbage) is None


def test_a_map_key_that_is_not_utf8_gives_none(tiny_steps: None) -> None:
    value = struct_pb2.Value(string_value="v" * 60).SerializeToString()
    entry = b"\x0a\x02\xc3\x28" + b"\x12" + bytes([len(value)]) + value  # key: invalid UTF-8
    struct = b"\x0a" + bytes([len(entry)]) + entry
    data = b"\x22" + bytes([len(struct)]) + struct  # EvaluateRequest.context
    assert decode(verdict_pb2.EvaluateRequest, data) is None


def test_a_big_context_lets_the_event_loop_run_between_steps() -> None:
    """Behaviour, not time: while a 50,000-key context decodes, another task gets many turns of the loop (one
    decode call gave it none), and no single merge takes much more than a step's bytes."""
    request = verdict_pb2.EvaluateRequest(config=verdict_pb2.EvaluatorConfig(yaml="type: exit_code"))
    request.context.update({"context": {f"k{i}": i for i in range(50_000)}})
    data = request.SerializeToString()
    merged: list[int] = []
    original = stepwise._Steps._flush

    async def counting(self: Any, target: Any, chunk: memoryview) -> None:
        merged.append(len(chunk))
        await original(self, target, chunk)

    async def measure() -> tuple[Any, int]:
        turns = 0
        done = False

        async def ticker() -> None:
            nonlocal turns
            while not done:
                turns += 1
                await asyncio.sleep(0)

        ticking = asyncio.ensure_future(ticker())
        await asyncio.sleep(0)
        decoded = await decode_in_steps(verdict_pb2.EvaluateRequest, data)
        done = True
        await ticking
        return decoded, turns

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(stepwise._Steps, "_flush", counting)
        decoded, turns = asyncio.run(measure())
    assert decoded == request
    assert turns > 100
    assert len(merged) > 100
    assert max(merged) <= stepwise.STEP_BYTES + 64  # a step ends at the first field past STEP_BYTES


def test_the_deserializers_name_their_message_class() -> None:
    assert message_class_of(verdict_pb2.EvaluateRequest.FromString) is verdict_pb2.EvaluateRequest
    assert message_class_of(lenient_decoder(verdict_pb2.VerifyResponseRequest)) is verdict_pb2.VerifyResponseRequest
    assert message_class_of(None) is None
    assert message_class_of(bytes) is None


def test_the_wire_bytes_belong_to_the_request_they_were_decoded_into() -> None:
    async def call() -> tuple[bytes | None, bytes | None, int, int]:
        request = verdict_pb2.EvaluateRequest(output="x" * 10)
        other = verdict_pb2.EvaluateRequest(output="x" * 10)
        data = request.SerializeToString() + b"\x1a\x00"  # a redundant empty field: longer than ByteSize
        remember_wire(request, data)
        return wire_bytes(request), wire_bytes(other), wire_size(request), wire_size(other)

    mine, other, size, other_size = asyncio.run(call())
    assert mine is not None
    assert mine.endswith(b"\x1a\x00")
    assert other is None
    assert size == len(mine)
    assert other_size == verdict_pb2.EvaluateRequest(output="x" * 10).ByteSize()


def _types(value: Any) -> Any:
    """The value's shape with each node's type, so equal dicts of different classes (or 3 and 3.0) differ."""
    if isinstance(value, dict):
        return (type(value).__name__, {key: _types(item) for key, item in value.items()}, list(value))
    if isinstance(value, list):
        return ("list", [_types(item) for item in value])
    return (type(value).__name__, value)


@settings(max_examples=200, deadline=None)
@given(context=st.dictionaries(st.text(max_size=12), json_values, max_size=8))
def test_the_context_converted_in_steps_is_the_one_context_dict_gives(context: dict[str, Any]) -> None:
    struct = struct_pb2.Struct()
    struct.update(context)
    struct.fields["unset"].CopyFrom(struct_pb2.Value())  # a Value with no kind: null, as protobuf's JSON mapping says
    struct.fields["whole"].number_value = 3.0
    struct.fields["huge"].number_value = 2.0**70
    received = struct_pb2.Struct.FromString(struct.SerializeToString())  # as the server holds it: decoded
    stepped = asyncio.run(context_in_steps(received))
    assert _types(stepped) == _types(context_dict(struct.SerializeToString()))
    assert isinstance(stepped["whole"], int)


def test_converting_a_big_context_yields_to_the_loop() -> None:
    struct = struct_pb2.Struct()
    struct.update({"context": {f"k{i}": [i, {"x": True}] for i in range(5_000)}})

    async def measure() -> tuple[Any, int]:
        turns = 0
        done = False

        async def ticker() -> None:
            nonlocal turns
            while not done:
                turns += 1
                await asyncio.sleep(0)

        ticking = asyncio.ensure_future(ticker())
        await asyncio.sleep(0)
        converted = await context_in_steps(struct)
        done = True
        await ticking
        return converted, turns

    converted, turns = asyncio.run(measure())
    assert converted == context_dict(struct.SerializeToString())
    assert turns >= 15_000 // stepwise.VALUES_PER_STEP
