"""Where a request may touch the file system: only inside the configured `workspace_root`, and race-free.

A request names a workspace (diff_stall's repository, the comparator's baseline, contract's files) as a string the
server did not choose, and the agent being judged can write inside the root while the call runs: it is the attacker.
A check on a path string followed by a use of the same string is a race the attacker wins by swapping a directory for
a symbolic link in between. So nothing here checks a path and then uses it: every path is opened *relative to a
directory file descriptor* that starts at the root, and what the caller gets is the descriptor that was checked.

One job per module:

- `paths`: the lexical check (`inside`): NUL bytes, `..` past the root, absolute paths elsewhere and over-long names
  are refused before anything is opened; what is left is a path relative to the root.
- `openat2`: the kernel's race-free resolution (openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
  RESOLVE_NO_MAGICLINKS), and whether this kernel and its seccomp profile allow it.
- `beneath`: `open_root`, `open_beneath` (openat2, else a component-by-component O_NOFOLLOW walk) and
  `read_bounded`.
- `metadata`: the git metadata a hostile workspace can point elsewhere (`.git` files, commondir, alternates, the
  configuration), each read or opened beneath the root.
- `repository`: `find_repository`, walking up from a held workspace to its repository and returning the descriptors
  git will be pointed at (`Repository`).

Symbolic links inside the workspace are refused, not followed, even when they point elsewhere inside the root: a
link that is checked and then followed is the race itself, and the kernel's no-symlink resolution is the one rule
both the openat2 path and the fallback walk enforce identically.
"""

from __future__ import annotations

from verdict.workspace.beneath import open_beneath, open_root, read_bounded
from verdict.workspace.metadata import UncheckedConfig
from verdict.workspace.openat2 import have_openat2
from verdict.workspace.paths import NAME_MAX, PATH_MAX, inside
from verdict.workspace.repository import Repository, find_repository

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
