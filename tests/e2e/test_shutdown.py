"""Shutdown of a real `verdict serve` process with a child still running: the child dies when the grace period ends,
a second signal ends the grace period at once, and the exit status is 0 either way. An address that cannot be bound
stops startup with exit status 2 and an error naming the key."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from tests.judges.support import FakeJudges, processes_with_home_under
from tests.support import ServerProcess, start_server_process
from verdict.v1 import verdict_pb2, verdict_pb2_grpc


@dataclass
class HangingJudge:
    """A server process whose judge CLI (the fake claude) hangs, ignores SIGTERM and leaves an orphan worker."""

    server: ServerProcess
    judges: FakeJudges
    scratch: Path

    def children(self) -> list[int]:
        """Judge processes still alive (the CLI and its orphan): they carry a HOME under this test's scratch."""
        return processes_with_home_under(self.scratch)

    def start_judge_call(self) -> grpc.Future:
        channel = grpc.insecure_channel(self.server.target)
        stub = verdict_pb2_grpc.VerdictServiceStub(channel)
        config = verdict_pb2.EvaluatorConfig(llm_structured=verdict_pb2.LlmStructuredConfig(prompt="Done?"))
        call = stub.Evaluate.future(verdict_pb2.EvaluateRequest(config=config, output="ok"), timeout=120)
        deadline = time.monotonic() + 20
        while not (self.judges.calls() and self.judges.orphans()):
            assert time.monotonic() < deadline, "the judge CLI never started"
            time.sleep(0.02)
        assert self.children(), "the judge processes must be running before the signal"
        return call

    def exit_status(self, within: float) -> int:
        try:
            return self.server.process.wait(timeout=within)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the server was still running {within}s later") from None


def _hanging_judge(tmp_path: Path, *flags: str) -> Iterator[HangingJudge]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    judges = FakeJudges(bin_dir)
    judges.install("claude")
    judges.scenario({"hang": True, "orphan": True})
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "TMPDIR": str(scratch)}
    server = start_server_process("--judge-host", "claude-code", *flags, env=env)
    try:
        yield HangingJudge(server, judges, scratch)
    finally:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()
        for pid in [*processes_with_home_under(scratch), *judges.orphans()]:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def short_grace(tmp_path: Path) -> Iterator[HangingJudge]:
    yield from _hanging_judge(tmp_path, "--grace-period-seconds", "1")


@pytest.fixture
def long_grace(tmp_path: Path) -> Iterator[HangingJudge]:
    yield from _hanging_judge(tmp_path, "--grace-period-seconds", "120")


def _all_dead(pids: list[int], within: float = 5) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        alive = [pid for pid in pids if Path(f"/proc/{pid}").exists() and "State:\tZ" not in _status(pid)]
        if not alive:
            return True
        time.sleep(0.05)
    return False


def _status(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return "State:\tZ"


def test_children_left_when_the_grace_period_ends_are_killed_and_the_exit_is_zero(short_grace: HangingJudge) -> None:
    call = short_grace.start_judge_call()
    children = [*short_grace.children(), *short_grace.judges.orphans()]
    short_grace.server.process.send_signal(signal.SIGTERM)
    assert short_grace.exit_status(within=15) == 0
    with pytest.raises(grpc.RpcError) as caught:
        call.result(timeout=10)
    assert caught.value.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)
    assert _all_dead(children), "a judge process outlived the server"


def test_a_second_signal_ends_the_grace_period_at_once(long_grace: HangingJudge) -> None:
    call = long_grace.start_judge_call()
    children = [*long_grace.children(), *long_grace.judges.orphans()]
    long_grace.server.process.send_signal(signal.SIGTERM)
    time.sleep(1)
    assert long_grace.server.process.poll() is None, "draining: the 120 s grace period has only just begun"
    long_grace.server.process.send_signal(signal.SIGINT)
    assert long_grace.exit_status(within=15) == 0
    with pytest.raises(grpc.RpcError):
        call.result(timeout=10)
    assert _all_dead(children), "a judge process outlived the server"


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.parametrize("flag", ["--grpc-address", "--metrics-address"])
def test_an_address_in_use_exits_two_naming_the_key(flag: str, workers: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        other = "--metrics-address" if flag == "--grpc-address" else "--grpc-address"
        done = subprocess.run(
            [sys.executable, "-m", "verdict", "serve", "--workers", workers, other, "127.0.0.1:0", flag, address],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 2, done.stderr
    assert flag.lstrip("-").replace("-", "_") in done.stderr
    assert address in done.stderr
    assert "Traceback" not in done.stderr
