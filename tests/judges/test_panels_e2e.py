"""Panels end to end: real servers, real judge processes (the stand-in CLI as claude), the real Redis cache shared by
two replicas; the little-loops `judges:`/`quorum:` block, the typed proto members and a named server panel."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import grpc.aio
import pytest
from prometheus_client import CollectorRegistry

from tests.judges.standins import calls_of, case_output, install_cli
from tests.judges.support import details
from tests.judges.test_redis_rulings import RedisServer
from verdict.config.keys import Config
from verdict.server.assembly import build_server
from verdict.v1 import verdict_pb2, verdict_pb2_grpc

PANEL_BLOCK = """
type: llm_structured
prompt: Did the run succeed?
judges:
  - {host: claude, model: a}
  - {host: claude, model: b}
  - {host: claude, model: c}
quorum: majority
"""


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    directory = tmp_path / "redis"
    directory.mkdir()
    server = RedisServer(directory)
    yield server
    server.stop()


@pytest.fixture
def servers(tmp_path: Path, homes_under_scratch: None) -> Callable[..., Any]:
    """`async with servers(n, profiles, **config) as [(stub, registry), ...]`: n replicas whose judge is the stand-in
    CLI with these profiles."""

    @contextlib.asynccontextmanager
    async def start(
        count: int, profiles: dict[str, Any], **overrides: Any
    ) -> AsyncIterator[list[tuple[verdict_pb2_grpc.VerdictServiceStub, CollectorRegistry]]]:
        path = install_cli(tmp_path / "bin", profiles)
        values = {"grpc_address": "127.0.0.1:0", "metrics_address": "", "judge_host": "claude-code", **overrides}
        started = []
        try:
            for _ in range(count):
                registry = CollectorRegistry()
                app, port = await build_server(Config(**values), registry=registry, env={"PATH": path})
                await app.start()
                channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
                started.append((app, channel, (verdict_pb2_grpc.VerdictServiceStub(channel), registry)))
            yield [replica for _, _, replica in started]
        finally:
            for app, channel, _ in started:
                await channel.close()
                await app.stop(grace=1)

    return start


def block_request(block: str, output: str = case_output(5, "yes")) -> verdict_pb2.EvaluateRequest:
    return verdict_pb2.EvaluateRequest(config=verdict_pb2.EvaluatorConfig(yaml=block), output=output)


async def test_a_panel_of_real_judge_processes_is_asked_at_once_and_a_crashing_member_abstains(
    servers: Callable[..., Any], tmp_path: Path
) -> None:
    profiles = {"a": {"delay": 1.0}, "b": {"delay": 1.0}, "c": {"delay": 1.0, "mode": "crash"}}
    async with servers(1, profiles) as [(stub, registry)]:
        started = time.monotonic()
        response = await stub.Evaluate(block_request(PANEL_BLOCK), timeout=60)
        wall_ms = (time.monotonic() - started) * 1000
    found = details(response)
    assert response.verdict == "yes", found
    panel = found["panel"]
    assert panel["abstained"] == ["claude-code/c"]
    assert panel["members"][2]["malfunction"] == "api_error"
    assert [member.get("vote") for member in panel["members"]] == ["yes", "yes", None]
    assert all(member["evidence"] == "RESULT: yes" for member in panel["members"][:2])
    calls = calls_of(tmp_path / "bin")
    assert sorted(call["model"] for call in calls) == ["a", "b"]  # c died before it could log
    assert max(call["started"] for call in calls) < min(call["ended"] for call in calls)  # they overlapped
    member_ms = [int(member["latency_ms"]) for member in panel["members"]]
    print(f"panel wall {wall_ms:.0f} ms, slowest member {max(member_ms)} ms: ratio {wall_ms / max(member_ms):.3f}")
    assert panel["latency_ms"] == max(member_ms)
    assert wall_ms < 0.67 * sum(member_ms)  # asked one after another, the panel would take the sum
    assert panel["cost_usd"] == pytest.approx(0.004)
    assert (
        registry.get_sample_value(
            "verdict_judge_abstentions_total", {"judge": "claude-code/other", "reason": "api_error"}
        )
        == 1
    )  # model names outside judge_model_labels are folded: the label set stays bounded


async def test_the_call_deadline_stops_a_hanging_member_and_the_others_decide(servers: Callable[..., Any]) -> None:
    """judge_timeout_seconds is 300 s: only the call's deadline (5 s) can stop the hanging judge process, which the
    runner kills (the autouse leftover check fails the test if it survives)."""
    async with servers(1, {"a": {}, "b": {}, "c": {"mode": "hang"}}) as [(stub, _)]:
        response = await stub.Evaluate(block_request(PANEL_BLOCK), timeout=5)
    assert response.verdict == "yes"
    hung = details(response)["panel"]["members"][2]
    assert hung["malfunction"] == "timeout"
    assert hung["latency_ms"] < 5000


async def test_below_quorum_through_the_server_is_an_error_verdict_not_a_status(servers: Callable[..., Any]) -> None:
    profiles = {"a": {}, "b": {"mode": "garbage"}, "c": {"mode": "crash"}}
    async with servers(1, profiles) as [(stub, _)]:
        response = await stub.Evaluate(block_request(PANEL_BLOCK), timeout=60)
    assert response.verdict == "error"
    assert details(response)["below_quorum"] is True
    assert details(response)["panel"]["abstained"] == ["claude-code/b", "claude-code/c"]


async def test_two_replicas_sharing_redis_replay_every_members_ruling(
    servers: Callable[..., Any], redis: RedisServer, tmp_path: Path
) -> None:
    async with servers(2, {}, judge_cache="redis", judge_cache_url=redis.url) as [(a, _), (b, _)]:
        first = await a.Evaluate(block_request(PANEL_BLOCK), timeout=60)
        retried = await b.Evaluate(block_request(PANEL_BLOCK), timeout=60)
        one_member = await b.Evaluate(
            block_request("type: llm_structured\nprompt: Did the run succeed?\nmodel: b\n"), timeout=60
        )
    assert len(calls_of(tmp_path / "bin")) == 3
    assert first.verdict == retried.verdict == "yes"
    assert details(first)["cached"] is False
    assert details(retried)["cached"] is True
    assert [member["cached"] for member in details(retried)["panel"]["members"]] == [True, True, True]
    assert details(one_member)["cached"] is True  # the single judge's question is the panel member's


async def test_typed_members_and_a_named_server_panel(servers: Callable[..., Any], tmp_path: Path) -> None:
    panels = tmp_path / "panels.yaml"
    panels.write_text("panels:\n  panel-a:\n    judges: [{host: claude, model: a}, {host: claude, model: b}]\n")
    async with servers(1, {"b": {"rate": 1.0}}, judge_panels_file=str(panels)) as [(stub, _)]:
        typed = verdict_pb2.LlmStructuredConfig(
            prompt="Did the run succeed?",
            judges=[verdict_pb2.JudgeMember(host="claude", model=m) for m in "ab"],
            quorum="1",
            tie="first",
        )
        request = verdict_pb2.EvaluateRequest(
            config=verdict_pb2.EvaluatorConfig(llm_structured=typed), output=case_output(5, "yes")
        )
        response = await stub.Evaluate(request, timeout=60)
        named = await stub.Evaluate(block_request("type: llm_structured\njudge: panel-a\ntie: cautious\n"), timeout=60)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.Evaluate(block_request("type: llm_structured\njudge: panel-z\n"), timeout=60)
    assert response.verdict == "yes"  # a says yes, b no: two verdicts reach k=1, the first listed breaks the tie
    assert details(response)["panel"]["decided_by"] == "tie_first"
    assert named.verdict == "no"
    assert details(named)["panel"]["name"] == "panel-a"
    assert details(named)["panel"]["decided_by"] == "tie_cautious"
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "panel-z" in (refused.value.details() or "")


async def test_scheduled_calibration_runs_beside_requests_without_taking_their_judge_slot(
    servers: Callable[..., Any], tmp_path: Path
) -> None:
    """One judge slot and no queue for requests; calibration's judge hangs in its own slot, and a request is still
    judged (were calibration on the request pool, the request would be refused RESOURCE_EXHAUSTED)."""
    cases = tmp_path / "cases.yaml"
    cases.write_text("cases:\n  - {id: one, prompt: 'Did it work?', output: 'RESULT: yes', expected: 'yes'}\n")
    config = {
        "max_concurrent_judges": 1,
        "judge_queue_size": 0,
        "calibration_path": str(cases),
        "calibration_cases_per_hour": 3600,
        "calibration_judges": ("claude/slow",),
    }
    async with servers(1, {"slow": {"mode": "hang"}}, **config) as [(stub, registry)]:
        for _ in range(3000):
            if (registry.get_sample_value("verdict_subprocesses_running", {"tool": "judge"}) or 0) >= 1:
                break
            await asyncio.sleep(0.01)
        assert registry.get_sample_value("verdict_subprocesses_running", {"tool": "judge"}) == 1
        response = await stub.Evaluate(block_request("type: llm_structured\nmodel: fast\n"), timeout=60)
        assert response.verdict == "yes"
        assert registry.get_sample_value("verdict_subprocesses_running", {"tool": "judge"}) == 1  # still calibrating
        assert registry.get_sample_value("verdict_judge_calibration_runs_total", {"result": "done"}) is None
