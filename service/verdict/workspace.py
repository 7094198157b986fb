"""Where a request may touch the file system: only inside the configured `workspace_root`, and race-free.

A request names a workspace (diff_stall's repository, the comparator's baseline, contract's files) as a string the
server did not choose, and the agent being judged can write inside the root while the call runs: it is the attacker.
A check on a path string followed by a use of the same string is a race the attacker wins by swapping a directory for
a symbolic link in between. So nothing here checks a path and then uses it: every path is opened *relative to a
directory file descriptor* that starts at the root, and what the caller gets is the descriptor that was checked.

- `inside(root, path, field)` is the lexical part: NUL bytes, `..` past the root, absolute paths elsewhere and names
  longer than the kernel takes are refused before anything is opened (PermissionDenied, or InvalidArgument naming the
  field for an over-long name), and what is left is a path relative to the root.
- `open_beneath(dir_fd, relative, flags, field)` opens it with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
  RESOLVE_NO_MAGICLINKS)` where the kernel has it (Linux 5.6 and later, unless a seccomp filter hides it), else by a
  component-by-component walk, each step `openat(..., O_NOFOLLOW)` relative to the previous step's descriptor. Either
  way no symbolic link is followed, so nothing a concurrent writer does can move the open out of the directory.
- `find_repository` walks up from a held workspace descriptor to the repository, and returns descriptors for the
  metadata git will read (`Repository`), which `evaluators.diffstat` hands git through the runner.

Symbolic links inside the workspace are refused, not followed, even when they point elsewhere inside the root: a
link that is checked and then followed is the race itself, and the kernel's no-symlink resolution is the one rule
both the openat2 path and the fallback walk enforce identically.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import posixpath
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

from verdict.errors import FailedPrecondition, InvalidArgument, PermissionDenied

__all__ = [
    "NAME_MAX",
    "PATH_MAX",
    "Repository",
    "UncheckedConfig",
    "find_repository",
    "have_openat2",
    "inside",
    "open_beneath",
    "open_root",
    "read_bounded",
]

NAME_MAX = 255
"""The longest file name component the kernel takes (ENAMETOOLONG past it)."""
PATH_MAX = 4095
"""The longest path the kernel takes, in bytes, without its NUL terminator."""

_SYS_OPENAT2 = 437
"""openat2's syscall number: the same on every architecture (it was added after the tables were unified)."""
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_RESOLVE = _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS
_EAGAIN_RETRIES = 16
"""openat2 answers EAGAIN when a rename elsewhere raced its walk; the kernel asks for a retry."""
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


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


def _openat2(dir_fd: int, path: str, flags: int, mode: int) -> int:
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
    root = os.open("/", _DIRECTORY)
    try:
        os.close(_openat2(root, ".", os.O_RDONLY | os.O_DIRECTORY, 0))
    except OSError:
        return False
    finally:
        os.close(root)
    return True


_HAVE_OPENAT2 = _probe_openat2()


def have_openat2() -> bool:
    """True when this kernel (and its seccomp profile) lets the server use openat2; the walk is used otherwise."""
    return _HAVE_OPENAT2


