"""Several accept loops on one port: every server of the group serves the port, and an address another process
already holds is refused at start-up instead of silently shared (SO_REUSEPORT would allow that)."""

from __future__ import annotations

import socket
from typing import Any

import grpc
import grpc.aio
import pytest

from verdict.errors import ConfigError
from verdict.server.accept import AcceptLoops


def _served(seen: set[int], index: int) -> grpc.GenericRpcHandler:
    async def call(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
        seen.add(index)
        return request

    return grpc.method_handlers_generic_handler("t.Echo", {"Call": grpc.unary_unary_rpc_method_handler(call)})


async def test_every_server_of_the_group_accepts_on_the_one_port() -> None:
    group = AcceptLoops([], count=4)
    seen: set[int] = set()
    for index, server in enumerate(group.servers):
        server.add_generic_rpc_handlers((_served(seen, index),))
    port = group.add_insecure_port("127.0.0.1:0")
    assert port > 0
    await group.start()
    try:
        for _ in range(40):  # new connections until the kernel has given one to every server (it hashes them)
            options = [("grpc.use_local_subchannel_pool", 1)]
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=options) as channel:
                assert await channel.unary_unary("/t.Echo/Call")(b"x", timeout=30) == b"x"
            if len(seen) == 4:
                break
        assert len(seen) > 1  # connections reached more than one accept loop
    finally:
        await group.stop(0)


async def test_an_address_in_use_is_refused_not_shared() -> None:
    with socket.socket() as holder:  # another server of the same kind: it too allows SO_REUSEPORT sharing
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(ConfigError) as refused:
            AcceptLoops([], count=4).add_insecure_port(f"127.0.0.1:{port}")
    assert refused.value.key == "grpc_address"
