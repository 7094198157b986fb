"""Files a judged evaluator reads or writes (comparator baselines, contract pairs): always inside workspace_root.

The agent being judged can write inside the root while the call runs, so a path checked and then opened by name could
be swapped for a link in between. Nothing here does that: `workspace_file` checks the request's path lexically
(`verdict.workspace.inside`), and the read or write then opens it beneath a descriptor of the root without following
any link (`verdict.workspace.open_beneath`). A read uses the bytes of the very descriptor it checked; a write goes
to a fresh temporary file created in the checked directory (by its descriptor) and renamed over the target there, so
neither can land outside the root whatever is renamed or linked meanwhile. PermissionDenied for a link or a path
outside the root, InvalidArgument for a name longer than the kernel takes, FailedPrecondition when the server has no
root at all. Reads and writes run in a worker thread, off the event loop.

Only regular files are read or replaced, and only up to MAX_FILE_BYTES: a FIFO or a device in the workspace would
block the worker thread for ever (it cannot be cancelled, and asyncio's default pool has a few dozen), and a producer
that is a multi-gigabyte log would be read whole into memory only for its last 4000 characters to be shown to the
judge.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import posixpath
import secrets
import stat
from dataclasses import dataclass

from verdict.errors import PermissionDenied
from verdict.workspace import inside, open_beneath, open_root, read_bounded

__all__ = ["MAX_FILE_BYTES", "WorkspaceFile", "read_text", "workspace_file", "write_text"]

MAX_FILE_BYTES = 16 * 1024 * 1024
"""The largest baseline or contract file read."""

_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY
"""O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer; it changes nothing for a regular file."""


@dataclass(frozen=True)
class WorkspaceFile:
    """A file named by a request: the server's root, the path relative to it, and the request field that named it."""

    root: str
    relative: str
    field: str

    @property
    def name(self) -> str:
        return posixpath.basename(self.relative)


def workspace_file(root: str, workspace: str, *parts: str, field: str) -> WorkspaceFile:
    """The file at `workspace/parts...` under `root`, checked lexically (the open is checked again, beneath the root).

    Raises PermissionDenied, InvalidArgument (naming `workspace` or `field`) or FailedPrecondition."""
    base = inside(root, workspace or ".", "workspace")
    return WorkspaceFile(root, inside(root, posixpath.join(base, *parts), field), field)


def _too_large(size: int) -> OSError:
    return OSError(errno.EFBIG, f"the file is {size} bytes; files over {MAX_FILE_BYTES} bytes are not read")


def _read(file: WorkspaceFile) -> str:
    root = open_root(file.root)
    try:
        descriptor = open_beneath(root, file.relative, _READ, file.field)
    finally:
        os.close(root)
    try:
        size = os.fstat(descriptor).st_size
        if size > MAX_FILE_BYTES:
            raise _too_large(size)
        data = read_bounded(descriptor, MAX_FILE_BYTES)
    finally:
        os.close(descriptor)
    if len(data) > MAX_FILE_BYTES:
        raise _too_large(len(data))
    return data.decode("utf-8", "replace")


def _directory(root: int, relative: str, field: str) -> int:
    """The directory `relative` beneath `root`, each missing component created, none of them followed if a link."""
    current = os.dup(root)
    try:
        for part in (part for part in relative.split("/") if part not in ("", ".")):
            try:
                following = open_beneath(current, part, os.O_RDONLY | os.O_DIRECTORY, field)
            except FileNotFoundError:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=current)
                following = open_beneath(current, part, os.O_RDONLY | os.O_DIRECTORY, field)
            os.close(current)
            current = following
    except BaseException:
        os.close(current)
        raise
    return current


def _write(file: WorkspaceFile, text: str) -> None:
    root = open_root(file.root)
    try:
        directory = _directory(root, posixpath.dirname(file.relative), file.field)
    finally:
        os.close(root)
    try:
        _replace(directory, file, text.encode("utf-8"))
    finally:
        os.close(directory)


def _replace(directory: int, file: WorkspaceFile, data: bytes) -> None:
    """Write `data` to a new temporary file in the held directory and rename it over the target there.

    A target that is a link is refused (PermissionDenied); one that is not a regular file is EINVAL. The refusal is
    advice, not the protection: a link planted after the check is replaced by the rename, never written through."""
    name = file.name
    try:
        existing = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        existing = None
    if existing is not None and stat.S_ISLNK(existing.st_mode):
        raise PermissionDenied(
            f"{file.field}: {file.relative!r} is a symbolic link; the server replaces no link inside the workspace",
            reason="SYMLINK_IN_WORKSPACE",
            metadata={"path": file.relative, "field": file.field},
        )
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        raise OSError(errno.EINVAL, "not a regular file")
    temporary = f".{name[:200]}.{secrets.token_hex(8)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    descriptor = os.open(temporary, flags, 0o666, dir_fd=directory)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(descriptor, view) :]
        finally:
            os.close(descriptor)
        os.rename(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=directory)
        raise


async def read_text(file: WorkspaceFile) -> str:
    """The file's text (invalid UTF-8 replaced). Raises OSError, also for what is not a regular file or is over
    MAX_FILE_BYTES; PermissionDenied for a link on the way."""
    return await asyncio.to_thread(_read, file)


async def write_text(file: WorkspaceFile, text: str) -> None:
    """Replace the file (creating its directory), atomically. Raises OSError, also for what is not a regular file;
    PermissionDenied for a link on the way."""
    await asyncio.to_thread(_write, file, text)
