"""The synchronous client against a real `verdict serve` child process."""

from __future__ import annotations

import grpc
import pytest

from tests.support import ServerProcess
from verdict_client import (
    ClientConfig,
    Evaluation,
    VerdictClient,
    VerdictRpcError,
    VerifyVerdict,
)
from verdict_client.protos import verdict_pb2


@pytest.fixture
def client(server: ServerProcess):
    with VerdictClient(server.target) as verdict:
        yield verdict


def test_verify_response_ok_for_a_parsing_block(client: VerdictClient) -> None:
    result = client.verify_response("Here:\n\n```python\nprint('hi')\n```\n", finish_reason="stop")
    assert result.verdict is VerifyVerdict.OK
    assert not result.failed
    assert [(c.block_index, c.language, c.verdict) for c in result.checks] == [(0, "python", VerifyVerdict.OK)]
    assert result.raw.verdict == verdict_pb2.VERIFY_VERDICT_OK


def test_verify_response_truncated_by_finish_reason(client: VerdictClient) -> None:
    result = client.verify_response("The answer is", finish_reason="length")
    assert result.verdict is VerifyVerdict.TRUNCATED
    assert result.failed


def test_verify_response_malformed_block_names_its_line(client: VerdictClient) -> None:
    result = client.verify_response("Fix:\n\n```python\ndef broken(:\n    pass\n```\n", finish_reason="stop")
    assert result.verdict is VerifyVerdict.MALFORMED
    assert result.failed
    (check,) = result.checks
    assert check.verdict is VerifyVerdict.MALFORMED
    assert check.line == 3
    assert check.error_line == 4


def test_evaluate_typed_config(client: VerdictClient) -> None:
    config = verdict_pb2.EvaluatorConfig(exit_code=verdict_pb2.ExitCodeConfig())
    assert client.evaluate(config, "done", exit_code=0).verdict == "yes"
    assert client.evaluate(config, "failed", exit_code=1).verdict == "no"


def test_evaluate_mapping_config_is_an_evaluate_block(client: VerdictClient) -> None:
    block = {"type": "output_numeric", "operator": "ge", "target": 3}
    result = client.evaluate(block, "5")
    assert isinstance(result, Evaluation)
    assert result.verdict == "yes"
    assert result.details["value"] == 5
    assert isinstance(result.details["value"], int)
    assert client.evaluate(block, "2").verdict == "no"


def test_evaluate_yaml_text_config(client: VerdictClient) -> None:
    result = client.evaluate("type: output_contains\npattern: 'PASS(ED)?'\n", "3 tests PASSED")
    assert result.verdict == "yes"


def test_action_stall_state_token_round_trip(client: VerdictClient) -> None:
    block = {"type": "action_stall", "max_repeat": 2}
    same = {"context": {"action": "run the tests"}}
    first = client.evaluate(block, context=same)
    second = client.evaluate(block, context=same, state=first.state)
    third = client.evaluate(block, context=same, state=second.state)
    assert [first.verdict, second.verdict, third.verdict] == ["yes", "yes", "no"]
    assert first.state
    assert second.state
    moved_on = client.evaluate(block, context={"context": {"action": "edit the code"}}, state=third.state)
    assert moved_on.verdict == "yes"


def test_action_stall_without_the_token_starts_over(client: VerdictClient) -> None:
    block = {"type": "action_stall", "max_repeat": 1}
    first = client.evaluate(block, context={"context": {"action": "ls"}})
    assert client.evaluate(block, context={"context": {"action": "ls"}}, state=first.state).verdict == "no"
    assert client.evaluate(block, context={"context": {"action": "ls"}}).verdict == "yes"


def test_list_evaluators(client: VerdictClient) -> None:
    catalogue = client.list_evaluators()
    assert list(catalogue.types) == sorted(catalogue.types)
    assert {"exit_code", "action_stall", "llm_structured"} <= set(catalogue.types)
    stall = catalogue.get("action_stall")
    assert stall is not None
    assert stall.stateful
    assert {f.name for f in stall.fields} >= {"track", "max_repeat"}
    assert catalogue.get("no_such_type") is None
    assert catalogue.raw.evaluators[0].type == catalogue.types[0]


def test_list_evaluators_tells_which_languages_are_checked(client: VerdictClient) -> None:
    catalogue = client.list_evaluators()
    javascript = catalogue.language("JS")
    assert javascript is not None
    assert (javascript.name, javascript.checked, javascript.metric_label) == ("javascript", True, "javascript")
    assert "node" in javascript.aliases
    assert javascript.sees
    dockerfile = catalogue.language("docker")
    assert dockerfile is not None
    assert (dockerfile.name, dockerfile.checked) == ("dockerfile", False)
    assert "grammar" in dockerfile.unchecked_reason
    assert catalogue.language("klingon") is None


def test_invalid_config_raises_with_reason_and_field(client: VerdictClient) -> None:
    with pytest.raises(VerdictRpcError) as caught:
        client.evaluate({"type": "output_numeric", "target": 3, "operatr": "eq"}, "5")
    error = caught.value
    assert error.code is grpc.StatusCode.INVALID_ARGUMENT
    assert error.reason == "INVALID_EVALUATOR_CONFIG"
    assert error.domain == "verdict.v1"
    assert error.field_violations
    assert error.field is not None
    assert "operatr" in error.field or "operatr" in error.field_violations[0].description
    assert error.metadata["field"] == error.field
    assert isinstance(error.__cause__, grpc.RpcError)
    assert "INVALID_ARGUMENT [INVALID_EVALUATOR_CONFIG]" in str(error)


def test_unknown_evaluator_type_is_invalid_argument(client: VerdictClient) -> None:
    with pytest.raises(VerdictRpcError) as caught:
        client.evaluate({"type": "no_such_evaluator"}, "x")
    assert caught.value.code is grpc.StatusCode.INVALID_ARGUMENT
    assert caught.value.reason == "INVALID_EVALUATOR_CONFIG"


def test_refused_connection_is_unavailable_after_retries() -> None:
    config = ClientConfig(timeout_seconds=5)
    with VerdictClient("127.0.0.1:1", config=config) as client, pytest.raises(VerdictRpcError) as caught:
        client.list_evaluators()
    assert caught.value.code is grpc.StatusCode.UNAVAILABLE


def test_config_type_is_checked() -> None:
    with VerdictClient("127.0.0.1:1") as client, pytest.raises(TypeError, match="EvaluatorConfig"):
        client.evaluate(42, "x")  # type: ignore[arg-type]
