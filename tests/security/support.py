"""A `verdict serve` process configured as production is (bearer tokens, a per-principal policy, the HTTP port, a
file decision log), for probing the ports as a caller without credentials would, and what the tests read from it:
its peak memory and whether health still answers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
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
