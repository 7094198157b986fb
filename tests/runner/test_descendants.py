"""Every descendant of a runner call dies with the call, however it left the process group, and a call ends when
its direct child does: real scripts that fork, `setsid`, double-fork and flood."""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from tests.support import dies_within, process_running
from verdict.metrics import Metrics
from verdict.runner import Command, Runner, become_subreaper, descendants, is_subreaper, marked_processes


@pytest.fixture(params=["subreaper", "orphans go to init"])
def runner(request: pytest.FixtureRequest) -> Iterator[Runner]:
    """Every test runs twice: as the server runs (the subreaper of its orphans, which lets a call whose child left
    nothing behind skip the /proc scan) and where it cannot be one (orphans go to init; only the scan finds them)."""
    assert become_subreaper(request.param == "subreaper")
    try:
        yield Runner(Metrics(CollectorRegistry()))
    finally:
        become_subreaper(False)


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


async def _pid_from(path: Path) -> int:
    for _ in range(3000):  # up to 30 s: the file is written by a Python process starting on a loaded machine
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        await asyncio.sleep(0.01)
    raise AssertionError(f"{path} was never written")


def _python(script: str) -> tuple[str, ...]:
    return (sys.executable, "-c", script)


async def test_a_setsid_grandchild_holding_stdout_neither_delays_the_answer_nor_survives(
    runner: Runner, tmp_path: Path
) -> None:
    """What a Node `detached: true` child does: a new session, stdout inherited. The answer printed by the child is
    kept, the call does not wait for the time limit, and the grandchild is dead afterwards."""
    pidfile = tmp_path / "grandchild.pid"
    script = (
        "import subprocess,sys;"
        "p=subprocess.Popen([sys.executable,'-c','import time;time.sleep(600)'],start_new_session=True);"
        f"open({str(pidfile)!r},'w').write(str(p.pid));"
        "print('the answer',flush=True)"
    )
    done = await runner.run(Command(tool="judge", argv=_python(script), timeout=60))
    assert not done.timed_out
    assert done.returncode == 0
    assert done.stdout == b"the answer\n"
    assert dies_within(await _pid_from(pidfile))
    assert marked_processes(runner.marker_prefix, prefix=True) == []


async def test_a_daemonising_grandchild_with_closed_pipes_dies_with_the_call(runner: Runner, tmp_path: Path) -> None:
    """The classic daemon: fork, setsid, fork again, close every inherited descriptor. Nothing holds the pipes, the
    group kill cannot reach it, and it still dies."""
    pidfile = tmp_path / "daemon.pid"
    script = (
        "import os,time\n"
        "if os.fork()==0:\n"
        "    os.setsid()\n"
        "    if os.fork()==0:\n"
        "        null=os.open(os.devnull,os.O_RDWR)\n"
        "        [os.dup2(null,fd) for fd in (0,1,2)]\n"
        f"        open({str(pidfile)!r},'w').write(str(os.getpid()))\n"
        "        time.sleep(600)\n"
        "    os._exit(0)\n"
        "os.wait()\n"
        "for _ in range(500):\n"
        f"    if os.path.exists({str(pidfile)!r}): break\n"
        "    time.sleep(0.01)\n"
        "print('done')\n"
    )
    done = await runner.run(Command(tool="judge", argv=_python(script), timeout=60))
    assert done.returncode == 0
    assert done.stdout == b"done\n"
    assert dies_within(await _pid_from(pidfile))
    assert marked_processes(runner.marker_prefix, prefix=True) == []


async def test_a_flood_past_the_time_limit_ends_at_the_limit_and_gives_back_its_pipes_at_once(runner: Runner) -> None:
    """A child writing without end: the call ends at its time limit (not seconds later), and the pipes and the read
    buffer are released when `run` returns, before any garbage collection."""
    script = "import sys\nwhile True: sys.stdout.write('x' * 65536)"
    command = Command(tool="judge", argv=_python(script), timeout=1, max_output_bytes=8 * 1024 * 1024, keep_tail=True)
    before = _open_descriptors()
    gc.disable()
    try:
        done = await runner.run(command)
        assert _open_descriptors() == before
    finally:
        gc.enable()
    assert done.timed_out
    # A hang detector: the old runner waited 5 s more for the pipes to close (its reap's own time limit), where
    # killing and reaping the flooder takes milliseconds (well under 0.2 s on a loaded machine): 4 s is 20 times that.
    assert done.duration < command.timeout + 4
    assert marked_processes(runner.marker_prefix, prefix=True) == []


