"""What the gRPC port answers a message with the compressed flag and no `grpc-encoding`, and one with an encoding it
does not support: grpc-core answers both INTERNAL before any Python (interceptor, generic handler) sees the call.
The gRPC compression spec asks UNIMPLEMENTED for the second; this pins today's answer and that the server stays
healthy, so an upgrade that fixes it shows up here (docs/upstream/grpc-unknown-encoding.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.security.support import TOKEN, healthy, production_like
from tests.support import grpc_frame, raw_grpc_call, stop_server_process


def _status(port: int, encoding: str | None) -> dict[str, str]:
    headers = [("authorization", f"Bearer {TOKEN}")] + ([("grpc-encoding", encoding)] if encoding is not None else [])
    return raw_grpc_call(port, "/verdict.v1.VerdictService/ListEvaluators", headers, grpc_frame(b"", 1))


@pytest.mark.parametrize("encoding", [None, "br"])
def test_grpc_core_answers_internal_and_the_server_stays_healthy(tmp_path: Path, encoding: str | None) -> None:
    server = production_like(tmp_path)
    try:
        answer = _status(server.server.grpc_port, encoding)
        assert answer.get("grpc-status") == "13", answer  # INTERNAL, from grpc-core; the spec says UNIMPLEMENTED
        assert healthy(server.server.grpc_port)
    finally:
        stop_server_process(server.server)
