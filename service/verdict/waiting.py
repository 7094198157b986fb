"""Waiting outside the event loop: a call that spends seconds on work outside the process says so, and admission
control lets another call use the event loop meanwhile.

Admission control bounds the calls *running* on a worker's event loop (two by default), because a call's Python work
runs there. A call that waits for a judge's answer or for a parse in the pool does no such work for seconds, and while
it held its place, two judged evaluations left every other call of the worker queued and then refused. The admission
layer puts the call's place in `loop_slot` when it admits the call; `waiting_outside()` gives the place back for the
length of the block and takes it again when the block ends, without queueing (the call must finish; what it waited on
is bounded by its own pool: `max_concurrent_judges`, `parse_workers`). The waits of one call that overlap (a panel
asks its judges at once) give the place back once.

A foundation, so the domain (judges, verify) can say it waits without knowing who listens; outside a server nothing
does, and the block just runs.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import AsyncIterator
from typing import Protocol

__all__ = ["LoopSlot", "loop_slot", "waiting_outside"]


class LoopSlot(Protocol):
    """A call's place among the running calls of an event loop."""

    def lend(self) -> None:
        """Give the place to another call while this one waits outside."""

    def reclaim(self) -> None:
        """Take a place again, at once, when the wait is over."""


loop_slot: contextvars.ContextVar[LoopSlot | None] = contextvars.ContextVar("verdict_loop_slot", default=None)


@contextlib.asynccontextmanager
async def waiting_outside() -> AsyncIterator[None]:
    """The block waits outside the process: the call's running place is lent for its length."""
    slot = loop_slot.get()
    if slot is None:
        yield
        return
    slot.lend()
    try:
        yield
    finally:
        slot.reclaim()
