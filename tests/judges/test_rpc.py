"""The judges end to end through the gRPC server: Evaluate with the fake judge CLI, VerifyResponse with a local HTTP
judge, and the statuses and kills the caller sees (deadline, saturation, cancellation, timeout)."""

from __future__ import annotations

import asyncio
import json

import grpc
import grpc.aio
import pytest

from tests.judges.support import RPC_OUTPUT, RPC_YES, answer_stdout, chat_body, details, envelope, llm_request
from verdict.v1 import verdict_pb2

OUTPUT = RPC_OUTPUT
YES = RPC_YES
pytestmark = pytest.mark.usefixtures("homes_under_scratch")


async def test_llm_structured_through_the_rpc(serve, fake_judges):
    fake_judges.answer("claude-code", YES)
    async with serve() as stub:
        response = await stub.Evaluate(llm_request(prompt="Did the tests pass?"), timeout=30)
    assert response.verdict == "yes"
    assert details(response)["evidence_verified"] is True
    [call] = fake_judges.calls()
    assert call["prompt"].startswith("Did the tests pass?")


async def test_a_fabricated_quote_is_no_through_the_rpc(serve, fake_judges):
    fake_judges.answer("claude-code", {**YES, "evidence": "0 failed, 42 passed"})
    async with serve() as stub:
        response = await stub.Evaluate(llm_request(), timeout=30)
    assert response.verdict == "no"
    assert details(response)["evidence_verified"] is False


async def test_the_yaml_form_reaches_the_same_judge(serve, fake_judges):
    fake_judges.answer("claude-code", YES)
    request = verdict_pb2.EvaluateRequest(
        config=verdict_pb2.EvaluatorConfig(yaml="type: llm_structured\nmin_confidence: 0.95\nuncertain_suffix: true\n"),
        output=OUTPUT,
    )
    async with serve() as stub:
        response = await stub.Evaluate(request, timeout=30)
    assert response.verdict == "yes_uncertain"


async def test_a_judge_that_is_not_logged_in_is_error_with_its_own_message(serve, fake_judges):
    fake_judges.scenario({"stdout": envelope("claude-code", "not-logged-in.json"), "rc": 1})
    async with serve() as stub:
        response = await stub.Evaluate(llm_request(), timeout=30)
    assert response.verdict == "error"
    assert details(response)["api_error"] is True
    error = details(response)["error"]
    assert error.startswith("claude CLI error: Not logged in · Please run /login (to authenticate this judge, set ")
    assert "ANTHROPIC_API_KEY" in error
    assert "CLAUDE_CODE_OAUTH_TOKEN" in error
    assert details(response)["credentials"] is True


async def test_comparator_position_bias_is_a_tie_through_the_rpc(serve, fake_judges):
    fake_judges.scenario(
        {"stdout": answer_stdout("claude-code", {"verdict_a": "yes", "verdict_b": "no", "confidence": 1, "reason": ""})}
    )
    request = verdict_pb2.EvaluateRequest(
        config=verdict_pb2.EvaluatorConfig(comparator=verdict_pb2.ComparatorConfig(baseline="old output")),
        output="new output",
    )
    async with serve() as stub:
        response = await stub.Evaluate(request, timeout=30)
    assert response.verdict == "tie"
    assert len(fake_judges.calls()) == 2


async def test_contract_through_the_rpc(serve, fake_judges):
    fake_judges.scenario(
        {"stdout": answer_stdout("claude-code", {"verdict": "no", "confidence": 0.8, "reason": "casing differs"})}
    )
    pair = verdict_pb2.ContractPair(
        producer="a.py", consumer="b.js", producer_content='{"userId": 1}', consumer_content="r.user_id"
    )
    request = verdict_pb2.EvaluateRequest(
        config=verdict_pb2.EvaluatorConfig(contract=verdict_pb2.ContractConfig(pairs=[pair]))
    )
    async with serve() as stub:
        response = await stub.Evaluate(request, timeout=30)
    assert response.verdict == "no"
    assert details(response)["pair_results"][0]["reason"] == "casing differs"


async def test_no_judge_starts_when_the_grpc_deadline_leaves_no_time(serve, fake_judges):
    fake_judges.answer("claude-code", YES)
    async with serve() as stub:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.Evaluate(llm_request(), timeout=1.0)
    assert caught.value.code() is grpc.StatusCode.DEADLINE_EXCEEDED
    assert fake_judges.calls() == []


