"""TLS, mutual TLS, bearer tokens and the policy, over real channels to a real server, with certificates made now."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_status import rpc_status
from prometheus_client import CollectorRegistry

from tests.certs import CertificateAuthority, Issued, SecretVolume, certificate_shown
from tests.judges.support import RPC_YES, ChatServer, chat_body, llm_request
from tests.support import list_services_once, make_config
from verdict.server.assembly import App, build_server
from verdict.v1 import verdict_pb2, verdict_pb2_grpc
from verdict_client import AsyncVerdictClient, ClientConfig, TlsConfig, VerdictClient, VerdictRpcError

VERIFY = verdict_pb2.VerifyResponseRequest(text="```json\n{}\n```\n", finish_reason="stop")
TOKEN = "runner-token-0123456789abcdef"
READER_TOKEN = "reader-token-0123456789abcdef"
SEPARATE_CONNECTION = ("grpc.use_local_subchannel_pool", 1)
"""A channel option that keeps grpc from sharing one connection between two channels to the same target."""


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two CAs, server certificates from each, and client certificates with a SPIFFE URI and a plain CN."""
    root = tmp_path_factory.mktemp("pki")
    first, second = CertificateAuthority(root / "ca1", "ca-one"), CertificateAuthority(root / "ca2", "ca-two")
    return {
        "ca": first,
        "ca2": second,
        "server": first.server("server"),
        "server2": second.server("server2"),
        "runner": first.issue("runner", sans=("URI:spiffe://verdict.test/runner",)),
        "stranger": first.issue("stranger", common_name="stranger"),
        "reader": first.issue("reader", common_name="reader.loops.svc"),
    }


@contextlib.asynccontextmanager
async def started(**overrides: Any) -> AsyncIterator[App]:
    app, _ = await build_server(make_config(**overrides), registry=CollectorRegistry(), env={"PATH": "/usr/bin:/bin"})
    await app.start()
    try:
        yield app
    finally:
        await app.stop(grace=1)


def tls_files(issued: Issued) -> dict[str, str]:
    return {"tls_cert_file": str(issued.cert_file), "tls_key_file": str(issued.key_file)}


def secure(port: int, roots: bytes, client: Issued | None = None) -> grpc.aio.Channel:
    credentials = grpc.ssl_channel_credentials(roots, client.key if client else None, client.cert if client else None)
    return grpc.aio.secure_channel(
        f"127.0.0.1:{port}", credentials, options=[("grpc.ssl_target_name_override", "localhost")]
    )


