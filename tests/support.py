"""A real server on port 0 and a real channel to it, in-process or as a child process (fixtures in conftest.py)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import importlib.util
import json
import os
import queue
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import IO, Any

import grpc
import grpc.aio
import h2.config
import h2.connection
from grpc_reflection.v1alpha import reflection_pb2
from prometheus_client import CollectorRegistry

from verdict.config.keys import Config
from verdict.server.assembly import App, build_server
from verdict.v1 import verdict_pb2_grpc


@dataclass
class Running:
    app: App
    channel: grpc.aio.Channel
    stub: verdict_pb2_grpc.VerdictServiceStub
    registry: CollectorRegistry


def make_config(**overrides: object) -> Config:
    values: dict[str, object] = {"grpc_address": "127.0.0.1:0", "metrics_address": ""}
    values.update(overrides)
    return Config(**values)  # type: ignore[arg-type]


class serving:
    """`async with serving(config) as running:` a started server and a channel to it."""

    def __init__(self, config: Config) -> None:
        self.config = config

    async def __aenter__(self) -> Running:
        self.registry = CollectorRegistry()
        self.app, port = await build_server(self.config, registry=self.registry, env=os.environ)
        await self.app.start()
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        return Running(self.app, self.channel, verdict_pb2_grpc.VerdictServiceStub(self.channel), self.registry)

    async def __aexit__(self, *exc: object) -> None:
        await self.channel.close()
        await self.app.stop(grace=1)


@dataclass
class ServerProcess:
    process: subprocess.Popen[str]
    grpc_port: int
    metrics_port: int | None
    log_lines: list[str] = field(default_factory=list)
    """Every stderr line the server wrote (JSON, one record each), read by a thread so the pipe never fills."""
    drained: threading.Event = field(default_factory=threading.Event)
    """Set when that thread has read stderr to its end (the server exited)."""
    health_port: int | None = None

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def stop_and_read_logs(self, timeout: float = 60) -> str:
        """SIGTERM, wait for the exit, and return everything the server wrote on stderr (its JSON log lines)."""
        self.process.terminate()
        self.process.wait(timeout=timeout)
        self.drained.wait(timeout)
        return "".join(self.log_lines)

    def records(self) -> list[dict[str, Any]]:
        """The server's log records so far, parsed; a line that is not one JSON object fails the test."""
        return [json.loads(line) for line in list(self.log_lines)]


def read_ready(
    process: subprocess.Popen[str], ready_timeout: float, drained: threading.Event | None = None
) -> tuple[dict[str, Any], list[str]]:
    """Read the server's JSON log lines on stderr until its `serving` record; returns it and the list of every line,
    which a daemon thread keeps filling afterwards (so a chatty server never blocks on a full pipe)."""
    assert process.stderr is not None
    lines: list[str] = []
    arrived: queue.Queue[str | None] = queue.Queue()

    def pump(stream: IO[str]) -> None:
        for line in stream:
            lines.append(line)
            arrived.put(line)
        arrived.put(None)
        if drained is not None:
            drained.set()

    threading.Thread(target=pump, args=(process.stderr,), daemon=True).start()
    deadline = time.monotonic() + ready_timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = arrived.get(timeout=left)
        except queue.Empty:
            break
        if line is None:
            break
        try:
            record = json.loads(line)
        except ValueError:  # a startup error is printed before logging exists
            continue
        if record.get("event") == "serving":
            return record, lines
    process.kill()
    process.wait()
    raise AssertionError(f"server did not become ready: {''.join(lines)}")


def start_server_process(
    *flags: str,
    env: dict[str, str] | None = None,
    ready_timeout: float = 30,
) -> ServerProcess:
    """`python -m verdict serve` on free ports with JSON logs; returns once it logged its ready record."""
    argv = [
        sys.executable,
        "-m",
        "verdict",
        "serve",
        "--grpc-address",
        "127.0.0.1:0",
        "--metrics-address",
        "127.0.0.1:0",
        # One process unless the test asks for workers (the default follows the machine's cores).
        "--workers",
        "1",
        "--log-format",
        "json",
        *flags,
    ]

    process = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env or dict(os.environ),
    )
    drained = threading.Event()
    ready, lines = read_ready(process, ready_timeout, drained)
    return ServerProcess(
        process, ready["grpc_port"], ready["metrics_port"], lines, drained, health_port=ready.get("health_port")
    )


