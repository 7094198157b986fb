"""A real server on port 0 and a real channel to it, in-process or as a child process (fixtures in conftest.py)."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

import grpc
import grpc.aio
from prometheus_client import CollectorRegistry

from verdict.config import Config
from verdict.server import App, build_server
from verdict.v1 import verdict_pb2_grpc


@dataclass
class Running:
    app: App
    channel: grpc.aio.Channel
    stub: verdict_pb2_grpc.VerdictServiceStub
    registry: CollectorRegistry


def make_config(**overrides: object) -> Config:
    values: dict[str, object] = {"grpc_address": "127.0.0.1:0", "metrics_address": ""}
    values.update(overrides)
    return Config(**values)  # type: ignore[arg-type]


class serving:
    """`async with serving(config) as running:` a started server and a channel to it."""

    def __init__(self, config: Config) -> None:
        self.config = config

    async def __aenter__(self) -> Running:
        self.registry = CollectorRegistry()
        self.app, port = await build_server(self.config, registry=self.registry, env=os.environ)
        await self.app.start()
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        return Running(self.app, self.channel, verdict_pb2_grpc.VerdictServiceStub(self.channel), self.registry)

    async def __aexit__(self, *exc: object) -> None:
        await self.channel.close()
        await self.app.stop(grace=1)


@dataclass
class ServerProcess:
    process: subprocess.Popen[str]
    grpc_port: int
    metrics_port: int | None
    health_port: int | None = None

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"


def start_server_process(*flags: str, env: dict[str, str] | None = None, ready_timeout: float = 30) -> ServerProcess:
    """`python -m verdict serve` on free ports; returns once it printed its ready line."""
    argv = [
        sys.executable,
        "-m",
        "verdict",
        "serve",
        "--grpc-address",
        "127.0.0.1:0",
        "--metrics-address",
        "127.0.0.1:0",
        # One process unless the test asks for workers (the default follows the machine's cores).
        "--workers",
        "1",
        *flags,
    ]
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env or dict(os.environ)
    )
    assert process.stdout is not None
    deadline = time.monotonic() + ready_timeout
    while time.monotonic() < deadline:
        readable, _, _ = select.select([process.stdout], [], [], 0.2)
        if readable:
            line = process.stdout.readline()
            if line:
                ready = json.loads(line)
                assert ready["event"] == "serving"
                return ServerProcess(process, ready["grpc_port"], ready["metrics_port"], ready.get("health_port"))
        if process.poll() is not None:
            break
    process.kill()
    raise AssertionError(f"server did not become ready: {process.stderr.read() if process.stderr else ''}")


def stop_server_process(server: ServerProcess) -> None:
    if server.process.poll() is None:
        server.process.send_signal(signal.SIGTERM)
        try:
            server.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.process.kill()
