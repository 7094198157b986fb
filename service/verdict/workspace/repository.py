"""Finding the repository a workspace belongs to, no higher than the root, as descriptors git can be pointed at.

`find_repository` walks up from the workspace to the nearest `.git` (a directory, or a `gitdir:` file), then holds
a descriptor of every metadata entry git will read, opened beneath the root without links (`metadata`), so that
`evaluators.diffstat` can hand git exactly what was checked, through the runner.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import stat
from dataclasses import dataclass, field

from verdict.errors import PermissionDenied
from verdict.workspace.beneath import open_beneath
from verdict.workspace.metadata import (
    GITDIR_PREFIX,
    HOSTILE,
    check_alternates,
    metadata_inside,
    open_dir,
    optional,
    read_config,
    read_pointer,
)

__all__ = ["Repository", "find_repository"]


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


_COMMON_ENTRIES = ("objects", "refs", "packed-refs", "reftable", "info", "modules", "shallow")
"""What git reads from the common directory besides config; each present one is held by descriptor."""
_GIT_DIR_ENTRIES = ("index",)
"""What git reads from the (per-work-tree) metadata directory besides HEAD."""


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
            raise PermissionDenied("the workspace's .git is a symbolic link", reason=HOSTILE) from None
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
            pointer = read_pointer(descriptor, ".git")
            if not pointer.startswith(GITDIR_PREFIX):
                raise PermissionDenied("the workspace's .git file is not a `gitdir:` pointer", reason=HOSTILE)
            git_rel = metadata_inside(root, top, pointer[len(GITDIR_PREFIX) :].strip(), "the repository's .git")
            git_dir = open_dir(root_fd, git_rel, "the repository's .git")
            opened.append(git_dir)
        else:
            raise PermissionDenied("the repository's .git is neither a directory nor a file", reason=HOSTILE)
        common, common_rel = git_dir, git_rel
        commondir = optional(git_dir, "commondir", os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
        if commondir is not None:
            opened.append(commondir)
            pointer = read_pointer(commondir, "commondir")
            common_rel = metadata_inside(root, git_rel, pointer, "the repository's commondir")
            common = open_dir(root_fd, common_rel, "the repository's commondir")
            opened.append(common)
        held: dict[str, int] = {}
        for name, base in [
            *((name, common) for name in _COMMON_ENTRIES),
            *((name, git_dir) for name in _GIT_DIR_ENTRIES),
        ]:
            entry = optional(base, name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
            if entry is not None:
                opened.append(entry)
                held[name] = entry
        if "objects" in held:
            check_alternates(root_fd, root, held["objects"], posixpath.join(common_rel, "objects"))
        config = read_config(common)
        head_fd = optional(git_dir, "HEAD", os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
        head = b""
        if head_fd is not None:
            try:
                head = read_pointer(head_fd, "HEAD").encode() + b"\n"
            finally:
                os.close(head_fd)
        work_tree = open_dir(root_fd, top, "the work tree")
        opened.append(work_tree)
        return Repository(git_dir, common, work_tree, config, head, held, top)
    except BaseException:
        for each in opened:
            with contextlib.suppress(OSError):
                os.close(each)
        raise
