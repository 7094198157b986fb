"""Small in-process Verdict servers that misbehave on purpose, for what a real server cannot be asked to do."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from concurrent import futures
from dataclasses import dataclass, field
from typing import Any

import grpc

from verdict.v1 import verdict_pb2, verdict_pb2_grpc


@dataclass
class Recorder(verdict_pb2_grpc.VerdictServiceServicer):
    """Fails the first `failures` calls with `failure_code`, then answers; records what each call carried."""

    name: str = "fake"
    failures: int = 0
    failure_code: grpc.StatusCode = grpc.StatusCode.UNAVAILABLE
    failure_status: Any = None
    """A google.rpc.Status to fail with instead: sent in the details trailer, its message and code used as is."""
    attempts: int = 0
    time_remaining: list[float] = field(default_factory=list)
    metadata: list[dict[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    hang: bool = False
    """Never answer (until the fake server stops): the caller's deadline must end the call."""
    released: threading.Event = field(default_factory=threading.Event)

    def _record(self, context: Any) -> None:
        with self.lock:
            self.attempts += 1
            attempt = self.attempts
        self.time_remaining.append(context.time_remaining())
        self.metadata.append(dict(context.invocation_metadata()))
        if self.hang:
            self.released.wait(timeout=30)
        if attempt <= self.failures:
            if self.failure_status is not None:
                context.set_trailing_metadata([("grpc-status-details-bin", self.failure_status.SerializeToString())])
            context.abort(self.failure_code, f"attempt {attempt} refused")

    def VerifyResponse(self, request: Any, context: Any) -> verdict_pb2.VerifyResponseResponse:
        self._record(context)
        return verdict_pb2.VerifyResponseResponse(verdict=verdict_pb2.VERIFY_VERDICT_OK, detail=self.name)

    def Evaluate(self, request: Any, context: Any) -> verdict_pb2.EvaluateResponse:
        self._record(context)
        return verdict_pb2.EvaluateResponse(verdict="yes")

    def ListEvaluators(self, request: Any, context: Any) -> verdict_pb2.ListEvaluatorsResponse:
        self._record(context)
        return verdict_pb2.ListEvaluatorsResponse()

    def BatchVerifyResponses(self, request: Any, context: Any) -> verdict_pb2.BatchVerifyResponsesResponse:
        self._record(context)
        response = verdict_pb2.BatchVerifyResponsesResponse()
        for _ in request.items:
            response.results.add().response.CopyFrom(
                verdict_pb2.VerifyResponseResponse(verdict=verdict_pb2.VERIFY_VERDICT_OK, detail=self.name)
            )
        return response

    def BatchEvaluate(self, request: Any, context: Any) -> verdict_pb2.BatchEvaluateResponse:
        self._record(context)
        response = verdict_pb2.BatchEvaluateResponse()
        for _ in request.items:
            response.results.add().response.verdict = "yes"
        return response


@contextlib.contextmanager
def fake_server(recorder: Recorder, credentials: Any = None) -> Iterator[int]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    verdict_pb2_grpc.add_VerdictServiceServicer_to_server(recorder, server)
    if credentials is None:
        port = server.add_insecure_port("127.0.0.1:0")
    else:
        port = server.add_secure_port("127.0.0.1:0", credentials)
    server.start()
    try:
        yield port
    finally:
        recorder.released.set()
        server.stop(grace=None)
