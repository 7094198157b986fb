"""OpenTelemetry server spans: a real server exporting to a real OTLP/HTTP receiver started by the test.

The receiver decodes what arrives with the OTLP protobuf messages (`opentelemetry-proto`, the exporter's own
dependency), so the test sees what a collector would. Spans are flushed when the server stops (the drain ends with
the exporter's shutdown), and the test then waits for them with a generous bound, never a timing assertion.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from prometheus_client import CollectorRegistry

from tests.support import make_config, serving
from verdict.metrics import Metrics
from verdict.rpc import SERVICE_DESCRIPTOR
from verdict.security.gate import Gate
from verdict.server.assembly import _chains
from verdict.server.interceptors.access_control import AccessInterceptor
from verdict.server.interceptors.admission import Admission, AdmissionLimits
from verdict.server.interceptors.tracing import Tracing, TracingInterceptor, traces_url
from verdict.v1 import verdict_pb2

MALFORMED = "```python\ndef f(:\n```"
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
GRPC_PARENT = "00f067aa0ba902b7"
HTTP_PARENT = "b7ad6b7169203331"
UNSAMPLED_TRACE = "0af7651916cd43dd8448eb211c80319c"


class Receiver:
    """An OTLP/HTTP collector of one route, POST /v1/traces: every span received, with its resource's attributes."""

    def __init__(self) -> None:
        self.spans: list[tuple[dict[str, Any], Span]] = []
        self.paths: list[str] = []
        received = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                received.paths.append(self.path)
                request = ExportTraceServiceRequest.FromString(body)
                for resource_spans in request.resource_spans:
                    resource = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
                    for scope_spans in resource_spans.scope_spans:
                        received.spans.extend((resource, span) for span in scope_spans.spans)
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def wait_for(self, count: int, bound: float = 60) -> list[tuple[dict[str, Any], Span]]:
        """The spans received, once at least `count` have arrived (or the bound has passed)."""
        deadline = time.monotonic() + bound
        while len(self.spans) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return list(self.spans)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    started = Receiver()
    yield started
    started.close()


def _attributes(span: Span) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for attribute in span.attributes:
        kind = attribute.value.WhichOneof("value")
        values[attribute.key] = getattr(attribute.value, kind) if kind else None
    return values


def _post_json(url: str, body: dict[str, Any], traceparent: str) -> dict[str, Any]:
    request = urllib.request.Request(  # noqa: S310 (a URL the test built)
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "traceparent": traceparent},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=60) as answer:  # noqa: S310 (a URL the test built)
        return dict(json.loads(answer.read()))


