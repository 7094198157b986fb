"""Soak: a paced, bounded load of mixed calls against a real server on loopback, sampling its RSS, descriptors and
descendants, for as long as asked (`make soak`, 10 minutes by default).

The load mixes every kind of work the server does: structural checks (Python, JSON, YAML, shell through `bash -n`),
pure evaluators with state tokens, bad requests, and judge calls through the fake judge CLI (tests/judges/
fake_judge.py, installed as `claude`) that answer, crash, hang with a worker that ignores SIGTERM, flood stdout,
leave a `setsid` grandchild holding stdout, or daemonise. The server must answer every call with a verdict or a
caller's-fault status (never INTERNAL or UNKNOWN), and leave no process carrying its call marker behind, during the
run or after SIGTERM. The summary (JSON, printed and written to --out) is what docs/reliability.md quotes.

    .venv/bin/python scripts/soak.py --seconds 600 --out soak.json
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import random
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "service")]

from tests.support import read_ready  # noqa: E402
from verdict.runner import marked_processes  # noqa: E402
from verdict.v1 import verdict_pb2, verdict_pb2_grpc  # noqa: E402

FAULTS: dict[str, dict[str, Any]] = {
    "FAULT-HANG": {"hang": True, "orphan": True},
    "FAULT-DETACH": {"detach": True},
    "FAULT-DAEMON": {"daemon": True},
    "FAULT-FLOOD": {"flood": True},
    "FAULT-CRASH": {"signal": "SIGSEGV"},
}
"""Judge fault modes, chosen per call by a word in the prompt (the fake judge's `match` rules)."""
SERVER_FAULTS = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}


def install_fake_judge(directory: Path) -> Path:
    """The fake judge CLI as `claude` in `directory/bin`, answering yes unless the prompt names a fault."""
    bin_dir = directory / "bin"
    bin_dir.mkdir()
    source = (ROOT / "tests" / "judges" / "fake_judge.py").read_text().split("\n", 1)[1]
    target = bin_dir / "claude"
    target.write_text(f"#!{sys.executable}\n{source}")
    target.chmod(target.stat().st_mode | stat.S_IXUSR)
    envelope = json.loads((ROOT / "tests/judges/envelopes/claude-code/success-structured.json").read_text())
    answer = {"verdict": "yes", "verdict_a": "yes", "verdict_b": "no", "confidence": 0.9, "reason": "fine"}
    stdout = json.dumps({**envelope, "structured_output": answer})
    rules = [{"contains": word, "stdout": stdout, **step} for word, step in FAULTS.items()]
    (bin_dir / "scenario.json").write_text(json.dumps({"steps": [{"stdout": stdout, "match": rules}]}))
    return bin_dir


def requests(rng: random.Random) -> tuple[str, Any]:
    """One call of the mix: (method, request)."""
    kind = rng.random()
    if kind < 0.35:
        blocks = [
            "```python\ndef f(x):\n    return x +\n```",
            "```python\nprint('ok')\n```",
            '```json\n{"a": [1, 2, 3]}\n```',
            "```yaml\na: [1, 2\n```",
            "```bash\nfor i in 1 2; do echo $i; done\n```",
            "```bash\nif true; then\n```",
            "plain prose, nothing to check",
        ]
        text = "\n\n".join(rng.sample(blocks, rng.randint(1, 3)))
        return "VerifyResponse", verdict_pb2.VerifyResponseRequest(text=text, finish_reason="stop")
    if kind < 0.75:
        yaml = rng.choice(
            [
                "type: exit_code",
                "type: output_numeric\noperator: ge\ntarget: 3",
                "type: output_contains\npattern: 'pass(ed)?'",
                "type: output_json\npath: .a\noperator: eq\ntarget: 1",
                "type: convergence\ntarget: 0\ntolerance: 0.5",
                "type: classify\nverdicts: [PASS, FAIL]",
                "type: action_stall\nmax_repeat: 2",
                "type: score_stall\nmax_stall: 2",
                "type: nonsense",
                "type: output_numeric\noperator: bogus",
            ]
        )
        output = rng.choice(["5", '{"a": 1}', "tests passed", "PASS", "FAIL", "2.5", "", "x" * 2000])
        return "Evaluate", verdict_pb2.EvaluateRequest(
            config=verdict_pb2.EvaluatorConfig(yaml=yaml), output=output, exit_code=rng.choice([0, 1])
        )
    fault = rng.choice([None, None, None, *FAULTS])
    prompt = f"did the step pass? {fault or ''}"
    which = rng.random()
    if which < 0.6:
        config = verdict_pb2.EvaluatorConfig(llm_structured=verdict_pb2.LlmStructuredConfig(prompt=prompt))
    elif which < 0.8:
        config = verdict_pb2.EvaluatorConfig(
            comparator=verdict_pb2.ComparatorConfig(baseline="old", prompt=prompt, min_pairs=1)
        )
    else:
        pair = verdict_pb2.ContractPair(producer="a", consumer="b", producer_content=prompt, consumer_content="x")
        config = verdict_pb2.EvaluatorConfig(contract=verdict_pb2.ContractConfig(pairs=[pair]))
    return "Evaluate", verdict_pb2.EvaluateRequest(config=config, output="all tests passed")


def marked(prefix: str) -> list[int]:
    """Live processes carrying a runner marker that starts with `prefix` (the server's pid and a dot)."""
    return marked_processes(prefix, prefix=True)


