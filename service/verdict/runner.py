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
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field

from verdict.config import Config
from verdict.errors import ResourceExhausted
from verdict.metrics import Metrics

__all__ = [
    "Command",
    "CommandNotFound",
    "Completed",
    "Runner",
    "SlotLimit",
    "minimal_env",
    "pool_sizes",
    "signal_name",
    "start_worker",
]

_READ_CHUNK = 64 * 1024
_EXIT_POLL_SECONDS = 0.05


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
        try:
            process = await asyncio.create_subprocess_exec(
                *command.argv,
                stdin=asyncio.subprocess.PIPE if command.stdin is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=dict(command.env),
                cwd=command.cwd,
                pass_fds=command.pass_fds,
                start_new_session=True,
            )
        except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
            self.metrics.subprocess_runs.labels(tool=tool, outcome="missing").inc()
            if isinstance(exc, NotADirectoryError) or (command.cwd and not os.path.isdir(command.cwd)):
                raise
            raise CommandNotFound(command.argv[0]) from None
        pgid = process.pid
        self._live.add(pgid)
        running = self.metrics.subprocesses_running.labels(tool=tool)
        running.inc()
        outcome = "cancelled"
        try:
            try:
                stdout, out_cut, stderr, err_cut = await asyncio.wait_for(
                    _communicate(process, command.stdin, command.max_output_bytes, command.keep_tail),
                    timeout=command.timeout,
                )
            except TimeoutError:
                outcome = "timeout"
                self.metrics.subprocess_timeouts.labels(tool=tool).inc()
                _kill_group(pgid)
                await _reap(process)
                return Completed(None, b"", b"", time.monotonic() - started, timed_out=True)
            rc = process.returncode
            assert rc is not None
            outcome = "ok" if rc == 0 else ("signalled" if rc < 0 else "nonzero")
            return Completed(rc, stdout, stderr, time.monotonic() - started, False, out_cut, err_cut)
        finally:
            _kill_group(pgid)  # a normal exit can leave grandchildren behind; they die with the group
            if process.returncode is None:
                await _reap(process)
            self._live.discard(pgid)
            running.dec()
            self.metrics.subprocess_runs.labels(tool=tool, outcome=outcome).inc()
            self.metrics.subprocess_duration.labels(tool=tool).observe(time.monotonic() - started)

    def shutdown(self) -> None:
        """Kill every process group still running (the server's last act before exit)."""
        for pgid in list(self._live):
            _kill_group(pgid)


async def _communicate(
    process: asyncio.subprocess.Process, stdin: bytes | None, cap: int, keep_tail: bool = False
) -> tuple[bytes, bool, bytes, bool]:
    """Feed stdin and drain both pipes at once (never one after the other: a full pipe would deadlock), until the
    pipes close; if the child exits while something still holds them open, kill its group and read what is left.

    Waiting for end-of-file alone would wait for every grandchild that inherited stdout or stderr (a CLI's background
    worker): the answer the child printed before exiting would be thrown away at the time limit and the call reported
    as timed out. The group is killed after the child exits anyway, so nothing the child meant to say is lost. In the
    usual case the pipes close as the child exits and no polling happens.
    """
    async with asyncio.TaskGroup() as group:  # on an error or a cancellation, every pipe task is stopped first
        feeding = group.create_task(_feed(process, stdin))
        stdout_task = group.create_task(_drain(process.stdout, cap, keep_tail))
        stderr_task = group.create_task(_drain(process.stderr, cap, keep_tail))
        pipes = {feeding, stdout_task, stderr_task}
        while not all(task.done() for task in pipes) and process.returncode is None:
            await asyncio.wait(pipes, timeout=_EXIT_POLL_SECONDS)
        if not all(task.done() for task in pipes):
            _kill_group(process.pid)
    (stdout, out_cut), (stderr, err_cut) = stdout_task.result(), stderr_task.result()
    await process.wait()
    return stdout, out_cut, stderr, err_cut


async def _feed(process: asyncio.subprocess.Process, data: bytes | None) -> None:
    if data is None or process.stdin is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        process.stdin.write(data)
        await process.stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        process.stdin.close()
        await process.stdin.wait_closed()


async def _drain(stream: asyncio.StreamReader | None, cap: int, keep_tail: bool = False) -> tuple[bytes, bool]:
    """Read a pipe to its end, keeping at most `cap` bytes (the first, or with `keep_tail` the last) and discarding
    the rest, so the child never blocks on a full pipe and memory stays bounded."""
    if stream is None:
        return b"", False
    kept = bytearray()
    truncated = False
    while chunk := await stream.read(_READ_CHUNK):
        if keep_tail:
            kept += chunk
            if len(kept) > cap:
                del kept[: len(kept) - cap]
                truncated = True
            continue
        room = cap - len(kept)
        if room > 0:
            kept += chunk[:room]
        if len(chunk) > room:
            truncated = True
    return bytes(kept), truncated


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
