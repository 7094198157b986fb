"""What batching buys: answers per second through BatchVerifyResponses against unary VerifyResponse, and 500 saved
answers through the CLI as one batch job against one `verdict verify` process per answer.

Every figure is a ratio of two measurements taken in the same run, against the same server process, with the server's
CPU time per answer beside it (its /proc counters over each measurement).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc.aio

from bench.load import Server, cpu_seconds, start_verdict
from verdict.v1 import verdict_pb2, verdict_pb2_grpc

TINY = "```json\n{}\n```\n"
TWO_KB = "```python\n" + "\n".join(f"value_{i} = compute({i}, [1, 2, 3])" for i in range(60)) + "\n```\n"
CONCURRENCY = 8
CLI_ANSWERS = 500
PROCESS_SAMPLE = 20
"""One process per answer is timed on this many answers and scaled to CLI_ANSWERS (500 processes take minutes)."""


SHAPES = (
    (
        "tiny",
        TINY,
        " (target >= 20x)",
        "a batch saves the per-call cost, not the per-answer work (fence scan, parse, result, proto); the unary side "
        "is also bounded by its Python client on the same cores",
    ),
    (
        "2 KB",
        TWO_KB,
        "",
        "one 60-line Python block per answer, whose ast.parse alone is about 600 us; past the call's inline budget "
        "(8 ms of parsing, about 13 such blocks) a batch's blocks parse in the pool",
    ),
)
"""Each answer measured: its name, its text, the target its ratio must reach in `make bench` (missed on this stack:
bench/NOTES.md, "What limits each figure"), and what limits the figure."""


@dataclass(frozen=True)
class Throughput:
    """Answers per second from one measurement, and the server's CPU seconds per answer over the same window."""

    rate: float
    cpu_per_answer: float


async def _answers_per_second(
    call: Callable[[], Awaitable[object]], answers_per_call: int, callers: int, seconds: float, server: Server
) -> Throughput:
    """Answers per second from `callers` loops that each repeat `call` (one RPC) for `seconds`."""
    done = 0
    deadline = time.perf_counter() + seconds

    async def caller() -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            await call()
            done += answers_per_call

    cpu = cpu_seconds(server)
    started = time.perf_counter()
    await asyncio.gather(*(caller() for _ in range(callers)))
    elapsed = time.perf_counter() - started
    return Throughput(done / elapsed, (cpu_seconds(server) - cpu) / max(1, done))


async def _unary(stub: verdict_pb2_grpc.VerdictServiceStub, text: str, seconds: float, server: Server) -> Throughput:
    request = verdict_pb2.VerifyResponseRequest(text=text, finish_reason="stop")
    return await _answers_per_second(lambda: stub.VerifyResponse(request, timeout=30), 1, CONCURRENCY, seconds, server)


async def _batched(
    stub: verdict_pb2_grpc.VerdictServiceStub, text: str, size: int, seconds: float, server: Server
) -> Throughput:
    item = verdict_pb2.VerifyResponseRequest(text=text, finish_reason="stop")
    request = verdict_pb2.BatchVerifyResponsesRequest(items=[item] * size)
    return await _answers_per_second(lambda: stub.BatchVerifyResponses(request, timeout=60), size, 2, seconds, server)


async def _throughput(server: Server) -> list[str]:
    lines = []
    async with grpc.aio.insecure_channel(server.target) as channel:
        stub = verdict_pb2_grpc.VerdictServiceStub(channel)
        await _unary(stub, TINY, 0.5, server)  # warm-up
        for name, text, target, limit in SHAPES:
            unary = await _unary(stub, text, 3, server)
            batch = await _batched(stub, text, 100, 3, server)
            lines.append(
                f"{name} answers: batch of 100 {batch.rate:.0f} answers/s vs unary {unary.rate:.0f} calls/s "
                f"({CONCURRENCY} in flight): {batch.rate / unary.rate:.1f}x{target}"
            )
            lines.append(
                f"  server CPU {batch.cpu_per_answer * 1e6:.0f} us per batched answer vs "
                f"{unary.cpu_per_answer * 1e6:.0f} us per unary call: {limit}"
            )
    return lines


def _cli(folder: Path) -> list[str]:
    files = sorted(folder.iterdir())
    started = time.perf_counter()
    for path in files[:PROCESS_SAMPLE]:
        subprocess.run([sys.executable, "-m", "verdict", "verify", str(path)], capture_output=True, check=False)
    per_process = (time.perf_counter() - started) / PROCESS_SAMPLE * len(files)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "verdict", "verify", str(folder)], capture_output=True, check=False)
    one_job = time.perf_counter() - started
    return [
        f"{len(files)} answers through the CLI: one process per answer {per_process:.1f} s (from {PROCESS_SAMPLE}), "
        f"one batch job {one_job:.2f} s: {per_process / one_job:.0f}x"
    ]


def run() -> Iterator[str]:
    server = start_verdict("--workers", "1")
    try:
        yield from asyncio.run(_throughput(server))
    finally:
        server.stop()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for index in range(CLI_ANSWERS):
            (folder / f"{index:04d}.md").write_text(TWO_KB if index % 2 else TINY)
        yield from _cli(folder)
