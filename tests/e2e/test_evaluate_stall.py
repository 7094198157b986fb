"""The stall evaluators across sequences of calls over a real channel, carrying the token, in both
config forms: a replayed call, and two independent loops interleaved. tests/e2e/test_evaluate.py drives
action_stall; score_stall, open_question_stall and diff_stall (real git) are driven the same way here. Also: git runs
are counted per tool, and the server's own git environment (global/system config, an index override) never reaches
diff_stall's git."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from google.protobuf import json_format

from tests.evaluators.test_diffstat import GIT_ENV, git, make_repo
from tests.support import Running, make_config, serving
from verdict.v1 import verdict_pb2

V = verdict_pb2
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Running]:
    root = tmp_path_factory.mktemp("audit-workspaces")
    async with serving(make_config(workspace_root=str(root))) as running:
        yield running


ConfigFor = Callable[[str, int], V.EvaluatorConfig]


def _typed(kind: str, max_stall: int) -> V.EvaluatorConfig:
    members = {
        "score_stall": lambda: V.EvaluatorConfig(score_stall=V.ScoreStallConfig(max_stall=max_stall)),
        "open_question_stall": lambda: V.EvaluatorConfig(
            open_question_stall=V.OpenQuestionStallConfig(max_stall=max_stall)
        ),
        "diff_stall": lambda: V.EvaluatorConfig(diff_stall=V.DiffStallConfig(max_stall=max_stall)),
    }
    return members[kind]()


def _yaml(kind: str, max_stall: int) -> V.EvaluatorConfig:
    return V.EvaluatorConfig(yaml=f"evaluate:\n  type: {kind}\n  max_stall: {max_stall}\n")


FORMS = [pytest.param(_typed, id="typed"), pytest.param(_yaml, id="yaml")]


class Loop:
    """One client loop: sends back the token it last received."""

    def __init__(self, server: Running, config: V.EvaluatorConfig, workspace: str = "") -> None:
        self.server = server
        self.config = config
        self.workspace = workspace
        self.token = b""
        self.sent: list[bytes] = []

    async def call(self, output: str, state: bytes) -> V.EvaluateResponse:
        request = V.EvaluateRequest(config=self.config, output=output, state=state, workspace=self.workspace)
        return await self.server.stub.Evaluate(request, timeout=30)

    async def step(self, output: str = "") -> V.EvaluateResponse:
        self.sent.append(self.token)
        response = await self.call(output, self.token)
        self.token = response.state
        return response


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(
    ("kind", "scores", "verdicts", "progress"),
    [
        ("score_stall", ["5", "6", "6.4", "7.5", "7.5"], ["yes", "yes", "no", "yes", "no"], "100"),
        ("open_question_stall", ["10", "8", "7.8", "3", "3"], ["yes", "yes", "no", "yes", "no"], "0"),
    ],
)
async def test_score_sequences_with_a_replayed_call(
    server: Running, form: ConfigFor, kind: str, scores: list[str], verdicts: list[str], progress: str
) -> None:
    loop = Loop(server, form(kind, 1))
    responses = [await loop.step(score) for score in scores]
    assert [r.verdict for r in responses] == verdicts
    assert all(r.state for r in responses)
    # Replaying the third call (its score with the token it was sent) is the third response again, byte for byte,
    # and leaves the loop free to carry on from where it was.
    replayed = await loop.call(scores[2], loop.sent[2])
    assert replayed == responses[2]
    assert json_format.MessageToDict(replayed.details)["stall_count"] == 1
    after = await loop.step(progress)
    assert after.verdict == "yes"


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(
    ("kind", "stuck", "moving"),
    [("score_stall", "5", ["1", "2", "3", "4"]), ("open_question_stall", "10", ["9", "7", "5", "3"])],
)
async def test_two_score_loops_interleaved_keep_their_own_history(
    server: Running, form: ConfigFor, kind: str, stuck: str, moving: list[str]
) -> None:
    a, b = Loop(server, form(kind, 2)), Loop(server, form(kind, 2))
    outcomes = [((await a.step(stuck)).verdict, (await b.step(score)).verdict) for score in moving]
    assert outcomes == [("yes", "yes"), ("yes", "yes"), ("no", "yes"), ("no", "yes")]


def _root(server: Running) -> Path:
    return Path(server.app.config.workspace_root)


@pytest.mark.parametrize("form", FORMS)
async def test_diff_stall_replay_and_two_loops_on_one_repository(server: Running, form: ConfigFor) -> None:
    """Loop A snapshots the repository; it changes; loop B starts; A sees the change, then both stall. Had the two
    loops shared state (the reference kept one file per scope), A's second call would see B's snapshot and stall."""
    name = f"shared-{form.__name__.strip('_')}"
    repo = make_repo(_root(server) / name)
    a, b = Loop(server, form("diff_stall", 1), name), Loop(server, form("diff_stall", 1), name)
    a1 = await a.step()
    (repo / "src/app.py").write_text("print('changed')\n")
    b1 = await b.step()
    a2 = await a.step()
    b2 = await b.step()
    a3 = await a.step()
    assert [a1.verdict, b1.verdict, a2.verdict, b2.verdict, a3.verdict] == ["yes", "yes", "yes", "no", "no"]
    assert json_format.MessageToDict(a2.details)["diff_changed"] is True
    replayed = await a.call("", a.sent[1])
    assert replayed == a2
    assert (await a.step()).verdict == "no"


async def test_git_runs_are_counted_and_timed_per_tool(server: Running) -> None:
    make_repo(_root(server) / "counted")
    sample = server.registry.get_sample_value
    runs_before = sample("verdict_subprocess_runs_total", {"tool": "git", "outcome": "ok"}) or 0
    durations_before = sample("verdict_subprocess_duration_seconds_count", {"tool": "git"}) or 0
    response = await Loop(server, _typed("diff_stall", 1), "counted").step()
    assert response.verdict == "yes"
    assert (sample("verdict_subprocess_runs_total", {"tool": "git", "outcome": "ok"}) or 0) > runs_before
    assert (sample("verdict_subprocess_duration_seconds_count", {"tool": "git"}) or 0) > durations_before
    assert sample("verdict_subprocesses_running", {"tool": "git"}) == 0


def _hostile_git_environment(tmp_path: Path) -> dict[str, str]:
    """Server environment variables that, if git saw them, would change `git diff --stat`'s text: global, XDG and
    system config files that unquote paths and squeeze the graph, and an index override."""
    config = "[core]\n\tquotePath = false\n[diff]\n\tstatGraphWidth = 1\n"
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".gitconfig").write_text(config)
    (home / ".config" / "git" / "config").write_text(config)
    system = tmp_path / "system-gitconfig"
    system.write_text(config)
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
        "GIT_CONFIG_SYSTEM": str(system),
        "GIT_INDEX_FILE": str(tmp_path / "no-such-index"),
    }


def _plain_stat(repo: Path, extra_env: dict[str, str]) -> str:
    env = {**GIT_ENV, **extra_env}
    if "GIT_CONFIG_SYSTEM" in extra_env:
        env.pop("GIT_CONFIG_NOSYSTEM", None)
    done = subprocess.run(
        ["git", "diff", "--stat", "--no-color"], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.mark.parametrize("compare", ["content", "stat"])
async def test_the_servers_own_git_environment_does_not_reach_diff_stall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compare: str
) -> None:
    root = tmp_path / "root"
    repo = make_repo(root / "proj", {"\u00e9.txt": "x\n", "b.txt": "a\n"})
    (repo / "\u00e9.txt").write_text("y\n" * 50)
    (repo / "b.txt").write_text("b\n")
    hostile = _hostile_git_environment(tmp_path)
    # Control: plain git under that environment prints a different stat, so the comparison below can fail.
    assert _plain_stat(repo, hostile) != _plain_stat(repo, {})
    assert '"\\303\\251.txt"' in _plain_stat(repo, {})

    config = make_config(workspace_root=str(root))
    typed = V.EvaluatorConfig(diff_stall=V.DiffStallConfig(max_stall=1, compare=compare))
    request = V.EvaluateRequest(config=typed, workspace="proj")
    async with serving(config) as running:
        clean = await running.stub.Evaluate(request, timeout=30)
    for key, value in hostile.items():
        monkeypatch.setenv(key, value)
    assert os.environ["GIT_INDEX_FILE"] == hostile["GIT_INDEX_FILE"]
    async with serving(config) as running:
        exposed = await running.stub.Evaluate(request, timeout=30)
    assert clean.verdict == exposed.verdict == "yes"
    assert exposed.state == clean.state, "the stat (and so the token) must not depend on the server's environment"
    payload = json.loads(clean.state.decode().removeprefix("v1:"))["s"]
    if compare == "content":
        assert sorted(payload["p"]) == ["head", "index", "untracked", "worktree"]
        git(repo, "status", "--short")
        return
    stat = json.loads(clean.state.decode().removeprefix("v1:"))["s"]["stat"]
    assert '"\\303\\251.txt"' in stat
    assert "2 files changed" in stat
    git(repo, "status", "--short")  # the repository is intact and still readable
