"""The only door to child processes: `bash -n`, `git`, and the judge CLIs all come through here.

- `command.py`: what a child is (`Command`: argv, minimal environment, stdin, time limit, output cap) and what it did
  (`Completed`).
- `door.py`: `Runner.run`, the one entry: starts each child in its own session, kills its group on timeout,
  cancellation, shutdown and normal exit, records counts and durations per tool; `off_loop` for CPU-bound work.
- `attend.py`: one child attended on a thread from its start to its reaping (its stdin fed, both outputs drained and
  capped, its exit waited for through a pidfd), so the event loop spends one wake-up per child.
- `spawn.py` and `pipes.py`: the same on the event loop, where pidfds are missing; `pipes.Sink` caps an output for
  both.
- `descendants.py`: descendants that left the group, found by the `VERDICT_CALL` marker, killed and reaped (the
  server is their subreaper).
- `slots.py`: the named concurrency pools (`bash`, `git`, `judge`, `parse`), bounded slots and queue.

Uses only the configuration and the foundations; the domain, the rpc layer and the server call into it.
"""

from __future__ import annotations

from verdict.runner.command import (
    CHECK_NICENESS,
    Command,
    CommandNotFound,
    Completed,
    lower_priority,
    minimal_env,
    signal_name,
)
from verdict.runner.descendants import (
    MARKER_ENV,
    become_subreaper,
    is_subreaper,
    kill_marked,
    marked_processes,
    reap_adopted,
)
from verdict.runner.door import Runner, start_worker
from verdict.runner.slots import SlotLimit, pool_sizes

__all__ = [
    "CHECK_NICENESS",
    "MARKER_ENV",
    "Command",
    "CommandNotFound",
    "Completed",
    "Runner",
    "SlotLimit",
    "become_subreaper",
    "is_subreaper",
    "kill_marked",
    "lower_priority",
    "marked_processes",
    "minimal_env",
    "pool_sizes",
    "reap_adopted",
    "signal_name",
    "start_worker",
]
