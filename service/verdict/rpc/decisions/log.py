"""DecisionLog: builds one record per answered call on the event loop (cheap, never blocking), puts it into a
bounded buffer (dropping and counting when full), and drains the buffer into a sink on one daemon thread; plus
`record_call`, the rpc layer's one call into it, and `build_decision_log`, the log the configuration asks for."""

from __future__ import annotations

import dataclasses
import json
import logging
import queue
import re
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TextIO

import grpc
from google.protobuf import json_format, message
from prometheus_client import CollectorRegistry, Counter

from verdict import __version__
from verdict.config.keys import Config
from verdict.errors import VerdictError
from verdict.metrics import grpc_code_label
from verdict.rpc.context import CallContext, current_call
from verdict.rpc.decisions.records import call_result, evaluated, evaluator_type, input_digests
from verdict.rpc.decisions.sinks import FileSink, HttpSink, Sink, StreamSink

__all__ = ["REDACTED", "DecisionLog", "build_decision_log", "record_call", "record_refusal"]

log = logging.getLogger("verdict.decisions")

REDACTED = "[REDACTED]"
_SENTINEL = object()


class DecisionLog:
    """Builds decision records and hands them to a sink through a bounded buffer and one drain thread."""

    def __init__(
        self,
        sink: Sink,
        registry: CollectorRegistry,
        *,
        sink_name: str,
        raw: bool = False,
        raw_max_bytes: int = 64 * 1024,
        redact: Sequence[str] = (),
        buffer_size: int = 10_000,
        batch_size: int = 1,
        flush_seconds: float = 1.0,
    ) -> None:
        self._sink = sink
        self._raw = raw
        self._raw_max_bytes = raw_max_bytes
        self._redact = [re.compile(pattern) for pattern in redact]
        self._batch_size = batch_size
        self._flush_seconds = flush_seconds
        self._queue: queue.Queue[object] = queue.Queue(maxsize=buffer_size)
        self._written = Counter(
            "verdict_decision_log_records_total",
            "Decision records delivered to the decision log sink.",
            ["sink"],
            registry=registry,
        ).labels(sink=sink_name)
        dropped = Counter(
            "verdict_decision_log_dropped_total",
            "Decision records dropped: buffer_full (the sink is slower than the calls) or sink_error (not delivered).",
            ["reason"],
            registry=registry,
        )
        self._dropped_full = dropped.labels(reason="buffer_full")
        self._dropped_error = dropped.labels(reason="sink_error")
        self._closed = False
        self._thread = threading.Thread(target=self._drain, name="verdict-decision-log", daemon=True)
        self._thread.start()

    # --- building records (on the event loop: cheap, never blocking) ------------------------------------------------

    def record(
        self,
        rpc: str,
        request: message.Message | None,
        *,
        result: Mapping[str, Any],
        code: str,
        started: float,
        call: CallContext | None = None,
    ) -> None:
        """Build one decision record and enqueue it; drop and count it if the buffer is full."""
        if self._closed:
            return
        call = call if call is not None else current_call.get()
        document: dict[str, Any] = {
            "decision_id": str(uuid.uuid4()),
            "time": datetime.now(UTC).isoformat(timespec="microseconds"),
            "rpc": rpc,
            "transport": call.transport if call is not None else "grpc",
            "request_id": call.request_id if call is not None else "",
            "trace_id": call.trace_id if call is not None else "",
            "span_id": call.trace.span_id if call is not None and call.trace is not None else "",
            "principal": call.principal if call is not None else "",
            "code": code,
            "latency_ms": round((time.perf_counter() - started) * 1000, 3),
            "result": dict(result),
            "input": input_digests(request) if request is not None else {},
            "server_version": __version__,
        }
        if self._raw and request is not None:
            truncated: list[str] = []
            raw = json_format.MessageToDict(request, preserving_proto_field_name=True)
            document["request"] = self._clean(raw, "", truncated)
            if truncated:
                document["truncated"] = truncated
        try:
            self._queue.put_nowait(json.dumps(document, ensure_ascii=False, separators=(",", ":"), default=str))
        except queue.Full:
            self._dropped_full.inc()

    def _clean(self, value: Any, path: str, truncated: list[str]) -> Any:
        """Redact, then cap, every string of the raw request (recursively); note the paths that were cut."""
        if isinstance(value, str):
            for pattern in self._redact:
                value = pattern.sub(REDACTED, value)
            data = value.encode("utf-8")
            if len(data) > self._raw_max_bytes:
                truncated.append(path)
                return data[: self._raw_max_bytes].decode("utf-8", errors="ignore")
            return value
        if isinstance(value, dict):
            return {key: self._clean(item, f"{path}.{key}" if path else key, truncated) for key, item in value.items()}
        if isinstance(value, list):
            return [self._clean(item, f"{path}[{index}]", truncated) for index, item in enumerate(value)]
        return value

    # --- draining (the drain thread) ---------------------------------------------------------------------------------

    def _drain(self) -> None:
        while True:
            first = self._queue.get()
            if first is _SENTINEL:
                return
            batch = [str(first)]
            deadline = time.monotonic() + self._flush_seconds
            stop = False
            while len(batch) < self._batch_size:
                left = deadline - time.monotonic()
                try:
                    item = self._queue.get(timeout=left) if left > 0 else self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is _SENTINEL:
                    stop = True
                    break
                batch.append(str(item))
            self._deliver(batch)
            if stop:
                return

    def _deliver(self, batch: list[str]) -> None:
        for attempt in range(2):
            try:
                self._sink.write(batch)
            except (OSError, ValueError) as error:
                if attempt == 0:
                    time.sleep(min(self._flush_seconds, 1.0))
                    continue
                log.warning("decision log: dropped %d records: %s", len(batch), error)
                self._dropped_error.inc(len(batch))
                return
            self._written.inc(len(batch))
            return

    def close(self, timeout: float = 10.0) -> None:
        """Deliver what is buffered (waiting at most `timeout` seconds), then close the sink."""
        if self._closed:
            return
        self._closed = True
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._queue.put(_SENTINEL, timeout=max(0.01, deadline - time.monotonic()))
                break
            except queue.Full:
                if time.monotonic() >= deadline:
                    break
        self._thread.join(max(0.0, deadline - time.monotonic()))
        self._sink.close()


