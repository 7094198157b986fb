"""The HTTP port's front door (server/http_door.py): readable error details, whole numbers as integers and sorted
`details`, a body on every error status, Retry-After beside RetryInfo, HTTP health probes that report the gRPC health
service, CORS by allowed origins (off by default), and the OpenAPI document, fresh and served."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client import CollectorRegistry

from tests.server.support import HeldServicer
from tests.support import Running, grpc_frame, http_send, load_script, make_config, serving
from verdict.metrics import Metrics
from verdict.rpc import SERVICE_DESCRIPTOR
from verdict.server.connect import ConnectServer, connect_application
from verdict.server.http_door import API_DOCUMENT_PATH, HttpDoor, api_document, readable
from verdict.server.interceptors.admission import Admission, AdmissionLimits
from verdict.v1 import verdict_pb2

SERVICE = "/verdict.v1.VerdictService"
JSON = {"Content-Type": "application/json"}
ORIGIN = "https://loops.example"
NUMERIC = {"config": {"yaml": "type: output_numeric\noperator: ge\ntarget: 3"}, "output": "5"}


@pytest.fixture
async def door() -> AsyncIterator[tuple[Running, int]]:
    async with serving(make_config(http_address="127.0.0.1:0")) as running:
        assert running.app.http is not None
        yield running, running.app.http.port


async def send(port: int, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None) -> Any:
    """http_send in a worker thread: the server shares this event loop."""
    return await asyncio.to_thread(http_send, port, method, path, body, headers)


async def test_error_details_carry_a_readable_debug_form_beside_the_binary_one(door: tuple[Running, int]) -> None:
    _running, port = door
    request = json.dumps({"config": {"yaml": "type: nope"}, "output": "5"}).encode()
    status, _headers, body = await send(port, "POST", f"{SERVICE}/Evaluate", request, JSON)
    assert status == 400
    error = json.loads(body)
    assert error["code"] == "invalid_argument"
    by_type = {detail["type"]: detail for detail in error["details"]}
    bad = by_type["google.rpc.BadRequest"]
    assert bad["debug"]["fieldViolations"][0]["field"] == "config.type"
    binary = error_details_pb2.BadRequest.FromString(base64.b64decode(bad["value"] + "=="))
    assert binary.field_violations[0].field == "config.type"  # the binary form is still there and says the same
    assert by_type["google.rpc.ErrorInfo"]["debug"]["reason"] == "INVALID_EVALUATOR_CONFIG"


async def test_whole_numbers_are_integers_and_details_keys_are_sorted(door: tuple[Running, int]) -> None:
    _running, port = door
    status, _headers, body = await send(port, "POST", f"{SERVICE}/Evaluate", json.dumps(NUMERIC).encode(), JSON)
    assert status == 200
    assert b"5.0" not in body
    assert b"3.0" not in body
    answer = json.loads(body)
    assert answer["details"] == {"operator": "ge", "target": 3, "value": 5}
    assert list(answer["details"]) == sorted(answer["details"])
    assert isinstance(answer["details"]["value"], int)
    assert next(iter(answer)) == "verdict"  # messages keep the proto's field order; only Struct keys are sorted


def test_readable_turns_only_exact_whole_doubles_into_integers() -> None:
    big = 2.0**53
    value = {"details": {"b": 0.0, "a": [1.0, 0.5, big, -7.0]}, "score": 2.5, "z": {"y": 1, "x": 2}}
    made = readable(value)
    assert made == {"details": {"a": [1, 0.5, big, -7], "b": 0}, "score": 2.5, "z": {"y": 1, "x": 2}}
    assert isinstance(made["details"]["a"][2], float)  # beyond 2**53 a double may not be the integer it prints as
    assert list(made["details"]) == ["a", "b"]
    assert list(made["z"]) == ["y", "x"]  # not under `details`: left in the order given


@pytest.mark.parametrize(
    ("method", "path", "headers", "status", "code"),
    [
        ("POST", f"{SERVICE}/VerifyResponse", {}, 415, "invalid_argument"),
        ("POST", f"{SERVICE}/VerifyResponse", {"Content-Type": "text/plain"}, 415, "invalid_argument"),
        ("POST", f"{SERVICE}/Nope", JSON, 404, "unimplemented"),
        ("PUT", f"{SERVICE}/VerifyResponse", JSON, 405, "unimplemented"),
    ],
    ids=["no content type", "text/plain", "unknown method", "PUT"],
)
async def test_every_error_status_has_a_body_saying_what_to_send(
    door: tuple[Running, int], method: str, path: str, headers: dict[str, str], status: int, code: str
) -> None:
    _running, port = door
    got, answer_headers, body = await send(port, method, path, b"{}", headers)
    assert got == status
    assert answer_headers["content-type"] == "application/json"
    error = json.loads(body)
    assert error["code"] == code
    assert error["message"]
    if status == 415:
        assert "application/json" in error["message"]
        violation = error["details"][1]["debug"]["fieldViolations"][0]
        assert violation["field"] == "Content-Type"


def _retry_seconds(details: list[dict[str, Any]]) -> float:
    retry = next(d for d in details if d["type"] == "google.rpc.RetryInfo")
    info = error_details_pb2.RetryInfo.FromString(base64.b64decode(retry["value"] + "=="))
    return info.retry_delay.ToTimedelta().total_seconds()


async def test_a_refusal_with_retry_info_says_retry_after_in_http_too() -> None:
    held = HeldServicer()
    config = make_config(http_address="127.0.0.1:0")
    metrics = Metrics(CollectorRegistry())
    admission = Admission(AdmissionLimits(running=1, queued=0, min_deadline_seconds=0.01), metrics)
    app = connect_application(held, metrics, config, admission=admission)  # type: ignore[arg-type]
    server = ConnectServer(HttpDoor(app), config, metrics)
    server.start()
    try:
        first = asyncio.ensure_future(send(server.port, "POST", f"{SERVICE}/VerifyResponse", b"{}", JSON))
        await held.entered.wait()
        status, headers, body = await send(server.port, "POST", f"{SERVICE}/Evaluate", b"{}", JSON)
        error = json.loads(body)
        assert error["code"] == "resource_exhausted"
        delay = _retry_seconds(error["details"])
        assert delay > 0
        assert int(headers["retry-after"]) >= delay
        assert int(headers["retry-after"]) >= 1
        readable_retry = next(d for d in error["details"] if d["type"] == "google.rpc.RetryInfo")
        assert readable_retry["debug"]["retryDelay"].endswith("s")
        # gRPC-Web: a trailers-only refusal carries the same hint in grpc-status-details-bin, and gets Retry-After
        web = {"Content-Type": "application/grpc-web+proto", "X-Grpc-Web": "1"}
        _status, web_headers, web_body = await send(
            server.port,
            "POST",
            f"{SERVICE}/Evaluate",
            grpc_frame(verdict_pb2.EvaluateRequest().SerializeToString()),
            web,
        )
        trailer = web_body[5:].decode()
        assert web_body[0] == 0x80  # the trailer frame alone: no message
        fields = dict(line.split(": ", 1) for line in trailer.split("\r\n") if ": " in line)
        rich = status_pb2.Status.FromString(base64.b64decode(fields["grpc-status-details-bin"] + "=="))
        assert rich.code == grpc.StatusCode.RESOURCE_EXHAUSTED.value[0]
        assert int(web_headers["retry-after"]) >= 1
        held.release.set()
        assert (await first)[0] == 200
        status, headers, _body = await send(server.port, "POST", f"{SERVICE}/Evaluate", b"{}", JSON)
        assert status == 200
        assert "retry-after" not in headers  # only refusals that carry the hint
    finally:
        held.release.set()
        await server.stop(1)


async def test_health_probes_report_the_grpc_health_service(door: tuple[Running, int]) -> None:
    running, port = door
    status, _headers, body = await send(port, "GET", "/readyz")
    assert (status, json.loads(body)) == (200, {"service": "", "status": "SERVING"})
    status, _headers, body = await send(port, "GET", "/healthz")
    assert (status, json.loads(body)["status"]) == (200, "SERVING")
    status, _headers, body = await send(port, "GET", "/health/verdict.v1.VerdictService")
    assert (status, json.loads(body)["status"]) == (200, "SERVING")
    status, _headers, body = await send(port, "GET", "/health/no.such.Service")
    assert status == 404
    assert "no.such.Service" in json.loads(body)["message"]

    await running.app.health.set("", health_pb2.HealthCheckResponse.NOT_SERVING)
    status, _headers, body = await send(port, "GET", "/readyz")
    assert (status, json.loads(body)["status"]) == (503, "NOT_SERVING")
    grpc_answer = await health_pb2_grpc.HealthStub(running.channel).Check(health_pb2.HealthCheckRequest(service=""))
    assert grpc_answer.status == health_pb2.HealthCheckResponse.NOT_SERVING  # the same servicer answers both
    status, _headers, body = await send(port, "HEAD", "/healthz")
    assert (status, body) == (200, b"")


async def test_cors_is_off_by_default(door: tuple[Running, int]) -> None:
    _running, port = door
    headers = {**JSON, "Origin": ORIGIN}
    status, answer_headers, _body = await send(
        port, "POST", f"{SERVICE}/Evaluate", json.dumps(NUMERIC).encode(), headers
    )
    assert status == 200
    assert not [key for key in answer_headers if key.startswith("access-control-")]
    preflight = {"Origin": ORIGIN, "Access-Control-Request-Method": "POST"}
    _status, answer_headers, _body = await send(port, "OPTIONS", f"{SERVICE}/Evaluate", b"", preflight)
    assert "access-control-allow-origin" not in answer_headers


async def test_cors_answers_allowed_origins_and_refuses_others() -> None:
    config = make_config(http_address="127.0.0.1:0", http_cors_allowed_origins=(ORIGIN,))
    async with serving(config) as running:
        assert running.app.http is not None
        port = running.app.http.port
        preflight = {"Origin": ORIGIN, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "x"}
        status, headers, _body = await send(port, "OPTIONS", f"{SERVICE}/Evaluate", b"", preflight)
        assert status == 204
        assert headers["access-control-allow-origin"] == ORIGIN
        assert "POST" in headers["access-control-allow-methods"]
        assert "connect-protocol-version" in headers["access-control-allow-headers"]

        call = {**JSON, "Origin": ORIGIN}
        status, headers, _body = await send(port, "POST", f"{SERVICE}/Evaluate", json.dumps(NUMERIC).encode(), call)
        assert status == 200
        assert headers["access-control-allow-origin"] == ORIGIN
        assert "grpc-status-details-bin" in headers["access-control-expose-headers"]

        stranger = {"Origin": "https://elsewhere.example", "Access-Control-Request-Method": "POST"}
        status, headers, body = await send(port, "OPTIONS", f"{SERVICE}/Evaluate", b"", stranger)
        assert status == 403
        assert "access-control-allow-origin" not in headers
        assert "http_cors_allowed_origins" in json.loads(body)["message"]
        call = {**JSON, "Origin": "https://elsewhere.example"}
        status, headers, _body = await send(port, "POST", f"{SERVICE}/Evaluate", json.dumps(NUMERIC).encode(), call)
        assert "access-control-allow-origin" not in headers


def test_the_api_document_is_fresh_from_the_proto() -> None:
    generator = load_script("gen_openapi.py")
    assert generator.render().encode() == api_document(), "run `python scripts/gen_openapi.py` and commit"


def test_the_api_document_describes_every_rpc_with_its_messages() -> None:
    document = json.loads(api_document())
    assert document["openapi"].startswith("3.1")
    schemas = document["components"]["schemas"]
    for method in SERVICE_DESCRIPTOR.methods:
        operation = document["paths"][f"{SERVICE}/{method.name}"]["post"]
        request_ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        assert request_ref.endswith(method.input_type.full_name)
        properties = schemas[method.input_type.full_name]["properties"]
        assert {field.json_name for field in method.input_type.fields} == set(properties)
        for ref in _refs(operation):
            assert ref.removeprefix("#/components/schemas/") in schemas


def _refs(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [value["$ref"]] if "$ref" in value else [ref for item in value.values() for ref in _refs(item)]
    if isinstance(value, list):
        return [ref for item in value for ref in _refs(item)]
    return []


async def test_the_api_document_is_served(door: tuple[Running, int]) -> None:
    _running, port = door
    status, headers, body = await send(port, "GET", API_DOCUMENT_PATH)
    assert status == 200
    assert headers["content-type"] == "application/json"
    assert body == api_document()
