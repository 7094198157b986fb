"""`verdict serve --workers 2`: real worker processes sharing one port under a real supervisor.

A killed worker is replaced while calls keep succeeding; SIGTERM drains every worker with calls in flight and exits 0
leaving no process behind; the supervisor's one /metrics counts exactly the calls made, whichever worker served them.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from tests.judges.support import FakeJudges, answer_stdout, processes_with_home_under
from tests.support import ServerProcess, process_running, start_server_process, stop_server_process
from verdict.server.cores import cpu_quota_cores
from verdict.v1 import verdict_pb2, verdict_pb2_grpc

TINY = verdict_pb2.VerifyResponseRequest(text='Done:\n```json\n{"x": 1}\n```\n', finish_reason="stop")


def workers_of(supervisor: int) -> list[int]:
    """The supervisor's child processes (its workers), from procfs."""
    with contextlib.suppress(OSError):
        return [int(pid) for pid in Path(f"/proc/{supervisor}/task/{supervisor}/children").read_text().split()]
    return []


def wait_for_workers(supervisor: int, count: int, *, excluding: tuple[int, ...] = (), within: float = 30) -> list[int]:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        pids = workers_of(supervisor)
        if len(pids) == count and not set(pids) & set(excluding):
            return pids
        time.sleep(0.05)
    raise AssertionError(f"expected {count} workers (not {excluding}), have {workers_of(supervisor)}")


def call_on_new_connection(target: str) -> verdict_pb2.VerifyResponseResponse:
    """One call on a fresh connection, so the kernel picks a worker for it anew. The channel has a subchannel pool
    of its own: from gRPC's global pool, a new channel can reuse a connection an earlier one left open, one made to
    the worker the test then kills."""
    with grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)]) as channel:
        stub = verdict_pb2_grpc.VerdictServiceStub(channel)
        response: verdict_pb2.VerifyResponseResponse = stub.VerifyResponse(TINY, timeout=20, wait_for_ready=True)
        return response


