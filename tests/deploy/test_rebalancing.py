"""The server sets a maximum connection age, so clients rebalance when the HPA adds pods.

The config key exists and is range-checked (tests/config/test_keys.py), but nothing showed that the server really closes
an aged connection, or that the deployed configuration turns it on. A client channel that stays READY for ever
would keep every call on the pods that existed when it connected.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import grpc.aio
import pytest

from tests.deploy.support import effective_config, render, verdict_container, verdict_deployment
from tests.support import make_config, serving
from verdict.v1 import verdict_pb2


@pytest.mark.parametrize("overlay", ["dev", "production"])
def test_deployed_servers_close_connections_by_age(overlay: str, tmp_path: Path) -> None:
    objects = render(f"overlays/{overlay}")
    deployment = verdict_deployment(objects)
    config = effective_config(objects, deployment, verdict_container(deployment), tmp_path)
    assert config.max_connection_age_seconds > 0
    assert config.max_connection_age_grace_seconds > 0


async def test_the_server_sends_an_aged_connection_away_and_the_client_reconnects() -> None:
    config = make_config(max_connection_age_seconds=1, max_connection_age_grace_seconds=1)
    async with serving(config) as running:
        await running.stub.ListEvaluators(verdict_pb2.ListEvaluatorsRequest(), timeout=30)
        assert running.channel.get_state() is grpc.ChannelConnectivity.READY
        # GOAWAY at the connection's age: the channel leaves READY without anything on the client side asking it to
        await asyncio.wait_for(running.channel.wait_for_state_change(grpc.ChannelConnectivity.READY), 30)
        assert running.channel.get_state() is not grpc.ChannelConnectivity.READY
        # and the next call opens a new connection (re-resolving the target, which is what spreads load)
        response = await running.stub.ListEvaluators(verdict_pb2.ListEvaluatorsRequest(), timeout=30)
    assert response.evaluators
