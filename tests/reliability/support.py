"""Helpers shared by the tests of this folder (fixtures stay in conftest.py, which uses them).

The fuzz and fault suite's real server, its judge stand-in, and the checks every test ends with.

One `verdict serve` child process per module (a real server, its own process, so descriptors and descendants are
counted for it alone), with the fake judge CLI installed as `claude` and a workspace root holding a git repository.
Hypothesis runs under one of two profiles: `bounded` (the default, what `make test` runs, about a minute in all)
and `long` (`VERDICT_FUZZ_PROFILE=long`, `make fuzz-long`). With VERDICT_FUZZ_REPORT=<file>, the number of requests
sent per RPC is written there at the end of the session (docs/reliability.md quotes it).
"""

from __future__ import annotations

import collections
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from hypothesis import HealthCheck, settings

from tests.judges.support import FakeJudges
from tests.support import (
    HTTP_SERVER_FAULTS,
    ServerProcess,
    connect_outcome,
    http_send,
    open_descriptors,
)
from verdict.runner import marked_processes
from verdict.v1 import verdict_pb2, verdict_pb2_grpc

settings.register_profile(
    "bounded",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)


settings.register_profile(
    "long",
    max_examples=1500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)


settings.load_profile(os.environ.get("VERDICT_FUZZ_PROFILE", "bounded"))


SERVER_FAULTS = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}


SENT: collections.Counter[str] = collections.Counter()


"""Requests sent per RPC (and per fault scenario) in this session."""


YES = {"verdict": "yes", "verdict_a": "yes", "verdict_b": "no", "confidence": 0.9, "reason": "fine", "evidence": "ok"}


def marked(prefix: str) -> list[int]:
    """Live processes carrying a runner marker that starts with `prefix` (the server's pid and a dot)."""
    return marked_processes(prefix, prefix=True)


def settled_descriptors(pid: int) -> int:
    """The descriptor count once the previous test's connections have finished closing (two equal readings 100 ms
    apart, for at most 3 s), so a socket still closing is not taken as this test's baseline and then as its leak."""
    previous, deadline = open_descriptors(pid), time.monotonic() + 3
    while time.monotonic() < deadline:
        time.sleep(0.1)
        current = open_descriptors(pid)
        if current == previous:
            return current
        previous = current
    return previous


