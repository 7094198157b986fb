"""The server's named concurrency pools: bounded slots and a bounded queue, overflow refused at once.

Every pool (`bash`, `git`, `judge`, `parse`) is a `SlotLimit` held by the runner and sized here from the config, in
one place (`pool_sizes`), so that nobody else makes a semaphore and no queue grows without limit.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from verdict.config.keys import Config
from verdict.errors import ResourceExhausted

__all__ = ["SlotLimit", "pool_sizes"]


class SlotLimit:
    """At most `slots` holders at once, at most `queue` more waiting; anyone beyond that is refused at once.

    Refusing is the point: a caller told RESOURCE_EXHAUSTED retries elsewhere, a caller left waiting in an unbounded
    queue times out having cost memory and a connection the whole time.
    """

    def __init__(self, name: str, slots: int, queue: int) -> None:
        self.name = name
        self.slots = slots
        self.queue = queue
        self._semaphore = asyncio.Semaphore(slots)
        self._waiting = 0
        self._held = 0

    @property
    def waiting(self) -> int:
        return self._waiting

    @property
    def held(self) -> int:
        return self._held

    def per_call(self) -> asyncio.Semaphore:
        """A semaphore as wide as this pool, for one call that fans out (a completion with many shell blocks): its
        own checks wait their turn among themselves instead of filling the pool's queue and being refused."""
        return asyncio.Semaphore(self.slots)

    @contextlib.asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        if self._semaphore.locked() and self._waiting >= self.queue:
            raise ResourceExhausted(
                f"too many concurrent {self.name} calls: {self.slots} running and {self._waiting} queued",
                reason="TOO_MANY_CONCURRENT_CALLS",
                metadata={"pool": self.name, "slots": str(self.slots), "queue": str(self.queue)},
            )
        self._waiting += 1
        try:
            await self._semaphore.acquire()
        finally:
            self._waiting -= 1
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
            self._semaphore.release()


def pool_sizes(config: Config) -> dict[str, tuple[int, int]]:
    """Slots and queue length of every named pool, from the config: the one place they are decided.

    `bash` and `git` share max_concurrent_shell_checks; the git queue is shorter because a diffstat is one call per
    request, a completion may hold many shell blocks. `parse` bounds the blocks one call sends to the parse pool at
    once (the pool itself has parse_workers processes, and each call waits its turn there)."""
    return {
        "bash": (config.max_concurrent_shell_checks, 1024),
        "git": (config.max_concurrent_shell_checks, 256),
        "judge": (config.max_concurrent_judges, config.judge_queue_size),
        "parse": (config.parse_workers, 1024),
    }
