"""BatchVerifyResponses and BatchEvaluate against a real server: order, per-item errors, limits, the shared deadline."""

from __future__ import annotations

import asyncio

import grpc
import grpc.aio
import pytest
from google.rpc import code_pb2, error_details_pb2
from grpc_status import rpc_status

from tests.support import Running, make_config, serving
from verdict.evaluators import EvaluationInput, EvaluationResult
from verdict.v1 import verdict_pb2

V = verdict_pb2


def _verify(text: str, finish_reason: str = "stop") -> verdict_pb2.VerifyResponseRequest:
    return V.VerifyResponseRequest(text=text, finish_reason=finish_reason)


def _evaluate(yaml: str, output: str = "", exit_code: int = 0) -> verdict_pb2.EvaluateRequest:
    return V.EvaluateRequest(config=V.EvaluatorConfig(yaml=yaml), output=output, exit_code=exit_code)


def _reason(status: object) -> str:
    for detail in status.details:  # type: ignore[attr-defined]
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return info.reason
    return ""


async def test_results_come_back_one_per_item_in_order(running: Running) -> None:
    texts = [
        ("```python\nx = 1\n```\n", "stop", V.VERIFY_VERDICT_OK),
        ("The answer is", "length", V.VERIFY_VERDICT_TRUNCATED),
        ("```python\ndef f(:\n```\n", "stop", V.VERIFY_VERDICT_MALFORMED),
        ("Just prose.", "stop", V.VERIFY_VERDICT_UNVERIFIABLE),
        ("```sh\nif true; then echo\n```\n", "stop", V.VERIFY_VERDICT_MALFORMED),
        ('```json\n{"a": 1}\n```\n', "stop", V.VERIFY_VERDICT_OK),
    ] * 5
    request = V.BatchVerifyResponsesRequest(items=[_verify(text, reason) for text, reason, _ in texts])
    response = await running.stub.BatchVerifyResponses(request, timeout=60)
    assert [result.WhichOneof("outcome") for result in response.results] == ["response"] * len(texts)
    assert [result.response.verdict for result in response.results] == [expected for *_, expected in texts]
    single = await running.stub.VerifyResponse(_verify(texts[2][0]), timeout=10)
    assert response.results[2].response == single


async def test_a_failing_item_fails_alone_with_its_own_status(running: Running) -> None:
    request = V.BatchEvaluateRequest(
        items=[
            _evaluate("type: exit_code", exit_code=0),
            _evaluate("type: output_numeric\noperator: about\ntarget: 3", output="5"),
            _evaluate("type: no_such_evaluator"),
            _evaluate("type: output_numeric\noperator: ge\ntarget: 3", output="5"),
            _evaluate("type: exit_code", exit_code=1),
        ]
    )
    response = await running.stub.BatchEvaluate(request, timeout=60)
    outcomes = [result.WhichOneof("outcome") for result in response.results]
    assert outcomes == ["response", "error", "error", "response", "response"]
    assert [response.results[i].response.verdict for i in (0, 3, 4)] == ["yes", "yes", "no"]
    for index in (1, 2):
        error = response.results[index].error
        assert error.code == code_pb2.INVALID_ARGUMENT
        assert _reason(error) == "INVALID_EVALUATOR_CONFIG"
    # The same item alone fails the same way, so a batch result means what a single call means.
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await running.stub.Evaluate(request.items[1], timeout=10)
    single = rpc_status.from_call(caught.value)
    assert single is not None
    assert (single.code, single.message) == (response.results[1].error.code, response.results[1].error.message)
    sample = running.registry.get_sample_value
    assert sample("verdict_batch_items_total", {"method": "BatchEvaluate", "outcome": "ok"}) == 3
    assert sample("verdict_batch_items_total", {"method": "BatchEvaluate", "outcome": "error"}) == 2


async def test_an_empty_batch_is_an_empty_answer(running: Running) -> None:
    assert len((await running.stub.BatchVerifyResponses(V.BatchVerifyResponsesRequest(), timeout=10)).results) == 0


