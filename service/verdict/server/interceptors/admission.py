"""Admission control: how many VerdictService calls run at once, how long one may wait, and who is refused at once.

Why: without it every call is accepted and waits, and under more load than the machine can serve the queue is pure
latency (calls answered after their caller gave up). Here the excess is refused before any work, at once, with
RESOURCE_EXHAUSTED and a `google.rpc.RetryInfo` hint, so the calls that are accepted keep their latency, clients
back off or go to another replica, and every refusal is counted on both sides (`grpc_server_handled_total` with code
ResourceExhausted, and `verdict_shed_total{reason}`). docs/architecture.md ("Admission") explains the numbers.

The model is a short first-come-first-served queue in front of a bounded number of running calls, per event loop
(each worker process has one loop and its own admission):

- at most `running` calls run at once (`max_concurrent_rpcs`; by default `CALLS_PER_LOOP`, the knee of one event
  loop: a call's Python work runs on the loop, so past a few calls more concurrency only lengthens every call and
  slows the loop's accepting of new ones);
- at most `queued` more wait for a slot, in arrival order (`max_queued_rpcs`; by default as many as run);
- the queue's wait is bounded CoDel-style (Nichols and Jacobson's controlled delay): while the shortest wait of the
  last `QUEUE_INTERVAL_SECONDS` stayed above `QUEUE_TARGET_SECONDS`, a queue has stood for a whole interval, which
  only more load than capacity produces; then a call that finds every slot taken is refused at once instead of
  queued, and a queued call is refused once it has waited `QUEUE_TARGET_SECONDS`; a queue that drains within an
  interval (a burst) is left alone, and no queued call waits longer than `QUEUE_INTERVAL_SECONDS`;
- a call beyond those is refused: reason `SERVER_OVERLOADED`;
- a call that arrives with less than `min_deadline_seconds` of its deadline left, or whose deadline runs down to that
  while it waits, is refused with DEADLINE_EXCEEDED (reason `DEADLINE_TOO_SHORT`): it could not be answered in time,
  and RESOURCE_EXHAUSTED would invite a retry with the same hopeless deadline;
- from the start of a shutdown (`drain`), every new or queued call is refused with UNAVAILABLE and a retry hint
  (reason `SHUTTING_DOWN`), counted as `verdict_shed_total{reason="draining"}`, while the running ones finish: a
  retry goes to a replica that is not leaving, and the calls grpc-core had already taken in are answered, not
  cancelled when the server stops (assembly.py, `App.stop`).

Health is never subject to it (a probe refused under load would restart a busy pod, and shedding is not sickness), nor
are reflection and ListEvaluators (answered from memory). The interceptor sits after the access interceptor, so
a caller is authenticated before it takes a place in the queue and per-principal limits apply first.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
import grpc.aio

from verdict.config.keys import Config
from verdict.errors import DeadlineTooShort, ResourceExhausted, Unavailable, VerdictError
from verdict.metrics import Metrics
from verdict.rpc import SERVICE_NAME, to_status
from verdict.rpc.decisions import DecisionLog, record_refusal
from verdict.server.interceptors.base import HandlerInterceptor, answer_with, rewrap
from verdict.server.interceptors.pending import Unread
from verdict.waiting import loop_slot

__all__ = ["Admission", "AdmissionInterceptor", "AdmissionLimits"]

log = logging.getLogger("verdict.admission")

CALLS_PER_LOOP = 2
"""Running calls per event loop by default. By Little's law a loop-bound service gains nothing from more calls in
flight than it needs to keep the loop busy while some of them wait (a `bash -n` child, a parse in the pool): 2-4.
More only makes every call wait its turn on the loop. Measured at twice the capacity once the server accepted calls as
fast as they arrived (acceptors.py; bench/bench_load.py, one worker, 20 KB and shell-heavy answers): 4 running calls
left the accepted calls' p99 13.6-14.0 times the unloaded one, 3 left it 10.8, 2 left it 5.2-5.4, with the same
calls/s for tiny calls under h2load. A call waiting for a judge's answer or a large block in the parse pool does
not hold its slot meanwhile (verdict.waiting), so two slots do not cap judged evaluations."""

QUEUED_PER_RUNNING = 3
"""Queue places per running slot by default: with 2 running, 6 calls may wait, so a client keeping 8 calls in flight
(4 connections x 2) is queued, not refused, while the loop keeps up; CoDel (below) bounds how long they wait."""

QUEUE_TARGET_SECONDS = 0.005
"""CoDel's target: a standing queue is one whose shortest wait over an interval stays above this."""
QUEUE_INTERVAL_SECONDS = 0.1
"""CoDel's interval: how long a queue may stand before it is treated as overload, and the longest any call waits
(`max_queue_wait_seconds`, whose default this is)."""
SHED_LOG_SECONDS = 1.0
"""Refusals are logged at most once per this many seconds, each line counting the refusals since the last."""
DRAIN_RETRY_SECONDS = 0.05
"""The retry hint of a call refused because this server is leaving: retry at once, elsewhere."""