def bearer(token: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {token}"),)


def error_info(error: grpc.aio.AioRpcError) -> error_details_pb2.ErrorInfo:
    status = rpc_status.from_call(error)
    assert status is not None
    infos = []
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            infos.append(info)
    assert len(infos) == 1
    return infos[0]


def served_certificate(port: int, roots: bytes) -> bytes:
    """The DER certificate a brand-new TLS connection to `port` is shown (ALPN h2, as a gRPC client offers)."""
    context = ssl.create_default_context(cadata=roots.decode())
    context.set_alpn_protocols(["h2", "http/1.1"])
    return certificate_shown(port, context)


def der(issued: Issued) -> bytes:
    return ssl.PEM_cert_to_DER_cert(issued.cert.decode())


# --- TLS ---------------------------------------------------------------------------------------------------------


async def test_tls_serves_the_python_clients_and_refuses_plaintext(pki: dict[str, Any]) -> None:
    ca: CertificateAuthority = pki["ca"]
    async with started(**tls_files(pki["server"])) as app:
        config = ClientConfig(tls=TlsConfig(root_certificates=ca.cert, server_name_override="localhost"))
        target = f"127.0.0.1:{app.port}"

        def sync_call() -> str:
            with VerdictClient(target, config=config) as client:
                return client.verify_response("```json\n{}\n```\n", finish_reason="stop").verdict

        assert await asyncio.to_thread(sync_call) == "ok"
        async with AsyncVerdictClient(target, config=config) as client:
            assert (await client.verify_response("```json\n{}\n```\n", finish_reason="stop")).verdict == "ok"
        async with grpc.aio.insecure_channel(target) as plaintext:
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await verdict_pb2_grpc.VerdictServiceStub(plaintext).VerifyResponse(VERIFY, timeout=5)
            assert caught.value.code() == grpc.StatusCode.UNAVAILABLE


async def test_mutual_tls_refuses_a_client_without_a_certificate(pki: dict[str, Any]) -> None:
    ca: CertificateAuthority = pki["ca"]
    overrides = {**tls_files(pki["server"]), "tls_client_ca_file": str(ca.cert_file), "tls_client_auth": "require"}
    async with started(**overrides) as app:
        async with secure(app.port, ca.cert) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await verdict_pb2_grpc.VerdictServiceStub(channel).VerifyResponse(VERIFY, timeout=5)
            assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
        async with secure(app.port, ca.cert, pki["stranger"]) as channel:
            response = await verdict_pb2_grpc.VerdictServiceStub(channel).VerifyResponse(VERIFY, timeout=5)
            assert response.verdict == verdict_pb2.VERIFY_VERDICT_OK


async def test_a_rotated_certificate_reaches_new_connections_while_a_long_call_finishes(
    pki: dict[str, Any], tmp_path: Path
) -> None:
    """cert-manager's rotation: the Secret's `..data` symlink is swapped to a directory holding a certificate from
    another CA. A judge call in flight on the old connection completes; a new connection is shown the new cert."""
    ca, ca2 = pki["ca"], pki["ca2"]
    old, new = pki["server"], pki["server2"]
    volume = SecretVolume(tmp_path / "tls", {"tls.crt": old.cert, "tls.key": old.key})
    chat = ChatServer()
    chat.replies = [(200, chat_body(json.dumps(RPC_YES)), 60)]
    try:
        async with started(
            tls_cert_file=volume.path("tls.crt"), tls_key_file=volume.path("tls.key"), judge_host=chat.url
        ) as app:
            assert served_certificate(app.port, ca.cert) == der(old)
            async with secure(app.port, ca.cert + ca2.cert) as channel:
                stub = verdict_pb2_grpc.VerdictServiceStub(channel)
                long_call = asyncio.ensure_future(stub.Evaluate(llm_request(prompt="Did it pass?"), timeout=60))
                for _ in range(1000):
                    if chat.requests:
                        break
                    await asyncio.sleep(0.01)
                assert chat.requests, "the judge call never started"
                volume.update({"tls.crt": new.cert, "tls.key": new.key})
                assert await asyncio.to_thread(served_certificate, app.port, ca2.cert) == der(new)
                assert app.certificates is not None
                assert app.certificates.reloads == 1
                async with secure(app.port, ca2.cert) as fresh:
                    answer = await verdict_pb2_grpc.VerdictServiceStub(fresh).VerifyResponse(VERIFY, timeout=5)
                    assert answer.verdict == verdict_pb2.VERIFY_VERDICT_OK
                assert not long_call.done()
                chat.release.set()
                response = await long_call
                assert response.verdict == "yes"
    finally:
        chat.close()


async def test_a_broken_rotation_keeps_the_previous_certificate(pki: dict[str, Any], tmp_path: Path) -> None:
    ca: CertificateAuthority = pki["ca"]
    server, other = pki["server"], pki["server2"]
    volume = SecretVolume(tmp_path / "tls", {"tls.crt": server.cert, "tls.key": server.key})
    async with started(tls_cert_file=volume.path("tls.crt"), tls_key_file=volume.path("tls.key")) as app:
        volume.update({"tls.crt": server.cert, "tls.key": other.key})  # a key that does not match the certificate
        assert await asyncio.to_thread(served_certificate, app.port, ca.cert) == der(server)
        assert app.certificates is not None
        assert app.certificates.reloads == 0
        volume.update({"tls.crt": other.cert, "tls.key": other.key})
        assert await asyncio.to_thread(served_certificate, app.port, pki["ca2"].cert) == der(other)


# --- Authentication and authorization ------------------------------------------------------------------------------

POLICY = """
principals:
  runner:
    rpcs: ["*"]
    judges: false
    certificates: [spiffe://verdict.test/runner]
  reader:
    rpcs: [ListEvaluators]
    reflection: true
    certificates: [reader.loops.svc]
"""


@pytest.fixture
def auth_files(tmp_path: Path) -> dict[str, Any]:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    tokens = SecretVolume(tmp_path / "tokens", {"runner": TOKEN.encode() + b"\n", "reader": READER_TOKEN.encode()})
    return {"policy": policy, "tokens": tokens}


async def test_bearer_tokens_authenticate_and_the_policy_authorizes(
    auth_files: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="verdict")
    overrides = {"auth_policy_file": str(auth_files["policy"]), "auth_tokens_dir": str(auth_files["tokens"].directory)}
    async with started(**overrides) as app, grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        stub = verdict_pb2_grpc.VerdictServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as missing:
            await stub.VerifyResponse(VERIFY, timeout=5)
        assert missing.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert error_info(missing.value).reason == "CREDENTIALS_MISSING"
        with pytest.raises(grpc.aio.AioRpcError) as wrong:
            await stub.VerifyResponse(VERIFY, timeout=5, metadata=bearer(TOKEN[:-1] + "X"))
        assert wrong.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert error_info(wrong.value).reason == "INVALID_TOKEN"

        ok = await stub.VerifyResponse(VERIFY, timeout=5, metadata=bearer(TOKEN))
        assert ok.verdict == verdict_pb2.VERIFY_VERDICT_OK
        with pytest.raises(grpc.aio.AioRpcError) as judged:
            await stub.Evaluate(llm_request(prompt="Did it pass?"), timeout=5, metadata=bearer(TOKEN))
        assert judged.value.code() == grpc.StatusCode.PERMISSION_DENIED
        info = error_info(judged.value)
        assert (info.reason, info.metadata["principal"], info.metadata["evaluator"]) == (
            "JUDGES_NOT_ALLOWED",
            "runner",
            "llm_structured",
        )
        await stub.ListEvaluators(verdict_pb2.ListEvaluatorsRequest(), timeout=5, metadata=bearer(READER_TOKEN))
        with pytest.raises(grpc.aio.AioRpcError) as denied:
            await stub.VerifyResponse(VERIFY, timeout=5, metadata=bearer(READER_TOKEN))
        assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert error_info(denied.value).reason == "RPC_NOT_ALLOWED"

        health = health_pb2_grpc.HealthStub(channel)
        assert (await health.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)).status == 1

        sample = app.metrics.registry.get_sample_value
        # The judge refusal comes after the door let the call in: two calls allowed, one of them then refused.
        assert sample("verdict_auth_decisions_total", {"principal": "runner", "decision": "allowed"}) == 2
        assert sample("verdict_auth_decisions_total", {"principal": "other", "decision": "unauthenticated"}) == 2
        assert sample("verdict_auth_decisions_total", {"principal": "reader", "decision": "permission_denied"}) == 1
    logged = caplog.text
    assert "principal=reader: RPC_NOT_ALLOWED" in logged
    assert TOKEN not in logged
    assert READER_TOKEN not in logged


