"""Hundreds of idle and slow connections to both ports of a real `verdict serve` process: its threads and file
descriptors stay bounded, the connections are closed by the server, and a normal call still succeeds."""

from __future__ import annotations

import contextlib
import os
import socket
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from tests.support import ServerProcess, open_descriptors, start_server_process, stop_server_process
from verdict.v1 import verdict_pb2, verdict_pb2_grpc

CONNECTIONS = 300
GRPC_CAP = 32
METRICS_CAP = 16
SETTLE_SECONDS = 0.5
MEMORY_GROWTH_BYTES = 32 * 1024 * 1024
"""Far above what the capped connections cost (a few MiB), far below one buffer per refused connection."""


@pytest.fixture
def bounded_server() -> Iterator[ServerProcess]:
    server = start_server_process(
        "--max-connections", str(GRPC_CAP),
        "--handshake-timeout-seconds", "2",
        "--metrics-max-connections", str(METRICS_CAP),
        "--metrics-read-timeout-seconds", "2",
    )  # fmt: skip
    yield server
    stop_server_process(server)


def _threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def _rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _open(port: int, count: int, first_bytes: bytes) -> list[socket.socket]:
    """`count` connections that send `first_bytes` (a slow client's first dribble) and then nothing."""
    sockets = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        if first_bytes:
            with contextlib.suppress(OSError):
                sock.sendall(first_bytes)
        sockets.append(sock)
    return sockets


def _closed_by_server(sock: socket.socket, timeout: float) -> bool:
    """Whether the server closes the connection within `timeout` (whatever it sends first: a gRPC server's SETTINGS
    and GOAWAY frames, say)."""
    deadline = time.monotonic() + timeout
    try:
        while (left := deadline - time.monotonic()) > 0:
            sock.settimeout(left)
            if sock.recv(65536) == b"":
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False
    return False


def test_idle_and_slow_connections_do_not_grow_threads_or_descriptors(bounded_server: ServerProcess) -> None:
    pid = bounded_server.process.pid
    assert bounded_server.metrics_port is not None
    channel = grpc.insecure_channel(bounded_server.target)
    stub = verdict_pb2_grpc.VerdictServiceStub(channel)
    request = verdict_pb2.VerifyResponseRequest(text="```json\n{}\n```\n", finish_reason="stop")
    assert stub.VerifyResponse(request, timeout=10).verdict == verdict_pb2.VERIFY_VERDICT_OK
    threads_before, fds_before, rss_before = _threads(pid), open_descriptors(pid), _rss_bytes(pid)

    held = _open(bounded_server.grpc_port, CONNECTIONS, b"")
    held += _open(bounded_server.grpc_port, CONNECTIONS // 2, b"PRI * HTTP/2.0\r\n")  # a preface cut short
    held += _open(bounded_server.metrics_port, CONNECTIONS, b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # slowloris
    time.sleep(SETTLE_SECONDS)
    threads_during, fds_during, rss_during = _threads(pid), open_descriptors(pid), _rss_bytes(pid)
    # The call on the connection opened before keeps working while every slot for new connections is taken.
    assert stub.VerifyResponse(request, timeout=10).verdict == verdict_pb2.VERIFY_VERDICT_OK
    try:
        assert threads_during <= threads_before + 2, (threads_before, threads_during)
        assert fds_during <= fds_before + GRPC_CAP + METRICS_CAP + 8, (fds_before, fds_during)
        assert rss_during - rss_before < MEMORY_GROWTH_BYTES, (rss_before, rss_during)
        # Every one of them is closed by the server: over the cap at once, the rest at their time limits.
        still_open = [sock.getsockname() for sock in held if not _closed_by_server(sock, timeout=15)]
        assert still_open == []
    finally:
        for sock in held:
            sock.close()
    channel.close()
    assert open_descriptors(pid) <= fds_before + 4
    # New clients get in again.
    with grpc.insecure_channel(bounded_server.target) as fresh:
        stub = verdict_pb2_grpc.VerdictServiceStub(fresh)
        assert stub.VerifyResponse(request, timeout=10, wait_for_ready=True).verdict == verdict_pb2.VERIFY_VERDICT_OK
    url = f"http://127.0.0.1:{bounded_server.metrics_port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as response:
        assert b"verdict_metrics_connections_rejected_total" in response.read()
