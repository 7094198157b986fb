"""A child attended on a thread from start to reaping: the loop goes on meanwhile, exit codes, both pipes at once and
capped, start errors, cancellation before and during the run, the time limit, a descendant holding the pipes, a child
whose exit cannot be watched; and the loop's own way of running children, where pidfds are missing."""

from __future__ import annotations

import asyncio
import concurrent.futures
import errno
import os
import selectors
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest
from prometheus_client import CollectorRegistry

import verdict.runner.door as door
from tests.support import dies_within
from verdict.metrics import Metrics
from verdict.runner import Command, Runner, minimal_env
from verdict.runner.attend import ATTENDED, Attended, Ticket, attend
from verdict.runner.pipes import Sink

_T = TypeVar("_T")

pytestmark = pytest.mark.skipif(not ATTENDED, reason="no pidfds here: children run on the loop")

SLEEPER = (sys.executable, "-c", "import time; time.sleep(600)")


class Recorded(set[int]):
    """The `live` set, remembering every pid it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[int] = []

    def add(self, pid: int) -> None:
        self.seen.append(pid)
        super().add(pid)


def _attend(
    argv: tuple[str, ...],
    *,
    stdin: bytes | None = None,
    timeout: float = 60,
    cap: int = 1 << 22,
    keep_tail: bool = False,
    ticket: Ticket | None = None,
    live: set[int] | None = None,
    **options: Any,
) -> tuple[Attended, Sink, Sink]:
    stdout, stderr = Sink(cap, keep_tail), Sink(cap, keep_tail)
    attended = attend(
        argv,
        {"env": minimal_env(), **options},
        stdin=stdin,
        timeout=timeout,
        niceness=0,
        stdout=stdout,
        stderr=stderr,
        ticket=ticket or Ticket(),
        kill_descendants=lambda exited: None,
        live=live if live is not None else set(),
    )
    return attended, stdout, stderr


def _exists(pid: int) -> bool:
    """Whether `pid` is still a process (a zombie counts: it was not reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return bool(handle.read())
    except OSError:
        return False


class GatedPool(concurrent.futures.ThreadPoolExecutor):
    """An attendant pool whose every job first waits for `gate`, which only the loop opens: were the child attended
    on the loop's thread, the loop could never open it."""

    def __init__(self) -> None:
        super().__init__(2)
        self.gate = threading.Event()
        self.waiting = threading.Event()
        self.threads: list[int] = []

    def submit(self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[_T]:
        def gated() -> _T:
            self.threads.append(threading.get_ident())
            self.waiting.set()
            assert self.gate.wait(60), "the gate was never opened"
            return fn(*args, **kwargs)

        return super().submit(gated)


@pytest.fixture
def pool() -> Iterator[GatedPool]:
    gated = GatedPool()
    yield gated
    gated.gate.set()
    gated.shutdown(wait=True)


async def test_the_child_is_attended_on_a_thread_while_the_loop_goes_on(pool: GatedPool) -> None:
    runner = Runner(Metrics(CollectorRegistry()))
    runner._attendants = pool
    command = Command(tool="bash", argv=("bash", "-n"), timeout=60, env=minimal_env(), stdin=b"if then fi\n")
    running = asyncio.ensure_future(runner.run(command))
    assert await asyncio.to_thread(pool.waiting.wait, 60)
    pool.gate.set()  # the loop is free to do this only because the child is not attended on it
    completed = await asyncio.wait_for(running, 60)
    assert completed.returncode == 2
    assert b"syntax error" in completed.stderr
    assert pool.threads
    assert threading.get_ident() not in pool.threads
    assert runner.live_process_groups == frozenset()


@pytest.mark.parametrize(
    ("script", "code"),
    [("import sys; sys.exit(0)", 0), ("import sys; sys.exit(7)", 7), ("import os; os.kill(os.getpid(), 9)", -9)],
)
def test_exit_codes(script: str, code: int) -> None:
    attended, _, _ = _attend((sys.executable, "-c", script))
    assert attended == Attended(code, timed_out=False)


def test_input_and_output_larger_than_a_pipe_are_fed_and_drained_at_once() -> None:
    """1 MB in while 1 MB comes out and 1 MB goes to stderr: one pipe read after the other would deadlock."""
    data = bytes(range(256)) * 4096
    script = "import sys; d = sys.stdin.buffer.read(); sys.stdout.buffer.write(d); sys.stderr.buffer.write(d)"
    attended, stdout, stderr = _attend((sys.executable, "-c", script), stdin=data)
    assert attended.returncode == 0
    assert stdout.take() == data
    assert stderr.take() == data


@pytest.mark.parametrize("keep_tail", [False, True])
def test_output_past_the_cap_is_cut_and_the_child_runs_to_its_end(keep_tail: bool) -> None:
    script = "import sys; sys.stdout.write('a' * 500_000 + 'b' * 500_000)"
    attended, stdout, _ = _attend((sys.executable, "-c", script), cap=1000, keep_tail=keep_tail)
    assert attended.returncode == 0
    assert stdout.truncated
    assert stdout.take() == (b"b" if keep_tail else b"a") * 1000


def test_a_child_that_closes_its_stdin_early_is_not_an_error() -> None:
    attended, _, _ = _attend((sys.executable, "-c", "import os; os.close(0)"), stdin=b"x" * 2_000_000)
    assert attended.returncode == 0


def test_start_errors_are_what_popen_raises_and_leave_nothing_live() -> None:
    live: set[int] = set()
    with pytest.raises(FileNotFoundError):
        _attend(("/nonexistent/verdict-no-such-tool",), live=live)
    with pytest.raises(NotADirectoryError):
        _attend(("bash", "-n"), cwd="/etc/hostname", live=live)
    assert live == set()


def test_a_ticket_cancelled_before_the_start_kills_the_child_it_starts() -> None:
    ticket = Ticket()
    ticket.cancel()
    live = Recorded()
    attended, _, _ = _attend(SLEEPER, ticket=ticket, live=live)
    assert attended == Attended(-9, timed_out=False)
    assert live == set()
    assert not _exists(live.seen[0])


def test_a_ticket_cancelled_while_the_child_runs_kills_it_at_once() -> None:
    ticket = Ticket()
    live = Recorded()
    with concurrent.futures.ThreadPoolExecutor(1) as thread:
        attending = thread.submit(_attend, SLEEPER, ticket=ticket, live=live)
        for _ in range(6000):  # until the child has started (a liveness bound, not a timing)
            if ticket.pid is not None:
                break
            threading.Event().wait(0.01)
        assert ticket.pid is not None
        ticket.cancel()
        attended, _, _ = attending.result(timeout=60)
    assert attended == Attended(-9, timed_out=False)
    assert not _exists(live.seen[0])


def test_the_time_limit_kills_the_group_and_reaps_the_child(tmp_path: Any) -> None:
    pidfile = tmp_path / "grandchild"
    script = (
        "import subprocess, sys, time; "
        f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); "
        f"open({str(pidfile)!r}, 'w').write(str(p.pid)); time.sleep(600)"
    )
    live = Recorded()
    attended, _, _ = _attend((sys.executable, "-c", script), timeout=3, live=live)
    assert attended == Attended(None, timed_out=True)
    assert not _exists(live.seen[0])
    assert dies_within(int(pidfile.read_text()), 30)


def test_a_descendant_holding_the_pipes_does_not_hold_the_call() -> None:
    """The child exits leaving a grandchild with its stdout: the call ends at the child's exit (the grandchild is
    killed with the group), not at the time limit."""
    script = (
        "import subprocess, sys; "
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); "
        "print('done', flush=True)"
    )
    attended, stdout, _ = _attend((sys.executable, "-c", script), timeout=120)
    assert attended == Attended(0, timed_out=False)
    assert stdout.take() == b"done\n"


