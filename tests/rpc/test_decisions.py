"""Decision logs: one record per answered call with the call's identity, outcome and input digests; raw requests only
when enabled (capped, redacted); file (rotated), stream and HTTP (batched) sinks; a bounded buffer that drops and
counts instead of blocking; and a day of decisions replayed from the log gives the same verdicts."""

from __future__ import annotations

import hashlib
import http.server
import json
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from prometheus_client import CollectorRegistry

from tests.support import make_config, serving, start_server_process, stop_server_process
from verdict.rpc.decisions import DecisionLog, build_decision_log
from verdict.v1 import verdict_pb2

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
METADATA = (("x-request-id", "loop-7-step-3"), ("traceparent", f"00-{TRACE_ID}-00f067aa0ba902b7-01"))
SECRET_TEXT = "```python\ndef f(:\n    return 'sk-live-abc123'\n```"


def read_log(path: Path) -> list[dict[str, Any]]:
    """Every record of a rotated log, oldest first: name.N ... name.1, then name."""
    rotated = sorted(path.parent.glob(path.name + ".*"), key=lambda p: int(p.suffix[1:]), reverse=True)
    records: list[dict[str, Any]] = []
    for part in [*rotated, path]:
        records.extend(json.loads(line) for line in part.read_text().splitlines())
    return records


async def test_every_rpc_leaves_a_record_and_raw_text_is_off_by_default(tmp_path: Path) -> None:
    path = tmp_path / "decisions.log"
    config = make_config(decision_log="file", decision_log_path=str(path))
    assert config.decision_log_raw is False
    async with serving(config) as running:
        stub = running.stub
        await stub.VerifyResponse(verdict_pb2.VerifyResponseRequest(text=SECRET_TEXT), metadata=METADATA)
        config_yaml = verdict_pb2.EvaluatorConfig(yaml="type: output_numeric\noperator: ge\ntarget: 3")
        await stub.Evaluate(verdict_pb2.EvaluateRequest(config=config_yaml, output="5"))
        await stub.ListEvaluators(verdict_pb2.ListEvaluatorsRequest())
        bad = verdict_pb2.EvaluateRequest(config=verdict_pb2.EvaluatorConfig(yaml="type: nope"))
        with pytest.raises(grpc.aio.AioRpcError):
            await stub.Evaluate(bad)
    text = path.read_text()
    assert "sk-live" not in text, "no raw text unless decision_log_raw is on"
    assert "def f" not in text
    verify, evaluate, catalogue, failed = read_log(path)
    assert verify["rpc"] == "VerifyResponse"
    assert verify["transport"] == "grpc"
    assert verify["code"] == "OK"
    assert verify["request_id"] == "loop-7-step-3"
    assert verify["trace_id"] == TRACE_ID
    assert verify["result"] == {"verdict": "malformed", "failed": True, "languages": ["python"]}
    assert verify["input"]["text"] == {
        "sha256": hashlib.sha256(SECRET_TEXT.encode()).hexdigest(),
        "bytes": len(SECRET_TEXT.encode()),
    }
    assert "request" not in verify
    assert isinstance(verify["latency_ms"], float)
    assert len({r["decision_id"] for r in (verify, evaluate, catalogue, failed)}) == 4
    assert evaluate["result"] == {"type": "output_numeric", "verdict": "yes"}
    assert evaluate["input"]["output"]["bytes"] == 1
    assert catalogue["rpc"] == "ListEvaluators"
    assert catalogue["result"]["evaluators"] > 10
    assert failed["code"] == "InvalidArgument"
    assert failed["result"]["reason"] == "INVALID_EVALUATOR_CONFIG"


