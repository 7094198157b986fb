"""Files a judged evaluator reads or writes (comparator baselines, contract pairs): always inside workspace_root.

Paths are resolved against the request's workspace, and both the workspace and the file must resolve inside the
configured root, symlinks followed (`verdict.workspace.resolve_inside`): PermissionDenied otherwise, and
FailedPrecondition when the server has no root at all. Reads and writes run in a worker thread, off the event loop.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from verdict.workspace import resolve_inside

__all__ = ["read_text", "workspace_file", "write_text"]


def workspace_file(root: str, workspace: str, *parts: str) -> Path:
    """The file at `workspace/parts...`, resolved inside `root`. Raises PermissionDenied or FailedPrecondition."""
    base = resolve_inside(root, workspace or ".")
    return resolve_inside(root, base.joinpath(*parts))


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "replace")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


async def read_text(path: Path) -> str:
    """The file's text (invalid UTF-8 replaced). Raises OSError."""
    return await asyncio.to_thread(_read, path)


async def write_text(path: Path, text: str) -> None:
    """Write the file, creating its directory. Raises OSError."""
    await asyncio.to_thread(_write, path, text)
