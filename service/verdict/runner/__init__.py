"""The only door to child processes: `bash -n`, `git`, and the judge CLIs all come through here.

- `command.py`: what a child is (`Command`: argv, minimal environment, stdin, time limit, output cap) and what it did
  (`Completed`).
- `door.py`: `Runner.run`, the one entry: starts each child in its own session, kills its group on timeout,
  cancellation, shutdown and normal exit, records counts and durations per tool; `off_loop` for CPU-bound work.
- `spawn.py`: one child started on a starter thread, not the event loop's (the loop keeps running while the child
  execs), and handed to asyncio's subprocess transport.
- `pipes.py`: one child's pipes, fed and drained at once, each capped.
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
