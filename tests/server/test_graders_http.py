"""OpenAI's graders run/validate endpoints on the HTTP port, with the request and response shapes of OpenAI's API
(the SDKs' documented examples), through the same door as Evaluate: access control, metrics, errors."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import Running, make_config, serving
from verdict.evaluators.graders import ERROR_FLAGS

RUN = "/v1/fine_tuning/alpha/graders/run"
VALIDATE = "/v1/fine_tuning/alpha/graders/validate"

SDK_EXAMPLE = {
    "grader": {"input": "input", "name": "name", "operation": "eq", "reference": "reference", "type": "string_check"},
    "model_sample": "model_sample",
}
"""The openai-node README's graders.run example, verbatim."""

MULTI_EXAMPLE = {
    "grader": {
        "type": "multi",
        "name": "example multi grader",
        "graders": {
            "name": {
                "name": "name",
                "type": "text_similarity",
                "input": "{{sample.output_json.name}}",
                "reference": "{{item.name}}",
                "evaluation_metric": "fuzzy_match",
                "pass_threshold": 0.9,
            },
            "email": {
                "name": "email",
                "type": "string_check",
                "input": "{{sample.output_json.email}}",
                "reference": "{{item.email}}",
                "operation": "eq",
            },
        },
        "calculate_output": "(name + email) / 2",
    },
    "model_sample": '{"name": "Ada Lovelace", "email": "ada@example.com"}',
    "item": {"name": "Ada Lovelace", "email": "ada@example.com"},
}
"""The shape of the graders guide's multi-grader example (name and email of an extracted contact)."""


