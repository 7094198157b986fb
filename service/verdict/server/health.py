"""grpc.health.v1.Health with the lifecycle a draining server needs.

grpcio-health-checking's servicer keeps every Watch stream open until the client goes away, so one client with
health checking on (gRPC's `healthCheckConfig`) holds every shutdown for the whole grace period, and its
`enter_graceful_shutdown` flips every name, liveness included. This one is the same protocol with two differences at
`drain()`: only the names given go NOT_SERVING, and every open Watch stream sends what changed and then ends, so a
rollout waits for real calls only.

Protocol (grpc/grpc doc/health-checking.md): Check of an unknown name is NOT_FOUND; Watch of an unknown name sends
SERVICE_UNKNOWN and waits for it to appear; a Watch sends the current status at once and then every change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

import grpc
import grpc.aio
from grpc_health.v1 import health_pb2, health_pb2_grpc

__all__ = ["Health"]

Status = int
"""A `HealthCheckResponse.ServingStatus` value (SERVING, NOT_SERVING, SERVICE_UNKNOWN)."""


class Health(health_pb2_grpc.HealthServicer):  # type: ignore[misc]
    """The health service; `set()` a name's status, `drain()` at shutdown."""

    def __init__(self, statuses: Mapping[str, Status] | None = None) -> None:
        self._statuses: dict[str, Status] = dict(statuses or {})
        self._changed = asyncio.Condition()
        self._draining = False

    def status(self, service: str) -> Status | None:
        """The current status of a name, or None when it is not registered."""
        return self._statuses.get(service)

    async def set(self, service: str, status: Status) -> None:
        async with self._changed:
            self._statuses[service] = status
            self._changed.notify_all()

    async def drain(self, not_serving: Iterable[str]) -> None:
        """Mark `not_serving` NOT_SERVING and end every Watch stream once it has sent its last change."""
        async with self._changed:
            for service in not_serving:
                self._statuses[service] = health_pb2.HealthCheckResponse.NOT_SERVING
            self._draining = True
            self._changed.notify_all()

    async def Check(
        self, request: health_pb2.HealthCheckRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> health_pb2.HealthCheckResponse:
        status = self._statuses.get(request.service)
        if status is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"unknown service {request.service!r}")
        return health_pb2.HealthCheckResponse(status=status)

    async def Watch(self, request: health_pb2.HealthCheckRequest, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        sent: Status | None = None
        while True:
            async with self._changed:
                status = self._statuses.get(request.service, health_pb2.HealthCheckResponse.SERVICE_UNKNOWN)
                draining = self._draining
                if status == sent and not draining:
                    await self._changed.wait()
                    continue
            if status != sent:
                await context.write(health_pb2.HealthCheckResponse(status=status))
                sent = status
            if draining:
                return