async def test_a_setsid_flood_after_the_answer_is_cut_off(runner: Runner) -> None:
    """The child answers and exits; its detached grandchild keeps writing to the inherited stdout. The answer is
    what the child printed, and the flooder is killed instead of read to the time limit."""
    script = (
        "import subprocess,sys;"
        "subprocess.Popen([sys.executable,'-c','import sys\\nwhile True: sys.stdout.write(\"y\"*65536)'],"
        "start_new_session=True);"
        "print('the answer',flush=True)"
    )
    done = await runner.run(Command(tool="judge", argv=_python(script), timeout=60, max_output_bytes=1024))
    assert not done.timed_out
    assert done.stdout.startswith(b"the answer\n")
    assert marked_processes(runner.marker_prefix, prefix=True) == []


async def test_shutdown_kills_every_descendant_of_every_call(runner: Runner, tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    script = (
        "import subprocess,sys,time;"
        "p=subprocess.Popen([sys.executable,'-c','import time;time.sleep(600)'],start_new_session=True,"
        "stdout=subprocess.DEVNULL);"
        f"open({str(pidfile)!r},'w').write(str(p.pid));time.sleep(600)"
    )
    call = asyncio.create_task(runner.run(Command(tool="judge", argv=_python(script), timeout=600)))
    grandchild = await _pid_from(pidfile)
    runner.shutdown()
    done = await call
    assert done.returncode is not None
    assert done.returncode < 0
    assert dies_within(grandchild)
    assert marked_processes(runner.marker_prefix, prefix=True) == []


async def test_a_call_that_leaves_nothing_behind_skips_the_process_table_scan(
    runner: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scan reads the environment of every process on the machine, which costs more than a `bash -n`. As the
    subreaper, a call whose child exited with no adopted orphan left has nothing to find, and does not scan; without
    the subreaper flag every call must."""
    scans: list[str] = []
    real = descendants.marked_processes

    def counted(marker: str, *, prefix: bool = False) -> list[int]:
        scans.append(marker)
        return real(marker, prefix=prefix)

    monkeypatch.setattr(descendants, "marked_processes", counted)
    done = await runner.run(Command(tool="bash", argv=("bash", "-n"), stdin=b"echo hi\n", timeout=30))
    assert done.returncode == 0
    assert bool(scans) == (not is_subreaper())


async def test_concurrent_calls_each_get_their_own_exit_status(runner: Runner) -> None:
    """While one call ends and collects adopted zombies, others are starting children that are not registered yet:
    collecting one of those would steal its exit status (asyncio then reports 255) and, if it waited for it, stall
    the event loop. Every call gets the status its child exited with."""
    command = Command(tool="bash", argv=("bash", "-c", "exit 3"), timeout=30)
    done = await asyncio.gather(*(runner.run(command) for _ in range(40)))
    assert [call.returncode for call in done] == [3] * 40


@pytest.mark.parametrize("starter", ["main thread", "another thread"])
def test_reap_adopted_collects_dead_orphans_only(tmp_path: Path, starter: str) -> None:
    """An orphan adopted by the subreaper is collected once it is dead, without waiting; a live one, and a spared
    pid, are left alone. Its parent may have been started by any thread (the runner starts children on its starter
    threads): the kernel hands the orphan to the main thread, whose children are what is read."""
    assert become_subreaper(True)
    try:
        pidfile = tmp_path / "orphan.pid"
        # The middle process starts a session-leader grandchild and exits, so the grandchild is adopted here.
        script = (
            "import subprocess,sys;"
            "p=subprocess.Popen([sys.executable,'-c','import time;time.sleep(600)'],start_new_session=True);"
            f"open({str(pidfile)!r},'w').write(str(p.pid))"
        )
        if starter == "main thread":
            subprocess.run(_python(script), check=True)
        else:
            with concurrent.futures.ThreadPoolExecutor(1) as thread:
                thread.submit(subprocess.run, _python(script), check=True).result()
        orphan = int(pidfile.read_text())
        descendants.reap_adopted()  # alive: left alone (and nothing waits for it)
        assert process_running(orphan)
        os.kill(orphan, signal.SIGKILL)
        assert dies_within(orphan)  # a zombie now, adopted by this process
        descendants.reap_adopted(spared={orphan})
        assert Path(f"/proc/{orphan}").exists()
        assert descendants.reap_adopted() >= 1
        assert not Path(f"/proc/{orphan}").exists()
    finally:
        become_subreaper(False)
