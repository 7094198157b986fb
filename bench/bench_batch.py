"""What batching buys: answers per second through BatchVerifyResponses against unary VerifyResponse, and 500 saved
answers through the CLI as one batch job against one `verdict verify` process per answer.

Every figure is a ratio of two measurements taken in the same run, against the same server process.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import grpc.aio

from verdict.v1 import verdict_pb2, verdict_pb2_grpc

TINY = "```json\n{}\n```\n"
TWO_KB = "```python\n" + "\n".join(f"value_{i} = compute({i}, [1, 2, 3])" for i in range(60)) + "\n```\n"
CONCURRENCY = 8
CLI_ANSWERS = 500
PROCESS_SAMPLE = 20
"""One process per answer is timed on this many answers and scaled to CLI_ANSWERS (500 processes take minutes)."""


async def _answers_per_second(
    call: Callable[[], Awaitable[object]], answers_per_call: int, callers: int, seconds: float
) -> float:
    """Answers per second from `callers` loops that each repeat `call` (one RPC) for `seconds`."""
    done = 0
    deadline = time.perf_counter() + seconds

    async def caller() -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            await call()
            done += answers_per_call

    started = time.perf_counter()
    await asyncio.gather(*(caller() for _ in range(callers)))
    return done / (time.perf_counter() - started)


async def _unary(stub: verdict_pb2_grpc.VerdictServiceStub, text: str, seconds: float) -> float:
    request = verdict_pb2.VerifyResponseRequest(text=text, finish_reason="stop")
    return await _answers_per_second(lambda: stub.VerifyResponse(request, timeout=30), 1, CONCURRENCY, seconds)


async def _batched(stub: verdict_pb2_grpc.VerdictServiceStub, text: str, size: int, seconds: float) -> float:
    item = verdict_pb2.VerifyResponseRequest(text=text, finish_reason="stop")
    request = verdict_pb2.BatchVerifyResponsesRequest(items=[item] * size)
    return await _answers_per_second(lambda: stub.BatchVerifyResponses(request, timeout=60), size, 2, seconds)


async def _throughput(target: str) -> list[str]:
    lines = []
    async with grpc.aio.insecure_channel(target) as channel:
        stub = verdict_pb2_grpc.VerdictServiceStub(channel)
        await _unary(stub, TINY, 0.5)  # warm-up
        for name, text in (("tiny", TINY), ("2 KB", TWO_KB)):
            unary = await _unary(stub, text, 3)
            batch = await _batched(stub, text, 100, 3)
            lines.append(
                f"{name} answers: batch of 100 {batch:.0f} answers/s vs unary {unary:.0f} calls/s "
                f"({CONCURRENCY} in flight): {batch / unary:.1f}x"
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
    from tests.support import start_server_process, stop_server_process

    server = start_server_process()
    try:
        yield from asyncio.run(_throughput(server.target))
    finally:
        stop_server_process(server)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for index in range(CLI_ANSWERS):
            (folder / f"{index:04d}.md").write_text(TWO_KB if index % 2 else TINY)
        yield from _cli(folder)