async def test_spans_of_both_ports_arrive_with_the_callers_trace(receiver: Receiver) -> None:
    config = make_config(http_address="127.0.0.1:0", otlp_endpoint=receiver.url, otlp_service_name="verdict-under-test")
    async with serving(config) as running:
        assert running.app.http is not None
        assert running.app.tracing is not None
        verified = await running.stub.VerifyResponse(
            verdict_pb2.VerifyResponseRequest(text=MALFORMED),
            metadata=(("traceparent", f"00-{TRACE_ID}-{GRPC_PARENT}-01"),),
        )
        assert verified.verdict == verdict_pb2.VERIFY_VERDICT_MALFORMED
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await running.stub.Evaluate(
                verdict_pb2.EvaluateRequest(output="5"),
                metadata=(("traceparent", f"00-{TRACE_ID}-{GRPC_PARENT}-01"),),
            )
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        # The caller decided not to sample this trace: the server follows it and exports nothing for it.
        await running.stub.VerifyResponse(
            verdict_pb2.VerifyResponseRequest(text="plain"),
            metadata=(("traceparent", f"00-{UNSAMPLED_TRACE}-{GRPC_PARENT}-00"),),
        )
        health = health_pb2_grpc.HealthStub(running.channel)
        await health.Check(health_pb2.HealthCheckRequest(service=""))  # no traceparent: a trace of its own
        answered = await asyncio.to_thread(
            _post_json,
            f"http://127.0.0.1:{running.app.http.port}/verdict.v1.VerdictService/VerifyResponse",
            {"text": MALFORMED},
            f"00-{TRACE_ID}-{HTTP_PARENT}-01",
        )
        assert answered["verdict"] == "VERIFY_VERDICT_MALFORMED"
    spans = await asyncio.to_thread(receiver.wait_for, 4)
    assert set(receiver.paths) == {"/v1/traces"}
    assert {resource["service.name"] for resource, _ in spans} == {"verdict-under-test"}
    by_key = {
        (_attributes(span)["rpc.system"], span.name, _attributes(span)["rpc.grpc.status_code"]): span
        for _, span in spans
    }
    assert len(spans) == 4, [span.name for _, span in spans]
    assert all(span.trace_id != bytes.fromhex(UNSAMPLED_TRACE) for _, span in spans)
    assert all(span.kind == Span.SPAN_KIND_SERVER for _, span in spans)

    grpc_verify = by_key["grpc", "verdict.v1.VerdictService/VerifyResponse", 0]
    assert (grpc_verify.trace_id.hex(), grpc_verify.parent_span_id.hex()) == (TRACE_ID, GRPC_PARENT)
    assert _attributes(grpc_verify) == {
        "rpc.system": "grpc",
        "rpc.service": "verdict.v1.VerdictService",
        "rpc.method": "VerifyResponse",
        "rpc.grpc.status_code": 0,
        "verdict.verdict": "VERIFY_VERDICT_MALFORMED",
    }
    grpc_evaluate = by_key["grpc", "verdict.v1.VerdictService/Evaluate", grpc.StatusCode.INVALID_ARGUMENT.value[0]]
    assert grpc_evaluate.parent_span_id.hex() == GRPC_PARENT
    assert grpc_evaluate.status.code == grpc_evaluate.status.STATUS_CODE_UNSET  # the caller's error, not the server's

    health_check = by_key["grpc", "grpc.health.v1.Health/Check", 0]
    assert health_check.parent_span_id == b""
    assert health_check.trace_id.hex() != TRACE_ID

    http_verify = by_key["connect_rpc", "verdict.v1.VerdictService/VerifyResponse", 0]
    assert (http_verify.trace_id.hex(), http_verify.parent_span_id.hex()) == (TRACE_ID, HTTP_PARENT)
    assert _attributes(http_verify)["verdict.verdict"] == "VERIFY_VERDICT_MALFORMED"


def _layers(**overrides: object) -> list[object]:
    config = make_config(**overrides)
    metrics = Metrics(CollectorRegistry())
    gate = Gate(config, [m.name for m in SERVICE_DESCRIPTOR.methods])
    access = AccessInterceptor(gate, metrics, per_connection=0, per_principal=0)
    main, health_only = _chains(
        config, metrics, access, Admission(AdmissionLimits.from_config(config), metrics), Tracing.from_config(config)
    )
    return [*main.layers, *health_only.layers]


def test_tracing_off_adds_no_layer_and_on_adds_one() -> None:
    assert Tracing.from_config(make_config()) is None
    assert not any(isinstance(layer, TracingInterceptor) for layer in _layers())
    on = _layers(otlp_endpoint="http://127.0.0.1:9")
    assert sum(isinstance(layer, TracingInterceptor) for layer in on) == 1


def test_the_default_path_never_imports_the_tracing_sdk() -> None:
    """Neither the SDK's tracing nor the exporter is loaded when tracing is off. (redis-py loads the SDK's metrics
    part on import when it is installed, for its own optional instruments; that is redis's, not a span path.)"""
    script = (
        "import sys\n"
        "from verdict.server.assembly import build_server\n"
        "from verdict.server.connect import connect_application\n"
        "from verdict.server.interceptors.tracing import Tracing\n"
        "from verdict.config.keys import Config\n"
        "assert Tracing.from_config(Config()) is None\n"
        "print(sorted(m for m in sys.modules if m.startswith(('opentelemetry.sdk.trace', 'opentelemetry.exporter'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("endpoint", "url"),
    [
        ("http://collector:4318", "http://collector:4318/v1/traces"),
        ("http://collector:4318/", "http://collector:4318/v1/traces"),
        ("https://collector/v1/traces", "https://collector/v1/traces"),
    ],
)
def test_traces_url(endpoint: str, url: str) -> None:
    assert traces_url(endpoint) == url


def test_an_endpoint_that_is_not_a_url_fails_naming_the_key() -> None:
    from verdict.errors import ConfigError

    with pytest.raises(ConfigError, match="otlp_endpoint"):
        make_config(otlp_endpoint="collector:4318")
