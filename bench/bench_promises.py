"""What keeping Evaluate's promises costs, measured against the old behaviour in the same run.

1. diff_stall: one call with `compare: content` (the fingerprint: six git commands) vs `compare: stat` (two), on a
   repository of 2,000 tracked files with 50 edits and 200 untracked files.
2. The ruling cache: the time one replayed ruling takes (key digest, lookup, details) from the memory store and from
   a local redis-server (when one is installed), next to what a judge call costs (seconds).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from prometheus_client import CollectorRegistry

from verdict.config.keys import Config
from verdict.evaluators import EvaluationInput, Evaluations
from verdict.evaluators.model import EvaluationResult
from verdict.judges.ruling_stores import MemoryStore, RedisStore, RulingStore
from verdict.judges.rulings import RulingCache
from verdict.metrics import Metrics
from verdict.runner import Runner

CALLS = 20
LOOKUPS = 500
_GIT_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@example.com",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@example.com",
}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env=_GIT_ENV, check=True, capture_output=True)


def _repository(root: Path) -> None:
    repo = root / "proj"
    for n in range(2000):
        path = repo / f"pkg{n % 40}" / f"module_{n}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE = {n}\n" + "x = 1\n" * 20)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "init")
    for n in range(0, 2000, 40):
        (repo / f"pkg{n % 40}" / f"module_{n}.py").write_text(f"VALUE = {n + 1}\n")
    for n in range(200):
        (repo / f"notes-{n}.md").write_text(f"note {n}\n")


async def _per_call(evaluations: Evaluations, compare: str) -> float:
    config = {"type": "diff_stall", "compare": compare}
    token = b""
    started = time.perf_counter()
    for _ in range(CALLS):
        result = await evaluations.evaluate(EvaluationInput(config, state=token, workspace="proj"))
        assert result.verdict in ("yes", "no"), result.details
        token = result.state
    return (time.perf_counter() - started) / CALLS


async def _diff_stall() -> list[str]:
    with tempfile.TemporaryDirectory(prefix="verdict-bench-") as directory:
        root = Path(directory)
        _repository(root)
        metrics = Metrics(CollectorRegistry())
        evaluations = Evaluations(Config(workspace_root=str(root)), Runner(metrics), metrics)
        await _per_call(evaluations, "content")  # warm the page cache
        stat = await _per_call(evaluations, "stat")
        content = await _per_call(evaluations, "content")
    return [
        f"diff_stall per call, 2,000 tracked files, 50 edited, 200 untracked: content {content * 1000:.0f} ms, "
        f"stat {stat * 1000:.0f} ms, content / stat = {content / stat:.2f}x"
    ]


async def _replay_seconds(store: RulingStore) -> float:
    metrics = Metrics(CollectorRegistry())
    cache = RulingCache(store, metrics, wait_seconds=30)
    material = {"evaluator": "llm_structured", "host": "claude-code claude", "model": "sonnet", "prompt": "p" * 5000}

    async def judge() -> EvaluationResult:
        return EvaluationResult("yes", {"reason": "r" * 200, "evidence": "e" * 200, "confidence": 0.9})

    await cache.rule("llm_structured", material, fresh=False, deadline=None, judge=judge)
    started = time.perf_counter()
    for _ in range(LOOKUPS):
        result = await cache.rule("llm_structured", material, fresh=False, deadline=None, judge=judge)
        assert result.details["cached"] is True
    await cache.aclose()
    return (time.perf_counter() - started) / LOOKUPS


@contextlib.contextmanager
def _redis() -> Iterator[str | None]:
    binary = shutil.which("redis-server")
    if binary is None:
        yield None
        return
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=5)


async def _rulings() -> list[str]:
    memory = await _replay_seconds(MemoryStore(max_entries=100, ttl=3600))
    lines = [f"replayed ruling, memory store: {memory * 1e6:.0f} µs per call"]
    with _redis() as url:
        if url is None:
            lines.append("replayed ruling, redis store: skipped (no redis-server installed)")
        else:
            shared = await _replay_seconds(RedisStore(url, max_entries=100, ttl=3600, timeout=1.0))
            lines.append(
                f"replayed ruling, redis store: {shared * 1e6:.0f} µs per call ({shared / memory:.0f}x memory; "
                "a judge call takes seconds)"
            )
    return lines


def run() -> list[str]:
    """Every measurement of this module, one line each."""
    return [*asyncio.run(_diff_stall()), *asyncio.run(_rulings())]