def open_descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def lower_descriptor_limit(pid: int, headroom: int) -> int:
    """Set a running process's RLIMIT_NOFILE to the descriptors it holds now plus `headroom`; returns the limit.

    Lowered once the server is ready, never at its start: what a server holds at its peak while starting depends on
    how loaded the machine is (a margin measured on an idle probe left one starting beside CPU hogs without a
    descriptor for its poller), while what it holds once ready and idle does not."""
    limit = open_descriptors(pid) + headroom
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (limit, limit))
    return limit


def stop_server_process(server: ServerProcess) -> None:
    if server.process.poll() is None:
        server.process.send_signal(signal.SIGTERM)
        try:
            server.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.process.kill()


def grpc_frame(body: bytes, flags: int = 0) -> bytes:
    """One gRPC / gRPC-Web length-prefixed message."""
    return bytes([flags]) + len(body).to_bytes(4, "big") + body


def raw_grpc_call(port: int, path: str, headers: list[tuple[str, str]], message: bytes | None) -> dict[str, str]:
    """Open one HTTP/2 stream by hand and return every header the server answers with, trailers included.

    `message` is sent whole and closes the stream; None leaves the stream open with no message (what a slow or
    hostile client does). Reads until a `grpc-status` arrives or the server closes the connection: what grpcio's
    own client would hide (its INTERNAL, its wait for the body) is what these tests look at."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    connection.initiate_connection()
    head = [(":method", "POST"), (":scheme", "http"), (":authority", "x"), (":path", path)]
    connection.send_headers(1, [*head, ("content-type", "application/grpc"), ("te", "trailers"), *headers])
    if message is not None:
        connection.send_data(1, message, end_stream=True)
    sock.sendall(connection.data_to_send())
    answer: dict[str, str] = {}
    try:
        while "grpc-status" not in answer:
            data = sock.recv(65536)
            if not data:
                break
            for event in connection.receive_data(data):
                for key, value in getattr(event, "headers", None) or ():
                    answer[bytes(key).decode()] = bytes(value).decode()
            sock.sendall(connection.data_to_send())
    finally:
        sock.close()
    return answer


def http_send(
    port: int, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None, timeout: float = 30
) -> tuple[int, dict[str, str], bytes]:
    """One plain HTTP/1.1 request to the server's HTTP port, whatever its bytes: (status, lower-cased headers, body).
    http.client, not a Connect client, so the request can be anything a hostile caller could send."""
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        reply = connection.getresponse()
        return reply.status, {key.lower(): value for key, value in reply.getheaders()}, reply.read()
    finally:
        connection.close()


def connect_outcome(status: int, headers: dict[str, str], body: bytes) -> str:
    """The code a caller of the HTTP port sees: a Connect error body's `code`, a gRPC(-Web) status number (from the
    headers or the trailer frame), `ok`, or `http <status>` for an answer at the HTTP level (404, 405, 415)."""
    if "grpc-status" in headers:
        return headers["grpc-status"]
    if headers.get("content-type", "").startswith("application/grpc"):
        trailer = body[body.rfind(b"\x80") + 5 :].decode(errors="replace") if b"\x80" in body else ""
        fields = dict(line.split(": ", 1) for line in trailer.split("\r\n") if ": " in line)
        return fields.get("grpc-status", "0")
    if status == 200:
        return "ok"
    if headers.get("content-type", "").startswith("application/json") and body:
        return str(json.loads(body)["code"])
    return f"http {status}"


HTTP_SERVER_FAULTS = {
    "internal",
    "unknown",
    str(grpc.StatusCode.INTERNAL.value[0]),
    str(grpc.StatusCode.UNKNOWN.value[0]),
}
"""What `connect_outcome` returns for INTERNAL and UNKNOWN, in Connect's spelling and as gRPC status numbers."""


