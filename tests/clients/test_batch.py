"""Both Python clients' batch methods and batching iterators against a real `verdict serve` child process."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest

from tests.support import ServerProcess, start_server_process, stop_server_process
from verdict.v1 import verdict_pb2
from verdict_client import AsyncVerdictClient, Evaluation, VerdictClient, VerdictRpcError, Verification, VerifyVerdict

ANSWERS = [
    ("```python\nx = 1\n```\n", VerifyVerdict.OK),
    ("```python\ndef f(:\n```\n", VerifyVerdict.MALFORMED),
    ("Just prose.", VerifyVerdict.UNVERIFIABLE),
]


def _answers(count: int) -> Iterator[str]:
    """A generator, not a list: the helpers must read any iterable lazily."""
    for index in range(count):
        yield ANSWERS[index % len(ANSWERS)][0]


def _expected(count: int) -> list[VerifyVerdict]:
    return [ANSWERS[index % len(ANSWERS)][1] for index in range(count)]


def test_batch_verify_responses_in_order_with_per_item_errors(server: ServerProcess) -> None:
    items: list[object] = ["```json\n{}\n```\n", {"text": "The answer is", "finish_reason": "length"}]
    items.append(verdict_pb2.VerifyResponseRequest(text="```sh\nif true; then\n```\n"))
    with VerdictClient(server.target) as client:
        results = client.batch_verify_responses(items)  # type: ignore[arg-type]
    assert [r.verdict for r in results if isinstance(r, Verification)] == [
        VerifyVerdict.OK,
        VerifyVerdict.TRUNCATED,
        VerifyVerdict.MALFORMED,
    ]


def test_batch_evaluate_returns_a_failed_item_as_its_error(server: ServerProcess) -> None:
    items: list[dict[str, object]] = [
        {"config": {"type": "exit_code"}, "exit_code": 1},
        {"config": "type: output_numeric\noperator: about\ntarget: 1", "output": "1"},
        {"config": verdict_pb2.EvaluatorConfig(exit_code=verdict_pb2.ExitCodeConfig())},
    ]
    with VerdictClient(server.target) as client:
        results = client.batch_evaluate(items)
    assert isinstance(results[0], Evaluation)
    assert results[0].verdict == "no"
    assert isinstance(results[1], VerdictRpcError)
    assert results[1].code is grpc.StatusCode.INVALID_ARGUMENT
    assert results[1].reason == "INVALID_EVALUATOR_CONFIG"
    assert results[1].field is not None
    assert "operator" in results[1].field
    assert isinstance(results[2], Evaluation)
    assert results[2].verdict == "yes"


def test_verify_many_chunks_any_iterable_and_keeps_order(server: ServerProcess) -> None:
    with VerdictClient(server.target) as client:
        results = list(client.verify_many(_answers(250), batch_size=40))
    assert [r.verdict for r in results if isinstance(r, Verification)] == _expected(250)


def test_evaluate_many(server: ServerProcess) -> None:
    items = ({"config": {"type": "exit_code"}, "exit_code": index % 2} for index in range(7))
    with VerdictClient(server.target) as client:
        verdicts = [r.verdict for r in client.evaluate_many(items, batch_size=3) if isinstance(r, Evaluation)]
    assert verdicts == ["yes", "no", "yes", "no", "yes", "no", "yes"]


def test_a_batch_over_the_server_limit_raises() -> None:
    server = start_server_process("--max-batch-items", "2")
    try:
        with VerdictClient(server.target) as client, pytest.raises(VerdictRpcError) as caught:
            client.batch_verify_responses(["a", "b", "c"])
        assert (caught.value.code, caught.value.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BATCH_TOO_LARGE")
        with VerdictClient(server.target) as client:  # the helper's chunks fit
            assert len(list(client.verify_many(["a", "b", "c"], batch_size=2))) == 3
    finally:
        stop_server_process(server)


def test_bad_items_and_sizes_fail_in_the_client() -> None:
    with VerdictClient("127.0.0.1:1") as client:
        with pytest.raises(TypeError):
            client.batch_verify_responses([3])  # type: ignore[list-item]
        with pytest.raises(TypeError):
            client.batch_evaluate([{"output": "no config"}])
        with pytest.raises(ValueError, match="batch_size"):
            list(client.verify_many(["a"], batch_size=0))


async def test_async_batches_and_iterators(server: ServerProcess) -> None:
    async with AsyncVerdictClient(server.target) as client:
        batch = await client.batch_verify_responses(list(_answers(6)))
        streamed = [r async for r in client.verify_many(_answers(25), batch_size=10)]
        evaluated = await client.batch_evaluate([{"config": {"type": "exit_code"}, "exit_code": 1}])
        many = [r async for r in client.evaluate_many([{"config": {"type": "exit_code"}}] * 3, batch_size=2)]
    assert [r.verdict for r in batch if isinstance(r, Verification)] == _expected(6)
    assert [r.verdict for r in streamed if isinstance(r, Verification)] == _expected(25)
    assert [r.verdict for r in evaluated if isinstance(r, Evaluation)] == ["no"]
    assert [r.verdict for r in many if isinstance(r, Evaluation)] == ["yes"] * 3