def test_a_child_whose_exit_cannot_be_watched_is_killed_and_reaped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Out of descriptors after the start (its pidfd cannot be opened): the OSError is raised, as a failed start's
    would be, and the child is not left running unwatched."""

    def no_descriptors(pid: int) -> int:
        raise OSError(errno.EMFILE, "Too many open files")

    live = Recorded()
    monkeypatch.setattr(os, "pidfd_open", no_descriptors)
    with pytest.raises(OSError, match="Too many open files"):
        _attend(SLEEPER, live=live)
    monkeypatch.undo()
    assert live == set()
    assert not _exists(live.seen[0])


async def test_without_pidfds_the_loop_runs_the_child(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(door, "ATTENDED", False)
    runner = Runner(Metrics(CollectorRegistry()))
    bad = Command(tool="bash", argv=("bash", "-n"), timeout=60, env=minimal_env(), stdin=b"if then fi\n")
    completed = await runner.run(bad)
    assert completed.returncode == 2
    assert b"syntax error" in completed.stderr
    slow = Command(tool="sleep", argv=SLEEPER, timeout=1, env=minimal_env())
    assert (await runner.run(slow)).timed_out
    assert runner._attendants is None
    assert runner.live_process_groups == frozenset()


async def test_a_cancelled_call_returns_once_its_child_is_killed_and_reaped() -> None:
    runner = Runner(Metrics(CollectorRegistry()))
    running = asyncio.ensure_future(runner.run(Command(tool="sleep", argv=SLEEPER, timeout=600, env=minimal_env())))
    for _ in range(6000):  # until the child has started (a liveness bound, not a timing)
        if runner.live_process_groups:
            break
        await asyncio.sleep(0.01)
    (pid,) = runner.live_process_groups
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert runner.live_process_groups == frozenset()
    assert not _exists(pid)


def test_an_error_while_attending_reaches_the_caller_and_leaves_no_child(monkeypatch: pytest.MonkeyPatch) -> None:
    """Out of descriptors for the selector (or any error while the pipes are pumped): the error reaches the caller,
    and the child is killed and gone, not left running (a ten-minute sleeper) or a zombie of the server."""

    def no_selector() -> selectors.BaseSelector:
        raise OSError(errno.EMFILE, "Too many open files")

    live = Recorded()
    monkeypatch.setattr(selectors, "DefaultSelector", no_selector)  # the module attend.py uses
    with pytest.raises(OSError, match="Too many open files"):
        _attend(SLEEPER, live=live)
    assert live == set()
    assert not _exists(live.seen[0])
