"""Logs people can search: every stderr line of a real server in the chosen format, one access line per call with
method, code, latency, request id and W3C trace context, and the ready record as a log record."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import re
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest

from tests.support import ServerProcess, start_server_process, stop_server_process
from verdict.rpc.context import CallContext, TraceContext, current_call, parse_traceparent
from verdict.server.logs import JsonFormatter, TextFormatter
from verdict.v1 import verdict_pb2, verdict_pb2_grpc

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"


def _calls(server: ServerProcess) -> None:
    with grpc.insecure_channel(server.target) as channel:
        stub = verdict_pb2_grpc.VerdictServiceStub(channel)
        metadata = (("x-request-id", "req-42"), ("traceparent", TRACEPARENT))
        stub.VerifyResponse(verdict_pb2.VerifyResponseRequest(text="hi"), metadata=metadata, timeout=30)
        bad = verdict_pb2.EvaluateRequest(config=verdict_pb2.EvaluatorConfig(yaml="type: nope"))
        with pytest.raises(grpc.RpcError):
            stub.Evaluate(bad, metadata=(("x-request-id", "req-43"),), timeout=30)


def _access_records(server: ServerProcess, expected: int) -> list[dict[str, object]]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        records = [r for r in server.records() if r.get("event") == "call"]
        if len(records) >= expected:
            return records
        time.sleep(0.05)
    raise AssertionError(f"no access records in {server.log_lines}")


def test_json_logs_parse_line_by_line_and_carry_the_call() -> None:
    server = start_server_process()  # --log-format json
    try:
        _calls(server)
        calls = _access_records(server, 2)
    finally:
        stop_server_process(server)
    records = server.records()  # every line is one JSON object, or this raises
    assert all({"time", "level", "logger", "message"} <= record.keys() for record in records)
    ready = next(r for r in records if r.get("event") == "serving")
    assert ready["grpc_port"] == server.grpc_port
    verify = next(r for r in calls if r["method"] == "/verdict.v1.VerdictService/VerifyResponse")
    assert verify["code"] == "OK"
    assert verify["request_id"] == "req-42"
    assert verify["trace_id"] == TRACE_ID
    assert verify["span_id"] == "00f067aa0ba902b7"
    assert isinstance(verify["latency_ms"], float)
    assert verify["level"] == "INFO"
    assert verify["transport"] == "grpc"
    failed = next(r for r in calls if r["method"] == "/verdict.v1.VerdictService/Evaluate")
    assert failed["code"] == "InvalidArgument"
    assert failed["request_id"] == "req-43"
    assert "trace_id" not in failed
    assert server.process.stdout is not None
    assert server.process.stdout.read() == "", "nothing but the decision log may use stdout"


def test_access_log_level_off_and_below_log_level_log_nothing() -> None:
    for flags in (("--access-log-level", "OFF"), ("--access-log-level", "DEBUG")):
        server = start_server_process(*flags)
        try:
            _calls(server)
        finally:
            stop_server_process(server)
        assert [r for r in server.records() if r.get("event") == "call"] == [], flags


def test_text_format_server_lines(tmp_path: object) -> None:
    """A text-format server: the ready line and an access line carry the call's ids as key=value."""
    argv = [sys.executable, "-m", "verdict", "serve", "--grpc-address", "127.0.0.1:0", "--metrics-address", ""]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        port = 0
        for line in process.stderr:
            if "event=serving" in line:
                port = int(line.split("grpc_port=")[1].split()[0])
                break
        assert port
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = verdict_pb2_grpc.VerdictServiceStub(channel)
            metadata = (("x-request-id", "req-7"), ("traceparent", TRACEPARENT))
            stub.ListEvaluators(verdict_pb2.ListEvaluatorsRequest(), metadata=metadata, timeout=30)
        access = next(line for line in process.stderr if "event=call" in line)
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert " INFO verdict.access [ListEvaluators request_id=req-7 trace_id=" + TRACE_ID in access
    assert "code=OK" in access
    assert "method=/verdict.v1.VerdictService/ListEvaluators" in access


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (TRACEPARENT, TraceContext(TRACE_ID, "00f067aa0ba902b7", True)),
        (f"00-{TRACE_ID}-00f067aa0ba902b7-00", TraceContext(TRACE_ID, "00f067aa0ba902b7", False)),
        (f"01-{TRACE_ID}-00f067aa0ba902b7-01-future", TraceContext(TRACE_ID, "00f067aa0ba902b7", True)),
        (f"00-{TRACE_ID}-00f067aa0ba902b7-01-extra", None),
        (f"ff-{TRACE_ID}-00f067aa0ba902b7-01", None),
        (f"00-{'0' * 32}-00f067aa0ba902b7-01", None),
        (f"00-{TRACE_ID}-{'0' * 16}-01", None),
        (f"00-{TRACE_ID.upper()}-00f067aa0ba902b7-01", None),
        ("garbage", None),
    ],
)
def test_traceparent_follows_the_w3c_rules(header: str, expected: TraceContext | None) -> None:
    assert parse_traceparent(header) == expected


def test_json_formatter_escapes_newlines_and_keeps_exceptions_on_one_line() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("verdict.test.json")
    logger.addHandler(handler)
    logger.propagate = False
    token = current_call.set(CallContext("Evaluate", "r1", None, TraceContext(TRACE_ID, "00f067aa0ba902b7", True)))
    try:
        try:
            raise ValueError("line one\nline two")
        except ValueError:
            logger.exception("failed\nbadly", extra={"fields": {"evaluator": "exit_code"}})
    finally:
        current_call.reset(token)
        logger.removeHandler(handler)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1
    record = json.loads(lines[0])
    assert record["message"] == "failed\nbadly"
    assert "line two" in record["exception"]
    assert (record["method"], record["request_id"], record["trace_id"]) == ("Evaluate", "r1", TRACE_ID)
    assert record["evaluator"] == "exit_code"


