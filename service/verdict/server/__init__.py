"""The server edge: assembly and lifecycle, health, the HTTP port, /metrics, logs and worker processes.

- `assembly.py`: `build_server` (gRPC aio, health, reflection, interceptors, the HTTP port) and the `App` it
  returns; `build_components`, the domain side alone.
- `lifecycle.py`: `serve`, the process's main loop (signals, drain), and the ready record it logs.
- `interceptors/`: what every gRPC call passes through, one module per interceptor.
- `health.py`: grpc.health.v1 with the lifecycle a draining server needs.
- `connect.py`: the same RPCs over Connect, gRPC-Web and gRPC on the HTTP port.
- `scrape.py`: the bounded /metrics server.
- `logs.py`: one log format per stream, the call context on every line.
- `cores.py`: how many cores this process may use (workers and admission are sized by it).
- `supervisor.py`: N server processes on one port under a supervisor, and the one /metrics of them all.
- `workers.py`: one of those processes, `python -m verdict.server.workers CONFIG_FILE`.

Uses the rpc layer and everything below it; only the CLI uses the server.
"""

from __future__ import annotations

from verdict.server.assembly import (
    LIVENESS_SERVICE,
    READINESS_SERVICES,
    App,
    Components,
    build_components,
    build_server,
)
from verdict.server.cores import cpu_quota_cores
from verdict.server.lifecycle import serve
from verdict.server.logs import configure_logging
from verdict.server.supervisor import resolve_workers, supervise

__all__ = [
    "LIVENESS_SERVICE",
    "READINESS_SERVICES",
    "App",
    "Components",
    "build_components",
    "build_server",
    "configure_logging",
    "cpu_quota_cores",
    "resolve_workers",
    "serve",
    "supervise",
]
