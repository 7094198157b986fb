"""Fixtures of this folder's tests; the helpers they use live in support.py."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from prometheus_client import CollectorRegistry

from tests.judges.support import ChatServer, FakeJudges, ServiceFactory, processes_with_home_under
from verdict.config.keys import Config
from verdict.judges import HOSTS, HostRegistry, JudgeService
from verdict.metrics import Metrics
from verdict.runner import Runner
from verdict.server.assembly import build_server
from verdict.v1 import verdict_pb2_grpc


@pytest.fixture
def fake_judges(tmp_path: Path) -> FakeJudges:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    judges = FakeJudges(bin_dir)
    judges.scenario({"stdout": "", "rc": 0})
    return judges


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """Where this test's judge calls get their private HOME: the marker the leftover check looks for."""
    path = tmp_path / "scratch"
    path.mkdir()
    return path


@pytest.fixture(autouse=True)
def no_leftover_processes(scratch: Path) -> Iterator[None]:
    """After every test, no process started for it may still run (killed ones get a moment to disappear)."""
    yield
    deadline = time.monotonic() + 30  # ends as soon as none is left; a killed process goes in milliseconds
    survivors = processes_with_home_under(scratch)
    while survivors and time.monotonic() < deadline:
        time.sleep(0.02)
        survivors = processes_with_home_under(scratch)
    for pid in survivors:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    assert survivors == [], f"judge processes outlived the test: {survivors}"


@pytest.fixture
def metrics() -> Metrics:
    return Metrics(CollectorRegistry(), model_labels=("claude-sonnet-4-5",))


@pytest.fixture
async def runner(metrics: Metrics) -> AsyncIterator[Runner]:
    runner = Runner(metrics)
    yield runner
    live = runner.live_process_groups
    runner.shutdown()
    assert live == frozenset(), f"process groups still running after the test: {sorted(live)}"


@pytest.fixture
def judge_service(fake_judges: FakeJudges, runner: Runner, metrics: Metrics, scratch: Path) -> ServiceFactory:
    """`judge_service(host="claude-code", **config)`: a JudgeService whose host is the fake judge; `hosts=` injects
    a registry of host records (a changed record, a toy host) instead of the known CLIs."""

    def build(
        host: str = "claude-code", env: dict[str, str] | None = None, hosts: HostRegistry = HOSTS, **config: Any
    ) -> JudgeService:
        if host in hosts.by_name:
            fake_judges.install(hosts.by_name[host].binary)
        return JudgeService(
            Config(judge_host=host, **config),
            runner,
            metrics,
            {"PATH": fake_judges.path, **(env or {})},
            scratch_root=scratch,
            hosts=hosts,
        )

    return build


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    server = ChatServer()
    yield server
    server.close()


@pytest.fixture
def homes_under_scratch(monkeypatch: pytest.MonkeyPatch, scratch: Path) -> None:
    """The server makes judge HOMEs in the temp dir; put them under this test's scratch so leftovers are found."""
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))


@pytest.fixture
def serve(fake_judges: FakeJudges, homes_under_scratch: None) -> Callable[..., Any]:
    """`async with serve(host="claude-code", registry=None, **config) as stub:` a started server whose judge is the
    fake CLI; on exit it asserts no judge process group is left."""

    @contextlib.asynccontextmanager
    async def serving(
        host: str = "claude-code", registry: CollectorRegistry | None = None, **overrides: Any
    ) -> AsyncIterator[Any]:
        if host in HOSTS.by_name:
            fake_judges.install(HOSTS.by_name[host].binary)
        values: dict[str, Any] = {
            "grpc_address": "127.0.0.1:0",
            "metrics_address": "",
            "judge_host": host,
            **overrides,
        }
        app, port = await build_server(
            Config(**values),
            registry=CollectorRegistry() if registry is None else registry,
            env={"PATH": fake_judges.path},
        )
        await app.start()
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        try:
            yield verdict_pb2_grpc.VerdictServiceStub(channel)
            for _ in range(500):
                if not app.runner.live_process_groups:
                    break
                await asyncio.sleep(0.01)
            assert app.runner.live_process_groups == frozenset()
        finally:
            await channel.close()
            await app.stop(grace=1)

    return serving
