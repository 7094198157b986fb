"""What the channel configuration does on the wire: retries, load balancing, deadlines, metadata, TLS.

These run against small in-process servers that misbehave on purpose (fail twice, record deadlines), which a real
Verdict server cannot be asked to do; everything else is tested against the real server.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from tests.clients.fakes import Recorder, fake_server
from verdict_client import (
    AsyncVerdictClient,
    ClientConfig,
    RetryPolicy,
    TlsConfig,
    VerdictClient,
    VerdictRpcError,
)
from verdict_client.protos import verdict_pb2

FAST_RETRIES = RetryPolicy(max_attempts=4, initial_backoff_seconds=0.01, max_backoff_seconds=0.05)
NO_RETRIES = RetryPolicy(max_attempts=1)


def _local(port: int, retry: RetryPolicy) -> VerdictClient:
    return VerdictClient(f"127.0.0.1:{port}", config=ClientConfig(retry=retry))


def test_unavailable_is_retried_until_an_attempt_succeeds() -> None:
    recorder = Recorder(failures=2)
    with fake_server(recorder) as port, _local(port, FAST_RETRIES) as client:
        assert client.verify_response("x").detail == "fake"
    assert recorder.attempts == 3


def test_retries_stop_at_max_attempts() -> None:
    recorder = Recorder(failures=100)
    with (
        fake_server(recorder) as port,
        _local(port, FAST_RETRIES) as client,
        pytest.raises(VerdictRpcError) as caught,
    ):
        client.evaluate({"type": "exit_code"})
    assert caught.value.code is grpc.StatusCode.UNAVAILABLE
    assert caught.value.message == "attempt 4 refused"
    assert recorder.attempts == 4


def test_max_attempts_one_disables_retries() -> None:
    recorder = Recorder(failures=1)
    with fake_server(recorder) as port, _local(port, NO_RETRIES) as client, pytest.raises(VerdictRpcError):
        client.list_evaluators()
    assert recorder.attempts == 1


@pytest.mark.parametrize(
    "code", [grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.INTERNAL]
)
def test_other_codes_are_not_retried(code: grpc.StatusCode) -> None:
    recorder = Recorder(failures=1, failure_code=code)
    with (
        fake_server(recorder) as port,
        _local(port, FAST_RETRIES) as client,
        pytest.raises(VerdictRpcError) as caught,
    ):
        client.verify_response("x")
    assert caught.value.code is code
    assert recorder.attempts == 1


async def test_async_client_retries_too() -> None:
    recorder = Recorder(failures=2)
    with fake_server(recorder) as port:
        async with AsyncVerdictClient(f"127.0.0.1:{port}", config=ClientConfig(retry=FAST_RETRIES)) as client:
            assert (await client.verify_response("x")).detail == "fake"
    assert recorder.attempts == 3


def _answering_servers(config: ClientConfig, calls: int) -> list[str]:
    first, second = Recorder(name="first"), Recorder(name="second")
    with fake_server(first) as port_a, fake_server(second) as port_b:
        target = f"ipv4:127.0.0.1:{port_a},127.0.0.1:{port_b}"
        with VerdictClient(target, config=config) as client:
            return [client.verify_response("x").detail for _ in range(calls)]


def test_round_robin_spreads_calls_over_every_address() -> None:
    answered = _answering_servers(ClientConfig(), calls=10)
    assert set(answered) == {"first", "second"}


def test_pick_first_pins_calls_to_one_address() -> None:
    answered = _answering_servers(ClientConfig(load_balancing="pick_first"), calls=10)
    assert answered == ["first"] * 10


def test_default_deadlines_per_kind_of_call() -> None:
    recorder = Recorder()
    config = ClientConfig(timeout_seconds=20, judge_timeout_seconds=200)
    with fake_server(recorder) as port, VerdictClient(f"127.0.0.1:{port}", config=config) as client:
        client.verify_response("x")
        client.evaluate({"type": "exit_code"})
        client.evaluate(verdict_pb2.EvaluatorConfig(llm_structured=verdict_pb2.LlmStructuredConfig()))
        client.evaluate({"type": "comparator", "baseline": "old"})
        client.evaluate("type: exit_code")
        client.list_evaluators(timeout=3)
    verify, plain, judged, compared, yaml_text, listed = recorder.time_remaining
    # The grpc-timeout header rounds up, so a server may see a little more than was set.
    for remaining in (verify, plain):
        assert 0 < remaining < 25
    for remaining in (judged, compared, yaml_text):
        assert 25 < remaining < 205
    assert 0 < listed < 5


def test_deadline_ends_a_call_the_server_never_answers() -> None:
    recorder = Recorder(hang=True)
    with (
        fake_server(recorder) as port,
        _local(port, FAST_RETRIES) as client,
        pytest.raises(VerdictRpcError) as caught,
    ):
        client.verify_response("x", timeout=0.2)
    assert caught.value.code is grpc.StatusCode.DEADLINE_EXCEEDED
    assert caught.value.reason == ""
    assert caught.value.status is None
    assert recorder.attempts == 1


async def test_async_deadline_ends_a_call_the_server_never_answers() -> None:
    with fake_server(Recorder(hang=True)) as port:
        async with AsyncVerdictClient(f"127.0.0.1:{port}") as client:
            with pytest.raises(VerdictRpcError) as caught:
                await client.list_evaluators(timeout=0.2)
    assert caught.value.code is grpc.StatusCode.DEADLINE_EXCEEDED


def test_metadata_travels_with_the_call() -> None:
    recorder = Recorder()
    with fake_server(recorder) as port, VerdictClient(f"127.0.0.1:{port}") as client:
        client.verify_response("x", metadata=[("x-request-id", "r-42")])
    assert recorder.metadata[0]["x-request-id"] == "r-42"


def test_non_positive_timeout_is_rejected_before_calling() -> None:
    with VerdictClient("127.0.0.1:1") as client, pytest.raises(ValueError, match="timeout"):
        client.verify_response("x", timeout=0)


@dataclass(frozen=True)
class Pem:
    key: bytes
    cert: bytes


def _self_signed(directory: Path, name: str) -> Pem:
    key, cert = directory / f"{name}.key", directory / f"{name}.crt"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", f"/CN={name}",
            "-addext", f"subjectAltName=DNS:{name}", "-addext", "basicConstraints=critical,CA:FALSE",
            "-addext", "extendedKeyUsage=serverAuth,clientAuth",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return Pem(key.read_bytes(), cert.read_bytes())


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Pem]:
    directory = tmp_path_factory.mktemp("pki")
    return {"server": _self_signed(directory, "localhost"), "client": _self_signed(directory, "verdict-client")}


def _tls_call(port: int, tls: TlsConfig | None, host: str = "localhost") -> str:
    config = ClientConfig(tls=tls, retry=NO_RETRIES, timeout_seconds=10)
    with VerdictClient(f"{host}:{port}", config=config) as client:
        return client.verify_response("x").detail


def test_tls_verifies_the_server_against_the_given_roots(pki: dict[str, Pem]) -> None:
    server_credentials = grpc.ssl_server_credentials([(pki["server"].key, pki["server"].cert)])
    with fake_server(Recorder(), server_credentials) as port:
        assert _tls_call(port, TlsConfig(root_certificates=pki["server"].cert)) == "fake"
        with pytest.raises(VerdictRpcError) as wrong_root:
            _tls_call(port, TlsConfig(root_certificates=pki["client"].cert))
        with pytest.raises(VerdictRpcError) as plaintext:
            _tls_call(port, None)
    assert wrong_root.value.code is grpc.StatusCode.UNAVAILABLE
    assert plaintext.value.code is grpc.StatusCode.UNAVAILABLE


def test_tls_server_name_override_for_an_ip_target(pki: dict[str, Pem]) -> None:
    server_credentials = grpc.ssl_server_credentials([(pki["server"].key, pki["server"].cert)])
    tls = TlsConfig(root_certificates=pki["server"].cert, server_name_override="localhost")
    with fake_server(Recorder(), server_credentials) as port:
        assert _tls_call(port, tls, host="127.0.0.1") == "fake"


def test_mutual_tls_presents_the_client_certificate(pki: dict[str, Pem]) -> None:
    server_credentials = grpc.ssl_server_credentials(
        [(pki["server"].key, pki["server"].cert)],
        root_certificates=pki["client"].cert,
        require_client_auth=True,
    )
    mutual = TlsConfig(
        root_certificates=pki["server"].cert, private_key=pki["client"].key, certificate_chain=pki["client"].cert
    )
    with fake_server(Recorder(), server_credentials) as port:
        assert _tls_call(port, mutual) == "fake"
        with pytest.raises(VerdictRpcError) as anonymous:
            _tls_call(port, TlsConfig(root_certificates=pki["server"].cert))
    assert anonymous.value.code is grpc.StatusCode.UNAVAILABLE
