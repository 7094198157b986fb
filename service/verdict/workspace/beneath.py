"""Opening beneath a held directory descriptor, following no symbolic link: the race-free half of confinement.

`open_beneath(dir_fd, relative, flags, field)` opens with openat2 (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
RESOLVE_NO_MAGICLINKS) where the kernel has it, else by a component-by-component walk, each step
`openat(..., O_NOFOLLOW)` relative to the previous step's descriptor. Either way no symbolic link is followed, so
nothing a concurrent writer does can move the open out of the directory, and the caller uses the descriptor it got,
never the path again. `read_bounded` reads such a descriptor without letting a FIFO or a device block the thread.
"""

from __future__ import annotations

import errno
import os
import stat

from verdict.errors import FailedPrecondition, InvalidArgument, PermissionDenied
from verdict.workspace.openat2 import have_openat2, openat2
from verdict.workspace.paths import inside

__all__ = ["DIRECTORY", "open_beneath", "open_root", "read_bounded"]

DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
"""The flags of every directory descriptor held here: read-only, and closed on exec so no child inherits one."""


def open_root(root: str) -> int:
    """A descriptor of the configured root (the operator's path, followed as given). Raises FailedPrecondition."""
    if not root:
        inside(root, ".", "workspace")
    try:
        return os.open(root, DIRECTORY)
    except OSError as exc:
        raise FailedPrecondition(
            f"the workspace_root cannot be opened: {exc.strerror}", reason="NO_WORKSPACE_ROOT"
        ) from None


def open_beneath(
    dir_fd: int, relative: str, flags: int, field: str, *, mode: int = 0o666, kernel: bool | None = None
) -> int:
    """Open `relative` (from `inside`) beneath `dir_fd`, following no symbolic link; the descriptor is close-on-exec.

    `kernel` picks openat2 (True) or the O_NOFOLLOW walk (False); None uses openat2 when the kernel has it. A
    symbolic link on the way, or a path the kernel says leaves `dir_fd`, is PermissionDenied naming `field`; an
    over-long name InvalidArgument. Every other OSError (ENOENT, ENOTDIR, EISDIR, EACCES, ...) is raised as is, for
    the caller to report as the verdict it means.
    """
    use_kernel = have_openat2() if kernel is None else kernel
    try:
        if use_kernel:
            return openat2(dir_fd, relative, flags, mode)
        return _walk(dir_fd, relative, flags, mode)
    except OSError as exc:
        raise _refusal(exc, relative, field) from None


def _walk(dir_fd: int, relative: str, flags: int, mode: int) -> int:
    """The fallback: one `openat(O_NOFOLLOW)` per component, each relative to the descriptor the previous one gave."""
    parts = [part for part in relative.split("/") if part not in ("", ".")]
    if ".." in parts:  # `inside` removes them; a caller that skipped it gets no way up
        raise OSError(errno.EXDEV, "a '..' component", relative)
    current = os.dup(dir_fd)
    try:
        for part in parts[:-1]:
            following = _step(current, part, DIRECTORY | os.O_NOFOLLOW, 0)
            os.close(current)
            current = following
        last = parts[-1] if parts else "."
        return _step(current, last, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    finally:
        os.close(current)


def _step(dir_fd: int, name: str, flags: int, mode: int) -> int:
    """One component. O_NOFOLLOW with O_DIRECTORY says ENOTDIR for a link, as for a file: ELOOP when it is a link,
    so that every link is refused the same way openat2 refuses it."""
    try:
        return os.open(name, flags, mode, dir_fd=dir_fd)
    except NotADirectoryError:
        try:
            link = stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
        except OSError:
            link = False
        if link:
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), name) from None
        raise


def _refusal(exc: OSError, relative: str, field: str) -> Exception:
    if exc.errno in (errno.ELOOP, errno.EXDEV):
        return PermissionDenied(
            f"{field}: {relative!r} is or passes through a symbolic link (or leaves the workspace root); the server "
            "follows no link inside the workspace",
            reason="SYMLINK_IN_WORKSPACE",
            metadata={"path": relative, "field": field},
        )
    if exc.errno == errno.ENAMETOOLONG:
        return InvalidArgument(
            f"{field}: {relative!r} is longer than the kernel takes", field=field, reason="PATH_TOO_LONG"
        )
    return exc


def read_bounded(descriptor: int, limit: int) -> bytes:
    """Up to `limit + 1` bytes from an open regular file (one more than allowed, so the caller sees it was too big).

    Refuses anything else with EINVAL: a FIFO or a device would block the reading thread or never end."""
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        raise OSError(errno.EINVAL, "not a regular file")
    os.set_blocking(descriptor, True)
    chunks: list[bytes] = []
    left = limit + 1
    while left > 0:
        chunk = os.read(descriptor, min(left, 1024 * 1024))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
