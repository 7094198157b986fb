"""Unfinished gRPC streams against a real server, without credentials: HEADERS, a message header announcing 4 MiB,
200 bytes of it, then nothing. The server holds a bounded number of them for a bounded time; the rest are refused
before their message is read, so 20,000 of them cost a bounded amount of memory."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import h2.config
import h2.connection
import pytest

from tests.security.support import MIB, Hostile, healthy, production_like, status_kib
from tests.support import stop_server_process

STREAMS = 20_000
PER_CONNECTION = 100
ALLOWED_GROWTH = 100 * MIB


def _unfinished(port: int, streams: int) -> tuple[socket.socket, h2.connection.H2Connection]:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    connection.initiate_connection()
    connection.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 2**31 - 1})
    for index in range(streams):
        stream = 1 + 2 * index
        connection.send_headers(
            stream,
            [
                (":method", "POST"),
                (":scheme", "http"),
                (":authority", "localhost"),
                (":path", "/verdict.v1.VerdictService/Evaluate"),
                ("content-type", "application/grpc"),
                ("te", "trailers"),
            ],
        )
        connection.send_data(stream, b"\x00" + (4 * MIB).to_bytes(4, "big") + b"x" * 200)
    sock.sendall(connection.data_to_send())
    return sock, connection


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Hostile]:
    hostile = production_like(tmp_path, max_connections=1024)
    yield hostile
    stop_server_process(hostile.server)


def test_twenty_thousand_unfinished_streams_cost_a_bounded_amount(server: Hostile) -> None:
    assert healthy(server.server.grpc_port)
    before = status_kib(server.pid, "VmRSS") * 1024
    held = [_unfinished(server.server.grpc_port, PER_CONNECTION) for _ in range(STREAMS // PER_CONNECTION)]
    time.sleep(3)  # not a timing assertion: lets the server read what was sent before its memory is read
    assert healthy(server.server.grpc_port)
    grown = status_kib(server.pid, "VmRSS") * 1024 - before
    for sock, _ in held:
        sock.close()
    print(f"unfinished streams: +{grown // MIB} MiB")
    assert grown <= ALLOWED_GROWTH, f"{STREAMS} unfinished streams held {grown // MIB} MiB"


def test_a_message_that_never_completes_ends_with_deadline_exceeded(tmp_path: Path) -> None:
    hostile = production_like(tmp_path, request_message_timeout_seconds=1)
    try:
        sock, connection = _unfinished(hostile.server.grpc_port, 1)
        sock.settimeout(30)
        status = ""
        while not status:
            data = sock.recv(65536)
            assert data, "the server closed the connection without answering"
            for event in connection.receive_data(data):
                headers = dict(getattr(event, "headers", None) or ())
                status = str(headers.get("grpc-status", status))
            sock.sendall(connection.data_to_send())
        sock.close()
        assert status == "4"  # DEADLINE_EXCEEDED
    finally:
        stop_server_process(hostile.server)
