"""Admission control: how many VerdictService calls run at once, how many may wait, and who is refused at once.

Why: without it every call is accepted and waits, and under more load than the machine can serve the queue is pure
latency (calls answered after their caller gave up), while grpc-core's own limit answers the excess with CANCELLED,
a code retry policies ignore and the server's metrics never see. Here the excess is refused before any work, at once,
with RESOURCE_EXHAUSTED and a `google.rpc.RetryInfo` hint, so the calls that are accepted keep their latency, clients
back off or go to another replica, and the refusal is counted on both sides (`grpc_server_handled_total` with code
ResourceExhausted, and `verdict_shed_total{reason}`).

The model is a bounded first-come-first-served queue in front of a bounded number of running calls:

- at most `running` calls run at once (`max_concurrent_rpcs`; by default 4 per available core, since a call's Python
  work runs on the one event loop and its child processes on the cores);
- at most `queued` more wait for a slot, in arrival order (`max_queued_rpcs`; by default as many as run);
- a call beyond both is refused: reason `SERVER_OVERLOADED`;
- a call that arrives with less than `min_deadline_seconds` of its deadline left, or whose deadline runs down to that
  while it waits, is refused with DEADLINE_EXCEEDED (reason `DEADLINE_TOO_SHORT`): it could not be answered in time,
  and RESOURCE_EXHAUSTED would invite a retry with the same hopeless deadline.

Health is never subject to it (a probe refused under load would restart a busy pod, and shedding is not sickness), nor
are reflection and ListEvaluators (answered from memory). The interceptor sits after the access interceptor, so
a caller is authenticated before it takes a place in the queue and per-principal limits apply first.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from dataclasses import dataclass
from typing import Any

import grpc
import grpc.aio

from verdict.config.keys import Config
from verdict.errors import DeadlineTooShort, ResourceExhausted, VerdictError
from verdict.metrics import Metrics
from verdict.rpc import SERVICE_NAME, to_status
from verdict.rpc.decisions import DecisionLog, record_refusal
from verdict.server.cores import cpu_quota_cores
from verdict.server.interceptors.base import HandlerInterceptor, rewrap

__all__ = ["Admission", "AdmissionInterceptor", "AdmissionLimits"]

log = logging.getLogger("verdict.admission")

CALLS_PER_CORE = 4
"""Running calls per core by default: enough to overlap a call's child processes (bash -n, git) with another call's
Python work, few enough that a queue of accepted calls stays a few calls deep."""

EXEMPT_METHODS = frozenset({"ListEvaluators"})
"""VerdictService methods answered from memory: shedding them would save nothing."""

_RETRY_MIN_SECONDS = 0.05
_RETRY_MAX_SECONDS = 5.0


@dataclass(frozen=True)
class AdmissionLimits:
    """The resolved bounds (no "derive" placeholders left)."""

    running: int
    queued: int
    min_deadline_seconds: float

    @classmethod
    def from_config(cls, config: Config, cores: int | None = None) -> AdmissionLimits:
        running = config.max_concurrent_rpcs or CALLS_PER_CORE * (cores or cpu_quota_cores())
        queued = running if config.max_queued_rpcs < 0 else config.max_queued_rpcs
        return cls(running, queued, config.min_deadline_seconds)


class Admission:
    """Running slots and a FIFO queue. The event loop is the only caller, so plain counters suffice."""

    def __init__(self, limits: AdmissionLimits, metrics: Metrics) -> None:
        self.limits = limits
        self._metrics = metrics
        self._running = 0
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._mean_seconds = 0.0
        self.decisions: DecisionLog | None = None
        """Where sheds are recorded (set by the assembly once the decision log exists)."""
        metrics.admission_running.set_function(lambda: self._running)
        metrics.admission_queued.set_function(lambda: len(self._waiters))

    @property
    def running(self) -> int:
        return self._running

    @property
    def queued(self) -> int:
        return len(self._waiters)

    def retry_after(self) -> float:
        """The hint sent with a refusal: about the time a queue's worth of calls takes to drain, from the mean
        duration of recent calls, clamped to [50 ms, 5 s]. Clients add their own jitter (gRPC retry backoff)."""
        depth = 1 + len(self._waiters) / max(1, self.limits.running)
        return min(_RETRY_MAX_SECONDS, max(_RETRY_MIN_SECONDS, self._mean_seconds * depth))

    async def enter(self, remaining: float | None) -> None:
        """Take a running slot, waiting in line if there is room; raises ResourceExhausted or DeadlineTooShort.

        `remaining` is the seconds left of the caller's deadline (None: no deadline)."""
        minimum = self.limits.min_deadline_seconds
        if remaining is not None and remaining < minimum:
            self._shed("deadline")
            raise _too_short(remaining, minimum)
        if self._running < self.limits.running and not self._waiters:
            self._running += 1
            return
        if len(self._waiters) >= self.limits.queued:
            self._shed("overloaded")
            raise ResourceExhausted(
                f"the server is at capacity ({self._running} calls running, {len(self._waiters)} waiting); "
                "retry after the hinted delay or on another replica",
                reason="SERVER_OVERLOADED",
                metadata={"running": str(self.limits.running), "queued": str(self.limits.queued)},
                retry_after=self.retry_after(),
            )
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        started = time.monotonic()
        try:
            timeout = None if remaining is None else remaining - minimum
            await asyncio.wait_for(asyncio.shield(waiter), timeout)
        except TimeoutError:
            self._abandon(waiter)
            self._shed("deadline_in_queue")
            raise _too_short(remaining - (time.monotonic() - started) if remaining else 0.0, minimum) from None
        except BaseException:
            self._abandon(waiter)
            raise

    def leave(self, seconds: float) -> None:
        """Give the slot to the first caller in line, and fold the call's duration into the retry hint."""
        self._mean_seconds += (seconds - self._mean_seconds) * 0.1
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the slot passes to it: `running` stays the same
                return
        self._running -= 1

    def _abandon(self, waiter: asyncio.Future[None]) -> None:
        """A waiter that gives up (deadline, cancellation): out of the line; if the slot reached it meanwhile, pass
        the slot on instead of leaking it."""
        if waiter.done() and not waiter.cancelled():
            self.leave(self._mean_seconds)
            return
        waiter.cancel()
        with contextlib.suppress(ValueError):
            self._waiters.remove(waiter)

    def _shed(self, reason: str) -> None:
        self._metrics.shed.labels(reason=reason).inc()