async def test_a_hanging_judge_is_killed_at_its_timeout_through_the_rpc(serve, fake_judges):
    fake_judges.scenario({"hang": True, "orphan": True})
    async with serve(judge_timeout_seconds=1) as stub:
        response = await stub.Evaluate(llm_request(), timeout=30)
    assert response.verdict == "error"
    assert details(response)["timeout"] is True


async def test_saturation_and_client_cancellation(serve, fake_judges):
    fake_judges.scenario({"hang": True, "orphan": True})
    async with serve(max_concurrent_judges=1, judge_queue_size=0) as stub:
        first = stub.Evaluate(llm_request(), timeout=60)
        await fake_judges.wait_for_calls(1)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            # another question: the same one would wait for the first call's ruling (the ruling cache) instead
            await stub.Evaluate(llm_request(output="another output"), timeout=30)
        assert caught.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        # the leftover check (conftest) proves the judge and its orphan died with the cancelled call


async def test_verify_response_asks_a_local_model_for_a_second_opinion(serve, chat_server):
    chat_server.replies = [(200, chat_body(json.dumps({"ok": False, "reason": "ends mid-sentence"})))]
    request = verdict_pb2.VerifyResponseRequest(
        text="A long prose answer that goes on. " * 300 + "And then", completion_tokens=2000, request_text="Explain."
    )
    async with serve(second_opinion=True, second_opinion_host=chat_server.url) as stub:
        response = await stub.VerifyResponse(request, timeout=30)
    assert response.verdict == verdict_pb2.VERIFY_VERDICT_UNVERIFIABLE
    assert response.second_opinion.verdict == verdict_pb2.VERIFY_VERDICT_MALFORMED
    assert response.second_opinion.reason == "ends mid-sentence"
    assert response.second_opinion.host == "openai-compatible"


async def test_a_deeply_nested_judge_reply_is_an_error_verdict_not_internal(serve, fake_judges):
    fake_judges.scenario({"stdout": "[" * 100_000})
    async with serve() as stub:
        response = await stub.Evaluate(llm_request(), timeout=30)
    assert response.verdict == "error"
    assert "nested too deeply" in details(response)["error"]


async def test_a_huge_judge_answer_still_fits_in_the_response(serve, fake_judges):
    """A reason of 5 MB came back three times (reason, raw.reason, and as the message grew): over gRPC's 4 MiB, so
    the caller got RESOURCE_EXHAUSTED instead of its verdict."""
    fake_judges.answer("claude-code", {**YES, "reason": "r" * 5_000_000, "notes": ["n" * 1000] * 1000})
    async with serve() as stub:
        response = await stub.Evaluate(llm_request(), timeout=30)
    assert response.verdict == "yes"
    found = details(response)
    assert len(found["reason"]) < 5000
    assert found["raw_truncated"] is True
    assert found["raw"]["verdict"] == "yes"
    assert len(found["raw"]["reason"]) < 5000
    assert "notes" not in found["raw"]
    assert response.ByteSize() < 64 * 1024


async def test_a_comparator_runs_with_a_single_judge_slot_and_no_queue(serve, fake_judges):
    fake_judges.scenario(
        {"stdout": answer_stdout("claude-code", {"verdict_a": "yes", "verdict_b": "no", "confidence": 1, "reason": ""})}
    )
    request = verdict_pb2.EvaluateRequest(
        config=verdict_pb2.EvaluatorConfig(comparator=verdict_pb2.ComparatorConfig(baseline="old output")),
        output="new output",
    )
    async with serve(max_concurrent_judges=1, judge_queue_size=0) as stub:
        response = await stub.Evaluate(request, timeout=30)
    assert response.verdict == "tie"
    assert len(fake_judges.calls()) == 2


async def test_the_second_opinion_is_not_asked_when_the_grpc_deadline_leaves_no_time(serve, chat_server):
    request = verdict_pb2.VerifyResponseRequest(
        text="A long prose answer that goes on. " * 300 + "And then", completion_tokens=2000, request_text="Explain."
    )
    async with serve(second_opinion=True, second_opinion_host=chat_server.url) as stub:
        response = await stub.VerifyResponse(request, timeout=1.2)
    assert response.verdict == verdict_pb2.VERIFY_VERDICT_UNVERIFIABLE
    assert not response.HasField("second_opinion")
    assert chat_server.requests == []
