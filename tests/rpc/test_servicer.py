"""The rpc layer's translations, without a server: proto to domain, domain to proto, and errors to rich status.

End-to-end behaviour over a real channel lives in tests/e2e/; these pin each conversion on its own.
"""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import json_format
from google.rpc import code_pb2, error_details_pb2, status_pb2

from verdict.errors import (
    DeadlineTooShort,
    FailedPrecondition,
    Internal,
    InvalidArgument,
    InvalidConfig,
    PermissionDenied,
    ResourceExhausted,
    Unavailable,
    VerdictError,
)
from verdict.evaluators import EvaluationResult
from verdict.rpc import (
    SERVICE_DESCRIPTOR,
    VERDICT_TO_PROTO,
    VerdictServicer,
    evaluation_input,
    evaluation_to_proto,
    evaluator_config,
    to_status,
    verification_to_proto,
    verify_input,
)
from verdict.v1 import verdict_pb2
from verdict.verify.model import BlockCheck, SecondOpinionResult, Verdict, Verification


def test_a_typed_member_becomes_the_plain_dict_with_whole_numbers() -> None:
    config = verdict_pb2.EvaluatorConfig(source="${captured.x.output}")
    json_format.ParseDict({"operator": "ge", "target": 3}, config.output_numeric)
    assert evaluator_config(config) == {
        "type": "output_numeric",
        "operator": "ge",
        "target": 3,
        "source": "${captured.x.output}",
    }
    assert isinstance(evaluator_config(config)["target"], int)


def test_the_yaml_member_is_parsed_as_an_evaluate_block() -> None:
    config = verdict_pb2.EvaluatorConfig(yaml="evaluate:\n  type: exit_code\n")
    assert evaluator_config(config) == {"type": "exit_code"}


def test_no_member_is_missing_evaluator() -> None:
    with pytest.raises(InvalidConfig) as raised:
        evaluator_config(verdict_pb2.EvaluatorConfig())
    assert (raised.value.reason, raised.value.field) == ("MISSING_EVALUATOR", "config")


def test_source_in_both_places_is_refused() -> None:
    config = verdict_pb2.EvaluatorConfig(yaml="type: exit_code\nsource: a", source="b")
    with pytest.raises(InvalidConfig, match="both"):
        evaluator_config(config)


def test_evaluation_input_carries_every_field_and_whole_numbers_in_context() -> None:
    request = verdict_pb2.EvaluateRequest(output="out", exit_code=2, state=b"v1:x", workspace="w")
    request.config.exit_code.SetInParent()
    request.context.update({"captured": {"x": {"exit_code": 0.0, "ratio": 0.5}}})
    domain = evaluation_input(request)
    assert (domain.output, domain.exit_code, domain.state, domain.workspace) == ("out", 2, b"v1:x", "w")
    assert domain.context == {"captured": {"x": {"exit_code": 0, "ratio": 0.5}}}
    assert isinstance(domain.context["captured"]["x"]["exit_code"], int)
    assert evaluation_input(verdict_pb2.EvaluateRequest(config=request.config)).context == {}


def test_evaluation_result_to_proto() -> None:
    response = evaluation_to_proto(EvaluationResult("yes", {"value": 5, "list": [1, "a"]}, b"v1:t"))
    assert response.verdict == "yes"
    assert response.state == b"v1:t"
    assert json_format.MessageToDict(response.details) == {"value": 5.0, "list": [1.0, "a"]}


