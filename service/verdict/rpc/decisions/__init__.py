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

The package, one job a module: `records` (what a record says about a call: digests, result, evaluator type, the
per-call context the rpc layer hands over), `sinks` (where drained records go) and `log` (DecisionLog: building a
record, the bounded buffer and its drain thread, and the rpc layer's one call into it). This module is the surface.
"""

from __future__ import annotations

from verdict.rpc.decisions.log import DecisionLog, build_decision_log, record_call, record_refusal
from verdict.rpc.decisions.records import failure
from verdict.rpc.decisions.sinks import FileSink, HttpSink, Sink, StreamSink

__all__ = [
    "DecisionLog",
    "FileSink",
    "HttpSink",
    "Sink",
    "StreamSink",
    "build_decision_log",
    "failure",
    "record_call",
    "record_refusal",
]
