"""Starting a child off the event loop: the start runs on the starter pool while the loop goes on, exit codes and
start errors are what asyncio's own start gives, and a start whose caller is cancelled leaves no child behind."""

from __future__ import annotations

import asyncio
import concurrent.futures
import errno
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest

from verdict.runner.spawn import OFF_LOOP_STARTS, start_child

_T = TypeVar("_T")

pytestmark = pytest.mark.skipif(not OFF_LOOP_STARTS, reason="no pidfds here: children start on the loop")

PIPES: dict[str, Any] = {
    "stdin": asyncio.subprocess.PIPE,
    "stdout": asyncio.subprocess.PIPE,
    "stderr": asyncio.subprocess.PIPE,
    "start_new_session": True,
}


class GatedPool(concurrent.futures.ThreadPoolExecutor):
    """A starter pool whose every job first waits for `gate`: a start the loop itself must open. Were the start
    made on the loop's thread, the loop could never open it."""

    def __init__(self) -> None:
        super().__init__(2)
        self.gate = threading.Event()
        self.waiting = threading.Event()
        self.threads: list[int] = []
        self.started: list[int] = []

    def submit(self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[_T]:
        def gated() -> _T:
            self.threads.append(threading.get_ident())
            self.waiting.set()
            assert self.gate.wait(60), "the gate was never opened"
            result = fn(*args, **kwargs)
            self.started.append(result.pid)  # type: ignore[attr-defined]
            return result

        return super().submit(gated)


@pytest.fixture
def pool() -> Iterator[GatedPool]:
    gated = GatedPool()
    yield gated
    gated.gate.set()
    gated.shutdown(wait=True)


async def _opened_by_the_loop(pool: GatedPool) -> None:
    assert await asyncio.to_thread(pool.waiting.wait, 60)
    pool.gate.set()


async def test_the_start_runs_on_the_pool_while_the_loop_goes_on(pool: GatedPool) -> None:
    starting = asyncio.ensure_future(start_child(("bash", "-n"), pool, **PIPES))
    await asyncio.wait_for(_opened_by_the_loop(pool), 60)
    process, exited = await asyncio.wait_for(starting, 60)
    assert pool.threads
    assert threading.get_ident() not in pool.threads
    assert process.stdin is not None
    assert process.stderr is not None
    process.stdin.write(b"if then fi\n")
    process.stdin.close()
    stderr = await process.stderr.read()
    await asyncio.wait_for(exited, 60)
    assert process.returncode == 2
    assert b"syntax error" in stderr
    await process.wait()


@pytest.mark.parametrize(
    ("script", "code"),
    [("import sys; sys.exit(0)", 0), ("import sys; sys.exit(7)", 7), ("import os; os.kill(os.getpid(), 9)", -9)],
)
async def test_exit_codes_are_what_asyncio_reports(script: str, code: int) -> None:
    with concurrent.futures.ThreadPoolExecutor(1) as starter:
        process, exited = await start_child((sys.executable, "-c", script), starter, **PIPES)
        await asyncio.wait_for(exited, 60)
        assert process.returncode == code
        assert await process.wait() == code


async def test_output_larger_than_a_pipe_is_read_whole() -> None:
    script = "import sys; sys.stdout.write('x' * 1_000_000)"
    with concurrent.futures.ThreadPoolExecutor(1) as starter:
        process, exited = await start_child((sys.executable, "-c", script), starter, **PIPES)
        assert process.stdout is not None
        out = await process.stdout.read()
        await asyncio.wait_for(exited, 60)
    assert len(out) == 1_000_000
    assert process.returncode == 0


async def test_a_missing_program_raises_what_popen_raises() -> None:
    with concurrent.futures.ThreadPoolExecutor(1) as starter:
        with pytest.raises(FileNotFoundError):
            await start_child(("/nonexistent/verdict-no-such-tool",), starter, **PIPES)
        with pytest.raises(NotADirectoryError):
            await start_child(("bash", "-n"), starter, cwd="/etc/hostname", **PIPES)


async def test_a_start_cancelled_while_on_the_pool_leaves_no_child(pool: GatedPool) -> None:
    """The caller goes while its child is being started; the child the pool then starts is killed and reaped."""
    starting = asyncio.ensure_future(start_child((sys.executable, "-c", "import time; time.sleep(600)"), pool, **PIPES))
    assert await asyncio.to_thread(pool.waiting.wait, 60)
    starting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await starting
    pool.gate.set()
    await _reaped(pool)


async def test_a_child_that_cannot_be_watched_is_killed_and_reaped(
    pool: GatedPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Out of descriptors after the child started (its pidfd cannot be opened): the start fails with the OSError,
    as a start on the loop would, and the child is not left running unwatched."""

    def no_descriptors(pid: int) -> int:
        raise OSError(errno.EMFILE, "Too many open files")

    pool.gate.set()
    monkeypatch.setattr(os, "pidfd_open", no_descriptors)
    with pytest.raises(OSError, match="Too many open files"):
        await start_child((sys.executable, "-c", "import time; time.sleep(600)"), pool, **PIPES)
    monkeypatch.undo()
    await _reaped(pool)


async def _reaped(pool: GatedPool) -> None:
    """Wait until the pool has started a child and that child is gone, reaped (a liveness bound, not a timing)."""
    for _ in range(6000):
        if pool.started and not _exists(pool.started[0]):
            return
        await asyncio.sleep(0.01)
    pytest.fail(f"the child is still there (or never started): {pool.started}")


def _exists(pid: int) -> bool:
    """Whether `pid` is still a process (a zombie counts: it was not reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return bool(handle.read())
    except OSError:
        return False


async def test_without_a_pool_the_child_starts_on_the_loop() -> None:
    process, exited = await start_child(("bash", "-n"), None, **PIPES)
    assert process.stdin is not None
    process.stdin.write(b"echo fine\n")
    process.stdin.close()
    await asyncio.wait_for(exited, 60)
    assert process.returncode == 0
    assert await process.wait() == 0
