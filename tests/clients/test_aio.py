"""The asyncio client against a real `verdict serve` child process."""

from __future__ import annotations

import grpc
import pytest

from tests.support import ServerProcess
from verdict_client import AsyncVerdictClient, VerdictRpcError, VerifyVerdict
from verdict_client.protos import verdict_pb2


async def test_verify_response(server: ServerProcess) -> None:
    async with AsyncVerdictClient(server.target) as client:
        ok = await client.verify_response('```json\n{"a": 1}\n```\n', finish_reason="stop")
        broken = await client.verify_response('```json\n{"a": }\n```\n', finish_reason="stop")
    assert ok.verdict is VerifyVerdict.OK
    assert broken.verdict is VerifyVerdict.MALFORMED
    assert broken.checks[0].language == "json"


async def test_evaluate_stall_round_trip(server: ServerProcess) -> None:
    block = verdict_pb2.EvaluatorConfig(action_stall=verdict_pb2.ActionStallConfig(max_repeat=1))
    async with AsyncVerdictClient(server.target) as client:
        first = await client.evaluate(block, context={"context": {"action": "ls"}})
        second = await client.evaluate(block, context={"context": {"action": "ls"}}, state=first.state)
    assert (first.verdict, second.verdict) == ("yes", "no")


async def test_list_evaluators(server: ServerProcess) -> None:
    async with AsyncVerdictClient(server.target) as client:
        catalogue = await client.list_evaluators()
    assert "exit_code" in catalogue.types


async def test_error_details(server: ServerProcess) -> None:
    async with AsyncVerdictClient(server.target) as client:
        with pytest.raises(VerdictRpcError) as caught:
            await client.evaluate({"type": "output_numeric", "operator": "about", "target": 1}, "1")
    error = caught.value
    assert error.code is grpc.StatusCode.INVALID_ARGUMENT
    assert error.reason == "INVALID_EVALUATOR_CONFIG"
    assert error.field is not None
    assert "operator" in error.field
    assert isinstance(error.__cause__, grpc.aio.AioRpcError)


async def test_close_leaves_a_passed_in_channel_open(server: ServerProcess) -> None:
    async with grpc.aio.insecure_channel(server.target) as channel:
        async with AsyncVerdictClient(server.target, channel=channel) as client:
            await client.list_evaluators()
        again = AsyncVerdictClient(server.target, channel=channel)
        assert "exit_code" in (await again.list_evaluators()).types