def scrape(port: int | None) -> str:
    assert port is not None
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        return str(reply.read().decode())


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample in exposition text (0 when absent)."""
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        if line.startswith(f"{name}{{{wanted}}} "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


@pytest.fixture
def two_workers() -> Iterator[ServerProcess]:
    server = start_server_process("--workers", "2")
    try:
        yield server
    finally:
        pids = workers_of(server.process.pid)
        stop_server_process(server)  # SIGTERM, so the supervisor removes its directory; SIGKILL if it hangs
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def test_a_killed_worker_is_replaced_and_calls_keep_succeeding(two_workers: ServerProcess) -> None:
    supervisor = two_workers.process.pid
    first = wait_for_workers(supervisor, 2)
    assert call_on_new_connection(two_workers.target).verdict == verdict_pb2.VERIFY_VERDICT_OK
    os.kill(first[0], signal.SIGKILL)
    # Connections the kernel queued on the killed worker's socket before it died are reset (as with any crash); the
    # ones made once it is gone must all be answered, by the survivor and then by the replacement.
    while process_running(first[0]):
        time.sleep(0.01)
    answered = 0
    deadline = time.monotonic() + 30
    while first[0] in workers_of(supervisor) or len(workers_of(supervisor)) < 2:
        assert time.monotonic() < deadline, f"no replacement worker: {workers_of(supervisor)}"
        assert call_on_new_connection(two_workers.target).verdict == verdict_pb2.VERIFY_VERDICT_OK
        answered += 1
    replaced = wait_for_workers(supervisor, 2, excluding=(first[0],))
    assert first[1] in replaced, "the surviving worker must not be restarted"
    for _ in range(20):
        assert call_on_new_connection(two_workers.target).verdict == verdict_pb2.VERIFY_VERDICT_OK
    assert two_workers.process.poll() is None
    assert answered > 0, "calls made while the worker was being replaced must have been answered"


def test_one_metrics_endpoint_counts_every_call_whichever_worker_served_it(two_workers: ServerProcess) -> None:
    from prometheus_client.mmap_dict import MmapedDict

    calls = 40
    for _ in range(calls):
        call_on_new_connection(two_workers.target)
    text = scrape(two_workers.metrics_port)
    labels = {"grpc_service": "verdict.v1.VerdictService", "grpc_method": "VerifyResponse", "grpc_type": "unary"}
    assert sample(text, "grpc_server_handled_total", **labels, grpc_code="OK") == calls
    assert sample(text, "grpc_server_started_total", **labels) == calls
    assert sample(text, "grpc_server_handling_seconds_count", **labels) == calls
    assert sample(text, "verdict_build_info", python=_python(), version=_version()) == 1
    # Each worker's own count, from its sample file: both served some of the calls (40 fresh connections).
    per_worker = []
    for pid in workers_of(two_workers.process.pid):
        directory = dict(_environ(pid))["PROMETHEUS_MULTIPROC_DIR"]
        values = MmapedDict.read_all_values_from_file(f"{directory}/counter_{pid}.db")  # type: ignore[no-untyped-call]
        handled = 0.0
        for key, value, *_ in values:
            _, name, labels, _ = json.loads(key)  # prometheus_client's mmap key: [metric, sample, labels, help]
            if name == "grpc_server_handled_total" and labels["grpc_method"] == "VerifyResponse":
                handled += value
        per_worker.append(handled)
    assert len(per_worker) == 2
    assert all(count > 0 for count in per_worker), per_worker
    assert sum(per_worker) == calls


def test_sigterm_drains_every_worker_with_calls_in_flight(tmp_path: Path) -> None:
    bin_dir, scratch = tmp_path / "bin", tmp_path / "scratch"
    bin_dir.mkdir()
    scratch.mkdir()
    judges = FakeJudges(bin_dir)
    judges.install("claude")
    answer = {"verdict": "yes", "confidence": 0.9, "reason": "done", "evidence": ""}
    judges.scenario({"sleep": 2, "stdout": answer_stdout("claude-code", answer)})
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "TMPDIR": str(scratch)}
    # Room for all six slow calls on one worker (the kernel may put every connection on one): admission's default
    # of 4 running per worker would refuse two of them, and this test is about the drain, not admission.
    flags = (
        "--workers",
        "2",
        "--judge-host",
        "claude-code",
        "--max-concurrent-rpcs",
        "8",
        "--max-concurrent-judges",
        "8",
    )
    server = start_server_process(*flags, env=env)
    supervisor = server.process.pid
    pids = wait_for_workers(supervisor, 2)
    channels = [grpc.insecure_channel(server.target) for _ in range(6)]
    try:
        config = verdict_pb2.EvaluatorConfig(llm_structured=verdict_pb2.LlmStructuredConfig(prompt="Done?"))
        # Distinct outputs: identical judge questions would share one ruling (the judge ruling cache).
        futures = [
            verdict_pb2_grpc.VerdictServiceStub(channel).Evaluate.future(
                verdict_pb2.EvaluateRequest(config=config, output=f"all {i} tests pass"), timeout=60
            )
            for i, channel in enumerate(channels)
        ]
        deadline = time.monotonic() + 20
        while len(judges.calls()) < len(futures):
            assert time.monotonic() < deadline, f"only {len(judges.calls())} judge calls started"
            time.sleep(0.02)
        server.process.send_signal(signal.SIGTERM)
        results = [future.result(timeout=30) for future in futures]
        # Each call got the judge's answer (its reason), not a cancellation or an error verdict.
        assert all(result.details["reason"] == "done" for result in results), results
        assert server.process.wait(timeout=30) == 0
    finally:
        for channel in channels:
            channel.close()
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists(), f"worker {pid} outlived its supervisor"
    assert not processes_with_home_under(scratch)
    assert not list(scratch.glob("verdict-workers-*")), "the supervisor must remove its directory"


def test_the_default_follows_the_cpu_quota(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    (root / "pods" / "one").mkdir(parents=True)
    (root / "cpu.max").write_text("max 100000\n")
    (root / "pods" / "cpu.max").write_text("150000 100000\n")
    (root / "pods" / "one" / "cpu.max").write_text("max 100000\n")
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "cgroup").write_text("0::/pods/one\n")
    affinity = len(os.sched_getaffinity(0))
    assert cpu_quota_cores(root, proc) == min(2, affinity)
    (root / "pods" / "cpu.max").write_text("max 100000\n")
    assert cpu_quota_cores(root, proc) == affinity
    v1 = tmp_path / "v1"
    (v1 / "cpu,cpuacct").mkdir(parents=True)
    (v1 / "cpu,cpuacct" / "cpu.cfs_quota_us").write_text("50000\n")
    (v1 / "cpu,cpuacct" / "cpu.cfs_period_us").write_text("100000\n")
    assert cpu_quota_cores(v1, proc) == 1


def _environ(pid: int) -> list[tuple[str, str]]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return [tuple(item.decode().split("=", 1)) for item in raw if b"=" in item]  # type: ignore[misc]


def _python() -> str:
    import platform

    return platform.python_version()


def _version() -> str:
    from verdict import __version__

    return __version__


def test_each_worker_serves_health_on_the_shared_ports() -> None:
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    server = start_server_process("--workers", "2", "--health-address", "127.0.0.1:0")
    try:
        assert server.health_port is not None
        assert server.health_port != server.grpc_port
        wait_for_workers(server.process.pid, 2)
        for port in (server.grpc_port, server.health_port):
            for _ in range(10):  # fresh connections, spread over both workers
                with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                    stub = health_pb2_grpc.HealthStub(channel)
                    answer = stub.Check(health_pb2.HealthCheckRequest(service="verdict.v1.VerdictService"), timeout=10)
                    assert answer.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        stop_server_process(server)


def _ready(server: ServerProcess) -> dict[str, object]:
    """The server's ready record; every line it (or a worker) wrote on stderr must be one JSON record."""
    return next(record for record in server.records() if record.get("event") == "serving")


def test_the_supervisor_and_a_single_process_log_ready_records_of_one_shape(two_workers: ServerProcess) -> None:
    """Both ready records come from `lifecycle.ready_record`: the same fields, whoever serves the port."""
    single = start_server_process("--health-address", "127.0.0.1:0")
    try:
        alone = _ready(single)
    finally:
        stop_server_process(single)
    supervised = _ready(two_workers)
    assert alone.keys() == supervised.keys()
    fields = {"event", "grpc_port", "metrics_port", "health_port", "http_port", "tls", "auth", "workers"}
    assert fields <= alone.keys()
    assert (alone["workers"], supervised["workers"]) == (1, 2)
    assert (alone["tls"], alone["auth"], alone["http_port"]) == (supervised["tls"], supervised["auth"], None)
    assert isinstance(alone["health_port"], int)
    assert supervised["health_port"] is None
    assert (alone["grpc_port"], supervised["grpc_port"]) == (single.grpc_port, two_workers.grpc_port)
