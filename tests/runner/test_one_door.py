"""All subprocess spawning goes through one runner module, and the per-tool subprocess metrics
(counts, durations, timeouts) for the tools the server really runs, observed over a real channel."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from tests.support import make_config, serving
from verdict.v1 import verdict_pb2

PACKAGE = Path(__file__).resolve().parents[2] / "service" / "verdict"
RUNNER = PACKAGE / "runner" / "door.py"
POOL_OWNER = PACKAGE / "verify" / "verifier.py"
"""The parse pool (pebble, spawn start method) is the one other place processes start, owned by the verifier."""

_SPAWNING_MODULES = {"subprocess", "pty", "multiprocessing", "pebble", "concurrent.futures.process"}
_SPAWNING_CALLS = {
    "create_subprocess_exec",
    "create_subprocess_shell",
    "fork",
    "forkpty",
    "system",
    "popen",
    "posix_spawn",
    "posix_spawnp",
    "execv",
    "execve",
    "execvp",
    "execvpe",
    "execl",
    "execle",
    "execlp",
    "execlpe",
    "spawnv",
    "spawnve",
    "spawnvp",
    "spawnvpe",
    "spawnl",
    "spawnle",
    "spawnlp",
    "spawnlpe",
    "ProcessPoolExecutor",
}


def _spawning(path: Path) -> list[str]:
    """What in `path` can start a process: imports of process modules, and calls of process-starting functions."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if a.name.split(".")[0] in _SPAWNING_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module in _SPAWNING_MODULES or node.module.split(".")[0] in _SPAWNING_MODULES:
                found.append(f"from {node.module} import ...")
            found += [f"from {node.module} import {a.name}" for a in node.names if a.name in _SPAWNING_CALLS]
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in _SPAWNING_CALLS:
                found.append(f"call {name}()")
    return found


def test_only_the_runner_starts_child_processes() -> None:
    sources = [p for p in PACKAGE.rglob("*.py") if "v1" not in p.relative_to(PACKAGE).parts]
    spawning = {p.relative_to(PACKAGE).as_posix(): hits for p in sources if (hits := _spawning(p))}
    # The scan sees the runner's own spawning, so it can see anyone else's.
    assert any("create_subprocess_exec" in hit for hit in spawning.pop("runner/door.py", []))
    # the door's starter: the same children, started on a thread so the loop keeps running
    assert spawning.pop("runner/spawn.py", []) == ["import subprocess"]
    pool = spawning.pop(POOL_OWNER.relative_to(PACKAGE).as_posix(), [])
    assert pool
    assert all("multiprocessing" in hit or "pebble" in hit for hit in pool), pool
    assert spawning == {}


async def test_bash_runs_are_counted_and_timed_per_tool_through_the_server() -> None:
    async with serving(make_config()) as running:
        text = "```bash\necho ok\n```\n\n```sh\nif true; then\n```\n"
        response = await running.stub.VerifyResponse(verdict_pb2.VerifyResponseRequest(text=text), timeout=30)
        assert [c.verdict for c in response.checks] == [
            verdict_pb2.VERIFY_VERDICT_OK,
            verdict_pb2.VERIFY_VERDICT_MALFORMED,
        ]
        sample = running.registry.get_sample_value
        assert sample("verdict_subprocess_runs_total", {"tool": "bash", "outcome": "ok"}) == 1
        assert sample("verdict_subprocess_runs_total", {"tool": "bash", "outcome": "nonzero"}) == 1
        assert sample("verdict_subprocess_duration_seconds_count", {"tool": "bash"}) == 2
        assert sample("verdict_subprocess_timeouts_total", {"tool": "bash"}) in (None, 0)
        assert sample("verdict_subprocesses_running", {"tool": "bash"}) == 0


async def test_a_bash_that_hangs_is_killed_at_the_limit_counted_and_unverifiable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bash stands in for a checker that never answers: the block is unverifiable (never malformed), the timeout is
    counted for tool="bash", and no process is left behind."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "bash"
    fake.write_text("#!/bin/sh\nexec sleep 60\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}")
    async with serving(make_config(shell_check_timeout_seconds=0.5)) as running:
        response = await running.stub.VerifyResponse(
            verdict_pb2.VerifyResponseRequest(text="```bash\necho hi\n```"), timeout=30
        )
        assert response.verdict == verdict_pb2.VERIFY_VERDICT_UNVERIFIABLE
        assert response.failed is False
        assert "time" in response.checks[0].detail.lower(), response.checks[0].detail
        sample = running.registry.get_sample_value
        assert sample("verdict_subprocess_timeouts_total", {"tool": "bash"}) == 1
        assert sample("verdict_subprocess_runs_total", {"tool": "bash", "outcome": "timeout"}) == 1
        assert running.app.runner.live_process_groups == frozenset()
