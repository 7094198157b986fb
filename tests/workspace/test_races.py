"""Concurrent-flip attacks on every workspace access: a read, a write and git, each with zero escapes allowed.

The agent being judged writes inside workspace_root while the server works there. Each test starts a separate
process (the attacker, truly parallel to the server's threads) that swaps a directory or file for a symbolic link to
something outside the root and back, as fast as it can, while the server runs the access in a loop; every round's
outcome is counted. An escape is outside content in what was read, a file written outside, or the marker a hostile
git filter leaves. Against path-checked-then-used code each of these tests finds escapes (the counts are in
docs/security.md); here there must be none, and some rounds must still succeed, so the test cannot pass by refusing
everything.
"""

from __future__ import annotations

import collections
import errno
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from tests.evaluators.test_diffstat import git
from verdict import workspace
from verdict.config.keys import Config
from verdict.errors import PermissionDenied
from verdict.evaluators import EvaluationInput, Evaluations
from verdict.judges.files import read_text, workspace_file, write_text
from verdict.metrics import Metrics
from verdict.runner import Runner
from verdict.workspace import openat2

ROUNDS = 2000
"""Rounds of each file test."""
GIT_ROUNDS = 700
"""Rounds of each git variant (three variants: 2100 git calls in all), each two git processes."""

_FLIPPER = r"""
import ctypes, os, shutil, sys

path, target, stop, mode = sys.argv[1:5]
staged = path + ".staged"
if mode == "content":  # a regular file with the target's bytes, swapped with `path` under its fixed name
    shutil.copyfile(target, staged)
else:  # a link to the target, swapped with the real directory or file
    os.symlink(target, staged)
libc = ctypes.CDLL(None, use_errno=True)
RENAME_EXCHANGE, AT_FDCWD = 2, -100
paths = os.fsencode(path), os.fsencode(staged)
flips = 0
print("ready", flush=True)
while flips % 64 or not os.path.exists(stop):
    # renameat2(RENAME_EXCHANGE) swaps both names atomically: `path` is always the real thing or the decoy
    if libc.renameat2(AT_FDCWD, paths[0], AT_FDCWD, paths[1], RENAME_EXCHANGE) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")
    flips += 1
if flips % 2:
    libc.renameat2(AT_FDCWD, paths[0], AT_FDCWD, paths[1], RENAME_EXCHANGE)
os.unlink(staged)
print(flips)
"""


@contextmanager
def flipping(path: Path, target: Path, mode: str = "link") -> Iterator[collections.Counter[str]]:
    """Run the attacker against `path` for the duration of the block; `counts["flips"]` says how often it swapped.

    mode "link" swaps `path` with a symbolic link to `target`; mode "content" swaps it with a copy of `target` (no
    link at all: the file's content changes under a fixed name). Each swap is one atomic renameat2(RENAME_EXCHANGE),
    so `path` never goes missing: the server sees the real thing or the decoy, nothing in between."""
    stop = path.parent / f".{path.name}.stop"
    attacker = subprocess.Popen(
        [sys.executable, "-c", _FLIPPER, str(path), str(target), str(stop), mode], stdout=subprocess.PIPE, text=True
    )
    counts: collections.Counter[str] = collections.Counter()
    assert attacker.stdout is not None
    assert attacker.stdout.readline() == "ready\n"
    try:
        yield counts
    finally:
        stop.touch()
        out, _ = attacker.communicate(timeout=60)
        counts["flips"] = int(out.strip() or 0)
        stop.unlink()
    assert attacker.returncode == 0
    assert counts["flips"] > 0, "the attacker never ran"


