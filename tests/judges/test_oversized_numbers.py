"""A judge's reply with a number no count or score can have (a 5000-digit integer in the answer, a 400-digit usage
count) is a malfunctioning judge: an `error` verdict with `api_error` and `oversized_number`, never INTERNAL. The
same replies were INTERNAL errors (Python's 4,300-digit parse limit; a float overflow in the token metric)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.judges.support import FakeJudges, details, envelope, llm_request
from verdict.v1 import verdict_pb2

HUGE = "9" * 5000


def _answer_with_huge_confidence() -> str:
    return (
        json.dumps({**json.loads(envelope("claude-code", "success-structured.json")), "structured_output": 0})[:-2]
        + f'{{"verdict": "yes", "confidence": {HUGE}, "reason": "r", "verdict_a": "yes", "verdict_b": "no"}}}}'
    )


def _answer_with_huge_usage() -> str:
    reply = json.loads(envelope("claude-code", "success-structured.json"))
    reply["structured_output"] = {
        "verdict": "yes",
        "confidence": 1,
        "reason": "r",
        "verdict_a": "yes",
        "verdict_b": "no",
    }
    text = json.dumps(reply)
    return text.replace('"output_tokens": 85', '"output_tokens": ' + "7" * 400)


def _comparator() -> verdict_pb2.EvaluateRequest:
    return verdict_pb2.EvaluateRequest(
        config=verdict_pb2.EvaluatorConfig(comparator=verdict_pb2.ComparatorConfig(baseline="old output")),
        output="new output",
    )


def _contract() -> verdict_pb2.EvaluateRequest:
    pair = verdict_pb2.ContractPair(producer="a.py", consumer="b.js", producer_content="{}", consumer_content="x")
    return verdict_pb2.EvaluateRequest(
        config=verdict_pb2.EvaluatorConfig(contract=verdict_pb2.ContractConfig(pairs=[pair]))
    )


REQUESTS: dict[str, Callable[[], verdict_pb2.EvaluateRequest]] = {
    "llm_structured": lambda: llm_request(prompt="did it pass?"),
    "comparator": _comparator,
    "contract": _contract,
}


def _flags(evaluator: str, found: dict[str, Any]) -> dict[str, Any]:
    if evaluator == "contract":
        return dict(found["pair_results"][0])
    return found


@pytest.mark.parametrize("reply", [_answer_with_huge_confidence, _answer_with_huge_usage], ids=["answer", "usage"])
@pytest.mark.parametrize("evaluator", list(REQUESTS))
async def test_an_oversized_number_from_a_judge_is_a_judge_malfunction(
    serve: Any, fake_judges: FakeJudges, evaluator: str, reply: Callable[[], str]
) -> None:
    text = reply()
    assert json.loads(text, parse_int=str)  # the reply is valid JSON: only its numbers are absurd
    fake_judges.scenario({"stdout": text})
    async with serve() as stub:
        response = await stub.Evaluate(REQUESTS[evaluator](), timeout=30)
    assert response.verdict == "error"
    found = _flags(evaluator, details(response))
    assert found.get("api_error") is True, found
    assert found.get("oversized_number") is True, found
