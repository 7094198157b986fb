"""Calls the gate refuses leave decision records on both ports, like answered calls: a real server, no token."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import grpc.aio
import pytest

from tests.security.support import production_like
from tests.support import http_send
from verdict.v1 import verdict_pb2, verdict_pb2_grpc


def test_a_refused_call_is_a_decision_record_on_both_ports(tmp_path: Path) -> None:
    hostile = production_like(tmp_path)
    try:
        with grpc.insecure_channel(hostile.server.target) as channel:
            stub = verdict_pb2_grpc.VerdictServiceStub(channel)
            with pytest.raises(grpc.RpcError) as caught:
                stub.Evaluate(verdict_pb2.EvaluateRequest(output="1"), timeout=30)
            assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        status, _, _ = http_send(
            hostile.http_port,
            "POST",
            "/verdict.v1.VerdictService/Evaluate",
            b"{}",
            {"Content-Type": "application/json"},
        )
        assert status == 401
    finally:
        hostile.server.stop_and_read_logs()
    records = [json.loads(line) for line in hostile.decisions.read_text().splitlines()]
    refused = [(r["transport"], r["rpc"], r["code"], r["result"]["reason"]) for r in records]
    assert ("grpc", "Evaluate", "Unauthenticated", "CREDENTIALS_MISSING") in refused
    assert ("connect", "Evaluate", "Unauthenticated", "CREDENTIALS_MISSING") in refused


async def test_a_shed_call_is_a_decision_record(tmp_path: Path) -> None:
    from tests.support import make_config, serving

    log = tmp_path / "decisions.jsonl"
    config = make_config(decision_log="file", decision_log_path=str(log), min_deadline_seconds=30)
    async with serving(config) as running:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await running.stub.Evaluate(verdict_pb2.EvaluateRequest(output="1"), timeout=5)
        assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["rpc"], r["code"], r["result"]["reason"]) for r in records] == [
        ("Evaluate", "DeadlineExceeded", "DEADLINE_TOO_SHORT")
    ]
