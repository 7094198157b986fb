"""Workspace paths: the lexical check (`inside`), the no-symlink open beneath the root (`open_beneath`, through
openat2 and through the fallback walk alike) and `find_repository` on held descriptors."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from verdict.errors import FailedPrecondition, InvalidArgument, PermissionDenied
from verdict.workspace import (
    NAME_MAX,
    Repository,
    UncheckedConfig,
    find_repository,
    have_openat2,
    inside,
    open_beneath,
    open_root,
)

KERNELS = [
    pytest.param(True, id="openat2", marks=pytest.mark.skipif(not have_openat2(), reason="no openat2 here")),
    pytest.param(False, id="walk"),
]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "root" / "proj" / "src").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    return tmp_path / "root"


@pytest.fixture
def root_fd(root: Path) -> Iterator[int]:
    descriptor = open_root(str(root))
    yield descriptor
    os.close(descriptor)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("proj", "proj"),
        ("proj/src", "proj/src"),
        ("", "."),
        (".", "."),
        ("proj/../proj/src", "proj/src"),
        ("proj//src/", "proj/src"),
        ("not-yet-created/file.txt", "not-yet-created/file.txt"),
    ],
)
def test_relative_paths_normalise_against_the_root(root: Path, path: str, expected: str) -> None:
    assert inside(str(root), path, "workspace") == expected


def test_absolute_path_inside_the_root(root: Path, tmp_path: Path) -> None:
    assert inside(str(root), str(root / "proj"), "workspace") == "proj"
    assert inside(str(root), str(root), "workspace") == "."
    (tmp_path / "via").symlink_to(root)
    assert inside(str(tmp_path / "via"), str(root / "proj"), "workspace") == "proj", "the root's real path counts"


@pytest.mark.parametrize("path", ["..", "../outside", "proj/../../outside", "/etc/passwd", "/", "../root-evil"])
def test_lexical_escapes_are_permission_denied(root: Path, path: str) -> None:
    (root.parent / "root-evil").mkdir()
    with pytest.raises(PermissionDenied) as refused:
        inside(str(root), path, "workspace")
    assert refused.value.metadata["field"] == "workspace"


def test_nul_byte_is_permission_denied(root: Path) -> None:
    with pytest.raises(PermissionDenied):
        inside(str(root), "proj\0/x", "workspace")


def test_no_root_is_failed_precondition() -> None:
    with pytest.raises(FailedPrecondition):
        inside("", "proj", "workspace")
    with pytest.raises(FailedPrecondition):
        open_root("")


@pytest.mark.parametrize("path", ["a" * (NAME_MAX + 1), "proj/" + "b" * 300, "a/" * 2100])
def test_names_the_kernel_refuses_are_invalid_argument_naming_the_field(root: Path, path: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        inside(str(root), path, "config.baseline_path")
    assert refused.value.field == "config.baseline_path"
    assert refused.value.reason == "PATH_TOO_LONG"


@pytest.mark.parametrize("kernel", KERNELS)
def test_open_beneath_opens_plain_paths(root: Path, root_fd: int, kernel: bool) -> None:
    (root / "proj" / "src" / "a.txt").write_text("hello")
    descriptor = open_beneath(root_fd, "proj/src/a.txt", os.O_RDONLY, "f", kernel=kernel)
    try:
        assert os.read(descriptor, 100) == b"hello"
        assert os.get_inheritable(descriptor) is False
    finally:
        os.close(descriptor)
    os.close(open_beneath(root_fd, ".", os.O_RDONLY | os.O_DIRECTORY, "f", kernel=kernel))


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize(
    ("link", "target", "path"),
    [
        ("out", "../outside", "out"),  # a link leaving the root
        ("alias", "proj", "alias/src"),  # a link staying inside: refused too, by decision
        ("abs", "/etc", "abs/passwd"),
        ("proj/src/self", ".", "proj/src/self"),
        ("proc", "/proc/self/root", "proc/etc/passwd"),
    ],
)
def test_open_beneath_follows_no_link(
    root: Path, root_fd: int, kernel: bool, link: str, target: str, path: str
) -> None:
    (root / link).symlink_to(target)
    with pytest.raises(PermissionDenied) as refused:
        open_beneath(root_fd, path, os.O_RDONLY, "config.pairs[0].producer", kernel=kernel)
    assert refused.value.metadata["field"] == "config.pairs[0].producer"


@pytest.mark.parametrize("kernel", KERNELS)
def test_open_beneath_reports_ordinary_errors_as_they_are(root: Path, root_fd: int, kernel: bool) -> None:
    (root / "proj" / "file").write_text("x")
    with pytest.raises(FileNotFoundError):
        open_beneath(root_fd, "proj/missing", os.O_RDONLY, "f", kernel=kernel)
    with pytest.raises(NotADirectoryError):
        open_beneath(root_fd, "proj/file/below", os.O_RDONLY, "f", kernel=kernel)
    with pytest.raises(NotADirectoryError):
        open_beneath(root_fd, "proj/file", os.O_RDONLY | os.O_DIRECTORY, "f", kernel=kernel)


@pytest.mark.parametrize("kernel", KERNELS)
def test_an_over_long_name_from_the_kernel_is_invalid_argument(root_fd: int, kernel: bool) -> None:
    """`inside` refuses these first; a caller that skipped it still gets INVALID_ARGUMENT, never an OSError."""
    with pytest.raises(InvalidArgument):
        open_beneath(root_fd, "c" * 300, os.O_RDONLY, "workspace", kernel=kernel)


def _find(root: Path, workspace: str) -> Repository | None:
    descriptor = open_root(str(root))
    try:
        return find_repository(descriptor, str(root), workspace)
    finally:
        os.close(descriptor)


def _git_dir(path: Path) -> Path:
    (path / ".git" / "objects").mkdir(parents=True)
    return path / ".git"


def _same(descriptor: int, path: Path) -> bool:
    return os.path.samestat(os.fstat(descriptor), os.stat(path))


def test_find_repository_walks_up_to_the_root(root: Path) -> None:
    git_dir = _git_dir(root / "proj")
    (git_dir / "HEAD").write_text("ref: refs/heads/main\n")
    (git_dir / "config").write_text("[core]\n\tbare = false\n")
    repository = _find(root, "proj/src")
    assert repository is not None
    with repository:
        assert _same(repository.git_dir, git_dir)
        assert _same(repository.common_dir, git_dir)
        assert _same(repository.work_tree, root / "proj")
        assert _same(repository.held["objects"], git_dir / "objects")
        assert repository.head == b"ref: refs/heads/main\n"
        assert repository.config == b"[core]\n\tbare = false\n"
        descriptors = repository.descriptors()
    assert _find(root, ".") is None
    with pytest.raises(OSError, match="Bad file descriptor"):
        os.fstat(descriptors[0])  # closed with the repository


def test_find_repository_stops_at_the_root(tmp_path: Path) -> None:
    _git_dir(tmp_path)
    (tmp_path / "inner").mkdir()
    assert _find(tmp_path / "inner", ".") is None


def test_gitdir_file_inside_the_root_is_followed(root: Path) -> None:
    real = _git_dir(root / "main")
    (root / "proj" / ".git").write_text("gitdir: ../main/.git\n")
    repository = _find(root, "proj")
    assert repository is not None
    with repository:
        assert _same(repository.git_dir, real)
        assert _same(repository.work_tree, root / "proj")
    (root / "proj" / ".git").write_text(f"gitdir: {real}\n")
    repository = _find(root, "proj")
    assert repository is not None
    repository.close()


def test_a_linked_work_tree_reads_its_common_directory(root: Path) -> None:
    main = _git_dir(root / "main")
    linked = main / "worktrees" / "wt"
    linked.mkdir(parents=True)
    (linked / "commondir").write_text("../..\n")
    (linked / "index").write_text("")
    (main / "config").write_text("[core]\n")
    (root / "proj" / ".git").write_text("gitdir: ../main/.git/worktrees/wt\n")
    repository = _find(root, "proj")
    assert repository is not None
    with repository:
        assert _same(repository.git_dir, linked)
        assert _same(repository.common_dir, main)
        assert _same(repository.held["index"], linked / "index")
        assert repository.config == b"[core]\n"


@pytest.mark.parametrize("where", [".git", ".git/config"])
def test_a_link_in_the_metadata_is_refused_even_inside_the_root(root: Path, where: str) -> None:
    """A `.git` that is a link is PERMISSION_DENIED; a config that is a link is UncheckedConfig (git does not run,
    diff_stall says why in an `error` verdict)."""
    real = _git_dir(root / "main")
    (real / "config").write_text("[core]\n")
    if where == ".git":
        (root / "proj" / ".git").symlink_to(real)
        with pytest.raises(PermissionDenied):
            _find(root, "proj")
        return
    _git_dir(root / "proj")
    (root / "proj" / ".git" / "config").symlink_to(real / "config")
    with pytest.raises(UncheckedConfig):
        _find(root, "proj")


@pytest.mark.parametrize(
    "pointer",
    ["gitdir: ../../outside/.git", "not a pointer", "gitdir: " + "a/" * 40_000],
)
def test_gitdir_file_leaving_the_root_is_refused(root: Path, pointer: str) -> None:
    _git_dir(root.parent / "outside")
    (root / "proj" / ".git").write_text(pointer)
    with pytest.raises(PermissionDenied):
        _find(root, "proj")


def test_commondir_objects_and_alternates_must_stay_inside(root: Path) -> None:
    outside = _git_dir(root.parent / "outside")
    git_dir = _git_dir(root / "proj")
    (git_dir / "commondir").write_text(str(outside))
    with pytest.raises(PermissionDenied):
        _find(root, "proj")
    (git_dir / "commondir").unlink()
    (git_dir / "objects" / "info").mkdir()
    (git_dir / "objects" / "info" / "alternates").write_text(f"# comment\n\n{root / 'proj/.git/objects'}\n")
    found = _find(root, "proj")
    assert found is not None
    found.close()
    (git_dir / "objects" / "info" / "alternates").write_text(f'"{outside / "objects"}"\n')
    with pytest.raises(PermissionDenied):
        _find(root, "proj")
    (git_dir / "objects" / "info" / "alternates").unlink()
    (git_dir / "index").symlink_to(outside / "index")
    with pytest.raises(PermissionDenied):
        _find(root, "proj")


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
        _find(root, "proj")
    (hop / "objects" / "info" / "alternates").write_text(f"{git_dir / 'objects'}\n")
    found = _find(root, "proj")
    assert found is not None, "a cycle is not an escape"
    found.close()


def _find_in_child(root: Path, start: str) -> str:
    """find_repository in a child process, so a hang fails the test instead of stopping the test run."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from verdict.workspace import find_repository, open_root\n"
        "try:\n"
        "    find_repository(open_root(sys.argv[1]), sys.argv[1], sys.argv[2])\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__)\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, str(root), start], capture_output=True, text=True, timeout=10
        )
    except subprocess.TimeoutExpired:
        return "hung"
    return done.stdout.strip() or done.stderr.strip()[-200:]


@pytest.mark.parametrize("where", [".git", ".git/commondir", ".git/objects/info/alternates"])
def test_fifo_in_the_repository_metadata_is_refused_without_blocking(root: Path, where: str) -> None:
    """A workspace may hold a FIFO where a pointer file belongs; opening it for reading would block forever (on the
    event loop, stopping every call), so only regular files are read, and anything else there is refused."""
    if where != ".git":
        _git_dir(root / "proj")
        (root / "proj" / ".git" / "objects" / "info").mkdir()
    os.mkfifo(root / "proj" / where)
    assert _find_in_child(root, "proj") == "PermissionDenied"


@pytest.mark.parametrize("where", [".git", ".git/commondir", ".git/objects/info/alternates"])
def test_nul_byte_in_a_pointer_file_is_permission_denied(root: Path, where: str) -> None:
    if where != ".git":
        _git_dir(root / "proj")
        (root / "proj" / ".git" / "objects" / "info").mkdir()
    prefix = "gitdir: " if where == ".git" else ""
    (root / "proj" / where).write_text(f"{prefix}../x\0y\n")
    with pytest.raises(PermissionDenied):
        _find(root, "proj")
