"""The HTTP port refuses a caller without valid credentials (or without the RPC in its grant) as soon as the request
head is complete, without reading the body: the head alone gets the answer, in the caller's protocol, and many
concurrent unauthenticated 4 MiB uploads cost the server no more than the bytes its transport buffered."""

from __future__ import annotations

import base64
import contextlib
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.security.support import MIB, TOKEN, Hostile, healthy, peak_bytes, production_like
from tests.support import raw_grpc_call, stop_server_process
from verdict.v1 import verdict_pb2

SERVICE = "/verdict.v1.VerdictService"
ANNOUNCED = 4 * MIB
UPLOADS = 100
LISTING_ONLY = "principals:\n  prober:\n    rpcs: [ListEvaluators]\n"
KEYS = {"http_body_timeout_seconds": 120, "http_max_connections": 1000}
"""A body deadline far beyond the test, so only an answer at the head can arrive while the body is missing."""


@contextlib.contextmanager
def running(tmp_path: Path, **keys: Any) -> Iterator[Hostile]:
    hostile = production_like(tmp_path, **{**KEYS, **keys})
    try:
        yield hostile
    finally:
        stop_server_process(hostile.server)


def _head_only(port: int, path: str, content_type: str, token: str | None = None) -> bytes:
    """Send a request head announcing a 4 MiB body and no byte of it; the server's whole answer (until it closes)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: {content_type}\r\nContent-Length: {ANNOUNCED}\r\n"
    if token is not None:
        head += f"Authorization: Bearer {token}\r\n"
    sock.sendall(head.encode() + b"\r\n")
    answer = b""
    try:
        while chunk := sock.recv(65536):
            answer += chunk
    finally:
        sock.close()
    return answer


def _split(answer: bytes) -> tuple[str, dict[str, str], bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:] if ":" in line)}
    return lines[0], headers, body


def test_connect_without_a_token_is_unauthenticated_at_the_head(tmp_path: Path) -> None:
    with running(tmp_path) as server:
        status, headers, body = _split(_head_only(server.http_port, f"{SERVICE}/Evaluate", "application/json"))
        assert status.startswith("HTTP/1.1 401"), status
        error = json.loads(body)
        assert error["code"] == "unauthenticated"
        assert error["details"][0]["debug"]["reason"] == "CREDENTIALS_MISSING"
        assert headers.get("connection") == "close"  # the unread body is never read: the connection goes
        assert healthy(server.server.grpc_port)


def test_a_wrong_token_and_an_rpc_outside_the_grant_are_refused_at_the_head(tmp_path: Path) -> None:
    with running(tmp_path, policy=LISTING_ONLY) as server:
        port = server.http_port
        status, _, body = _split(_head_only(port, f"{SERVICE}/Evaluate", "application/json", "x" * 32))
        assert status.startswith("HTTP/1.1 401"), status
        assert json.loads(body)["details"][0]["debug"]["reason"] == "INVALID_TOKEN"
        status, _, body = _split(_head_only(port, f"{SERVICE}/Evaluate", "application/proto", TOKEN))
        assert status.startswith("HTTP/1.1 403"), status
        assert json.loads(body)["details"][0]["debug"]["reason"] == "RPC_NOT_ALLOWED"
        server.server.stop_and_read_logs()
    records = [json.loads(line) for line in server.decisions.read_text().splitlines()]
    refused = [(r["transport"], r["rpc"], r["result"]["reason"]) for r in records]
    assert refused == [("connect", "Evaluate", "INVALID_TOKEN"), ("connect", "Evaluate", "RPC_NOT_ALLOWED")]


def test_grpc_web_and_the_graders_route_are_refused_in_their_own_protocols(tmp_path: Path) -> None:
    with running(tmp_path) as server:
        status, headers, _ = _split(_head_only(server.http_port, f"{SERVICE}/Evaluate", "application/grpc-web+proto"))
        assert status.startswith("HTTP/1.1 200"), status
        assert headers["grpc-status"] == "16"
        status, _, body = _split(_head_only(server.http_port, "/v1/fine_tuning/alpha/graders/run", "application/json"))
        assert status.startswith("HTTP/1.1 401"), status
        assert json.loads(body)["error"]["code"] == "CREDENTIALS_MISSING"


def test_grpc_over_http2_is_refused_before_its_message(tmp_path: Path) -> None:
    with running(tmp_path) as server:
        # the stream stays open: no message is ever sent
        answer = raw_grpc_call(server.http_port, f"{SERVICE}/Evaluate", [], None)
        assert answer["grpc-status"] == "16", answer
        details = base64.b64decode(answer["grpc-status-details-bin"] + "==")
        assert b"CREDENTIALS_MISSING" in details


def _upload(port: int, chunk: bytes, sent: list[int]) -> None:
    """POST a whole 4 MiB body without credentials, as fast as the server takes it; record the bytes it took."""
    total = 0
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        head = f"POST {SERVICE}/Evaluate HTTP/1.1\r\nHost: x\r\nContent-Type: application/proto\r\n"
        sock.sendall(f"{head}Content-Length: {ANNOUNCED}\r\n\r\n".encode())
        while total < ANNOUNCED:
            total += sock.send(chunk[: ANNOUNCED - total])
    except OSError:
        pass
    sent.append(total)


def test_concurrent_unauthenticated_uploads_hold_no_bodies(tmp_path: Path) -> None:
    """Before the head check, the runtime read each body whole before the gate looked at the token: 100 uploads held
    100 x 4 MiB. Now each is refused at its head and its connection closed."""
    request = verdict_pb2.EvaluateRequest(output="x" * (ANNOUNCED - 64)).SerializeToString()
    chunk = request[:ANNOUNCED]
    with running(tmp_path) as server:
        baseline = peak_bytes(server.pid)
        sent: list[int] = []
        threads = [threading.Thread(target=_upload, args=(server.http_port, chunk, sent)) for _ in range(UPLOADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        grown = peak_bytes(server.pid) - baseline
        assert healthy(server.server.grpc_port)
    assert len(sent) == UPLOADS
    assert grown < UPLOADS * ANNOUNCED // 4, f"peak memory grew {grown / MIB:.0f} MiB"
