"""What the gRPC port answers a message with the compressed flag and no `grpc-encoding`, and one with an encoding it
does not support: grpc-core answers both INTERNAL before any Python (interceptor, generic handler) sees the call.
The gRPC compression spec asks UNIMPLEMENTED for the second; this pins today's answer and that the server stays
healthy, so an upgrade that fixes it shows up here (docs/upstream/grpc-unknown-encoding.md)."""

from __future__ import annotations

import socket
from pathlib import Path

import h2.config
import h2.connection
import pytest

from tests.security.support import TOKEN, healthy, production_like
from tests.support import grpc_frame, stop_server_process


def _status(port: int, encoding: str | None) -> dict[str, str]:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    connection.initiate_connection()
    headers = [
        (":method", "POST"),
        (":scheme", "http"),
        (":authority", "x"),
        (":path", "/verdict.v1.VerdictService/ListEvaluators"),
        ("content-type", "application/grpc"),
        ("te", "trailers"),
        ("authorization", f"Bearer {TOKEN}"),
    ]
    if encoding is not None:
        headers.append(("grpc-encoding", encoding))
    connection.send_headers(1, headers)
    connection.send_data(1, grpc_frame(b"", 1), end_stream=True)
    sock.sendall(connection.data_to_send())
    answer: dict[str, str] = {}
    while "grpc-status" not in answer:
        data = sock.recv(65536)
        if not data:
            break
        for event in connection.receive_data(data):
            for key, value in getattr(event, "headers", None) or ():
                answer[bytes(key).decode()] = bytes(value).decode()
        sock.sendall(connection.data_to_send())
    sock.close()
    return answer


@pytest.mark.parametrize("encoding", [None, "br"])
def test_grpc_core_answers_internal_and_the_server_stays_healthy(tmp_path: Path, encoding: str | None) -> None:
    server = production_like(tmp_path)
    try:
        answer = _status(server.server.grpc_port, encoding)
        assert answer.get("grpc-status") == "13", answer  # INTERNAL, from grpc-core; the spec says UNIMPLEMENTED
        assert healthy(server.server.grpc_port)
    finally:
        stop_server_process(server.server)
