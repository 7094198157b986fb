"""Evaluate's families from other tools over a real gRPC server: a promptfoo config as its docs write one, an OpenAI
grader as its guide writes one, and an agent trajectory sent one step at a time; with the request facts, the typed
trajectory member and the `yaml` forms, and INVALID_ARGUMENT naming the field for what is refused."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import grpc
import pytest
import pytest_asyncio
from google.protobuf import json_format
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from tests.support import Running, make_config, serving
from verdict.v1 import verdict_pb2

pytestmark = pytest.mark.asyncio(loop_scope="module")

PROMPTFOO_ASSERT = """
# the assert list of a promptfooconfig.yaml test, as promptfoo's docs write them
- type: icontains
  value: paris
- type: not-contains
  value: London
- type: regex
  value: "^The capital"
- type: is-json
  weight: 0
  metric: json_shape
- type: latency
  threshold: 5000
- type: cost
  threshold: 0.01
- type: finish-reason
  value: stop
- type: tool-call-f1
  value: [lookup_city]
- type: assert-set
  threshold: 0.5
  assert:
    - type: starts-with
      value: The
    - type: word-count
      value: {min: 1, max: 3}
"""

GRADER = {
    "type": "text_similarity",
    "name": "similarity",
    "input": "{{sample.output_text}}",
    "reference": "{{item.reference_answer}}",
    "evaluation_metric": "rouge_l",
    "pass_threshold": 0.6,
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[Running]:
    async with serving(make_config()) as running:
        yield running


async def test_a_promptfoo_config_with_the_response_facts(server: Running) -> None:
    request = verdict_pb2.EvaluateRequest(
        config=verdict_pb2.EvaluatorConfig(promptfoo=PROMPTFOO_ASSERT),
        output="The capital of France is Paris.",
        finish_reason="stop",
        latency_ms=1200,
        cost=0.0004,
        tool_calls=[verdict_pb2.ToolCall(id="call_1", name="lookup_city", arguments='{"country": "France"}')],
    )
    response = await server.stub.Evaluate(request, timeout=30)
    details = json_format.MessageToDict(response.details)
    assert response.verdict == "yes", details
    assert [entry["type"] for entry in details["results"]][:3] == ["icontains", "not-contains", "regex"]
    assert details["named_scores"] == {"json_shape": 0.0}  # measured, never failing: weight 0
    assert details["results"][8]["pass"] is True  # the assert-set passes at its threshold despite word-count


async def test_a_missing_fact_is_error(server: Running) -> None:
    request = verdict_pb2.EvaluateRequest(
        config=verdict_pb2.EvaluatorConfig(promptfoo="- type: latency\n  threshold: 10\n"), output="x"
    )
    response = await server.stub.Evaluate(request, timeout=30)
    assert response.verdict == "error"


async def test_a_javascript_assertion_is_invalid_argument_naming_it(server: Running) -> None:
    request = verdict_pb2.EvaluateRequest(
        config=verdict_pb2.EvaluatorConfig(promptfoo='- type: javascript\n  value: "output.length > 1"\n')
    )
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await server.stub.Evaluate(request, timeout=30)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "javascript" in (refused.value.details() or "")
    status = rpc_status.from_call(refused.value)
    assert status is not None
    fields = []
    for detail in status.details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            fields = [violation.field for violation in bad.field_violations]
    assert fields == ["config.assert[0].type"]


async def test_an_openai_grader_reads_the_item_namespace(server: Running) -> None:
    request = verdict_pb2.EvaluateRequest(
        config=verdict_pb2.EvaluatorConfig(openai_grader=json.dumps(GRADER)),
        output="Paris is the capital of France",
    )
    request.context.update({"item": {"reference_answer": "The capital of France is Paris"}})
    response = await server.stub.Evaluate(request, timeout=30)
    details = json_format.MessageToDict(response.details)
    assert response.verdict == "yes", details
    assert details["implementation"]["package"] == "rouge-score"
    assert details["errors"]["invalid_variable_error"] is False


async def test_a_trajectory_one_step_at_a_time_with_the_typed_member(server: Running) -> None:
    config = verdict_pb2.EvaluatorConfig(
        trajectory=verdict_pb2.TrajectoryConfig(
            expected=[
                verdict_pb2.ExpectedToolCall(name="search", arguments='{"q": "flights to Paris"}'),
                verdict_pb2.ExpectedToolCall(
                    name="book", arguments='{"flight": "AF1", "at": "now"}', argument_modes={"at": "ignore"}
                ),
            ],
            match="in_order",
        )
    )
    first = await server.stub.Evaluate(
        verdict_pb2.EvaluateRequest(
            config=config, tool_calls=[verdict_pb2.ToolCall(name="search", arguments='{"q":"flights to Paris"}')]
        ),
        timeout=30,
    )
    assert first.verdict == "no"
    second = await server.stub.Evaluate(
        verdict_pb2.EvaluateRequest(
            config=config,
            state=first.state,
            tool_calls=[
                verdict_pb2.ToolCall(name="weather", arguments="{}"),
                verdict_pb2.ToolCall(name="book", arguments='{"at": "2026-12-02", "flight": "AF1"}'),
            ],
        ),
        timeout=30,
    )
    details = json_format.MessageToDict(second.details)
    assert second.verdict == "yes", details
    assert details["extra"] == [{"position": 1.0, "name": "weather"}]


async def test_a_trajectory_in_the_yaml_member(server: Running) -> None:
    block = "type: trajectory\nmatch: superset\nexpected:\n  - name: search\n    arguments: {q: cats}\n"
    request = verdict_pb2.EvaluateRequest(
        config=verdict_pb2.EvaluatorConfig(yaml=block),
        tool_calls=[
            verdict_pb2.ToolCall(name="search", arguments='{ "q" : "cats" }'),
            verdict_pb2.ToolCall(name="summarize", arguments="{}"),
        ],
    )
    response = await server.stub.Evaluate(request, timeout=30)
    assert response.verdict == "yes"


async def test_list_evaluators_lists_the_new_families(server: Running) -> None:
    listed = await server.stub.ListEvaluators(verdict_pb2.ListEvaluatorsRequest(), timeout=10)
    kinds = {entry.type: entry for entry in listed.evaluators}
    assert {"trajectory", "promptfoo", "openai_grader"} <= set(kinds)
    assert kinds["trajectory"].stateful
    assert kinds["promptfoo"].fields[0].name == "assert"
