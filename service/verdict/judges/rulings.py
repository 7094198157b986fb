"""Judge rulings, cached: the same question gets the same answer, from any replica, for `judge_cache_ttl_seconds`.

Why: the contract says a retried call gives the same answer, and clients retry UNAVAILABLE on their own. A judge is
an LLM: asked twice, it may rule differently, and every ask is a paid call. So the ruling of a judged evaluator
(llm_structured, comparator, contract) is stored under a digest of everything that determines it, and a repeated
question is answered from the store:

    key = sha256(canonical JSON of [RULING_FORMAT, {evaluator, host, model, every prompt in full, schema,
                                                    the evaluator settings that shape the verdict}])

A hit returns the stored verdict and details with `cached: true` and `cached_age_seconds`; a judged ruling says
`cached: false`. Only rulings are stored: a verdict of `error` (a timeout, a missing CLI, an unreadable answer, a
confidence that is not a number) is a malfunction, and the next ask may well succeed. `fresh: true` on a request
neither reads nor writes the store, for a caller that samples several rulings on purpose.

Stores (`judge_cache`, in `ruling_stores`): `memory` (default; per process, LRU with a TTL and an entry bound),
`redis` (shared by every replica, through redis-py; LRU bound kept in a sorted set beside the entries, TTL by Redis
itself), or `off`. Two asks of one question at once are judged once: the second waits for the first, in-process
through a future, across replicas through a short-lived claim key in Redis (it expires if its owner dies). A store
that fails (Redis down, black-holed: every operation is bounded by `judge_cache_timeout_seconds`) never fails a call:
the question is judged fresh and `verdict_judge_cache_errors_total` counts the failure for an alert.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from verdict.config.keys import Config
from verdict.evaluators.model import EvaluationResult
from verdict.judges.hosts import Host, HttpHost
from verdict.judges.ruling_stores import MemoryStore, RedisStore, RulingStore, StoredRuling, StoreUnavailable
from verdict.metrics import Metrics

__all__ = [
    "RULING_FORMAT",
    "RulingCache",
    "billed",
    "build_ruling_cache",
    "host_identity",
    "record_spend",
    "ruling_key",
]

log = logging.getLogger(__name__)

RULING_FORMAT = 1
"""Part of every key: a release that changes how answers become verdicts bumps it, so no stale ruling is replayed."""
PEER_POLL_SECONDS = 0.05
"""How often a replica waiting for another replica's ruling of the same question looks for it."""
STORE_RETRY_SECONDS = 5.0
"""After a store operation fails, the store is left alone this long: a black-holed Redis then costs one call one
timeout, not every call several."""
_UNCLAIMED = "\0unclaimed"

_BILL: contextvars.ContextVar[list[float] | None] = contextvars.ContextVar("verdict_ruling_bill", default=None)


def record_spend(cost_usd: float | None) -> None:
    """Add a judge call's reported cost to the ruling being judged (the judge service calls this for every call).

    A context variable rather than a return value: comparator and contract make several calls per ruling, in tasks
    that copy the context (and so share the list), and none of them has to thread a bill through.
    """
    bill = _BILL.get()
    if bill is not None and cost_usd is not None and cost_usd > 0:
        bill.append(cost_usd)


async def billed(judge: Judge) -> tuple[EvaluationResult, float]:
    """`judge()` and what its judge calls reported costing. Bills nest: the spend also counts for any enclosing
    bill, so a panel member's cost and its panel's total are both exact."""
    outer = _BILL.get()
    bill: list[float] = []
    token = _BILL.set(bill)
    try:
        result = await judge()
    finally:
        _BILL.reset(token)
        if outer is not None:
            outer.extend(bill)
    return result, sum(bill)