def _too_short(remaining: float, minimum: float) -> DeadlineTooShort:
    return DeadlineTooShort(
        f"the call's deadline leaves {max(0.0, remaining) * 1000:.0f} ms, under the {minimum * 1000:.0f} ms a call "
        "needs (min_deadline_seconds); refused before any work",
        metadata={"remainingMs": str(int(max(0.0, remaining) * 1000)), "minimumMs": str(int(minimum * 1000))},
    )


class AdmissionInterceptor(HandlerInterceptor):
    """Applies `Admission` to every unary VerdictService call but the exempt ones."""

    def __init__(self, admission: Admission) -> None:
        self.admission = admission

    def intercept_handler(self, handler: grpc.RpcMethodHandler, full_method: str) -> grpc.RpcMethodHandler:
        service, _, method = full_method.lstrip("/").rpartition("/")
        if service != SERVICE_NAME or method in EXEMPT_METHODS or not handler.unary_unary:
            return handler
        return rewrap(handler, lambda behavior, _shape: self._admitted(behavior, method), "unary_unary")

    def _admitted(self, behavior: Any, method: str) -> Any:
        admission = self.admission

        async def admitted(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            try:
                await admission.enter(context.time_remaining())
            except VerdictError as error:
                log.info("shed: %s (%s)", error.reason, error.code_name)
                record_refusal(admission.decisions, method, error)
                await context.abort_with_status(to_status(error))
                return None
            started = time.monotonic()
            try:
                return await behavior(request, context)
            finally:
                admission.leave(time.monotonic() - started)

        return admitted
