"""Where a request may touch the file system: only inside the configured `workspace_root`.

A request names a workspace (diff_stall's repository, the comparator's baseline, contract's files) as a string the
server did not choose. Every such path is resolved here, symlinks included, and refused unless the result still lies
inside the root, so `../`, an absolute path elsewhere, or a symlink pointing out cannot reach the rest of the host.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from verdict.errors import FailedPrecondition, InvalidArgument, PermissionDenied

__all__ = ["Repository", "find_repository", "resolve_inside"]


_PATH_LIMIT_ERRNOS = {errno.ENAMETOOLONG: "PATH_TOO_LONG", errno.ELOOP: "PATH_SYMLINK_LOOP"}
"""OS refusals of the path itself (a component over 255 bytes, a path over PATH_MAX, a symlink loop): the caller
named a path no file can have, which is their mistake and must not be the server's INTERNAL error."""


def resolve_inside(root: str | Path, path: str | Path, *, field: str = "workspace") -> Path:
    """Resolve `path` (relative paths against `root`) with symlinks followed, and return it if it lies inside `root`.

    Raises FailedPrecondition when no root is configured (an empty root would otherwise mean "anywhere"),
    PermissionDenied when the resolved path escapes the resolved root, and InvalidArgument naming `field` when the
    operating system refuses the path itself (too long, a symlink loop). The path need not exist: callers that need
    it to report its absence themselves, as a verdict.
    """
    if not str(root):
        raise FailedPrecondition(
            "no workspace_root is configured, so the server reads no files (set --workspace-root)",
            reason="NO_WORKSPACE_ROOT",
        )
    if "\0" in str(path):
        raise PermissionDenied("a path with a NUL byte names no file", metadata={"path": repr(str(path))})
    resolved_root = Path(root).resolve()
    try:
        resolved = (resolved_root / path).resolve()
        with contextlib.suppress(FileNotFoundError, NotADirectoryError, PermissionError):
            os.lstat(resolved)  # resolve() lets a name no file can have through; a later stat would raise it
    except (OSError, RuntimeError) as exc:
        code = getattr(exc, "errno", None)
        reason = _PATH_LIMIT_ERRNOS.get(code, "") if code is not None else "PATH_SYMLINK_LOOP"
        if not reason:
            raise
        problem = getattr(exc, "strerror", None) or str(exc)
        raise InvalidArgument(
            f"{field} names a path the operating system refuses: {problem}", field=field, reason=reason
        ) from None
    if not resolved.is_relative_to(resolved_root):
        raise PermissionDenied(
            f"{str(path)!r} resolves outside the workspace root",
            metadata={"path": str(path)},
        )
    return resolved


@dataclass(frozen=True)
class Repository:
    """A git repository found inside the workspace root: its metadata directory and its work tree."""

    git_dir: Path
    work_tree: Path


_GITDIR_PREFIX = "gitdir:"
_MAX_POINTER_BYTES = 64 * 1024
_MAX_ALTERNATE_DEPTH = 5
"""git follows alternates of alternates up to this depth; each level must stay inside the root."""


def find_repository(root: str | Path, start: Path) -> Repository | None:
    """The repository `start` (an already-resolved path inside `root`) belongs to, looking no higher than `root`.

    Git itself would walk above the root and follow a `.git` file, `commondir`, `objects`, the index or
    `objects/info/alternates` (and the alternates of an alternate) to anywhere on the host; a hostile workspace could
    use any of them to have the server read another repository. Each of those is resolved here and must stay inside
    the root, else PermissionDenied. Only regular files are read: a FIFO where a pointer file belongs would block.
    The caller then hands git the directories found (GIT_DIR, GIT_WORK_TREE), so git does no discovery of its own.
    Returns None when there is no repository between `start` and `root`.
    """
    resolved_root = Path(root).resolve()
    current = start
    while True:
        marker = current / ".git"
        if marker.is_symlink() or marker.exists():
            git_dir = _inside(resolved_root, _git_dir(marker), "the repository's .git")
            common = git_dir
            if (git_dir / "commondir").is_file():
                pointer = _read_pointer(git_dir / "commondir")
                common = _inside(resolved_root, (git_dir / pointer).resolve(), "the repository's commondir")
            for part in (git_dir / "index", common / "objects"):
                _inside(resolved_root, part.resolve(), f"the repository's {part.name}")
            _check_alternates(resolved_root, common / "objects")
            return Repository(git_dir=git_dir, work_tree=current)
        if current == resolved_root or current == current.parent:
            return None
        current = current.parent


def _git_dir(marker: Path) -> Path:
    """`.git` is the metadata directory itself, or a file `gitdir: <path>` (worktrees, submodules) pointing to it."""
    if marker.is_dir():
        return marker.resolve()
    pointer = _read_pointer(marker)
    if not pointer.startswith(_GITDIR_PREFIX):
        raise PermissionDenied("the workspace's .git file is not a `gitdir:` pointer", reason="HOSTILE_REPOSITORY")
    return (marker.parent / pointer[len(_GITDIR_PREFIX) :].strip()).resolve()


def _read_pointer(path: Path) -> str:
    """The whole of a small metadata file; a longer one is refused, since a cut-off path is not the path git reads.

    Opened without blocking and refused unless it is a regular file: a FIFO (or a device) named `.git` would
    otherwise block the reading thread, the event loop's, until something writes to it. A NUL byte names no path.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise PermissionDenied(f"cannot read {path.name} of the repository: {exc.strerror}") from None
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise PermissionDenied(f"the repository's {path.name} is not a regular file", reason="HOSTILE_REPOSITORY")
        data = handle.read(_MAX_POINTER_BYTES + 1)
    if len(data) > _MAX_POINTER_BYTES:
        raise PermissionDenied(f"the repository's {path.name} is implausibly large", reason="HOSTILE_REPOSITORY")
    if b"\0" in data:
        raise PermissionDenied(f"the repository's {path.name} holds a NUL byte", reason="HOSTILE_REPOSITORY")
    return data.decode("utf-8", "replace").strip()


def _inside(root: Path, path: Path, what: str) -> Path:
    if not path.is_relative_to(root):
        raise PermissionDenied(f"{what} lies outside the workspace root", reason="HOSTILE_REPOSITORY")
    return path


def _check_alternates(root: Path, objects: Path, depth: int = 0, seen: frozenset[Path] = frozenset()) -> None:
    """Every alternate object directory, and recursively each of their own alternates, must lie inside `root`."""
    alternates = objects / "info" / "alternates"
    if not alternates.is_file() or depth > _MAX_ALTERNATE_DEPTH or objects in seen:
        return
    for line in _read_pointer(alternates).splitlines():
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        if entry.startswith('"'):
            raise PermissionDenied("quoted object alternates are not followed", reason="HOSTILE_REPOSITORY")
        alternate = _inside(root, (objects / entry).resolve(), "an object alternate of the repository")
        _check_alternates(root, alternate, depth + 1, seen | {objects})
