"""The HTTP port: the same RPCs over Connect (curl with JSON, binary protobuf, GET), gRPC-Web and gRPC, on HTTP/1.1 and
HTTP/2, with the same errors (codes and details), limits, metrics, access log and decision records as the gRPC port."""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from connectrpc.client import ConnectClient
from connectrpc.code import Code
from connectrpc.compat import google_protobuf_binary_codec, google_protobuf_json_codec
from connectrpc.errors import ConnectError
from connectrpc.protocol import ProtocolType
from google.rpc import error_details_pb2
from prometheus_client import CollectorRegistry

from tests.server.support import HeldServicer
from tests.support import Running, counted, make_config, serving
from verdict.metrics import Metrics
from verdict.server.connect import ConnectServer, connect_application, method_infos
from verdict.server.interceptors.admission import Admission, AdmissionLimits
from verdict.v1 import verdict_pb2, verdict_pb2_grpc

SERVICE = "/verdict.v1.VerdictService"
MALFORMED = "```python\ndef f(:\n```"
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CURL = shutil.which("curl")
needs_curl = pytest.mark.skipif(CURL is None, reason="curl is not installed (scripts/apt-packages.txt)")


@pytest.fixture
async def http(tmp_path: Path) -> AsyncIterator[tuple[Running, str, Path]]:
    log = tmp_path / "decisions.log"
    config = make_config(
        http_address="127.0.0.1:0",
        decision_log="file",
        decision_log_path=str(log),
        max_message_bytes=64 * 1024,
    )
    async with serving(config) as running:
        assert running.app.http is not None
        yield running, f"http://127.0.0.1:{running.app.http.port}", log


