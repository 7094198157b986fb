"""The only door to child processes: `bash -n`, `git diff`, and the judge CLIs all come through here.

Why one door: every child must get the same protections, and a protection written in three places is missing from
one of them. A `Command` is an argv list (never a shell), an explicit minimal environment, stdin bytes or /dev/null, a
time limit and an output cap. The runner starts it in a new session (its own process group), so that on timeout, on
cancellation of the calling RPC, at shutdown, and even after a normal exit, the whole group is killed: CLIs such as
codex and gemini run a child that outlives a kill of the parent alone. Counts, durations and timeouts per tool are
recorded here, once, for every caller.

The runner is also the one owner of the server's concurrency limits: every named pool (`bash`, `git`, `judge`,
`parse`) is a `SlotLimit` it holds, sized from the config in one place (`pool_sizes`), with a queue that rejects
overflow (`ResourceExhausted`) instead of growing without limit. Callers ask for a pool by name (`Runner.limit`);
nobody else makes a semaphore.

A descendant can also leave the group (`setsid`, a Node `detached: true` child, a daemon's double fork), and a group
kill misses it. So every child carries a per-call marker in its environment (`VERDICT_CALL`), which its descendants
inherit; at the end of each call, and at shutdown, every process carrying the marker is found in /proc and killed.
The server is the child subreaper of its descendants (`become_subreaper`), so the escaped ones it kills are its own
to reap. A call ends when its direct child exits, not at end-of-file (which a descendant holding stdout would delay
to the time limit), and its pipes and buffers are released as it returns. Running out of descriptors or processes
when starting a child is UNAVAILABLE with a retry hint, not an error of the caller or a bug.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ctypes
import functools
import itertools
import os
import signal
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import ParamSpec, TypeVar

from verdict.config import Config
from verdict.errors import ResourceExhausted, resource_exhausted
from verdict.metrics import Metrics

__all__ = [
    "MARKER_ENV",
    "Command",
    "CommandNotFound",
    "Completed",
    "Runner",
    "SlotLimit",
    "become_subreaper",
    "is_subreaper",
    "kill_marked",
    "marked_processes",
    "minimal_env",
    "pool_sizes",
    "reap_adopted",
    "signal_name",
    "start_worker",
]

MARKER_ENV = "VERDICT_CALL"
"""The environment variable that marks every process of one runner call (see `Runner.marker_prefix`)."""

_P = ParamSpec("_P")
_T = TypeVar("_T")

OFF_LOOP_THREADS = 2
"""Threads for CPU-bound Python work moved off the event loop (`Runner.off_loop`). Few on purpose: each one competes
with the event loop for the GIL, and the interpreter hands it over every 5 ms, so with two the loop waits ~10 ms at
worst for its turn; more threads would make every health check wait longer, not the work go faster."""

_READ_CHUNK = 64 * 1024
_EXIT_POLL_SECONDS = 0.05
_AFTER_EXIT_SECONDS = 0.5
"""How long, after the direct child exited and its descendants were killed, what is left in the pipes is read."""
_KILL_ROUNDS = 8
_REAP_TRIES = 200
_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37


def minimal_env(path: str | None = None, home: str | None = None, **extra: str) -> dict[str, str]:
    """The environment a child gets: PATH, a UTF-8 locale, HOME if given, and exactly the extras named.

    Nothing else of the server's environment leaks in (no credentials, no BASH_ENV, no GIT_* overrides).
    """
    env = {"PATH": path if path is not None else os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    if home is not None:
        env["HOME"] = home
    env.update(extra)
    return env


@dataclass(frozen=True)
class Command:
    """One child process to run. `tool` is the bounded metric label and the concurrency pool it draws from."""

    tool: str
    argv: tuple[str, ...]
    timeout: float
    env: Mapping[str, str] = field(default_factory=minimal_env)
    stdin: bytes | None = None
    cwd: str | None = None
    max_output_bytes: int = 1024 * 1024
    keep_tail: bool = False
    """Past the cap, keep the last bytes instead of the first: for CLIs that stream events and put the answer last."""
    pass_fds: tuple[int, ...] = ()
    """Descriptors the child inherits under the same numbers (everything else is closed): a directory the caller
    opened and checked, which the child reaches as `/proc/self/fd/N` and which no rename can swap."""
    slot_held: bool = False
    """The caller already holds a slot of this tool's pool (the judge service holds one across the whole call, the
    wait for the deadline and HTTP hosts included), so the runner must not take a second one."""


def signal_name(returncode: int | None) -> str | None:
    """The name of the signal a negative return code stands for (SIGSEGV, ...), or None for an exit or no code.

    The one place signal numbers become names, for children of the runner and workers of the parse pool alike."""
    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


@dataclass(frozen=True)
class Completed:
    """What a child did. `returncode` is None when it was killed at its time limit; negative when a signal ended it."""

    returncode: int | None
    stdout: bytes
    stderr: bytes
    duration: float
    timed_out: bool = False
    stdout_truncated: bool = False
    stderr_truncated: bool = False

    @property
    def signal_name(self) -> str | None:
        """The name of the signal that ended the child (SIGSEGV, ...), or None."""
        return signal_name(self.returncode)


class CommandNotFound(Exception):
    """Raised when the program to run does not exist or is not executable."""

    def __init__(self, program: str) -> None:
        super().__init__(f"{program}: command not found")
        self.program = program


class SlotLimit:
    """At most `slots` holders at once, at most `queue` more waiting; anyone beyond that is refused at once.

    Refusing is the point: a caller told RESOURCE_EXHAUSTED retries elsewhere, a caller left waiting in an unbounded
    queue times out having cost memory and a connection the whole time.
    """

    def __init__(self, name: str, slots: int, queue: int) -> None:
        self.name = name
        self.slots = slots
        self.queue = queue
        self._semaphore = asyncio.Semaphore(slots)
        self._waiting = 0
        self._held = 0

    @property
    def waiting(self) -> int:
        return self._waiting

    @property
    def held(self) -> int:
        return self._held

    def per_call(self) -> asyncio.Semaphore:
        """A semaphore as wide as this pool, for one call that fans out (a completion with many shell blocks): its
        own checks wait their turn among themselves instead of filling the pool's queue and being refused."""
        return asyncio.Semaphore(self.slots)

    @contextlib.asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        if self._semaphore.locked() and self._waiting >= self.queue:
            raise ResourceExhausted(
                f"too many concurrent {self.name} calls: {self.slots} running and {self._waiting} queued",
                reason="TOO_MANY_CONCURRENT_CALLS",
                metadata={"pool": self.name, "slots": str(self.slots), "queue": str(self.queue)},
            )
        self._waiting += 1
        try:
            await self._semaphore.acquire()
        finally:
            self._waiting -= 1
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
            self._semaphore.release()