async def test_a_rotated_token_replaces_the_old_one(auth_files: dict[str, Any]) -> None:
    overrides = {"auth_policy_file": str(auth_files["policy"]), "auth_tokens_dir": str(auth_files["tokens"].directory)}
    async with started(**overrides) as app, grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        stub = verdict_pb2_grpc.VerdictServiceStub(channel)
        await stub.VerifyResponse(VERIFY, timeout=5, metadata=bearer(TOKEN))
        rotated = "runner-token-rotated-fedcba9876543210"
        auth_files["tokens"].update({"runner": rotated.encode(), "reader": READER_TOKEN.encode()})
        with pytest.raises(grpc.aio.AioRpcError) as old:
            await stub.VerifyResponse(VERIFY, timeout=5, metadata=bearer(TOKEN))
        assert old.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert (await stub.VerifyResponse(VERIFY, timeout=5, metadata=bearer(rotated))).verdict == 1


async def test_reflection_is_restricted_to_principals_the_policy_allows(auth_files: dict[str, Any]) -> None:
    overrides = {"auth_policy_file": str(auth_files["policy"]), "auth_tokens_dir": str(auth_files["tokens"].directory)}
    async with started(**overrides) as app, grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:

        async def list_services(token: str) -> list[str]:
            return await list_services_once(channel, bearer(token))

        assert "verdict.v1.VerdictService" in await list_services(READER_TOKEN)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await list_services(TOKEN)
        assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert error_info(caught.value).reason == "REFLECTION_NOT_ALLOWED"


