"""Slow clients against a /metrics server: threads and file descriptors of the serving process, for
prometheus_client's own threaded server (the baseline) and `verdict serve`, measured in the same run.

Each slow client connects, sends half a request and waits. The threaded server holds one thread and one socket per
client; Verdict's holds no thread and at most metrics_max_connections sockets.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

from tests.support import read_ready

__all__ = ["run"]

CLIENTS = 200
_BASELINE = (
    "import prometheus_client, time\n"
    "server, _ = prometheus_client.start_http_server(0, addr='127.0.0.1')\n"
    "print(server.server_port, flush=True)\n"
    "time.sleep(600)\n"
)


def _counts(pid: int) -> tuple[int, int]:
    return len(os.listdir(f"/proc/{pid}/task")), len(os.listdir(f"/proc/{pid}/fd"))


def _stdout_port(process: subprocess.Popen[str]) -> int:
    assert process.stdout is not None
    return int(process.stdout.readline())


def _ready_metrics_port(process: subprocess.Popen[str]) -> int:
    ready, _lines = read_ready(process, 60)
    return int(ready["metrics_port"])


def _measure(argv: list[str], port_of: Callable[[subprocess.Popen[str]], int]) -> tuple[int, int, int, int]:
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = port_of(process)
        time.sleep(0.5)
        threads_before, fds_before = _counts(process.pid)
        clients = []
        for _ in range(CLIENTS):
            client = socket.create_connection(("127.0.0.1", port), timeout=10)
            client.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            clients.append(client)
        time.sleep(1.0)
        threads_after, fds_after = _counts(process.pid)
        for client in clients:
            client.close()
        return threads_before, threads_after, fds_before, fds_after
    finally:
        process.kill()
        process.wait()


def run() -> Iterator[str]:
    baseline = _measure([sys.executable, "-c", _BASELINE], _stdout_port)
    argv = [sys.executable, "-m", "verdict", "serve", "--grpc-address", "127.0.0.1:0"]
    argv += ["--metrics-address", "127.0.0.1:0", "--log-format", "json"]
    verdict = _measure(argv, _ready_metrics_port)
    for name, (t0, t1, f0, f1) in (("prometheus_client threaded", baseline), ("verdict serve", verdict)):
        yield f"{name:27} {CLIENTS} slow clients: threads {t0} -> {t1}, fds {f0} -> {f1}"
