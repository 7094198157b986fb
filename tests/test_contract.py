"""The contract, driven by the proto's own descriptors: whatever the proto declares is served, wrapped and handled.

Adding an RPC, an evaluator type or a VerifyVerdict value to the proto makes one of these fail until the server,
the Python clients and the mappings catch up, so the proto cannot drift ahead of (or behind) the code silently.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pool, json_format, message_factory
from google.protobuf.descriptor import FieldDescriptor, MethodDescriptor
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

from tests.support import ServerProcess, start_server_process, stop_server_process
from verdict.v1 import verdict_pb2
from verdict_client import AsyncVerdictClient, VerdictClient, VerifyVerdict
from verdict_client.results import VERDICT_FROM_PROTO

SERVICE = verdict_pb2.DESCRIPTOR.services_by_name["VerdictService"]
METHODS: list[MethodDescriptor] = list(SERVICE.methods)
CONFIG_KINDS = [f for f in verdict_pb2.EvaluatorConfig.DESCRIPTOR.oneofs_by_name["kind"].fields if f.name != "yaml"]
VERDICT_VALUES = verdict_pb2.VerifyVerdict.DESCRIPTOR.values


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    running = start_server_process()
    yield running
    stop_server_process(running)


@pytest.fixture(scope="module")
def channel(server: ServerProcess) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(server.target) as open_channel:
        yield open_channel


@pytest.fixture(scope="module")
def catalogue(channel: grpc.Channel) -> dict[str, verdict_pb2.EvaluatorInfo]:
    response = _call(channel, SERVICE.methods_by_name["ListEvaluators"], verdict_pb2.ListEvaluatorsRequest())
    return {info.type: info for info in response.evaluators}


def _call(channel: grpc.Channel, method: MethodDescriptor, request: object) -> Any:
    response_class = message_factory.GetMessageClass(method.output_type)
    call = channel.unary_unary(
        f"/{SERVICE.full_name}/{method.name}",
        request_serializer=lambda message: message.SerializeToString(),
        response_deserializer=response_class.FromString,
    )
    return call(request, timeout=30)


@pytest.mark.parametrize("method", METHODS, ids=lambda m: m.name)
def test_every_rpc_is_served(channel: grpc.Channel, method: MethodDescriptor) -> None:
    request = message_factory.GetMessageClass(method.input_type)()
    code = grpc.StatusCode.OK
    try:
        _call(channel, method, request)
    except grpc.RpcError as error:
        code = error.code()
    assert code is not grpc.StatusCode.UNIMPLEMENTED, f"{method.full_name} is not served"


@pytest.mark.parametrize("method", METHODS, ids=lambda m: m.name)
def test_every_rpc_is_wrapped_by_both_clients(method: MethodDescriptor) -> None:
    name = snake(method.name)
    assert callable(getattr(VerdictClient, name, None)), f"VerdictClient.{name} is missing"
    assert inspect.iscoroutinefunction(getattr(AsyncVerdictClient, name, None)), f"AsyncVerdictClient.{name}"


@pytest.mark.parametrize("client_class", [VerdictClient, AsyncVerdictClient])
def test_clients_have_no_public_method_beyond_the_rpcs_and_the_batching_helpers(client_class: type) -> None:
    public = {name for name, _ in inspect.getmembers(client_class, inspect.isfunction) if not name.startswith("_")}
    assert public == {snake(m.name) for m in METHODS} | {"close", "verify_many", "evaluate_many"}


def test_every_evaluator_type_in_the_proto_is_listed(catalogue: dict[str, verdict_pb2.EvaluatorInfo]) -> None:
    assert set(catalogue) == {kind.name for kind in CONFIG_KINDS}


@pytest.mark.parametrize("kind", CONFIG_KINDS, ids=lambda k: k.name)
def test_every_typed_config_field_is_described(
    catalogue: dict[str, verdict_pb2.EvaluatorInfo], kind: FieldDescriptor
) -> None:
    info = catalogue[kind.name]
    if kind.message_type is None:  # a member carrying another tool's configuration as text fills one listed field
        assert kind.type == FieldDescriptor.TYPE_STRING
        assert any(f.required for f in info.fields)
        assert info.verdicts
        return
    proto_fields = {f.name for f in kind.message_type.fields}
    assert proto_fields <= {f.name for f in info.fields}
    assert info.verdicts or info.open_verdicts


def test_every_verify_verdict_is_mapped_by_the_server() -> None:
    from verdict.rpc import VERDICT_TO_PROTO
    from verdict.verify.model import Verdict

    assert set(VERDICT_TO_PROTO) == set(Verdict)
    assert set(VERDICT_TO_PROTO.values()) == {v.number for v in VERDICT_VALUES if v.number != 0}


def test_every_verify_verdict_is_mapped_by_the_client() -> None:
    assert set(VERDICT_FROM_PROTO) == {v.number for v in VERDICT_VALUES}
    named = {VERDICT_FROM_PROTO[v.number] for v in VERDICT_VALUES if v.number != 0}
    assert len(named) == len(VERDICT_VALUES) - 1
    assert VerifyVerdict.UNKNOWN not in named
    for value in VERDICT_VALUES:
        if value.number:
            assert VERDICT_FROM_PROTO[value.number].name == value.name.removeprefix("VERIFY_VERDICT_")


@pytest.mark.parametrize(
    ("text", "finish_reason", "expected"),
    [
        ("```python\nx = 1\n```\n", "stop", VerifyVerdict.OK),
        ("The answer is", "length", VerifyVerdict.TRUNCATED),
        ("```python\ndef f(:\n```\n", "stop", VerifyVerdict.MALFORMED),
        ("Just a sentence of prose, nothing to parse.", "stop", VerifyVerdict.UNVERIFIABLE),
    ],
)
def test_every_verify_verdict_reaches_the_client(
    server: ServerProcess, text: str, finish_reason: str, expected: VerifyVerdict
) -> None:
    with VerdictClient(server.target) as client:
        assert client.verify_response(text, finish_reason=finish_reason).verdict is expected


GRPCURL_CALL = re.compile(r"^grpcurl -plaintext -d '(?P<payload>.+)' localhost:50051 (?P<service>\S+)/(?P<method>\w+)$")
DOCS = Path(__file__).resolve().parent.parent / "docs" / "clients.md"


def _documented_grpcurl_calls() -> list[tuple[str, str, str]]:
    calls = []
    for line in DOCS.read_text().splitlines():
        match = GRPCURL_CALL.match(line.strip())
        if match and "<" not in match["payload"]:
            calls.append((match["service"], match["method"], match["payload"]))
    return calls


def test_docs_show_grpcurl_calls_for_every_rpc() -> None:
    documented = {(service, method) for service, method, _ in _documented_grpcurl_calls()}
    assert {(SERVICE.full_name, m.name) for m in METHODS} <= documented


@pytest.mark.parametrize(("service_name", "method_name", "payload"), _documented_grpcurl_calls())
def test_documented_grpcurl_calls_work_through_reflection(
    channel: grpc.Channel, service_name: str, method_name: str, payload: str
) -> None:
    """What grpcurl does: resolve the method and messages by reflection alone, parse the JSON strictly, call."""
    pool = descriptor_pool.DescriptorPool(ProtoReflectionDescriptorDatabase(channel))
    method = pool.FindServiceByName(service_name).FindMethodByName(method_name)
    request = message_factory.GetMessageClass(method.input_type)()
    json_format.Parse(payload, request)
    call = channel.unary_unary(
        f"/{service_name}/{method_name}",
        request_serializer=lambda message: message.SerializeToString(),
        response_deserializer=message_factory.GetMessageClass(method.output_type).FromString,
    )
    if '"operator": "about"' in payload:
        with pytest.raises(grpc.RpcError) as caught:
            call(request, timeout=30)
        assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    else:
        call(request, timeout=30)
