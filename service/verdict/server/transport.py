"""What grpc-core did with calls below the application: the calls it started and failed, read from channelz.

A call grpc-core refuses on its own (its pending-request limits, a listener shutting down) or holds without handing
it to the application never reaches an interceptor, so `grpc_server_*` cannot count it; the caller saw it all the
same. grpc-core's channelz keeps per-server counts of every call it started, succeeded and failed, whoever ended
it. `TransportCounts` copies the started and failed counts into `verdict_transport_calls_total{event}` once a
second (a Counter, so the workers' values add up in the supervisor's multi-process /metrics), and an operator
compares: `verdict_transport_calls_total{event="started"}` growing faster than `grpc_server_started_total` is calls
the application never saw (docs/runbooks.md, VerdictTransportRefusals).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging

from grpc._cython import cygrpc

from verdict.metrics import Metrics

__all__ = ["POLL_SECONDS", "TransportCounts", "channelz_calls"]

log = logging.getLogger("verdict.transport")

POLL_SECONDS = 1.0
"""How often the channelz counts are copied: well under any scrape interval, and one small JSON read each time."""


def channelz_calls() -> tuple[int, int]:
    """(calls started, calls failed) over every gRPC server of this process, as grpc-core counted them."""
    started = failed = 0
    start = 0
    while True:
        page = json.loads(cygrpc.channelz_get_servers(start))
        for server in page.get("server", ()):
            data = server.get("data", {})
            started += int(data.get("callsStarted", 0))
            failed += int(data.get("callsFailed", 0))
            start = max(start, int(server.get("ref", {}).get("serverId", 0)) + 1)
        if page.get("end", True) or not page.get("server"):
            return started, failed


class TransportCounts:
    """Copies channelz's call counts into the metrics while the server runs."""

    def __init__(self, metrics: Metrics) -> None:
        self._started = metrics.transport_calls.labels(event="started")
        self._failed = metrics.transport_calls.labels(event="failed")
        self._seen = (0, 0)
        self._task: asyncio.Task[None] | None = None

    def update(self) -> None:
        """Add what channelz counted since the last update (its counts only grow while a server lives)."""
        try:
            started, failed = channelz_calls()
        except (ValueError, RuntimeError) as exc:  # channelz off (grpc.enable_channelz=0) or an unexpected shape
            log.debug("channelz unavailable: %s", exc)
            return
        seen_started, seen_failed = self._seen
        self._started.inc(max(0, started - seen_started))
        self._failed.inc(max(0, failed - seen_failed))
        self._seen = (max(started, seen_started), max(failed, seen_failed))

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._poll())

    async def stop(self) -> None:
        """A last update (the drain's calls included), then no more."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self.update()

    async def _poll(self) -> None:
        while True:
            self.update()
            await asyncio.sleep(POLL_SECONDS)
