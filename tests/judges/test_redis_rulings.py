"""The shared ruling cache against a real `redis-server` (started here on a free port; a missing one fails the test),
with two real server replicas and the fake judge CLI counting its invocations."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from prometheus_client import CollectorRegistry

from tests.judges.support import RPC_YES, FakeJudges, answer_stdout, details, llm_request
from verdict.config.keys import Config
from verdict.judges.ruling_stores import RedisStore, StoredRuling
from verdict.metrics import Metrics
from verdict.server.assembly import build_server
from verdict.v1 import verdict_pb2_grpc

YES = {"stdout": answer_stdout("claude-code", RPC_YES)}
NO = {"stdout": answer_stdout("claude-code", {**RPC_YES, "verdict": "no", "reason": "changed its mind"})}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class RedisServer:
    """A throwaway redis-server: no persistence, loopback only, its own port and directory."""

    def __init__(self, directory: Path) -> None:
        binary = shutil.which("redis-server")
        assert binary is not None, (
            "redis-server is not installed (scripts/apt-packages.txt lists it; `make test` installs it)"
        )
        self.port = _free_port()
        argv = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(
            [*argv, "--dir", str(directory)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as conn:
                conn.sendall(b"PING\r\n")
                if conn.recv(16).startswith(b"+PONG"):
                    return
            time.sleep(0.05)
        self.stop()
        raise AssertionError("redis-server did not start")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    directory = tmp_path / "redis"
    directory.mkdir()
    server = RedisServer(directory)
    yield server
    server.stop()


class BlackHole:
    """A TCP listener that accepts connections and never answers: a Redis behind a dead network path."""

    def __init__(self) -> None:
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.accepted: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                connection, _ = self.listener.accept()
                self.accepted.append(connection)

    def close(self) -> None:
        self.listener.close()
        for connection in self.accepted:
            connection.close()


Replica = tuple[verdict_pb2_grpc.VerdictServiceStub, CollectorRegistry]


@pytest.fixture
def replicas(fake_judges: FakeJudges, homes_under_scratch: None) -> Callable[..., Any]:
    """`async with replicas(n, **config) as [(stub, registry), ...]`: n real servers sharing one configuration."""

    @contextlib.asynccontextmanager
    async def start(count: int, **overrides: Any) -> AsyncIterator[list[Replica]]:
        fake_judges.install("claude")
        values: dict[str, Any] = {
            "grpc_address": "127.0.0.1:0",
            "metrics_address": "",
            "judge_host": "claude-code",
            **overrides,
        }
        started: list[tuple[Any, grpc.aio.Channel, Replica]] = []
        try:
            for _ in range(count):
                registry = CollectorRegistry()
                app, port = await build_server(Config(**values), registry=registry, env={"PATH": fake_judges.path})
                await app.start()
                channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
                started.append((app, channel, (verdict_pb2_grpc.VerdictServiceStub(channel), registry)))
            yield [replica for _, _, replica in started]
        finally:
            for app, channel, _ in started:
                await channel.close()
                await app.stop(grace=1)

    return start


def _sample(registry: CollectorRegistry, name: str, **labels: str) -> float:
    value = registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


async def test_two_replicas_sharing_redis_give_the_same_ruling_from_one_judge_process(
    redis_server: RedisServer, replicas: Callable[..., Any], fake_judges: FakeJudges
) -> None:
    fake_judges.scenario(YES, NO)  # a second judge process would rule differently
    async with replicas(2, judge_cache="redis", judge_cache_url=redis_server.url) as [(a, a_registry), (b, _)]:
        first = await a.Evaluate(llm_request(), timeout=30)
        retried = await b.Evaluate(llm_request(), timeout=30)
    assert len(fake_judges.calls()) == 1
    assert (first.verdict, retried.verdict) == ("yes", "yes")
    assert (details(first)["cached"], details(retried)["cached"]) == (False, True)
    assert details(retried)["reason"] == details(first)["reason"]
    assert _sample(a_registry, "verdict_judge_cache_lookups_total", evaluator="llm_structured", result="miss") == 1


async def test_two_replicas_asked_at_once_wait_for_one_ruling(
    redis_server: RedisServer, replicas: Callable[..., Any], fake_judges: FakeJudges
) -> None:
    fake_judges.scenario({**YES, "sleep": 1.5}, NO)
    async with replicas(2, judge_cache="redis", judge_cache_url=redis_server.url) as [(a, _), (b, _)]:
        responses = await asyncio.gather(
            a.Evaluate(llm_request(), timeout=30),
            b.Evaluate(llm_request(), timeout=30),
            a.Evaluate(llm_request(), timeout=30),
            b.Evaluate(llm_request(), timeout=30),
        )
    assert [response.verdict for response in responses] == ["yes"] * 4
    assert len(fake_judges.calls()) == 1
    assert sorted(details(response)["cached"] for response in responses) == [False, True, True, True]


async def test_redis_down_judges_fresh_with_a_warning_metric_and_no_rpc_error(
    redis_server: RedisServer, replicas: Callable[..., Any], fake_judges: FakeJudges
) -> None:
    fake_judges.scenario(YES)
    async with replicas(1, judge_cache="redis", judge_cache_url=redis_server.url) as [(stub, registry)]:
        assert details(await stub.Evaluate(llm_request(), timeout=30))["cached"] is False
        assert details(await stub.Evaluate(llm_request(), timeout=30))["cached"] is True
        redis_server.stop()
        down = await stub.Evaluate(llm_request(), timeout=30)
    assert (down.verdict, details(down)["cached"]) == ("yes", False)
    assert len(fake_judges.calls()) == 2
    errors = _sample(registry, "verdict_judge_cache_errors_total", store="redis", operation="get")
    assert errors >= 1


async def test_a_black_holed_redis_costs_a_bounded_wait_then_judges_fresh(
    replicas: Callable[..., Any], fake_judges: FakeJudges
) -> None:
    fake_judges.scenario(YES)
    hole = BlackHole()
    try:
        url = f"redis://127.0.0.1:{hole.port}/0"
        async with replicas(1, judge_cache="redis", judge_cache_url=url, judge_cache_timeout_seconds=0.2) as [
            (stub, registry)
        ]:
            # the deadline is far shorter than redis-py's default 5 s socket timeout, times the retries it would make
            first = await stub.Evaluate(llm_request(), timeout=8)
            second = await stub.Evaluate(llm_request(), timeout=8)
    finally:
        hole.close()
    assert (first.verdict, second.verdict) == ("yes", "yes")
    assert len(fake_judges.calls()) == 2
    assert _sample(registry, "verdict_judge_cache_errors_total", store="redis", operation="get") >= 1


async def test_a_server_starts_while_redis_is_unreachable(
    replicas: Callable[..., Any], fake_judges: FakeJudges
) -> None:
    fake_judges.scenario(YES)
    url = f"redis://127.0.0.1:{_free_port()}/0"
    async with replicas(1, judge_cache="redis", judge_cache_url=url) as [(stub, _)]:
        response = await stub.Evaluate(llm_request(), timeout=30)
    assert response.verdict == "yes"


async def test_opting_out_with_fresh_through_the_rpc(
    redis_server: RedisServer, replicas: Callable[..., Any], fake_judges: FakeJudges
) -> None:
    fake_judges.scenario(YES, NO)
    async with replicas(2, judge_cache="redis", judge_cache_url=redis_server.url) as [(a, _), (b, _)]:
        await a.Evaluate(llm_request(), timeout=30)
        sampled = await b.Evaluate(llm_request(fresh=True), timeout=30)
        replayed = await b.Evaluate(llm_request(), timeout=30)
    assert (sampled.verdict, details(sampled)["cached"]) == ("no", False)
    assert (replayed.verdict, details(replayed)["cached"]) == ("yes", True)
    assert len(fake_judges.calls()) == 2


async def test_errors_are_not_stored_in_redis(
    redis_server: RedisServer, replicas: Callable[..., Any], fake_judges: FakeJudges
) -> None:
    fake_judges.scenario({"stdout": "", "stderr": "overloaded", "rc": 1}, YES)
    async with replicas(2, judge_cache="redis", judge_cache_url=redis_server.url) as [(a, _), (b, _)]:
        failed = await a.Evaluate(llm_request(), timeout=30)
        judged = await b.Evaluate(llm_request(), timeout=30)
    assert (failed.verdict, judged.verdict) == ("error", "yes")
    assert details(judged)["cached"] is False
    assert len(fake_judges.calls()) == 2


# --- the store itself -------------------------------------------------------------------------------------------------


def _store(redis_server: RedisServer, **bounds: Any) -> RedisStore:
    values: dict[str, Any] = {"max_entries": 100, "ttl": 3600, "timeout": 1.0, **bounds}
    return RedisStore(redis_server.url, **values)


async def test_redis_rulings_expire_after_their_ttl(redis_server: RedisServer) -> None:
    store = _store(redis_server, ttl=1)
    try:
        judged = StoredRuling("yes", {"reason": "r"}, time.time(), 0.01)
        await store.put("q", judged)
        assert await store.get("q") == judged
        await asyncio.sleep(1.2)
        assert await store.get("q") is None
    finally:
        await store.aclose()


async def test_redis_evicts_the_least_recently_used_past_the_bound(redis_server: RedisServer) -> None:
    store = _store(redis_server, max_entries=2)
    try:
        now = time.time()
        assert await store.put("a", StoredRuling("yes", {}, now)) == 0
        assert await store.put("b", StoredRuling("no", {}, now)) == 0
        await asyncio.sleep(0.01)
        assert await store.get("a") is not None  # a is now more recently used than b
        await asyncio.sleep(0.01)
        assert await store.put("c", StoredRuling("yes", {}, now)) == 1
        assert await store.get("b") is None
        assert await store.get("a") is not None
        assert await store.get("c") is not None
    finally:
        await store.aclose()


async def test_redis_claims_are_exclusive_and_released_only_by_their_owner(redis_server: RedisServer) -> None:
    store = _store(redis_server)
    try:
        token = await store.claim("q", 30)
        assert token is not None
        assert await store.claim("q", 30) is None
        await store.release("q", "someone else's token")
        assert await store.claimed("q")
        await store.release("q", token)
        assert not await store.claimed("q")
    finally:
        await store.aclose()


async def test_eviction_metric_counts_redis_evictions(
    redis_server: RedisServer, replicas: Callable[..., Any], fake_judges: FakeJudges
) -> None:
    fake_judges.scenario(YES)
    async with replicas(1, judge_cache="redis", judge_cache_url=redis_server.url, judge_cache_max_entries=1) as [
        (stub, registry)
    ]:
        await stub.Evaluate(llm_request(), timeout=30)
        await stub.Evaluate(llm_request(output="running 12 checks\nAll 42 tests passed\nagain\n"), timeout=30)
    assert _sample(registry, "verdict_judge_cache_evictions_total", store="redis") == 1


def test_metrics_registry_has_the_cache_series() -> None:
    metrics = Metrics(CollectorRegistry())
    metrics.initialize_judge_types(["contract"])
    value = metrics.registry.get_sample_value(
        "verdict_judge_cache_lookups_total", {"evaluator": "contract", "result": "hit"}
    )
    assert value == 0.0, "pre-initialised, so rate() and absence alerts work from the first scrape"
