"""Where judge rulings live: `MemoryStore` (one process; LRU with a TTL and an entry bound) and `RedisStore` (shared
by every replica through redis-py). `rulings.RulingCache` is their only caller.

A store holds rulings as bytes (`StoredRuling.encode`), so both bound a ruling's size the same way and a corrupt or
foreign value reads as a miss. Every method may raise StoreUnavailable and none may block past its own time bound:
a store that cannot answer must cost a call a bounded wait, never the call itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import redis.asyncio
import redis.exceptions
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

__all__ = [
    "KEY_PREFIX",
    "MAX_RULING_BYTES",
    "MemoryStore",
    "RedisStore",
    "RulingStore",
    "StoreUnavailable",
    "StoredRuling",
]

MAX_RULING_BYTES = 256 * 1024
"""A ruling larger than this (as stored) is not stored: with `judge_cache_max_entries` it bounds the store's size."""
KEY_PREFIX = "{verdict-rulings}:"
"""Redis key prefix; the braces are a cluster hash tag, so every key the Lua scripts touch lies in one slot."""


@dataclass(frozen=True)
class StoredRuling:
    """A stored ruling: the verdict and details as judged, when (Unix time) and what the judge calls cost."""

    verdict: str
    details: dict[str, Any]
    judged_at: float
    cost_usd: float = 0.0

    def encode(self) -> bytes:
        document = {"v": self.verdict, "d": self.details, "t": self.judged_at, "c": self.cost_usd}
        return json.dumps(document, separators=(",", ":"), ensure_ascii=False, default=str).encode()

    @classmethod
    def decode(cls, data: bytes) -> StoredRuling | None:
        """The ruling in `data`, or None when it is not one (a corrupt or foreign value is a miss, not a crash)."""
        try:
            document = json.loads(data)
        except (UnicodeDecodeError, ValueError, RecursionError):
            return None
        if not isinstance(document, dict):
            return None
        verdict, details, judged_at, cost = (document.get(name) for name in ("v", "d", "t", "c"))
        if not isinstance(verdict, str) or not isinstance(details, dict):
            return None
        if not isinstance(judged_at, int | float) or not isinstance(cost, int | float):
            return None
        return cls(verdict, details, float(judged_at), float(cost))


class StoreUnavailable(Exception):
    """The store could not be reached or answered badly; the caller judges fresh."""


class RulingStore(Protocol):
    """Where rulings live. Every method may raise StoreUnavailable; none may block past its own time bound."""

    kind: str

    async def get(self, key: str) -> StoredRuling | None: ...

    async def put(self, key: str, ruling: StoredRuling) -> int:
        """Store `ruling`; returns how many other rulings were evicted to stay within the entry bound."""
        ...

    async def claim(self, key: str, seconds: float) -> str | None:
        """Claim the judging of `key` for `seconds`: a token when this caller should judge, None when another does."""
        ...

    async def claimed(self, key: str) -> bool: ...

    async def release(self, key: str, token: str) -> None: ...

    async def aclose(self) -> None: ...


class MemoryStore:
    """One process's rulings: least recently used first out past `max_entries`; each lives `ttl` seconds from when
    it was judged. Claims are always granted: one process coordinates its own callers through futures."""

    kind = "memory"

    def __init__(self, *, max_entries: int, ttl: float, clock: Callable[[], float] = time.time) -> None:
        self.max_entries = max_entries
        self.ttl = ttl
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float, bytes]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    async def get(self, key: str) -> StoredRuling | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires, data = entry
        if self._clock() >= expires:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return StoredRuling.decode(data)

    async def put(self, key: str, ruling: StoredRuling) -> int:
        data = ruling.encode()
        if len(data) > MAX_RULING_BYTES:
            return 0
        now = self._clock()
        self._entries[key] = (ruling.judged_at + self.ttl, data)
        self._entries.move_to_end(key)
        for stale in [name for name, (expires, _) in self._entries.items() if expires <= now]:
            del self._entries[stale]
        evicted = 0
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
            evicted += 1
        return evicted

    async def claim(self, key: str, seconds: float) -> str | None:
        return "local"

    async def claimed(self, key: str) -> bool:
        return False

    async def release(self, key: str, token: str) -> None:
        return None

    async def aclose(self) -> None:
        self._entries.clear()


