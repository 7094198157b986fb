"""Decision logs, modelled on OPA's: one structured record per answered call, so "why did my loop stop at step 7
yesterday?" can be answered afterwards, and yesterday's calls can be replayed.

A record (one JSON object) carries:

- identity: `decision_id` (a fresh UUID), `time` (UTC, ISO 8601), `rpc`, `transport` (grpc or connect),
  `request_id`, `trace_id`/`span_id` (W3C `traceparent`), `principal`, `server_version`;
- the outcome: `code` (the gRPC code, spelled as in the metrics), `latency_ms`, and `result`: for VerifyResponse
  the `verdict` (lower case), `failed` and the verified `languages`; for Evaluate the evaluator `type` and its
  `verdict`; for a failed call the error `reason`;
- `input`: what was asked, as SHA-256 digests and sizes of every text (`text`, `request_text`, `output`, the config,
  the context, the state token) plus the small scalar fields. Digests let two records be compared without keeping
  anyone's text;
- `request`, only when `decision_log_raw` is on: the request itself in proto JSON, every string cut at
  `decision_log_raw_max_bytes` (the paths that were cut are listed in `truncated`) and with each
  `decision_log_redact` pattern replaced by `[REDACTED]`. A record with an uncut `request` replays exactly.

Records never slow a call down: `record()` only puts the record into a bounded buffer (`decision_log_buffer_size`);
when the buffer is full the record is dropped and counted (`verdict_decision_log_dropped_total{reason="buffer_full"}`).
One daemon thread drains the buffer into the sink: a stream (stdout or stderr, one line per record), a file rotated
by size (`decision_log_path`, `decision_log_max_bytes`, `decision_log_backups`), or an HTTP endpoint that receives
POSTed JSON arrays of up to `decision_log_batch_size` records at least every `decision_log_flush_seconds`; a batch
the endpoint refuses twice is dropped and counted (`reason="sink_error"`). At shutdown the buffer is flushed.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import logging
import logging.handlers
import queue
import re
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol, TextIO

import grpc
from google.protobuf import json_format, message
from prometheus_client import CollectorRegistry, Counter

from verdict import __version__
from verdict.config.keys import Config
from verdict.errors import VerdictError
from verdict.evaluators import load_evaluate_block
from verdict.metrics import grpc_code_label
from verdict.rpc.context import CallContext, current_call
from verdict.rpc.messages import verdict_name

__all__ = [
    "DecisionLog",
    "FileSink",
    "HttpSink",
    "Sink",
    "StreamSink",
    "build_decision_log",
    "evaluated",
    "failure",
    "record_call",
]

log = logging.getLogger("verdict.decisions")

REDACTED = "[REDACTED]"
_SENTINEL = object()


class Sink(Protocol):
    """Where drained records go. Called from the drain thread only, never from a call."""

    def write(self, records: Sequence[str]) -> None:
        """Deliver serialized records (one JSON object each); raise OSError when they could not be delivered."""

    def close(self) -> None:
        """Release the sink's resources after the last write."""


class StreamSink:
    """One JSON line per record on a stream (stdout or stderr), flushed per batch."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, records: Sequence[str]) -> None:
        self._stream.write("".join(f"{record}\n" for record in records))
        self._stream.flush()

    def close(self) -> None:
        self._stream.flush()


class FileSink:
    """One JSON line per record in a file rotated by size (name.1 is the newest rotated file), via the standard
    library's RotatingFileHandler: rotation is solved there, including the rename order."""

    def __init__(self, path: str, *, max_bytes: int, backups: int) -> None:
        self._handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8"
        )
        self._handler.setFormatter(logging.Formatter("%(message)s"))

    def write(self, records: Sequence[str]) -> None:
        for record in records:
            self._handler.emit(logging.makeLogRecord({"msg": record, "levelno": logging.INFO}))
        self._handler.flush()

    def close(self) -> None:
        self._handler.close()


