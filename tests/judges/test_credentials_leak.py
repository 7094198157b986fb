"""A planted API key, a real `verdict serve` at DEBUG, every way a judge call can go, and a grep of every output.

The server runs as a child process (so its logs are the real stderr, its metrics the real /metrics page) with its
judge pointed at a local OpenAI-compatible endpoint that requires the key and, where it fails, quotes it back. Then
the key is searched for in: the server's stdout and stderr, every response (verdict, details, state), every gRPC
error (message, trailing metadata and rich status), and the /metrics text. Each scenario is also checked to have
happened (the endpoint saw the header, the outcome counters moved), so the grep cannot pass on calls that never ran.
"""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format

from tests.judges.support import ChatServer, chat_body
from tests.support import ServerProcess, start_server_process, stop_server_process
from verdict.v1 import verdict_pb2, verdict_pb2_grpc

KEY = "sk-or-v1-PLANTED0e3c9d1b7a5f42c8b6d0e9a1f3c5b7d9"


def judged(output: str = "All 42 tests passed\n", *, fresh: bool = True) -> verdict_pb2.EvaluateRequest:
    """The same question each time; `fresh` (the default here) makes every scenario reach the judge instead of
    replaying the first ruling from the ruling cache."""
    return verdict_pb2.EvaluateRequest(
        config=verdict_pb2.EvaluatorConfig(llm_structured=verdict_pb2.LlmStructuredConfig(fresh=fresh)), output=output
    )


class Outputs:
    """Everything the server wrote or answered, kept as text to grep."""

    def __init__(self) -> None:
        self.texts: list[tuple[str, str]] = []

    def add(self, where: str, text: str | bytes) -> None:
        self.texts.append((where, text.decode("latin-1") if isinstance(text, bytes) else text))

    def response(self, where: str, response: verdict_pb2.EvaluateResponse | verdict_pb2.VerifyResponseResponse) -> None:
        self.add(where, json_format.MessageToJson(response))
        self.add(f"{where} (wire)", response.SerializeToString())

    def error(self, where: str, error: grpc.RpcError) -> None:
        assert isinstance(error, grpc.Call)
        self.add(where, f"{error.code()} {error.details()} {error.debug_error_string()}")
        for key, value in error.trailing_metadata() or ():
            self.add(f"{where} metadata {key}", value)


@pytest.fixture
def server(tmp_path: Path, chat_server: ChatServer) -> Iterator[tuple[ServerProcess, list[str]]]:
    key_file = tmp_path / "judge-key"
    key_file.write_text(KEY + "\n")
    env = {
        **os.environ,
        "VERDICT_LOG_LEVEL": "DEBUG",
        # an in-flight limit keeps access control in the chain, whose DEBUG line per call proves DEBUG is on
        "VERDICT_MAX_CALLS_PER_CONNECTION": "64",
        "VERDICT_JUDGE_HOST": chat_server.url,
        "VERDICT_JUDGE_API_KEY_FILE": str(key_file),
        "VERDICT_JUDGE_TIMEOUT_SECONDS": "2",
        "VERDICT_SECOND_OPINION": "true",
        "VERDICT_SECOND_OPINION_HOST": f"{chat_server.url}/v1",
        "VERDICT_SECOND_OPINION_MIN_TOKENS": "1",
    }
    process = start_server_process(env=env)
    try:
        # the lines the server's one stderr reader keeps collecting (a second reader of the pipe would take some)
        yield process, process.log_lines
    finally:
        stop_server_process(process)