async def test_raw_requests_are_capped_and_redacted_but_digested_as_received(tmp_path: Path) -> None:
    path = tmp_path / "decisions.log"
    config = make_config(
        decision_log="file",
        decision_log_path=str(path),
        decision_log_raw=True,
        decision_log_raw_max_bytes=64,
        decision_log_redact=(r"sk-live-[a-z0-9]+",),
    )
    long_output = "x" * 500
    async with serving(config) as running:
        await running.stub.VerifyResponse(verdict_pb2.VerifyResponseRequest(text=SECRET_TEXT))
        block = verdict_pb2.EvaluatorConfig(yaml="type: output_contains\npattern: done")
        await running.stub.Evaluate(verdict_pb2.EvaluateRequest(config=block, output=long_output))
    verify, evaluate = read_log(path)
    assert "sk-live" not in path.read_text()
    assert "[REDACTED]" in verify["request"]["text"]
    assert verify["input"]["text"]["sha256"] == hashlib.sha256(SECRET_TEXT.encode()).hexdigest()
    assert evaluate["request"]["output"] == "x" * 64
    assert evaluate["truncated"] == ["output"]
    assert evaluate["input"]["output"]["bytes"] == 500


def _day_of_calls(seed: int) -> Iterator[tuple[str, Any]]:
    """A day's worth of loop traffic in miniature: completions of every kind and deterministic evaluators, including
    stall evaluators whose state token is carried from call to call."""
    rng = random.Random(seed)
    texts = [
        "```python\nprint(1)\n```",
        "```python\ndef f(:\n```",
        '```json\n{"a": 1,}\n```',
        "```yaml\na: [1, 2\n```",
        "```bash\nif true; then\n```",
        "Just prose.",
        "```python\nprint(1)\n",
        "",
    ]
    blocks: list[tuple[str, Callable[[], tuple[str, int]]]] = [
        ("type: exit_code", lambda: ("", rng.choice([0, 1, 124]))),
        ("type: output_numeric\noperator: ge\ntarget: 50", lambda: (str(rng.randint(0, 100)), 0)),
        ("type: output_contains\npattern: PASS", lambda: (rng.choice(["PASS all", "FAIL 2"]), 0)),
        (
            "type: output_json\npath: .status\noperator: eq\ntarget: ok",
            lambda: (rng.choice(['{"status": "ok"}', "{}"]), 0),
        ),
    ]
    for _ in range(120):
        if rng.random() < 0.4:
            finish = rng.choice(["stop", "length", ""])
            yield "VerifyResponse", verdict_pb2.VerifyResponseRequest(text=rng.choice(texts), finish_reason=finish)
        else:
            yaml_text, make = rng.choice(blocks)
            output, exit_code = make()
            config = verdict_pb2.EvaluatorConfig(yaml=yaml_text)
            yield "Evaluate", verdict_pb2.EvaluateRequest(config=config, output=output, exit_code=exit_code)
    yield "stall", None


async def test_a_day_of_decisions_replays_to_the_same_verdicts(tmp_path: Path) -> None:
    path = tmp_path / "decisions.log"
    config = make_config(
        decision_log="file",
        decision_log_path=str(path),
        decision_log_raw=True,
        decision_log_max_bytes=8 * 1024,
        decision_log_backups=100,
    )
    answered: list[str] = []
    async with serving(config) as running:
        for rpc, request in _day_of_calls(seed=15):
            if rpc == "VerifyResponse":
                answer = await running.stub.VerifyResponse(request)
                answered.append(verdict_pb2.VerifyVerdict.Name(answer.verdict).removeprefix("VERIFY_VERDICT_").lower())
            elif rpc == "Evaluate":
                answered.append((await running.stub.Evaluate(request)).verdict)
            else:
                state = b""
                stall = verdict_pb2.EvaluatorConfig(yaml="type: action_stall\nmax_repeat: 2")
                for action in ["ls", "ls", "ls", "cat", "cat"]:
                    request = verdict_pb2.EvaluateRequest(config=stall, state=state)
                    request.context.update({"context": {"action": action}})
                    answer = await running.stub.Evaluate(request)
                    state = answer.state
                    answered.append(answer.verdict)
    assert len(list(tmp_path.glob("decisions.log.*"))) >= 2, "the day's log was rotated"
    records = read_log(path)
    assert len(records) == len(answered)
    assert [r["result"]["verdict"] for r in records] == answered

    replayed: list[str] = []
    async with serving(make_config()) as fresh:  # another replica, yesterday's log in hand
        for record in records:
            if record["rpc"] == "VerifyResponse":
                request = json_format.ParseDict(record["request"], verdict_pb2.VerifyResponseRequest())
                answer = await fresh.stub.VerifyResponse(request)
                replayed.append(verdict_pb2.VerifyVerdict.Name(answer.verdict).removeprefix("VERIFY_VERDICT_").lower())
            else:
                request = json_format.ParseDict(record["request"], verdict_pb2.EvaluateRequest())
                replayed.append((await fresh.stub.Evaluate(request)).verdict)
    assert replayed == answered
    assert {"yes", "no"} <= set(answered)
    assert {"malformed", "ok", "truncated"} <= set(answered)


