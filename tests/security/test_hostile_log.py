"""Hostile bytes on the HTTP port leave no ERROR line and no traceback in the server's log, and few lines at all:
bad HTTP/1.1 framing, an invalid Content-Length, bad HTTP/2 prefaces and frames, an h2c upgrade with bad settings,
non-UTF-8 paths and headers, a client that resets mid-body, bad gzip and a bad Connect envelope (with a token, so
they reach the runtime). A real server process at the default log level; its stderr is what is read."""

from __future__ import annotations

import socket
import struct
import time
from pathlib import Path

from tests.security.support import TOKEN, healthy, production_like
from tests.support import stop_server_process

PATH = "/verdict.v1.VerdictService/Evaluate"
AUTH = f"Authorization: Bearer {TOKEN}\r\n"
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
PROBES = {
    "bad framing": b"GARBAGE\r\n\r\n",
    "bad content-length": f"POST {PATH} HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n".encode(),
    "two content-lengths": f"POST {PATH} HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n"
    "Content-Length: 2\r\n\r\nab".encode(),
    "h2 bad settings": PREFACE + b"\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x04\xff\xff\xff\xff",
    "h2 garbage": PREFACE + b"\xff" * 100,
    "h2c upgrade": b"GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
    b"HTTP2-Settings: !!!\r\n\r\n",
    "non-utf8 path": b"GET /\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n",
    "non-utf8 header": b"GET /healthz HTTP/1.1\r\nHost: x\r\nX: \xff\xfe\r\n\r\n",
    "bad gzip": f"POST {PATH} HTTP/1.1\r\nHost: x\r\n{AUTH}Content-Type: application/json\r\n"
    "Content-Encoding: gzip\r\nContent-Length: 10\r\n\r\n".encode()
    + b"\x1f\x8b\x08\x00garbag",
    "bad envelope": f"POST {PATH} HTTP/1.1\r\nHost: x\r\n{AUTH}Content-Type: application/grpc-web+proto\r\n"
    "Content-Length: 9\r\n\r\n".encode()
    + b"\x07\xff\xff\xff\xffabcd",
}
RESET = f"POST {PATH} HTTP/1.1\r\nHost: x\r\n{AUTH}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{"


def _send(port: int, data: bytes, *, reset: bool = False) -> None:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(data)
    if reset:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    else:
        sock.settimeout(5)
        try:
            while sock.recv(65536):
                pass
        except OSError:
            pass
    sock.close()


def test_hostile_bytes_leave_no_error_and_few_lines(tmp_path: Path) -> None:
    server = production_like(tmp_path, http_body_timeout_seconds=2, http_idle_timeout_seconds=2)
    try:
        before = len(server.server.log_lines)
        for _ in range(3):
            for data in PROBES.values():
                _send(server.http_port, data)
            _send(server.http_port, RESET.encode(), reset=True)
        time.sleep(1)  # lines about the reset connection are written after it closed
        assert healthy(server.server.grpc_port)
        lines = server.server.log_lines[before:]
    finally:
        stop_server_process(server.server)
    bad = [line for line in lines if '"ERROR"' in line or "Traceback" in line]
    assert bad == []
    assert len(lines) <= 3 * (len(PROBES) + 1), lines  # at most one line per probe
