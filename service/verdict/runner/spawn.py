"""Starting one child on the event loop, where children cannot be attended on a thread (no pidfds: not Linux, or a
kernel before 5.3; see `attend.py`), with a future set the moment it has exited.

asyncio's own `Process.wait()` also waits for every pipe to close, which a descendant holding stdout delays to the
time limit; `exited` is set by the same callback that sets the child's return code instead.
"""

from __future__ import annotations

import asyncio
from typing import Any

from verdict.runner.pipes import READ_CHUNK

__all__ = ["start_child"]


class _ExitProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's stream protocol, plus `exited`: a future set by the same callback that sets the child's return code.

    Polling `returncode` instead costs up to one poll interval on every call (a `bash -n` finishes in a few
    milliseconds)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=READ_CHUNK, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


async def start_child(argv: tuple[str, ...], **options: Any) -> tuple[asyncio.subprocess.Process, asyncio.Future[None]]:
    """Start `argv` (options as for `asyncio.create_subprocess_exec`) on the loop and return the process and a future
    that resolves the moment it has exited and been reaped. Raises what `Popen` raises (OSError and its kinds)."""
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.subprocess_exec(lambda: _ExitProtocol(loop), *argv, **options)
    return asyncio.subprocess.Process(transport, protocol, loop), protocol.exited
