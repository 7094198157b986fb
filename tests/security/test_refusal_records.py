"""Calls the gate refuses leave decision records on both ports, like answered calls: a real server, no token."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
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
