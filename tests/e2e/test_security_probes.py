"""The door probed as a hostile caller would: paid judges behind a second door, reflection without credentials, a
token whose principal the policy never names, and a revoked token. Real server, real channels."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest

from tests.certs import SecretVolume
from tests.e2e.test_security import POLICY, READER_TOKEN, TOKEN, VERIFY, bearer, error_info, started
from tests.judges.support import ChatServer, chat_body
from tests.support import list_services_once
from verdict.v1 import verdict_pb2, verdict_pb2_grpc

JUDGE_TOKEN = "judge-token-0123456789abcdef0123"
GHOST_TOKEN = "ghost-token-0123456789abcdef0123"
LONG_PROSE = "A long prose answer that goes on. " * 300 + "And then"
"""Unverifiable prose long enough for a second opinion (over second_opinion_min_tokens)."""
SECOND_OPINION_POLICY = POLICY + "\n  judge:\n    rpcs: [VerifyResponse]\n    judges: true\n"


@pytest.fixture
def chat() -> Any:
    server = ChatServer()
    server.replies = [(200, chat_body(json.dumps({"ok": False, "reason": "ends mid-sentence"})))]
    yield server
    server.close()


async def test_a_principal_denied_judges_gets_no_second_opinion(tmp_path: Path, chat: ChatServer) -> None:
    """VerifyResponse's second opinion costs what an Evaluate judge costs: a principal whose grant says
    `judges: false` must not reach the judge through it, while one with `judges: true` does."""
    policy = tmp_path / "policy.yaml"
    policy.write_text(SECOND_OPINION_POLICY)
    tokens = SecretVolume(tmp_path / "tokens", {"runner": TOKEN.encode(), "judge": JUDGE_TOKEN.encode()})
    request = verdict_pb2.VerifyResponseRequest(text=LONG_PROSE, completion_tokens=5000, request_text="Explain.")
    overrides = {
        "auth_policy_file": str(policy),
        "auth_tokens_dir": str(tokens.directory),
        "second_opinion": True,
        "second_opinion_host": chat.url,
    }
    async with started(**overrides) as app, grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        stub = verdict_pb2_grpc.VerdictServiceStub(channel)
        denied = await stub.VerifyResponse(request, timeout=30, metadata=bearer(TOKEN))
        assert denied.verdict == verdict_pb2.VERIFY_VERDICT_UNVERIFIABLE
        assert not denied.HasField("second_opinion")
        assert chat.requests == []
        granted = await stub.VerifyResponse(request, timeout=30, metadata=bearer(JUDGE_TOKEN))
    assert granted.HasField("second_opinion")
    assert granted.second_opinion.reason == "ends mid-sentence"
    assert len(chat.requests) == 1


async def test_reflection_answers_no_caller_without_credentials(tmp_path: Path) -> None:
    """Reflection lists every service and message: with auth on, a caller without credentials learns nothing."""
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    tokens = SecretVolume(tmp_path / "tokens", {"reader": READER_TOKEN.encode()})
    overrides = {"auth_policy_file": str(policy), "auth_tokens_dir": str(tokens.directory)}
    async with started(**overrides) as app, grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await list_services_once(channel)
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert error_info(caught.value).reason == "CREDENTIALS_MISSING"


async def test_a_token_for_a_principal_the_policy_never_names_may_do_nothing_and_makes_no_label(
    tmp_path: Path,
) -> None:
    """A token file for a name the policy does not list (a stale Secret key, or one an attacker got added)
    authenticates, but grants nothing; its name never becomes a metric label, nor do principals added by a later
    policy (the label's values are fixed at startup, so its cardinality is bounded by the first policy)."""
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    tokens = SecretVolume(tmp_path / "tokens", {"ghost": GHOST_TOKEN.encode(), "runner": TOKEN.encode()})
    overrides = {"auth_policy_file": str(policy), "auth_tokens_dir": str(tokens.directory)}
    async with started(**overrides) as app, grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        stub = verdict_pb2_grpc.VerdictServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.VerifyResponse(VERIFY, timeout=5, metadata=bearer(GHOST_TOKEN))
        assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
        info = error_info(caught.value)
        assert (info.reason, info.metadata["principal"]) == ("RPC_NOT_ALLOWED", "ghost")

        policy.write_text(POLICY + "\n  ghost:\n    rpcs: [VerifyResponse]\n")
        assert (await stub.VerifyResponse(VERIFY, timeout=5, metadata=bearer(GHOST_TOKEN))).verdict == 1

        sample = app.metrics.registry.get_sample_value
        assert sample("verdict_auth_decisions_total", {"principal": "other", "decision": "permission_denied"}) == 1
        assert sample("verdict_auth_decisions_total", {"principal": "other", "decision": "allowed"}) == 1
        exposed = {
            sample.labels.get("principal")
            for metric in app.metrics.registry.collect()
            for sample in metric.samples
            if "principal" in sample.labels
        }
        assert exposed == {"other"}


async def test_a_token_removed_from_the_secret_stops_working_at_once(tmp_path: Path) -> None:
    """Revocation is deleting the principal's key from the Secret: the next call with that token is refused, and
    the other principals' tokens keep working."""
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    tokens = SecretVolume(tmp_path / "tokens", {"runner": TOKEN.encode(), "reader": READER_TOKEN.encode()})
    overrides = {"auth_policy_file": str(policy), "auth_tokens_dir": str(tokens.directory)}
    async with started(**overrides) as app, grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        stub = verdict_pb2_grpc.VerdictServiceStub(channel)
        await stub.VerifyResponse(VERIFY, timeout=5, metadata=bearer(TOKEN))
        tokens.update({"reader": READER_TOKEN.encode()})
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.VerifyResponse(VERIFY, timeout=5, metadata=bearer(TOKEN))
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert error_info(caught.value).reason == "INVALID_TOKEN"
        await stub.ListEvaluators(verdict_pb2.ListEvaluatorsRequest(), timeout=5, metadata=bearer(READER_TOKEN))


async def test_one_connection_cannot_hold_more_than_a_few_health_watches() -> None:
    """Health is open to everyone, and a Watch stream stays open for as long as the client likes: without a cap, one
    unauthenticated connection holds `max_concurrent_streams` (100) of them, and `max_connections` such connections
    hold a hundred thousand coroutines. A client's health checking needs one Watch per service name, so a handful per
    connection is plenty; past that a Watch is RESOURCE_EXHAUSTED, while Check on the same connection still answers,
    and a slot freed by an ended Watch is taken again."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from verdict.server.interceptors.access_control import HEALTH_WATCHES_PER_CONNECTION

    async with started() as app, grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        health = health_pb2_grpc.HealthStub(channel)
        watches = [health.Watch(health_pb2.HealthCheckRequest(service=""), timeout=30)]
        for _ in range(HEALTH_WATCHES_PER_CONNECTION - 1):
            watches.append(health.Watch(health_pb2.HealthCheckRequest(service=""), timeout=30))
        for watch in watches:
            assert (await watch.read()).status == health_pb2.HealthCheckResponse.SERVING
        refused = health.Watch(health_pb2.HealthCheckRequest(service=""), timeout=30)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await refused.read()
        assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert error_info(caught.value).reason == "TOO_MANY_HEALTH_WATCHES"
        check = await health.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
        assert check.status == health_pb2.HealthCheckResponse.SERVING

        watches.pop().cancel()
        codes = []
        for _ in range(200):  # the server learns of the cancellation asynchronously
            again = health.Watch(health_pb2.HealthCheckRequest(service=""), timeout=30)
            try:
                first = await again.read()
                break
            except grpc.aio.AioRpcError as error:
                codes.append(error.code())
                await asyncio.sleep(0.01)
        else:
            pytest.fail("the slot of a cancelled Watch was never freed")
        assert first.status == health_pb2.HealthCheckResponse.SERVING
        assert set(codes) <= {grpc.StatusCode.RESOURCE_EXHAUSTED}
        watches.append(again)
        sample = app.metrics.registry.get_sample_value
        rejected = sample("verdict_calls_in_flight_rejected_total", {"limit": "health_watches_per_connection"})
        assert rejected == 1 + len(codes)
        for watch in watches:
            watch.cancel()


async def test_auth_without_tls_off_loopback_is_warned_about_on_both_ports(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Bearer tokens sent in cleartext can be read off the network. The server still starts (a service mesh may
    encrypt the hop for it), but says so at WARNING for each port that takes tokens off loopback, and not on
    loopback."""
    from verdict.server.assembly import start_metrics_server

    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY.replace("reflection: true", "reflection: true\n    metrics: true"))
    tokens = SecretVolume(tmp_path / "tokens", {"reader": READER_TOKEN.encode()})
    auth = {"auth_policy_file": str(policy), "auth_tokens_dir": str(tokens.directory), "metrics_requires_auth": True}
    caplog.set_level(logging.WARNING, logger="verdict")
    for host, warned in (("127.0.0.1", False), ("0.0.0.0", True)):
        caplog.clear()
        overrides = {**auth, "grpc_address": f"{host}:0", "metrics_address": f"{host}:0"}
        async with started(**overrides) as app:
            metrics = await start_metrics_server(app, app.metrics.registry)
            assert metrics is not None
            await metrics.close()
        warnings = [
            r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "cleartext" in r.getMessage()
        ]
        assert len(warnings) == (2 if warned else 0), warnings