class _Collector(http.server.BaseHTTPRequestHandler):
    batches: list[list[dict[str, Any]]]
    headers_seen: list[str]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).batches.append(json.loads(body))
        type(self).headers_seen.append(self.headers.get("Authorization", ""))
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture
def collector() -> Iterator[tuple[str, type[_Collector]]]:
    handler = type("Collector", (_Collector,), {"batches": [], "headers_seen": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1/decisions", handler
    server.shutdown()


async def test_http_sink_posts_batches_with_the_token(collector: tuple[str, type[_Collector]]) -> None:
    url, handler = collector
    config = make_config(
        decision_log="http",
        decision_log_url=url,
        decision_log_http_token="t0ken",
        decision_log_batch_size=3,
        decision_log_flush_seconds=0.2,
    )
    async with serving(config) as running:
        for exit_code in range(7):
            block = verdict_pb2.EvaluatorConfig(yaml="type: exit_code")
            await running.stub.Evaluate(verdict_pb2.EvaluateRequest(config=block, exit_code=exit_code))
    records = [record for batch in handler.batches for record in batch]
    assert len(records) == 7
    assert all(len(batch) <= 3 for batch in handler.batches)
    assert len(handler.batches) >= 3
    assert set(handler.headers_seen) == {"Bearer t0ken"}
    assert running.registry.get_sample_value("verdict_decision_log_records_total", {"sink": "http"}) == 7


class _BlockingSink:
    def __init__(self) -> None:
        self.release = threading.Event()
        self.written: list[str] = []

    def write(self, records: Sequence[str]) -> None:
        self.release.wait(30)
        self.written.extend(records)

    def close(self) -> None:
        return None


def test_a_stuck_sink_never_blocks_a_call_records_are_dropped_and_counted() -> None:
    sink = _BlockingSink()
    registry = CollectorRegistry()
    decisions = DecisionLog(sink, registry, sink_name="test", buffer_size=2, batch_size=1, flush_seconds=0.01)
    for _ in range(10):  # the sink is stuck: these return at once or the test would hang here
        decisions.record("Evaluate", None, result={"verdict": "yes"}, code="OK", started=time.perf_counter())
    dropped = registry.get_sample_value("verdict_decision_log_dropped_total", {"reason": "buffer_full"})
    assert dropped in (7.0, 8.0)  # 2 buffered, and 1 more if the drain thread had already taken the first
    sink.release.set()
    decisions.close()
    assert len(sink.written) == 10 - dropped


def test_an_unreachable_endpoint_counts_sink_errors() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    registry = CollectorRegistry()
    config = make_config(
        decision_log="http", decision_log_url=f"http://127.0.0.1:{port}/", decision_log_flush_seconds=0.01
    )

    decisions = build_decision_log(config, registry)
    assert decisions is not None
    for _ in range(3):
        decisions.record("ListEvaluators", None, result={}, code="OK", started=time.perf_counter())
    decisions.close()
    assert registry.get_sample_value("verdict_decision_log_dropped_total", {"reason": "sink_error"}) == 3


def test_stdout_sink_keeps_stdout_for_decisions_and_stderr_for_logs() -> None:
    server = start_server_process("--decision-log", "stdout")
    try:
        with grpc.insecure_channel(server.target) as channel:
            call = channel.unary_unary(
                "/verdict.v1.VerdictService/VerifyResponse",
                request_serializer=verdict_pb2.VerifyResponseRequest.SerializeToString,
                response_deserializer=verdict_pb2.VerifyResponseResponse.FromString,
            )
            call(verdict_pb2.VerifyResponseRequest(text="```json\n{}\n```"), timeout=30)
    finally:
        stop_server_process(server)
    assert server.process.stdout is not None
    lines = server.process.stdout.read().splitlines()
    assert [json.loads(line)["result"]["verdict"] for line in lines] == ["ok"]
    assert all("decision_id" not in record for record in server.records())


def test_one_table_spells_the_verdicts_for_the_wire_the_decision_log_and_the_cli() -> None:
    """`rpc.messages.VERDICT_TO_PROTO` owns the spelling; the decision log and the CLI read it back through
    `verdict_name`, so every proto verdict has the domain Verdict's spelling, by number and by enum name."""
    from verdict.cli.jobs import as_json
    from verdict.rpc.messages import VERDICT_TO_PROTO, verdict_name
    from verdict.verify.model import Verdict

    assert set(VERDICT_TO_PROTO) == set(Verdict)
    numbers = set(verdict_pb2.VerifyVerdict.values()) - {verdict_pb2.VERIFY_VERDICT_UNSPECIFIED}
    assert set(VERDICT_TO_PROTO.values()) == numbers
    for verdict, number in VERDICT_TO_PROTO.items():
        assert verdict_name(number) == verdict_name(verdict_pb2.VerifyVerdict.Name(number)) == verdict.value
    assert verdict_name(verdict_pb2.VERIFY_VERDICT_UNSPECIFIED) == "unspecified"
    with pytest.raises(ValueError, match="not a VerifyVerdict"):
        verdict_name(99)
    response = verdict_pb2.VerifyResponseResponse(
        verdict=verdict_pb2.VERIFY_VERDICT_MALFORMED,
        checks=[verdict_pb2.BlockCheck(verdict=verdict_pb2.VERIFY_VERDICT_OK)],
    )
    shown = as_json(response)
    assert (shown["verdict"], shown["checks"][0]["verdict"]) == ("malformed", "ok")
    assert as_json(verdict_pb2.EvaluateResponse(verdict="VERIFY_VERDICT_ish"))["verdict"] == "VERIFY_VERDICT_ish"


async def test_an_evaluate_call_parses_its_yaml_block_once_with_the_decision_log_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rpc layer converts the `yaml` member and hands the result to the decision record (`evaluated`), which
    reads the type from it; a block that fails to load is not tried again for the record either."""
    import yaml

    parses: list[str] = []
    real_load = yaml.load

    def counting_load(stream: Any, Loader: Any) -> Any:
        parses.append(str(stream))
        return real_load(stream, Loader=Loader)

    monkeypatch.setattr(yaml, "load", counting_load)
    path = tmp_path / "decisions.log"
    async with serving(make_config(decision_log="file", decision_log_path=str(path))) as running:
        good = verdict_pb2.EvaluatorConfig(yaml="type: output_numeric\noperator: ge\ntarget: 3")
        answer = await running.stub.Evaluate(verdict_pb2.EvaluateRequest(config=good, output="5"))
        assert answer.verdict == "yes"
        assert len(parses) == 1, parses
        bad = verdict_pb2.EvaluatorConfig(yaml="type: [unclosed")
        with pytest.raises(grpc.aio.AioRpcError):
            await running.stub.Evaluate(verdict_pb2.EvaluateRequest(config=bad))
        assert len(parses) == 2, parses
    good_record, bad_record = read_log(path)
    assert good_record["result"] == {"type": "output_numeric", "verdict": "yes"}
    assert bad_record["result"]["type"] == ""