def pool_sizes(config: Config) -> dict[str, tuple[int, int]]:
    """Slots and queue length of every named pool, from the config: the one place they are decided.

    `bash` and `git` share max_concurrent_shell_checks; the git queue is shorter because a diffstat is one call per
    request, a completion may hold many shell blocks. `parse` bounds the blocks one call sends to the parse pool at
    once (the pool itself has parse_workers processes, and each call waits its turn there)."""
    return {
        "bash": (config.max_concurrent_shell_checks, 1024),
        "git": (config.max_concurrent_shell_checks, 256),
        "judge": (config.max_concurrent_judges, config.judge_queue_size),
        "parse": (config.parse_workers, 1024),
    }


class Runner:
    """Runs `Command`s and holds every concurrency pool. One per server; `shutdown()` kills whatever is still
    running. `limits` are pools made up front (`for_config` makes all of them); a pool asked for later by name is
    made then, from the caller's config, and shared from then on."""

    def __init__(self, metrics: Metrics, limits: Mapping[str, SlotLimit] | None = None) -> None:
        self.metrics = metrics
        self.limits: dict[str, SlotLimit] = dict(limits or {})
        self._live: set[int] = set()
        self._prefix = f"{os.getpid()}.{id(self):x}."
        self._calls = itertools.count(1)
        self._threads: concurrent.futures.ThreadPoolExecutor | None = None

    async def off_loop(self, func: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """Run CPU-bound Python work (a big Struct conversion, a YAML parse, a mid-sized block past a call's inline
        budget) in the runner's small thread pool, so the event loop keeps answering other calls and health checks
        while it runs. The GIL is still shared; what changes is that the interpreter switches to the loop every few
        milliseconds instead of after the whole job."""
        if self._threads is None:
            self._threads = concurrent.futures.ThreadPoolExecutor(OFF_LOOP_THREADS, thread_name_prefix="verdict-cpu")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._threads, functools.partial(func, *args, **kwargs))

    @classmethod
    def for_config(cls, config: Config, metrics: Metrics) -> Runner:
        """The server's runner, with every named pool sized from `config`."""
        pools = {name: SlotLimit(name, slots, queue) for name, (slots, queue) in pool_sizes(config).items()}
        return cls(metrics, pools)

    def limit(self, name: str, config: Config) -> SlotLimit:
        """The pool called `name`; made from `pool_sizes(config)` the first time it is asked for, if the runner was
        not built with it. Raises KeyError for a name no pool has."""
        if name not in self.limits:
            slots, queue = pool_sizes(config)[name]
            self.limits[name] = SlotLimit(name, slots, queue)
        return self.limits[name]

    @property
    def live_process_groups(self) -> frozenset[int]:
        """Process groups started and not yet reaped; empty when nothing is running."""
        return frozenset(self._live)

    @property
    def marker_prefix(self) -> str:
        """Every child this runner starts carries `VERDICT_CALL=<prefix><n>` in its environment, and so does every
        descendant that does not scrub its environment: how a call's processes are found again, whatever group or
        session they moved to."""
        return self._prefix

    async def run(self, command: Command) -> Completed:
        """Run one command to completion, its time limit, or the caller's cancellation (which is re-raised)."""
        limit = None if command.slot_held else self.limits.get(command.tool)
        if limit is None:
            return await self._run(command)
        async with limit.hold():
            return await self._run(command)

    async def _run(self, command: Command) -> Completed:
        tool = command.tool
        started = time.monotonic()
        marker = f"{self._prefix}{next(self._calls)}"
        try:
            process = await asyncio.create_subprocess_exec(
                *command.argv,
                stdin=asyncio.subprocess.PIPE if command.stdin is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env={**command.env, MARKER_ENV: marker},
                cwd=command.cwd,
                pass_fds=command.pass_fds,
                start_new_session=True,
            )
        except OSError as exc:
            exhausted = resource_exhausted(exc, what=f"start {tool}")
            if exhausted is not None:
                self.metrics.subprocess_runs.labels(tool=tool, outcome="no_resources").inc()
                self.metrics.resource_exhaustion.labels(resource=exhausted.metadata["resource"]).inc()
                raise exhausted from None
            if not isinstance(exc, FileNotFoundError | PermissionError | NotADirectoryError):
                raise
            self.metrics.subprocess_runs.labels(tool=tool, outcome="missing").inc()
            if isinstance(exc, NotADirectoryError) or (command.cwd and not os.path.isdir(command.cwd)):
                raise
            raise CommandNotFound(command.argv[0]) from None
        pgid = process.pid
        self._live.add(pgid)
        running = self.metrics.subprocesses_running.labels(tool=tool)
        running.inc()
        outcome = "cancelled"
        stdout, stderr = (_Sink(command.max_output_bytes, command.keep_tail) for _ in range(2))
        try:
            timed_out = await _communicate(
                process, command, stdout, stderr, lambda: kill_marked(marker, spared=self._live)
            )
            if timed_out:
                outcome = "timeout"
                self.metrics.subprocess_timeouts.labels(tool=tool).inc()
                return Completed(None, b"", b"", time.monotonic() - started, timed_out=True)
            rc = process.returncode
            assert rc is not None
            outcome = "ok" if rc == 0 else ("signalled" if rc < 0 else "nonzero")
            return Completed(
                rc, stdout.take(), stderr.take(), time.monotonic() - started, False, stdout.truncated, stderr.truncated
            )
        finally:
            # A normal exit can leave grandchildren behind, in the group or in a session of their own: all die here.
            _kill_group(pgid)
            kill_marked(marker, spared=self._live)
            stdout.release()
            stderr.release()
            _close_pipes(process)
            if process.returncode is None:
                await _reap(process)
            _close_transport(process)
            if is_subreaper():
                reap_adopted(self._live)
            self._live.discard(pgid)
            running.dec()
            self.metrics.subprocess_runs.labels(tool=tool, outcome=outcome).inc()
            self.metrics.subprocess_duration.labels(tool=tool).observe(time.monotonic() - started)

    def shutdown(self) -> None:
        """Kill every process group still running and every descendant of any call, wherever it went (the
        server's last act before exit), and stop the thread pool."""
        for pgid in list(self._live):
            _kill_group(pgid)
        kill_marked(self._prefix, prefix=True, spared=self._live)
        threads, self._threads = self._threads, None
        if threads is not None:
            threads.shutdown(wait=False, cancel_futures=True)