def process_running(pid: int) -> bool:
    """Whether `pid` is a live process; a zombie (dead, not yet reaped) counts as gone, once every thread of it is.

    Each thread is read: a killed process's main thread shows as a zombie while its other threads are still exiting,
    and its descriptors (listening sockets included) close only when the last of them has. A connection the kernel
    hands such a socket in that window is reset."""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return False
    for task in tasks:
        try:
            state = (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue  # this thread is gone
        if state not in ("Z", "X"):
            return True
    return False


def dies_within(pid: int, seconds: float = 30.0) -> bool:
    """Whether `pid` is gone within `seconds`. SIGKILL is delivered asynchronously: a killed process in uninterruptible
    sleep (a disk write on a loaded machine) stays listed until it leaves it, so a kill that was sent is observed as a
    death shortly after, not at the same instant."""
    deadline = time.monotonic() + seconds
    while process_running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def cpu_seconds(work: Callable[[], object], runs: int = 3) -> float:
    """The least CPU time this thread spent in `work()` over `runs` calls, with the garbage collector off.

    CPU time, not wall time: being descheduled on a loaded machine costs a thread nothing, and the least of a few runs
    drops the odd cache-cold or interrupted one. It still scales with the machine's speed, so only compare it with
    another `cpu_seconds` measured in the same test (see `growth`), never with a number of seconds."""
    best = float("inf")
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(runs):
            started = time.thread_time()
            work()
            best = min(best, time.thread_time() - started)
    finally:
        if enabled:
            gc.enable()
    return max(best, 1e-9)


def growth(work: Callable[[int], object], n: int, factor: int = 8) -> float:
    """How many times longer `work(factor * n)` takes than `work(n)` (`cpu_seconds` of each): about `factor` for
    linear work (less when a fixed cost dominates), about `factor ** 2` for quadratic work, on any machine, loaded or
    not. Assert `< factor ** 2 / 2` (32 for the default 8): four times the linear ratio, half the quadratic one.
    Choose `n` so that the quadratic version of `work` spends most of `work(n)` in its quadratic part."""
    return cpu_seconds(lambda: work(factor * n)) / cpu_seconds(lambda: work(n))


def load_script(name: str) -> ModuleType:
    """A file of scripts/ as a module (scripts/ is not a package), so a test can call a generator's `main` itself."""
    path = Path(__file__).resolve().parents[1] / "scripts" / name
    spec = importlib.util.spec_from_file_location(f"scripts_{path.stem}", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def list_services_once(
    channel: grpc.aio.Channel, metadata: tuple[tuple[str, str], ...] | None = None
) -> list[str]:
    """Ask reflection for the service list in one batch (metadata, message, half-close), as a unary call sends it.

    A streaming client sends its message in a separate batch, and when the server refuses the call first (auth,
    reflection off) that send can lose the race and report the client's own INTERNAL instead of the server's code;
    one batch always reports the server's status.
    """
    call = channel.unary_unary(
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )
    response = await call(reflection_pb2.ServerReflectionRequest(list_services=""), timeout=30, metadata=metadata)
    return [service.name for service in response.list_services_response.service]


async def busy_loop_until(done: asyncio.Future[Any], seconds: float) -> None:
    """Keep the running loop busy, never idle in its selector, until `done` or `seconds` have passed: two coroutines
    that each spin 1 ms of Python between `sleep(0)`s, as a saturated server's loop runs (every turn polls the
    selector with a zero timeout). What a helper thread needing the GIL must get through (verdict/handoff.py)."""
    end = time.monotonic() + seconds

    async def spin() -> None:
        while not done.done() and time.monotonic() < end:
            started = time.perf_counter()
            while time.perf_counter() - started < 0.001:
                pass
            await asyncio.sleep(0)

    await asyncio.gather(spin(), spin())


GIL_HAND_BACKS = 20
"""How often `needs_the_gil_often` gives the GIL back and takes it again."""


def needs_the_gil_often() -> int:
    """A job that takes the GIL `GIL_HAND_BACKS` times (each `sleep(0)` lets it go): a starved thread waits at every
    one. Returns that count."""
    for _ in range(GIL_HAND_BACKS):
        time.sleep(0)
    return GIL_HAND_BACKS


async def gil_hungry_chains(pool: concurrent.futures.Executor, chains: int, length: int) -> list[int]:
    """`chains` chains of `length` `needs_the_gil_often` jobs run one after another on `pool`; each chain's total
    of hand-backs."""
    loop = asyncio.get_running_loop()

    async def chain() -> int:
        total = 0
        for _ in range(length):
            total += await loop.run_in_executor(pool, needs_the_gil_often)
        return total

    return list(await asyncio.gather(*(chain() for _ in range(chains))))


async def counted(
    registry: CollectorRegistry, name: str, labels: dict[str, str], expected: float, *, seconds: float = 60.0
) -> float | None:
    """The sample `name{labels}` once it reads `expected`, or what it reads after about `seconds` (a liveness bound,
    not a timing). The server counts a call as its handler ends: for an aborted call, or a stream whose last message
    the client has read, that can come a loop turn after the caller saw the outcome."""
    for _ in range(round(seconds / 0.01)):
        if registry.get_sample_value(name, labels) == expected:
            break
        await asyncio.sleep(0.01)
    return registry.get_sample_value(name, labels)