class HttpSink:
    """POSTs each batch as one JSON array (Content-Type application/json), with a bearer token when configured."""

    def __init__(self, url: str, *, token: str = "", timeout: float = 10.0) -> None:
        self._url = url
        self._headers = {"Content-Type": "application/json", "User-Agent": f"verdict/{__version__}"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._timeout = timeout

    def write(self, records: Sequence[str]) -> None:
        body = ("[" + ",".join(records) + "]").encode("utf-8")
        request = urllib.request.Request(self._url, data=body, headers=self._headers, method="POST")  # noqa: S310
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as reply:  # noqa: S310 - the operator's URL
                reply.read()
        except urllib.error.HTTPError as error:
            raise OSError(f"decision log endpoint answered {error.code}") from None
        except (urllib.error.URLError, TimeoutError) as error:
            raise OSError(f"decision log endpoint unreachable: {error}") from None

    def close(self) -> None:
        return None


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


def _digest(data: bytes) -> dict[str, Any]:
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def input_digests(request: message.Message) -> dict[str, Any]:
    """Digests and sizes of every text and bytes field, and the scalars as they are; nested messages (config,
    context) as the digest of their deterministic serialization. Enough to tell two inputs apart, never the text."""
    digests: dict[str, Any] = {}
    for field, value in request.ListFields():
        if field.type == field.TYPE_STRING:
            digests[field.name] = _digest(value.encode("utf-8"))
        elif field.type == field.TYPE_BYTES:
            digests[field.name] = _digest(value)
        elif field.type == field.TYPE_MESSAGE and not field.is_repeated:
            digests[field.name] = _digest(value.SerializeToString(deterministic=True))
        elif not field.is_repeated:
            digests[field.name] = value
    return digests


failure: contextvars.ContextVar[VerdictError | None] = contextvars.ContextVar("verdict_failure", default=None)
"""The domain error a call ended with, set by the rpc layer where it turns the error into a status (per call: each
call runs in its own task, so its own context)."""

evaluated: contextvars.ContextVar[Mapping[str, Any] | None] = contextvars.ContextVar("verdict_evaluated", default=None)
"""The evaluator configuration an Evaluate call converted (`rpc.messages.evaluator_config`, which parses a `yaml`
member), handed over by the rpc layer as soon as it has it, so the record reads the type from the call's one parse
instead of parsing the block a second time (PyYAML is pure Python: a 64 KiB block is milliseconds on the loop)."""


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
        result.update(_result(rpc, response))
        code = "OK"
    elif error is not None:
        result["reason"] = error.reason
        code = grpc_code_label(getattr(grpc.StatusCode, error.code_name))
    else:
        code = "Canceled"
    decisions.record(rpc, decoded, result=result, code=code, started=started)


def _result(rpc: str, response: Any) -> dict[str, Any]:
    if rpc == "VerifyResponse":
        return {
            "verdict": verdict_name(response.verdict),
            "failed": response.failed,
            "languages": sorted({check.language for check in response.checks}),
        }
    if rpc == "Evaluate":
        return {"verdict": response.verdict}
    if rpc == "ListEvaluators":
        return {"evaluators": len(response.evaluators)}
    return {}


def evaluator_type(request: Any, converted: Mapping[str, Any] | None = None, error: VerdictError | None = None) -> str:
    """The evaluator type an Evaluate asked for, typed or in its YAML block; empty when it cannot be told.

    `converted` is the configuration the call itself converted (`evaluated`): its type is read, nothing is parsed.
    Without it the call ended before converting its configuration; a `yaml` block is parsed here then, unless the
    call ended because that very block could not be loaded (`error` names `config.yaml`), whose type cannot be told.
    So a call's block is parsed once, except when the call is refused for setting `source` in both places.
    """
    if converted is not None:
        kind = converted.get("type")
        return kind if isinstance(kind, str) else ""
    kind = request.config.WhichOneof("kind")
    if kind != "yaml":
        return kind or ""
    if error is not None and "config.yaml" in (getattr(error, "field", None), error.metadata.get("field")):
        return ""
    try:
        block = load_evaluate_block(request.config.yaml)
    except (VerdictError, ValueError):
        return ""
    kind = block.get("type")
    return kind if isinstance(kind, str) else ""


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
