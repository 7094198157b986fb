"""The longest event-loop stall one call causes: health checks and a small call, timed while one heavy call runs.

A server has one event loop; a call that keeps it busy in one stretch (hundreds of inline parses, a huge `context`
turned into a dict, a 64 KB `yaml` member through the pure-Python parser) makes every other call wait, health checks
included, and kubelet restarts a pod whose probe times out. The shapes here are the ones that used to stall the loop
for 0.5 to 3.2 s. Probes are sent every 10 ms without waiting for each other, so a stall is seen by every probe sent
during it, and the median probe latency during the heavy call reflects the stall, not one unlucky probe.

`python -m bench loop_stall` prints, per shape, the median and worst probe latency during the heavy call against the
same probes with no heavy call (the baseline, measured in the same run against the same server process).
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import grpc
import grpc.aio
from grpc_health.v1 import health_pb2, health_pb2_grpc

from verdict.v1 import verdict_pb2, verdict_pb2_grpc

BLOCKS = 250
BLOCK_BYTES = 15_800
"""Each block just under the default inline_parse_bytes (16 KiB): the per-block limit alone let all 250 parse on
the event loop; 250 of them fit the default 4 MiB message limit."""
CONTEXT_KEYS = 180_000
YAML_MEMBER_CHARS = 63 * 1024
PROBE_INTERVAL_SECONDS = 0.01
MAX_PROBES_IN_FLIGHT = 80
"""Probes stop being sent while this many wait (a stalled server would otherwise pile up past the connection's
max_concurrent_streams and have them refused); those waiting already show the stall."""
CHANNEL_OPTIONS = [("grpc.max_send_message_length", 64 * 1024 * 1024), ("grpc.max_receive_message_length", -1)]


def _blocks(language: str, line: Callable[[int], str]) -> str:
    blocks = []
    for number in range(BLOCKS):
        lines: list[str] = []
        size = 0
        index = 0
        while size < BLOCK_BYTES - 64:
            text = line(number * 10_000 + index)
            lines.append(text)
            size += len(text) + 1
            index += 1
        blocks.append(f"```{language}\n" + "\n".join(lines) + "\n```")
    return "\n\n".join(blocks) + "\n"


def yaml_blocks() -> tuple[str, object]:
    text = _blocks("yaml", lambda i: f"key_{i}: {{name: item{i}, values: [1, 2, 3], flag: true}}")
    return "VerifyResponse", verdict_pb2.VerifyResponseRequest(text=text, finish_reason="stop")


def python_blocks() -> tuple[str, object]:
    text = _blocks("python", lambda i: f"value_{i} = compute({i}, [1, 2, 3], flag=True)  # line {i}")
    return "VerifyResponse", verdict_pb2.VerifyResponseRequest(text=text, finish_reason="stop")


def huge_context() -> tuple[str, object]:
    request = verdict_pb2.EvaluateRequest(config=verdict_pb2.EvaluatorConfig(yaml="type: exit_code"))
    request.context.update({"context": {f"k{i}": i for i in range(CONTEXT_KEYS)}})
    return "Evaluate", request


def yaml_member() -> tuple[str, object]:
    lines = ["type: output_contains", "pattern: PASS", "negate: false", "source: ${context.out}", "notes:"]
    index = 0
    while sum(len(line) + 1 for line in lines) < YAML_MEMBER_CHARS - 40:
        lines.append(f"  k{index}: [a, {index}]")
        index += 1
    request = verdict_pb2.EvaluateRequest(config=verdict_pb2.EvaluatorConfig(yaml="\n".join(lines)), output="PASS")
    return "Evaluate", request


def tool_calls() -> tuple[str, object]:
    """1,000 calls (near the 1,024 a turn may hold) of 40 declared tools, arguments checked against their schemas."""
    request = verdict_pb2.VerifyResponseRequest(text="Calling the tools.", finish_reason="tool_calls")
    schema = '{"type": "object", "properties": {"path": {"type": "string"}, "line": {"type": "integer"}}}'
    for index in range(40):
        request.tools.add(name=f"tool_{index}", parameters=schema)
    for index in range(1_000):
        arguments = f'{{"path": "src/module_{index}.py", "line": {index}, "note": "{"x" * 2_000}"}}'
        request.tool_calls.add(id=f"call_{index}", name=f"tool_{index % 40}", arguments=arguments)
    return "VerifyResponse", request


def batch_items() -> tuple[str, object]:
    """A batch of 1,000 answers of one JSON block and one YAML block each."""
    request = verdict_pb2.BatchVerifyResponsesRequest()
    for index in range(1_000):
        text = f'Done.\n```json\n{{"item": {index}, "ok": true}}\n```\n```yaml\nitem: {index}\nlist: [a, b]\n```\n'
        request.items.add(text=text, finish_reason="stop")
    return "BatchVerifyResponses", request


SHAPES: dict[str, Callable[[], tuple[str, object]]] = {
    "250 x 16 KB yaml blocks": yaml_blocks,
    "250 x 16 KB python blocks": python_blocks,
    f"{CONTEXT_KEYS // 1000}k-key context": huge_context,
    "64 KB yaml member": yaml_member,
    "1,000 tool calls with schemas": tool_calls,
    "batch of 1,000 answers": batch_items,
}


@dataclass(frozen=True)
class Probes:
    """Latencies (seconds) of the probes sent while the heavy call ran (all of them for a baseline)."""

    health: tuple[float, ...]
    small_call: tuple[float, ...]
    heavy_seconds: float

    @property
    def health_median(self) -> float:
        return statistics.median(self.health)

    @property
    def small_call_median(self) -> float:
        return statistics.median(self.small_call)

    @property
    def worst(self) -> float:
        return max(self.health + self.small_call)


async def probe(target: str, method: str | None, request: object | None, baseline_seconds: float = 0.5) -> Probes:
    """Send `request` to `method` once (None: no heavy call, probe for `baseline_seconds`), and meanwhile a health
    check and a one-line VerifyResponse every 10 ms; the latencies of the probes sent while it ran."""
    async with grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        stub = verdict_pb2_grpc.VerdictServiceStub(channel)
        check = health_pb2.HealthCheckRequest(service="")
        small = verdict_pb2.VerifyResponseRequest(text="```json\n{}\n```\n", finish_reason="stop")
        await health.Check(check, timeout=30)
        await stub.VerifyResponse(small, timeout=30)

        async def timed(call: Callable[[], object]) -> float:
            started = time.perf_counter()
            await call()  # type: ignore[misc]
            return time.perf_counter() - started

        started = time.perf_counter()
        if method is None:
            heavy: asyncio.Future[object] = asyncio.ensure_future(asyncio.sleep(baseline_seconds))
        else:
            heavy = asyncio.ensure_future(asyncio.to_thread(_call_in_thread, target, method, request))
        health_probes: list[asyncio.Task[float]] = []
        small_probes: list[asyncio.Task[float]] = []
        while not heavy.done():
            if sum(not task.done() for task in health_probes[-MAX_PROBES_IN_FLIGHT:]) < MAX_PROBES_IN_FLIGHT // 2:
                health_probes.append(asyncio.ensure_future(timed(lambda: health.Check(check, timeout=60))))
                small_probes.append(asyncio.ensure_future(timed(lambda: stub.VerifyResponse(small, timeout=60))))
            await asyncio.wait([heavy], timeout=PROBE_INTERVAL_SECONDS)
        heavy.result()
        heavy_seconds = time.perf_counter() - started
        return Probes(
            tuple(await asyncio.gather(*health_probes)), tuple(await asyncio.gather(*small_probes)), heavy_seconds
        )


def _call_in_thread(target: str, method: str, request: object) -> None:
    """The heavy call, from its own thread and channel, so its serialization does not delay the probes' loop. Any
    status is fine: what is measured is what the call does to everyone else."""
    with grpc.insecure_channel(target, options=CHANNEL_OPTIONS) as channel:
        stub = verdict_pb2_grpc.VerdictServiceStub(channel)
        with contextlib.suppress(grpc.RpcError):
            getattr(stub, method)(request, timeout=300)


def run() -> Iterator[str]:
    from tests.support import start_server_process, stop_server_process

    server = start_server_process()
    try:
        baseline = asyncio.run(probe(server.target, None, None))
        yield (
            f"baseline (no heavy call): health median {baseline.health_median * 1000:.1f} ms, small call median "
            f"{baseline.small_call_median * 1000:.1f} ms, worst {baseline.worst * 1000:.1f} ms"
        )
        for name, shape in SHAPES.items():
            method, request = shape()
            measured = asyncio.run(probe(server.target, method, request))
            yield (
                f"{name}: heavy call {measured.heavy_seconds:.2f} s; during it health median "
                f"{measured.health_median * 1000:.1f} ms ({measured.health_median / baseline.health_median:.1f}x "
                f"baseline), small call median {measured.small_call_median * 1000:.1f} ms, worst probe "
                f"{measured.worst * 1000:.0f} ms (target: under 100 ms)"
            )
    finally:
        stop_server_process(server)