@dataclass
class FuzzServer:
    """A running server, a sync channel to it, and its fake judge."""

    server: ServerProcess
    channel: grpc.Channel
    stub: verdict_pb2_grpc.VerdictServiceStub
    judges: FakeJudges
    workspace: Path
    faults: list[str] = field(default_factory=list)
    log_seen: int = 0
    """How many of the server's log lines `check` has already scanned for the HTTP server's errors."""

    @property
    def pid(self) -> int:
        return self.server.process.pid

    @property
    def http_port(self) -> int:
        """The HTTP (Connect) port, from the server's ready record."""
        ready = next(record for record in self.server.records() if record.get("event") == "serving")
        return int(ready["http_port"])

    def http(self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None) -> str:
        """One request to the HTTP port, whatever its bytes; the code the caller sees (`connect_outcome`). INTERNAL,
        UNKNOWN, a 5xx (but 501, Connect's `unimplemented`, and a 504 for a deadline the caller set in
        Connect-Timeout-Ms) or a traceback in the body is recorded as a fault."""
        SENT[f"http {path.split('?', 1)[0].rsplit('/', 1)[-1]}"] += 1
        status, answered, raw = http_send(self.http_port, method, path, body, headers)
        code = connect_outcome(status, answered, raw)
        # A deadline the caller set too short for any work is refused with Connect's 504: the caller's doing.
        own_deadline = code == "deadline_exceeded" and "connect-timeout-ms" in {key.lower() for key in headers or {}}
        if code in HTTP_SERVER_FAULTS or (status >= 500 and status != 501 and not own_deadline) or b"Traceback" in raw:
            self.faults.append(f"http {method} {path[:80]}: {status} {code} {raw[:200]!r}")
        return code

    def call(self, method: str, request: Any, timeout: float = 30) -> Any:
        """One call to VerdictService; a server fault is recorded (and reported by `check`), any other status is
        an answer."""
        SENT[method] += 1
        try:
            return getattr(self.stub, method)(request, timeout=timeout)
        except grpc.RpcError as error:
            code = error.code()
            if code in SERVER_FAULTS:
                self.faults.append(f"{method}: {code.name} {error.details()}")
            return code

    def raw(self, path: str, data: bytes, streaming: str = "unary") -> grpc.StatusCode:
        """Send undecodable or mutated bytes to any method the server hosts; the status code it answers with."""
        SENT[f"bytes {path.rsplit('/', 1)[-1]}"] += 1
        try:
            if streaming == "unary":
                self.channel.unary_unary(path)(data, timeout=10)
            elif streaming == "server":
                for _ in self.channel.unary_stream(path)(data, timeout=10):
                    break
            else:
                for _ in self.channel.stream_stream(path)(iter([data]), timeout=10):
                    break
        except grpc.RpcError as error:
            code: grpc.StatusCode = error.code()
            if code in SERVER_FAULTS:
                self.faults.append(f"{path}: {code.name} {error.details()}")
            return code
        return grpc.StatusCode.OK

    def leftovers(self, settle: float = 5) -> list[int]:
        """Processes of any call still alive, after giving killed ones a moment to go."""
        deadline = time.monotonic() + settle
        found = marked(f"{self.pid}.")
        while found and time.monotonic() < deadline:
            time.sleep(0.05)
            found = marked(f"{self.pid}.")
        return found

    def _log_barrier(self) -> None:
        """One more HTTP call, and wait for its access line: what the server logged about earlier calls (an
        exception Hypercorn caught after the answer went out) is then in `log_lines`."""
        request_id = f"log-barrier-{time.monotonic_ns()}"
        headers = {"Content-Type": "application/json", "x-request-id": request_id}
        http_send(self.http_port, "POST", "/verdict.v1.VerdictService/ListEvaluators", b"{}", headers)
        deadline = time.monotonic() + 10
        while not any(request_id in line for line in self.server.log_lines[self.log_seen :]):
            assert time.monotonic() < deadline, "the server never logged the barrier call"
            time.sleep(0.02)

    def check(self, baseline_descriptors: int) -> None:
        """What every test ends with: no INTERNAL or UNKNOWN, no process of any call left, no descriptor growth."""
        faults, self.faults = self.faults, []
        assert faults == [], faults[:10]
        assert self.leftovers() == []
        # Descriptors are counted before the log barrier: the barrier's own HTTP connection may still be closing on
        # the server's side (a loaded machine), and it is not the test's.
        deadline = time.monotonic() + 10
        while open_descriptors(self.pid) > baseline_descriptors and time.monotonic() < deadline:
            time.sleep(0.05)
        assert open_descriptors(self.pid) <= baseline_descriptors, (open_descriptors(self.pid), baseline_descriptors)
        self._log_barrier()
        lines, self.log_seen = self.server.log_lines[self.log_seen :], len(self.server.log_lines)
        http_errors = [
            line for line in lines if '"logger":"verdict.http"' in line and '"level":"ERROR"' in line
        ]  # Hypercorn logs an exception the application let through ("Error in ASGI Framework") at ERROR
        assert http_errors == [], http_errors[:3]


def warm_up(running: FuzzServer) -> None:
    """Start everything the server starts lazily (the parse pool's workers and their pipes, a judge, bash, git),
    so descriptor counts afterwards compare like with like."""
    big = "```python\n" + "x = 1\n" * 20_000 + "```\n```bash\necho hi\n```"
    for _ in range(3):
        running.call("VerifyResponse", verdict_pb2.VerifyResponseRequest(text=big, finish_reason="stop"))
    llm = verdict_pb2.EvaluatorConfig(llm_structured=verdict_pb2.LlmStructuredConfig(prompt="ok?"))
    running.call("Evaluate", verdict_pb2.EvaluateRequest(config=llm, output="ok"))
    diff = verdict_pb2.EvaluatorConfig(diff_stall=verdict_pb2.DiffStallConfig())
    running.call("Evaluate", verdict_pb2.EvaluateRequest(config=diff, workspace="repo"))
    running.call("ListEvaluators", verdict_pb2.ListEvaluatorsRequest())
    running.http("POST", "/verdict.v1.VerdictService/ListEvaluators", b"{}", {"Content-Type": "application/json"})
    assert running.faults == []