@pytest.fixture(params=["openat2", "walk"])
def resolution(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each file test runs once with openat2 (when the kernel has it) and once with the fallback walk, which is what
    a kernel without openat2 (or a seccomp profile hiding it) gets."""
    if request.param == "openat2" and not workspace.have_openat2():
        pytest.skip("no openat2 on this kernel")
    monkeypatch.setattr(openat2, "_HAVE_OPENAT2", request.param == "openat2")
    return str(request.param)


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    return root, outside


async def test_reads_never_return_outside_content(places: tuple[Path, Path], resolution: str) -> None:
    """Contract pair files (and comparator baselines) are read beneath the root: a flip of the directory they are in
    to a link outside either refuses the read or misses the file; the bytes used are never the outside file's."""
    root, outside = places
    (root / "proj").mkdir()
    (root / "proj" / "producer.py").write_text("inside\n")
    (outside / "producer.py").write_text("SECRET\n")
    with flipping(root / "proj", outside) as counts:
        for _ in range(ROUNDS):
            try:
                file = workspace_file(str(root), "", "proj/producer.py", field="config.pairs[0].producer")
                text = await read_text(file)
            except PermissionDenied:
                counts["refused"] += 1
                continue
            except OSError as exc:
                counts[errno.errorcode.get(exc.errno or 0, "OSError")] += 1
                continue
            counts["escaped" if "SECRET" in text else "read"] += 1
    print(resolution, dict(counts))
    assert counts["escaped"] == 0, dict(counts)
    assert counts["read"] > 0, dict(counts)


async def test_writes_never_land_outside(places: tuple[Path, Path], resolution: str) -> None:
    """auto_promote writes a temporary file in the checked directory and renames it there: a flip of the baseline's
    directory to a link outside never puts a file outside the root."""
    root, outside = places
    (root / "proj" / "baseline").mkdir(parents=True)
    (outside / "baseline").mkdir()
    before = sorted(outside.rglob("*"))
    with flipping(root / "proj", outside) as counts:
        for index in range(ROUNDS):
            try:
                file = workspace_file(str(root), "", "proj/baseline", "output.txt", field="config.baseline_path")
                await write_text(file, f"promoted {index}\n")
            except PermissionDenied:
                counts["refused"] += 1
                continue
            except OSError as exc:
                counts[errno.errorcode.get(exc.errno or 0, "OSError")] += 1
                continue
            counts["written"] += 1
            if sorted(outside.rglob("*")) != before:
                counts["escaped"] += 1
                (outside / "baseline" / "output.txt").unlink(missing_ok=True)
    print(resolution, dict(counts))
    assert counts["escaped"] == 0, dict(counts)
    assert sorted(outside.rglob("*")) == before, "a file was written outside the root"
    assert counts["written"] > 0, dict(counts)


def _repo(path: Path) -> Path:
    """A repository whose .gitattributes sends *.py through the filter `evil`, with a changed app.py to hash."""
    (path / "src").mkdir(parents=True)
    git(path, "init", "-q")
    (path / ".gitattributes").write_text("*.py filter=evil\n")
    (path / "src" / "app.py").write_text("print(1)\n")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "init")
    (path / "src" / "app.py").write_text("print(2)\n")
    return path


def _hostile_config(config: Path, marker: Path) -> None:
    with config.open("a") as handle:
        handle.write(f'[filter "evil"]\n\tclean = "touch {marker}; cat"\n\tsmudge = cat\n')


@pytest.mark.parametrize("attack", ["workspace", "config-link", "config-content"])
async def test_git_never_runs_a_hostile_configuration(places: tuple[Path, Path], attack: str) -> None:
    """diff_stall's git runs on held descriptors and a copy of the checked configuration.

    - workspace: the workspace directory flips to a link to an outside repository whose configuration runs a filter;
    - config-link: the repository's `.git/config` flips to a link to that outside configuration;
    - config-content: a hostile configuration is renamed over `.git/config` and the benign one back (no link at all:
      the listing of filter drivers and the diff would read different files).
    The filter would touch a marker file; it must never exist."""
    root, outside = places
    marker = outside.parent / "marker"
    inner = _repo(root / "proj")
    evil = _repo(outside / "evil")
    _hostile_config(evil / ".git" / "config", marker)
    hostile_copy = outside / "hostile-config"
    hostile_copy.write_bytes((evil / ".git" / "config").read_bytes())
    flip, target, mode = {
        "workspace": (root / "proj", evil, "link"),
        "config-link": (inner / ".git" / "config", hostile_copy, "link"),
        "config-content": (inner / ".git" / "config", hostile_copy, "content"),
    }[attack]
    metrics = Metrics(CollectorRegistry())
    config = Config(workspace_root=str(root), git_timeout_seconds=20)
    evaluations = Evaluations(config, Runner(metrics), metrics)
    request = EvaluationInput({"type": "diff_stall"}, "", 0, workspace="proj")
    with flipping(flip, target, mode) as counts:
        for _ in range(GIT_ROUNDS):
            try:
                result = await evaluations.evaluate(request)
            except PermissionDenied:
                counts["refused"] += 1
                continue
            counts[result.verdict] += 1
            if marker.exists():
                counts["escaped"] += 1
                marker.unlink()
    print(attack, dict(counts))
    assert counts["escaped"] == 0, dict(counts)
    # On a loaded machine every flipped round may be refused; once the attacker stops, the same request must reach
    # git and judge (so the rounds above exercised the real path, not a setup that always fails).
    settled = await evaluations.evaluate(request)
    assert settled.verdict in ("yes", "no"), settled
    assert not marker.exists()


def test_the_attacker_is_real(places: tuple[Path, Path]) -> None:
    """Control: the same flip, read by name without descriptors, does reach outside content (so the tests above are
    measuring something)."""
    root, outside = places
    (root / "proj").mkdir()
    (root / "proj" / "f").write_text("inside\n")
    (outside / "f").write_text("SECRET\n")
    seen: set[str] = set()
    with flipping(root / "proj", outside):
        for _ in range(ROUNDS * 5):
            try:
                seen.add((root / "proj" / "f").read_text())
            except OSError:
                continue
            if len(seen) == 2:
                break
    assert seen == {"inside\n", "SECRET\n"}
