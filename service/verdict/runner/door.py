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

The runner is the one entry (`Runner.run`); its parts live beside it in the `verdict.runner` package by job:
`command.py` (what a child is and what it did), `spawn.py` (starting one child off the event loop's thread),
`pipes.py` (feeding and draining one child's pipes), `descendants.py`
(markers, kills and reaping of escaped descendants) and `slots.py` (the pools). The package's `__init__` is the one
import for callers.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import os
import time
from collections.abc import Callable, Mapping
from typing import ParamSpec, TypeVar

from verdict.config.keys import Config
from verdict.errors import resource_exhausted
from verdict.handoff import HandoffPool
from verdict.metrics import Metrics
from verdict.runner.command import Command, CommandNotFound, Completed, lower_priority
from verdict.runner.descendants import (
    MARKER_ENV,
    is_subreaper,
    kill_escaped,
    kill_group,
    kill_marked,
    reap_adopted,
)
from verdict.runner.pipes import Sink, close_pipes, close_transport, communicate
from verdict.runner.slots import SlotLimit, pool_sizes
from verdict.runner.spawn import start_child

__all__ = ["OFF_LOOP_THREADS", "Runner", "start_worker"]


_P = ParamSpec("_P")
_T = TypeVar("_T")

OFF_LOOP_THREADS = 2
"""Threads for CPU-bound Python work moved off the event loop (`Runner.off_loop`). Few on purpose: each one competes
with the event loop for the GIL, and the interpreter hands it over every 5 ms, so with two the loop waits ~10 ms at
worst for its turn; more threads would make every health check wait longer, not the work go faster."""

STARTER_THREADS = 4
"""Threads that start children (`spawn.start_child`), apart from `OFF_LOOP_THREADS` so a start never queues behind
CPU-bound work. A start holds its thread only until the child has exec'd, without the GIL; four cover the shell and
git pools' concurrent starts on a busy machine."""


class Runner:
    """Runs `Command`s and holds every concurrency pool. One per server; `shutdown()` kills whatever is still
    running. `limits` are pools made up front (`for_config` makes all of them); a pool asked for later by name is
    made then, from the caller's config, and shared from then on."""

    def __init__(self, metrics: Metrics, limits: Mapping[str, SlotLimit] | None = None) -> None:
        self.metrics = metrics
        self.limits: dict[str, SlotLimit] = dict(limits or {})
        self._live: set[int] = set()
        self._starting = 0
        """Children being started: forked, not yet in `_live`. Adopted zombies are reaped only when none is, since
        such a child could be taken for an adopted orphan (see `reap_adopted`)."""
        self._prefix = f"{os.getpid()}.{id(self):x}."
        self._calls = itertools.count(1)
        self._threads: HandoffPool | None = None
        self._starters: HandoffPool | None = None

    async def off_loop(self, func: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """Run CPU-bound Python work (a big Struct conversion, a YAML parse, a mid-sized block past a call's inline
        budget) in the runner's small thread pool, so the event loop keeps answering other calls and health checks
        while it runs. The GIL is still shared; what changes is that the interpreter switches to the loop every few
        milliseconds instead of after the whole job."""
        if self._threads is None:
            self._threads = HandoffPool(OFF_LOOP_THREADS, thread_name_prefix="verdict-cpu")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._threads, functools.partial(func, *args, **kwargs))

    def _starter_pool(self) -> HandoffPool:
        if self._starters is None:
            self._starters = HandoffPool(STARTER_THREADS, thread_name_prefix="verdict-start")
        return self._starters

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
        self._starting += 1
        try:
            process, exited = await start_child(
                command.argv,
                self._starter_pool(),
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
        finally:
            self._starting -= 1
        pgid = process.pid
        # before any input is written: a child that reads stdin (bash -n) does its work at the lower priority
        lower_priority(command.niceness, process.pid)
        self._live.add(pgid)
        running = self.metrics.subprocesses_running.labels(tool=tool)
        running.inc()
        outcome = "cancelled"
        stdout, stderr = (Sink(command.max_output_bytes, command.keep_tail) for _ in range(2))
        try:
            escaped = functools.partial(kill_escaped, marker, child_exited=True, spared=self._live)
            timed_out = await communicate(process, exited, command, stdout, stderr, escaped)
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
            kill_group(pgid)
            kill_escaped(marker, child_exited=process.returncode is not None, spared=self._live)
            stdout.release()
            stderr.release()
            close_pipes(process)
            if process.returncode is None:
                await _reap(process)
            close_transport(process)
            if is_subreaper() and not self._starting:
                reap_adopted(self._live)
            self._live.discard(pgid)
            running.dec()
            self.metrics.subprocess_runs.labels(tool=tool, outcome=outcome).inc()
            self.metrics.subprocess_duration.labels(tool=tool).observe(time.monotonic() - started)

    def shutdown(self) -> None:
        """Kill every process group still running and every descendant of any call, wherever it went (the
        server's last act before exit), and stop the thread pool."""
        for pgid in list(self._live):
            kill_group(pgid)
        kill_marked(self._prefix, prefix=True)
        for pool in (self._threads, self._starters):
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
        self._threads = self._starters = None


async def _reap(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    with contextlib.suppress(asyncio.CancelledError, TimeoutError):
        await asyncio.wait_for(asyncio.shield(process.wait()), timeout=5)


async def start_worker(argv: tuple[str, ...], env: Mapping[str, str]) -> asyncio.subprocess.Process:
    """Start one server worker of `verdict.server.workers` (the other kind of child, next to bounded tool runs): a
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
