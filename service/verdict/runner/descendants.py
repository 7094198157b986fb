"""Descendants that left the process group: found by their marker, killed, and reaped by the server as subreaper.

A group kill misses a descendant that called `setsid`, a Node `detached: true` child or a daemon's double fork. Every
runner child carries a per-call marker in its environment (`MARKER_ENV`), which its descendants inherit; this module
finds such processes in /proc, kills them until none is left, and collects the exit status of the ones the server
adopted (`become_subreaper`). Kept apart from the runner because it is plain Linux process bookkeeping, with no
asyncio and no knowledge of commands or pools.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import signal
from collections.abc import Iterable, Iterator

__all__ = [
    "MARKER_ENV",
    "become_subreaper",
    "is_subreaper",
    "kill_escaped",
    "kill_group",
    "kill_marked",
    "marked_processes",
    "reap_adopted",
]

MARKER_ENV = "VERDICT_CALL"
"""The environment variable that marks every process of one runner call (see `Runner.marker_prefix`)."""

_KILL_ROUNDS = 8
_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37


def become_subreaper(enabled: bool = True) -> bool:
    """Make this process the reaper of its orphaned descendants (Linux `PR_SET_CHILD_SUBREAPER`); `enabled=False`
    gives them back to init.

    A judge's grandchild that leaves the process group (`setsid`, a daemon's double fork) is then re-parented to the
    server instead of to init, so `kill_marked` can still find it as the server's descendant and `reap_adopted` can
    collect its exit status. Returns False where the call is not available (not Linux); the kills by marker still
    work there, but the dead are reaped by init.
    """
    try:
        return bool(_libc().prctl(_PR_SET_CHILD_SUBREAPER, int(enabled), 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def is_subreaper() -> bool:
    """Whether this process adopts its orphaned descendants (see `become_subreaper`)."""
    try:
        flag = ctypes.c_int(0)
        return bool(_libc().prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0) == 0 and flag.value)
    except (OSError, AttributeError):
        return False


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def marked_processes(marker: str, *, prefix: bool = False) -> list[int]:
    """Live processes whose environment holds `VERDICT_CALL=<marker>` (or, with `prefix`, a marker starting so).

    Zombies have no readable environment and are not listed: they are already dead.
    """
    wanted = f"{MARKER_ENV}={marker}".encode()
    found: list[int] = []
    me = os.getpid()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for name in entries:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                environment = handle.read()
        except OSError:
            continue
        for item in environment.split(b"\0"):
            if item == wanted or (prefix and item.startswith(wanted)):
                found.append(int(name))
                break
    return found


def kill_marked(marker: str, *, prefix: bool = False) -> int:
    """SIGKILL every process carrying the call's marker, again until none is left (one may fork while it is being
    killed). Returns how many were killed. The dead are not waited for here (a killed process takes a moment to
    die, and the event loop must not wait with it): `reap_adopted` collects them once they are zombies."""
    killed: set[int] = set()
    for _ in range(_KILL_ROUNDS):
        pids = [pid for pid in marked_processes(marker, prefix=prefix) if pid not in killed or _running(pid)]
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
            killed.add(pid)
    return len(killed)


def kill_escaped(marker: str, *, child_exited: bool, spared: Iterable[int] = ()) -> int:
    """Kill whatever is left of one call after its process group was killed: `kill_marked`, skipped when there
    cannot be anything to find.

    `kill_marked` reads the environment of every process on the machine, which costs more than the `bash -n` it
    follows. It can be skipped when this process is the subreaper and the call's direct child has exited (and been
    reaped): every descendant still alive then hangs below a child of this process that is not one of the runner's
    own (those are in `spared`), because the kernel re-parents each orphan to its nearest subreaper. No such live
    child, nothing escaped. Without the subreaper flag orphans go to init, and while the direct child runs its
    descendants are its own: in both cases only the scan finds them. Returns how many were killed.
    """
    if child_exited and is_subreaper() and all(state in ("Z", "X") for _pid, state in _adopted(set(spared))):
        return 0
    return kill_marked(marker)


def _adopted(spared: set[int]) -> Iterator[tuple[int, str]]:
    """(pid, state) of each child of this process that lives in a session other than its own and is not in `spared`:
    the orphans it adopted as subreaper (every runner child starts a session of its own, and the runner's own
    children are in `spared`; the parse pool's workers share the server's session and are reaped by their pool)."""
    session = os.getsid(0)
    me = os.getpid()
    for pid in _adopter_children():
        if pid in spared:
            continue
        state = _stat(pid)
        if state is not None and state[1] == me and state[2] != session:
            yield pid, state[0]


def reap_adopted(spared: Iterable[int] = ()) -> int:
    """Collect the exit status of adopted orphans that are already dead, so they do not stay zombies; never waits.
    Returns how many were collected.

    Only zombies among the adopted orphans (`_adopted`) are touched, never a pid in `spared`. `spared` must hold every
    runner child asyncio still waits for, so this must not run while a child is being started (between its fork and
    its registration): reaping that child here would steal its exit status from asyncio, which would then report 255
    for a `bash -n` that passed.
    """
    collected = 0
    for pid, state in list(_adopted(set(spared))):
        if state != "Z":
            continue
        with contextlib.suppress(ChildProcessError):
            done, _status = os.waitpid(pid, os.WNOHANG)
            collected += bool(done)
    return collected


def _adopter_children() -> list[int]:
    """The children of this process's main thread, which are every orphan it adopted.

    The kernel hands an orphan to the first live thread of its subreaper's thread group (`find_new_reaper`, Linux
    3.17 and later), which is the main thread while the process runs, whichever thread started the orphan's parent
    (the runner starts children on its starter threads). Reading only that thread's list, not every thread's, is what
    keeps the check after each child cheap: the server has a dozen threads, and the scan of all of them cost about
    0.4 ms of the event loop, twice per `bash -n` (bench/NOTES.md, "Starting children off the loop")."""
    me = os.getpid()
    try:
        with open(f"/proc/self/task/{me}/children") as handle:
            return [int(pid) for pid in handle.read().split()]
    except OSError:
        return []


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, session id) of a process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0], int(fields[1]), int(fields[3])


def _running(pid: int) -> bool:
    state = _stat(pid)
    return state is not None and state[0] not in ("Z", "X")


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
