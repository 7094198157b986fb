"""The metrics interceptor on a real grpc.aio server: the codes of calls that never finish on their own (deadline
passed, client cancelled) and the messages a streaming handler writes through its context."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import grpc
import grpc.aio
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from prometheus_client import CollectorRegistry

from tests.support import counted, grpc_frame, raw_grpc_call
from verdict.metrics import Metrics
from verdict.server.interceptors.observe import CANCEL_AT_DEADLINE_SECONDS, MetricsInterceptor, cancelled_code
from verdict.server.logs import CallContextFilter

SLOW = {"grpc_type": "unary", "grpc_service": "test.Slow", "grpc_method": "Wait"}
WATCH = {"grpc_type": "server_stream", "grpc_service": "grpc.health.v1.Health", "grpc_method": "Watch"}


class Observed:
    def __init__(
        self, registry: CollectorRegistry, channel: grpc.aio.Channel, health: HealthServicer, port: int
    ) -> None:
        self.registry = registry
        self.channel = channel
        self.health = health
        self.port = port

    def sample(self, name: str, labels: dict[str, str]) -> float | None:
        return self.registry.get_sample_value(name, labels)

    async def wait_for(self, name: str, labels: dict[str, str], value: float) -> None:
        # up to 30 s; the server records a call's end asynchronously, in milliseconds
        reached = await counted(self.registry, name, labels, value, seconds=30)
        assert reached == value, f"{name}{labels} is {reached}, expected {value}"


async def _wait_forever(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
    await asyncio.sleep(600)
    return b""


@pytest.fixture
async def observed() -> AsyncIterator[Observed]:
    registry = CollectorRegistry()
    server = grpc.aio.server(interceptors=[MetricsInterceptor(Metrics(registry))])
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                "test.Slow", {"Wait": grpc.unary_unary_rpc_method_handler(_wait_forever)}
            ),
        )
    )
    health = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        yield Observed(registry, channel, health, port)
    await server.stop(0)


async def test_a_call_past_its_deadline_is_deadline_exceeded_not_canceled(observed: Observed) -> None:
    # By hand, with a client that never cancels: grpcio's client cancels the stream when its own deadline passes, and
    # on a loaded machine that cancel can reach the server before the server's deadline (counted from when it read the
    # headers) does, which the server can only count as Canceled. Only the server's own deadline is under test here.
    answer = await asyncio.to_thread(
        raw_grpc_call, observed.port, "/test.Slow/Wait", [("grpc-timeout", "300m")], grpc_frame(b"")
    )
    assert answer.get("grpc-status") == str(grpc.StatusCode.DEADLINE_EXCEEDED.value[0]), answer
    await observed.wait_for("grpc_server_handled_total", {**SLOW, "grpc_code": "DeadlineExceeded"}, 1)
    assert observed.sample("grpc_server_started_total", SLOW) == 1
    assert observed.sample("grpc_server_handled_total", {**SLOW, "grpc_code": "Canceled"}) == 0
    assert observed.sample("grpc_server_msg_sent_total", SLOW) == 0


@pytest.mark.parametrize(
    ("remaining", "code"),
    [
        (None, grpc.StatusCode.CANCELLED),  # no deadline: only the client can have cancelled
        (60.0, grpc.StatusCode.CANCELLED),
        (CANCEL_AT_DEADLINE_SECONDS * 2, grpc.StatusCode.CANCELLED),
        (CANCEL_AT_DEADLINE_SECONDS, grpc.StatusCode.DEADLINE_EXCEEDED),
        (0.01, grpc.StatusCode.DEADLINE_EXCEEDED),  # the client's cancel at its deadline, ahead of the server's
        (0.0, grpc.StatusCode.DEADLINE_EXCEEDED),
        (-0.5, grpc.StatusCode.DEADLINE_EXCEEDED),
    ],
)
def test_a_cancel_at_the_deadline_is_counted_deadline_exceeded(remaining: float | None, code: grpc.StatusCode) -> None:
    assert cancelled_code(remaining) is code


async def test_a_call_the_client_cancels_is_canceled(observed: Observed) -> None:
    call = observed.channel.unary_unary("/test.Slow/Wait")(b"", timeout=60)
    await observed.wait_for("grpc_server_started_total", SLOW, 1)
    call.cancel()
    await observed.wait_for("grpc_server_handled_total", {**SLOW, "grpc_code": "Canceled"}, 1)
    assert observed.sample("grpc_server_handled_total", {**SLOW, "grpc_code": "DeadlineExceeded"}) == 0


async def test_health_watch_counts_every_message_it_sends(observed: Observed) -> None:
    await observed.health.set("", health_pb2.HealthCheckResponse.NOT_SERVING)
    watch = health_pb2_grpc.HealthStub(observed.channel).Watch(health_pb2.HealthCheckRequest(service=""))
    assert (await watch.read()).status == health_pb2.HealthCheckResponse.NOT_SERVING
    await observed.health.set("", health_pb2.HealthCheckResponse.SERVING)
    assert (await watch.read()).status == health_pb2.HealthCheckResponse.SERVING
    watch.cancel()
    await observed.wait_for("grpc_server_handled_total", {**WATCH, "grpc_code": "Canceled"}, 1)
    assert observed.sample("grpc_server_started_total", WATCH) == 1
    assert observed.sample("grpc_server_msg_received_total", WATCH) == 1
    assert observed.sample("grpc_server_msg_sent_total", WATCH) == 2


async def _log_and_echo(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
    logging.getLogger("verdict.test").warning("inside the call")
    return request


async def test_log_records_carry_the_call_method_request_id_and_deadline(caplog: pytest.LogCaptureFixture) -> None:
    server = grpc.aio.server(interceptors=[MetricsInterceptor(Metrics(CollectorRegistry()))])
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                "test.Log", {"Echo": grpc.unary_unary_rpc_method_handler(_log_and_echo)}
            ),
        )
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    caplog.handler.addFilter(CallContextFilter())
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            echo = channel.unary_unary("/test.Log/Echo")
            await echo(b"x", timeout=30, metadata=(("x-request-id", "req-42"),))
    finally:
        await server.stop(0)
    inside = [r for r in caplog.records if r.getMessage() == "inside the call"]
    assert len(inside) == 1
    call = inside[0].call  # type: ignore[attr-defined]
    assert call.startswith("Echo request_id=req-42 deadline=")
    assert call.endswith("s")
    outside = logging.LogRecord("x", logging.INFO, __file__, 1, "outside", None, None)
    assert CallContextFilter().filter(outside)
    assert outside.call == "-"  # type: ignore[attr-defined]
