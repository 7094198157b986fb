"""Throughput, overload, every core and memory, under load from several client processes (see bench/load.py).

Every figure is a ratio of two measurements taken in this run on this machine, because absolute calls/s say more
about the machine (and whatever else runs on it) than about the code. Ratios of throughput alternate the two sides
in short rounds and keep each side's best round, so a burst of unrelated load on a shared machine does not land on
one side only.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from bench.load import (
    H2loadRun,
    LoadResult,
    Server,
    cpu_seconds,
    h2load_run,
    run_load,
    server_counts,
    start_bare_echo,
    start_echo,
    start_refusing,
    start_verdict,
)
from verdict.server.transport import POLL_SECONDS
from verdict.v1 import verdict_pb2

WARMUP, MEASURE, ROUNDS = 1.0, 2.5, 3
Request = tuple[str, bytes]


def _verify(text: str) -> Request:
    return "VerifyResponse", verdict_pb2.VerifyResponseRequest(text=text, finish_reason="stop").SerializeToString()


def _evaluate(yaml: str, output: str = "", exit_code: int = 0, workspace: str = "", state: bytes = b"") -> Request:
    request = verdict_pb2.EvaluateRequest(
        config=verdict_pb2.EvaluatorConfig(yaml=yaml), output=output, exit_code=exit_code, workspace=workspace
    )
    return "Evaluate", request.SerializeToString()


def _answer(size: int) -> str:
    """A realistic answer of about `size` bytes: prose, a Python block and a JSON block, repeated."""
    unit = (
        "Here is the change, with the tests updated to match.\n\n"
        "```python\ndef total(items: list[int]) -> int:\n    return sum(item for item in items if item > 0)\n```\n\n"
        '```json\n{"retries": 3, "backoff": [0.5, 1, 2], "name": "worker"}\n```\n\n'
    )
    return (unit * (size // len(unit) + 1))[:size].rsplit("```\n", 1)[0] + "```\n"


TINY = _verify('Done.\n```json\n{"a": 1}\n```\n')
KB2 = _verify(_answer(2 * 1024))
KB20 = _verify(_answer(20 * 1024))
_LOOP = '```bash\nfor f in *.log; do\n  grep -c error "$f" > out{i}.txt\ndone\n```\n\n'
SHELL_HEAVY = _verify("Run these:\n\n" + "".join(_LOOP.format(i=i) for i in range(4)))
ONE_SHELL = '```bash\nset -euo pipefail\nfor f in *.txt; do echo "$f"; done\n```\n'

EVALUATORS: dict[str, Callable[[str], Request]] = {
    "exit_code": lambda _: _evaluate("type: exit_code", exit_code=0),
    "output_numeric": lambda _: _evaluate("type: output_numeric\noperator: ge\ntarget: 0.9", output="0.93"),
    "output_json": lambda _: _evaluate(
        "type: output_json\npath: .tests.passed\noperator: eq\ntarget: 12", output='{"tests": {"passed": 12}}'
    ),
    "output_contains": lambda _: _evaluate("type: output_contains\npattern: '\\d+ passed'", output="== 12 passed =="),
    "convergence": lambda _: _evaluate("type: convergence\ntarget: '0.5'\ntolerance: 0.01", output="0.8"),
    "classify": lambda _: _evaluate("type: classify", output="thinking\nretry\n"),
    "action_stall": lambda _: _evaluate("type: action_stall\nmax_repeat: 3\ntrack: [output]", output="same"),
    "score_stall": lambda _: _evaluate("type: score_stall\nmax_stall: 3", output="0.7"),
    "open_question_stall": lambda _: _evaluate("type: open_question_stall\nmax_stall: 3", output="4"),
    "mcp_result": lambda _: _evaluate("type: mcp_result", output='{"content": [], "isError": false}'),
    "harbor_scorer": lambda _: _evaluate("type: harbor_scorer", output="0.75"),
    "diff_stall": lambda workspace: _evaluate("type: diff_stall\nmax_stall: 3", workspace=workspace),
}


def _load(server: Server, requests: list[Request], **options: float) -> LoadResult:
    return run_load(
        server.target,
        requests,
        warmup=options.pop("warmup", WARMUP),
        duration=options.pop("duration", MEASURE),
        **options,  # type: ignore[arg-type]
    )


def _best_rates(sides: dict[str, tuple[Server, Request]], rounds: int = ROUNDS, **h2load: int) -> dict[str, float]:
    """calls/s of each side (one request, sent by h2load), best of `rounds` alternating rounds."""
    return {name: run.rate for name, run in _best_runs(sides, rounds, answered="OK", **h2load).items()}


def _best_runs(
    sides: dict[str, tuple[Server, Request]], rounds: int = ROUNDS, *, answered: str = "OK", **h2load: int
) -> dict[str, H2loadRun]:
    """Each side's best h2load round (calls/s, and the server CPU per call in that round), alternating rounds.

    By default 4 connections with 2 calls in flight each: within admission's 2 running + 6 queued, so nothing is
    shed (h2load counts HTTP statuses, and a refusal is an HTTP 200)."""
    h2load = {"connections": 4, "streams": 2, **h2load}
    best: dict[str, H2loadRun] = {}
    for _ in range(rounds):
        for name, (server, request) in sides.items():
            run = h2load_run(server, request, duration=MEASURE, warmup=WARMUP, answered=answered, **h2load)
            if name not in best or run.rate > best[name].rate:
                best[name] = run
    return best


def _rss_mb(server: Server) -> float:
    total = 0
    for pid in server.pids():
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def _git_workspace(root: Path) -> str:
    workspace = root / "repo"
    workspace.mkdir()
    for argv in (["init", "-q"], ["config", "user.email", "b@x"], ["config", "user.name", "b"]):
        subprocess.run(["git", *argv], cwd=workspace, check=True)
    (workspace / "a.txt").write_text("one\n")
    subprocess.run(["git", "add", "."], cwd=workspace, check=True)
    subprocess.run(["git", "commit", "-qm", "one"], cwd=workspace, check=True)
    (workspace / "a.txt").write_text("two\n")
    return str(workspace)


def unary(bare: Server, echo: Server, verdict: Server) -> Iterator[str]:
    runs = _best_runs({"bare": (bare, TINY), "echo": (echo, TINY), "tiny": (verdict, TINY)})
    floor, layers, tiny = runs["bare"], runs["echo"], runs["tiny"]

    def cpu(run: H2loadRun) -> str:
        return f"{run.cpu_per_call * 1e6:.0f} us CPU/call"

    yield (
        f"unary VerifyResponse tiny / bare grpc.aio null echo, calls/s = {tiny.rate / floor.rate:.2f} (target >= 0.90)"
        f"; {tiny.rate:.0f}/s vs {floor.rate:.0f}/s, {cpu(tiny)} vs {cpu(floor)}; limited by the server's one event"
        " loop (h2load, the server and the machine's other work share the cores)"
    )
    yield (f"server CPU per tiny call / bare echo's = {tiny.cpu_per_call / floor.cpu_per_call:.2f} (target <= 1.15)")
    yield (
        f"  layers alone (Verdict's server answering with the request bytes) / bare echo, calls/s = "
        f"{layers.rate / floor.rate:.2f}, CPU/call = {layers.cpu_per_call / floor.cpu_per_call:.2f} ({cpu(layers)}):"
        " the access line, metrics and call context; the rest of the tiny call is decode, verify, encode"
    )
    refusing = start_refusing("--workers", "1")
    try:
        refused = _best_runs({"bare": (bare, TINY), "refused": (refusing, TINY)}, answered="ResourceExhausted")
    finally:
        refusing.stop()
    yield (
        f"  a refused call (admission full: RESOURCE_EXHAUSTED with RetryInfo, counted and logged, its message never "
        f"read) / bare echo: CPU/call = {refused['refused'].cpu_per_call / refused['bare'].cpu_per_call:.2f} "
        f"({cpu(refused['refused'])} vs {cpu(refused['bare'])}), calls/s = "
        f"{refused['refused'].rate / refused['bare'].rate:.2f}: what the excess costs at twice the capacity"
    )
    for name, request in (("2 KB", KB2), ("20 KB", KB20)):
        sized = _best_rates({"echo": (echo, request), "verify": (verdict, request)}, rounds=2)
        yield f"unary VerifyResponse {name} / null echo of the same bytes = {sized['verify'] / sized['echo']:.2f}"
    # 2 in flight, the running slots: a shell-heavy call takes longer than admission's queue target, so with more in
    # flight the queue would stand and h2load (which counts HTTP statuses, not gRPC ones) would count refusals as calls
    shell = _best_rates({"tiny": (verdict, TINY), "shell": (verdict, SHELL_HEAVY)}, rounds=2, connections=2, streams=1)
    yield f"shell-heavy answer (4 bash blocks) / tiny answer, calls/s = {shell['shell'] / shell['tiny']:.2f}"


def evaluators(echo: Server, verdict: Server, workspace: str) -> Iterator[str]:
    # 2 calls in flight (2 clients x 1), admission's running slots, on both sides
    baseline = _load(echo, [TINY], concurrency=1).rate
    for name, build in EVALUATORS.items():
        result = _load(verdict, [build(workspace)], duration=1.5, concurrency=1)
        errors = sum(v for k, v in result.codes.items() if k != "OK")
        note = f" ({errors} errors)" if errors else ""
        yield f"Evaluate {name:20} / null echo, calls/s = {result.rate / baseline:.3f}{note}"


OVERLOAD_MIX = [KB20, SHELL_HEAVY]
"""Calls whose cost is the server's (180 parsed blocks; four `bash -n` children), so that two client processes on the
same cores can offer twice the server's capacity: with tiny calls a client spends about what the server does per
call, and an open loop at twice the capacity saturates the clients, not the server."""


def overload(verdict: Server, workers: int = 1) -> Iterator[str]:
    unloaded = _load(verdict, OVERLOAD_MIX, clients=1, concurrency=1, duration=2.0)
    # capacity with as many calls in flight as admission runs (2 per loop by default): more would be shed, and the
    # OK rate of a shedding run is not the capacity
    capacity = _load(verdict, OVERLOAD_MIX, concurrency=workers).rate
    before = server_counts(verdict)
    offered = 2 * capacity
    loaded = _load(verdict, OVERLOAD_MIX, rate=offered, duration=6.0, timeout=2.0, warmup=0.5, connections=4)
    # grpc-core's own counts reach the metrics once a second (verdict/server/transport.py), and with workers through
    # their files: read them once the last second's are in, or the calls of that second look unseen
    time.sleep(2 * POLL_SECONDS)
    after = server_counts(verdict)
    server_side = {name: after.get(name, 0) - before.get(name, 0) for name in after}
    ratio = loaded.percentile(0.99) / unloaded.percentile(0.99)
    client_codes = ", ".join(f"{code} {count}" for code, count in sorted(loaded.codes.items()))
    server_codes = ", ".join(f"{name} {int(count)}" for name, count in sorted(server_side.items()) if count)
    measured = sum(loaded.codes.values()) or 1
    refusals = sum(count for code, count in loaded.codes.items() if code != "OK")
    quick = 2 * unloaded.percentile(0.5)
    hinted_quick = sum(1 for seconds in loaded.hinted_latencies if seconds <= quick)
    transport = len(loaded.rejected_latencies) - len(loaded.hinted_latencies)
    handled = sum(count for name, count in server_side.items() if name.startswith("handled "))
    uncounted = max(0, loaded.total - handled)
    transport_started = server_side.get("transport started", 0)
    unseen = max(0, loaded.total - transport_started)
    label = f"overload, workers={workers}"
    yield (
        f"{label}, at 2x capacity (20 KB and shell-heavy answers, {offered:.0f}/s offered for 6 s, 2 s deadline): "
        f"accepted p99 / unloaded p99 = {ratio:.1f} (target <= 3)"
    )
    yield (
        f"{label}: refusals that are RESOURCE_EXHAUSTED with RetryInfo, answered within 2x the unloaded p50 "
        f"({quick * 1000:.1f} ms) = {100 * hinted_quick / max(1, refusals):.0f} % of {refusals} refusals "
        f"(target >= 95 %); transport refusals (no RetryInfo) = {100 * transport / measured:.1f} % of calls "
        "(target <= 1 %)"
    )
    yield (
        f"{label}: calls the clients saw that the server's metrics do not count = "
        f"{100 * unseen / max(1, loaded.total):.1f} % ({unseen:.0f} of {loaded.total}; verdict_transport_calls_total"
        f" counts every call grpc-core started) (target <= 1 %); of them the application never saw "
        f"{100 * uncounted / max(1, loaded.total):.1f} % ({uncounted:.0f}: expired or refused inside grpc-core)"
    )
    yield f"{label}: goodput at 2x / capacity = {100 * loaded.rate / capacity:.0f} % (target >= 90 %)"
    yield f"  clients saw (measured window): {client_codes}"
    for code, text in sorted(loaded.details.items()):
        yield f"    {code}: {text!r}"
    yield f"  server counted (grpc_server_handled_total, verdict_shed_total; whole run): {server_codes}"
    if loaded.rejected_latencies:
        yield f"  rejections answered in p50 {loaded.percentile(0.5, loaded.rejected_latencies) * 1000:.1f} ms"


def multiprocess() -> Iterator[str]:
    one = start_verdict("--workers", "1")
    two = start_verdict("--workers", "2")
    try:
        # 8 calls in flight over 8 connections: SO_REUSEPORT spreads connections, not calls, over the workers, and
        # a worker given more connections than the others must still not shed.
        runs = _best_runs({"1": (one, TINY), "2": (two, TINY)}, rounds=2, connections=8, streams=1)
        yield (
            f"workers=2 / workers=1, tiny unary calls/s = {runs['2'].rate / runs['1'].rate:.2f} (target >= 1.6; "
            f"bounded by the machine: {os.cpu_count()} cores shared by h2load, both workers and other work)"
        )
        yield (
            f"server CPU per call, workers=2 / workers=1 = {runs['2'].cpu_per_call / runs['1'].cpu_per_call:.2f} "
            f"at saturation ({runs['1'].cpu_per_call * 1e6:.0f} vs {runs['2'].cpu_per_call * 1e6:.0f} us; two "
            "workers' loop and poller threads and h2load contend for the 2 cores)"
        )
        paced = {name: _cpu_at_rate(server, runs["1"].rate / 3) for name, server in (("1", one), ("2", two))}
        yield (
            f"server CPU per call, workers=2 / workers=1 = {paced['2'] / paced['1']:.2f} at the same offered rate, a "
            f"third of one worker's capacity ({paced['1'] * 1e6:.0f} vs {paced['2'] * 1e6:.0f} us: what a second "
            "process costs per call without the contention) (target <= 1.05)"
        )
        yield from overload(two, workers=2)  # the default on 2 cores: one event loop, and one accept loop, per core
    finally:
        one.stop()
        two.stop()


def _cpu_at_rate(server: Server, rate: float, rounds: int = 2) -> float:
    """The server's CPU seconds per call under an open loop of `rate` calls/s (2 client processes, 4 connections
    each), the best of `rounds`: the per-call cost without saturating the machine."""
    best = float("inf")
    for _ in range(rounds):
        before = cpu_seconds(server)
        result = run_load(server.target, [TINY], rate=rate, duration=4.0, warmup=0.0, connections=4, concurrency=64)
        best = min(best, (cpu_seconds(server) - before) / max(1, result.total))
    return best


def memory() -> Iterator[str]:
    exit_code, classify = _evaluate("type: exit_code"), _evaluate("type: classify", output="a\nb")
    mixed = [*[TINY] * 12, KB2, KB2, exit_code, exit_code, classify, SHELL_HEAVY, KB20]
    server = start_verdict("--workers", "1")
    try:
        first = _load(server, mixed, concurrency=2, duration=60.0, warmup=0.0, max_calls=10_000).calls
        rss_first = _rss_mb(server)
        started = time.perf_counter()
        more = _load(server, mixed, concurrency=2, duration=240.0, warmup=0.0, max_calls=190_000)
        rss_last = _rss_mb(server)
        done = first + more.calls
    finally:
        server.stop()
    label = "" if done >= 200_000 else f" (time-boxed: reached {done:,} calls, not 200,000)"
    growth = rss_last - rss_first
    yield (
        f"memory, mixed calls: RSS {rss_first:.0f} MB after {first:,} calls -> {rss_last:.0f} MB after {done:,} calls "
        f"= +{growth:.1f} MB (target <= 20 MB from 10k to 200k){label}; {time.perf_counter() - started:.0f} s"
    )


def shell_block() -> Iterator[str]:
    from prometheus_client import CollectorRegistry

    from verdict.config.keys import Config
    from verdict.metrics import Metrics
    from verdict.runner import Runner, become_subreaper
    from verdict.verify.model import VerifyInput
    from verdict.verify.verifier import Verifier

    async def measure() -> tuple[dict[str, float], dict[str, float]]:
        become_subreaper()  # as `verdict serve` does
        metrics = Metrics(CollectorRegistry())
        runner = Runner.for_config(Config(), metrics)
        verifier = Verifier(Config(), runner, metrics)
        text = "Run:\n" + ONE_SHELL
        body = ONE_SHELL.split("\n", 1)[1].rsplit("```", 1)[0].encode()

        async def raw() -> None:
            process = await asyncio.create_subprocess_exec(
                "bash", "-n", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL
            )
            await process.communicate(body)

        try:
            rounds: dict[str, list[float]] = {"verify": [], "raw": []}
            loop_cpu: dict[str, list[float]] = {"verify": [], "raw": []}
            for _ in range(5):
                for name, work in (("verify", lambda: verifier.verify(VerifyInput(text))), ("raw", raw)):
                    started, cpu = time.perf_counter(), time.thread_time()  # this thread runs the event loop
                    for _ in range(40):
                        await work()
                    rounds[name].append((time.perf_counter() - started) / 40)
                    loop_cpu[name].append((time.thread_time() - cpu) / 40)
            return {name: min(times) for name, times in rounds.items()}, {n: min(c) for n, c in loop_cpu.items()}
        finally:
            runner.shutdown()
            verifier.close()

    wall, loop = asyncio.run(measure())
    yield (
        f"one shell block through the verifier / a raw `bash -n` spawn = {wall['verify'] / wall['raw']:.2f} "
        "(target <= 1.3)"
    )
    yield (
        f"  the event loop's own CPU per shell block: through the verifier / a raw asyncio `bash -n` spawn = "
        f"{loop['verify'] / loop['raw']:.2f} ({loop['verify'] * 1e6:.0f} vs {loop['raw'] * 1e6:.0f} us: the fence "
        "scan, the script's preparation and the runner's bookkeeping per child, on top of asyncio's own)"
    )


def run() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="verdict-bench-") as scratch:
        workspace = _git_workspace(Path(scratch))
        bare = start_bare_echo()
        echo = start_echo("--workers", "1")
        verdict = start_verdict("--workers", "1", "--workspace-root", scratch)
        try:
            yield from unary(bare, echo, verdict)
            yield from evaluators(echo, verdict, workspace)
            yield from overload(verdict)
        finally:
            bare.stop()
            echo.stop()
            verdict.stop()
    yield from multiprocess()
    yield from shell_block()
    yield from memory()
