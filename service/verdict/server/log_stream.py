"""The server's log lines reach stderr in one write per `FLUSH_SECONDS`, not one write per line.

Every call writes an access line, and `logging.StreamHandler` writes and flushes each line on its own: one `write`
system call per call, which under load was the largest single cost of a tiny call after grpc.aio itself (a profile
of the server under h2load put the handler's write at about an eighth of the event loop's time). Lines emitted on the
event loop are kept in order in a list and written together by one callback the loop runs `FLUSH_SECONDS` after the
first of them, so a busy second costs a hundred system calls, not one per call (a flush at the end of each loop turn
still wrote about one line per write under load: the loop turns as often as calls arrive). Lines from any other
thread (the parse pool, the runner's threads), and every line when no loop runs, are written at once, after whatever
the loop had pending, so the order of lines is the order they were emitted. `flush()` (called by `logging.shutdown`
at exit and when the handler closes) writes what is pending, so only a process killed with SIGKILL can lose lines:
the last `FLUSH_SECONDS` of them, at most.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TextIO

__all__ = ["FLUSH_SECONDS", "CoalescingStreamHandler"]

FLUSH_SECONDS = 0.01
"""How long a line emitted on the event loop may wait for the lines after it to share its write."""


class CoalescingStreamHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """A StreamHandler that batches the lines emitted on the running event loop into one write per `FLUSH_SECONDS`."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__(stream)
        self._pending: list[str] = []
        self._scheduled = False

    def emit(self, record: logging.LogRecord) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            super().emit(record)
            return
        try:
            line = self.format(record)
        except Exception:
            self.handleError(record)
            return
        self.enqueue(line, loop)

    def enqueue(self, line: str, loop: asyncio.AbstractEventLoop) -> None:
        """Write `line` (formatted already) with the loop's next batch of lines."""
        with self.lock:  # type: ignore[union-attr]
            self._pending.append(line + self.terminator)
            if self._scheduled:
                return
            self._scheduled = True
        loop.call_later(FLUSH_SECONDS, self.flush)

    def flush(self) -> None:
        with self.lock:  # type: ignore[union-attr]
            self._scheduled = False
            text = "".join(self._pending)
            self._pending.clear()
            # a closed or broken stream (the flush runs FLUSH_SECONDS after the line, when the stream's owner may
            # have closed it): logging's own rule is that logging never raises
            with contextlib.suppress(OSError, ValueError):
                if text:
                    self.stream.write(text)
                super().flush()
