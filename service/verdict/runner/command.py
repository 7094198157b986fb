"""What a child process is, to the runner and its callers: the `Command` to start, what it did (`Completed`), and
the environment it gets.

Plain values with no process in them, so the pipes, the runner and every caller (bash checks, git, the judge CLIs)
share them without importing the runner's lifecycle.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = [
    "CHECK_NICENESS",
    "Command",
    "CommandNotFound",
    "Completed",
    "lower_priority",
    "minimal_env",
    "signal_name",
]


def minimal_env(path: str | None = None, home: str | None = None, **extra: str) -> dict[str, str]:
    """The environment a child gets: PATH, a UTF-8 locale, HOME if given, and exactly the extras named.

    Nothing else of the server's environment leaks in (no credentials, no BASH_ENV, no GIT_* overrides).
    """
    env = {"PATH": path if path is not None else os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    if home is not None:
        env["HOME"] = home
    env.update(extra)
    return env


@dataclass(frozen=True)
class Command:
    """One child process to run. `tool` is the bounded metric label and the concurrency pool it draws from."""

    tool: str
    argv: tuple[str, ...]
    timeout: float
    env: Mapping[str, str] = field(default_factory=minimal_env)
    stdin: bytes | None = None
    cwd: str | None = None
    max_output_bytes: int = 1024 * 1024
    keep_tail: bool = False
    """Past the cap, keep the last bytes instead of the first: for CLIs that stream events and put the answer last."""
    pass_fds: tuple[int, ...] = ()
    """Descriptors the child inherits under the same numbers (everything else is closed): a directory the caller
    opened and checked, which the child reaches as `/proc/self/fd/N` and which no rename can swap."""
    slot_held: bool = False
    """The caller already holds a slot of this tool's pool (the judge service holds one across the whole call, the
    wait for the deadline and HTTP hosts included), so the runner must not take a second one."""
    niceness: int = 0
    """How much lower than the server's the child's CPU priority is (added to its nice value). CPU-bound checks
    (`bash -n`) run at CHECK_NICENESS, so under load the server's own threads (accepting, answering, health) preempt
    them; a judge CLI, which mostly waits on the network and whose time counts against a deadline, stays at 0."""


CHECK_NICENESS = 10
"""The nice increment of the server's CPU-bound helpers: `bash -n` children and the parse pool's workers. 10 is
what `nice` gives by default: such a helper gets about a tenth of a core the server's threads want, and all of an
idle one."""


def lower_priority(increment: int, pid: int = 0) -> None:
    """Lower `pid`'s CPU priority (0: this process) by `increment` nice steps. A process that has already gone, or
    that this one may not renice, is left as it is: the priority is a preference, never a reason to fail a check."""
    if increment <= 0:
        return
    try:
        current = os.getpriority(os.PRIO_PROCESS, pid)
        os.setpriority(os.PRIO_PROCESS, pid, min(19, current + increment))
    except OSError:
        pass


def signal_name(returncode: int | None) -> str | None:
    """The name of the signal a negative return code stands for (SIGSEGV, ...), or None for an exit or no code.

    The one place signal numbers become names, for children of the runner and workers of the parse pool alike."""
    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


@dataclass(frozen=True)
class Completed:
    """What a child did. `returncode` is None when it was killed at its time limit; negative when a signal ended it."""

    returncode: int | None
    stdout: bytes
    stderr: bytes
    duration: float
    timed_out: bool = False
    stdout_truncated: bool = False
    stderr_truncated: bool = False

    @property
    def signal_name(self) -> str | None:
        """The name of the signal that ended the child (SIGSEGV, ...), or None."""
        return signal_name(self.returncode)


class CommandNotFound(Exception):
    """Raised when the program to run does not exist or is not executable."""

    def __init__(self, program: str) -> None:
        super().__init__(f"{program}: command not found")
        self.program = program
