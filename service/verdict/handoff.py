"""Thread pools whose threads get the GIL from an event loop that never lets go of it.

CPython hands the GIL to a waiting thread in two ways: the holder blocks (a real wait releases it, and the waiter,
woken, takes it), or the waiter has waited a whole switch interval (5 ms) without a hand-over and asks the holder to
drop it. A busy asyncio loop defeats both. Each turn polls the selector with a zero timeout, which releases the GIL
and takes it back before the woken waiter runs; and each release wakes the waiter, which then starts its 5 ms wait
over. So while the loop finds work ready at every turn, a thread that needs the GIL (a `Popen` on the runner's
starter thread, a parse sent off the loop, any `asyncio.to_thread`) waits for as long as the loop stays busy:
measured with one or two helper threads and a loop of two coroutines that each spin 1 ms between yields, a `bash -n`
start took 23-51 s, and a thread doing nothing but `time.sleep(0)` got the GIL once in 5 s (bench/NOTES.md,
"Helper threads starved by a busy loop"). More waiting threads break the spell by chance, which is why a server
under load seldom shows it; nothing guarantees it.

So a `HandoffPool` counts its jobs in flight, and while any is, the loop that submitted them blocks for `NAP_SECONDS`
once per switch interval: a real wait, in which a waiting thread takes the GIL. With no job in flight nothing is
scheduled at all. The cost is the nap: at most 4 % of the loop's time, and only while its own threads have work. The
nap is taken whether or not the loop was busy: an idle loop loses nothing by it (a call arriving meanwhile waits
200 us more), and a measure of "busy" (the thread's CPU time, or its time on and waiting for a CPU) either misses a
loop kept off the CPU by other work or counts an idle loop's late wake-ups, so on a loaded machine it would decide
by the load.

A foundation: the runner's pools and the server's default executor (what `asyncio.to_thread` uses) are both
`HandoffPool`s.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

__all__ = ["NAP_SECONDS", "HandoffPool", "looks_of"]

_P = ParamSpec("_P")
_T = TypeVar("_T")

NAP_SECONDS = 0.0002
"""How long the loop blocks to let a waiting thread take the GIL. Measured with two starter threads under a loop
that never blocks: 100 us gave 69 starts/s, 200 us 89, 500 us 149 (bench/NOTES.md); the shortest that reliably wakes
the waiter, since the nap is paid on every look while jobs are in flight."""


class _Looks:
    """One event loop's periodic look: scheduled while any pool's job submitted from the loop is in flight."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._lock = threading.Lock()
        self._in_flight = 0
        self._handle: asyncio.TimerHandle | None = None
        self.naps = 0
        """How many times the loop napped for its threads (for tests and the bench)."""

    @property
    def looking(self) -> bool:
        """Whether a look is scheduled (only while jobs are in flight, and until the first look that finds none)."""
        return self._handle is not None

    def begin(self) -> None:
        """A job was submitted (on the loop's thread): start looking, if not yet."""
        with self._lock:
            self._in_flight += 1
        if self._handle is None:
            self._handle = self._loop.call_later(sys.getswitchinterval(), self._look)

    def end(self) -> None:
        """A job is done (on whichever thread finished it)."""
        with self._lock:
            self._in_flight -= 1

    def _look(self) -> None:
        with self._lock:
            waiting = self._in_flight > 0
        if not waiting:
            self._handle = None
            return
        time.sleep(NAP_SECONDS)  # a real wait: a thread waiting for the GIL takes it now
        self.naps += 1
        self._handle = self._loop.call_later(sys.getswitchinterval(), self._look)


_LOOKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Looks] = weakref.WeakKeyDictionary()


def looks_of(loop: asyncio.AbstractEventLoop) -> _Looks:
    """The loop's one look (shared by every `HandoffPool` it submits to, so two busy pools do not nap twice)."""
    looks = _LOOKS.get(loop)
    if looks is None:
        looks = _LOOKS[loop] = _Looks(loop)
    return looks


class HandoffPool(concurrent.futures.ThreadPoolExecutor):
    """A `ThreadPoolExecutor` whose jobs, submitted from a running event loop (`run_in_executor`, `to_thread`), make
    that loop hand the GIL over while they are in flight (see the module's docstring). Submitted from anywhere else,
    it is a plain thread pool."""

    def submit(self, fn: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs) -> concurrent.futures.Future[_T]:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return super().submit(fn, *args, **kwargs)
        looks = looks_of(loop)
        looks.begin()
        try:
            future = super().submit(fn, *args, **kwargs)
        except BaseException:
            looks.end()
            raise
        future.add_done_callback(_ended(looks))
        return future


def _ended(looks: _Looks) -> Callable[[Any], None]:
    return lambda _future: looks.end()
