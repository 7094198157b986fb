"""Decision log sinks: where the drain thread delivers serialized records (a stream, a rotated file, an HTTP
endpoint), and the Protocol each of them keeps. No buffering and no record building here: `log.py` does those."""

from __future__ import annotations

import contextlib
import fcntl
import os
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Protocol, TextIO

from verdict import __version__

__all__ = ["FileSink", "HttpSink", "Sink", "StreamSink"]


class Sink(Protocol):
    """Where drained records go. Called from the drain thread only, never from a call."""

    def write(self, records: Sequence[str]) -> None:
        """Deliver serialized records (one JSON object each); raise OSError when they could not be delivered."""

    def close(self) -> None:
        """Release the sink's resources after the last write."""


class StreamSink:
    """One JSON line per record on a stream (stdout or stderr), flushed per batch."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, records: Sequence[str]) -> None:
        self._stream.write("".join(f"{record}\n" for record in records))
        self._stream.flush()

    def close(self) -> None:
        self._stream.flush()


class FileSink:
    """One JSON line per record in a file rotated by size (name.1 is the newest rotated file), shared safely by every
    worker process that writes it.

    With `workers: 2` each worker has its own sink on the same path. The standard library's RotatingFileHandler kept
    one descriptor per worker and rotated by its own descriptor's size: a worker went on writing into a file another
    had already renamed, then rotated again, and whole files of records fell off the end (0 to 132 of 3,000 per run).
    Here every batch is written under an exclusive `flock` on `.name.lock`, held for the write and any rotation:

    - before writing, the sink checks that its descriptor is still the file at `name` (same device and inode) and
      reopens it when another worker rotated it away;
    - it rotates when the file at `name` (not its own idea of it) has reached `max_bytes`, renaming the backups in
      order under the lock, so exactly one worker rotates each time;
    - the batch goes out as one `write` to a descriptor opened with O_APPEND, so records of two workers never
      interleave within a line, and none is written twice.
    """

    def __init__(self, path: str, *, max_bytes: int, backups: int) -> None:
        self._path = path
        self._max_bytes = max_bytes
        self._backups = backups
        directory, name = os.path.split(path)
        # A dot file beside the log, so that a shipper globbing `name.*` for the rotated files never reads it.
        self._lock = os.open(os.path.join(directory, f".{name}.lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        self._fd = self._open()

    def _open(self) -> int:
        return os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)

    def write(self, records: Sequence[str]) -> None:
        lines = [f"{record}\n".encode() for record in records]
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        try:
            self._follow()
            size = os.fstat(self._fd).st_size
            chunk: list[bytes] = []
            for line in lines:
                # Rotate where the next record would cross max_bytes, as a single writer would: every file is full.
                if self._max_bytes > 0 and size > 0 and size + len(line) > self._max_bytes:
                    self._append(b"".join(chunk))
                    chunk = []
                    self._rotate()
                    size = 0
                chunk.append(line)
                size += len(line)
            self._append(b"".join(chunk))
        finally:
            fcntl.flock(self._lock, fcntl.LOCK_UN)

    def _append(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def _follow(self) -> None:
        """Reopen `path` when the descriptor no longer is it (another worker rotated it, or it was removed)."""
        try:
            current = os.stat(self._path)
        except FileNotFoundError:
            current = None
        mine = os.fstat(self._fd)
        if current is None or (current.st_dev, current.st_ino) != (mine.st_dev, mine.st_ino):
            os.close(self._fd)
            self._fd = self._open()

    def _rotate(self) -> None:
        if self._backups > 0:
            for index in range(self._backups - 1, 0, -1):
                source = f"{self._path}.{index}"
                if os.path.exists(source):
                    os.replace(source, f"{self._path}.{index + 1}")
            os.replace(self._path, f"{self._path}.1")
        else:
            os.truncate(self._path, 0)
        os.close(self._fd)
        self._fd = self._open()

    def close(self) -> None:
        for fd in (self._fd, self._lock):
            with contextlib.suppress(OSError):
                os.close(fd)


class HttpSink:
    """POSTs each batch as one JSON array (Content-Type application/json), with a bearer token when configured."""

    def __init__(self, url: str, *, token: str = "", timeout: float = 10.0) -> None:
        self._url = url
        self._headers = {"Content-Type": "application/json", "User-Agent": f"verdict/{__version__}"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._timeout = timeout

    def write(self, records: Sequence[str]) -> None:
        body = ("[" + ",".join(records) + "]").encode("utf-8")
        request = urllib.request.Request(self._url, data=body, headers=self._headers, method="POST")  # noqa: S310
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as reply:  # noqa: S310 - the operator's URL
                reply.read()
        except urllib.error.HTTPError as error:
            raise OSError(f"decision log endpoint answered {error.code}") from None
        except (urllib.error.URLError, TimeoutError) as error:
            raise OSError(f"decision log endpoint unreachable: {error}") from None

    def close(self) -> None:
        return None
