"""One child attended from its start to its reaping on a thread, so the event loop spends one wake-up on it.

Through asyncio's subprocess machinery a child costs the loop a transport per pipe, a reader per pipe and for its
exit, end-of-file and connection-lost callbacks, a task per pipe: about twenty loop turns and 0.7 ms of the loop's
own CPU per `bash -n` on this project's machine (bench/NOTES.md, "Children attended on a thread"), most of the loop's
time under a shell-heavy load, and every refusal and health check waited behind those turns. Here a thread of the
runner starts the child, feeds its stdin, drains both outputs (each capped by its `Sink`), waits for its exit through
a pidfd, kills what it left behind and reaps it; the loop awaits one future, about 0.1 ms. The GIL is released
while the thread waits in `select`, `fork` and `exec`.

The rules are the ones `pipes.communicate` keeps on the loop (the fallback where pidfds are missing):
- stdin is fed and both outputs drained at once, never one after the other (a full pipe would deadlock the child);
- the call ends when the direct child exits, not at end-of-file: a descendant holding stdout is killed (its group,
  then `kill_descendants(True)`: the child has exited) and what is already in the pipes is read for at most
  `AFTER_EXIT_SECONDS`;
- at the time limit the group is killed and the child reaped;
- `Ticket.cancel()` (the caller was cancelled, or the server is stopping) kills the group at once, from the loop's
  thread, whether the child is already started or is being started: a start that completes after a cancel kills
  its own child.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from verdict.runner.command import lower_priority
from verdict.runner.descendants import kill_group
from verdict.runner.pipes import AFTER_EXIT_SECONDS, READ_CHUNK, Sink

__all__ = ["ATTENDED", "REAP_SECONDS", "Attended", "Ticket", "attend"]

REAP_SECONDS = 5.0
"""How long a killed child is waited for before it is left (a process in uninterruptible sleep ignores SIGKILL)."""


def _pidfds_work() -> bool:
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError):
        return False
    return True


ATTENDED = _pidfds_work()
"""Whether children are attended on a thread (Linux 5.3 and later, where a child's exit can be waited for in `select`
beside its pipes); elsewhere asyncio runs them on the loop (`spawn.start_child`, `pipes.communicate`)."""


class Ticket:
    """The loop's handle on one attended child: its pid once started, and a cancel that reaches it either way."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.pid: int | None = None
        self.cancelled = False

    def started(self, pid: int) -> bool:
        """The thread's report of the start; False when the ticket was cancelled first (the child must die)."""
        with self._lock:
            self.pid = pid
            return not self.cancelled

    def cancel(self) -> None:
        """Kill the child's group now, or have the thread kill it the moment it has started."""
        with self._lock:
            self.cancelled = True
            pid = self.pid
        if pid is not None:
            kill_group(pid)


@dataclass
class Attended:
    """What became of an attended child: its return code (None when its time ran out) and whether it did."""

    returncode: int | None
    timed_out: bool


def attend(
    argv: tuple[str, ...],
    options: dict[str, Any],
    *,
    stdin: bytes | None,
    timeout: float,
    niceness: int,
    stdout: Sink,
    stderr: Sink,
    ticket: Ticket,
    kill_descendants: Callable[[bool], object],
    live: set[int],
) -> Attended:
    """Start `argv` (`subprocess.Popen` options, in its own session) and see it through to its reaping; on a thread,
    never the loop's. Raises what `Popen` raises. `live` holds the pid while the child may run (the runner's
    process groups, killed at shutdown); set operations are atomic under the GIL."""
    popen = subprocess.Popen(
        argv,
        bufsize=0,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        **options,
    )
    live.add(popen.pid)
    try:
        pidfd = os.pidfd_open(popen.pid)
    except OSError:  # out of descriptors: a child nobody can watch is not left running
        kill_group(popen.pid)
        _reap(popen)
        _close(popen)
        live.discard(popen.pid)
        raise
    try:
        if not ticket.started(popen.pid):
            kill_group(popen.pid)
        else:
            # before any input is written: a child that reads stdin (bash -n) does its work at the lower priority
            lower_priority(niceness, popen.pid)
        timed_out = _pump(popen, pidfd, stdin, time.monotonic() + timeout, stdout, stderr, kill_descendants)
        if timed_out:
            kill_group(popen.pid)
        _reap(popen)
        return Attended(None if timed_out else popen.returncode, timed_out)
    finally:
        # a normal exit can leave grandchildren behind, in the group or in a session of their own: all die here
        kill_group(popen.pid)
        if popen.returncode is None:  # an error cut the attending short: reaped now, not when Popen is collected
            _reap(popen)
        os.close(pidfd)
        kill_descendants(popen.returncode is not None)
        _close(popen)
        live.discard(popen.pid)


