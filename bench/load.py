"""The load generator: client processes that call a server for a fixed time after a warm-up, and the servers they call.

Clients are separate processes (`python -m bench.load CLIENT_SPEC_JSON`), so the client side's Python does not share
the server's GIL. Requests are serialized once, up front, and sent as bytes (no per-call proto work on the client).

Two ways to load:
- closed loop (`concurrency` calls kept in flight per client): the most the server does, i.e. its capacity;
- open loop (`rate` calls started per second per client, whether or not earlier ones finished): a fixed offered load,
  used for overload, where a closed loop would slow down with the server and never overload it.

Every figure the bench reports is a ratio of two such runs in the same `make bench`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

__all__ = [
    "H2loadRun",
    "LoadResult",
    "Server",
    "cpu_seconds",
    "h2load_rate",
    "h2load_run",
    "run_load",
    "server_counts",
    "start_bare_echo",
    "start_echo",
    "start_refusing",
    "start_verdict",
]

SERVICE = "verdict.v1.VerdictService"
_ROOT = str(Path(__file__).resolve().parent.parent)
"""The repository root, on the path of every process the bench starts (`python -m bench.*` from anywhere)."""


@dataclass
class LoadResult:
    """Merged over every client process: what was answered in the measured window, and how fast."""

    calls: int = 0
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    """Seconds, of calls answered OK in the measured window."""
    codes: Counter[str] = field(default_factory=Counter)
    """Status code names of every call ended in the measured window, OK included."""
    rejected_latencies: list[float] = field(default_factory=list)
    """Seconds to a RESOURCE_EXHAUSTED or UNAVAILABLE answer (how fast the excess was refused)."""
    hinted_latencies: list[float] = field(default_factory=list)
    """Seconds to each refusal that came with a google.rpc.RetryInfo (the application's own refusals)."""
    total: int = 0
    """Every call that ended, in or out of the measured window (what the server's counters saw too)."""
    details: dict[str, str] = field(default_factory=dict)
    """One example of the details text per status code that was not OK (what the client was told)."""

    @property
    def rate(self) -> float:
        """Calls answered OK per second."""
        return self.codes["OK"] / self.seconds if self.seconds else 0.0

    def percentile(self, fraction: float, values: list[float] | None = None) -> float:
        data = sorted(self.latencies if values is None else values)
        if not data:
            return float("nan")
        return data[min(len(data) - 1, int(fraction * len(data)))]


@dataclass
class Server:
    """A server process started for the bench; `stop()` sends SIGTERM and waits."""

    process: subprocess.Popen[str]
    port: int
    metrics_port: int | None

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def pids(self) -> list[int]:
        """The server process and its workers (multi-process mode), for RSS."""
        pid = self.process.pid
        try:
            children = [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        except OSError:
            children = []
        return [pid, *children]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _start(argv: list[str], env: dict[str, str] | None = None) -> Server:
    """A server process that logs JSON lines on stderr, once it has logged its `serving` record (`read_ready`, which
    keeps draining stderr afterwards, so the server never blocks on a full pipe)."""
    from tests.support import read_ready  # here, not at the top: the client processes import this module too

    environment = {**os.environ, "PYTHONPATH": _ROOT, **(env or {})}
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=environment)
    ready, _lines = read_ready(process, 60)
    return Server(process, int(ready["grpc_port"]), ready.get("metrics_port"))


def start_verdict(*flags: str, env: dict[str, str] | None = None) -> Server:
    """`verdict serve` as deployed (bench flags on top), on free loopback ports."""
    argv = [sys.executable, "-m", "verdict", "serve", "--grpc-address", "127.0.0.1:0"]
    argv += ["--metrics-address", "127.0.0.1:0", "--log-level", "INFO", "--log-format", "json", *flags]
    return _start(argv, env)


def start_refusing(*flags: str) -> Server:
    """`verdict serve` with no admission slot (bench/refusing_server.py): every VerdictService call is refused as
    under overload."""
    argv = [sys.executable, "-m", "bench.refusing_server", "--grpc-address", "127.0.0.1:0"]
    argv += ["--metrics-address", "127.0.0.1:0", "--log-level", "INFO", "--log-format", "json", *flags]
    return _start(argv)


def start_echo(*flags: str) -> Server:
    """The null echo: the same server (`build_server`: options, interceptors, health) answering VerifyResponse with
    its request bytes, untouched: what any call costs before Verdict does any work."""
    argv = [sys.executable, "-m", "bench.echo_server", "--log-level", "INFO", "--log-format", "json", *flags]
    return _start(argv)


def start_bare_echo() -> Server:
    """The floor: a bare `grpc.aio.server()` echo (no interceptors, logging or metrics; bench/echo_server.py)."""
    return _start([sys.executable, "-m", "bench.echo_server", "--bare"])


def cpu_seconds(server: Server) -> float:
    """User + system CPU seconds the server's processes (workers included) have used so far, from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in server.pids():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat(5))
    return total / tick


@dataclass
class H2loadRun:
    """One h2load run: calls/s, and the server's CPU per call over the same run (warm-up included on both sides)."""

    rate: float
    cpu_per_call: float


def h2load_rate(
    server: Server,
    request: tuple[str, bytes],
    *,
    connections: int = 4,
    streams: int = 4,
    duration: float = 2.5,
    warmup: float = 1.0,
) -> float:
    """Calls/s of one request (see `h2load_run`)."""
    return h2load_run(server, request, connections=connections, streams=streams, duration=duration, warmup=warmup).rate


def h2load_run(
    server: Server,
    request: tuple[str, bytes],
    *,
    connections: int = 4,
    streams: int = 4,
    duration: float = 2.5,
    warmup: float = 1.0,
    answered: str = "OK",
) -> H2loadRun:
    """Calls/s of one request, sent by h2load (nghttp2's HTTP/2 load generator, in C) as a gRPC call: the capacity of
    the server and not of its clients, which on a shared 2-core machine matters. A Python gRPC client spends about
    what the server does per call, so Python clients saturate first and every throughput ratio tends to 1.

    h2load counts HTTP statuses, not gRPC ones, so the calls in flight (`connections` x `streams`, 16 by default) are
    kept within admission control's running + queued bound, where nothing is shed; for a server with a metrics port,
    every call the server counted in the window must have answered OK (bar those in flight when h2load stopped,
    which it cancels), or this raises; `answered` names another code every call must have (`ResourceExhausted` for a
    server that refuses every call, whose refusals are then counted as shed too)."""
    method, payload = request
    before = server_counts(server)
    with tempfile.NamedTemporaryFile(prefix="verdict-h2load-") as body:
        body.write(b"\x00" + struct.pack(">I", len(payload)) + payload)
        body.flush()
        argv = ["h2load", "-c", str(connections), "-m", str(streams), "-t", "1", "-D", f"{duration * 1000:.0f}ms"]
        argv += [f"--warm-up-time={warmup * 1000:.0f}ms", "-d", body.name, "-H", "content-type: application/grpc"]
        argv += ["-H", "te: trailers", f"http://{server.target}/{SERVICE}/{method}"]
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(warmup)  # the CPU is read over h2load's measured window only, as its rate is
        cpu_before = cpu_seconds(server)
        report, errors = process.communicate()
        cpu = cpu_seconds(server) - cpu_before
        if process.returncode:
            raise RuntimeError(f"h2load failed ({process.returncode}): {errors}")
    found = re.search(r"finished in [^,]+, ([\d.]+) req/s", report)
    if found is None:
        raise RuntimeError(f"h2load printed no rate:\n{report}")
    after = server_counts(server)
    failed = {
        name: after[name] - before.get(name, 0)
        for name in after
        if name != f"handled {answered}"
        and not name.startswith("transport ")
        and not (answered != "OK" and name.startswith("shed "))
    }
    if failed.get("handled Canceled", 0) <= connections * streams:
        failed.pop("handled Canceled", None)  # the calls in flight when h2load stopped
    if any(failed.values()):
        raise RuntimeError(f"calls that did not answer OK during an h2load run: {failed}")
    rate = float(found.group(1))
    return H2loadRun(rate, cpu / (rate * duration) if rate else float("nan"))


def server_counts(server: Server) -> dict[str, float]:
    """What the server itself counted, from its /metrics (empty without one): VerdictService calls by code
    (`grpc_server_handled_total`, as `handled CODE`), calls shed by reason (`verdict_shed_total`, as
    `shed REASON`) and the calls grpc-core itself started and failed (`verdict_transport_calls_total`, as
    `transport started|failed`; every service, the application's or not)."""
    if not server.metrics_port:
        return {}
    with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    counts: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("grpc_server_handled_total{") and f'grpc_service="{SERVICE}"' in line:
            name = "handled " + line.split('grpc_code="', 1)[1].split('"', 1)[0]
        elif line.startswith("verdict_shed_total{"):
            name = "shed " + line.split('reason="', 1)[1].split('"', 1)[0]
        elif line.startswith("verdict_transport_calls_total{"):
            name = "transport " + line.split('event="', 1)[1].split('"', 1)[0]
        else:
            continue
        counts[name] = counts.get(name, 0) + float(line.rsplit(" ", 1)[1])
    return counts


def run_load(
    target: str,
    requests: list[tuple[str, bytes]],
    *,
    clients: int = 2,
    concurrency: int = 8,
    rate: float = 0.0,
    warmup: float = 1.0,
    duration: float = 4.0,
    timeout: float = 10.0,
    max_calls: int = 0,
    connections: int = 1,
) -> LoadResult:
    """Run `clients` client processes against `target`, cycling through `requests` ((method, serialized) pairs).
    `rate` > 0 makes it an open loop at `rate` calls/s in total; `max_calls` > 0 stops each client after its share.
    `connections` is the TCP connections each client spreads its calls over (SO_REUSEPORT balances connections, not
    calls, between the workers of one port)."""
    spec = {
        "target": target,
        "requests": [(method, payload.hex()) for method, payload in requests],
        "concurrency": concurrency,
        "rate": rate / clients,
        "warmup": warmup,
        "duration": duration,
        "timeout": timeout,
        "max_calls": max_calls // clients if max_calls else 0,
        "connections": connections,
    }
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "bench.load", "-"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": _ROOT},
        )
        for _ in range(clients)
    ]
    for process in processes:
        assert process.stdin is not None
        process.stdin.write(json.dumps(spec))
        process.stdin.close()
    result = LoadResult()
    for process in processes:
        assert process.stdout is not None
        part = json.loads(process.stdout.read())
        process.wait()
        result.calls += part["calls"]
        result.seconds = max(result.seconds, part["seconds"])
        result.latencies += part["latencies"]
        result.rejected_latencies += part["rejected"]
        result.hinted_latencies += part["hinted"]
        result.total += part["total"]
        result.codes.update(part["codes"])
        for code, text in part["details"].items():
            result.details.setdefault(code, text)
    return result


