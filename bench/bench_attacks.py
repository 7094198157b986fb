"""Health and memory while the attacker's probes run: the security tests' hostile shapes, replayed against a server
configured as production is (bearer tokens, a policy, the HTTP port, a file decision log), with health timed.

The tests (tests/security/) assert behaviour: refused, bounded, health answers. This measures the figures those
targets name, in one run against one server process per scenario: the worst and the 99th-percentile latency of a
grpc.health.v1 Check sent every 50 ms while the attack is in flight (target ≤ 0.5 s), beside the same probes with
no attack (the baseline), and the server's peak resident memory growth (VmHWM; targets: ≤ +200 MB for the 16.7 MB
nested request, ≤ +100 MB for 20,000 unfinished streams).

`python -m bench attacks` prints one line per scenario.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import gzip
import socket
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.security.support import MIB, TOKEN, Hostile, peak_bytes, production_like, status_kib
from tests.security.test_decoder_memory import LONG, nested_past_the_limit
from tests.security.test_unfinished_streams import PER_CONNECTION, STREAMS, _unfinished
from tests.support import http_send, stop_server_process

PROBE_INTERVAL_SECONDS = 0.05
HEALTH_TARGET_SECONDS = 0.5
EVALUATE = "/verdict.v1.VerdictService/Evaluate"
MEMBERS = gzip.compress(b"") * ((4 * MIB - 64) // len(gzip.compress(b"")))


class _Prober:
    """Sends a health Check every PROBE_INTERVAL_SECONDS on its own channel and keeps each latency."""

    def __init__(self, port: int) -> None:
        self._channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        self._stub = health_pb2_grpc.HealthStub(self._channel)
        self._stop = threading.Event()
        self.latencies: list[float] = []
        self.failures = 0
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.perf_counter()
            try:
                self._stub.Check(health_pb2.HealthCheckRequest(service="liveness"), timeout=10)
            except grpc.RpcError:
                self.failures += 1
            self.latencies.append(time.perf_counter() - started)
            self._stop.wait(PROBE_INTERVAL_SECONDS)

    def __enter__(self) -> _Prober:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        self._channel.close()


def _p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98] if len(values) >= 2 else (values[0] if values else 0.0)


def _deep_request(server: Hostile, count: int) -> None:
    attack = nested_past_the_limit(LONG)
    options = [("grpc.max_send_message_length", 64 * MIB)]

    def one() -> None:
        with grpc.insecure_channel(f"127.0.0.1:{server.server.grpc_port}", options=options) as channel:
            call = channel.unary_unary(EVALUATE, request_serializer=None, response_deserializer=None)
            with contextlib.suppress(grpc.RpcError):
                call(attack, timeout=120)

    with concurrent.futures.ThreadPoolExecutor(count) as pool:
        list(pool.map(lambda _: one(), range(count)))


def _gzip_members(server: Hostile) -> None:
    headers = {"Content-Type": "application/json", "Content-Encoding": "gzip", "Authorization": f"Bearer {TOKEN}"}
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda _: http_send(server.http_port, "POST", EVALUATE, MEMBERS, headers), range(4)))


def _slow_bodies(server: Hostile, count: int = 300) -> None:
    """Heads without credentials announcing 4 MiB, then a trickle: refused at the head, closed by the server."""
    held = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", server.http_port), timeout=10)
        sock.sendall(
            f"POST {EVALUATE} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {4 * MIB}\r\n\r\n{{".encode()
        )
        held.append(sock)
    time.sleep(2)
    for sock in held:
        sock.close()


def _unfinished_streams(server: Hostile) -> None:
    held = [_unfinished(server.server.grpc_port, PER_CONNECTION) for _ in range(STREAMS // PER_CONNECTION)]
    time.sleep(3)
    for sock, _ in held:
        sock.close()


SCENARIOS: list[tuple[str, Callable[[Hostile], None], dict[str, Any]]] = [
    ("one 16.7 MB request nested 60 deep", lambda server: _deep_request(server, 1), {}),
    ("six of them at once", lambda server: _deep_request(server, 6), {}),
    ("four 4 MiB bodies of gzip members", _gzip_members, {}),
    ("300 slow unauthenticated bodies", _slow_bodies, {}),
    (f"{STREAMS:,} unfinished gRPC streams", _unfinished_streams, {"max_connections": 1024}),
]


def run() -> Iterator[str]:
    yield f"health probed every {PROBE_INTERVAL_SECONDS * 1000:.0f} ms; target: worst ≤ {HEALTH_TARGET_SECONDS} s"
    for name, attack, keys in SCENARIOS:
        with tempfile.TemporaryDirectory() as directory:
            server = production_like(Path(directory), **keys)
            try:
                with _Prober(server.server.grpc_port) as quiet:
                    time.sleep(1.0)
                baseline_peak = peak_bytes(server.pid)
                rss_before = status_kib(server.pid, "VmRSS") * 1024
                with _Prober(server.server.grpc_port) as loud:
                    attack(server)
                grown = (peak_bytes(server.pid) - baseline_peak) // MIB
                rss = (status_kib(server.pid, "VmRSS") * 1024 - rss_before) // MIB
                worst = max(loud.latencies, default=0.0)
                met = "met" if worst <= HEALTH_TARGET_SECONDS and not loud.failures else "missed"
                yield (
                    f"{name}: health worst {worst * 1000:.0f} ms, p99 {_p99(loud.latencies) * 1000:.0f} ms "
                    f"(quiet p99 {_p99(quiet.latencies) * 1000:.0f} ms, {len(loud.latencies)} probes, "
                    f"{loud.failures} failed) [{met}]; peak memory +{grown} MiB, RSS after +{rss} MiB"
                )
            finally:
                stop_server_process(server.server)