def test_the_key_appears_in_no_output(server: tuple[ServerProcess, list[str]], chat_server: ChatServer) -> None:
    process, stderr = server
    outputs = Outputs()
    chat_server.key = KEY
    quoting = {"verdict": "yes", "confidence": 0.9, "reason": f"you sent {KEY}", "evidence": "All 42 tests passed"}
    scenarios: list[tuple[str, tuple[object, ...]]] = [
        ("success quoting the key", (200, chat_body(json.dumps(quoting)))),
        ("server error body is the key", (500, KEY)),
        ("not json, quoting the key", (200, f"<html>{KEY}</html>")),
        ("empty body", (200, "")),
        ("a reply with no answer in it", (200, chat_body(f"I cannot judge this. {KEY}"))),
        ("timeout", (200, chat_body(json.dumps(quoting)), 10)),
    ]
    verdicts = {}
    with grpc.insecure_channel(process.target) as channel:
        stub = verdict_pb2_grpc.VerdictServiceStub(channel)
        for name, reply in scenarios:
            chat_server.replies = [reply]
            response = stub.Evaluate(judged(), timeout=30)
            outputs.response(name, response)
            verdicts[name] = response.verdict

        chat_server.replies = [(200, chat_body(json.dumps(quoting)))]
        stored = stub.Evaluate(judged(fresh=False), timeout=30)
        replayed = stub.Evaluate(judged(fresh=False), timeout=30)  # from the ruling cache
        outputs.response("a ruling stored", stored)
        outputs.response("a ruling replayed", replayed)
        assert json_format.MessageToDict(replayed.details)["cached"] is True

        chat_server.key = "sk-some-other-key"  # the endpoint now refuses ours, quoting the header it got
        chat_server.replies = [(200, chat_body(json.dumps(quoting)))]
        refused = stub.Evaluate(judged(), timeout=30)
        outputs.response("401 quoting the header", refused)
        chat_server.key = KEY

        chat_server.replies = [(200, chat_body(json.dumps({"ok": False, "reason": f"bad, and {KEY}"})))]
        opinion = stub.VerifyResponse(
            verdict_pb2.VerifyResponseRequest(text="A long answer. " * 50 + "And", completion_tokens=5000), timeout=30
        )
        outputs.response("second opinion", opinion)

        for name, request, timeout in (
            ("deadline too short for a judge", judged(), 0.4),
            ("invalid evaluator", verdict_pb2.EvaluateRequest(config=verdict_pb2.EvaluatorConfig(yaml="type: x")), 30),
        ):
            with pytest.raises(grpc.RpcError) as raised:
                stub.Evaluate(request, timeout=timeout)
            outputs.error(name, raised.value)

        with urllib.request.urlopen(f"http://127.0.0.1:{process.metrics_port}/metrics", timeout=10) as page:
            metrics = page.read().decode()
        outputs.add("/metrics", metrics)

        chat_server.close()
        gone = stub.Evaluate(judged(), timeout=30)
        outputs.response("endpoint gone", gone)

    stop_server_process(process)
    assert process.drained.wait(60), "the server's stderr was not read to its end"
    assert process.process.stdout is not None
    outputs.add("stdout", process.process.stdout.read())
    outputs.add("stderr", "".join(stderr))

    # Every scenario ran as intended...
    assert verdicts["success quoting the key"] == "yes"
    assert all(verdict == "error" for name, verdict in verdicts.items() if name != "success quoting the key"), verdicts
    assert refused.verdict == "error"
    assert "401" in json_format.MessageToJson(refused)
    assert opinion.second_opinion.reason == "bad, and [redacted]"
    assert gone.verdict == "error"
    sent = list(chat_server.authorizations)
    assert sent, "the endpoint saw no request"
    assert set(sent) == {f"Bearer {KEY}"}, "every call, the second opinion's too, carried the key"
    for outcome in ("ok", "api_error", "parse_error", "empty", "timeout"):
        assert f'verdict_judge_calls_total{{host="openai-compatible",outcome="{outcome}"}}' in metrics, outcome
    assert "DEBUG" in "".join(stderr), "the server logged at DEBUG"
    # ...and the key is nowhere.
    leaks = [where for where, text in outputs.texts if KEY in text]
    assert leaks == [], f"the key leaked into: {leaks}"