def ruling_key(material: Mapping[str, Any]) -> str:
    """The digest a ruling is stored under. `material` is every input that determines the ruling."""
    canonical = json.dumps(
        [RULING_FORMAT, material], sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def host_identity(host: Host) -> str:
    """What names a judge in a key: the CLI, or the endpoint an HTTP host posts to (two endpoints are two judges)."""
    if isinstance(host, HttpHost):
        return f"{host.name} {host.completions_url}"
    return f"{host.name} {host.binary}"


Judge = Callable[[], Awaitable[EvaluationResult]]


class RulingCache:
    """The judged evaluators' door to the store: `await cache.rule(evaluator, material, fresh=…, judge=…)`.

    `store` None means `judge_cache: off`: every question is judged and details carry no `cached` key. `wait_seconds`
    bounds how long a caller waits for another caller's ruling of the same question (the judge timeout).
    """

    def __init__(
        self,
        store: RulingStore | None,
        metrics: Metrics,
        *,
        wait_seconds: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self._metrics = metrics
        self._wait_seconds = wait_seconds
        self._clock = clock
        self._inflight: dict[str, asyncio.Future[StoredRuling | None]] = {}
        self._down_until = 0.0

    async def rule(
        self,
        evaluator: str,
        material: Mapping[str, Any] | None,
        *,
        fresh: bool,
        deadline: float | None,
        judge: Judge,
    ) -> EvaluationResult:
        """The ruling for `material`: from the store, from a concurrent caller of the same question, or judged.

        `material` None (no judge host to name, inputs that already make the verdict `error`) judges uncached.
        """
        if self.store is None or material is None:
            return await judge()
        lookups = self._metrics.judge_cache_lookups
        if fresh:
            lookups.labels(evaluator=evaluator, result="fresh").inc()
            result, _ = await self._judged(judge)
            return _mark(result, cached=False)
        key = ruling_key(material)
        stored = await self._get(key)
        if stored is not None:
            return self._replay(evaluator, stored)
        leader = self._inflight.get(key)
        if leader is not None:
            shared = await asyncio.shield(leader)
            if shared is not None:
                return self._replay(evaluator, shared)
        future: asyncio.Future[StoredRuling | None] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        claim: str | None = None
        try:
            claim = await self._claim(key)
            if claim is None:
                peer = await self._wait_for_peer(key, deadline)
                if peer is not None:
                    future.set_result(peer)
                    return self._replay(evaluator, peer)
            lookups.labels(evaluator=evaluator, result="miss").inc()
            result, cost = await self._judged(judge)
            if _cacheable(result):
                ruling = StoredRuling(result.verdict, result.details, self._clock(), cost)
                await self._put(key, ruling)
                future.set_result(ruling)
            return _mark(result, cached=False)
        finally:
            if not future.done():
                future.set_result(None)
            if self._inflight.get(key) is future:
                del self._inflight[key]
            if claim is not None and claim != _UNCLAIMED:
                await self._guarded("release", self.store.release(key, claim))

    async def aclose(self) -> None:
        if self.store is not None:
            await self.store.aclose()

    def _replay(self, evaluator: str, ruling: StoredRuling) -> EvaluationResult:
        self._metrics.judge_cache_lookups.labels(evaluator=evaluator, result="hit").inc()
        if ruling.cost_usd > 0:
            self._metrics.judge_cache_saved.labels(evaluator=evaluator).inc(ruling.cost_usd)
        age = max(self._clock() - ruling.judged_at, 0.0)
        details = {**ruling.details, "cached": True, "cached_age_seconds": round(age, 3)}
        return EvaluationResult(ruling.verdict, details)

    async def _judged(self, judge: Judge) -> tuple[EvaluationResult, float]:
        return await billed(judge)

    async def _wait_for_peer(self, key: str, deadline: float | None) -> StoredRuling | None:
        """Another replica is judging this question: its ruling, once stored, or None when it gave up or time ran out
        (the caller then judges itself; a ruling that was an error is never stored, so waiting longer is useless)."""
        until = time.monotonic() + self._wait_seconds
        if deadline is not None:
            until = min(until, deadline - 1.0)
        assert self.store is not None
        while time.monotonic() < until:
            await asyncio.sleep(PEER_POLL_SECONDS)
            ruling = await self._get(key)
            if ruling is not None:
                return ruling
            if not await self._guarded("claimed", self.store.claimed(key), default=False):
                return await self._get(key)
        return None

    async def _get(self, key: str) -> StoredRuling | None:
        assert self.store is not None
        ruling: StoredRuling | None = await self._guarded("get", self.store.get(key), default=None)
        return ruling

    async def _put(self, key: str, ruling: StoredRuling) -> None:
        assert self.store is not None
        evicted: int = await self._guarded("put", self.store.put(key, ruling), default=0)
        if evicted:
            self._metrics.judge_cache_evictions.labels(store=self.store.kind).inc(evicted)

    async def _claim(self, key: str) -> str | None:
        assert self.store is not None
        seconds = self._wait_seconds + 5.0
        claim: str | None = await self._guarded("claim", self.store.claim(key, seconds), default=_UNCLAIMED)
        return claim

    async def _guarded(self, operation: str, call: Awaitable[Any], default: Any = None) -> Any:
        """Run one store operation; a failure is a warning and a metric, and the caller goes on with `default`."""
        assert self.store is not None
        if time.monotonic() < self._down_until:
            if asyncio.iscoroutine(call):
                call.close()
            return default
        try:
            return await call
        except StoreUnavailable as exc:
            self._down_until = time.monotonic() + STORE_RETRY_SECONDS
            self._metrics.judge_cache_errors.labels(store=self.store.kind, operation=operation).inc()
            log.warning("judge cache %s failed, judging fresh: %s", operation, exc)
            return default


def _cacheable(result: EvaluationResult) -> bool:
    """A ruling, not a malfunction: an `error` verdict (or details naming an error) is never stored."""
    return result.verdict != "error" and "error" not in result.details


def _mark(result: EvaluationResult, *, cached: bool) -> EvaluationResult:
    return EvaluationResult(result.verdict, {**result.details, "cached": cached}, result.state)


def build_ruling_cache(config: Config, metrics: Metrics) -> RulingCache:
    """The cache `judge_cache` asks for. Nothing connects here: Redis is reached on the first ruling, so a Redis that
    is down at startup delays no server (its questions are judged fresh until it is back)."""
    store: RulingStore | None
    if config.judge_cache == "memory":
        store = MemoryStore(max_entries=config.judge_cache_max_entries, ttl=config.judge_cache_ttl_seconds)
    elif config.judge_cache == "redis":
        store = RedisStore(
            config.judge_cache_url,
            max_entries=config.judge_cache_max_entries,
            ttl=config.judge_cache_ttl_seconds,
            timeout=config.judge_cache_timeout_seconds,
        )
    else:
        store = None
    return RulingCache(store, metrics, wait_seconds=config.judge_timeout_seconds)
