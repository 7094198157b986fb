"""One rule at the edge: caller data and judge data never become INTERNAL or UNKNOWN, and a server out of
descriptors says UNAVAILABLE with a retry hint. Each case here was INTERNAL or UNKNOWN before. The tests that use the
`fuzz` fixture also end with its checks: no process of any call left, no descriptor growth."""

from __future__ import annotations

import errno
import math
import socket
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import any_pb2, json_format, struct_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2

from tests.reliability.support import FuzzServer
from tests.support import lower_descriptor_limit, open_descriptors, start_server_process, stop_server_process
from verdict.errors import resource_exhausted
from verdict.rpc import to_status
from verdict.v1 import verdict_pb2, verdict_pb2_grpc

BAD_UTF8 = b"\x0a\x02\xff\xfe"  # field 1 (a string in every request below) holding invalid UTF-8


def _details(error: Any) -> list[Any]:
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            return list(status.details)
    return []


def _unpack(details: list[any_pb2.Any], kind: type[Any]) -> Any:
    for detail in details:
        if detail.Is(kind.DESCRIPTOR):
            message = kind()
            detail.Unpack(message)
            return message
    return None


def _field(error: Any) -> str:
    bad_request = _unpack(_details(error), error_details_pb2.BadRequest)
    assert bad_request is not None, error
    return str(bad_request.field_violations[0].field)


def _with_value(config: dict[str, Any], path: str, number: float) -> verdict_pb2.EvaluateRequest:
    request = verdict_pb2.EvaluateRequest(output="3")
    json_format.ParseDict({"config": config}, request)
    message: Any = request
    *parents, last = path.split(".")
    for name in parents:
        message = getattr(message, name)
    target = getattr(message, last)
    if isinstance(target, struct_pb2.Struct):
        target["x"] = 1
        target.fields["x"].number_value = number
    else:
        target.number_value = number
    return request


NON_FINITE_FIELDS = [
    ({"outputNumeric": {"operator": "eq"}}, "config.output_numeric.target"),
    ({"outputJson": {"path": ".a", "operator": "eq"}}, "config.output_json.target"),
    ({"convergence": {}}, "config.convergence.target"),
    ({"convergence": {}}, "config.convergence.tolerance"),
    ({"classify": {}}, "config.classify.line"),
    ({"llmStructured": {"prompt": "p"}}, "config.llm_structured.schema"),
    ({"exitCode": {}}, "context"),
]


def _refused(call: Any, request: Any) -> Any:
    with pytest.raises(grpc.RpcError) as caught:
        call(request, timeout=10)
    return caught.value


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize(("config", "path"), NON_FINITE_FIELDS, ids=[path for _, path in NON_FINITE_FIELDS])
def test_a_non_finite_number_is_invalid_argument_naming_the_field(
    fuzz: FuzzServer, config: dict[str, Any], path: str, number: float
) -> None:
    error = _refused(fuzz.stub.Evaluate, _with_value(config, path, number))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert _field(error).startswith(path)


@pytest.mark.parametrize(
    "workspace", ["a" * 300, "a/" * 3000, "é" * 200], ids=["component", "path-max", "component-bytes"]
)
def test_a_path_the_os_refuses_is_invalid_argument(fuzz: FuzzServer, workspace: str) -> None:
    request = verdict_pb2.EvaluateRequest(
        config=verdict_pb2.EvaluatorConfig(diff_stall=verdict_pb2.DiffStallConfig()), workspace=workspace
    )
    error = _refused(fuzz.stub.Evaluate, request)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert _field(error) == "workspace"


def test_a_baseline_path_the_os_refuses_is_invalid_argument_naming_it(fuzz: FuzzServer) -> None:
    request = verdict_pb2.EvaluateRequest(
        config=verdict_pb2.EvaluatorConfig(comparator=verdict_pb2.ComparatorConfig(baseline_path="b" * 300))
    )
    error = _refused(fuzz.stub.Evaluate, request)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert _field(error) == "config.baseline_path"


@pytest.mark.parametrize("method", ["Check", "Watch"])
def test_the_health_service_answers_undecodable_bytes_with_invalid_argument(fuzz: FuzzServer, method: str) -> None:
    path = f"/grpc.health.v1.Health/{method}"

    def ask(data: bytes, timeout: float) -> None:
        if method == "Check":
            fuzz.channel.unary_unary(path)(data, timeout=timeout)
            return
        for _ in fuzz.channel.unary_stream(path)(data, timeout=timeout):
            pass

    error = _refused(ask, BAD_UTF8)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert _field(error) == "service"
    health = fuzz.channel.unary_unary(
        "/grpc.health.v1.Health/Check",
        request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
        response_deserializer=health_pb2.HealthCheckResponse.FromString,
    )
    assert health(health_pb2.HealthCheckRequest(service=""), timeout=10).status == 1, "good requests still work"