def test_text_formatter_quotes_values_with_spaces() -> None:
    record = logging.LogRecord("verdict.x", logging.INFO, __file__, 1, "hello", None, None)
    record.call = "-"
    record.fields = {"a": "two words", "b": 3}
    assert TextFormatter().format(record).endswith('hello a="two words" b=3')


_CONTEXTS = [
    None,
    CallContext("VerifyResponse", "", 5.0),
    CallContext("Evaluate", "req-9", None, TraceContext(TRACE_ID, "00f067aa0ba902b7", True), principal="ci-bot"),
    CallContext("VerifyResponse", "Bearer sk-live-123", 1.25),
    CallContext("VerifyResponse", "\\u0042earer sk-escaped", 1.0, transport="http"),
]


@pytest.mark.parametrize("log_format", ["json", "text"])
@pytest.mark.parametrize("call", _CONTEXTS)
def test_the_access_line_written_directly_is_the_formatters_line(log_format: str, call: CallContext | None) -> None:
    """The access line skips logging's per-record work (logs.AccessLines): it must print what the handler's own
    formatter prints for the same record, redaction included, bar the clock it was read at."""
    from verdict.server import logs
    from verdict.server.interceptors.observe import access_log, log_access

    stream = io.StringIO()
    handler = logs.configure_logging(log_format, "INFO", stream=stream)
    method = "/verdict.v1.VerdictService/VerifyResponse"
    try:

        async def direct() -> None:
            token = current_call.set(call)
            try:
                log_access(logging.INFO, method, "OK", time.perf_counter())
            finally:
                current_call.reset(token)

        asyncio.run(direct())
        handler.flush()
        written = stream.getvalue().splitlines()
        assert len(written) == 1
        latency = float(re.split(r'latency_ms[=":]+', written[0])[1].split("}")[0].split()[0])
        expected_fields: dict[str, object] = {"event": "call", "transport": call.transport if call else "grpc"}
        expected_fields |= {"method": method, "code": "OK", "latency_ms": latency}
        if call is not None and call.principal:
            expected_fields["principal"] = call.principal
        record = access_log.makeRecord(
            access_log.name,
            logging.INFO,
            __file__,
            1,
            "%s %s %.1fms",
            (method, "OK", latency),
            None,
            extra={"fields": expected_fields},
        )
        token = current_call.set(call)
        try:
            assert handler.filter(record)
            expected = handler.format(record)
        finally:
            current_call.reset(token)
    finally:
        logging.basicConfig(force=True)
    iso = r'^\{"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00"'
    clock = iso if log_format == "json" else r"^[\d-]+ [\d:]+,\d{3}"
    assert re.match(clock, written[0])
    assert re.match(clock, expected)
    assert re.sub(clock, "", written[0]) == re.sub(clock, "", expected)
    assert "sk-live-123" not in written[0]
    assert "sk-escaped" not in written[0]


def test_the_access_line_takes_logging_s_route_when_anything_else_listens() -> None:
    """A handler or filter added by a test or a library must still see access lines: no direct write then."""
    from verdict.server import logs
    from verdict.server.interceptors.observe import access_log, log_access

    handler = logs.configure_logging("json", "INFO", stream=io.StringIO())
    assert logs.access_lines is not None
    assert logs.access_lines.sink(access_log, logging.INFO) is handler
    seen: list[logging.LogRecord] = []
    listener = logging.Handler()
    listener.emit = seen.append  # type: ignore[method-assign,assignment]
    parent = logging.getLogger("verdict")
    parent.addHandler(listener)
    try:
        assert logs.access_lines.sink(access_log, logging.INFO) is None

        async def call() -> None:
            log_access(logging.INFO, "/verdict.v1.VerdictService/Evaluate", "OK", time.perf_counter())

        asyncio.run(call())
        assert [r.getMessage().split()[:2] for r in seen] == [["/verdict.v1.VerdictService/Evaluate", "OK"]]
        parent.removeHandler(listener)
        access_log.addFilter(lambda record: True)
        assert logs.access_lines.sink(access_log, logging.INFO) is None
    finally:
        parent.removeHandler(listener)
        access_log.filters.clear()
        logging.basicConfig(force=True)


async def test_a_batched_flush_after_the_stream_was_closed_does_not_raise(tmp_path: Path) -> None:
    """The loop writes lines FLUSH_SECONDS after they are logged; by then the stream's owner may have closed it (a
    bench or an embedding application tearing down), and logging never raises into the loop for that."""
    from verdict.server.log_stream import FLUSH_SECONDS, CoalescingStreamHandler

    failures: list[dict[str, object]] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: failures.append(context))
    sink = (tmp_path / "server.log").open("w")  # a file: a closed StringIO's flush does not raise, a file's does
    handler = CoalescingStreamHandler(sink)
    handler.enqueue("written before the close", loop)
    sink.close()
    await asyncio.sleep(FLUSH_SECONDS * 5)
    handler.flush()  # and once more by hand: nothing pending, the stream still closed
    assert failures == []
    assert handler._pending == []  # the lines that could not be written are dropped, not kept forever
