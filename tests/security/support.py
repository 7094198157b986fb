"""A `verdict serve` process configured as production is (bearer tokens, a per-principal policy, the HTTP port, a
file decision log), for probing the ports as a caller without credentials would, and what the tests read from it:
its peak memory and whether health still answers."""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import h2.config
import h2.connection
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.support import ServerProcess, start_server_process

TOKEN = "prober-token-0123456789abcdef01"
POLICY = "principals:\n  prober:\n    rpcs: [VerifyResponse, Evaluate, ListEvaluators]\n"
MIB = 1024 * 1024


@dataclass
class Hostile:
    """The process and its ports; `decisions` is the decision log file."""

    server: ServerProcess
    http_port: int
    decisions: Path

    @property
    def pid(self) -> int:
        return self.server.process.pid


def production_like(tmp_path: Path, *flags: str, policy: str = POLICY, **keys: Any) -> Hostile:
    """Start the server with auth, the HTTP port and a file decision log; `keys` are more configuration keys."""
    tokens = tmp_path / "tokens"
    tokens.mkdir()
    (tokens / "prober").write_text(TOKEN)
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text(policy)
    decisions = tmp_path / "decisions.jsonl"
    config = {
        "auth_policy_file": str(policy_file),
        "auth_tokens_dir": str(tokens),
        "http_address": "127.0.0.1:0",
        "decision_log": "file",
        "decision_log_path": str(decisions),
        **keys,
    }
    path = tmp_path / "verdict.yaml"
    path.write_text(json.dumps(config))
    server = start_server_process("--config", str(path), *flags)
    ready = next(json.loads(line) for line in server.log_lines if '"serving"' in line)
    return Hostile(server, int(ready["http_port"] or 0), decisions)


def status_kib(pid: int, key: str) -> int:
    """A /proc/PID/status figure in KiB: VmHWM (peak resident memory) or VmRSS."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {key} in /proc/{pid}/status")


def peak_bytes(pid: int) -> int:
    return status_kib(pid, "VmHWM") * 1024


def healthy(port: int, timeout: float = 10.0) -> bool:
    """Whether the health service answers SERVING on `port` within `timeout` seconds."""
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service="liveness"), timeout=timeout
            )
        except grpc.RpcError:
            return False
    return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


def raw_grpc_call(port: int, path: str, headers: list[tuple[str, str]], message: bytes | None) -> dict[str, str]:
    """Open one HTTP/2 stream by hand and return every header the server answers with, trailers included.

    `message` is sent whole and closes the stream; None leaves the stream open with no message (what a slow or
    hostile client does). Reads until a `grpc-status` arrives or the server closes the connection: what grpcio's
    own client would hide (its INTERNAL, its wait for the body) is what these tests look at."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    connection.initiate_connection()
    head = [(":method", "POST"), (":scheme", "http"), (":authority", "x"), (":path", path)]
    connection.send_headers(1, [*head, ("content-type", "application/grpc"), ("te", "trailers"), *headers])
    if message is not None:
        connection.send_data(1, message, end_stream=True)
    sock.sendall(connection.data_to_send())
    answer: dict[str, str] = {}
    try:
        while "grpc-status" not in answer:
            data = sock.recv(65536)
            if not data:
                break
            for event in connection.receive_data(data):
                for key, value in getattr(event, "headers", None) or ():
                    answer[bytes(key).decode()] = bytes(value).decode()
            sock.sendall(connection.data_to_send())
    finally:
        sock.close()
    return answer
