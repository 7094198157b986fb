"""The server process's main loop: `serve` builds the server, logs its ready record, waits for a signal and drains.

- signals: SIGTERM or SIGINT starts the drain (`App.stop`, assembly.py: readiness NOT_SERVING at once, `grace` seconds
  for in-flight calls); a second signal while draining ends the grace period at once (an operator who presses Ctrl-C
  twice, or a supervisor that escalates, means "now"): in-flight calls are cancelled, and the exit is still 0.
- the ready record: one log record, `event=serving` with the bound ports, once the server accepts calls, so a
  supervisor (kubelet's logs, a test, `verdict.server.supervisor`) can read the ports from the log. `ready_record`
  builds it, here and in the supervisor of several workers, so both have one shape.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
from collections.abc import Callable, Mapping
from typing import Any

import prometheus_client
from prometheus_client import CollectorRegistry

from verdict.config.keys import Config
from verdict.handoff import HandoffPool
from verdict.runner import become_subreaper
from verdict.server.assembly import build_server, start_metrics_server

__all__ = ["ready_record", "serve"]

log = logging.getLogger("verdict.server")


def ready_record(
    *,
    grpc_port: int,
    metrics_port: int | None,
    health_port: int | None,
    http_port: int | None,
    tls: bool,
    auth: bool,
    workers: int,
) -> dict[str, Any]:
    """The fields of the ready record (`event=serving`): the bound ports (None for a port that is off), whether TLS
    and auth are on, and how many server processes serve the gRPC port."""
    return {
        "event": "serving",
        "grpc_port": grpc_port,
        "metrics_port": metrics_port,
        "health_port": health_port,
        "http_port": http_port,
        "tls": tls,
        "auth": auth,
        "workers": workers,
    }


async def serve(
    config: Config,
    *,
    env: Mapping[str, str] | None = None,
    reuse_port: bool = False,
    on_ready: Callable[[dict[str, Any]], None] | None = None,
) -> int:
    """Run until SIGTERM or SIGINT, then drain (a second signal cuts the drain short). Logs one `ready` record
    (fields event=serving, grpc_port, metrics_port) when ready, in the configured log format; returns the exit
    status. Raises ConfigError naming the key when an address cannot be bound.

    One process, whatever `config.workers` says: `verdict.server.supervisor` runs several of these, each with
    `reuse_port` and an `on_ready` that tells the supervisor instead of logging (the supervisor logs the one ready
    record)."""
    prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]
    # `asyncio.to_thread` (off-loop scans, tool-call checks, bounded regexes) goes to the default executor: made a
    # pool whose threads get the GIL even while the loop never blocks (verdict/handoff.py)
    asyncio.get_running_loop().set_default_executor(HandoffPool(thread_name_prefix="verdict-thread"))
    if not become_subreaper():
        log.warning("cannot become a child subreaper: a judge's daemonised grandchild is reaped by init, not here")
    registry = CollectorRegistry()
    app, port = await build_server(config, registry=registry, env=env, reuse_port=reuse_port)
    try:
        metrics_server = await start_metrics_server(app, registry)
    except BaseException:
        await app.components.aclose()
        raise
    stop = asyncio.Event()
    forced: list[asyncio.Task[None]] = []

    def on_signal() -> None:
        if not stop.is_set():
            stop.set()
            return
        log.warning("second signal: cancelling in-flight calls now")
        forced.append(asyncio.ensure_future(app.stop(grace=0)))

    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, on_signal)
    # Everything built so far (modules, the catalogue, the servers) lives as long as the process: moved out of the
    # collector's generations, it is never scanned again, so a collection under load walks only per-call objects.
    gc.freeze()
    await app.start()
    ready = ready_record(
        grpc_port=port,
        metrics_port=metrics_server.port if metrics_server else None,
        health_port=app.health_port or None,
        http_port=app.http.port if app.http is not None else None,
        tls=app.certificates is not None,
        auth=config.auth,
        workers=1,
    )
    if on_ready is not None:
        on_ready(ready)
    else:
        log.info("ready", extra={"fields": ready})
    await stop.wait()
    log.info("signal received; shutting down")
    await app.stop()
    await asyncio.gather(*forced)
    if metrics_server is not None:
        await metrics_server.close()
    return 0
