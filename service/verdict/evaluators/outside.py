"""The outside work two evaluators need, and what the dispatcher hands every run to reach it.

output_contains runs a time-bounded regular-expression search off the event loop; diff_stall runs git through the
runner (the fingerprint's plumbing, or `git diff --stat`). Everything else an evaluator decides stays a pure
function of its `Step`.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass

from verdict import patterns
from verdict.config.keys import Config
from verdict.errors import DeadlineTooShort
from verdict.evaluators import deterministic, stall
from verdict.evaluators.diffstat import Checkout, GitFailed, diff_stat
from verdict.evaluators.fingerprint import fingerprint
from verdict.evaluators.model import EvaluationResult, Judgement, ModelGrader, Step
from verdict.runner import Runner
from verdict.workspace import UncheckedConfig, find_repository, open_beneath, open_root

__all__ = ["Outside", "Workspace", "diff_stall", "output_contains"]


@dataclass(frozen=True)
class Workspace:
    """The request's workspace: the server's workspace_root and a path under it (from `workspace.inside`, so already
    free of `..` past the root). Only a name: it is opened, beneath the root, when a run uses it."""

    root: str
    relative: str


@dataclass(frozen=True)
class Outside:
    """What a run may reach besides its step: the server's limits, the runner, the caller's deadline.

    `token` is the state token exactly as the caller sent it, for the error paths that hand it back unchanged.
    `deadline` is the caller's absolute `time.monotonic()` deadline, or None.
    """

    config: Config
    runner: Runner
    deadline: float | None = None
    token: bytes = b""
    workspace: Workspace | None = None
    grader: ModelGrader | None = None
    """The model grader (see `ModelGrader`) for the model-graded checks of promptfoo and openai_grader; None when the
    server has no judge."""

    def bound(self, limit: float) -> float:
        """`limit`, or less when the caller's deadline is nearer; no time left is DEADLINE_EXCEEDED."""
        if self.deadline is None:
            return limit
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise DeadlineTooShort("the call's deadline passed before the evaluation could start")
        return min(limit, remaining)


async def output_contains(step: Step, outside: Outside) -> Judgement | EvaluationResult:
    """The search under regex_timeout_seconds, then the pure verdict; a refused or endless pattern is `error`."""
    bound = outside.bound(outside.config.regex_timeout_seconds)
    pattern: str = step.settings["pattern"]
    try:
        matched = await patterns.search(pattern, step.output, timeout=bound)
    except patterns.PatternTooLarge as refused:
        details = {"error": str(refused), "pattern": pattern, "negate": step.settings["negate"]}
        return EvaluationResult("error", details)
    except patterns.PatternTimeout:
        details = {
            "error": f"pattern did not finish within {bound:g}s (regex_timeout_seconds); simplify it",
            "pattern": pattern,
            "negate": step.settings["negate"],
            "timed_out": True,
        }
        return EvaluationResult("error", details)
    # Each error pattern is a pass over the output: off the event loop too.
    return await asyncio.to_thread(deterministic.output_contains, step, matched=matched)


async def diff_stall(step: Step, outside: Outside) -> Judgement | EvaluationResult:
    """The workspace's fingerprint (`compare: content`) or `git diff --stat` (`compare: stat`), then the pure stall
    rule; git trouble, or a repository past the fingerprint's bounds, is `error` with the token unchanged.

    The workspace and the repository are opened beneath the root and held as descriptors for as long as git runs, so
    swapping a directory for a link mid-call moves nothing git sees (`verdict.workspace`)."""
    workspace = outside.workspace
    if workspace is None:  # the record says needs_workspace, so the dispatcher always resolves one
        raise AssertionError("diff_stall runs without a workspace")
    root_fd = open_root(workspace.root)
    try:
        try:
            cwd_fd = open_beneath(root_fd, workspace.relative, os.O_RDONLY | os.O_DIRECTORY, "workspace")
        except OSError:
            error = f"workspace {workspace.relative!r} is not a directory"
            return EvaluationResult("error", {"error": error}, outside.token)
        try:
            return await _diff_stall(step, outside, workspace, root_fd, cwd_fd)
        finally:
            os.close(cwd_fd)
    finally:
        os.close(root_fd)


async def _diff_stall(
    step: Step, outside: Outside, workspace: Workspace, root_fd: int, cwd_fd: int
) -> Judgement | EvaluationResult:
    try:
        repository = find_repository(root_fd, workspace.root, workspace.relative)
    except UncheckedConfig as refused:
        return EvaluationResult("error", {"error": str(refused)}, outside.token)
    if repository is None:
        error = f"git diff failed: {workspace.relative!r} is not in a git repository under the workspace root"
        return EvaluationResult("error", {"error": error}, outside.token)
    with repository:
        bound = outside.bound(outside.config.git_timeout_seconds)
        checkout = Checkout(outside.runner, repository, workspace.root, cwd_fd, step.settings["scope"], bound)
        try:
            if step.settings["compare"] == "stat":
                return stall.diff_stall(step, await diff_stat(checkout))
            found = await fingerprint(
                checkout,
                max_bytes=outside.config.diff_stall_max_bytes,
                max_files=outside.config.diff_stall_max_files,
            )
        except GitFailed as failure:
            return EvaluationResult("error", {"error": str(failure)}, outside.token)
    return stall.diff_stall_content(step, found.parts())
