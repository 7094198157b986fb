"""The lexical half of confinement: what a request's path string may name before anything is opened.

A path string alone proves nothing about the file system (a directory can become a symbolic link a moment later), so
this module only refuses what no file system state can make safe: NUL bytes, `..` past the root, absolute paths
elsewhere, names longer than the kernel takes. What it returns is a path relative to the root, for
`beneath.open_beneath` to open without following links, which is where the race is closed.
"""

from __future__ import annotations

import os
import posixpath

from verdict.errors import FailedPrecondition, InvalidArgument, PermissionDenied

__all__ = ["NAME_MAX", "PATH_MAX", "inside"]

NAME_MAX = 255
"""The longest file name component the kernel takes (ENAMETOOLONG past it)."""
PATH_MAX = 4095
"""The longest path the kernel takes, in bytes, without its NUL terminator."""


def inside(root: str, path: str, field: str) -> str:
    """`path` (relative to `root`, or absolute under it) as a normalised path relative to the root; "." for the root.

    Purely lexical: `..` is resolved against the components before it, which is what the kernel does too once no
    component may be a symbolic link (`open_beneath` refuses them). Raises FailedPrecondition when no root is
    configured (an empty root would otherwise mean "anywhere"), PermissionDenied for a NUL byte or a path that leaves
    the root, InvalidArgument naming `field` for a name or path longer than the kernel takes.
    """
    if not root:
        raise FailedPrecondition(
            "no workspace_root is configured, so the server reads no files (set workspace_root: "
            "VERDICT_WORKSPACE_ROOT, or --workspace-root on `verdict serve` and `verdict evaluate`)",
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