def _is_fake_judge(pid: int, bin_dir: Path) -> bool:
    """Whether `pid` is still one of this run's judge processes (a pid alone may have been reused by then)."""
    try:
        return str(bin_dir).encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def sample(pid: int) -> dict[str, Any]:
    status = Path(f"/proc/{pid}/status").read_text()
    rss_kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
    children: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            children += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
        except OSError:
            continue
    zombies = 0
    for child in children:
        try:
            if Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                zombies += 1
        except OSError:
            continue
    return {
        "rss_mb": round(rss_kb / 1024, 2),
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
        "children": len(children),
        "zombies": zombies,
    }


def slope_per_minute(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, value), per minute."""
    if len(points) < 2:
        return 0.0
    n = len(points)
    mean_t = sum(t for t, _ in points) / n
    mean_v = sum(v for _, v in points) / n
    var = sum((t - mean_t) ** 2 for t, _ in points)
    if var == 0:
        return 0.0
    return 60 * sum((t - mean_t) * (v - mean_v) for t, v in points) / var


def start_server(scratch: Path) -> tuple[subprocess.Popen[str], int, Path]:
    """`verdict serve` with the fake judge as its judge host; returns the process, its gRPC port and the bin dir."""
    bin_dir = install_fake_judge(scratch)
    workspace = scratch / "workspace"
    workspace.mkdir()
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(scratch), "TMPDIR": str(scratch)}
    argv = [sys.executable, "-m", "verdict", "serve", "--grpc-address", "127.0.0.1:0", "--metrics-address", ""]
    argv += ["--judge-host", "claude-code", "--judge-timeout-seconds", "2", "--workspace-root", str(workspace)]
    argv += ["--log-format", "json"]
    server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    ready, _lines = read_ready(server, 30)
    return server, int(ready["grpc_port"]), bin_dir


async def soak(
    server: subprocess.Popen[str], port: int, bin_dir: Path, seconds: float, rate: float, workers: int, seed: int
) -> dict[str, Any]:
    prefix = f"{server.pid}."
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    stub = verdict_pb2_grpc.VerdictServiceStub(channel)
    codes: collections.Counter[str] = collections.Counter()
    per_method: collections.Counter[str] = collections.Counter()
    faults: list[str] = []
    samples: list[dict[str, Any]] = []
    leaks_during: list[int] = []
    started = time.monotonic()
    stop_at = started + seconds
    interval = workers / rate

    async def worker(index: int) -> None:
        rng = random.Random(seed * 1000 + index)  # noqa: S311 - a reproducible load, not a secret
        while time.monotonic() < stop_at:
            began = time.monotonic()
            method, request = requests(rng)
            per_method[method] += 1
            try:
                await getattr(stub, method)(request, timeout=30)
                codes["OK"] += 1
            except grpc.aio.AioRpcError as error:
                codes[error.code().name] += 1
                if error.code() in SERVER_FAULTS:
                    faults.append(f"{method}: {error.code().name} {error.details()}")
            await asyncio.sleep(max(0.0, interval - (time.monotonic() - began)))

    async def sampler() -> None:
        while time.monotonic() < stop_at:
            point = sample(server.pid)
            point["t"] = round(time.monotonic() - started, 1)
            samples.append(point)
            await asyncio.sleep(5)

    await asyncio.gather(sampler(), *(worker(i) for i in range(workers)))
    # Between calls nothing of any call may still run.
    await asyncio.sleep(3)
    leaks_during = marked(prefix)
    final = sample(server.pid)
    await channel.close()
    server.send_signal(signal.SIGTERM)
    exit_code = await asyncio.to_thread(server.wait, 60)
    await asyncio.sleep(1)
    leaks_after = marked(prefix)
    escaped_dir = bin_dir / "escaped"
    escaped = [int(p.name) for p in escaped_dir.iterdir()] if escaped_dir.is_dir() else []
    escaped_alive = [pid for pid in escaped if _is_fake_judge(pid, bin_dir)]
    warm = [s for s in samples if s["t"] >= 60] or samples
    return {
        "seconds": round(time.monotonic() - started, 1),
        "calls": sum(codes.values()),
        "calls_per_method": dict(per_method),
        "codes": dict(codes),
        "server_faults": faults[:20],
        "server_fault_count": len(faults),
        "escaped_grandchildren_started": len(escaped),
        "escaped_grandchildren_alive_after": len(escaped_alive),
        "marked_processes_between_calls": len(leaks_during),
        "marked_processes_after_sigterm": len(leaks_after),
        "server_exit_code": exit_code,
        "rss_mb": {"first": samples[0]["rss_mb"], "last": final["rss_mb"], "max": max(s["rss_mb"] for s in samples)},
        "rss_mb_per_minute_after_warmup": round(slope_per_minute([(s["t"], s["rss_mb"]) for s in warm]), 3),
        "fds": {"first": samples[0]["fds"], "last": final["fds"], "max": max(s["fds"] for s in samples)},
        "fds_per_minute_after_warmup": round(slope_per_minute([(s["t"], s["fds"]) for s in warm]), 3),
        "children_max": max(s["children"] for s in samples),
        "zombies_max": max(s["zombies"] for s in samples),
        "children_at_end": final["children"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--rate", type=float, default=15, help="calls per second over all workers")
    parser.add_argument("--workers", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    server, port, bin_dir = start_server(Path(tempfile.mkdtemp(prefix="verdict-soak-")))
    try:
        summary = asyncio.run(soak(server, port, bin_dir, args.seconds, args.rate, args.workers, args.seed))
    finally:
        if server.poll() is None:
            server.kill()
    text = json.dumps(summary, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    clean = (
        summary["server_fault_count"] == 0
        and summary["marked_processes_between_calls"] == 0
        and summary["marked_processes_after_sigterm"] == 0
        and summary["escaped_grandchildren_alive_after"] == 0
        and summary["server_exit_code"] == 0
    )
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