EXEMPT_METHODS = frozenset({"ListEvaluators"})
"""VerdictService methods answered from memory: shedding them would save nothing."""

_STATUSES_KEPT = 256
"""Distinct refusal statuses kept (`Admission.status_of`); past it the cache starts again."""
_RETRY_MIN_SECONDS = 0.05
_RETRY_MAX_SECONDS = 5.0


@dataclass(frozen=True)
class AdmissionLimits:
    """The resolved bounds (no "derive" placeholders left)."""

    running: int
    queued: int
    min_deadline_seconds: float
    queue_target_seconds: float = QUEUE_TARGET_SECONDS
    queue_interval_seconds: float = QUEUE_INTERVAL_SECONDS

    @classmethod
    def from_config(cls, config: Config) -> AdmissionLimits:
        """One event loop's bounds. Every worker process has its own loop and admission, so the limits do not
        depend on the cores: the workers (one per core by default) multiply them."""
        running = config.max_concurrent_rpcs or CALLS_PER_LOOP
        queued = running * QUEUED_PER_RUNNING if config.max_queued_rpcs < 0 else config.max_queued_rpcs
        interval = config.max_queue_wait_seconds
        return cls(running, queued, config.min_deadline_seconds, min(QUEUE_TARGET_SECONDS, interval), interval)


