"""Server logs people can search: one format per stream (`log_format: text|json`), call context on every line.

Every server line goes to stderr through one handler, in one format. `text` is one human line
(`time LEVEL logger [Method request_id=… trace_id=… deadline=…] message key=value …`); `json` is one JSON object per
line with fixed keys (`time`, `level`, `logger`, `message`, the call's `method`, `request_id`, `trace_id`,
`span_id`, `principal` when inside a call, `exception` when there is one) plus the record's own fields, so a log
pipeline parses it without a grok pattern. Structured fields travel as `extra={"fields": {...}}` and appear in both
formats (`key=value` in text).

Stdout is left to the decision log (when its sink is `stdout`), so no stream mixes two formats.

Credentials never reach a line. The libraries that see request headers (`HEADER_LOGGERS`: hpack decodes every
HTTP/2 header, `authorization` included, and logs it at DEBUG) are pinned at INFO whatever `log_level` says, and every
formatted line passes through `redact_secrets`, which masks bearer credentials and `authorization` values as the text
means them: a spelling with JSON `\\u` escapes is decoded before it is matched, so `\\u0042earer sk-...` is caught too.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

from verdict.rpc.context import current_call
from verdict.server.log_stream import CoalescingStreamHandler

__all__ = [
    "HEADER_LOGGERS",
    "REDACTED",
    "CallContextFilter",
    "JsonFormatter",
    "TextFormatter",
    "configure_logging",
    "redact_secrets",
]

HEADER_LOGGERS = ("hpack", "h2", "h11", "hypercorn", "httpcore", "httpx", "urllib3", "grpc", "connectrpc")
"""Loggers of libraries that handle request or response headers: never below INFO, where they print them."""

REDACTED = "[REDACTED]"
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
_SECRETS = re.compile(
    r"(?i)(\bbearer\s+|\bbasic\s+|\bauthorization\b[\"']?\s*[:=,]\s*[\"']?(?:bearer\s+)?)[^\s\"',;}\]\\]+"
)


def redact_secrets(line: str) -> str:
    """`line` with bearer credentials and `authorization` values masked, matched on the decoded text: when JSON `\\u`
    escapes hide one, the line is given back decoded and masked (the escapes carry no meaning a reader needs)."""
    masked = _SECRETS.sub(lambda m: m.group(1) + REDACTED, line)
    if "\\u" not in line:
        return masked
    decoded = _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), line)
    decoded_masked = _SECRETS.sub(lambda m: m.group(1) + REDACTED, decoded)
    return decoded_masked if decoded_masked != decoded else masked


class _Redacting(logging.Formatter):
    """Any formatter's line, through `redact_secrets`."""

    def __init__(self, inner: logging.Formatter) -> None:
        super().__init__()
        self._inner = inner

    def format(self, record: logging.LogRecord) -> str:
        return redact_secrets(self._inner.format(record))


TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(call)s] %(message)s"


class CallContextFilter(logging.Filter):
    """Adds `%(call)s` to every log record: the RPC method, the caller's x-request-id, the deadline it gave and (with
    auth on) the principal, so a
    warning from a judge or a parse can be traced to the call that caused it. Outside a call it is `-`."""

    def filter(self, record: logging.LogRecord) -> bool:
        call = current_call.get()
        if call is None:
            record.call = "-"
        else:
            deadline = "none" if call.deadline_seconds is None else f"{call.deadline_seconds:.1f}s"
            trace = f" trace_id={call.trace_id}" if call.trace is not None else ""
            principal = call.principal or call.learned.get("principal", "")
            shown = f" principal={principal}" if principal else ""
            record.call = f"{call.method} request_id={call.request_id or '-'}{trace} deadline={deadline}{shown}"
        return True


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    fields = getattr(record, "fields", None)
    return dict(fields) if isinstance(fields, dict) else {}


class TextFormatter(logging.Formatter):
    """The human line, with structured fields appended as `key=value` (JSON-quoted when they hold spaces)."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        fields = _fields(record)
        if not fields:
            return line
        head, newline, tail = line.partition("\n")  # keep a traceback below the line it belongs to
        rendered = " ".join(f"{key}={_text_value(value)}" for key, value in fields.items())
        return f"{head} {rendered}{newline}{tail}"


def _text_value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return json.dumps(text) if (not text or any(c.isspace() or c in '"=' for c in text)) else text


class JsonFormatter(logging.Formatter):
    """One JSON object per line; newlines inside values are escaped, so every line parses on its own."""

    def format(self, record: logging.LogRecord) -> str:
        document: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        call = current_call.get()
        if call is not None:
            document.update(call.log_fields())
        document.update(_fields(record))
        if record.exc_info:
            document["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            document["exception"] = record.exc_text
        return json.dumps(document, ensure_ascii=False, default=str, separators=(",", ":"))


def configure_logging(log_format: str, level: str, *, stream: TextIO | None = None) -> logging.Handler:
    """Route every log record of the process to one stream (stderr by default) in one format; returns the handler."""
    handler = CoalescingStreamHandler(stream or sys.stderr)  # one write per event-loop turn (log_stream.py)
    handler.addFilter(CallContextFilter())
    handler.setFormatter(_Redacting(JsonFormatter() if log_format == "json" else TextFormatter()))
    logging.basicConfig(level=level, handlers=[handler], force=True)
    for name in HEADER_LOGGERS:
        library = logging.getLogger(name)
        library.setLevel(max(logging.INFO, library.getEffectiveLevel()))
    return handler