def _pump(
    popen: subprocess.Popen[bytes],
    pidfd: int,
    data: bytes | None,
    deadline: float,
    stdout: Sink,
    stderr: Sink,
    kill_descendants: Callable[[bool], object],
) -> bool:
    """Feed stdin and drain both outputs until the child has exited and its outputs are read (or the reading after
    its exit is over); True when the time ran out first."""
    sinks: dict[int, Sink] = {}
    with selectors.DefaultSelector() as selector:
        for pipe, sink in ((popen.stdout, stdout), (popen.stderr, stderr)):
            assert pipe is not None
            sinks[pipe.fileno()] = sink
            selector.register(pipe.fileno(), selectors.EVENT_READ)
        selector.register(pidfd, selectors.EVENT_READ)
        feed = memoryview(data or b"")
        if popen.stdin is not None:
            if feed:
                os.set_blocking(popen.stdin.fileno(), False)
                selector.register(popen.stdin.fileno(), selectors.EVENT_WRITE)
            else:
                popen.stdin.close()
        exited = False
        while sinks or not exited:
            left = deadline - time.monotonic()
            if left <= 0:
                return not exited
            for key, _ in selector.select(left):
                fd = key.fd
                if fd == pidfd:
                    exited = True
                    selector.unregister(pidfd)
                    popen.wait()  # readable pidfd: the child has exited, this only reaps it
                    if sinks:  # a descendant may hold the outputs: kill it, then read what is there, briefly
                        kill_group(popen.pid)
                        kill_descendants(True)
                        deadline = min(deadline, time.monotonic() + AFTER_EXIT_SECONDS)
                elif fd in sinks:
                    chunk = os.read(fd, READ_CHUNK)
                    if chunk:
                        sinks[fd].add(chunk)
                    else:
                        selector.unregister(fd)
                        del sinks[fd]
                else:
                    feed = _write(popen, feed)
                    if not feed:
                        selector.unregister(fd)
                        _close_stdin(popen)
    return False


def _write(popen: subprocess.Popen[bytes], feed: memoryview) -> memoryview:
    """Write what the pipe takes now; what is left (empty once all is written or the child closed its stdin)."""
    assert popen.stdin is not None
    try:
        written = os.write(popen.stdin.fileno(), feed[:READ_CHUNK])
    except BlockingIOError:
        return feed
    except (BrokenPipeError, ConnectionResetError):
        return feed[:0]
    return feed[written:]


def _close_stdin(popen: subprocess.Popen[bytes]) -> None:
    if popen.stdin is not None:
        with contextlib.suppress(OSError):
            popen.stdin.close()


def _reap(popen: subprocess.Popen[bytes]) -> None:
    """Wait for the (exited or killed) child, at most `REAP_SECONDS`; nothing here can fail for want of descriptors
    (`Popen.wait` polls), so it also serves the paths where an error cut the attending short."""
    with contextlib.suppress(subprocess.TimeoutExpired, ChildProcessError):
        popen.wait(timeout=REAP_SECONDS)


def _close(popen: subprocess.Popen[bytes]) -> None:
    for pipe in (popen.stdin, popen.stdout, popen.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