class _Sink:
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


async def _pump(stream: asyncio.StreamReader | None, sink: _Sink) -> None:
    if stream is None:
        return
    while chunk := await stream.read(_READ_CHUNK):
        sink.add(chunk)


async def _communicate(
    process: asyncio.subprocess.Process,
    command: Command,
    stdout: _Sink,
    stderr: _Sink,
    kill_descendants: Callable[[], object],
) -> bool:
    """Feed stdin and drain both pipes at once (never one after the other: a full pipe would deadlock) until the
    child exits or its time is up; True when the time ran out.

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
        while not readers.done() and process.returncode is None:
            left = deadline - loop.time()
            if left <= 0:
                return True
            await asyncio.wait({readers}, timeout=min(_EXIT_POLL_SECONDS, left))
        if readers.done():
            readers.result()
            while process.returncode is None:  # both pipes closed, the child still running
                left = deadline - loop.time()
                if left <= 0:
                    return True
                await asyncio.sleep(min(_EXIT_POLL_SECONDS, left))
            return False
        _kill_group(process.pid)
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


def _close_pipes(process: asyncio.subprocess.Process) -> None:
    """Close the child's pipes now: a descendant that escaped every kill, or a flood cut off at the time limit, must
    not keep three descriptors and a full read buffer open until a garbage collection finds them."""
    for stream in (process.stdout, process.stderr):
        transport = getattr(stream, "_transport", None)
        if transport is not None:
            transport.close()
    if process.stdin is not None:
        process.stdin.close()


def _close_transport(process: asyncio.subprocess.Process) -> None:
    """Close the subprocess transport once the child is reaped. asyncio would otherwise close it in a finaliser,
    possibly after the event loop itself is closed (an "Event loop is closed" error at exit)."""
    transport = getattr(process, "_transport", None)
    if transport is not None:
        transport.close()


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux `PR_SET_CHILD_SUBREAPER`).

    A judge's grandchild that leaves the process group (`setsid`, a daemon's double fork) is then re-parented to the
    server instead of to init, so `kill_marked` can still find it as the server's descendant and `reap_adopted` can
    collect its exit status. Returns False where the call is not available (not Linux); the kills by marker still
    work there, but the dead are reaped by init.
    """
    try:
        return bool(_libc().prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
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


def kill_marked(marker: str, *, prefix: bool = False, spared: Iterable[int] = ()) -> int:
    """SIGKILL every process carrying the call's marker, again until none is left (one may fork while it is being
    killed), and reap the ones re-parented to this process, except the pids in `spared` (runner children asyncio
    itself waits for). Returns how many were killed."""
    killed: set[int] = set()
    for _ in range(_KILL_ROUNDS):
        pids = [pid for pid in marked_processes(marker, prefix=prefix) if pid not in killed or _running(pid)]
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
            killed.add(pid)
    reap_adopted(spared, only=killed)
    return len(killed)


def reap_adopted(spared: Iterable[int] = (), *, only: Iterable[int] | None = None) -> None:
    """Collect the exit status of dead descendants this process adopted as subreaper, so they do not stay zombies.

    Only children that live in a session other than the server's are touched (every runner child starts its own
    session; the parse pool's workers share the server's and are reaped by their pool), and never a pid in `spared`
    (runner children asyncio is still waiting for).
    """
    spared = set(spared)
    candidates = set(only) if only is not None else set(_children())
    session = os.getsid(0)
    for pid in candidates - spared:
        state = _stat(pid)
        if state is None or state[1] != os.getpid() or state[2] == session:
            continue
        for _ in range(_REAP_TRIES if state[0] != "Z" else 1):
            try:
                done, _status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                break
            if done:
                break
            time.sleep(0.001)


def _children() -> list[int]:
    """This process's direct children (all threads'), from /proc."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir("/proc/self/task"):
            with contextlib.suppress(OSError), open(f"/proc/self/task/{task}/children") as handle:
                found.extend(int(pid) for pid in handle.read().split())
    return found


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


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


async def _reap(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    with contextlib.suppress(asyncio.CancelledError, TimeoutError):
        await asyncio.wait_for(asyncio.shield(process.wait()), timeout=5)


async def start_worker(argv: tuple[str, ...], env: Mapping[str, str]) -> asyncio.subprocess.Process:
    """Start one server worker of `verdict.workers` (the other kind of child, next to bounded tool runs): a
    long-lived process with no time or output limit, whose lifetime the supervisor owns (it waits for it, restarts
    it, signals it). stdin and stdout are pipes: the worker prints its ready line on stdout and treats end of file on
    stdin as its supervisor's death. It runs in its own session, so a terminal's Ctrl-C reaches it once, forwarded
    by the supervisor, not twice."""
    return await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=dict(env),
        start_new_session=True,
    )