def inside(root: str, path: str, field: str) -> str:
    """`path` (relative to `root`, or absolute under it) as a normalised path relative to the root; "." for the root.

    Purely lexical: `..` is resolved against the components before it, which is what the kernel does too once no
    component may be a symbolic link (`open_beneath` refuses them). Raises FailedPrecondition when no root is
    configured (an empty root would otherwise mean "anywhere"), PermissionDenied for a NUL byte or a path that leaves
    the root, InvalidArgument naming `field` for a name or path longer than the kernel takes.
    """
    if not root:
        raise FailedPrecondition(
            "no workspace_root is configured, so the server reads no files (set --workspace-root)",
            reason="NO_WORKSPACE_ROOT",
        )
    if "\0" in path:
        raise PermissionDenied("a path with a NUL byte names no file", metadata={"path": repr(path), "field": field})
    encoded = os.fsencode(path)
    if len(encoded) > PATH_MAX or any(len(part) > NAME_MAX for part in encoded.split(b"/")):
        raise InvalidArgument(
            f"{field}: a path over {PATH_MAX} bytes or with a name over {NAME_MAX} bytes names no file",
            field=field,
            reason="PATH_TOO_LONG",
        )
    if posixpath.isabs(path):
        real_root = os.path.realpath(root)
        absolute = posixpath.normpath(path)
        for base in {root.rstrip("/") or "/", real_root}:
            if absolute == base or absolute.startswith(base.rstrip("/") + "/"):
                path = posixpath.relpath(absolute, base)
                break
        else:
            raise PermissionDenied(f"{path!r} lies outside the workspace root", metadata={"path": path, "field": field})
    relative = posixpath.normpath(path or ".")
    if relative == ".." or relative.startswith("../"):
        raise PermissionDenied(f"{path!r} resolves outside the workspace root", metadata={"path": path, "field": field})
    return relative


def open_root(root: str) -> int:
    """A descriptor of the configured root (the operator's path, followed as given). Raises FailedPrecondition."""
    if not root:
        inside(root, ".", "workspace")
    try:
        return os.open(root, _DIRECTORY)
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
    use_kernel = _HAVE_OPENAT2 if kernel is None else kernel
    try:
        if use_kernel:
            return _openat2(dir_fd, relative, flags, mode)
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
            following = _step(current, part, _DIRECTORY | os.O_NOFOLLOW, 0)
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


class UncheckedConfig(Exception):
    """Raised when the repository's configuration is not a regular file inside it: git would read a file the server
    never checked, so git does not run (diff_stall reports `error` with this message)."""


@dataclass
class Repository:
    """A git repository found inside the workspace root, as descriptors opened beneath the root without symlinks.

    `git_dir` is the metadata directory (HEAD, index), `common_dir` the one holding config, refs and objects (the
    same directory except for a linked work tree), `work_tree` the top of the work tree. `held` maps each metadata
    entry git reads (`objects`, `refs`, `index`, ...) that exists to its descriptor, so git can be pointed at exactly
    what was checked. `config` and `head` are the bytes of the configuration and HEAD, read once through their
    descriptors: what git will be given is what was checked. Close it (it is a context manager) to release them.
    """

    git_dir: int
    common_dir: int
    work_tree: int
    config: bytes
    head: bytes
    held: dict[str, int] = field(default_factory=dict)
    relative: str = "."

    def descriptors(self) -> tuple[int, ...]:
        return (self.git_dir, self.common_dir, self.work_tree, *self.held.values())

    def close(self) -> None:
        for descriptor in set(self.descriptors()):
            with contextlib.suppress(OSError):
                os.close(descriptor)

    def __enter__(self) -> Repository:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


_GITDIR_PREFIX = "gitdir:"
_MAX_POINTER_BYTES = 64 * 1024
_MAX_CONFIG_BYTES = 1024 * 1024
_MAX_ALTERNATE_DEPTH = 5
"""git follows alternates of alternates up to this depth; each level must stay inside the root."""
_COMMON_ENTRIES = ("objects", "refs", "packed-refs", "reftable", "info", "modules", "shallow")
"""What git reads from the common directory besides config; each present one is held by descriptor."""
_GIT_DIR_ENTRIES = ("index",)
"""What git reads from the (per-work-tree) metadata directory besides HEAD."""
_HOSTILE = "HOSTILE_REPOSITORY"


