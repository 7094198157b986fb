"""Credentials in no log line: a real server at log_level DEBUG is sent wrong and right bearer tokens over HTTP/2 on
the HTTP port (where hpack decodes and, at DEBUG, logs every header) and over gRPC; none appears in its stderr. And
redaction matches what a text means: a judge echoing its API key with JSON `\\u` escapes is caught."""

from __future__ import annotations

import contextlib
import socket
from pathlib import Path

import grpc
import h2.connection
import h2.events

from tests.security.support import TOKEN, production_like
from verdict.judges.credentials import REDACTED as KEY_REDACTED
from verdict.judges.credentials import ApiKey
from verdict.server.logs import redact_secrets
from verdict.v1 import verdict_pb2, verdict_pb2_grpc

WRONG_TOKEN = "wrong-token-5f0c3e9a1b7d"


def _h2_call(port: int, token: str) -> int:
    """One Connect call over cleartext HTTP/2 (prior knowledge) with `token`; the HTTP status."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    connection = h2.connection.H2Connection()
    connection.initiate_connection()
    body = b'{"output": "1"}'
    headers = [
        (":method", "POST"),
        (":scheme", "http"),
        (":authority", "localhost"),
        (":path", "/verdict.v1.VerdictService/ListEvaluators"),
        ("content-type", "application/json"),
        ("authorization", f"Bearer {token}"),
    ]
    connection.send_headers(1, headers)
    connection.send_data(1, body, end_stream=True)
    sock.sendall(connection.data_to_send())
    status = 0
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return status
            for event in connection.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived):
                    status = int(dict(event.headers)[b":status"])
                if isinstance(event, h2.events.StreamEnded | h2.events.StreamReset):
                    return status
            sock.sendall(connection.data_to_send())
    finally:
        sock.close()


def test_no_token_reaches_the_log_at_debug(tmp_path: Path) -> None:
    hostile = production_like(tmp_path, log_level="DEBUG")
    try:
        assert _h2_call(hostile.http_port, WRONG_TOKEN) == 401
        assert _h2_call(hostile.http_port, TOKEN) == 200
        with grpc.insecure_channel(hostile.server.target) as channel:
            stub = verdict_pb2_grpc.VerdictServiceStub(channel)
            for token in (WRONG_TOKEN, TOKEN):
                with contextlib.suppress(grpc.RpcError):
                    stub.ListEvaluators(
                        verdict_pb2.ListEvaluatorsRequest(),
                        metadata=(("authorization", f"Bearer {token}"),),
                        timeout=30,
                    )
    finally:
        logs = hostile.server.stop_and_read_logs()
    assert '"level":"DEBUG"' in logs  # DEBUG is really on: the test would prove nothing otherwise
    assert WRONG_TOKEN not in logs
    assert TOKEN not in logs


def test_log_lines_mask_credentials_in_any_json_spelling() -> None:
    assert redact_secrets("authorization: Bearer abc.def") == "authorization: Bearer [REDACTED]"
    assert "sk-123" not in redact_secrets("echo \\u0042earer sk-123 end")
    assert "tok" not in redact_secrets('{"Authorization": "tok"}')
    assert redact_secrets("nothing secret \\u00e9") == "nothing secret \\u00e9"


def test_a_judge_key_echoed_with_unicode_escapes_is_redacted() -> None:
    key = ApiKey("sk-live/0123abcd", source="test")
    echoed = '{"error": "bad key \\u0073k-live\\/0123\\u0061bcd"}'
    assert key.redact(echoed) == f'{{"error": "bad key {KEY_REDACTED}"}}'
    assert key.redact("sk-live/0123abcd") == KEY_REDACTED
