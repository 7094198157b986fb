"""openat2(2), bound through the C library's syscall(2): the kernel resolves a path beneath a directory descriptor
and refuses every symbolic link and magic link on the way, in one call, so no concurrent rename can move the open.

Python has no binding for it, and glibc only gained a wrapper in 2.39, hence ctypes. Kernels before 5.6 answer
ENOSYS, and container seccomp profiles written before it EPERM; the server probes once at import and uses the
component walk in `beneath` when the probe fails.
"""

from __future__ import annotations

import ctypes
import errno
import os
from collections.abc import Callable
from typing import cast

__all__ = ["have_openat2", "openat2"]

_SYS_OPENAT2 = 437
"""openat2's syscall number: the same on every architecture (it was added after the tables were unified)."""
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_RESOLVE = _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS
_EAGAIN_RETRIES = 16
"""openat2 answers EAGAIN when a rename elsewhere raced its walk; the kernel asks for a retry."""


class _OpenHow(ctypes.Structure):
    _fields_ = (("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64))


def _syscall() -> Callable[..., int] | None:
    try:
        function = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None
    function.restype = ctypes.c_long
    return cast("Callable[..., int]", function)


_SYSCALL = _syscall()


def openat2(dir_fd: int, path: str, flags: int, mode: int) -> int:
    if _SYSCALL is None:
        raise OSError(errno.ENOSYS, "no syscall(2) in this C library")
    how = _OpenHow(flags | os.O_CLOEXEC, mode if flags & os.O_CREAT else 0, _RESOLVE)
    encoded = os.fsencode(path)
    for _ in range(_EAGAIN_RETRIES):
        descriptor = int(
            _SYSCALL(
                ctypes.c_long(_SYS_OPENAT2),
                ctypes.c_int(dir_fd),
                ctypes.c_char_p(encoded),
                ctypes.byref(how),
                ctypes.c_size_t(ctypes.sizeof(how)),
            )
        )
        if descriptor >= 0:
            return descriptor
        code = ctypes.get_errno()
        if code != errno.EAGAIN:
            raise OSError(code, os.strerror(code), path)
    raise OSError(errno.EAGAIN, os.strerror(errno.EAGAIN), path)


def _probe_openat2() -> bool:
    """Whether openat2 works here: absent kernels say ENOSYS, container seccomp profiles that predate it EPERM."""
    root = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.close(openat2(root, ".", os.O_RDONLY | os.O_DIRECTORY, 0))
    except OSError:
        return False
    finally:
        os.close(root)
    return True


_HAVE_OPENAT2 = _probe_openat2()


def have_openat2() -> bool:
    """True when this kernel (and its seccomp profile) lets the server use openat2; the walk is used otherwise."""
    return _HAVE_OPENAT2