def find_repository(root_fd: int, root: str, workspace: str) -> Repository | None:
    """The repository the workspace (`workspace`, relative to the root behind `root_fd`) belongs to, looking no
    higher than the root.

    Git itself would walk above the root and follow a `.git` file, `commondir`, `objects`, the index or
    `objects/info/alternates` (and the alternates of an alternate) to anywhere on the host; a hostile workspace could
    use any of them to have the server read another repository. Each of those is opened here beneath the root without
    following links (PermissionDenied otherwise), and its descriptor kept. The configuration must be a regular file
    inside the repository (UncheckedConfig otherwise, since git would read a file the server never checked); it is
    read here once, and git is later given that copy, never the file. Returns None when there is no repository
    between the workspace and the root.
    """
    current = workspace
    while True:
        marker = posixpath.normpath(posixpath.join(current, ".git"))
        try:
            descriptor = open_beneath(root_fd, marker, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY, "workspace")
        except PermissionDenied:
            raise PermissionDenied("the workspace's .git is a symbolic link", reason=_HOSTILE) from None
        except FileNotFoundError:
            if current == ".":
                return None
            current = posixpath.dirname(current) or "."
            continue
        return _open_repository(root_fd, root, current, marker, descriptor)


def _open_repository(root_fd: int, root: str, top: str, marker: str, descriptor: int) -> Repository:
    opened: list[int] = [descriptor]
    try:
        mode = os.fstat(descriptor).st_mode
        if stat.S_ISDIR(mode):
            git_dir, git_rel = descriptor, marker
        elif stat.S_ISREG(mode):
            pointer = _read_pointer(descriptor, ".git")
            if not pointer.startswith(_GITDIR_PREFIX):
                raise PermissionDenied("the workspace's .git file is not a `gitdir:` pointer", reason=_HOSTILE)
            git_rel = _metadata_inside(root, top, pointer[len(_GITDIR_PREFIX) :].strip(), "the repository's .git")
            git_dir = _open_dir(root_fd, git_rel, "the repository's .git")
            opened.append(git_dir)
        else:
            raise PermissionDenied("the repository's .git is neither a directory nor a file", reason=_HOSTILE)
        common, common_rel = git_dir, git_rel
        commondir = _optional(git_dir, "commondir", os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
        if commondir is not None:
            opened.append(commondir)
            pointer = _read_pointer(commondir, "commondir")
            common_rel = _metadata_inside(root, git_rel, pointer, "the repository's commondir")
            common = _open_dir(root_fd, common_rel, "the repository's commondir")
            opened.append(common)
        held: dict[str, int] = {}
        for name, base in [
            *((name, common) for name in _COMMON_ENTRIES),
            *((name, git_dir) for name in _GIT_DIR_ENTRIES),
        ]:
            entry = _optional(base, name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
            if entry is not None:
                opened.append(entry)
                held[name] = entry
        if "objects" in held:
            _check_alternates(root_fd, root, held["objects"], posixpath.join(common_rel, "objects"))
        config = _config(common)
        head_fd = _optional(git_dir, "HEAD", os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
        head = b""
        if head_fd is not None:
            try:
                head = _read_pointer(head_fd, "HEAD").encode() + b"\n"
            finally:
                os.close(head_fd)
        work_tree = _open_dir(root_fd, top, "the work tree")
        opened.append(work_tree)
        return Repository(git_dir, common, work_tree, config, head, held, top)
    except BaseException:
        for each in opened:
            with contextlib.suppress(OSError):
                os.close(each)
        raise


def _optional(dir_fd: int, name: str, flags: int) -> int | None:
    """`name` in the held directory, or None when absent; a link there is PermissionDenied (HOSTILE_REPOSITORY)."""
    try:
        return open_beneath(dir_fd, name, flags, "workspace")
    except FileNotFoundError:
        return None
    except PermissionDenied:
        raise PermissionDenied(f"the repository's {name} is a symbolic link", reason=_HOSTILE) from None
    except OSError as exc:
        raise PermissionDenied(f"cannot open the repository's {name}: {exc.strerror}", reason=_HOSTILE) from None


def _open_dir(root_fd: int, relative: str, what: str) -> int:
    try:
        return open_beneath(root_fd, relative, _DIRECTORY, "workspace")
    except PermissionDenied:
        raise PermissionDenied(f"{what} is or passes through a symbolic link", reason=_HOSTILE) from None
    except OSError as exc:
        raise PermissionDenied(f"cannot open {what}: {exc.strerror}", reason=_HOSTILE) from None


def _metadata_inside(root: str, base: str, pointer: str, what: str) -> str:
    """A path git metadata names (relative to `base`, or absolute), as a path relative to the root; outside is
    PermissionDenied."""
    if not pointer or "\0" in pointer:
        raise PermissionDenied(f"{what} names no path", reason=_HOSTILE)
    joined = pointer if posixpath.isabs(pointer) else posixpath.join(base, pointer)
    try:
        return inside(root, joined, "workspace")
    except (PermissionDenied, InvalidArgument):
        raise PermissionDenied(f"{what} lies outside the workspace root", reason=_HOSTILE) from None


def _read_pointer(descriptor: int, name: str) -> str:
    """The whole of a small metadata file; a longer one is refused, since a cut-off path is not the path git reads.

    Only regular files: a FIFO (or a device) named `.git` would otherwise block the reading thread. A NUL byte names
    no path."""
    try:
        data = read_bounded(descriptor, _MAX_POINTER_BYTES)
    except OSError:
        raise PermissionDenied(f"the repository's {name} is not a regular file", reason=_HOSTILE) from None
    if len(data) > _MAX_POINTER_BYTES:
        raise PermissionDenied(f"the repository's {name} is implausibly large", reason=_HOSTILE)
    if b"\0" in data:
        raise PermissionDenied(f"the repository's {name} holds a NUL byte", reason=_HOSTILE)
    return data.decode("utf-8", "replace").strip()


def _config(common: int) -> bytes:
    """The repository's configuration, read once through its descriptor; a link or a non-regular file is refused."""
    try:
        descriptor = open_beneath(common, "config", os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY, "workspace")
    except FileNotFoundError:
        return b""
    except PermissionDenied:
        raise UncheckedConfig(
            "git not run: the repository's config is a symbolic link, and git reads configuration only from a "
            "regular file inside the repository"
        ) from None
    except OSError as exc:
        raise UncheckedConfig(f"git not run: cannot open the repository's config: {exc.strerror}") from None
    try:
        data = read_bounded(descriptor, _MAX_CONFIG_BYTES)
    except OSError:
        raise UncheckedConfig("git not run: the repository's config is not a regular file") from None
    finally:
        os.close(descriptor)
    if len(data) > _MAX_CONFIG_BYTES:
        raise UncheckedConfig(f"git not run: the repository's config is over {_MAX_CONFIG_BYTES} bytes")
    return data


def _check_alternates(
    root_fd: int, root: str, objects: int, objects_rel: str, depth: int = 0, seen: frozenset[str] = frozenset()
) -> None:
    """Every alternate object directory, and recursively each of their own alternates, must lie inside the root."""
    if depth > _MAX_ALTERNATE_DEPTH or objects_rel in seen:
        return
    try:
        descriptor = open_beneath(objects, "info/alternates", os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY, "workspace")
    except (FileNotFoundError, NotADirectoryError):
        return
    except PermissionDenied:
        raise PermissionDenied("the repository's object alternates are a symbolic link", reason=_HOSTILE) from None
    try:
        lines = _read_pointer(descriptor, "objects/info/alternates").splitlines()
    finally:
        os.close(descriptor)
    for line in lines:
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        if entry.startswith('"'):
            raise PermissionDenied("quoted object alternates are not followed", reason=_HOSTILE)
        alternate_rel = _metadata_inside(root, objects_rel, entry, "an object alternate of the repository")
        try:
            alternate = open_beneath(root_fd, alternate_rel, _DIRECTORY, "workspace")
        except FileNotFoundError:
            continue
        except (PermissionDenied, OSError):
            raise PermissionDenied(
                "an object alternate of the repository is a symbolic link", reason=_HOSTILE
            ) from None
        try:
            _check_alternates(root_fd, root, alternate, alternate_rel, depth + 1, seen | {objects_rel})
        finally:
            os.close(alternate)