async def test_the_client_certificate_names_the_principal(pki: dict[str, Any], auth_files: dict[str, Any]) -> None:
    ca: CertificateAuthority = pki["ca"]
    overrides = {
        **tls_files(pki["server"]),
        "tls_client_ca_file": str(ca.cert_file),
        "tls_client_auth": "require",
        "auth_policy_file": str(auth_files["policy"]),
        "auth_tokens_dir": str(auth_files["tokens"].directory),
    }
    async with started(**overrides) as app:
        async with secure(app.port, ca.cert, pki["runner"]) as channel:  # SAN URI spiffe://verdict.test/runner
            stub = verdict_pb2_grpc.VerdictServiceStub(channel)
            assert (await stub.VerifyResponse(VERIFY, timeout=5)).verdict == verdict_pb2.VERIFY_VERDICT_OK
        async with secure(app.port, ca.cert, pki["reader"]) as channel:  # subject CN reader.loops.svc
            stub = verdict_pb2_grpc.VerdictServiceStub(channel)
            await stub.ListEvaluators(verdict_pb2.ListEvaluatorsRequest(), timeout=5)
            with pytest.raises(grpc.aio.AioRpcError) as denied:
                await stub.Evaluate(verdict_pb2.EvaluateRequest(), timeout=5)
            assert error_info(denied.value).reason == "RPC_NOT_ALLOWED"
            # A token wins over the certificate: the same connection, now as runner.
            assert (await stub.VerifyResponse(VERIFY, timeout=5, metadata=bearer(TOKEN))).verdict == 1
        runner: Issued = pki["runner"]
        tls = TlsConfig(
            root_certificates=ca.cert,
            private_key=runner.key,
            certificate_chain=runner.cert,
            server_name_override="localhost",
        )
        async with AsyncVerdictClient(f"127.0.0.1:{app.port}", config=ClientConfig(tls=tls)) as client:
            assert (await client.verify_response("```json\n{}\n```\n", finish_reason="stop")).verdict == "ok"
        async with secure(app.port, ca.cert, pki["stranger"]) as channel:  # signed by the CA, unknown to the policy
            with pytest.raises(grpc.aio.AioRpcError) as unknown:
                await verdict_pb2_grpc.VerdictServiceStub(channel).VerifyResponse(VERIFY, timeout=5)
            assert unknown.value.code() == grpc.StatusCode.UNAUTHENTICATED
            assert error_info(unknown.value).reason == "UNKNOWN_CERTIFICATE"
        sample = app.metrics.registry.get_sample_value
        assert sample("verdict_auth_decisions_total", {"principal": "reader", "decision": "allowed"}) == 1


