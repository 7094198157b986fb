"""Both Python clients send the new members (promptfoo, openai_grader, trajectory) and the provider facts they read
(tool calls as OpenAI returns them, finish reason, latency, cost, logprobs, tools), against a real server."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.support import ServerProcess
from verdict_client import AsyncVerdictClient, VerdictClient
from verdict_client._calls import evaluate_item, uses_judge
from verdict_client.protos import verdict_pb2

OPENAI_CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
OPENAI_TOOL = {
    "type": "function",
    "function": {"name": "get_weather", "parameters": {"type": "object", "required": ["city"]}},
}


@pytest.fixture
def client(server: ServerProcess) -> Iterator[VerdictClient]:
    with VerdictClient(server.target) as verdict:
        yield verdict


def test_promptfoo_with_every_fact(client: VerdictClient) -> None:
    config = verdict_pb2.EvaluatorConfig(
        promptfoo=json.dumps(
            [
                {"type": "finish-reason", "value": "stop"},
                {"type": "latency", "threshold": 500},
                {"type": "cost", "threshold": 0.01},
                {"type": "perplexity", "threshold": 2},
                {"type": "is-valid-openai-tools-call"},
                {"type": "tool-call-f1", "value": ["get_weather"]},
            ]
        )
    )
    result = client.evaluate(
        config,
        "",
        tool_calls=[OPENAI_CALL],
        finish_reason="stop",
        latency_ms=120.0,
        cost=0.001,
        logprobs=[-0.1, -0.2],
        tools=[OPENAI_TOOL],
    )
    assert result.verdict == "yes", result.details


def test_an_openai_grader_as_a_mapping_block(client: VerdictClient) -> None:
    grader = {
        "type": "string_check",
        "name": "g",
        "input": "{{sample.output_text}}",
        "reference": "ok",
        "operation": "eq",
    }
    assert client.evaluate({"type": "openai_grader", "grader": grader}, "ok").verdict == "yes"


def test_a_trajectory_with_the_typed_member(client: VerdictClient) -> None:
    config = verdict_pb2.EvaluatorConfig(
        trajectory=verdict_pb2.TrajectoryConfig(
            expected=[verdict_pb2.ExpectedToolCall(name="get_weather", arguments='{"city": "Paris"}')]
        )
    )
    assert client.evaluate(config, tool_calls=[OPENAI_CALL]).verdict == "yes"
    assert client.evaluate(config, tool_calls=[{"name": "get_weather", "arguments": {"city": "Rome"}}]).verdict == "no"


async def test_the_asyncio_client_sends_the_facts(server: ServerProcess) -> None:
    async with AsyncVerdictClient(server.target) as client:
        result = await client.evaluate(
            {"type": "trajectory", "expected": [{"name": "get_weather"}]}, tool_calls=[OPENAI_CALL]
        )
    assert result.verdict == "yes"


def test_a_batch_item_takes_the_facts() -> None:
    request = evaluate_item({"config": {"type": "exit_code"}, "finish_reason": "stop", "latency_ms": 3.0})
    assert request.finish_reason == "stop"
    assert request.latency_ms == 3.0


@pytest.mark.parametrize(
    ("config", "judged"),
    [
        (verdict_pb2.EvaluatorConfig(openai_grader='{"type": "score_model", "input": []}'), True),
        (verdict_pb2.EvaluatorConfig(openai_grader='{"type": "string_check"}'), False),
        (
            verdict_pb2.EvaluatorConfig(yaml=json.dumps({"type": "openai_grader", "grader": {"type": "label_model"}})),
            True,
        ),
        (verdict_pb2.EvaluatorConfig(promptfoo="- type: contains\n  value: x\n"), False),
        (verdict_pb2.EvaluatorConfig(promptfoo="- type: llm-rubric\n  value: polite\n"), True),
    ],
)
def test_model_graders_get_the_judge_deadline(config: verdict_pb2.EvaluatorConfig, judged: bool) -> None:
    assert uses_judge(config) is judged
