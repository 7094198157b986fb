"""The HTTP port with `workers: 2`: every worker listens on the one shared HTTP port (SO_REUSEPORT), and the
supervisor's ready record names it; turning the HTTP port on no longer drops the server to one process."""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from tests.support import http_send, start_server_process, stop_server_process
from verdict.config.keys import Config
from verdict.server.supervisor import resolve_workers


def _children(pid: int) -> list[int]:
    with contextlib.suppress(OSError):
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    return []


def _listening_inodes(port: int) -> set[str]:
    """Socket inodes in LISTEN state on `port`, from the kernel's TCP tables."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                local, state, inode = fields[1], fields[3], fields[9]
                if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                    inodes.add(inode)
    return inodes


def _socket_inodes(pid: int) -> set[str]:
    inodes: set[str] = set()
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[len("socket:[") : -1])
    return inodes


def test_the_http_port_no_longer_limits_the_worker_count() -> None:
    assert resolve_workers(Config(http_address="127.0.0.1:0", workers=3)) == 3


def test_every_worker_listens_on_the_shared_http_port() -> None:
    server = start_server_process("--workers", "2", "--http-address", "127.0.0.1:0")
    try:
        ready = next(record for record in server.records() if record.get("event") == "serving")
        port = ready["http_port"]
        assert isinstance(port, int)
        assert ready["workers"] == 2
        deadline = time.monotonic() + 30
        workers = _children(server.process.pid)
        while len(workers) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
            workers = _children(server.process.pid)
        assert len(workers) == 2
        listening = _listening_inodes(port)
        for worker in workers:
            assert _socket_inodes(worker) & listening, f"worker {worker} does not listen on the HTTP port {port}"
        for _ in range(6):  # fresh connections, which the kernel spreads over the workers
            status, _headers, body = http_send(
                port,
                "POST",
                "/verdict.v1.VerdictService/VerifyResponse",
                json.dumps({"text": "Done."}).encode(),
                {"Content-Type": "application/json"},
            )
            assert status == 200, body
            status, _headers, body = http_send(port, "GET", "/readyz")
            assert (status, json.loads(body)["status"]) == (200, "SERVING")
    finally:
        stop_server_process(server)