async def _curl(*args: str) -> tuple[int, dict[str, Any]]:
    """curl in a worker thread (the server shares this event loop); returns (HTTP status, JSON body)."""
    assert CURL is not None
    done = await asyncio.to_thread(
        subprocess.run,
        [CURL, "-sS", "-o", "-", "-w", "\n%{http_code}", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    body, _, status = done.stdout.rpartition("\n")
    return int(status), json.loads(body)


@needs_curl
async def test_curl_json_every_rpc_and_an_error_with_details(http: tuple[Running, str, Path]) -> None:
    _running, base, _log = http
    json_post = ("-H", "Content-Type: application/json")
    status, verified = await _curl(*json_post, "-d", json.dumps({"text": MALFORMED}), f"{base}{SERVICE}/VerifyResponse")
    assert status == 200
    assert verified["verdict"] == "VERIFY_VERDICT_MALFORMED"
    assert verified["failed"] is True
    evaluate = {"config": {"yaml": "type: output_numeric\noperator: ge\ntarget: 3"}, "output": "5"}
    status, evaluated = await _curl(*json_post, "-d", json.dumps(evaluate), f"{base}{SERVICE}/Evaluate")
    assert (status, evaluated["verdict"]) == (200, "yes")
    status, catalogue = await _curl(*json_post, "-d", "{}", f"{base}{SERVICE}/ListEvaluators")
    assert status == 200
    assert "exit_code" in [info["type"] for info in catalogue["evaluators"]]

    bad = {"config": {"yaml": "type: output_numeric\noperatr: ge\ntarget: 3"}, "output": "5"}
    status, error = await _curl(*json_post, "-d", json.dumps(bad), f"{base}{SERVICE}/Evaluate")
    assert status == 400
    assert error["code"] == "invalid_argument"
    details = {detail["type"]: base64.b64decode(detail["value"] + "==") for detail in error["details"]}
    info = error_details_pb2.ErrorInfo.FromString(details["google.rpc.ErrorInfo"])
    assert (info.reason, info.domain) == ("INVALID_EVALUATOR_CONFIG", "verdict.v1")
    bad_request = error_details_pb2.BadRequest.FromString(details["google.rpc.BadRequest"])
    assert bad_request.field_violations[0].field


@needs_curl
async def test_curl_over_http2_and_as_a_get(http: tuple[Running, str, Path]) -> None:
    _running, base, _log = http
    status, verified = await _curl(
        "--http2-prior-knowledge",
        "-H",
        "Content-Type: application/json",
        "-d",
        json.dumps({"text": '```json\n{"a": 1}\n```'}),
        f"{base}{SERVICE}/VerifyResponse",
    )
    assert (status, verified["verdict"]) == (200, "VERIFY_VERDICT_OK")
    query = urllib.parse.quote(json.dumps({"config": {"exit_code": {}}, "exit_code": 1}))
    status, evaluated = await _curl(f"{base}{SERVICE}/Evaluate?encoding=json&message={query}")
    assert (status, evaluated["verdict"]) == (200, "no")


async def test_connect_client_binary_and_json_and_grpc_web(http: tuple[Running, str, Path]) -> None:
    _running, base, _log = http
    methods = method_infos()
    for protocol, codec in (
        (ProtocolType.CONNECT, google_protobuf_binary_codec()),
        (ProtocolType.CONNECT, google_protobuf_json_codec()),
        (ProtocolType.GRPC_WEB, google_protobuf_binary_codec()),
    ):
        async with ConnectClient(base, codec=codec, protocol=protocol) as client:
            verified = await client.execute_unary(
                request=verdict_pb2.VerifyResponseRequest(text=MALFORMED), method=methods["VerifyResponse"]
            )
            assert verified.verdict == verdict_pb2.VERIFY_VERDICT_MALFORMED, (protocol, codec.name())
            config = verdict_pb2.EvaluatorConfig(yaml="type: exit_code")
            evaluated = await client.execute_unary(
                request=verdict_pb2.EvaluateRequest(config=config, exit_code=1), method=methods["Evaluate"]
            )
            assert evaluated.verdict == "no"
            with pytest.raises(ConnectError) as caught:
                await client.execute_unary(
                    request=verdict_pb2.EvaluateRequest(config=verdict_pb2.EvaluatorConfig(yaml="type: nope")),
                    method=methods["Evaluate"],
                )
            assert caught.value.code == Code.INVALID_ARGUMENT
            info = caught.value.details[0]
            assert info.type_name == "google.rpc.ErrorInfo"
            assert error_details_pb2.ErrorInfo.FromString(info.message_bytes).reason == "INVALID_EVALUATOR_CONFIG"


async def test_grpc_clients_reach_the_http_port_too(http: tuple[Running, str, Path]) -> None:
    running, _base, _log = http
    assert running.app.http is not None
    async with grpc.aio.insecure_channel(f"127.0.0.1:{running.app.http.port}") as channel:
        stub = verdict_pb2_grpc.VerdictServiceStub(channel)
        verified = await stub.VerifyResponse(verdict_pb2.VerifyResponseRequest(text=MALFORMED), timeout=10)
        assert verified.verdict == verdict_pb2.VERIFY_VERDICT_MALFORMED


def _post(url: str, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(  # noqa: S310 - a local test server
        url, data=body, headers={"Content-Type": content_type, **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:  # noqa: S310 - a local test server
            return reply.status, reply.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


async def test_limits_metrics_access_log_and_decisions_are_shared(
    http: tuple[Running, str, Path], caplog: pytest.LogCaptureFixture
) -> None:
    running, base, log = http
    caplog.set_level("INFO", logger="verdict.access")
    headers = {"x-request-id": "http-1", "traceparent": f"00-{TRACE_ID}-00f067aa0ba902b7-01"}
    body = verdict_pb2.VerifyResponseRequest(text='```json\n{"a": 1,}\n```').SerializeToString()
    status, raw = await asyncio.to_thread(_post, f"{base}{SERVICE}/VerifyResponse", body, "application/proto", headers)
    assert status == 200
    assert verdict_pb2.VerifyResponseResponse.FromString(raw).verdict == verdict_pb2.VERIFY_VERDICT_MALFORMED

    too_big = json.dumps({"text": "x" * (80 * 1024)}).encode()
    status, raw = await asyncio.to_thread(_post, f"{base}{SERVICE}/VerifyResponse", too_big, "application/json")
    assert status == 429
    assert json.loads(raw)["code"] == "resource_exhausted"

    handled = running.registry.get_sample_value(
        "grpc_server_handled_total",
        {
            "grpc_type": "unary",
            "grpc_service": "verdict.v1.VerdictService",
            "grpc_method": "VerifyResponse",
            "grpc_code": "OK",
        },
    )
    assert handled == 1
    access = [r for r in caplog.records if getattr(r, "fields", {}).get("event") == "call"]
    assert access[0].fields["transport"] == "connect"  # type: ignore[attr-defined]
    assert access[0].fields["code"] == "OK"  # type: ignore[attr-defined]

    await running.app.stop(grace=1)  # flushes the decision log
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(records) == 1, "the oversized request never reached the servicer"
    (record,) = records
    assert (record["transport"], record["rpc"], record["request_id"], record["trace_id"]) == (
        "connect",
        "VerifyResponse",
        "http-1",
        TRACE_ID,
    )
    assert record["result"]["verdict"] == "malformed"


async def test_http_address_in_use_fails_naming_the_key() -> None:
    from verdict.errors import ConfigError

    async with serving(make_config(http_address="127.0.0.1:0")) as running:
        assert running.app.http is not None
        taken = f"127.0.0.1:{running.app.http.port}"
        with pytest.raises(ConfigError, match="http_address"):
            async with serving(make_config(http_address=taken)):
                pass  # pragma: no cover


async def test_admission_control_is_shared_with_the_http_port() -> None:
    held = HeldServicer()
    config = make_config(http_address="127.0.0.1:0")
    metrics = Metrics(CollectorRegistry())
    admission = Admission(AdmissionLimits(running=1, queued=0, min_deadline_seconds=0.01), metrics)
    app = connect_application(held, metrics, config, admission=admission)  # type: ignore[arg-type]
    server = ConnectServer(app, config, metrics)
    server.start()
    methods = method_infos()
    try:
        async with ConnectClient(f"http://127.0.0.1:{server.port}", codec=google_protobuf_binary_codec()) as client:
            first = asyncio.ensure_future(
                client.execute_unary(request=verdict_pb2.VerifyResponseRequest(), method=methods["VerifyResponse"])
            )
            await held.entered.wait()
            with pytest.raises(ConnectError) as caught:
                await client.execute_unary(request=verdict_pb2.EvaluateRequest(), method=methods["Evaluate"])
            assert caught.value.code == Code.RESOURCE_EXHAUSTED
            assert "capacity" in caught.value.message
            # ListEvaluators is answered from memory and never shed
            listed = await client.execute_unary(
                request=verdict_pb2.ListEvaluatorsRequest(), method=methods["ListEvaluators"]
            )
            assert list(listed.evaluators) == []
            assert metrics.registry.get_sample_value("verdict_shed_total", {"reason": "overloaded"}) == 1
            held.release.set()
            assert (await first).verdict == verdict_pb2.VERIFY_VERDICT_OK
            evaluated = await client.execute_unary(request=verdict_pb2.EvaluateRequest(), method=methods["Evaluate"])
            assert evaluated.verdict == "yes"
            assert (admission.running, admission.queued) == (0, 0)
    finally:
        await server.stop(1)


HTTP_POLICY = """
principals:
  runner:
    rpcs: ["*"]
    judges: false
  reader:
    rpcs: [ListEvaluators]
"""


async def test_the_http_port_authenticates_and_authorizes_like_the_grpc_port(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="verdict.access")
    policy = tmp_path / "policy.yaml"
    policy.write_text(HTTP_POLICY)
    tokens = tmp_path / "tokens"
    tokens.mkdir()
    (tokens / "runner").write_text("runner-token-0123456789abcdef\n")
    (tokens / "reader").write_text("reader-token-0123456789abcdef\n")
    log = tmp_path / "decisions.log"
    config = make_config(
        http_address="127.0.0.1:0",
        auth_policy_file=str(policy),
        auth_tokens_dir=str(tokens),
        decision_log="file",
        decision_log_path=str(log),
    )
    methods = method_infos()
    request = verdict_pb2.VerifyResponseRequest(text=MALFORMED)
    async with serving(config) as running:
        assert running.app.http is not None
        base = f"http://127.0.0.1:{running.app.http.port}"
        async with ConnectClient(base, codec=google_protobuf_json_codec()) as client:
            with pytest.raises(ConnectError) as missing:
                await client.execute_unary(request=request, method=methods["VerifyResponse"])
            assert missing.value.code == Code.UNAUTHENTICATED
            assert error_details_pb2.ErrorInfo.FromString(missing.value.details[0].message_bytes).reason == (
                "CREDENTIALS_MISSING"
            )
            reader = {"authorization": "Bearer reader-token-0123456789abcdef"}
            with pytest.raises(ConnectError) as denied:
                await client.execute_unary(request=request, method=methods["VerifyResponse"], headers=reader)
            assert denied.value.code == Code.PERMISSION_DENIED
            runner = {"authorization": "Bearer runner-token-0123456789abcdef", "x-request-id": "auth-1"}
            verified = await client.execute_unary(request=request, method=methods["VerifyResponse"], headers=runner)
            assert verified.verdict == verdict_pb2.VERIFY_VERDICT_MALFORMED
            judged = verdict_pb2.EvaluateRequest(
                config=verdict_pb2.EvaluatorConfig(yaml="type: llm_structured\nprompt: done?"), output="x"
            )
            with pytest.raises(ConnectError) as no_judges:
                await client.execute_unary(request=judged, method=methods["Evaluate"], headers=runner)
            assert no_judges.value.code == Code.PERMISSION_DENIED
        sample = running.registry.get_sample_value
        assert sample("verdict_auth_decisions_total", {"principal": "runner", "decision": "allowed"}) == 2
        assert sample("verdict_auth_decisions_total", {"principal": "reader", "decision": "permission_denied"}) == 1
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["principal"], r["request_id"], r["code"]) for r in records] == [
        ("", "", "Unauthenticated"),  # refusals by the gate are decision records too
        ("reader", "", "PermissionDenied"),
        ("runner", "auth-1", "OK"),
        ("runner", "auth-1", "PermissionDenied"),
    ]
    access = [r.fields for r in caplog.records if getattr(r, "fields", {}).get("event") == "call"]  # type: ignore[attr-defined]
    assert [(line["code"], line.get("principal", "")) for line in access] == [
        ("Unauthenticated", ""),
        ("PermissionDenied", "reader"),
        ("OK", "runner"),
        ("PermissionDenied", "runner"),
    ]


@needs_curl
async def test_the_http_port_serves_https_with_the_server_certificate(tmp_path: Path) -> None:
    from tests.certs import CertificateAuthority

    ca = CertificateAuthority(tmp_path / "ca")
    server = ca.server()
    config = make_config(
        http_address="127.0.0.1:0", tls_cert_file=str(server.cert_file), tls_key_file=str(server.key_file)
    )
    async with serving(config) as running:
        assert running.app.http is not None
        url = f"https://localhost:{running.app.http.port}{SERVICE}/VerifyResponse"
        for version in ("--http1.1", "--http2"):
            status, verified = await _curl(
                version,
                "--cacert",
                str(ca.cert_file),
                "--resolve",
                f"localhost:{running.app.http.port}:127.0.0.1",
                "-H",
                "Content-Type: application/json",
                "-d",
                json.dumps({"text": MALFORMED}),
                url,
            )
            assert (status, verified["verdict"]) == (200, "VERIFY_VERDICT_MALFORMED"), version


async def test_a_call_past_its_deadline_is_counted_deadline_exceeded() -> None:
    held = HeldServicer()  # never released: only the deadline ends the call
    config = make_config(http_address="127.0.0.1:0")
    metrics = Metrics(CollectorRegistry())
    server = ConnectServer(connect_application(held, metrics, config), config, metrics)  # type: ignore[arg-type]
    server.start()
    labels = {"grpc_type": "unary", "grpc_service": "verdict.v1.VerdictService", "grpc_method": "VerifyResponse"}
    # urllib waits 60 s for the answer: a client that cancels at its own deadline could beat the server's, and only
    # the server's deadline is under test here
    request = urllib.request.Request(
        f"http://127.0.0.1:{server.port}{SERVICE}/VerifyResponse",
        data=b"",
        headers={"Content-Type": "application/proto", "Connect-Protocol-Version": "1", "Connect-Timeout-Ms": "300"},
    )
    try:
        with pytest.raises(urllib.error.HTTPError) as caught:
            await asyncio.to_thread(urllib.request.urlopen, request, timeout=60)
        assert json.loads(caught.value.read())["code"] == "deadline_exceeded"
        handled = {"grpc_code": "DeadlineExceeded", **labels}
        assert await counted(metrics.registry, "grpc_server_handled_total", handled, 1, seconds=60) == 1
        assert metrics.registry.get_sample_value("grpc_server_handled_total", {**labels, "grpc_code": "Canceled"}) == 0
    finally:
        await server.stop(1)
