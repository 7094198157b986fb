"""git for diff_stall (`git diff --stat`, and the plumbing of `fingerprint`), run through the runner and hardened
against a hostile repository.

The workspace is whatever the loop's agent left there, so its repository may be configured to run commands: a
`core.fsmonitor` hook runs on every index refresh, `filter.<driver>.clean` runs whenever a changed file is hashed,
`diff.external`, textconv and external diff drivers run when diffs are shown, a pager when output is a terminal, a
promisor remote when an object is missing (a partial clone "lazy-fetches" it, and a remote such as `ext::sh -c ...`
is a command). Every one of those is switched off here:

- configuration: no system or global files (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null, HOME and
  XDG_CONFIG_HOME an empty temporary directory); `-c` overrides, which outrank the repository's own file, for
  core.fsmonitor, core.hooksPath, core.pager, core.askPass, core.attributesFile, core.untrackedCache, diff.external,
  credential.helper, protocol.allow=never (no fetches, so no transport helpers); and, from a listing of the
  repository's configuration made first with `git config` (which runs nothing), every filter driver it names gets
  empty clean, smudge and process commands and required=false, and every transport it re-allows with
  `protocol.<name>.allow` (which outranks `protocol.allow`) is set back to never;
- no lazy fetching at all (GIT_NO_LAZY_FETCH=1): a missing object is an error, never a fetch from a promisor remote;
- the diff: --no-ext-diff, --no-textconv, --no-color, --ignore-submodules=dirty (a submodule's work tree would be a
  second repository with its own configuration), GIT_OPTIONAL_LOCKS=0 (no opportunistic index writes, so no
  post-index-change hook), no pager;
- where: nothing git is told is a path the agent can swap. `workspace.find_repository` opened the metadata and the
  work tree beneath the root without following links and holds their descriptors; the runner passes them to git
  (`pass_fds`), which reaches them as `/proc/self/fd/N`. GIT_DIR is a private directory the server makes for the
  call: a copy of HEAD, a copy of the configuration read through its descriptor, and links to `/proc/self/fd/N` for
  objects, refs, the index and the rest. So git reads exactly the configuration that was listed and neutralised
  (a rewrite or a link swapped in mid-call changes nothing), never config.worktree or an include (a configuration
  with `include.path` or `includeIf` is refused: git does not run on configuration the server cannot read whole),
  and runs with its working directory set through the held descriptor; GIT_CEILING_DIRECTORIES stops any walk;
- how long and how much: the runner's time limit (git_timeout_seconds, or less when the caller's deadline is nearer)
  and output cap, and its process-group kill.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from verdict.runner import Command, CommandNotFound, Completed, Runner, minimal_env
from verdict.workspace import Repository

__all__ = ["MAX_DIFF_BYTES", "Checkout", "GitFailed", "HardenedGit", "diff_stat", "hardened_git"]

MAX_DIFF_BYTES = 4 * 1024 * 1024
"""A stat longer than this cannot be compared reliably, so it is an error rather than a possibly false stall."""
_MAX_CONFIG_BYTES = 256 * 1024
_MAX_NEUTRALISED = 256
_FILTER_OVERRIDES = (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false"))


class GitFailed(Exception):
    """git could not give a diff (missing, timed out, failed, or output too large); the message is the detail."""


def _hardening(work_tree: str) -> list[str]:
    return [
        "--no-pager",
        "-c",
        "core.fsmonitor=false",
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        "core.pager=cat",
        "-c",
        "core.askPass=",
        "-c",
        "core.attributesFile=/dev/null",
        "-c",
        "core.untrackedCache=false",
        "-c",
        "diff.external=",
        "-c",
        "credential.helper=",
        "-c",
        "protocol.allow=never",
        "-c",
        "core.bare=false",
        "-c",
        f"safe.directory={work_tree}",
    ]


@dataclass(frozen=True)
class _Site:
    """Where git runs: its environment, its working directory (a held descriptor's /proc path), the descriptors."""

    env: dict[str, str]
    cwd: str
    pass_fds: tuple[int, ...]


def _fd_path(descriptor: int) -> str:
    return f"/proc/self/fd/{descriptor}"


def _shadow_git_dir(repository: Repository, home: str) -> str:
    """The private GIT_DIR: copies of HEAD and the configuration, links to the held descriptors for the rest.

    git reads its repository configuration from `$GIT_DIR/config` (a linked work tree's from the common directory),
    so a copy here is what makes the listed configuration the configuration used."""
    shadow = os.path.join(home, "git")
    os.mkdir(shadow, 0o700)
    for name, data in (("HEAD", repository.head), ("config", repository.config)):
        with open(os.path.join(shadow, name), "wb") as handle:
            handle.write(data)
    for name, descriptor in repository.held.items():
        os.symlink(_fd_path(descriptor), os.path.join(shadow, name))
    return shadow


def _site(repository: Repository, root: str, home: str, cwd_fd: int) -> _Site:
    env = minimal_env(
        home=home,
        XDG_CONFIG_HOME=home,
        GIT_DIR=_shadow_git_dir(repository, home),
        GIT_WORK_TREE=_fd_path(repository.work_tree),
        GIT_CEILING_DIRECTORIES=os.path.dirname(os.path.realpath(root)),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_ATTR_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_NO_LAZY_FETCH="1",
        GIT_PAGER="cat",
        PAGER="cat",
    )
    return _Site(env, _fd_path(cwd_fd), (*repository.descriptors(), cwd_fd))


class HardenedGit:
    """git in one repository under the hardening above, sharing one time budget across its invocations.

    Made by `hardened_git`, which lists the repository's configuration first (filter drivers and transports to
    neutralise); every `run` after that gets what is left of the budget, so several plumbing commands together take no
    longer than one `git_timeout_seconds`.
    """

    def __init__(self, runner: Runner, argv: list[str], site: _Site, deadline: float) -> None:
        self._runner = runner
        self._argv = argv
        self._site = site
        self._deadline = deadline

    async def run(self, args: Sequence[str], *, cap: int) -> Completed:
        """`git <hardening> <args>`; raises GitFailed when the budget is spent, git is missing or it timed out."""
        what = f"git {args[0]}"
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise GitFailed(f"{what} timed out")
        return await _run(self._runner, [*self._argv, *args], self._site, remaining, cap, what)


@dataclass(frozen=True)
class Checkout:
    """What one diff_stall look at a repository runs in: the repository found under the workspace `root`, the held
    working directory `cwd_fd` inside it, the pathspecs of `scope` (relative to it) and the seconds every git child
    gets in all. One value, so the stat and the fingerprint take the same inputs the same way."""

    runner: Runner
    repository: Repository
    root: str
    cwd_fd: int
    scope: Sequence[str]
    timeout: float


@contextlib.asynccontextmanager
async def hardened_git(checkout: Checkout) -> AsyncIterator[HardenedGit]:
    """A HardenedGit for the checkout's repository, run in its held directory, for at most its timeout in all."""
    with tempfile.TemporaryDirectory(prefix="verdict-git-home-") as home:
        site = _site(checkout.repository, checkout.root, home, checkout.cwd_fd)
        hardening = _hardening(os.readlink(_fd_path(checkout.repository.work_tree)))
        started = time.monotonic()
        drivers, transports = await _configured(checkout.runner, hardening, site, checkout.timeout)
        site.env.update(_neutralise(drivers, transports))
        yield HardenedGit(checkout.runner, ["git", *hardening], site, started + checkout.timeout)


async def diff_stat(checkout: Checkout) -> str:
    """The output of `git diff --stat [-- scope]` run in the checkout's held directory. Raises GitFailed with
    little-loops' messages."""
    async with hardened_git(checkout) as git:
        argv = ["diff", "--stat", "--no-color", "--no-ext-diff", "--no-textconv", "--ignore-submodules=dirty"]
        if checkout.scope:
            argv += ["--", *checkout.scope]
        completed = await git.run(argv, cap=MAX_DIFF_BYTES)
        if completed.returncode != 0:
            raise GitFailed(f"git diff failed: {completed.stderr.decode('utf-8', 'replace')[:200]}")
        if completed.stdout_truncated:
            raise GitFailed(f"git diff --stat printed more than {MAX_DIFF_BYTES} bytes; it cannot be compared")
        return completed.stdout.decode("utf-8", "replace")


async def _configured(
    runner: Runner,
    hardening: list[str],
    site: _Site,
    timeout: float,  # noqa: ASYNC109
) -> tuple[list[str], list[str]]:
    """The filter drivers (a clean filter runs when a changed file is hashed) and the transports with their own
    `protocol.<name>.allow` (a lazy fetch through `ext::` runs a command) that the repository's configuration names.

    An `include.path` or `includeIf.<condition>.path` refuses the repository: the included file is read by git when
    it runs, after this listing, from wherever it names (an absolute path may lie anywhere on the host)."""
    argv = ["git", *hardening, "config", "--no-includes", "--null", "--name-only", "--get-regexp"]
    argv.append(r"^(filter|protocol|include|includeif)\.")
    completed = await _run(runner, argv, site, timeout, _MAX_CONFIG_BYTES)
    if completed.returncode not in (0, 1) or completed.stdout_truncated:
        detail = completed.stderr.decode("utf-8", "replace")[:200] or "configuration listing too large"
        raise GitFailed(f"git diff failed: cannot read the repository configuration: {detail}")
    drivers: set[str] = set()
    transports: set[str] = set()
    for name in completed.stdout.decode("utf-8", "replace").split("\0"):
        section, _, rest = name.partition(".")
        subsection, _, key = rest.rpartition(".")
        if section in ("include", "includeif") and key == "path":
            raise GitFailed(
                "git not run: the repository's configuration includes another file (include.path or includeIf); "
                "git reads configuration only from the repository's own config file"
            )
        if section == "filter" and subsection and key:
            drivers.add(subsection)
        elif section == "protocol" and subsection and key == "allow":
            transports.add(subsection)
    if len(drivers) + len(transports) > _MAX_NEUTRALISED:
        raise GitFailed(
            f"git diff refused: the repository configures more than {_MAX_NEUTRALISED} filter drivers and transports"
        )
    return sorted(drivers), sorted(transports)


def _neutralise(drivers: list[str], transports: list[str]) -> dict[str, str]:
    """Empty every filter driver's commands and forbid every re-allowed transport through GIT_CONFIG_KEY_n/VALUE_n,
    which (unlike `-c name=value`) keep a name containing `=` intact; these outrank the repository's file just as
    `-c` does."""
    entries = [(f"filter.{driver}.{key}", value) for driver in drivers for key, value in _FILTER_OVERRIDES]
    entries += [(f"protocol.{transport}.allow", "never") for transport in transports]
    env = {"GIT_CONFIG_COUNT": str(len(entries))}
    for index, (key, value) in enumerate(entries):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    return env


async def _run(
    runner: Runner,
    argv: list[str],
    site: _Site,
    timeout: float,  # noqa: ASYNC109
    cap: int,
    what: str = "git diff",
) -> Completed:
    command = Command(
        tool="git",
        argv=tuple(argv),
        timeout=timeout,
        env=site.env,
        cwd=site.cwd,
        pass_fds=site.pass_fds,
        max_output_bytes=cap,
    )
    try:
        completed = await runner.run(command)
    except CommandNotFound:
        raise GitFailed("git not found in PATH") from None
    except OSError as exc:  # E2BIG: a scope longer than the kernel takes as arguments
        raise GitFailed(f"{what} failed: {exc.strerror or exc}") from None
    if completed.timed_out:
        raise GitFailed(f"{what} timed out")
    return completed