_GET_AND_TOUCH = """
local value = redis.call('GET', KEYS[1])
if value then redis.call('ZADD', KEYS[2], 'XX', ARGV[1], KEYS[1]) end
return value
"""
_PUT_AND_EVICT = """
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], KEYS[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', tonumber(ARGV[3]) - tonumber(ARGV[2]))
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[4])
local evicted = 0
if over > 0 then
  local victims = redis.call('ZRANGE', KEYS[2], 0, over - 1)
  for _, victim in ipairs(victims) do evicted = evicted + redis.call('DEL', victim) end
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, over - 1)
end
return evicted
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class RedisStore:
    """Rulings shared by every replica, in Redis (redis-py's asyncio client).

    Each ruling is a string key with a TTL (Redis expires it); a sorted set beside them scores each key by its last
    use, so a put past `max_entries` deletes the least recently used (a Lua script makes each get-and-touch and each
    put-and-evict atomic). Connecting and every command are bounded by `timeout`, and redis-py's own retries are
    off: a black-holed Redis costs a call at most a few timeouts, then the question is judged fresh.
    """

    kind = "redis"

    def __init__(
        self, url: str, *, max_entries: int, ttl: float, timeout: float, clock: Callable[[], float] = time.time
    ) -> None:
        self.max_entries = max_entries
        self.ttl = ttl
        self._clock = clock
        self._client = redis.asyncio.Redis.from_url(
            url,
            socket_connect_timeout=timeout,
            socket_timeout=timeout,
            retry=Retry(NoBackoff(), 0),
            health_check_interval=0,
        )
        self._timeout = timeout
        self._index = f"{KEY_PREFIX}index"
        self._get = self._client.register_script(_GET_AND_TOUCH)
        self._put = self._client.register_script(_PUT_AND_EVICT)
        self._release = self._client.register_script(_RELEASE)

    def _key(self, key: str) -> str:
        return f"{KEY_PREFIX}ruling:{key}"

    async def _call(self, operation: Awaitable[Any]) -> Any:
        """One Redis operation, bounded as a whole (a script may take two round trips: EVALSHA, then EVAL)."""
        try:
            async with asyncio.timeout(self._timeout * 3):
                return await operation
        except (redis.exceptions.RedisError, OSError, TimeoutError) as exc:
            raise StoreUnavailable(f"{type(exc).__name__}: {exc}") from None

    async def get(self, key: str) -> StoredRuling | None:
        data = await self._call(self._get(keys=[self._key(key), self._index], args=[int(self._clock() * 1000)]))
        return None if data is None else StoredRuling.decode(data)

    async def put(self, key: str, ruling: StoredRuling) -> int:
        data = ruling.encode()
        if len(data) > MAX_RULING_BYTES:
            return 0
        ttl_ms = max(int((ruling.judged_at + self.ttl - self._clock()) * 1000), 1)
        args: list[bytes | int] = [data, ttl_ms, int(self._clock() * 1000), self.max_entries]
        evicted = await self._call(self._put(keys=[self._key(key), self._index], args=args))
        return int(evicted)

    async def claim(self, key: str, seconds: float) -> str | None:
        token = secrets.token_hex(8)
        granted = await self._call(self._client.set(f"{KEY_PREFIX}claim:{key}", token, nx=True, px=int(seconds * 1000)))
        return token if granted else None

    async def claimed(self, key: str) -> bool:
        return bool(await self._call(self._client.exists(f"{KEY_PREFIX}claim:{key}")))

    async def release(self, key: str, token: str) -> None:
        await self._call(self._release(keys=[f"{KEY_PREFIX}claim:{key}"], args=[token]))

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            await self._client.aclose()