class Admission:
    """Running slots, a FIFO queue under CoDel's bound, and the drain. The event loop is the only caller, so plain
    counters suffice."""

    def __init__(self, limits: AdmissionLimits, metrics: Metrics, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self._metrics = metrics
        self._clock = clock
        self._running = 0
        self._waiters: collections.deque[tuple[asyncio.Future[bool], float]] = collections.deque()
        """(future, arrival time): the future's result is True when a slot passed to it, False when the drain
        woke it."""
        self._mean_seconds = 0.0
        self._interval_ends = 0.0
        self._shortest_wait = 0.0
        """The shortest queue wait seen in the current CoDel interval (0 when a call found a slot free)."""
        self.standing = False
        """CoDel's verdict on the last interval: a queue stood through it, so calls are not queued now."""
        self.draining = False
        self.last_arrival = 0.0
        """When the last call arrived (the clock's seconds): the drain waits until calls stop arriving."""
        self.decisions: DecisionLog | None = None
        """Where sheds are recorded (set by the assembly once the decision log exists)."""
        self._logged_at = -SHED_LOG_SECONDS
        self._unlogged = 0
        self._statuses: dict[tuple[object, ...], grpc.Status] = {}
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
        duration of recent calls, clamped to [50 ms, 5 s], in steps of 10 ms (so the refusals of an overload share a
        few statuses, `status_of`). Clients add their own jitter (gRPC retry backoff)."""
        depth = 1 + len(self._waiters) / max(1, self.limits.running)
        return round(min(_RETRY_MAX_SECONDS, max(_RETRY_MIN_SECONDS, self._mean_seconds * depth)), 2)

    async def enter(self, remaining: float | None) -> None:
        """Take a running slot, waiting in line if there is room; raises ResourceExhausted, DeadlineTooShort or
        (draining) Unavailable.

        `remaining` is the seconds left of the caller's deadline (None: no deadline)."""
        now = self.last_arrival = self._clock()
        if self.draining:
            raise self._leaving()
        minimum = self.limits.min_deadline_seconds
        if remaining is not None and remaining < minimum:
            self._shed("deadline")
            raise _too_short(remaining, minimum)
        self._observe_wait(now, 0.0 if self._running < self.limits.running else None)
        if self._running < self.limits.running and not self._waiters:
            self._running += 1
            return
        if self._no_place_in_line():
            raise self._overloaded()
        waiter: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiters.append((waiter, now))
        bound = self.limits.queue_target_seconds if self.standing else self.limits.queue_interval_seconds
        timeout = bound if remaining is None else min(bound, remaining - minimum)
        try:
            async with asyncio.timeout(timeout):
                granted = await asyncio.shield(waiter)
        except TimeoutError:
            self._abandon(waiter)
            if remaining is not None and remaining - (self._clock() - now) <= minimum + 1e-3:
                self._shed("deadline_in_queue")
                raise _too_short(remaining - (self._clock() - now), minimum) from None
            raise self._overloaded(reason="queue_wait") from None
        except BaseException:
            self._abandon(waiter)
            raise
        if not granted:  # woken by the drain, not given a slot
            raise self._leaving()
        self._observe_wait(self._clock(), self._clock() - now)

    def would_refuse(self) -> bool:
        """Whether `enter` would refuse a call arriving now, before any wait: leaving, or every slot taken and the
        queue full or standing. The call's message need not be read (pending.py's gate); `enter` still decides."""
        return self.draining or (self._running >= self.limits.running and self._no_place_in_line())

    def _no_place_in_line(self) -> bool:
        """A call that finds every slot taken is refused at once: the queue is full, or it has stood a whole
        interval (CoDel)."""
        return self.standing or len(self._waiters) >= self.limits.queued

    def leave(self, seconds: float) -> None:
        """Give the slot to the first caller in line, and fold the call's duration into the retry hint."""
        self._mean_seconds += (seconds - self._mean_seconds) * 0.1
        self._give_back()

    def place(self) -> _Place:
        """The running place of a call `enter` admitted, to lend while it waits outside (verdict.waiting)."""
        return _Place(self)

    def _give_back(self) -> None:
        """A running call lends its place: the first caller in line gets it, or it is free."""
        while self._waiters:
            waiter, _ = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(True)  # the slot passes to it: `running` stays the same
                return
        self._running -= 1

    def _take_back(self) -> None:
        """The call's wait outside is over: it runs again, over the limit if need be (it must finish)."""
        self._running += 1

    def drain(self) -> None:
        """Shutdown has begun: refuse every new call and every queued one with UNAVAILABLE and a retry hint; the
        running calls finish."""
        self.draining = True
        while self._waiters:
            waiter, _ = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(False)  # no slot: `enter` refuses it on waking

    def _observe_wait(self, now: float, wait: float | None) -> None:
        """CoDel's bookkeeping: the shortest wait of each interval decides whether a queue is standing. `wait` is
        None for a call that found every slot taken (it waits at least as long as the queue's oldest)."""
        if wait is None:
            wait = now - self._waiters[0][1] if self._waiters else self.limits.queue_target_seconds
        if now >= self._interval_ends:
            self.standing = self._shortest_wait > self.limits.queue_target_seconds
            self._shortest_wait = wait
            self._interval_ends = now + self.limits.queue_interval_seconds
        else:
            self._shortest_wait = min(self._shortest_wait, wait)

    def _overloaded(self, reason: str = "overloaded") -> ResourceExhausted:
        self._shed(reason)
        return ResourceExhausted(
            f"the server is at capacity ({self._running} calls running, {len(self._waiters)} waiting); "
            "retry after the hinted delay or on another replica",
            reason="SERVER_OVERLOADED",
            metadata={"running": str(self.limits.running), "queued": str(self.limits.queued)},
            retry_after=self.retry_after(),
        )

    def status_of(self, error: VerdictError) -> grpc.Status:
        """The rich status a refusal is answered with, built once per distinct refusal: under overload the same few
        (the counts in the message, the retry hint in 10 ms steps) repeat hundreds of times a second, and building the
        `google.rpc.Status` with its ErrorInfo and RetryInfo was a tenth of a refusal's cost."""
        key = (type(error), error.message, error.reason, error.retry_after, *error.metadata.items())
        status = self._statuses.get(key)
        if status is None:
            if len(self._statuses) >= _STATUSES_KEPT:
                self._statuses.clear()
            status = self._statuses[key] = to_status(error)
        return status

    def _leaving(self) -> Unavailable:
        self._shed("draining")
        return Unavailable(
            "the server is shutting down; retry on another replica",
            reason="SHUTTING_DOWN",
            retry_after=DRAIN_RETRY_SECONDS,
        )

    def _abandon(self, waiter: asyncio.Future[bool]) -> None:
        """A waiter that gives up (deadline, queue bound, cancellation): out of the line; if the slot reached it
        meanwhile, pass the slot on instead of leaking it."""
        if waiter.done() and not waiter.cancelled():
            if waiter.result():
                self.leave(self._mean_seconds)
            return
        waiter.cancel()
        for index, (queued, _) in enumerate(self._waiters):
            if queued is waiter:
                del self._waiters[index]
                break

    def _shed(self, reason: str) -> None:
        self._metrics.shed.labels(reason=reason).inc()

    def refused(self, method: str, error: VerdictError) -> None:
        """What every refusal `enter` raised leaves behind on either port: the log line and the decision record (the
        metric is counted where the refusal is made)."""
        self.shed_line(error)
        record_refusal(self.decisions, method, error)

    def shed_line(self, error: VerdictError) -> None:
        """The log line for refusals: the first at once, then at most one per `SHED_LOG_SECONDS` that counts the
        refusals since the last. Under twice the capacity a line per refusal was hundreds of lines a second, each
        costing the loop more than the refusal itself; `verdict_shed_total` counts every one."""
        self._unlogged += 1
        now = self._clock()
        if now - self._logged_at < SHED_LOG_SECONDS:
            return
        log.info(
            "shed: %s (%s); %d call(s) refused since the last such line",
            error.reason,
            error.code_name,
            self._unlogged,
            extra={"fields": {"event": "shed", "reason": error.reason, "refused": self._unlogged}},
        )
        self._logged_at = now
        self._unlogged = 0


class _Place:
    """One admitted call's running place (`verdict.waiting.LoopSlot`): lent once however many of the call's waits
    overlap, taken back when the last ends."""

    def __init__(self, admission: Admission) -> None:
        self._admission = admission
        self._waits = 0

    def lend(self) -> None:
        self._waits += 1
        if self._waits == 1:
            self._admission._give_back()

    def reclaim(self) -> None:
        self._waits -= 1
        if self._waits == 0:
            self._admission._take_back()


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
        if not handler.unary_unary or not self._governs(full_method):
            return handler
        method = full_method.rpartition("/")[2]
        return rewrap(handler, lambda behavior, _shape: self._admitted(behavior, method), "unary_unary")

    def gate(self, full_method: str) -> Callable[[], bool] | None:
        """For `PendingMessages`: the test of whether a new call of this method would be refused at once, for the
        methods admission governs (None for the others: their message is always read)."""
        return self.admission.would_refuse if self._governs(full_method) else None

    @staticmethod
    def _governs(full_method: str) -> bool:
        service, _, method = full_method.lstrip("/").rpartition("/")
        return service == SERVICE_NAME and method not in EXEMPT_METHODS

    def _admitted(self, behavior: Any, method: str) -> Any:
        admission = self.admission

        async def admitted(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            try:
                await admission.enter(context.time_remaining())
            except VerdictError as error:
                admission.refused(method, error)
                answer_with(context, admission.status_of(error))
                return None
            started = time.monotonic()
            token = loop_slot.set(admission.place())
            try:
                if isinstance(request, Unread):  # expected to be refused, not read (pending.py); admitted after all
                    request = await request.read(context)
                return await behavior(request, context)
            finally:
                loop_slot.reset(token)
                admission.leave(time.monotonic() - started)

        return admitted
