"""The git metadata a hostile workspace can point anywhere, opened and read through descriptors beneath the root.

A `.git` file, `commondir`, `objects/info/alternates` (and an alternate's own alternates) name other directories; git
would follow each of them to anywhere on the host. Each pointer here is read once from a regular file (a FIFO would
block the thread), checked to lie inside the root, and the directory it names opened beneath the root without links
(PermissionDenied, reason HOSTILE_REPOSITORY, otherwise). The configuration is read once too: git is later given that
copy, never the file, so what git applies is what was checked.
"""

from __future__ import annotations

import os
import posixpath

from verdict.errors import InvalidArgument, PermissionDenied
from verdict.workspace.beneath import DIRECTORY, open_beneath, read_bounded
from verdict.workspace.paths import inside

__all__ = [
    "GITDIR_PREFIX",
    "HOSTILE",
    "UncheckedConfig",
    "check_alternates",
    "metadata_inside",
    "open_dir",
    "optional",
    "read_config",
    "read_pointer",
]


class UncheckedConfig(Exception):
    """Raised when the repository's configuration is not a regular file inside it: git would read a file the server
    never checked, so git does not run (diff_stall reports `error` with this message)."""


GITDIR_PREFIX = "gitdir:"
"""How a `.git` file (a linked work tree, a submodule) names its metadata directory."""
_MAX_POINTER_BYTES = 64 * 1024
_MAX_CONFIG_BYTES = 1024 * 1024
_MAX_ALTERNATE_DEPTH = 5
"""git follows alternates of alternates up to this depth; each level must stay inside the root."""
HOSTILE = "HOSTILE_REPOSITORY"
"""The ErrorInfo reason of every refusal here: the workspace's metadata tries to point git outside what was checked."""


def optional(dir_fd: int, name: str, flags: int) -> int | None:
    """`name` in the held directory, or None when absent; a link there is PermissionDenied (HOSTILE_REPOSITORY)."""
    try:
        return open_beneath(dir_fd, name, flags, "workspace")
    except FileNotFoundError:
        return None
    except PermissionDenied:
        raise PermissionDenied(f"the repository's {name} is a symbolic link", reason=HOSTILE) from None
    except OSError as exc:
        raise PermissionDenied(f"cannot open the repository's {name}: {exc.strerror}", reason=HOSTILE) from None


def open_dir(root_fd: int, relative: str, what: str) -> int:
    """A metadata directory beneath the root (`what` names it in the refusal); a link or any failure is hostile."""
    try:
        return open_beneath(root_fd, relative, DIRECTORY, "workspace")
    except PermissionDenied:
        raise PermissionDenied(f"{what} is or passes through a symbolic link", reason=HOSTILE) from None
    except OSError as exc:
        raise PermissionDenied(f"cannot open {what}: {exc.strerror}", reason=HOSTILE) from None


def metadata_inside(root: str, base: str, pointer: str, what: str) -> str:
    """A path git metadata names (relative to `base`, or absolute), as a path relative to the root; outside is
    PermissionDenied."""
    if not pointer or "\0" in pointer:
        raise PermissionDenied(f"{what} names no path", reason=HOSTILE)
    joined = pointer if posixpath.isabs(pointer) else posixpath.join(base, pointer)
    try:
        return inside(root, joined, "workspace")
    except (PermissionDenied, InvalidArgument):
        raise PermissionDenied(f"{what} lies outside the workspace root", reason=HOSTILE) from None


def read_pointer(descriptor: int, name: str) -> str:
    """The whole of a small metadata file; a longer one is refused, since a cut-off path is not the path git reads.

    Only regular files: a FIFO (or a device) named `.git` would otherwise block the reading thread. A NUL byte names
    no path."""
    try:
        data = read_bounded(descriptor, _MAX_POINTER_BYTES)
    except OSError:
        raise PermissionDenied(f"the repository's {name} is not a regular file", reason=HOSTILE) from None
    if len(data) > _MAX_POINTER_BYTES:
        raise PermissionDenied(f"the repository's {name} is implausibly large", reason=HOSTILE)
    if b"\0" in data:
        raise PermissionDenied(f"the repository's {name} holds a NUL byte", reason=HOSTILE)
    return data.decode("utf-8", "replace").strip()


def read_config(common: int) -> bytes:
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


def check_alternates(
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
        raise PermissionDenied("the repository's object alternates are a symbolic link", reason=HOSTILE) from None
    try:
        lines = read_pointer(descriptor, "objects/info/alternates").splitlines()
    finally:
        os.close(descriptor)
    for line in lines:
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        if entry.startswith('"'):
            raise PermissionDenied("quoted object alternates are not followed", reason=HOSTILE)
        alternate_rel = metadata_inside(root, objects_rel, entry, "an object alternate of the repository")
        try:
            alternate = open_beneath(root_fd, alternate_rel, DIRECTORY, "workspace")
        except FileNotFoundError:
            continue
        except (PermissionDenied, OSError):
            raise PermissionDenied("an object alternate of the repository is a symbolic link", reason=HOSTILE) from None
        try:
            check_alternates(root_fd, root, alternate, alternate_rel, depth + 1, seen | {objects_rel})
        finally:
            os.close(alternate)