def test_verify_input_and_verification_round_trip() -> None:
    request = verdict_pb2.VerifyResponseRequest(
        text="t", finish_reason="length", has_tool_calls=True, completion_tokens=7, request_text="r", model="m"
    )
    domain = verify_input(request)
    assert (domain.text, domain.finish_reason, domain.has_tool_calls) == ("t", "length", True)
    assert (domain.completion_tokens, domain.request_text, domain.model) == (7, "r", "m")

    verification = Verification(
        Verdict.MALFORMED,
        "python block 0 does not parse",
        (BlockCheck(0, "python", Verdict.MALFORMED, "invalid syntax", 1, 2),),
        SecondOpinionResult(Verdict.OK, "fine", "claude-code"),
    )
    response = verification_to_proto(verification)
    assert response.verdict == verdict_pb2.VERIFY_VERDICT_MALFORMED
    assert response.failed
    assert response.detail == "python block 0 does not parse"
    assert [(c.block_index, c.language, c.line, c.error_line) for c in response.checks] == [(0, "python", 1, 2)]
    assert response.second_opinion.verdict == verdict_pb2.VERIFY_VERDICT_OK
    assert response.second_opinion.host == "claude-code"
    assert not verification_to_proto(Verification(Verdict.OK)).HasField("second_opinion")


def test_every_domain_verdict_has_a_proto_value() -> None:
    assert set(VERDICT_TO_PROTO) == set(Verdict)


def _decoded(error: VerdictError) -> tuple[status_pb2.Status, list[object]]:
    status = to_status(error)
    trailers = dict(status.trailing_metadata)
    rich = status_pb2.Status.FromString(trailers["grpc-status-details-bin"])
    details: list[object] = []
    for packed in rich.details:
        for kind in (error_details_pb2.ErrorInfo, error_details_pb2.BadRequest):
            if packed.Is(kind.DESCRIPTOR):
                message = kind()
                packed.Unpack(message)
                details.append(message)
    return rich, details


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (InvalidArgument("bad", field="output"), code_pb2.INVALID_ARGUMENT),
        (InvalidConfig("bad key", field="config.key"), code_pb2.INVALID_ARGUMENT),
        (PermissionDenied("outside"), code_pb2.PERMISSION_DENIED),
        (ResourceExhausted("full"), code_pb2.RESOURCE_EXHAUSTED),
        (DeadlineTooShort("late"), code_pb2.DEADLINE_EXCEEDED),
        (FailedPrecondition("no root"), code_pb2.FAILED_PRECONDITION),
        (Unavailable("draining"), code_pb2.UNAVAILABLE),
        (Internal("internal error"), code_pb2.INTERNAL),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, VerdictError) else str(value),
)
def test_each_error_maps_to_its_code_with_exactly_one_error_info(error: VerdictError, code: int) -> None:
    rich, details = _decoded(error)
    assert rich.code == code
    infos = [detail for detail in details if isinstance(detail, error_details_pb2.ErrorInfo)]
    assert len(infos) == 1
    assert (infos[0].reason, infos[0].domain) == (error.reason, "verdict.v1")
    requests = [detail for detail in details if isinstance(detail, error_details_pb2.BadRequest)]
    assert len(requests) == (1 if isinstance(error, InvalidArgument) else 0)


def test_bad_request_names_the_field_and_metadata_travels() -> None:
    _, details = _decoded(InvalidConfig("config.key is wrong", field="config.key", metadata={"limitBytes": "5"}))
    info, bad_request = details
    assert isinstance(info, error_details_pb2.ErrorInfo)
    assert dict(info.metadata) == {"field": "config.key", "limitBytes": "5"}
    assert isinstance(bad_request, error_details_pb2.BadRequest)
    assert bad_request.field_violations[0].field == "config.key"


def test_caller_influenced_strings_are_clipped() -> None:
    status = to_status(InvalidConfig("é" * 20_000, field="config." + "k" * 1000, metadata={"echo": "x" * 1000}))
    assert status.code is grpc.StatusCode.INVALID_ARGUMENT
    assert len(status.details.encode()) <= 512
    assert status.details.endswith("…")
    rich, details = _decoded(InvalidConfig("é" * 20_000, field="f", metadata={"echo": "x" * 1000}))
    info = details[0]
    assert isinstance(info, error_details_pb2.ErrorInfo)
    assert len(info.metadata["echo"].encode()) <= 256
    assert len(rich.message.encode()) <= 512


def test_the_servicer_serves_every_rpc_in_the_proto() -> None:
    assert all(callable(getattr(VerdictServicer, method.name, None)) for method in SERVICE_DESCRIPTOR.methods)