def test_reflection_answers_undecodable_bytes_with_invalid_argument(fuzz: FuzzServer) -> None:
    call = fuzz.channel.stream_stream(
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )

    def ask(data: bytes, timeout: float) -> None:
        for _ in call(iter([data]), timeout=timeout):
            pass

    assert _refused(ask, BAD_UTF8).code() == grpc.StatusCode.INVALID_ARGUMENT


def test_descriptor_exhaustion_is_unavailable_with_a_retry_hint_never_internal(tmp_path: Path) -> None:
    """Slow /metrics clients take every descriptor under a low RLIMIT_NOFILE: a shell check and a judge call are
    then UNAVAILABLE with a RetryInfo (retry shortly), counted in verdict_resource_exhaustion_total."""
    from tests.judges.support import FakeJudges, answer_stdout

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    judges = FakeJudges(bin_dir)
    judges.install("claude")
    judges.scenario({"stdout": answer_stdout("claude-code", {"verdict": "yes", "confidence": 1, "reason": "r"})})
    server = start_server_process("--judge-host", "claude-code", env={"PATH": judges.path, "HOME": str(tmp_path)})
    hogs: list[socket.socket] = []
    try:
        with grpc.insecure_channel(server.target) as channel:
            stub = verdict_pb2_grpc.VerdictServiceStub(channel)
            shell = verdict_pb2.VerifyResponseRequest(text="```bash\necho hi\n```\n", finish_reason="stop")
            assert stub.VerifyResponse(shell, timeout=30).verdict == verdict_pb2.VERIFY_VERDICT_OK
            assert server.metrics_port is not None
            limit = lower_descriptor_limit(server.process.pid, headroom=24)
            deadline = time.monotonic() + 20
            while open_descriptors(server.process.pid) < limit and time.monotonic() < deadline:
                hogs.append(socket.create_connection(("127.0.0.1", server.metrics_port)))
                time.sleep(0.01)
            judge = verdict_pb2.EvaluateRequest(
                config=verdict_pb2.EvaluatorConfig(llm_structured=verdict_pb2.LlmStructuredConfig(prompt="ok?")),
                output="x",
            )
            for call, request in ((stub.VerifyResponse, shell), (stub.Evaluate, judge)):
                with pytest.raises(grpc.RpcError) as caught:
                    call(request, timeout=30)
                error: Any = caught.value
                assert error.code() == grpc.StatusCode.UNAVAILABLE, error.details()
                retry = _unpack(_details(error), error_details_pb2.RetryInfo)
                assert retry is not None
                assert retry.retry_delay.ToNanoseconds() > 0
            for hog in hogs:
                hog.close()
            hogs.clear()
            codes = []
            for _ in range(100):  # once the descriptors are back, the same call succeeds
                try:
                    verdict = stub.VerifyResponse(shell, timeout=30).verdict
                    break
                except grpc.RpcError as again:
                    codes.append(again.code())
                    time.sleep(0.1)
            assert verdict == verdict_pb2.VERIFY_VERDICT_OK
            assert set(codes) <= {grpc.StatusCode.UNAVAILABLE}
    finally:
        for hog in hogs:
            hog.close()
        stop_server_process(server)
        print("".join(server.log_lines)[-6000:])
    assert server.process.returncode == 0


@pytest.mark.parametrize(
    ("error", "resource"),
    [
        (OSError(errno.EMFILE, "Too many open files"), "file_descriptors"),
        (OSError(errno.ENFILE, "File table overflow"), "file_descriptors"),
        (OSError(errno.ENOMEM, "Cannot allocate memory"), "memory"),
        (OSError(errno.EAGAIN, "Resource temporarily unavailable"), "processes"),
        (MemoryError(), "memory"),
    ],
)
def test_every_exhausted_resource_is_unavailable_with_a_retry_hint(error: BaseException, resource: str) -> None:
    """The same mapping serves EMFILE (tested end to end above), ENOMEM and EAGAIN from fork, which a test running
    as root cannot provoke reliably (RLIMIT_NPROC does not bind root)."""
    exhausted = resource_exhausted(error, what="start bash")
    assert exhausted is not None
    status = status_pb2.Status.FromString(dict(to_status(exhausted).trailing_metadata)["grpc-status-details-bin"])
    assert status.code == grpc.StatusCode.UNAVAILABLE.value[0]
    assert exhausted.metadata["resource"] == resource
    retry = _unpack(list(status.details), error_details_pb2.RetryInfo)
    assert retry is not None
    assert retry.retry_delay.ToNanoseconds() > 0


def test_other_os_errors_are_not_called_exhaustion() -> None:
    assert resource_exhausted(OSError(errno.ENOENT, "No such file"), what="x") is None
    assert resource_exhausted(ValueError("x"), what="x") is None
