"""Files a judged evaluator reads or writes (comparator baselines, contract pairs): always inside workspace_root.

Paths are resolved against the request's workspace, and both the workspace and the file must resolve inside the
configured root, symlinks followed (`verdict.workspace.resolve_inside`): PermissionDenied otherwise, and
FailedPrecondition when the server has no root at all. Reads and writes run in a worker thread, off the event loop.

Only regular files are read or written, and only up to MAX_FILE_BYTES: a FIFO or a device in the workspace would block
the worker thread for ever (it cannot be cancelled, and asyncio's default pool has a few dozen), and a producer that
is a multi-gigabyte log would be read whole into memory only for its last 4000 characters to be shown to the judge.
"""

from __future__ import annotations

import asyncio
import errno
import os
import stat
from pathlib import Path

from verdict.workspace import resolve_inside

__all__ = ["MAX_FILE_BYTES", "read_text", "workspace_file", "write_text"]

MAX_FILE_BYTES = 16 * 1024 * 1024
"""The largest baseline or contract file read."""


def workspace_file(root: str, workspace: str, *parts: str, field: str = "config") -> Path:
    """The file at `workspace/parts...`, resolved inside `root`. Raises PermissionDenied or FailedPrecondition, and
    InvalidArgument naming `workspace` or `field` (where `parts` came from) for a path the OS refuses."""
    base = resolve_inside(root, workspace or ".")
    return resolve_inside(root, base.joinpath(*parts), field=field)


def _regular(descriptor: int) -> os.stat_result:
    info = os.fstat(descriptor)
    if not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, "not a regular file")
    return info


def _too_large(size: int) -> OSError:
    return OSError(errno.EFBIG, f"the file is {size} bytes; files over {MAX_FILE_BYTES} bytes are not read")


def _read(path: Path) -> str:
    # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer; it changes nothing for a regular file
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(descriptor, "rb") as handle:
        info = _regular(descriptor)
        if info.st_size > MAX_FILE_BYTES:
            raise _too_large(info.st_size)
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise _too_large(len(data))
    return data.decode("utf-8", "replace")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # O_NONBLOCK: opening a FIFO with no reader fails (ENXIO) instead of waiting for one
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC, 0o666)
    with os.fdopen(descriptor, "wb") as handle:
        _regular(descriptor)
        os.set_blocking(descriptor, True)
        handle.truncate(0)
        handle.write(text.encode("utf-8"))


async def read_text(path: Path) -> str:
    """The file's text (invalid UTF-8 replaced). Raises OSError, also for what is not a regular file or is over
    MAX_FILE_BYTES."""
    return await asyncio.to_thread(_read, path)


async def write_text(path: Path, text: str) -> None:
    """Write the file, creating its directory. Raises OSError, also for what is not a regular file."""
    await asyncio.to_thread(_write, path, text)