def _retry_hinted(error: grpc.aio.AioRpcError) -> bool:
    """Whether a refusal carried a google.rpc.RetryInfo: the application refused it (admission control), not the
    transport."""
    from google.rpc import error_details_pb2
    from grpc_status import rpc_status

    status = rpc_status.from_call(error)
    return status is not None and any(d.Is(error_details_pb2.RetryInfo.DESCRIPTOR) for d in status.details)


async def _client(spec: dict[str, Any]) -> dict[str, Any]:
    requests = [(method, bytes.fromhex(payload)) for method, payload in spec["requests"]]
    limit = 64 * 1024 * 1024
    options = [("grpc.max_receive_message_length", limit), ("grpc.max_send_message_length", limit)]
    latencies: list[float] = []
    rejected: list[float] = []
    hinted: list[float] = []
    total = 0
    codes: Counter[str] = Counter()
    details: dict[str, str] = {}
    calls = 0
    # A channel of its own subchannel pool is a TCP connection of its own (channels otherwise share one).
    channels = [
        grpc.aio.insecure_channel(spec["target"], options=[*options, ("grpc.use_local_subchannel_pool", 1)])
        for _ in range(spec.get("connections", 1))
    ]
    try:
        for channel in channels:
            await channel.channel_ready()
        each = [{m: channel.unary_unary(f"/{SERVICE}/{m}") for m in {m for m, _ in requests}} for channel in channels]
        started = time.perf_counter()
        measured_from = started + spec["warmup"]
        until = measured_from + spec["duration"]
        index = 0

        async def one() -> None:
            nonlocal index, calls, total
            method, payload = requests[index % len(requests)]
            stubs = each[index % len(each)]
            index += 1
            begun = time.perf_counter()
            code = "OK"
            hint = False
            try:
                await stubs[method](payload, timeout=spec["timeout"])
            except grpc.aio.AioRpcError as error:
                code = error.code().name
                details.setdefault(code, (error.details() or "")[:120])
                hint = _retry_hinted(error)
            ended = time.perf_counter()
            total += 1
            if begun >= measured_from and ended <= until:
                if hint:
                    hinted.append(ended - begun)
                calls += 1
                codes[code] += 1
                if code == "OK":
                    latencies.append(ended - begun)
                elif code in ("RESOURCE_EXHAUSTED", "UNAVAILABLE"):
                    rejected.append(ended - begun)

        most = spec["max_calls"]
        if spec["rate"] > 0:
            interval = 1.0 / spec["rate"]
            pending: set[asyncio.Task[None]] = set()
            next_start = time.perf_counter()
            while next_start < until:
                await asyncio.sleep(max(0.0, next_start - time.perf_counter()))
                task = asyncio.ensure_future(one())
                pending.add(task)
                task.add_done_callback(pending.discard)
                next_start += interval
            await asyncio.gather(*pending)
        else:

            async def worker() -> None:
                while time.perf_counter() < until and not (most and index >= most):
                    await one()

            await asyncio.gather(*(worker() for _ in range(spec["concurrency"])))
        measured = min(time.perf_counter(), until) - measured_from
    finally:
        for channel in channels:
            await channel.close()
    return {
        "calls": calls,
        "seconds": measured,
        "latencies": latencies,
        "rejected": rejected,
        "hinted": hinted,
        "total": total,
        "codes": dict(codes),
        "details": details,
    }


def main() -> int:
    spec = json.loads(sys.stdin.read())
    result = asyncio.run(_client(spec))
    with contextlib.suppress(BrokenPipeError):
        sys.stdout.write(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
