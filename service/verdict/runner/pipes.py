"""One child's pipes: stdin fed and both outputs drained at once, each capped, until the child exits or its time is up.

Kept apart from the runner's lifecycle because it is the part that must never deadlock (a full pipe blocks the
child) nor wait for end-of-file that a descendant holding stdout would delay to the time limit; its buffers and
descriptors are released as soon as the call is over.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from verdict.runner.descendants import kill_group
from verdict.runner.spawn import READ_CHUNK

if TYPE_CHECKING:
    from verdict.runner.command import Command

__all__ = ["Sink", "close_pipes", "close_transport", "communicate"]

_AFTER_EXIT_SECONDS = 0.5
"""How long, after the direct child exited and its descendants were killed, what is left in the pipes is read."""


class Sink:
    """What was read from one pipe: at most `cap` bytes (the first, or with `keep_tail` the last), the rest
    discarded, so a child never blocks on a full pipe and memory stays bounded. It keeps what it has when the reading
    is cut short, and `release()` frees the buffer at once instead of whenever a garbage collection runs."""

    def __init__(self, cap: int, keep_tail: bool) -> None:
        self.cap = cap
        self.keep_tail = keep_tail
        self.kept = bytearray()
        self.truncated = False

    def add(self, chunk: bytes) -> None:
        if self.keep_tail:
            self.kept += chunk
            if len(self.kept) > self.cap:
                del self.kept[: len(self.kept) - self.cap]
                self.truncated = True
            return
        room = self.cap - len(self.kept)
        if room > 0:
            self.kept += chunk[:room]
        if len(chunk) > room:
            self.truncated = True

    def take(self) -> bytes:
        data = bytes(self.kept)
        self.release()
        return data

    def release(self) -> None:
        self.kept = bytearray()


async def _pump(stream: asyncio.StreamReader | None, sink: Sink) -> None:
    if stream is None:
        return
    while chunk := await stream.read(READ_CHUNK):
        sink.add(chunk)


async def communicate(
    process: asyncio.subprocess.Process,
    exited: asyncio.Future[None],
    command: Command,
    stdout: Sink,
    stderr: Sink,
    kill_descendants: Callable[[], object],
) -> bool:
    """Feed stdin and drain both pipes at once (never one after the other: a full pipe would deadlock) until the
    child exits (`exited`, from `spawn.start_child`) or its time is up; True when the time ran out.

    End-of-file is not what ends a call: any descendant that inherited stdout (a CLI's background worker, a `setsid`
    daemon, a Node `detached` child) would hold it open for as long as it lives, and the answer the child printed
    before exiting would be thrown away at the time limit. Once the direct child has exited, its descendants are
    killed, and what is already in the pipes is read for at most `_AFTER_EXIT_SECONDS`; whatever still holds a pipe
    after that (a process that scrubbed its environment) is not waited for. In the usual case the pipes close as the
    child exits and nothing is waited for at all.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + command.timeout
    feeder = asyncio.ensure_future(_feed(process, command.stdin))
    readers = asyncio.ensure_future(asyncio.gather(_pump(process.stdout, stdout), _pump(process.stderr, stderr)))
    try:
        either: set[asyncio.Future[Any]] = {readers, exited}
        await asyncio.wait(either, timeout=max(deadline - loop.time(), 0), return_when=asyncio.FIRST_COMPLETED)
        if readers.done():
            readers.result()
        if not exited.done():
            if not readers.done():
                return True
            await asyncio.wait({exited}, timeout=max(deadline - loop.time(), 0))  # pipes closed, the child runs on
            return not exited.done()
        if not readers.done():
            kill_group(process.pid)
            kill_descendants()
            await asyncio.wait({readers}, timeout=_AFTER_EXIT_SECONDS)
        return False
    finally:
        for task in (feeder, readers):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


async def _feed(process: asyncio.subprocess.Process, data: bytes | None) -> None:
    if data is None or process.stdin is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        process.stdin.write(data)
        await process.stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        process.stdin.close()
        await process.stdin.wait_closed()


def close_pipes(process: asyncio.subprocess.Process) -> None:
    """Close the child's pipes now: a descendant that escaped every kill, or a flood cut off at the time limit, must
    not keep three descriptors and a full read buffer open until a garbage collection finds them."""
    for stream in (process.stdout, process.stderr):
        transport = getattr(stream, "_transport", None)
        if transport is not None:
            transport.close()
    if process.stdin is not None:
        process.stdin.close()


def close_transport(process: asyncio.subprocess.Process) -> None:
    """Close the subprocess transport once the child is reaped. asyncio would otherwise close it in a finaliser,
    possibly after the event loop itself is closed (an "Event loop is closed" error at exit)."""
    transport = getattr(process, "_transport", None)
    if transport is not None:
        transport.close()
