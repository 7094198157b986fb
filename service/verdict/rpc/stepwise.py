"""A big request message decoded in steps, each of which holds the event loop briefly, instead of in one call.

The protobuf runtime (upb) decodes a message in one C call that holds the GIL throughout: a 4 MB EvaluateRequest
whose `context` Struct has 180,000 keys took 200-430 ms, during which no other call and no health check was served.
A thread would not help (the GIL is never released during that call), nor would the parse pool, whose answer would
have to be decoded again here. What helps is that decoding is a merge: decoding the bytes `A + B` gives the same
message as decoding `A` and then merging `B` into it, whenever the split falls between two fields. So
`decode_in_steps` walks a big message's fields in Python (tags and lengths only, never the values), merges runs of
small fields as chunks of about `STEP_BYTES`, and yields to the event loop between chunks; a field bigger than a step
that holds a message is descended into and merged the same way (a singular field into the message it already holds,
a repeated one into a new element, a map entry into the value under its key, which replaces an earlier entry of the
same key, as a decode would). Strings and bytes are merged whole: copying one is cheap.

What it keeps the same as one decode: the message, field for field (last-one-wins scalars and oneofs, merged
sub-messages, appended repeated fields, replaced map entries), since every step is the runtime's own merge in wire
order. What it gives up: a malformed message is reported by decoding it again in one call (`decode` falls back to the
caller's lenient decoder, whose diagnosis names the field), and the runtime's nesting limit (100) applies below the
levels descended into, of which there are at most `MAX_DESCENT`.
"""

from __future__ import annotations

import asyncio
from contextvars import ContextVar
from typing import Any, TypeVar

from google.protobuf import message, struct_pb2
from google.protobuf.descriptor import FieldDescriptor

from verdict.evaluators.values import WholeNumbers, whole_numbers

__all__ = [
    "MAX_DESCENT",
    "STEPWISE_BYTES",
    "STEP_BYTES",
    "VALUES_PER_STEP",
    "context_in_steps",
    "decode_in_steps",
    "message_class_of",
    "remember_wire",
    "wire_bytes",
    "wire_size",
]

STEPWISE_BYTES = 512 * 1024
"""Messages up to this size are decoded in one call: at most a few milliseconds for the costliest shape (a Struct of
small values, about 2 us per key), so the walk's own cost is not worth paying."""
STEP_BYTES = 4 * 1024
"""Bytes merged per step: about 200 Struct keys, well under a millisecond of the runtime's work. Not more: merging
into a big map costs more per key as the map grows (64 KB steps into a 180,000-key Struct took up to 71 ms each,
4 KB steps at most 7 ms, for the same total)."""
MAX_DESCENT = 8
"""Levels of nested messages the walk descends into; below them a field is merged whole, however big."""
WALK_FIELDS_PER_STEP = 1_024
"""Fields the Python walk reads before it yields, so a message of millions of tiny fields yields too."""

M = TypeVar("M", bound=message.Message)

_LENGTH_DELIMITED = 2
_MESSAGE = FieldDescriptor.TYPE_MESSAGE


class _Malformed(Exception):
    """The wire bytes are not a message; the caller decodes them again in one call for the runtime's diagnosis."""


