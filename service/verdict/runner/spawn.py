"""Starting one child process without holding the event loop while it starts.

`asyncio.create_subprocess_exec` runs `subprocess.Popen` on the loop's own thread. CPython starts the child with
vfork, and the parent thread stays blocked until the child has exec'd; on a busy machine the child first waits for a
core, so every `bash -n` a call starts stopped the loop (and every other call, health check and refusal on it) for
that wait: measured beside three CPU hogs, the loop was blocked a median 7 ms per start and a lag probe saw p90 19 ms
while two children started at a time. CPython drops the GIL around vfork, so the same start made on another thread
leaves the loop running: the same probe saw p90 2 ms (bench/NOTES.md, "Starting children off the loop").

So the `Popen` runs on a small thread pool the runner owns, and the started child is handed to asyncio's own
subprocess transport, which connects its pipes on the loop as it would for a child it had started itself. The exit
is watched with a pidfd on the loop (what asyncio's own watcher does on Linux), so no thread waits per child. Where
pidfds are missing (not Linux, or a kernel before 5.3) the child is started the usual way, on the loop.

A start whose caller is cancelled while the thread is still starting it is not lost: the child is killed with its
group and reaped as soon as the thread hands it back.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import os
import subprocess
from asyncio import base_subprocess
from collections.abc import Callable
from typing import Any

from verdict.runner.descendants import kill_group

__all__ = ["OFF_LOOP_STARTS", "READ_CHUNK", "start_child"]

READ_CHUNK = 64 * 1024
"""The stream limit of a child's pipes, and what `pipes.communicate` reads at a time."""


def _pidfds_work() -> bool:
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError):
        return False
    return True


OFF_LOOP_STARTS = _pidfds_work()
"""Whether children are started on a thread (the exit then watched with a pidfd), not on the loop."""


class _ExitProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's stream protocol, plus `exited`: a future set by the same callback that sets the child's return code.

    asyncio's own `Process.wait()` also waits for every pipe to close, which a descendant holding stdout delays to the
    time limit; polling `returncode` instead costs up to one poll interval on every call (a `bash -n` finishes in a
    few milliseconds)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=READ_CHUNK, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


async def start_child(
    argv: tuple[str, ...], starter: concurrent.futures.Executor | None, **options: Any
) -> tuple[asyncio.subprocess.Process, asyncio.Future[None]]:
    """Start `argv` (options as for `asyncio.create_subprocess_exec`) and return the process and a future that
    resolves the moment it has exited and been reaped. With a `starter` pool (and pidfds), the start runs there;
    otherwise on the loop. Raises what `Popen` raises (OSError and its kinds) either way."""
    loop = asyncio.get_running_loop()
    if starter is None or not OFF_LOOP_STARTS:
        transport, protocol = await loop.subprocess_exec(lambda: _ExitProtocol(loop), *argv, **options)
        return asyncio.subprocess.Process(transport, protocol, loop), protocol.exited
    popen = await _popen_on(starter, loop, functools.partial(_popen, argv, options))
    protocol = _ExitProtocol(loop)
    waiter: asyncio.Future[None] = loop.create_future()
    try:
        pidfd = os.pidfd_open(popen.pid)  # first: out of descriptors, the child is discarded, never left unwatched
        try:
            transport = _Started(
                loop, protocol, argv, False, options.get("stdin"), options.get("stdout"), options.get("stderr"), 0,
                waiter=waiter, popen=popen,
            )  # fmt: skip
        except BaseException:
            os.close(pidfd)
            raise
    except BaseException:
        _dispose(starter, popen)
        raise
    _watch_exit(loop, popen, pidfd, transport)
    try:
        await waiter  # the pipes connected
    except BaseException:
        transport.close()
        await transport._wait()
        raise
    return asyncio.subprocess.Process(transport, protocol, loop), protocol.exited


def _popen(argv: tuple[str, ...], options: dict[str, Any]) -> subprocess.Popen[bytes]:
    popen: subprocess.Popen[bytes] = subprocess.Popen(argv, bufsize=0, **options)
    return popen


async def _popen_on(
    starter: concurrent.futures.Executor, loop: asyncio.AbstractEventLoop, start: Callable[[], subprocess.Popen[bytes]]
) -> subprocess.Popen[bytes]:
    """`start()` on the starter pool. If the caller is cancelled meanwhile, the child it starts is discarded when it
    arrives, never left running unowned."""
    started = loop.run_in_executor(starter, start)
    try:
        return await asyncio.shield(started)
    except asyncio.CancelledError:
        started.add_done_callback(lambda done: _dispose_started(starter, done))
        raise


def _dispose_started(starter: concurrent.futures.Executor, done: asyncio.Future[subprocess.Popen[bytes]]) -> None:
    if not done.cancelled() and done.exception() is None:
        _dispose(starter, done.result())


def _dispose(starter: concurrent.futures.Executor, popen: subprocess.Popen[bytes]) -> None:
    """Kill a child nobody will run (its start was cancelled, or wrapping it failed) at once; the wait for its
    death and its reaping go to the starter pool, off the loop."""
    kill_group(popen.pid)
    try:
        starter.submit(_discard, popen)
    except RuntimeError:  # the pool is shut down: the server is going, and its shutdown kills every call's group
        _close_pipes(popen)


def _discard(popen: subprocess.Popen[bytes]) -> None:
    """Kill a child nobody will run, reap it and close its pipes (on a starter thread: the wait may take a while)."""
    kill_group(popen.pid)
    with contextlib.suppress(OSError):
        popen.kill()
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        popen.wait(timeout=5)
    _close_pipes(popen)


def _close_pipes(popen: subprocess.Popen[bytes]) -> None:
    for pipe in (popen.stdin, popen.stdout, popen.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


class _Started(base_subprocess.BaseSubprocessTransport):
    """asyncio's subprocess transport around a child that is already running (the base class asks `_start` for a
    `Popen`; asyncio's own `_start` makes one on the loop's thread)."""

    def _start(  # type: ignore[override]
        self, args: object, shell: bool, stdin: object, stdout: object, stderr: object, bufsize: int,
        popen: subprocess.Popen[bytes], **kwargs: object,
    ) -> None:  # fmt: skip
        self._proc = popen


def _watch_exit(
    loop: asyncio.AbstractEventLoop, popen: subprocess.Popen[bytes], pidfd: int, transport: _Started
) -> None:
    """Reap the child on the loop the moment it exits: its pidfd becomes readable then."""

    def exited() -> None:
        loop.remove_reader(pidfd)
        os.close(pidfd)
        try:
            pid, status = os.waitpid(popen.pid, os.WNOHANG)
        except ChildProcessError:  # reaped already, by the transport's own poll when it was closed
            pid, status = 0, 0
        if pid:
            popen.returncode = os.waitstatus_to_exitcode(status)
        transport._process_exited(popen.returncode if popen.returncode is not None else 255)

    loop.add_reader(pidfd, exited)
