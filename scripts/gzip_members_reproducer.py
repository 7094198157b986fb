"""Reproducer for connectrpc's gzip decoder (connectrpc/compression/gzip.py, `GzipCompression.decompress`): quadratic
time in the number of gzip members of a request body, to attach to an upstream report.

The decoder handles a multi-member body by starting a new decompressor on `decompressor.unused_data`, which zlib
returns as a fresh copy of the rest of the input; a body of N empty members (20 bytes each) is therefore N copies of
a shrinking body, about 10 * N**2 bytes copied, while nothing inflates, so `read_max_bytes` never trips. On a server
this runs on the event loop before any interceptor (authentication included). The same decoder is used for
Connect unary bodies (`Content-Encoding: gzip`), GET `compression=gzip`, and enveloped messages (`grpc-encoding` /
`connect-content-encoding: gzip`).

Suggested fix upstream: feed the decompressor bounded slices of a memoryview (so `unused_data` is at most one slice)
and/or refuse bodies past a small number of members. Verdict does both in verdict/server/compression.py. Filing
upstream needs network access this repository's environment does not have; this script is the report's body.

Usage: `python scripts/gzip_members_reproducer.py [MiB ...]` prints CPU seconds per body size for both decoders.
"""

from __future__ import annotations

import contextlib
import gzip
import sys
import time
from collections.abc import Callable

from connectrpc.compression.gzip import GzipCompression
from connectrpc.errors import ConnectError

from verdict.server.compression import BoundedGzip

EMPTY_MEMBER = gzip.compress(b"")


def cpu_seconds(decompress: Callable[[bytes, int], bytes], body: bytes) -> float:
    """CPU time of one decompression; a refusal (BoundedGzip's) counts as done: the time to refuse is the figure."""
    started = time.process_time()
    with contextlib.suppress(ConnectError):
        decompress(body, 4 * 1024 * 1024)
    return time.process_time() - started


def main(argv: list[str]) -> int:
    sizes = [float(arg) for arg in argv] or [0.25, 0.5, 1.0]
    print(f"{'body MiB':>9} {'members':>9} {'connectrpc s':>13} {'BoundedGzip s':>14}")
    for mib in sizes:
        members = int(mib * 1024 * 1024) // len(EMPTY_MEMBER)
        body = EMPTY_MEMBER * members
        runtime = cpu_seconds(GzipCompression().decompress, body)
        bounded = cpu_seconds(BoundedGzip().decompress, body)
        print(f"{mib:>9.2f} {members:>9} {runtime:>13.3f} {bounded:>14.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