def _post(url: str, body: Any, headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(  # noqa: S310 - a local test server
        url, data=data, headers={"Content-Type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:  # noqa: S310 - a local test server
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.fixture
async def http() -> AsyncIterator[tuple[Running, str]]:
    async with serving(make_config(http_address="127.0.0.1:0", max_message_bytes=64 * 1024)) as running:
        assert running.app.http is not None
        yield running, f"http://127.0.0.1:{running.app.http.port}"


async def test_the_sdk_example_runs_with_openais_response_shape(http: tuple[Running, str]) -> None:
    running, base = http
    status, body = await asyncio.to_thread(_post, base + RUN, SDK_EXAMPLE)
    assert status == 200
    assert body["reward"] == 0.0  # "model_sample" is not "reference"
    assert set(body) == {"reward", "metadata", "sub_rewards", "model_grader_token_usage_per_model"}
    metadata = body["metadata"]
    assert metadata["name"] == "name"
    assert metadata["type"] == "string_check"
    assert set(ERROR_FLAGS) <= set(metadata["errors"])
    assert not any(metadata["errors"][flag] for flag in ERROR_FLAGS)
    assert metadata["scores"] == {"name": 0.0}
    assert isinstance(metadata["execution_time"], float)
    handled = running.registry.get_sample_value(
        "grpc_server_handled_total",
        {
            "grpc_type": "unary",
            "grpc_service": "verdict.v1.VerdictService",
            "grpc_method": "Evaluate",
            "grpc_code": "OK",
        },
    )
    assert handled == 1


async def test_a_multi_grader_with_item_and_output_json(http: tuple[Running, str]) -> None:
    _, base = http
    status, body = await asyncio.to_thread(_post, base + RUN, MULTI_EXAMPLE)
    assert status == 200, body
    assert body["reward"] == 1.0
    assert body["sub_rewards"] == {"name": 1.0, "email": 1.0}
    mismatch = {**MULTI_EXAMPLE, "item": {"name": "Ada Lovelace", "email": "ada@other.com"}}
    status, body = await asyncio.to_thread(_post, base + RUN, mismatch)
    assert body["reward"] == 0.5


async def test_a_base_url_ending_in_v1_works_too(http: tuple[Running, str]) -> None:
    _, base = http
    status, body = await asyncio.to_thread(_post, base + "/fine_tuning/alpha/graders/run", SDK_EXAMPLE)
    assert status == 200
    assert body["metadata"]["type"] == "string_check"


async def test_validate_answers_the_grader(http: tuple[Running, str]) -> None:
    _, base = http
    status, body = await asyncio.to_thread(_post, base + VALIDATE, {"grader": SDK_EXAMPLE["grader"]})
    assert status == 200
    assert body == {"grader": SDK_EXAMPLE["grader"]}


@pytest.mark.parametrize("path", [RUN, VALIDATE])
async def test_a_python_grader_is_refused_in_openais_error_shape(http: tuple[Running, str], path: str) -> None:
    _, base = http
    python = {"grader": {"type": "python", "name": "p", "source": "def grade(sample, item): return 1.0"}}
    status, body = await asyncio.to_thread(_post, base + path, {**python, "model_sample": "x"})
    assert status == 400
    assert body["error"]["type"] == "invalid_request_error"
    assert body["error"]["param"] == "config.grader.type"
    assert body["error"]["code"] == "GRADER_NOT_SERVED"


@pytest.mark.parametrize(("body", "status"), [(b"{not json", 400), (b'{"model_sample": "x"}', 400)])
async def test_bodies_that_are_not_requests(http: tuple[Running, str], body: bytes, status: int) -> None:
    _, base = http
    got, answer = await asyncio.to_thread(_post, base + RUN, body)
    assert got == status
    assert "error" in answer


async def test_an_oversized_body_is_413(http: tuple[Running, str]) -> None:
    _, base = http
    got, answer = await asyncio.to_thread(_post, base + RUN, {**SDK_EXAMPLE, "model_sample": "x" * 70_000})
    assert got == 413
    assert "error" in answer


async def test_the_connect_routes_still_answer(http: tuple[Running, str]) -> None:
    _, base = http
    status, body = await asyncio.to_thread(_post, base + "/verdict.v1.VerdictService/ListEvaluators", {})
    assert status == 200
    assert "openai_grader" in {entry["type"] for entry in body["evaluators"]}


POLICY = """
principals:
  runner:
    rpcs: ["*"]
    judges: false
  reader:
    rpcs: [ListEvaluators]
"""


async def test_access_control_is_evaluates(tmp_path: Path) -> None:
    (tmp_path / "policy.yaml").write_text(POLICY)
    tokens = tmp_path / "tokens"
    tokens.mkdir()
    (tokens / "runner").write_text("runner-token-0123456789abcdef\n")
    (tokens / "reader").write_text("reader-token-0123456789abcdef\n")
    config = make_config(
        http_address="127.0.0.1:0",
        auth_policy_file=str(tmp_path / "policy.yaml"),
        auth_tokens_dir=str(tokens),
        judge_host="http://127.0.0.1:9",
    )
    score_model = {
        "grader": {
            "type": "score_model",
            "name": "s",
            "input": [{"role": "user", "content": "{{sample.output_text}}"}],
        },
        "model_sample": "x",
    }
    async with serving(config) as running:
        assert running.app.http is not None
        base = f"http://127.0.0.1:{running.app.http.port}"
        status, body = await asyncio.to_thread(_post, base + RUN, SDK_EXAMPLE)
        assert status == 401
        assert body["error"]["code"] == "CREDENTIALS_MISSING"
        reader = {"Authorization": "Bearer reader-token-0123456789abcdef"}
        assert (await asyncio.to_thread(_post, base + VALIDATE, SDK_EXAMPLE, reader))[0] == 403
        runner = {"Authorization": "Bearer runner-token-0123456789abcdef"}
        assert (await asyncio.to_thread(_post, base + RUN, SDK_EXAMPLE, runner))[0] == 200
        status, body = await asyncio.to_thread(_post, base + RUN, score_model, runner)
        assert status == 403  # a model grader asks a judge, which this grant does not include
        assert body["error"]["code"] == "JUDGES_NOT_ALLOWED"