async def test_the_python_clients_send_a_bearer_token_over_tls(pki: dict[str, Any], auth_files: dict[str, Any]) -> None:
    ca: CertificateAuthority = pki["ca"]
    overrides = {
        **tls_files(pki["server"]),
        "auth_policy_file": str(auth_files["policy"]),
        "auth_tokens_dir": str(auth_files["tokens"].directory),
    }
    async with started(**overrides) as app:
        tls = TlsConfig(root_certificates=ca.cert, server_name_override="localhost")
        target = f"127.0.0.1:{app.port}"
        async with AsyncVerdictClient(target, config=ClientConfig(tls=tls, bearer_token=TOKEN)) as client:
            assert (await client.verify_response("```json\n{}\n```\n", finish_reason="stop")).verdict == "ok"
        async with AsyncVerdictClient(target, config=ClientConfig(tls=tls)) as anonymous:
            with pytest.raises(VerdictRpcError) as caught:
                await anonymous.verify_response("x")
            assert caught.value.code == grpc.StatusCode.UNAUTHENTICATED
            assert caught.value.reason == "CREDENTIALS_MISSING"

        def sync_call() -> str:
            with VerdictClient(target, config=ClientConfig(tls=tls, bearer_token=TOKEN)) as client:
                return client.list_evaluators().evaluators[0].type

        assert await asyncio.to_thread(sync_call)


# --- In-flight limits ----------------------------------------------------------------------------------------------


async def test_calls_in_flight_are_limited_per_principal_and_per_connection(auth_files: dict[str, Any]) -> None:
    chat = ChatServer()
    chat.replies = [(200, chat_body(json.dumps(RPC_YES)), 60)]
    policy = auth_files["policy"]
    policy.write_text(POLICY.replace("judges: false", "judges: true"))
    overrides = {
        "auth_policy_file": str(policy),
        "auth_tokens_dir": str(auth_files["tokens"].directory),
        "judge_host": chat.url,
        "max_calls_per_principal": 2,
        "max_calls_per_connection": 3,
    }
    try:
        async with started(**overrides) as app, grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:
            stub = verdict_pb2_grpc.VerdictServiceStub(channel)
            slow = [
                asyncio.ensure_future(
                    stub.Evaluate(llm_request(prompt="Did it pass?"), timeout=60, metadata=bearer(TOKEN))
                )
                for _ in range(2)
            ]
            for _ in range(1000):
                if len(chat.requests) == 2:
                    break
                await asyncio.sleep(0.01)
            with pytest.raises(grpc.aio.AioRpcError) as principal:
                await stub.VerifyResponse(VERIFY, timeout=5, metadata=bearer(TOKEN))
            assert principal.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            info = error_info(principal.value)
            assert (info.reason, info.metadata["limit"]) == ("TOO_MANY_CALLS_PER_PRINCIPAL", "2")
            # Another principal on the same connection has its own budget, up to the connection's.
            await stub.ListEvaluators(verdict_pb2.ListEvaluatorsRequest(), timeout=5, metadata=bearer(READER_TOKEN))
            third = asyncio.ensure_future(
                stub.Evaluate(llm_request(prompt="Did it pass?"), timeout=60, metadata=bearer(TOKEN))
            )
            with pytest.raises(grpc.aio.AioRpcError) as same:
                await third
            assert error_info(same.value).reason == "TOO_MANY_CALLS_PER_PRINCIPAL"
            health = health_pb2_grpc.HealthStub(channel)  # probes are never limited
            assert (await health.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)).status == 1
            chat.release.set()
            assert [response.verdict for response in await asyncio.gather(*slow)] == ["yes", "yes"]
            assert await stub.VerifyResponse(VERIFY, timeout=5, metadata=bearer(TOKEN))
            assert app.access is not None
            assert len(app.access.per_principal) == 0
            sample = app.metrics.registry.get_sample_value
            assert sample("verdict_calls_in_flight_rejected_total", {"limit": "per_principal"}) == 2
    finally:
        chat.close()


