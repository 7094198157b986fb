"""Fixtures of this folder's tests; the helpers they use live in support.py."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from tests.evaluators.test_diffstat import git
from tests.judges.support import FakeJudges, answer_stdout
from tests.reliability.support import SENT, YES, FuzzServer, marked, settled_descriptors, warm_up
from tests.support import (
    start_server_process,
    stop_server_process,
)
from verdict.v1 import verdict_pb2_grpc


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FuzzServer]:
    base = tmp_path_factory.mktemp("fuzz")
    bin_dir = base / "bin"
    bin_dir.mkdir()
    judges = FakeJudges(bin_dir)
    judges.install("claude")
    judges.scenario({"stdout": answer_stdout("claude-code", YES)})
    workspace = base / "workspace"
    (workspace / "repo").mkdir(parents=True)
    (workspace / "repo" / "a.txt").write_text("a\n")
    git(workspace / "repo", "init", "-q")
    git(workspace / "repo", "add", "-A")
    git(workspace / "repo", "commit", "-qm", "init")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(base), "TMPDIR": str(base)}
    server = start_server_process(
        "--judge-host",
        "claude-code",
        "--judge-timeout-seconds",
        "3",
        "--regex-timeout-seconds",
        "0.2",
        "--workspace-root",
        str(workspace),
        # Every call must reach the fake judge: a replayed ruling would hide the fault a scenario injects.
        "--judge-cache",
        "off",
        "--http-address",
        "127.0.0.1:0",
        env=env,
    )
    channel = grpc.insecure_channel(server.target)
    running = FuzzServer(server, channel, verdict_pb2_grpc.VerdictServiceStub(channel), judges, workspace)
    warm_up(running)
    try:
        yield running
    finally:
        channel.close()
        stop_server_process(server)
        assert server.process.returncode == 0
        assert marked(f"{server.process.pid}.") == [], "a call's process outlived the server's SIGTERM"


@pytest.fixture
def fuzz(fuzz_server: FuzzServer) -> Iterator[FuzzServer]:
    """The module's server, warmed up; the test ends with `check` (no fault, no leftover, no descriptor growth)."""
    fuzz_server.judges.scenario({"stdout": answer_stdout("claude-code", YES)})
    baseline = settled_descriptors(fuzz_server.pid)
    yield fuzz_server
    fuzz_server.check(baseline)


def pytest_sessionfinish(session: pytest.Session) -> None:
    report = os.environ.get("VERDICT_FUZZ_REPORT")
    if report and SENT:
        Path(report).write_text(json.dumps(dict(sorted(SENT.items())), indent=1) + "\n")
