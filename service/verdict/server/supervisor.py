"""Every core: worker processes that share the gRPC port, under one supervisor.

One Python process runs Python code on one core at a time, so `workers: N` runs N copies of the single-process server
(`verdict.server.lifecycle.serve`), each binding the same gRPC (and health, and Connect HTTP) port with SO_REUSEPORT:
the kernel spreads incoming connections across them. The supervisor process serves no gRPC itself. It

- reserves the ports first (a port 0 in the configuration becomes one concrete port all workers share, and an address
  in use fails before any worker starts);
- starts the workers and prints one ready line once every worker printed its own;
- restarts a worker that exits while it should be running, with a backoff (0.25 s doubling to 30 s, back to the start
  once a worker has lived 30 s), so a worker that crashes at once cannot spin the CPU;
- on SIGTERM/SIGINT forwards the signal to every worker (each drains as a single-process server does: readiness
  NOT_SERVING, `grace_period_seconds` for in-flight calls), waits for them, kills any still alive a few seconds past
  the grace period, and exits 0; a second signal is forwarded too (each worker then cancels its calls at once);
- serves the one /metrics of the pod: prometheus_client's multiprocess mode, where every process writes its samples
  to files in a private directory (`PROMETHEUS_MULTIPROC_DIR`) and `MultiProcessCollector` sums them at scrape time.
  A dead worker's live gauges are dropped (`mark_process_dead`); its counters stay, so totals never go backwards.

Health needs nothing from the supervisor: each worker answers the health service on the shared port itself, so a
probe reaches a live worker's event loop, which is what it is meant to test.

Workers are fresh interpreters (`python -m verdict.server.workers CONFIG_FILE`, workers.py), not forks: a fork of a
process that has started grpc's threads is not safe, and prometheus_client picks its multiprocess value class at
import, which in a fresh interpreter happens after the environment variable is set.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

import yaml

from verdict.config.keys import ENV_PREFIX, Config
from verdict.errors import ConfigError
from verdict.runner import start_worker
from verdict.server.cores import cpu_quota_cores

__all__ = ["Supervisor", "resolve_workers", "supervise"]

log = logging.getLogger("verdict.workers")

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
BACKOFF_START_SECONDS = 0.25
BACKOFF_MAX_SECONDS = 30.0
HEALTHY_AFTER_SECONDS = 30.0
"""A worker that lived this long before dying restarts after the shortest backoff again."""
KILL_MARGIN_SECONDS = 5.0
"""How long past the grace period the supervisor waits for a draining worker before it kills it."""


def resolve_workers(config: Config) -> int:
    """The number of worker processes `config` asks for (0: the CPU quota's cores). Every port a worker serves (gRPC,
    health, the Connect HTTP port) is shared by all of them, so the HTTP port never limits the count."""
    return config.workers or cpu_quota_cores()


def _reserve(key: str, address: str) -> tuple[socket.socket, str]:
    """Bind `address` with SO_REUSEPORT (never listening, so the kernel hands it no connections) to hold the port for
    the workers and fail fast when it is taken; returns the socket and the address with its port made concrete."""
    host, _, port = address.rpartition(":")
    bare = host.strip("[]")
    try:
        infos = socket.getaddrinfo(bare or None, int(port), type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, sockaddr = infos[0]
        reservation = socket.socket(family, kind, proto)
    except (OSError, ValueError) as exc:
        raise ConfigError(key, f"cannot bind {address}: {exc}") from None
    try:
        reservation.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        reservation.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        if family == socket.AF_INET6 and bare in ("::", ""):
            reservation.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        reservation.bind(sockaddr)
    except OSError as exc:
        reservation.close()
        raise ConfigError(key, f"cannot bind {address} ({exc.strerror or exc})") from None
    bound = reservation.getsockname()[1]
    return reservation, f"{host}:{bound}"


@dataclasses.dataclass
class _Slot:
    """One worker position: the process filling it now, and how quickly its predecessors died."""

    index: int
    process: asyncio.subprocess.Process | None = None
    started: float = 0.0
    failures: int = 0


class Supervisor:
    """Runs `workers` copies of the server on shared ports and one aggregated /metrics. Use through `supervise`."""

    def __init__(self, config: Config, workers: int, env: Mapping[str, str]) -> None:
        self.config = config
        self.workers = workers
        self._env = {k: v for k, v in env.items() if not k.startswith(ENV_PREFIX)}
        self._slots = [_Slot(i) for i in range(workers)]
        self._stopping = False
        self._directory = Path(tempfile.mkdtemp(prefix="verdict-workers-"))
        self._metrics_dir = self._directory / "metrics"
        self._metrics_dir.mkdir()
        self._config_file = self._directory / "worker.yaml"
        self._reservations: list[socket.socket] = []
        self._watchers: list[asyncio.Task[None]] = []

    def _worker_config(self) -> Config:
        grpc_socket, grpc_address = _reserve("grpc_address", self.config.grpc_address)
        self._reservations.append(grpc_socket)
        health_address = self.config.health_address
        if health_address:
            health_socket, health_address = _reserve("health_address", health_address)
            self._reservations.append(health_socket)
        http_address = self.config.http_address
        if http_address:
            http_socket, http_address = _reserve("http_address", http_address)
            self._reservations.append(http_socket)
        return dataclasses.replace(
            self.config,
            grpc_address=grpc_address,
            health_address=health_address,
            http_address=http_address,
            metrics_address="",
            workers=1,
        )

    async def _spawn(self, slot: _Slot) -> int:
        """Start the worker of `slot` and wait for its ready line; its gRPC port. Raises ConfigError naming the
        worker when it exits before it is ready (a bad certificate, say: every worker would fail the same way)."""
        env = {**self._env, MULTIPROC_ENV: str(self._metrics_dir)}
        process = await start_worker((sys.executable, "-m", "verdict.server.workers", str(self._config_file)), env)
        slot.process, slot.started = process, time.monotonic()
        assert process.stdout is not None
        line = await process.stdout.readline()
        if not line:
            code = await process.wait()
            raise ConfigError("workers", f"worker {slot.index} exited with status {code} before serving")
        log.info("worker %d serving (pid %d)", slot.index, process.pid)
        return int(json.loads(line)["grpc_port"])

    async def _watch(self, slot: _Slot) -> None:
        """Wait for the worker of `slot` to exit; unless shutting down, start another after the backoff."""
        while True:
            process = slot.process
            assert process is not None
            code = await process.wait()
            self._mark_dead(process.pid)
            if self._stopping:
                return
            lived = time.monotonic() - slot.started
            slot.failures = 0 if lived >= HEALTHY_AFTER_SECONDS else slot.failures + 1
            delay = min(BACKOFF_MAX_SECONDS, BACKOFF_START_SECONDS * 2 ** max(0, slot.failures - 1))
            log.error(
                "worker %d (pid %d) exited with status %d; restarting in %.2fs", slot.index, process.pid, code, delay
            )
            await asyncio.sleep(delay)
            if self._stopping:
                return
            try:
                await self._spawn(slot)
            except (ConfigError, OSError, ValueError) as exc:
                log.error("worker %d did not start: %s", slot.index, exc)
                if slot.process is not None and slot.process.returncode is None:
                    slot.process.kill()

    def _mark_dead(self, pid: int) -> None:
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid, str(self._metrics_dir))  # type: ignore[no-untyped-call]

    def pids(self) -> list[int]:
        """Process ids of the workers running now."""
        return [s.process.pid for s in self._slots if s.process is not None and s.process.returncode is None]

    def signal_workers(self, signum: int) -> None:
        self._stopping = True
        for slot in self._slots:
            if slot.process is not None and slot.process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    slot.process.send_signal(signum)

    async def drain(self) -> None:
        """Wait for every worker to finish draining; kill the ones still alive past the grace period."""
        processes = [s.process for s in self._slots if s.process is not None]
        waiting = [asyncio.ensure_future(p.wait()) for p in processes]
        if waiting:
            await asyncio.wait(waiting, timeout=self.config.grace_period_seconds + KILL_MARGIN_SECONDS)
            for process in processes:
                if process.returncode is None:
                    log.warning("worker pid %d still running after the grace period; killing it", process.pid)
                    with contextlib.suppress(ProcessLookupError):
                        process.kill()
            await asyncio.gather(*waiting)
        for watcher in self._watchers:
            watcher.cancel()
        await asyncio.gather(*self._watchers, return_exceptions=True)

    async def run(self) -> int:
        """Serve until SIGTERM/SIGINT, then drain every worker; the exit status."""
        from prometheus_client import CollectorRegistry, values
        from prometheus_client.multiprocess import MultiProcessCollector

        from verdict.metrics import Metrics
        from verdict.rpc import SERVICE_DESCRIPTOR
        from verdict.security.gate import Gate
        from verdict.security.tls import Certificates
        from verdict.server.lifecycle import ready_record
        from verdict.server.scrape import MetricsHttpServer

        # This process's own samples (the /metrics server's rejections) go to the shared directory too.
        # prometheus_client chose its value class when it was imported, before the variable was set: choose again.
        os.environ[MULTIPROC_ENV] = str(self._metrics_dir)
        values.ValueClass = values.get_value_class()  # type: ignore[no-untyped-call]
        metrics = Metrics(CollectorRegistry(), model_labels=self.config.judge_model_labels)
        registry = CollectorRegistry()
        MultiProcessCollector(registry, path=str(self._metrics_dir))  # type: ignore[no-untyped-call]

        loop = asyncio.get_running_loop()
        stop = asyncio.Event()

        def on_signal(signum: int) -> None:
            self.signal_workers(signum)
            stop.set()

        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, on_signal, signum)
        http: MetricsHttpServer | None = None
        try:
            worker_config = self._worker_config()
            settings = {f.name: getattr(worker_config, f.name) for f in dataclasses.fields(worker_config)}
            plain = {k: list(v) if isinstance(v, tuple) else v for k, v in settings.items()}
            self._config_file.write_text(yaml.safe_dump(plain))
            if self.config.metrics_address:
                gate = Gate(self.config, [m.name for m in SERVICE_DESCRIPTOR.methods])
                http = MetricsHttpServer(
                    registry,
                    metrics,
                    gate,
                    Certificates.from_config(self.config),
                    max_connections=self.config.metrics_max_connections,
                    read_timeout_seconds=self.config.metrics_read_timeout_seconds,
                )
                http.port = await http.start(self.config.metrics_address)
            ports = await asyncio.gather(*(self._spawn(slot) for slot in self._slots))
            self._watchers = [asyncio.ensure_future(self._watch(slot)) for slot in self._slots]
            if not stop.is_set():
                ready = ready_record(
                    grpc_port=ports[0],
                    metrics_port=http.port if http else None,
                    health_port=_port(worker_config.health_address),
                    http_port=_port(worker_config.http_address),
                    tls=self.config.tls,
                    auth=self.config.auth,
                    workers=self.workers,
                )
                log.info("ready", extra={"fields": ready})
                log.info("supervising %d workers on port %d", self.workers, ports[0])
            await stop.wait()
            log.info("signal received; draining %d workers", self.workers)
            await self.drain()
            return 0
        finally:
            for slot in self._slots:  # only after a failed start: a drained worker has exited already
                if slot.process is not None and slot.process.returncode is None:
                    self._stopping = True
                    with contextlib.suppress(ProcessLookupError):
                        slot.process.kill()
                    await slot.process.wait()
            for reservation in self._reservations:
                reservation.close()
            if http is not None:
                await http.close()
            shutil.rmtree(self._directory, ignore_errors=True)


def _port(address: str) -> int | None:
    return int(address.rpartition(":")[2]) if address else None


async def supervise(config: Config, workers: int, *, env: Mapping[str, str] | None = None) -> int:
    """Run `workers` server processes under one supervisor until SIGTERM; the exit status. Raises ConfigError naming
    the key when an address cannot be bound or the workers cannot start."""
    return await Supervisor(config, workers, os.environ if env is None else env).run()
