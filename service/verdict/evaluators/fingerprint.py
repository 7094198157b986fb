"""What diff_stall compares by default: a fingerprint of the change itself, computed with git plumbing.

`git diff --stat` (little-loops' comparison, kept as `compare: stat`) cannot see three kinds of real progress: a new
untracked file (not in any diff), an edit that keeps the line counts (`score.txt` 10 → 20 → 30 prints the same stat
line) and a commit (the work-tree diff is empty before and after). The fingerprint sees all of them. It has four parts,
each a digest of what git reports within `scope`:

- `head`: the commit HEAD names (no scope), or the blobs HEAD holds within the scope (so a commit outside it is not
  progress inside it); empty on an unborn branch;
- `index`: every staged entry (mode, object id, stage, path), from `git ls-files --stage`;
- `worktree`: the patch from the index to the work tree (`git diff --full-index --unified=0`), whose `index` lines
  name the full object id of every changed file's content (binary files included, without their bytes), so an edit
  that keeps the line counts still changes it;
- `untracked`: every untracked file .gitignore does not exclude (`git ls-files --others --exclude-standard`), by name
  and by content: the raw bytes, read here through `workspace.open_beneath` (beneath the held work tree, following no
  symbolic link, so a link swapped in mid-call reads nothing outside it); a symbolic link counts by its target text
  and is never followed.

Every git command runs through `diffstat.hardened_git` (the same hardened configuration as `git diff --stat`, one
shared time budget) and nothing is written to the repository. Submodules count by the commit the superproject
records and checks out (`--ignore-submodules=dirty`), never by their own work trees, which are other repositories.

Bounds: the bytes git prints and the bytes hashed share one budget (`diff_stall_max_bytes`), and at most
`diff_stall_max_files` untracked files are hashed. A repository past either bound raises GitFailed, which diff_stall
reports as `error` with the reason: a fingerprint of part of the change could call real progress a stall.
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import os
import stat
from dataclasses import dataclass

from verdict.errors import VerdictError
from verdict.evaluators.diffstat import Checkout, GitFailed, HardenedGit, hardened_git
from verdict.workspace import open_beneath

__all__ = ["PARTS", "Fingerprint", "fingerprint"]

PARTS = ("head", "index", "worktree", "untracked")
"""The parts of a fingerprint, in the order details list what changed."""

_EMPTY_TREES = {
    "sha1": "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    "sha256": "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
}
_DIGEST_HEX = 32
"""Hex digits kept per part in the state token: 128 bits, so a token stays small and a collision is not a concern."""
_SMALL_OUTPUT = 64 * 1024
_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class Fingerprint:
    """The digests of the four parts; two equal fingerprints mean nothing in scope changed."""

    head: str
    index: str
    worktree: str
    untracked: str

    def parts(self) -> dict[str, str]:
        return {name: getattr(self, name) for name in PARTS}

    def digest(self) -> str:
        """One digest of all four parts, as the token's comparison key."""
        return _hex(b"\0".join(part.encode() for part in self.parts().values()))


def _hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:_DIGEST_HEX]


