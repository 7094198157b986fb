"""Decision records with `workers: 2` and a file decision log rotated many times: every call's record reaches the
files exactly once. The standard library's rotating handler, one per worker on one path, lost 0 to 132 records of
3,000 per run; the shared sink (rpc/decisions/sinks.py) rotates under one lock and appends with O_APPEND."""

from __future__ import annotations

import concurrent.futures
import json
from pathlib import Path

import grpc
import pytest

from tests.e2e.test_workers import wait_for_workers
from tests.support import start_server_process
from verdict.rpc.decisions.sinks import FileSink
from verdict.v1 import verdict_pb2, verdict_pb2_grpc

CALLS = 3000
CONNECTIONS = 30
"""Connections are spread over the workers by the kernel (SO_REUSEPORT); thirty reach both with near certainty."""


def _records(path: Path) -> list[dict[str, object]]:
    records: list[dict[str, object]] = []
    for part in [path, *path.parent.glob(path.name + ".*")]:
        records.extend(json.loads(line) for line in part.read_text().splitlines())
    return records


def _calls(target: str, first: int, count: int) -> None:
    # A local subchannel pool: channels of one process otherwise share one connection, i.e. one worker.
    with grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)]) as channel:
        stub = verdict_pb2_grpc.VerdictServiceStub(channel)
        for index in range(first, first + count):
            stub.ListEvaluators(
                verdict_pb2.ListEvaluatorsRequest(), metadata=(("x-request-id", f"call-{index}"),), timeout=30
            )


@pytest.mark.parametrize("run", range(3))
def test_no_record_is_lost_or_duplicated_with_two_workers(tmp_path: Path, run: int) -> None:
    """3 x 3,000 calls over 30 connections to two real workers; the file and its backups hold a run's records only
    if every rotation happens once and fills its file (RotatingFileHandler per worker lost records here)."""
    log = tmp_path / "decisions.jsonl"
    config = tmp_path / "verdict.yaml"
    config.write_text(
        json.dumps(
            {
                "decision_log": "file",
                "decision_log_path": str(log),
                # A run writes about 0.9 MB: rotated at 200 KiB, the file and 5 backups hold all of it when each
                # rotation happens once; a worker rotating a file another already rotated pushes records out.
                "decision_log_max_bytes": 64 * 1024,
                "decision_log_backups": 15,
            }
        )
    )
    server = start_server_process("--config", str(config), "--workers", "2")
    try:
        wait_for_workers(server.process.pid, 2)
        per_connection = CALLS // CONNECTIONS
        with concurrent.futures.ThreadPoolExecutor(CONNECTIONS) as pool:
            done = [
                pool.submit(_calls, server.target, start, per_connection) for start in range(0, CALLS, per_connection)
            ]
            for call in done:
                call.result()
    finally:
        server.stop_and_read_logs()
    seen = [record["request_id"] for record in _records(log) if record["rpc"] == "ListEvaluators"]
    assert len(list(tmp_path.glob("decisions.jsonl.*"))) >= 4, "the log must have rotated several times"
    assert len(seen) == len(set(seen)), "a record was written twice"
    assert set(seen) == {f"call-{index}" for index in range(CALLS)}, f"{CALLS - len(set(seen))} records lost"


def test_two_sinks_on_one_path_rotate_as_one_writer_would(tmp_path: Path) -> None:
    """Two workers' sinks, interleaved deterministically: each rotation happens once, every file is filled to
    max_bytes, so the file and its backups hold exactly what one writer's would. (Two RotatingFileHandlers each
    rotated by their own descriptor's size: a worker wrote on into a file the other had rotated away, rotated it
    again, and the extra, half-empty files pushed records past the last backup.)"""
    log = tmp_path / "decisions.jsonl"
    line_bytes = len('{"n": "0000"}\n')
    sinks = [FileSink(str(log), max_bytes=10 * line_bytes, backups=9) for _ in range(2)]
    try:
        for index in range(100):  # exactly ten full files of ten records
            sinks[index % 2].write([f'{{"n": "{index:04d}"}}'])
    finally:
        for sink in sinks:
            sink.close()
    lines = [line for part in [log, *tmp_path.glob("decisions.jsonl.*")] for line in part.read_text().splitlines()]
    assert sorted(int(json.loads(line)["n"]) for line in lines) == list(range(100))
    assert len(list(tmp_path.glob("decisions.jsonl.*"))) == 9
