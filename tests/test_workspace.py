"""resolve_inside and find_repository: paths from requests stay inside workspace_root."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from verdict.errors import FailedPrecondition, PermissionDenied
from verdict.workspace import Repository, find_repository, resolve_inside


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "root" / "proj" / "src").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    return tmp_path / "root"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("proj", "proj"),
        ("proj/src", "proj/src"),
        ("", ""),
        (".", ""),
        ("proj/../proj/src", "proj/src"),
        ("not-yet-created/file.txt", "not-yet-created/file.txt"),
    ],
)
def test_relative_paths_resolve_against_the_root(root: Path, path: str, expected: str) -> None:
    assert resolve_inside(root, path) == (root / expected).resolve()


def test_absolute_path_inside_the_root(root: Path) -> None:
    assert resolve_inside(str(root), str(root / "proj")) == root / "proj"
    assert resolve_inside(root, Path(root / "proj" / "src")) == root / "proj" / "src"


def test_symlink_inside_the_root_is_followed(root: Path) -> None:
    (root / "alias").symlink_to(root / "proj")
    assert resolve_inside(root, "alias/src") == root / "proj" / "src"


def test_root_itself_may_be_a_symlink(root: Path, tmp_path: Path) -> None:
    (tmp_path / "via").symlink_to(root)
    assert resolve_inside(tmp_path / "via", "proj") == root / "proj"


@pytest.mark.parametrize("path", ["..", "../outside", "proj/../../outside", "/etc/passwd", "/", "escape", "escape/x"])
def test_escapes_are_permission_denied(root: Path, path: str) -> None:
    (root / "escape").symlink_to(root.parent / "outside")
    with pytest.raises(PermissionDenied):
        resolve_inside(root, path)


def test_sibling_with_a_common_prefix_is_outside(root: Path, tmp_path: Path) -> None:
    (tmp_path / "root-evil").mkdir()
    with pytest.raises(PermissionDenied):
        resolve_inside(root, "../root-evil")


def test_nul_byte_is_permission_denied(root: Path) -> None:
    with pytest.raises(PermissionDenied):
        resolve_inside(root, "proj\0/x")


def test_no_root_is_failed_precondition() -> None:
    with pytest.raises(FailedPrecondition):
        resolve_inside("", "proj")


def _git_dir(path: Path) -> Path:
    (path / ".git" / "objects").mkdir(parents=True)
    return path / ".git"


def test_find_repository_walks_up_to_the_root(root: Path) -> None:
    git_dir = _git_dir(root / "proj")
    assert find_repository(root, root / "proj" / "src") == Repository(git_dir, root / "proj")
    assert find_repository(root, root) is None


def test_find_repository_stops_at_the_root(tmp_path: Path) -> None:
    _git_dir(tmp_path)
    (tmp_path / "inner").mkdir()
    assert find_repository(tmp_path / "inner", tmp_path / "inner") is None


def test_gitdir_file_inside_the_root_is_followed(root: Path) -> None:
    real = _git_dir(root / "main")
    (root / "proj" / ".git").write_text("gitdir: ../main/.git\n")
    assert find_repository(root, root / "proj") == Repository(real, root / "proj")


@pytest.mark.parametrize(
    "pointer",
    ["gitdir: ../../outside/.git", "not a pointer", "gitdir: " + "a/" * 40_000],
)
def test_gitdir_file_leaving_the_root_is_refused(root: Path, pointer: str) -> None:
    _git_dir(root.parent / "outside")
    (root / "proj" / ".git").write_text(pointer)
    with pytest.raises(PermissionDenied):
        find_repository(root, root / "proj")


def test_commondir_objects_and_alternates_must_stay_inside(root: Path) -> None:
    outside = _git_dir(root.parent / "outside")
    git_dir = _git_dir(root / "proj")
    (git_dir / "commondir").write_text(str(outside))
    with pytest.raises(PermissionDenied):
        find_repository(root, root / "proj")
    (git_dir / "commondir").unlink()
    (git_dir / "objects" / "info").mkdir()
    (git_dir / "objects" / "info" / "alternates").write_text(f"# comment\n\n{root / 'proj/.git/objects'}\n")
    assert find_repository(root, root / "proj") is not None
    (git_dir / "objects" / "info" / "alternates").write_text(f'"{outside / "objects"}"\n')
    with pytest.raises(PermissionDenied):
        find_repository(root, root / "proj")
    (git_dir / "objects" / "info" / "alternates").unlink()
    (git_dir / "index").symlink_to(outside / "index")
    with pytest.raises(PermissionDenied):
        find_repository(root, root / "proj")


def test_alternates_of_an_alternate_must_stay_inside_too(root: Path) -> None:
    """git follows alternates recursively: an alternate inside the root whose own alternates leave it is an escape."""
    outside = _git_dir(root.parent / "outside")
    git_dir = _git_dir(root / "proj")
    hop = _git_dir(root / "hop")
    (git_dir / "objects" / "info").mkdir()
    (git_dir / "objects" / "info" / "alternates").write_text(f"{hop / 'objects'}\n")
    (hop / "objects" / "info").mkdir()
    (hop / "objects" / "info" / "alternates").write_text("../../../../outside/.git/objects\n")
    assert (hop / "objects" / "../../../../outside/.git/objects").resolve() == (outside / "objects").resolve()
    with pytest.raises(PermissionDenied):
        find_repository(root, root / "proj")
    (hop / "objects" / "info" / "alternates").write_text(f"{git_dir / 'objects'}\n")
    assert find_repository(root, root / "proj") == Repository(git_dir, root / "proj"), "a cycle is not an escape"


def _find_in_child(root: Path, start: Path) -> str:
    """find_repository in a child process, so a hang fails the test instead of stopping the test run."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from verdict.workspace import find_repository\n"
        "try:\n"
        "    find_repository(Path(sys.argv[1]), Path(sys.argv[2]))\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__)\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, str(root), str(start)], capture_output=True, text=True, timeout=10
        )
    except subprocess.TimeoutExpired:
        return "hung"
    return done.stdout.strip() or done.stderr.strip()[-200:]


@pytest.mark.parametrize("where", [".git", ".git/commondir", ".git/objects/info/alternates"])
def test_fifo_in_the_repository_metadata_is_refused_without_blocking(root: Path, where: str) -> None:
    """A workspace may hold a FIFO where a pointer file belongs; opening it for reading would block forever (on the
    event loop, stopping every call), so only regular files are read."""
    if where != ".git":
        _git_dir(root / "proj")
        (root / "proj" / ".git" / "objects" / "info").mkdir()
    os.mkfifo(root / "proj" / where)
    assert _find_in_child(root, root / "proj") == ("PermissionDenied" if where == ".git" else "")


@pytest.mark.parametrize("where", [".git", ".git/commondir", ".git/objects/info/alternates"])
def test_nul_byte_in_a_pointer_file_is_permission_denied(root: Path, where: str) -> None:
    if where != ".git":
        _git_dir(root / "proj")
        (root / "proj" / ".git" / "objects" / "info").mkdir()
    prefix = "gitdir: " if where == ".git" else ""
    (root / "proj" / where).write_text(f"{prefix}../x\0y\n")
    with pytest.raises(PermissionDenied):
        find_repository(root, root / "proj")
