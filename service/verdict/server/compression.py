"""Request decompression for the HTTP port, bounded in time as well as in size: gzip that a caller cannot make
quadratic.

The Connect runtime's own gzip decoder restarts on a fresh copy of the rest of the body after each gzip member
(`unused_data`), so a body of empty members (about 20 bytes each) inflates to nothing, never trips the read limit, and
costs time quadratic in its length on the event loop, before authentication: 4 MiB held the loop for seconds.
`BoundedGzip` feeds the decompressor bounded slices of one memoryview, so a member boundary copies at most one slice,
and refuses a body of more than `MAX_GZIP_MEMBERS` members outright: clients send one member (RFC 1952 allows
several; no Connect, gRPC or browser client writes more). scripts/gzip_members_reproducer.py reproduces the runtime's
cost for an upstream report.
"""

from __future__ import annotations

import zlib

from connectrpc.code import Code
from connectrpc.errors import ConnectError

__all__ = ["MAX_GZIP_MEMBERS", "BoundedGzip"]

MAX_GZIP_MEMBERS = 16
"""Gzip members one request body (or one enveloped message) may hold; more is INVALID_ARGUMENT."""

_SLICE = 64 * 1024
"""Compressed bytes handed to zlib at a time: what a member boundary copies at most (`unused_data`)."""


class BoundedGzip:
    """The `gzip` compression of the HTTP port (connectrpc's Compression protocol): linear decompression, a cap on
    members, and `read_max_bytes` on the inflated size as the runtime's own."""

    def __init__(self, max_members: int = MAX_GZIP_MEMBERS) -> None:
        self._max_members = max_members

    def name(self) -> str:
        return "gzip"

    def compress(self, data: bytes | bytearray | memoryview) -> bytes:
        compressor = zlib.compressobj(6, zlib.DEFLATED, 31)
        return compressor.compress(data) + compressor.flush()

    def decompress(self, data: bytes | bytearray | memoryview, read_max_bytes: int | None = None) -> bytes:
        view = memoryview(data).cast("B")
        limit = read_max_bytes if read_max_bytes is not None else len(view) * 1032  # deflate's best ratio
        parts: list[bytes] = []
        total = members = position = 0
        decompressor = zlib.decompressobj(wbits=31)
        pending: bytes | memoryview = b""
        while True:
            if not pending:
                if position >= len(view):
                    raise ConnectError(Code.INVALID_ARGUMENT, "decompress: gzip body ends inside a member")
                pending = view[position : position + _SLICE]
                position += len(pending)
            try:
                out = decompressor.decompress(pending, limit + 1 - total)
            except zlib.error as exc:
                raise ConnectError(Code.INVALID_ARGUMENT, f"decompress: {exc}") from None
            total += len(out)
            parts.append(out)
            if total > limit:
                raise ConnectError(Code.RESOURCE_EXHAUSTED, f"message is larger than configured max {limit}")
            if not decompressor.eof:
                pending = decompressor.unconsumed_tail
                continue
            members += 1
            pending = decompressor.unused_data
            if not pending and position >= len(view):
                return b"".join(parts)
            if members >= self._max_members:
                raise ConnectError(
                    Code.INVALID_ARGUMENT, f"decompress: gzip body holds more than {self._max_members} members"
                )
            decompressor = zlib.decompressobj(wbits=31)
