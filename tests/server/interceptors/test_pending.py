"""The bound on calls waiting for their request message, with admission's gate, on a real grpc.aio server: a call the
server is about to refuse is answered without its message, and one admitted after all still gets its message."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import grpc.aio
import pytest
from prometheus_client import CollectorRegistry

from verdict.metrics import Metrics
from verdict.rpc import SERVICE_NAME
from verdict.server.interceptors.admission import Admission, AdmissionInterceptor, AdmissionLimits
from verdict.server.interceptors.chain import Chain, ChainedRegistration
from verdict.server.interceptors.observe import MetricsInterceptor
from verdict.server.interceptors.pending import PendingMessages

METHOD = f"/{SERVICE_NAME}/VerifyResponse"
HOLD = b"hold"


class Echo:
    """Answers with the request's bytes; a request of `HOLD` keeps its slot until `release` is set."""

    def __init__(self) -> None:
        self.holding = asyncio.Event()
        self.release = asyncio.Event()

    async def __call__(self, request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
        if request == HOLD:
            self.holding.set()
            await self.release.wait()
        return request


async def _serve(
    admission: Admission, gate: Callable[[AdmissionInterceptor], Any], echo: Echo, registry: CollectorRegistry
) -> tuple[grpc.aio.Server, int]:
    admitting = AdmissionInterceptor(admission)
    metrics = Metrics(registry)
    # the message timeout is far past any call's deadline here: a call that waited for its message would fail
    pending = PendingMessages(64, 600.0, metrics.calls_in_flight_rejected, gate=gate(admitting))
    server = grpc.aio.server()
    chain = Chain([pending, MetricsInterceptor(metrics), admitting])
    ChainedRegistration(server, chain).add_registered_method_handlers(
        SERVICE_NAME, {"VerifyResponse": grpc.unary_unary_rpc_method_handler(echo)}
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, port


def _counted(registry: CollectorRegistry, name: str) -> float | None:
    labels = {"grpc_type": "unary", "grpc_service": SERVICE_NAME, "grpc_method": "VerifyResponse"}
    return registry.get_sample_value(name, labels)


def _admission(running: int, queued: int) -> Admission:
    return Admission(AdmissionLimits(running, queued, 0.0), Metrics(CollectorRegistry()))


async def test_a_call_the_server_is_about_to_refuse_is_answered_without_waiting_for_its_message() -> None:
    echo = Echo()
    admission = _admission(running=1, queued=0)
    registry = CollectorRegistry()
    server, port = await _serve(admission, lambda admitting: admitting.gate, echo, registry)
    never = asyncio.Event()

    async def no_message() -> AsyncIterator[bytes]:
        await never.wait()  # headers sent, the message never comes
        yield b""

    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            holder = asyncio.ensure_future(channel.unary_unary(METHOD)(HOLD, timeout=60))
            await echo.holding.wait()
            assert admission.would_refuse()
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await channel.stream_unary(METHOD)(no_message(), timeout=30)
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED  # not DEADLINE_EXCEEDED after 30 s
            echo.release.set()
            assert await holder == HOLD
        assert _counted(registry, "grpc_server_started_total") == 2
        assert _counted(registry, "grpc_server_msg_received_total") == 1  # the refused call's message was never read
    finally:
        never.set()
        await server.stop(None)


async def test_a_call_passed_on_unread_and_admitted_after_all_reads_its_message() -> None:
    echo = Echo()
    admission = _admission(running=2, queued=0)
    always: Callable[[], bool] = lambda: True  # noqa: E731 (the gate predicts a refusal admission will not make)
    registry = CollectorRegistry()
    server, port = await _serve(admission, lambda _admitting: lambda _method: always, echo, registry)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            assert await channel.unary_unary(METHOD)(b"the message", timeout=30) == b"the message"
        assert admission.running == 0  # the slot it took was given back
        assert _counted(registry, "grpc_server_msg_received_total") == 1
    finally:
        await server.stop(None)