class _Budget:
    """What is left of diff_stall_max_bytes across every git output and every hashed file."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.left = limit

    def take(self, amount: int, what: str) -> None:
        self.left -= amount
        if self.left < 0:
            raise GitFailed(
                f"the repository is too large to fingerprint: {what} takes it past diff_stall_max_bytes "
                f"({self.limit} bytes); raise the bound or narrow `scope`"
            )


async def fingerprint(checkout: Checkout, *, max_bytes: int, max_files: int) -> Fingerprint:
    """The fingerprint of the checkout's repository within its `scope` (pathspecs relative to its held directory).

    Raises GitFailed."""
    pathspec = ["--", *checkout.scope] if checkout.scope else []
    budget = _Budget(max_bytes)
    async with hardened_git(checkout) as git:
        head = await _head(git, pathspec, budget)
        index = await _output(git, ["ls-files", "--stage", "-z", *pathspec], budget, "the index listing")
        worktree = await _output(
            git,
            [
                "diff",
                "--full-index",
                "--unified=0",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--no-renames",
                "--ignore-submodules=dirty",
                *pathspec,
            ],
            budget,
            "the work-tree diff",
        )
        listing = await _output(
            git,
            ["ls-files", "--others", "--exclude-standard", "--full-name", "-z", *pathspec],
            budget,
            "the untracked listing",
        )
    untracked = await _untracked(checkout.repository.work_tree, listing, budget, max_files)
    return Fingerprint(head=head, index=_hex(index), worktree=_hex(worktree), untracked=untracked)


async def _output(git: HardenedGit, args: list[str], budget: _Budget, what: str) -> bytes:
    """What git printed for `args`; refused past the byte budget, never cut (a cut output is not a fingerprint)."""
    completed = await git.run(args, cap=max(budget.left, 0) + 1)
    if completed.returncode != 0:
        raise GitFailed(f"git {args[0]} failed: {completed.stderr.decode('utf-8', 'replace')[:200]}")
    budget.take(len(completed.stdout) + (1 if completed.stdout_truncated else 0), what)
    return completed.stdout


async def _head(git: HardenedGit, pathspec: list[str], budget: _Budget) -> str:
    """The HEAD commit, or with a scope the blobs HEAD holds within it; "" on an unborn branch."""
    completed = await git.run(
        ["rev-parse", "--show-object-format", "-q", "--verify", "HEAD^{commit}"], cap=_SMALL_OUTPUT
    )
    lines = completed.stdout.decode("ascii", "replace").split()
    if completed.returncode not in (0, 1) or not lines:
        raise GitFailed(f"git rev-parse failed: {completed.stderr.decode('utf-8', 'replace')[:200]}")
    if completed.returncode == 1 or len(lines) < 2:
        return ""
    object_format, commit = lines[0], lines[1]
    if not pathspec:
        return _hex(commit.encode())
    empty = _EMPTY_TREES.get(object_format)
    if empty is None:
        raise GitFailed(f"git rev-parse failed: unknown object format {object_format!r}")
    listing = await _output(
        git, ["diff", "--raw", "-z", "--no-abbrev", "--no-renames", empty, commit, *pathspec], budget, "HEAD's files"
    )
    return _hex(listing)


async def _untracked(work_tree: int, listing: bytes, budget: _Budget, max_files: int) -> str:
    """Each untracked path (relative to the top of the work tree) with a digest of its content (regular files), its
    target text (symbolic links) or its kind (a nested repository's directory)."""
    paths = [path for path in listing.split(b"\0") if path]
    if len(paths) > max_files:
        raise GitFailed(
            f"the repository is too large to fingerprint: more than diff_stall_max_files ({max_files}) untracked "
            "files; add them to .gitignore, raise the bound or narrow `scope`"
        )
    entries = await asyncio.to_thread(_describe_all, work_tree, paths, budget)
    entries.sort()
    return _hex(b"\0".join(path + b"\0" + what for path, what in entries))


def _describe_all(work_tree: int, paths: list[bytes], budget: _Budget) -> list[tuple[bytes, bytes]]:
    """Off the event loop: there may be thousands of files, and their bytes are read. At most one directory is held
    open at a time (git lists paths sorted, so a directory's files come together): the workspace, not the server,
    would otherwise choose how many descriptors a call holds (one per untracked directory, for the whole walk)."""
    parents = _Parent(work_tree)
    try:
        return [(path, _describe(os.fsdecode(path).rstrip("/"), parents, budget)) for path in paths]
    finally:
        parents.close()


_GONE = {errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EXDEV}
"""Open failures that mean the entry vanished or was swapped for a link since git listed it. Any other (EMFILE,
ENFILE, ENOMEM, EACCES, EIO) says nothing about the file: the fingerprint cannot be taken, and the verdict is
`error`, never a changed or unchanged file (a file counted `gone` on every call looks unchanged: a false stall)."""


def _describe(relative: str, parents: _Parent, budget: _Budget) -> bytes:
    """One untracked entry, reached beneath the work tree without following any link. A file that vanished or was
    swapped for a link since git listed it is `gone`: the next call sees whatever is there then."""
    parent, _, name = relative.rpartition("/")
    try:
        directory = parents.open(parent)
        info = os.lstat(name, dir_fd=directory)
        if stat.S_ISLNK(info.st_mode):
            return b"link:" + os.fsencode(os.readlink(name, dir_fd=directory))
        if not stat.S_ISREG(info.st_mode):
            return b"kind:%o" % stat.S_IFMT(info.st_mode)
        budget.take(info.st_size, "the untracked files' content")
        descriptor = open_beneath(directory, name, os.O_RDONLY | os.O_NONBLOCK, "untracked file")
    except VerdictError:
        return b"gone"
    except OSError as exc:
        return _gone_or_fail(exc, relative)
    try:
        return b"blob:" + _content_digest(descriptor, budget)
    except OSError as exc:
        return _gone_or_fail(exc, relative)
    finally:
        os.close(descriptor)


def _gone_or_fail(exc: OSError, relative: str) -> bytes:
    if exc.errno is None or exc.errno in _GONE:
        return b"gone"
    raise GitFailed(f"cannot read the untracked file {relative!r}: {exc.strerror or exc}") from None


class _Parent:
    """The one directory held open: the work tree, or the last untracked file's directory."""

    def __init__(self, work_tree: int) -> None:
        self._work_tree = work_tree
        self._name = ""
        self._descriptor = -1

    def open(self, parent: str) -> int:
        if not parent:
            return self._work_tree
        if parent != self._name:
            self.close()
            self._descriptor = open_beneath(self._work_tree, parent, os.O_RDONLY | os.O_DIRECTORY, "untracked file")
            self._name = parent
        return self._descriptor

    def close(self) -> None:
        if self._descriptor >= 0:
            os.close(self._descriptor)
        self._descriptor, self._name = -1, ""


def _content_digest(descriptor: int, budget: _Budget) -> bytes:
    """The SHA-256 of a regular file's bytes; what it grew by since it was listed counts against the budget too."""
    info = os.fstat(descriptor)
    if not stat.S_ISREG(info.st_mode):
        raise OSError("not a regular file any more")
    os.set_blocking(descriptor, True)
    digest = hashlib.sha256()
    read = 0
    while chunk := os.read(descriptor, _CHUNK):
        read += len(chunk)
        if read > info.st_size:
            budget.take(len(chunk), "the untracked files' content")
        digest.update(chunk)
    return digest.hexdigest().encode()
