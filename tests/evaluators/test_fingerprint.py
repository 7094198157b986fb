"""diff_stall's default comparison (a fingerprint of HEAD, index, work tree and untracked files) on real repositories.

The first three tests are the kinds of real progress `git diff --stat` calls a stall: each runs the same loop with
`compare: stat` (which must stall, proving the case is real) and with the default (which must not).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.evaluators.test_diffstat import Loop, git, make_repo
from verdict.config.keys import Config
from verdict.evaluators import Evaluations, state
from verdict.metrics import Metrics
from verdict.runner import Runner


async def _verdicts(loop: Loop, steps: list[object]) -> list[str]:
    """The verdict after each step; a step is a callable that changes the repository."""
    verdicts = [(await loop.step()).verdict]
    for change in steps:
        assert callable(change)
        change()
        verdicts.append((await loop.step()).verdict)
    return verdicts


def _new_untracked_file_each_step(repo: Path) -> list[object]:
    return [lambda n=n: (repo / f"notes-{n}.md").write_text(f"finding {n}\n") for n in range(3)]


def _score_edits(repo: Path) -> list[object]:
    return [lambda value=value: (repo / "score.txt").write_text(f"{value}\n") for value in (20, 30)]


def _commit_each_step(repo: Path) -> list[object]:
    def commit(n: int) -> None:
        (repo / "src/app.py").write_text(f"print({n})\n")
        git(repo, "commit", "-qam", f"step {n}")

    return [lambda n=n: commit(n) for n in range(2, 5)]


CASES = {
    "new untracked file each step": _new_untracked_file_each_step,
    "score.txt 10 -> 20 -> 30": _score_edits,
    "a commit each step": _commit_each_step,
}


@pytest.mark.parametrize("case", sorted(CASES))
async def test_real_progress_is_a_stall_for_stat_and_progress_for_content(
    evaluations: Evaluations, root: Path, case: str
) -> None:
    for compare in ("stat", "content"):
        repo = make_repo(root / f"{compare}-proj", {"src/app.py": "print(1)\n", "score.txt": "10\n"})
        if case == "score.txt 10 -> 20 -> 30":
            (repo / "score.txt").write_text("15\n")  # the stat line `score.txt | 2 +-` from the first call on
        loop = Loop(evaluations, f"{compare}-proj", compare=compare)
        verdicts = await _verdicts(loop, CASES[case](repo))
        if compare == "stat":
            assert "no" in verdicts[1:], f"{case}: little-loops' comparison does not stall here ({verdicts})"
        else:
            assert verdicts == ["yes"] * len(verdicts), f"{case}: real progress called a stall ({verdicts})"


async def test_details_name_what_changed(evaluations: Evaluations, root: Path) -> None:
    repo = make_repo(root / "proj")
    loop = Loop(evaluations, "proj")
    first = await loop.step()
    assert first.details == {
        "stall_count": 0,
        "max_stall": 1,
        "diff_changed": True,
        "compare": "content",
        "changed": ["head", "index", "worktree", "untracked"],
    }
    same = await loop.step()
    assert (same.verdict, same.details["changed"], same.details["diff_changed"]) == ("no", [], False)
    (repo / "new.txt").write_text("x\n")
    assert (await loop.step()).details["changed"] == ["untracked"]
    git(repo, "add", "new.txt")
    assert (await loop.step()).details["changed"] == ["index", "untracked"]
    (repo / "new.txt").write_text("y\n")
    assert (await loop.step()).details["changed"] == ["worktree"]
    git(repo, "commit", "-qam", "two")
    assert (await loop.step()).details["changed"] == ["head", "index", "worktree"]


async def test_same_line_counts_with_other_content_is_progress(evaluations: Evaluations, root: Path) -> None:
    repo = make_repo(root / "proj", {"score.txt": "10\n"})
    loop = Loop(evaluations, "proj")
    (repo / "score.txt").write_text("20\n")
    await loop.step()
    (repo / "score.txt").write_text("30\n")
    result = await loop.step()
    assert (result.verdict, result.details["changed"]) == ("yes", ["worktree"])
    (repo / "score.txt").write_text("30\n")  # rewritten with the same content: not progress
    assert (await loop.step()).verdict == "no"


async def test_scope_limits_every_part(evaluations: Evaluations, root: Path) -> None:
    repo = make_repo(root / "proj")
    loop = Loop(evaluations, "proj", scope=["src"])
    assert (await loop.step()).verdict == "yes"
    (repo / "docs/new.md").write_text("untracked outside the scope\n")
    assert (await loop.step()).verdict == "no"
    (repo / "docs/readme.md").write_text("edited outside the scope\n")
    git(repo, "commit", "-qam", "outside")
    assert (await loop.step()).verdict == "no", "a commit touching only files outside the scope"
    (repo / "src/new.py").write_text("untracked inside the scope\n")
    result = await loop.step()
    assert (result.verdict, result.details["changed"]) == ("yes", ["untracked"])
    git(repo, "add", "src/new.py")
    git(repo, "commit", "-qm", "inside")
    assert (await loop.step()).details["changed"] == ["head", "index", "untracked"]


async def test_glob_pathspec_scope(evaluations: Evaluations, root: Path) -> None:
    repo = make_repo(root / "proj")
    loop = Loop(evaluations, "proj", scope=["*.py"])
    await loop.step()
    (repo / "docs/readme.md").write_text("not matched\n")
    assert (await loop.step()).verdict == "no"
    (repo / "docs/tool.py").write_text("matched anywhere\n")
    assert (await loop.step()).verdict == "yes"


async def test_ignored_files_are_not_progress(evaluations: Evaluations, root: Path) -> None:
    repo = make_repo(root / "proj", {".gitignore": "build/\n*.log\n", "src/app.py": "print(1)\n"})
    (repo / ".git/info/exclude").write_text("scratch.txt\n")
    loop = Loop(evaluations, "proj")
    await loop.step()
    (repo / "build").mkdir()
    (repo / "build/out.o").write_bytes(b"\0" * 100)
    (repo / "run.log").write_text("log line\n")
    (repo / "scratch.txt").write_text("excluded by info/exclude\n")
    assert (await loop.step()).verdict == "no"
    (repo / "run.log").write_text("log line\nanother\n")
    assert (await loop.step()).verdict == "no"


async def test_untracked_content_changes_are_progress(evaluations: Evaluations, root: Path) -> None:
    repo = make_repo(root / "proj")
    (repo / "draft.md").write_text("one\n")
    loop = Loop(evaluations, "proj")
    await loop.step()
    (repo / "draft.md").write_text("two\n")
    assert (await loop.step()).details["changed"] == ["untracked"]
    (repo / "draft.md").unlink()
    assert (await loop.step()).details["changed"] == ["untracked"]


async def test_binary_files_by_content(evaluations: Evaluations, root: Path) -> None:
    repo = make_repo(root / "proj")
    (repo / "model.bin").write_bytes(bytes(range(256)) * 4)
    git(repo, "add", "model.bin")
    git(repo, "commit", "-qm", "binary")
    loop = Loop(evaluations, "proj")
    await loop.step()
    (repo / "model.bin").write_bytes(bytes(reversed(range(256))) * 4)  # same size, other bytes
    assert (await loop.step()).details["changed"] == ["worktree"]
    (repo / "weights.bin").write_bytes(b"\0\1\2" * 100)
    await loop.step()
    (repo / "weights.bin").write_bytes(b"\2\1\0" * 100)
    assert (await loop.step()).details["changed"] == ["untracked"]


async def test_renames_are_progress(evaluations: Evaluations, root: Path) -> None:
    repo = make_repo(root / "proj")
    loop = Loop(evaluations, "proj")
    await loop.step()
    git(repo, "mv", "src/app.py", "src/main.py")
    assert (await loop.step()).details["changed"] == ["index"]
    (repo / "src/main.py").rename(repo / "src/entry.py")  # unstaged: a deletion plus an untracked file
    assert (await loop.step()).details["changed"] == ["worktree", "untracked"]


async def test_untracked_symlink_counts_by_target_and_is_never_followed(
    evaluations: Evaluations, root: Path, tmp_path: Path
) -> None:
    repo = make_repo(root / "proj")
    secret = tmp_path / "secret.txt"
    secret.write_text("one\n")
    (repo / "link").symlink_to(secret)
    loop = Loop(evaluations, "proj")
    await loop.step()
    secret.write_text("two\n")
    assert (await loop.step()).verdict == "no", "the content behind a link outside the workspace was read"
    (repo / "link").unlink()
    (repo / "link").symlink_to(tmp_path / "elsewhere")
    assert (await loop.step()).details["changed"] == ["untracked"]


async def test_special_file_names(evaluations: Evaluations, root: Path) -> None:
    repo = make_repo(root / "proj")
    loop = Loop(evaluations, "proj")
    await loop.step()
    odd = repo / 'line\nbreak "quoted" \\ tab\t.txt'
    odd.write_text("a\n")
    assert (await loop.step()).verdict == "yes"
    odd.write_text("b\n")
    assert (await loop.step()).details["changed"] == ["untracked"]


def _nested_repo(path: Path) -> Path:
    return make_repo(path, {"lib.py": "x = 1\n"})


async def test_submodules_count_by_their_commit_not_their_work_tree(evaluations: Evaluations, root: Path) -> None:
    repo = make_repo(root / "proj")
    sub = _nested_repo(repo / "vendor")
    git(repo, "add", "vendor")  # a gitlink, as `git submodule add` records
    git(repo, "commit", "-qm", "vendor")
    loop = Loop(evaluations, "proj")
    await loop.step()
    (sub / "lib.py").write_text("x = 2\n")
    (sub / "scratch.py").write_text("untracked in the submodule\n")
    assert (await loop.step()).verdict == "no", "a submodule's own work tree is another repository"
    git(sub, "commit", "-qam", "bump")
    result = await loop.step()
    assert (result.verdict, result.details["changed"]) == ("yes", ["worktree"])


async def test_untracked_nested_repository_counts_by_name(evaluations: Evaluations, root: Path) -> None:
    repo = make_repo(root / "proj")
    loop = Loop(evaluations, "proj")
    await loop.step()
    sub = _nested_repo(repo / "clone")
    assert (await loop.step()).details["changed"] == ["untracked"]
    (sub / "lib.py").write_text("x = 3\n")
    assert (await loop.step()).verdict == "no"


async def test_unborn_branch(evaluations: Evaluations, root: Path) -> None:
    repo = root / "fresh"
    repo.mkdir()
    git(repo, "init", "-q")
    loop = Loop(evaluations, "fresh")
    assert (await loop.step()).verdict == "yes"
    assert (await loop.step()).verdict == "no"
    (repo / "first.txt").write_text("hello\n")
    assert (await loop.step()).details["changed"] == ["untracked"]
    git(repo, "add", "first.txt")
    git(repo, "commit", "-qm", "first")
    assert (await loop.step()).details["changed"] == ["head", "index", "untracked"]


def _bounded(metrics: Metrics, root: Path, **bounds: int) -> Evaluations:
    config = Config(workspace_root=str(root), git_timeout_seconds=20, **bounds)  # type: ignore[arg-type]
    return Evaluations(config, Runner(metrics), metrics)


async def test_too_many_untracked_files_is_an_error_not_a_stall(metrics: Metrics, root: Path) -> None:
    repo = make_repo(root / "proj")
    tree = repo / "generated"
    tree.mkdir()
    for n in range(60):
        (tree / f"{n}.txt").write_text(f"{n}\n")
    evaluations = _bounded(metrics, root, diff_stall_max_files=50)
    result = await Loop(evaluations, "proj").step()
    assert result.verdict == "error"
    assert "diff_stall_max_files (50)" in result.details["error"]
    assert result.state == b""
    assert (await Loop(evaluations, "proj", scope=["src"]).step()).verdict == "yes", "a narrower scope fits"


async def test_too_many_bytes_is_an_error_not_a_stall(metrics: Metrics, root: Path) -> None:
    repo = make_repo(root / "proj")
    (repo / "big.bin").write_bytes(b"\1" * 8192)
    evaluations = _bounded(metrics, root, diff_stall_max_bytes=4096)
    result = await Loop(evaluations, "proj").step()
    assert result.verdict == "error"
    assert "diff_stall_max_bytes (4096 bytes)" in result.details["error"]
    (repo / "big.bin").unlink()
    (repo / "src/app.py").write_text("print('x')\n" * 1000)  # a tracked change whose patch is past the bound
    result = await Loop(evaluations, "proj").step()
    assert result.verdict == "error"
    assert "the work-tree diff" in result.details["error"]


async def test_token_stays_small(evaluations: Evaluations, root: Path) -> None:
    repo = make_repo(root / "proj")
    for n in range(200):
        (repo / f"file-{n}-{'x' * 100}.txt").write_text(f"{n}\n")
    token = (await Loop(evaluations, "proj").step()).state
    assert len(token) < 512
    assert len(token) <= state.MAX_TOKEN_BYTES


async def test_a_stat_token_is_a_first_call_for_content_and_back(evaluations: Evaluations, root: Path) -> None:
    """A loop whose server is upgraded mid-run (or that switches mode) sees progress once, never a made-up stall."""
    make_repo(root / "proj")
    stat_loop = Loop(evaluations, "proj", compare="stat")
    await stat_loop.step()
    content_loop = Loop(evaluations, "proj")
    content_loop.token = stat_loop.token
    result = await content_loop.step()
    assert (result.verdict, result.details["stall_count"]) == ("yes", 0)
    assert (await content_loop.step()).verdict == "no"
    stat_loop.token = content_loop.token
    assert (await stat_loop.step()).verdict == "yes"


async def test_a_mode_change_is_progress(evaluations: Evaluations, root: Path) -> None:
    repo = make_repo(root / "proj")
    loop = Loop(evaluations, "proj")
    await loop.step()
    (repo / "src/app.py").chmod(0o755)
    assert (await loop.step()).details["changed"] == ["worktree"]
