"""Decoding failed calls into VerdictRpcError, including statuses a real server would not send."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import any_pb2, message
from google.rpc import code_pb2, error_details_pb2, status_pb2

from tests.clients.fakes import Recorder, fake_server
from verdict_client import ClientConfig, FieldViolation, RetryPolicy, VerdictClient, VerdictRpcError


def _packed(detail: message.Message) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(detail)
    return packed


def _call_failing_with(status: status_pb2.Status, code: grpc.StatusCode) -> VerdictRpcError:
    recorder = Recorder(failures=1, failure_code=code, failure_status=status)
    config = ClientConfig(retry=RetryPolicy(max_attempts=1))
    with (
        fake_server(recorder) as port,
        VerdictClient(f"127.0.0.1:{port}", config=config) as client,
        pytest.raises(VerdictRpcError) as caught,
    ):
        client.verify_response("x")
    return caught.value


def _invalid_argument_status(message: str) -> status_pb2.Status:
    return status_pb2.Status(
        code=code_pb2.INVALID_ARGUMENT,
        message=message,
        details=[
            _packed(
                error_details_pb2.ErrorInfo(
                    reason="REQUEST_TOO_LARGE", domain="verdict.v1", metadata={"field": "text", "limitBytes": "4"}
                )
            ),
            _packed(
                error_details_pb2.BadRequest(
                    field_violations=[
                        error_details_pb2.BadRequest.FieldViolation(field="text", description="too long"),
                        error_details_pb2.BadRequest.FieldViolation(field="model", description="not UTF-8"),
                    ]
                )
            ),
        ],
    )


def test_error_info_and_every_field_violation_are_decoded() -> None:
    error = _call_failing_with(_invalid_argument_status("attempt 1 refused"), grpc.StatusCode.INVALID_ARGUMENT)
    assert error.code is grpc.StatusCode.INVALID_ARGUMENT
    assert error.message == "attempt 1 refused"
    assert (error.reason, error.domain) == ("REQUEST_TOO_LARGE", "verdict.v1")
    assert dict(error.metadata) == {"field": "text", "limitBytes": "4"}
    assert error.field_violations == (FieldViolation("text", "too long"), FieldViolation("model", "not UTF-8"))
    assert error.field == "text"
    assert error.status.code == code_pb2.INVALID_ARGUMENT


def test_details_survive_a_status_whose_message_was_rewritten() -> None:
    error = _call_failing_with(_invalid_argument_status("the original text"), grpc.StatusCode.INVALID_ARGUMENT)
    assert error.message == "attempt 1 refused"
    assert error.reason == "REQUEST_TOO_LARGE"
    assert error.field == "text"


def test_a_status_without_details_leaves_reason_empty() -> None:
    recorder = Recorder(failures=1, failure_code=grpc.StatusCode.INTERNAL)
    with (
        fake_server(recorder) as port,
        VerdictClient(f"127.0.0.1:{port}") as client,
        pytest.raises(VerdictRpcError) as caught,
    ):
        client.list_evaluators()
    error = caught.value
    assert error.code is grpc.StatusCode.INTERNAL
    assert (error.reason, error.domain, dict(error.metadata), error.field_violations) == ("", "", {}, ())
    assert error.field is None
    assert error.status is None
    assert str(error) == "INTERNAL: attempt 1 refused"


def test_metadata_is_read_only() -> None:
    error = VerdictRpcError(grpc.StatusCode.NOT_FOUND, "gone", metadata={"a": "b"})
    with pytest.raises(TypeError):
        error.metadata["a"] = "c"  # type: ignore[index]
    assert "NOT_FOUND" in repr(error)