async def test_calls_in_flight_are_limited_per_connection() -> None:
    chat = ChatServer()
    chat.replies = [(200, chat_body(json.dumps(RPC_YES)), 60)]
    try:
        async with (
            started(judge_host=chat.url, max_calls_per_connection=2) as app,
            grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel,
            grpc.aio.insecure_channel(
                f"127.0.0.1:{app.port}", options=[("grpc.use_local_subchannel_pool", 1)]
            ) as other,
        ):
            stub = verdict_pb2_grpc.VerdictServiceStub(channel)
            slow = [asyncio.ensure_future(stub.Evaluate(llm_request(prompt="p"), timeout=60)) for _ in range(2)]
            for _ in range(1000):
                if len(chat.requests) == 2:
                    break
                await asyncio.sleep(0.01)
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await stub.VerifyResponse(VERIFY, timeout=5)
            assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert error_info(caught.value).reason == "TOO_MANY_CALLS_PER_CONNECTION"
            # A second connection is not affected.
            assert (await verdict_pb2_grpc.VerdictServiceStub(other).VerifyResponse(VERIFY, timeout=5)).verdict == 1
            chat.release.set()
            await asyncio.gather(*slow)
    finally:
        chat.close()


async def test_the_principal_is_in_the_log_context_of_the_call(
    auth_files: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """Any line logged while a call runs carries its principal (never its token): the access log line, and the
    judge's failure."""
    from verdict.server.logs import CallContextFilter

    auth_files["policy"].write_text(POLICY.replace("judges: false", "judges: true"))
    overrides = {
        "auth_policy_file": str(auth_files["policy"]),
        "auth_tokens_dir": str(auth_files["tokens"].directory),
        "judge_host": "http://127.0.0.1:9",  # nothing listens: the judge call fails and is logged
    }
    caplog.set_level(logging.DEBUG, logger="verdict")
    caplog.handler.addFilter(CallContextFilter())
    async with started(**overrides) as app, grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        stub = verdict_pb2_grpc.VerdictServiceStub(channel)
        await stub.Evaluate(llm_request(prompt="Did it pass?"), timeout=30, metadata=bearer(TOKEN))
    in_call = [getattr(r, "call", "-") for r in caplog.records if getattr(r, "call", "-") != "-"]
    assert in_call
    assert all(call.endswith("principal=runner") for call in in_call)
    assert all(TOKEN not in record.getMessage() for record in caplog.records)


async def test_a_plaintext_health_listener_serves_probes_beside_a_tls_port(pki: dict[str, Any]) -> None:
    from deploy.health_probe import check

    async with started(**tls_files(pki["server"]), health_address="127.0.0.1:0") as app:
        target = f"127.0.0.1:{app.health_port}"
        async with grpc.aio.insecure_channel(target) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            assert (await health.Check(health_pb2.HealthCheckRequest(service="liveness"), timeout=5)).status == 1
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await verdict_pb2_grpc.VerdictServiceStub(channel).VerifyResponse(VERIFY, timeout=5)
            assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED
        assert await asyncio.to_thread(check, target, "verdict.v1.VerdictService", 5) == "SERVING"


async def test_another_authorization_scheme_is_refused_with_auth_on_and_ignored_with_auth_off(
    auth_files: dict[str, Any],
) -> None:
    basic = (("authorization", "Basic cnVubmVyOnBhc3M="),)
    overrides = {"auth_policy_file": str(auth_files["policy"]), "auth_tokens_dir": str(auth_files["tokens"].directory)}
    async with started(**overrides) as app, grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await verdict_pb2_grpc.VerdictServiceStub(channel).VerifyResponse(VERIFY, timeout=5, metadata=basic)
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert error_info(caught.value).reason == "INVALID_TOKEN"
        sample = app.metrics.registry.get_sample_value
        assert sample("verdict_auth_decisions_total", {"principal": "other", "decision": "unauthenticated"}) == 1
    async with started() as app, grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        response = await verdict_pb2_grpc.VerdictServiceStub(channel).VerifyResponse(VERIFY, timeout=5, metadata=basic)
        assert response.verdict == verdict_pb2.VERIFY_VERDICT_OK
