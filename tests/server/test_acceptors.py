"""More outstanding call requests per method (verdict.server.acceptors) on real grpc.aio servers: calls taken in by
the extra accept coroutines are answered exactly as grpc.aio's own, the coroutines end with the server, and a grpcio
whose internals differ runs without them instead of failing."""

from __future__ import annotations

import asyncio
import logging

import grpc
import grpc.aio
import pytest

from verdict.server import acceptors
from verdict.server.accept import AcceptLoops

SERVICE = "test.Echo"


async def _echo(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
    await asyncio.sleep(0.01)  # calls overlap, so several requests are outstanding when they arrive
    return request[::-1]


def _loops() -> AcceptLoops:
    loops = AcceptLoops([], count=2, busy_services=(SERVICE,))
    handlers = {
        "Reverse": grpc.unary_unary_rpc_method_handler(_echo),
        "Other": grpc.unary_unary_rpc_method_handler(_echo),
    }
    loops.add_registered_method_handlers(SERVICE, handlers)
    return loops


async def _calls(port: int, count: int) -> list[bytes]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        reverse = channel.unary_unary(f"/{SERVICE}/Reverse")
        return list(await asyncio.gather(*(reverse(f"call {i}".encode(), timeout=60) for i in range(count))))


def test_the_internals_the_acceptors_use_are_those_of_this_grpcio() -> None:
    """The pinned grpcio must have them: a release that changes them fails here, not silently in production."""
    assert acceptors.available()


async def test_calls_accepted_by_the_extra_coroutines_are_answered_and_the_coroutines_end_with_the_server() -> None:
    loops = _loops()
    port = loops.add_insecure_port("127.0.0.1:0")
    await loops.start()
    try:
        assert len(loops.acceptors) == 2
        assert all(extra.running == 2 * acceptors.EXTRA_ACCEPTS for extra in loops.acceptors)  # both methods
        answers = await _calls(port, 200)
        assert answers == [f"call {i}".encode()[::-1] for i in range(200)]
        assert sum(extra.accepted for extra in loops.acceptors) > 0
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            with pytest.raises(grpc.aio.AioRpcError) as unknown:
                await channel.unary_unary("/test.Echo/Missing")(b"x", timeout=60)
        assert unknown.value.code() == grpc.StatusCode.UNIMPLEMENTED
    finally:
        await loops.stop(0)
    assert all(extra.running == 0 for extra in loops.acceptors)


async def test_a_grpcio_without_the_internals_serves_with_one_request_per_method(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(acceptors, "available", lambda: False)
    loops = _loops()
    port = loops.add_insecure_port("127.0.0.1:0")
    with caplog.at_level(logging.WARNING, logger="verdict.server"):
        await loops.start()
    try:
        assert loops.acceptors == []
        assert any("one outstanding call request per method" in r.getMessage() for r in caplog.records)
        assert await _calls(port, 20) == [f"call {i}".encode()[::-1] for i in range(20)]
    finally:
        await loops.stop(0)