def record_call(
    decisions: DecisionLog,
    rpc: str,
    request: Any,
    response: message.Message | None,
    error: VerdictError | None,
    started: float,
) -> None:
    """The rpc layer's one call into the decision log: what the call answered (or why it did not)."""
    decoded = request if isinstance(request, message.Message) else None
    result: dict[str, Any] = {}
    if rpc == "Evaluate" and decoded is not None:
        result["type"] = evaluator_type(decoded, evaluated.get(), error)
    if response is not None:
        result.update(call_result(rpc, response))
        code = "OK"
    elif error is not None:
        result["reason"] = error.reason
        code = grpc_code_label(getattr(grpc.StatusCode, error.code_name))
    else:
        code = "Canceled"
    decisions.record(rpc, decoded, result=result, code=code, started=started)


def record_refusal(decisions: DecisionLog | None, rpc: str, error: VerdictError) -> None:
    """A VerdictService call refused before the servicer (by the auth gate, or shed by admission control) leaves a
    decision record as an answered call does: its code, its reason and the principal the gate had authenticated, so
    an audit of the log sees every call that was turned away, on both ports."""
    if decisions is None:
        return
    call = current_call.get()
    if call is not None and not call.principal:
        call = dataclasses.replace(call, principal=str(call.learned.get("principal", "")))
    code = grpc_code_label(getattr(grpc.StatusCode, error.code_name))
    decisions.record(rpc, None, result={"reason": error.reason}, code=code, started=time.perf_counter(), call=call)


def build_decision_log(
    config: Config, registry: CollectorRegistry, *, streams: Mapping[str, TextIO] | None = None
) -> DecisionLog | None:
    """The decision log the configuration asks for, or None when `decision_log` is off."""
    if config.decision_log == "off":
        return None
    sink: Sink
    make: dict[str, Callable[[], Sink]] = {
        "stdout": lambda: StreamSink((streams or {}).get("stdout", sys.stdout)),
        "stderr": lambda: StreamSink((streams or {}).get("stderr", sys.stderr)),
        "file": lambda: FileSink(
            config.decision_log_path, max_bytes=config.decision_log_max_bytes, backups=config.decision_log_backups
        ),
        "http": lambda: HttpSink(config.decision_log_url, token=config.decision_log_http_token),
    }
    sink = make[config.decision_log]()
    http = config.decision_log == "http"
    return DecisionLog(
        sink,
        registry,
        sink_name=config.decision_log,
        raw=config.decision_log_raw,
        raw_max_bytes=config.decision_log_raw_max_bytes,
        redact=config.decision_log_redact,
        buffer_size=config.decision_log_buffer_size,
        batch_size=config.decision_log_batch_size if http else 256,
        flush_seconds=config.decision_log_flush_seconds if http else 0.05,
    )
