"""batch_response under max_batch_bytes: an answer too large for one message keeps every item's result, failing only
the items whose answers do not fit (the largest first), each with its own RESOURCE_EXHAUSTED."""

from __future__ import annotations

from google.rpc import code_pb2

from verdict.rpc.batch import batch_response
from verdict.v1 import verdict_pb2


def _answer(size: int) -> verdict_pb2.EvaluateResponse:
    return verdict_pb2.EvaluateResponse(verdict="yes", state=b"s" * size)


def test_an_answer_that_fits_is_untouched() -> None:
    outcomes = [_answer(100) for _ in range(5)]
    response = batch_response(verdict_pb2.BatchEvaluateResponse, outcomes, 10_000)
    assert [result.response for result in response.results] == outcomes


def test_an_oversized_answer_fails_only_the_items_that_do_not_fit() -> None:
    outcomes = [_answer(1000) for _ in range(469)] + [_answer(200_000), _answer(150_000)]
    limit = 700_000
    whole = batch_response(verdict_pb2.BatchEvaluateResponse, outcomes)
    assert whole.ByteSize() > limit
    response = batch_response(verdict_pb2.BatchEvaluateResponse, outcomes, limit)
    assert response.ByteSize() <= limit
    assert len(response.results) == len(outcomes)
    failed = [index for index, result in enumerate(response.results) if result.HasField("error")]
    assert failed == [469]  # the largest answer alone is enough to make the rest fit
    error = response.results[469].error
    assert error.code == code_pb2.RESOURCE_EXHAUSTED
    assert "did not fit" in error.message
    assert all(result.response.verdict == "yes" for i, result in enumerate(response.results) if i != 469)