async def test_a_batch_over_the_item_or_byte_limit_is_refused_whole() -> None:
    async with serving(make_config(max_batch_items=3, max_batch_bytes=4096)) as running:
        for items in ([_verify("x")] * 4, [_verify("y" * 1500)] * 3):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await running.stub.BatchVerifyResponses(V.BatchVerifyResponsesRequest(items=items), timeout=10)
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            status = rpc_status.from_call(caught.value)
            assert status is not None
            assert _reason(status) == "BATCH_TOO_LARGE"
        three = V.BatchVerifyResponsesRequest(items=[_verify("x")] * 3)
        ok = await running.stub.BatchVerifyResponses(three, timeout=10)
        assert len(ok.results) == 3


async def test_an_item_over_max_message_bytes_fails_alone() -> None:
    async with serving(make_config(max_message_bytes=2048, max_batch_bytes=64 * 1024)) as running:
        request = V.BatchVerifyResponsesRequest(items=[_verify("ok"), _verify("z" * 4000), _verify("ok")])
        response = await running.stub.BatchVerifyResponses(request, timeout=10)
        assert [r.WhichOneof("outcome") for r in response.results] == ["response", "error", "response"]
        assert response.results[1].error.code == code_pb2.RESOURCE_EXHAUSTED
        assert _reason(response.results[1].error) == "REQUEST_TOO_LARGE"
        with pytest.raises(grpc.aio.AioRpcError) as caught:  # a single call keeps its own limit
            await running.stub.VerifyResponse(_verify("z" * 4000), timeout=10)
        assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


async def test_the_deadline_is_shared_and_unfinished_items_are_reported_in_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two slots; item 1 and 2 never finish, so 3 and 4 never start. The call still answers OK before its deadline,
    with item 0's verdict and DEADLINE_EXCEEDED for the rest, each saying whether it had started."""
    async with serving(make_config(batch_concurrency=2)) as running:
        evaluations = running.app.components.evaluations
        real = evaluations.evaluate
        never = asyncio.Event()

        async def evaluate(request: EvaluationInput, *, deadline: float | None = None) -> EvaluationResult:
            if request.output == "slow":
                await never.wait()
            return await real(request, deadline=deadline)

        monkeypatch.setattr(evaluations, "evaluate", evaluate)
        outputs = ["fast", "slow", "slow", "fast", "fast"]
        request = V.BatchEvaluateRequest(items=[_evaluate("type: exit_code", output=o) for o in outputs])
        response = await running.stub.BatchEvaluate(request, timeout=3)
        assert [r.WhichOneof("outcome") for r in response.results] == ["response"] + ["error"] * 4
        assert response.results[0].response.verdict == "yes"
        errors = [r.error for r in response.results[1:]]
        assert {e.code for e in errors} == {code_pb2.DEADLINE_EXCEEDED}
        assert {_reason(e) for e in errors} == {"BATCH_DEADLINE_EXCEEDED"}
        started = [("did not finish" in e.message, "was not started" in e.message) for e in errors]
        assert started == [(True, False), (True, False), (False, True), (False, True)]
        sample = running.registry.get_sample_value
        assert sample("verdict_batch_items_total", {"method": "BatchEvaluate", "outcome": "deadline_exceeded"}) == 4
        labels = {"grpc_type": "unary", "grpc_service": "verdict.v1.VerdictService", "grpc_method": "BatchEvaluate"}
        assert sample("grpc_server_handled_total", {**labels, "grpc_code": "OK"}) == 1


async def test_a_batch_shares_one_inline_parse_budget() -> None:
    """A batch is one call: past its inline budget, its items' blocks parse in the parse pool, not on the loop."""
    block = "```python\n" + "x = [1, 2, 3]\n" * 100 + "```\n"
    async with serving(make_config(inline_parse_budget_bytes=4096)) as running:
        items = [_verify(block)] * 6
        response = await running.stub.BatchVerifyResponses(V.BatchVerifyResponsesRequest(items=items), timeout=60)
        assert [r.response.verdict for r in response.results] == [V.VERIFY_VERDICT_OK] * 6
        pooled = running.registry.get_sample_value("verdict_parse_pool_tasks_total", {"outcome": "ok"})
        assert pooled == 4  # 1,400-byte blocks: two fit the 4 KB budget, the other four went to the pool
        single = await running.stub.VerifyResponse(_verify(block), timeout=10)
        assert single.verdict == V.VERIFY_VERDICT_OK
        assert running.registry.get_sample_value("verdict_parse_pool_tasks_total", {"outcome": "ok"}) == 4
