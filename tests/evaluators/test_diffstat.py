"""diff_stall against real git repositories made in a temporary folder, including hostile ones."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from verdict.config.keys import Config
from verdict.errors import FailedPrecondition, InvalidArgument, PermissionDenied, VerdictError
from verdict.evaluators import EvaluationInput, EvaluationResult, Evaluations
from verdict.metrics import Metrics
from verdict.runner import Command, Completed, Runner

GIT_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, env=GIT_ENV, capture_output=True, text=True, check=True)
    return done.stdout


def make_repo(path: Path, files: Mapping[str, str] | None = None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    for name, text in (files or {"src/app.py": "print(1)\n", "docs/readme.md": "hi\n"}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-qm", "init")
    return path


class Loop:
    def __init__(self, evaluations: Evaluations, workspace: str, **config: Any) -> None:
        self.evaluations = evaluations
        self.workspace = workspace
        self.config = {"type": "diff_stall", **config}
        self.token = b""

    async def step(self, exit_code: int = 0) -> EvaluationResult:
        request = EvaluationInput(self.config, "", exit_code, state=self.token, workspace=self.workspace)
        result = await self.evaluations.evaluate(request)
        self.token = result.state
        return result


async def test_changes_reset_and_no_change_stalls(evaluations: Evaluations, root: Path) -> None:
    repo = make_repo(root / "proj")
    loop = Loop(evaluations, "proj", compare="stat")
    first = await loop.step()
    assert (first.verdict, first.details) == ("yes", {"stall_count": 0, "max_stall": 1, "diff_changed": True})
    same = await loop.step()
    assert (same.verdict, same.details) == ("no", {"stall_count": 1, "max_stall": 1, "diff_changed": False})
    (repo / "src/app.py").write_text("print(2)\n")
    changed = await loop.step()
    assert (changed.verdict, changed.details["diff_changed"], changed.details["stall_count"]) == ("yes", True, 0)
    again = await loop.step()
    assert again.verdict == "no"
    (repo / "src/app.py").write_text("print(2)\nprint(3)\n")
    assert (await loop.step()).verdict == "yes"


async def test_max_stall_counts_unchanged_calls(evaluations: Evaluations, root: Path) -> None:
    make_repo(root / "proj")
    loop = Loop(evaluations, "proj", max_stall=2)
    assert [(await loop.step()).verdict for _ in range(4)] == ["yes", "yes", "no", "no"]


async def test_scope_limits_what_counts_as_progress(evaluations: Evaluations, root: Path) -> None:
    repo = make_repo(root / "proj")
    loop = Loop(evaluations, "proj", scope=["src"])
    assert (await loop.step()).verdict == "yes"
    (repo / "docs/readme.md").write_text("changed outside the scope\n")
    assert (await loop.step()).verdict == "no"
    (repo / "src/app.py").write_text("print('in scope')\n")
    assert (await loop.step()).verdict == "yes"


async def test_token_is_bound_to_scope_and_workspace(evaluations: Evaluations, root: Path) -> None:
    make_repo(root / "a")
    make_repo(root / "b")
    token = (await Loop(evaluations, "a").step()).state
    for config, workspace in (({"type": "diff_stall", "scope": ["src"]}, "a"), ({"type": "diff_stall"}, "b")):
        with pytest.raises(InvalidArgument):
            await evaluations.evaluate(EvaluationInput(config, state=token, workspace=workspace))
    same = await evaluations.evaluate(EvaluationInput({"type": "diff_stall"}, state=token, workspace=str(root / "a")))
    assert same.verdict == "no", "an absolute path to the same workspace is the same workspace"


async def test_workspace_is_relative_to_the_root_and_may_be_a_subdirectory(
    evaluations: Evaluations, root: Path
) -> None:
    repo = make_repo(root / "proj")
    loop = Loop(evaluations, "proj/src", scope=["."])
    assert (await loop.step()).verdict == "yes"
    (repo / "docs/readme.md").write_text("outside the pathspec, which is relative to the workspace\n")
    assert (await loop.step()).verdict == "no"


async def test_empty_workspace_is_the_root(evaluations: Evaluations, root: Path) -> None:
    make_repo(root)
    assert (await Loop(evaluations, "").step()).verdict == "yes"


async def test_not_a_repository_is_an_error_verdict(evaluations: Evaluations, root: Path) -> None:
    (root / "plain").mkdir()
    result = await Loop(evaluations, "plain").step()
    assert result.verdict == "error"
    assert "not in a git repository" in result.details["error"]
    assert result.state == b""


async def test_repository_above_the_root_is_not_used(metrics: Metrics, tmp_path: Path) -> None:
    outer = make_repo(tmp_path / "outer")
    inner_root = outer / "workspaces"
    inner_root.mkdir()
    evaluations = Evaluations(Config(workspace_root=str(inner_root)), Runner(metrics), metrics)
    result = await Loop(evaluations, "").step()
    assert result.verdict == "error"


async def test_missing_workspace_is_an_error_verdict(evaluations: Evaluations) -> None:
    result = await Loop(evaluations, "gone").step()
    assert result.verdict == "error"
    assert "not a directory" in result.details["error"]


async def test_error_verdict_keeps_the_token(evaluations: Evaluations, root: Path) -> None:
    repo = make_repo(root / "proj")
    loop = Loop(evaluations, "proj")
    await loop.step()
    token = loop.token
    (repo / ".git/index").write_bytes(b"not an index")
    result = await loop.step()
    assert result.verdict == "error"
    assert result.details["error"].startswith("git ls-files failed: ")
    assert result.state == token


async def test_timed_out_action_short_circuits_before_git(evaluations: Evaluations) -> None:
    result = await Loop(evaluations, "does-not-matter").step(exit_code=124)
    assert result.verdict == "error"
    assert result.details == {"exit_code": 124, "error": "action timed out"}


async def test_exit_code_aware_other_failures_still_diff(evaluations: Evaluations, root: Path) -> None:
    make_repo(root / "proj")
    assert (await Loop(evaluations, "proj").step(exit_code=1)).verdict == "yes"


async def test_no_workspace_root_is_failed_precondition(metrics: Metrics) -> None:
    evaluations = Evaluations(Config(), Runner(metrics), metrics)
    with pytest.raises(FailedPrecondition, match="workspace_root"):
        await evaluations.evaluate(EvaluationInput({"type": "diff_stall"}, workspace="proj"))


@pytest.mark.parametrize("escape", ["..", "../outside", "proj/../../outside", "/etc", "link"])
async def test_workspace_escaping_the_root_is_permission_denied(
    evaluations: Evaluations, root: Path, tmp_path: Path, escape: str
) -> None:
    outside = make_repo(tmp_path / "outside")
    (root / "link").symlink_to(outside)
    with pytest.raises(PermissionDenied):
        await evaluations.evaluate(EvaluationInput({"type": "diff_stall"}, workspace=escape))


async def test_git_metadata_pointing_outside_the_root_is_permission_denied(
    evaluations: Evaluations, root: Path, tmp_path: Path
) -> None:
    outside = make_repo(tmp_path / "outside")
    worktree = root / "worktree"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {outside / '.git'}\n")
    with pytest.raises(PermissionDenied):
        await Loop(evaluations, "worktree").step()
    linked = root / "linked"
    linked.mkdir()
    (linked / ".git").symlink_to(outside / ".git")
    with pytest.raises(PermissionDenied):
        await Loop(evaluations, "linked").step()
    alternates = make_repo(root / "alternates")
    (alternates / ".git/objects/info/alternates").write_text(f"{outside / '.git/objects'}\n")
    with pytest.raises(PermissionDenied):
        await Loop(evaluations, "alternates").step()


def _arm(repo: Path, marker_dir: Path) -> dict[str, Path]:
    """Configure every command-running git feature a `git diff --stat` could reach; each leaves a marker file."""
    markers = {name: marker_dir / name for name in ("fsmonitor", "filter", "external", "textconv", "pager", "hook")}
    hooks = repo / ".git/hooks"
    hooks.mkdir(exist_ok=True)
    hook = hooks / "post-index-change"
    hook.write_text(f"#!/bin/sh\ntouch {markers['hook']}\n")
    hook.chmod(0o755)
    git(repo, "config", "core.fsmonitor", f"touch {markers['fsmonitor']}; false")
    git(repo, "config", "filter.evil=name.clean", f"touch {markers['filter']}; cat")
    git(repo, "config", "filter.evil=name.smudge", "cat")
    git(repo, "config", "filter.evil=name.required", "true")
    git(repo, "config", "diff.external", f"sh -c 'touch {markers['external']}'")
    git(repo, "config", "diff.conv.textconv", f"sh -c 'touch {markers['textconv']}; cat \"$0\"'")
    git(repo, "config", "core.pager", f"touch {markers['pager']}; cat")
    git(repo, "config", "color.diff", "always")
    (repo / ".gitattributes").write_text("*.py filter=evil=name diff=conv\n")
    return markers


@pytest.mark.parametrize("compare", ["content", "stat"])
async def test_hostile_repository_runs_none_of_its_commands(
    evaluations: Evaluations, root: Path, tmp_path: Path, compare: str
) -> None:
    repo = make_repo(root / "hostile")
    marker_dir = tmp_path / "markers"
    marker_dir.mkdir()
    markers = _arm(repo, marker_dir)
    (repo / "src/app.py").write_text("print('changed')\n")

    # Control: plain git in this repository does run them, so the assertions below can fail.
    for argv in (["git", "diff", "--stat"], ["git", "-c", "core.pager=", "diff"]):
        await asyncio.to_thread(subprocess.run, argv, cwd=repo, env=GIT_ENV, capture_output=True, check=False)
    fired = {name for name, marker in markers.items() if marker.exists()}
    assert {"fsmonitor", "filter", "external"} <= fired, fired
    for marker in markers.values():
        marker.unlink(missing_ok=True)

    (repo / "untracked.py").write_text("hashed by content: the clean filter must not run on it either\n")
    loop = Loop(evaluations, "hostile", compare=compare)
    first = await loop.step()
    os.utime(repo / "src/app.py")  # stat-dirty again: forces a rehash (filters) on the next call
    second = await loop.step()
    assert first.verdict == "yes"
    assert second.verdict == "no"
    assert not [name for name, marker in markers.items() if marker.exists()]
    assert "\x1b[" not in first.state.decode(), "colour config is overridden"
    if compare == "stat":
        assert b"app.py" in first.state


async def test_git_timeout_is_an_error_verdict(
    metrics: Metrics, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_repo(root / "proj")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "git"
    fake.write_text("#!/bin/sh\nexec sleep 30\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    evaluations = Evaluations(Config(workspace_root=str(root), git_timeout_seconds=0.3), Runner(metrics), metrics)
    result = await Loop(evaluations, "proj").step()
    assert (result.verdict, result.details) == ("error", {"error": "git diff timed out"})


async def test_missing_git_is_an_error_verdict(
    evaluations: Evaluations, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_repo(root / "proj")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = await Loop(evaluations, "proj").step()
    assert (result.verdict, result.details) == ("error", {"error": "git not found in PATH"})


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to hand the repository to another user")
async def test_repository_owned_by_another_user(evaluations: Evaluations, root: Path) -> None:
    repo = make_repo(root / "theirs")
    for path in [repo, *repo.rglob("*")]:
        os.lchown(path, 65534, 65534)
    assert (await Loop(evaluations, "theirs").step()).verdict == "yes"


def _arm_lazy_fetch(repo: Path, marker: Path) -> None:
    """Make `repo` a partial clone whose promisor remote is an `ext::` command, with one changed file's index blob
    missing: reading that blob makes git "lazy-fetch" it, which runs the remote's command. The repository also
    re-allows the ext transport (`protocol.ext.allow`), which outranks a command-line `protocol.allow=never`."""
    blob = git(repo, "rev-parse", "HEAD:src/app.py").strip()
    (repo / ".git/objects" / blob[:2] / blob[2:]).unlink()
    git(repo, "config", "core.repositoryformatversion", "1")
    git(repo, "config", "extensions.partialClone", "origin")
    git(repo, "config", "remote.origin.url", f"ext::sh -c touch% {marker}")
    git(repo, "config", "remote.origin.promisor", "true")
    git(repo, "config", "protocol.ext.allow", "always")
    (repo / "src/app.py").write_text("print('changed')\n")


@pytest.mark.parametrize("compare", ["content", "stat"])
async def test_promisor_remote_of_a_hostile_repository_is_never_run(
    evaluations: Evaluations, root: Path, tmp_path: Path, compare: str
) -> None:
    repo = make_repo(root / "partial")
    marker = tmp_path / "lazy-fetch-ran"
    _arm_lazy_fetch(repo, marker)

    # Control: git with the command-line `protocol.allow=never` alone still runs the remote's command.
    argv = ["git", "-c", "protocol.allow=never", "diff", "--stat"]
    await asyncio.to_thread(subprocess.run, argv, cwd=repo, env=GIT_ENV, capture_output=True, check=False)
    assert marker.exists(), "the control did not lazy-fetch; the assertion below could not fail"
    marker.unlink()

    result = await Loop(evaluations, "partial", compare=compare).step()
    assert not marker.exists(), "diff_stall ran the promisor remote's command"
    assert result.verdict == "error", "the blob is missing, so there is no diff to compare"
    assert result.details["error"].startswith("git diff failed: ")


class RecordingRunner(Runner):
    def __init__(self, metrics: Metrics) -> None:
        super().__init__(metrics)
        self.commands: list[Command] = []

    async def run(self, command: Command) -> Completed:
        self.commands.append(command)
        return await super().run(command)


@pytest.mark.parametrize("compare", ["content", "stat"])
async def test_transports_the_repository_re_allows_are_forbidden_again(
    metrics: Metrics, root: Path, compare: str
) -> None:
    repo = make_repo(root / "proj")
    for name in ("ext", "file", "my=odd"):
        git(repo, "config", f"protocol.{name}.allow", "always")
    runner = RecordingRunner(metrics)
    evaluations = Evaluations(Config(workspace_root=str(root)), runner, metrics)
    assert (await Loop(evaluations, "proj", compare=compare).step()).verdict == "yes"
    assert len(runner.commands) >= 2
    for command in runner.commands[1:]:  # every command after the configuration listing
        env = command.env
        overrides = {
            env[f"GIT_CONFIG_KEY_{index}"]: env[f"GIT_CONFIG_VALUE_{index}"]
            for index in range(int(env["GIT_CONFIG_COUNT"]))
        }
        assert {name: overrides.get(f"protocol.{name}.allow") for name in ("ext", "file", "my=odd")} == dict.fromkeys(
            ("ext", "file", "my=odd"), "never"
        ), command.argv
        assert env["GIT_NO_LAZY_FETCH"] == "1"
    env = runner.commands[-1].env
    overrides = {
        env[f"GIT_CONFIG_KEY_{index}"]: env[f"GIT_CONFIG_VALUE_{index}"]
        for index in range(int(env["GIT_CONFIG_COUNT"]))
    }
    assert {name: overrides.get(f"protocol.{name}.allow") for name in ("ext", "file", "my=odd")} == dict.fromkeys(
        ("ext", "file", "my=odd"), "never"
    )
    assert env["GIT_NO_LAZY_FETCH"] == "1"


async def test_scope_too_long_for_an_argument_list_is_an_error_verdict(evaluations: Evaluations, root: Path) -> None:
    """Linux refuses a single argument over 128 KiB (E2BIG); that OSError was an INTERNAL error."""
    make_repo(root / "proj")
    result = await Loop(evaluations, "proj", scope=["x" * 200_000]).step()
    assert result.verdict == "error"
    assert result.details["error"].startswith("git diff failed: ")


def _git_runs(metrics: Metrics) -> float:
    return sum(
        metrics.registry.get_sample_value("verdict_subprocess_runs_total", {"tool": "git", "outcome": outcome}) or 0
        for outcome in ("ok", "nonzero", "signalled", "timeout", "cancelled", "missing")
    )


@pytest.mark.parametrize("target", ["outside the root", "inside the root, outside the repository"])
async def test_a_config_symlinked_out_of_the_repository_stops_git(
    evaluations: Evaluations, metrics: Metrics, root: Path, tmp_path: Path, target: str
) -> None:
    """A symlinked `.git/config` pointing out of the repository (even to a file inside the root): git does not run
    at all, and the verdict says why. (The other files git reads for configuration, `config.worktree` and `info/*`,
    never reach git: its GIT_DIR is a private directory built from what was opened beneath the root.)"""
    repo = make_repo(root / "repo")
    elsewhere = (tmp_path / "outside") if target == "outside the root" else (root / "elsewhere")
    elsewhere.mkdir()
    (elsewhere / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = false\n")
    (repo / ".git" / "config").unlink()
    (repo / ".git" / "config").symlink_to(elsewhere / "config")
    result = await Loop(evaluations, "repo").step()
    assert result.verdict == "error"
    assert "config" in result.details["error"]
    assert _git_runs(metrics) == 0


async def test_a_config_that_includes_other_files_stops_git(
    evaluations: Evaluations, metrics: Metrics, root: Path, tmp_path: Path
) -> None:
    repo = make_repo(root / "repo")
    (tmp_path / "steer").write_text("[core]\n\tfsmonitor = /bin/false\n")
    with (repo / ".git" / "config").open("a") as config:
        config.write(f"[include]\n\tpath = {tmp_path / 'steer'}\n")
    result = await Loop(evaluations, "repo").step()
    assert result.verdict == "error"
    assert "include" in result.details["error"]
    assert _git_runs(metrics) == 1, "only the listing (`git config --no-includes`) ran, never the diff"


async def test_configuration_inside_the_repository_still_runs_git(evaluations: Evaluations, root: Path) -> None:
    repo = make_repo(root / "repo")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("*.log\n")
    assert (await Loop(evaluations, "repo").step()).verdict != "error"


@pytest.mark.parametrize(
    ("workspace", "error"),
    [("w" * 256, InvalidArgument), ("d/" * 2100, InvalidArgument), ("alias", PermissionDenied)],
)
async def test_workspace_paths_the_kernel_refuses_name_the_field(
    evaluations: Evaluations, root: Path, workspace: str, error: type[VerdictError]
) -> None:
    """ENAMETOOLONG and a link (ELOOP, even one staying inside the root) are the caller's: INVALID_ARGUMENT or
    PERMISSION_DENIED naming `workspace`, never INTERNAL."""
    make_repo(root / "proj")
    (root / "alias").symlink_to("proj")
    with pytest.raises(error) as refused:
        await Loop(evaluations, workspace).step()
    assert refused.value.metadata["field"] == "workspace"


async def test_a_config_that_is_a_link_or_includes_a_file_means_git_does_not_run(
    evaluations: Evaluations, root: Path, tmp_path: Path
) -> None:
    """git reads configuration only from a regular file inside the repository: a link there (even to a file inside
    the root), or an include of another file, is an `error` verdict that says so, and git never starts."""
    repo = make_repo(root / "proj")
    config = repo / ".git" / "config"
    (root / "kept-config").write_bytes(config.read_bytes())
    config.unlink()
    config.symlink_to(root / "kept-config")
    result = await Loop(evaluations, "proj").step()
    assert result.verdict == "error"
    assert "config is a symbolic link" in result.details["error"]
    config.unlink()
    (root / "kept-config").rename(config)
    benign = config.read_bytes()
    for include in ("[include]\n\tpath = ../other\n", f'[includeIf "gitdir:{repo}/"]\n\tpath = {tmp_path}/x\n'):
        config.write_bytes(benign + include.encode())
        result = await Loop(evaluations, "proj").step()
        assert result.verdict == "error"
        assert "includes another file" in result.details["error"]
    config.write_bytes(benign)
    assert (await Loop(evaluations, "proj").step()).verdict == "yes"