def _varint(view: memoryview, at: int, end: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= end or shift > 63:
            raise _Malformed
        byte = view[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def _skip(view: memoryview, wire_type: int, at: int, end: int) -> tuple[int, int]:
    """(start of the field's payload, end of the field) for a field whose tag ends at `at`."""
    if wire_type == 0:
        return at, _varint(view, at, end)[1]
    if wire_type == 1:
        stop = at + 8
    elif wire_type == _LENGTH_DELIMITED:
        length, at = _varint(view, at, end)
        stop = at + length
    elif wire_type == 5:
        stop = at + 4
    else:  # groups (3, 4) are not proto3; let the runtime judge them
        raise _Malformed
    if stop > end:
        raise _Malformed
    return at, stop


class _Steps:
    """One message's stepwise decode: the walk, and the count of fields read since the last yield."""

    def __init__(self) -> None:
        self.walked = 0

    async def merge(self, target: message.Message, view: memoryview, depth: int) -> None:
        fields = target.DESCRIPTOR.fields_by_number
        run_start = run_end = 0
        at, end = 0, len(view)
        while at < end:
            start = at
            tag = view[at]
            if tag < 0x80 and tag & 7 == _LENGTH_DELIMITED and at + 1 < end and view[at + 1] < 0x80:
                # the common field, a one-byte tag and a one-byte length (a Struct key and its small value)
                payload = at + 2
                at = payload + view[at + 1]
                if at > end:
                    raise _Malformed
                number, wire_type = tag >> 3, _LENGTH_DELIMITED
            else:
                tag, at = _varint(view, at, end)
                number, wire_type = tag >> 3, tag & 7
                payload, at = _skip(view, wire_type, at, end)
            self.walked += 1
            field = fields.get(number)
            if (
                at - start > STEP_BYTES
                and wire_type == _LENGTH_DELIMITED
                and field is not None
                and field.type == _MESSAGE
                and depth < MAX_DESCENT
            ):
                await self._flush(target, view[run_start:run_end])
                await self._descend(target, field, view[payload:at], view[start:at], depth)
                run_start = run_end = at
                continue
            run_end = at
            if run_end - run_start >= STEP_BYTES or self.walked >= WALK_FIELDS_PER_STEP:
                await self._flush(target, view[run_start:run_end])
                run_start = run_end
        await self._flush(target, view[run_start:run_end])

    async def _flush(self, target: message.Message, chunk: memoryview) -> None:
        if chunk:
            try:
                target.MergeFromString(bytes(chunk))
            except message.DecodeError as error:
                raise _Malformed from error
            self.walked = 0
            await asyncio.sleep(0)

    async def _descend(
        self, target: message.Message, field: Any, payload: memoryview, whole: memoryview, depth: int
    ) -> None:
        container = getattr(target, field.name)
        if field.message_type.GetOptions().map_entry:
            entry = self._map_entry(field, payload)
            if entry is None:  # a key of another type, or a value that is not a message: merged whole
                await self._flush(target, whole)
                return
            key, values = entry
            if key in container:
                del container[key]  # a later entry replaces an earlier one, as a decode does
            value = container[key]
            for part in values:
                await self.merge(value, part, depth + 1)
            if not values:
                value.SetInParent()
            return
        if field.is_repeated:
            element = container.add()
            await self.merge(element, payload, depth + 1)
            return
        await self.merge(container, payload, depth + 1)
        container.SetInParent()

    def _map_entry(self, field: Any, payload: memoryview) -> tuple[str, list[memoryview]] | None:
        """A map<string, Message> entry's key and value payloads, or None for any other kind of entry."""
        key_field = field.message_type.fields_by_number.get(1)
        value_field = field.message_type.fields_by_number.get(2)
        if key_field is None or key_field.type != FieldDescriptor.TYPE_STRING:
            return None
        if value_field is None or value_field.type != _MESSAGE:
            return None
        key = b""
        values: list[memoryview] = []
        at, end = 0, len(payload)
        while at < end:
            tag, at = _varint(payload, at, end)
            number, wire_type = tag >> 3, tag & 7
            start, at = _skip(payload, wire_type, at, end)
            if number == 1 and wire_type == _LENGTH_DELIMITED:
                key = bytes(payload[start:at])
            elif number == 2 and wire_type == _LENGTH_DELIMITED:
                values.append(payload[start:at])
            else:
                return None
        try:
            return key.decode("utf-8"), values
        except UnicodeDecodeError as error:
            raise _Malformed from error


async def decode_in_steps(message_class: type[M], data: bytes) -> M | None:
    """`data` decoded as `message_class`, yielding to the event loop between steps; None when the bytes are not a
    message (the caller decodes them again in one call, for the runtime's own diagnosis)."""
    decoded = message_class()
    try:
        await _Steps().merge(decoded, memoryview(data), 0)
    except (_Malformed, RecursionError):
        return None
    return decoded


def message_class_of(deserializer: Any) -> type[message.Message] | None:
    """The message class a request deserializer decodes (`Class.FromString`, or a lenient decoder that names it)."""
    owner = getattr(deserializer, "message_class", None) or getattr(deserializer, "__self__", None)
    if isinstance(owner, type) and issubclass(owner, message.Message):
        return owner
    return None


_received: ContextVar[tuple[object, bytes] | None] = ContextVar("verdict_received_wire", default=None)
"""The request a call decoded in steps, with the bytes it came from. Measuring (`ByteSize`) or serializing a message
walks all of it again in one C call, as long as decoding it took: a 180,000-key context's ByteSize and
SerializeToString held the loop 30-60 ms each. The bytes are already here."""


def remember_wire(request: object, data: bytes) -> None:
    """Keep `data` as the wire form of `request` for the rest of this call (the task's context)."""
    _received.set((request, data))


def wire_bytes(request: object) -> bytes | None:
    """The bytes `request` was decoded from in this call, when it was decoded in steps; else None."""
    received = _received.get()
    return received[1] if received is not None and received[0] is request else None


def wire_size(request: message.Message) -> int:
    """`request`'s size on the wire: its bytes' length when they are known, else `ByteSize()`."""
    data = wire_bytes(request)
    return len(data) if data is not None else request.ByteSize()


VALUES_PER_STEP = 512
"""Values `context_in_steps` converts before it yields: well under a millisecond of Python."""


async def context_in_steps(struct: struct_pb2.Struct) -> WholeNumbers:
    """`struct` as the plain dict the evaluators read, exactly as `context_dict` converts it (protobuf's JSON mapping,
    then `whole_numbers`: a None for an unset Value, an int for an integral double, `WholeNumbers` for every mapping),
    walked iteratively on the event loop and yielding every `VALUES_PER_STEP` values. A 180,000-key context converted
    in one call took 417 ms; handed back from the parse pool, its unpickling alone held the loop 70 ms."""
    root = WholeNumbers()
    pending: list[tuple[struct_pb2.Struct | struct_pb2.ListValue, WholeNumbers | list[Any]]] = [(struct, root)]
    converted = 0
    while pending:
        source, target = pending.pop()
        if isinstance(source, struct_pb2.Struct):
            fields = source.fields  # iterated by key, as protobuf's JSON mapping does: the same order
            values: Any = ((key, fields[key]) for key in fields)
        else:
            values = enumerate(source.values)
        for key, value in values:
            kind = value.WhichOneof("kind")
            item: Any
            if kind == "struct_value":
                item = WholeNumbers()
                pending.append((value.struct_value, item))
            elif kind == "list_value":
                item = []
                pending.append((value.list_value, item))
            elif kind == "number_value":
                item = whole_numbers(value.number_value)
            elif kind == "string_value":
                item = value.string_value
            elif kind == "bool_value":
                item = value.bool_value
            else:  # null_value, or a Value with no kind set: JSON's null either way
                item = None
            if isinstance(target, list):
                target.append(item)
            else:
                target[key] = item
            converted += 1
            if converted % VALUES_PER_STEP == 0:
                await asyncio.sleep(0)
    return root
