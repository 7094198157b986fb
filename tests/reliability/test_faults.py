"""Judge fault scenarios against a real server: hang (with a worker that ignores SIGTERM), crash, flood, a `setsid`
grandchild holding stdout, a daemonising grandchild, a missing binary. Each ends in a verdict (the answer kept when
the judge gave one), no process of the call left behind, and no descriptor growth; SIGTERM of a server mid-call
leaves no descendant either."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from tests.judges.support import FakeJudges, answer_stdout
from tests.reliability.support import SENT, YES, FuzzServer, marked
from tests.support import dies_within, process_running, start_server_process
from verdict.v1 import verdict_pb2, verdict_pb2_grpc

ANSWER = answer_stdout("claude-code", YES)
LLM = verdict_pb2.EvaluatorConfig(llm_structured=verdict_pb2.LlmStructuredConfig(prompt="did it pass?"))

SCENARIOS: dict[str, tuple[dict[str, Any], str, str | None]] = {
    # name: (fake judge step, expected verdict, the details flag that says why)
    "answers": ({"stdout": ANSWER}, "yes", None),
    "hangs with a worker ignoring SIGTERM": ({"hang": True, "orphan": True}, "error", "timeout"),
    "crashes": ({"signal": "SIGSEGV"}, "error", "api_error"),
    "floods stdout": ({"flood": True}, "error", "timeout"),
    "setsid grandchild holds stdout": ({"detach": True, "stdout": ANSWER}, "yes", None),
    "daemonises a grandchild": ({"daemon": True, "stdout": ANSWER}, "yes", None),
    "exits 1 with nothing": ({"rc": 1}, "error", "api_error"),
    "prints nothing": ({"stdout": ""}, "error", "empty_output"),
}


def _escaped(judges: FakeJudges) -> list[int]:
    directory = judges.bin_dir / "escaped"
    return [int(path.name) for path in directory.iterdir()] if directory.is_dir() else []


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_a_judge_fault_ends_in_a_verdict_and_leaves_nothing_behind(fuzz: FuzzServer, scenario: str) -> None:
    step, verdict, flag = SCENARIOS[scenario]
    fuzz.judges.scenario(step)
    SENT[f"fault: {scenario}"] += 1
    answer = fuzz.call("Evaluate", verdict_pb2.EvaluateRequest(config=LLM, output="ok"))
    assert isinstance(answer, verdict_pb2.EvaluateResponse), answer
    details = json_format.MessageToDict(answer.details)
    assert answer.verdict == verdict, details
    if flag is not None:
        assert details.get(flag) is True, details
    else:
        assert "timeout" not in details, "the answer was kept, not thrown away at the time limit"
    for pid in _escaped(fuzz.judges):
        assert dies_within(pid), f"escaped grandchild {pid} outlived its call"


def test_a_missing_judge_binary_is_an_error_verdict(fuzz: FuzzServer) -> None:
    binary = fuzz.judges.bin_dir / "claude"
    hidden = binary.with_name("claude.hidden")
    binary.rename(hidden)
    try:
        SENT["fault: missing binary"] += 1
        answer = fuzz.call("Evaluate", verdict_pb2.EvaluateRequest(config=LLM, output="ok"))
    finally:
        hidden.rename(binary)
    assert isinstance(answer, verdict_pb2.EvaluateResponse), answer
    assert answer.verdict == "error"
    assert json_format.MessageToDict(answer.details).get("missing_dependency") is True


def test_sigterm_mid_call_leaves_no_descendant(tmp_path: Path) -> None:
    """A judge that leaves a setsid grandchild and a daemon behind and then hangs: SIGTERM, a drain shorter than
    the judge, and every process the call started is gone when the server has exited."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    judges = FakeJudges(bin_dir)
    judges.install("claude")
    judges.scenario({"detach": True, "hang": True, "orphan": True})
    server = start_server_process(
        "--judge-host",
        "claude-code",
        "--judge-timeout-seconds",
        "120",
        "--grace-period-seconds",
        "1",
        env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "TMPDIR": str(tmp_path)},
    )
    prefix = f"{server.process.pid}."
    codes: list[grpc.StatusCode] = []

    def ask() -> None:
        with grpc.insecure_channel(server.target) as channel:
            try:
                verdict_pb2_grpc.VerdictServiceStub(channel).Evaluate(
                    verdict_pb2.EvaluateRequest(config=LLM, output="ok"), timeout=60
                )
                codes.append(grpc.StatusCode.OK)
            except grpc.RpcError as error:
                codes.append(error.code())

    caller = threading.Thread(target=ask)
    caller.start()
    deadline = time.monotonic() + 30
    while (len(marked(prefix)) < 3 or not _escaped(judges)) and time.monotonic() < deadline:
        time.sleep(0.05)
    started = marked(prefix)
    assert len(started) >= 3, "the judge, its worker and its setsid grandchild are running"
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=60) == 0
    caller.join(timeout=60)
    assert codes
    assert codes[0] not in {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}
    time.sleep(0.2)
    assert marked(prefix) == []
    assert [pid for pid in started if process_running(pid)] == []
    assert [pid for pid in _escaped(judges) if process_running(pid)] == []
