"""The server as a client sees it: health, reflection, status codes, limits, metrics, shutdown."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import urllib.request
from collections.abc import AsyncIterator

import grpc
import grpc.aio
import pytest
from google.protobuf import any_pb2
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_status import rpc_status
from prometheus_client import CollectorRegistry

from tests.support import (
    Running,
    ServerProcess,
    counted,
    list_services_once,
    make_config,
    serving,
    start_server_process,
)
from verdict.server.assembly import build_server
from verdict.v1 import verdict_pb2, verdict_pb2_grpc

SERVICE = "verdict.v1.VerdictService"
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


async def _health(channel: grpc.aio.Channel, name: str) -> int:
    stub = health_pb2_grpc.HealthStub(channel)
    response = await stub.Check(health_pb2.HealthCheckRequest(service=name), timeout=5)
    return int(response.status)


async def test_health_not_serving_until_ready_then_serving() -> None:
    app, port = await build_server(make_config(), registry=CollectorRegistry())
    await app.server.start()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        assert await _health(channel, "") == NOT_SERVING
        assert await _health(channel, SERVICE) == NOT_SERVING
        assert await _health(channel, "liveness") == SERVING
        await app.mark_ready()
        assert await _health(channel, "") == SERVING
        assert await _health(channel, SERVICE) == SERVING
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await _health(channel, "no.such.Service")
        assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    await app.stop(grace=0)


async def test_reflection_lists_the_services(running: Running) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(running.channel)

    async def requests() -> AsyncIterator[reflection_pb2.ServerReflectionRequest]:
        yield reflection_pb2.ServerReflectionRequest(list_services="")

    names: list[str] = []
    async for response in stub.ServerReflectionInfo(requests(), timeout=5):
        names += [s.name for s in response.list_services_response.service]
    assert SERVICE in names
    assert "grpc.health.v1.Health" in names


async def test_reflection_can_be_switched_off() -> None:
    async with serving(make_config(reflection=False)) as running:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await list_services_once(running.channel)
        assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED


async def test_oversized_request_is_resource_exhausted() -> None:
    async with serving(make_config(max_message_bytes=64 * 1024)) as running:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await running.stub.VerifyResponse(verdict_pb2.VerifyResponseRequest(text="x" * 100_000), timeout=10)
        assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        ok = await running.stub.VerifyResponse(verdict_pb2.VerifyResponseRequest(text="fine"), timeout=10)
        assert ok.verdict == verdict_pb2.VERIFY_VERDICT_UNVERIFIABLE


async def test_invalid_utf8_is_invalid_argument_naming_the_field(running: Running) -> None:
    raw = running.channel.unary_unary(
        f"/{SERVICE}/VerifyResponse",
        request_serializer=lambda data: data,
        response_deserializer=verdict_pb2.VerifyResponseResponse.FromString,
    )
    text_field_with_bad_utf8 = b"\x0a\x04ok\xff\xfe"
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await raw(text_field_with_bad_utf8, timeout=5)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    status = rpc_status.from_call(caught.value)
    assert status is not None
    info = error_details_pb2.ErrorInfo()
    bad_request = error_details_pb2.BadRequest()
    assert status.details[0].Unpack(info)
    assert info.reason == "UNDECODABLE_REQUEST"
    assert info.domain == "verdict.v1"
    assert info.metadata["field"] == "text"
    assert status.details[1].Unpack(bad_request)
    assert bad_request.field_violations[0].field == "text"
    assert "UTF-8" in caught.value.details()


async def test_grpc_metrics_count_calls_by_code(running: Running) -> None:
    await running.stub.VerifyResponse(verdict_pb2.VerifyResponseRequest(text="```json\n{}\n```"), timeout=10)
    raw = running.channel.unary_unary(
        f"/{SERVICE}/VerifyResponse", request_serializer=lambda d: d, response_deserializer=lambda d: d
    )
    with pytest.raises(grpc.aio.AioRpcError):
        await raw(b"\x0a\x01\xff", timeout=5)
    labels = {"grpc_type": "unary", "grpc_service": SERVICE, "grpc_method": "VerifyResponse"}
    sample = running.registry.get_sample_value
    assert sample("grpc_server_started_total", labels) == 2
    assert sample("grpc_server_handled_total", {**labels, "grpc_code": "OK"}) == 1
    invalid = {**labels, "grpc_code": "InvalidArgument"}
    assert await counted(running.registry, "grpc_server_handled_total", invalid, 1) == 1
    assert sample("grpc_server_handling_seconds_count", labels) == 2
    assert sample("grpc_server_msg_sent_total", labels) == 1
    assert sample("verdict_verifications_total", {"verdict": "ok"}) == 1
    evaluate = {**labels, "grpc_method": "Evaluate"}
    assert sample("grpc_server_handled_total", {**evaluate, "grpc_code": "Unavailable"}) == 0


def _big_python(megabytes: float) -> str:
    line = "value = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n"
    return "```python\n" + line * int(megabytes * 1024 * 1024 / len(line)) + "```\n"


def test_sigterm_drains_in_flight_calls_and_exits_zero() -> None:
    """Calls in flight when SIGTERM arrives all complete; readiness flips at once; the process exits 0."""
    # A grace period the work cannot outlast on any machine: beside four CPU hogs the parse worker's start and three
    # large parses took longer than the default 20 s, and grpc-core then cancelled the calls (UNAVAILABLE), which is
    # the grace period working, not the drain failing (the cut at the grace period is tests/e2e/test_shutdown.py's).
    server_process = start_server_process("--parse-workers", "1", "--grace-period-seconds", "600")

    async def scenario() -> list[verdict_pb2.VerifyResponseResponse]:
        async with grpc.aio.insecure_channel(server_process.target) as channel:
            stub = verdict_pb2_grpc.VerdictServiceStub(channel)
            health = health_pb2_grpc.HealthStub(channel)
            watch = health.Watch(health_pb2.HealthCheckRequest(service=""))
            assert (await watch.read()).status == SERVING
            # Large parses run in the parse pool and take a second or more each: real work in flight.
            calls = [
                asyncio.ensure_future(
                    stub.VerifyResponse(verdict_pb2.VerifyResponseRequest(text=_big_python(0.3) * 2), timeout=60)
                )
                for _ in range(3)
            ]
            await asyncio.sleep(0.3)
            assert not all(call.done() for call in calls), "the calls must still be in flight at SIGTERM"
            server_process.process.send_signal(signal.SIGTERM)
            assert (await asyncio.wait_for(watch.read(), timeout=10)).status == NOT_SERVING
            watch.cancel()
            return list(await asyncio.gather(*calls))

    try:
        results = asyncio.run(scenario())
        assert [r.verdict for r in results] == [verdict_pb2.VERIFY_VERDICT_OK] * 3
        assert server_process.process.wait(timeout=30) == 0
    finally:
        if server_process.process.poll() is None:
            server_process.process.kill()


def test_invalid_configuration_fails_fast_naming_the_key() -> None:
    with pytest.raises(AssertionError, match="max_message_bytes"):
        start_server_process("--max-message-bytes", "ten", ready_timeout=20)


def test_sigint_also_stops_cleanly() -> None:
    server = start_server_process()
    server.process.send_signal(signal.SIGINT)
    try:
        assert server.process.wait(timeout=30) == 0
    except subprocess.TimeoutExpired:
        server.process.kill()
        raise


def _length_delimited(number: int, payload: bytes) -> bytes:
    def varint(value: int) -> bytes:
        out = bytearray()
        while True:
            low, value = value & 0x7F, value >> 7
            if not value:
                return bytes(out + bytes([low]))
            out.append(low | 0x80)

    return varint(number << 3 | 2) + varint(len(payload)) + payload


def _error_details(error: grpc.aio.AioRpcError) -> tuple[error_details_pb2.ErrorInfo, list[any_pb2.Any]]:
    """The one ErrorInfo of a rich status, and every detail (to count them)."""
    status = rpc_status.from_call(error)
    assert status is not None, "the status carries no google.rpc.Status"
    infos = [d for d in status.details if d.Is(error_details_pb2.ErrorInfo.DESCRIPTOR)]
    assert len(infos) == 1
    info = error_details_pb2.ErrorInfo()
    infos[0].Unpack(info)
    return info, list(status.details)


async def test_a_hostile_deeply_nested_context_is_invalid_argument_not_unknown(running: Running) -> None:
    """3,000 nested Structs (22 KB): protobuf refuses them, and naming the field must not recurse 3,000 deep."""
    nested = b""
    for _ in range(3000):  # Struct.fields[k] = Value{struct_value: <nested>}
        value = _length_delimited(5, nested)
        nested = _length_delimited(1, _length_delimited(1, b"k") + _length_delimited(2, value))
    context_field = verdict_pb2.EvaluateRequest.DESCRIPTOR.fields_by_name["context"].number
    raw = running.channel.unary_unary(
        f"/{SERVICE}/Evaluate", request_serializer=lambda data: data, response_deserializer=lambda data: data
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await raw(_length_delimited(context_field, nested), timeout=10)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    info, _ = _error_details(caught.value)
    assert info.reason == "UNDECODABLE_REQUEST"
    assert info.metadata["field"] == "context"
    labels = {"grpc_type": "unary", "grpc_service": SERVICE, "grpc_method": "Evaluate"}
    invalid = {**labels, "grpc_code": "InvalidArgument"}
    assert await counted(running.registry, "grpc_server_handled_total", invalid, 1) == 1
    ok = await running.stub.Evaluate(
        verdict_pb2.EvaluateRequest(config=verdict_pb2.EvaluatorConfig(yaml="type: exit_code")), timeout=10
    )
    assert ok.verdict == "yes"


async def test_a_request_big_enough_to_decode_in_steps_reads_the_same(running: Running) -> None:
    """Over 512 KB a request is decoded in steps (verdict.rpc.stepwise): the context an evaluator reads is the one
    sent, and a malformed big request still gets the runtime's diagnosis naming the field."""
    config = verdict_pb2.EvaluatorConfig(yaml="type: output_contains\npattern: PASS\nsource: ${context.out}")
    for out, verdict in (("PASS", "yes"), ("FAIL", "no")):
        request = verdict_pb2.EvaluateRequest(config=config)
        request.context.update({"context": {**{f"k{i}": i for i in range(60_000)}, "out": out}})
        assert request.ByteSize() > 512 * 1024
        answer = await running.stub.Evaluate(request, timeout=120)
        assert answer.verdict == verdict
    nested = b""
    for _ in range(3000):  # deeper than the runtime's limit, as in the test above, now inside a big request
        nested = _length_delimited(1, _length_delimited(1, b"k") + _length_delimited(2, _length_delimited(5, nested)))
    fields = verdict_pb2.EvaluateRequest.DESCRIPTOR.fields_by_name
    padding = _length_delimited(fields["output"].number, b"o" * 600_000)
    big = padding + _length_delimited(fields["context"].number, nested)
    raw = running.channel.unary_unary(
        f"/{SERVICE}/Evaluate", request_serializer=lambda data: data, response_deserializer=lambda data: data
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await raw(big, timeout=60)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    info, _ = _error_details(caught.value)
    assert (info.reason, info.metadata["field"]) == ("UNDECODABLE_REQUEST", "context")


async def test_an_error_echoing_huge_input_still_reaches_the_client_with_its_details(running: Running) -> None:
    """An unknown evaluator type of 20,000 characters is echoed in the message; the status must still fit in the
    trailers (gRPC clients refuse trailers over 8 KiB with RESOURCE_EXHAUSTED and the ErrorInfo is lost)."""
    request = verdict_pb2.EvaluateRequest(config=verdict_pb2.EvaluatorConfig(yaml="type: " + "k" * 20_000 + "\n"))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await running.stub.Evaluate(request, timeout=60)  # a wide margin: the suite runs on loaded machines
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    info, details = _error_details(caught.value)
    assert info.reason == "INVALID_EVALUATOR_CONFIG"
    assert info.metadata["field"] == "config.type"
    assert len(details) == 2
    bad_request = error_details_pb2.BadRequest()
    assert details[1].Unpack(bad_request)
    assert bad_request.field_violations[0].field == "config.type"
    assert caught.value.details().startswith("unknown evaluator type")
    assert len(caught.value.details().encode()) <= 512


async def test_an_unexpected_exception_is_internal_with_one_error_info(
    running: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(running.app.components.verifier, "verify", broken)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await running.stub.VerifyResponse(verdict_pb2.VerifyResponseRequest(text="x"), timeout=10)
    assert caught.value.code() == grpc.StatusCode.INTERNAL
    assert "secret" not in caught.value.details()
    info, details = _error_details(caught.value)
    assert info.reason == "INTERNAL"
    assert info.domain == "verdict.v1"
    assert len(details) == 1


async def test_reflection_streams_are_counted_like_any_call(running: Running) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(running.channel)

    async def requests() -> AsyncIterator[reflection_pb2.ServerReflectionRequest]:
        yield reflection_pb2.ServerReflectionRequest(list_services="")
        yield reflection_pb2.ServerReflectionRequest(file_containing_symbol=SERVICE)

    async for _ in stub.ServerReflectionInfo(requests(), timeout=5):
        pass
    labels = {
        "grpc_type": "bidi_stream",
        "grpc_service": "grpc.reflection.v1alpha.ServerReflection",
        "grpc_method": "ServerReflectionInfo",
    }
    sample = running.registry.get_sample_value
    assert sample("grpc_server_started_total", labels) == 1
    assert await counted(running.registry, "grpc_server_handled_total", {**labels, "grpc_code": "OK"}, 1) == 1
    assert sample("grpc_server_msg_received_total", labels) == 2
    assert sample("grpc_server_msg_sent_total", labels) == 2


def test_metrics_are_served_over_http_on_their_own_port(server_process: ServerProcess) -> None:
    assert server_process.metrics_port is not None
    assert server_process.metrics_port != server_process.grpc_port
    with grpc.insecure_channel(server_process.target) as channel:
        verdict_pb2_grpc.VerdictServiceStub(channel).VerifyResponse(
            verdict_pb2.VerifyResponseRequest(text="```json\n{}\n```"), timeout=10
        )
    url = f"http://127.0.0.1:{server_process.metrics_port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    assert (
        'grpc_server_handled_total{grpc_code="OK",grpc_method="VerifyResponse",grpc_service="verdict.v1.VerdictService",'
        'grpc_type="unary"} 1.0' in text
    )
    assert 'verdict_verifications_total{verdict="ok"} 1.0' in text
    assert "verdict_build_info{" in text
    assert "_created" not in text


async def test_a_response_over_the_send_limit_is_a_rich_resource_exhausted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Evaluate details can echo the output, so a request under max_message_bytes can make a response over it. The
    caller must learn that with an ErrorInfo (not gRPC's bare "Sent message larger than max"), and the metrics must
    not count the call OK."""
    from verdict.evaluators import EvaluationResult

    async with serving(make_config(max_message_bytes=64 * 1024)) as running:

        async def echoing(*args: object, **kwargs: object) -> EvaluationResult:
            return EvaluationResult(verdict="yes", details={"echo": "x" * 70_000})

        monkeypatch.setattr(running.app.components.evaluations, "evaluate", echoing)
        request = verdict_pb2.EvaluateRequest(config=verdict_pb2.EvaluatorConfig(yaml="type: exit_code"))
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await running.stub.Evaluate(request, timeout=10)
        assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        info, _ = _error_details(caught.value)
        assert info.reason == "RESPONSE_TOO_LARGE"
        assert info.metadata["limitBytes"] == str(64 * 1024)
        labels = {"grpc_type": "unary", "grpc_service": SERVICE, "grpc_method": "Evaluate"}
        sample = running.registry.get_sample_value
        exhausted = {**labels, "grpc_code": "ResourceExhausted"}
        assert await counted(running.registry, "grpc_server_handled_total", exhausted, 1) == 1
        assert sample("grpc_server_handled_total", {**labels, "grpc_code": "OK"}) == 0
        assert sample("grpc_server_msg_sent_total", labels) == 0


async def test_open_health_watches_end_at_shutdown_instead_of_holding_the_drain() -> None:
    """A client with health checking on keeps a Watch open; the drain must not wait the grace period for it."""
    async with serving(make_config()) as running:
        health = health_pb2_grpc.HealthStub(running.channel)
        watches = [health.Watch(health_pb2.HealthCheckRequest(service=name)) for name in ("", SERVICE, "liveness")]
        for watch in watches:
            assert (await watch.read()).status == SERVING
        await asyncio.wait_for(running.app.stop(grace=600), timeout=30)
        assert (await watches[0].read()).status == NOT_SERVING
        assert (await watches[1].read()).status == NOT_SERVING
        for watch in watches:
            assert await watch.read() is grpc.aio.EOF
            assert await watch.code() == grpc.StatusCode.OK


async def test_watch_of_an_unknown_name_is_service_unknown(running: Running) -> None:
    watch = health_pb2_grpc.HealthStub(running.channel).Watch(health_pb2.HealthCheckRequest(service="nope"))
    assert (await watch.read()).status == health_pb2.HealthCheckResponse.SERVICE_UNKNOWN
    watch.cancel()
