"""Decision log sinks: where the drain thread delivers serialized records (a stream, a rotated file, an HTTP
endpoint), and the Protocol each of them keeps. No buffering and no record building here: `log.py` does those."""

from __future__ import annotations

import logging
import logging.handlers
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
    """One JSON line per record in a file rotated by size (name.1 is the newest rotated file), via the standard
    library's RotatingFileHandler: rotation is solved there, including the rename order."""

    def __init__(self, path: str, *, max_bytes: int, backups: int) -> None:
        self._handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8"
        )
        self._handler.setFormatter(logging.Formatter("%(message)s"))

    def write(self, records: Sequence[str]) -> None:
        for record in records:
            self._handler.emit(logging.makeLogRecord({"msg": record, "levelno": logging.INFO}))
        self._handler.flush()

    def close(self) -> None:
        self._handler.close()


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
