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
import time
from datetime import UTC, datetime
from typing import Any, TextIO

from verdict.rpc.context import CallContext, current_call
from verdict.server.log_stream import CoalescingStreamHandler

__all__ = [
    "HEADER_LOGGERS",
    "REDACTED",
    "AccessLines",
    "CallContextFilter",
    "JsonFormatter",
    "TextFormatter",
    "access_lines",
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
        record.call = _call_label(current_call.get())
        return True


def _call_label(call: CallContext | None) -> str:
    """The text format's `[...]` part: who and what a line is about."""
    if call is None:
        return "-"
    deadline = "none" if call.deadline_seconds is None else f"{call.deadline_seconds:.1f}s"
    trace = f" trace_id={call.trace_id}" if call.trace is not None else ""
    principal = call.principal or call.learned.get("principal", "")
    shown = f" principal={principal}" if principal else ""
    return f"{call.method} request_id={call.request_id or '-'}{trace} deadline={deadline}{shown}"


class _Clock:
    """A line's time as each format prints it, the seconds part formatted once per second (strftime and
    datetime.isoformat were a tenth of an access line's cost)."""

    def __init__(self) -> None:
        self._second = -1
        self._iso = self._local = ""

    def _at(self, second: int) -> None:
        if second != self._second:
            self._second = second
            self._iso = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")
            self._local = time.strftime(logging.Formatter.default_time_format, time.localtime(second))

    def iso(self, created: float) -> str:
        """`2026-01-02T03:04:05.678+00:00`, as datetime.isoformat(timespec="milliseconds") in UTC prints it."""
        second = int(created)
        self._at(second)
        return f"{self._iso}.{int((created - second) * 1000):03d}+00:00"

    def local(self, second: int, msecs: float) -> str:
        """`2026-01-02 03:04:05,678`, as logging.Formatter.formatTime prints it by default."""
        self._at(second)
        return f"{self._local},{int(msecs):03d}"


_CLOCK = _Clock()


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    fields = getattr(record, "fields", None)
    return dict(fields) if isinstance(fields, dict) else {}


class TextFormatter(logging.Formatter):
    """The human line, with structured fields appended as `key=value` (JSON-quoted when they hold spaces)."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        if datefmt is not None:
            return super().formatTime(record, datefmt)
        return _CLOCK.local(int(record.created), record.msecs)

    def format(self, record: logging.LogRecord) -> str:
        return _with_fields(super().format(record), _fields(record))


def _with_fields(line: str, fields: dict[str, Any]) -> str:
    """A text line with structured fields appended as `key=value`, above a traceback that follows it."""
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
        exception = None
        if record.exc_info:
            exception = self.formatException(record.exc_info)
        elif record.exc_text:
            exception = record.exc_text
        return _json_line(
            record.created,
            record.levelname,
            record.name,
            record.getMessage(),
            current_call.get(),
            _fields(record),
            exception,
        )


def _json_line(
    created: float,
    level: str,
    logger: str,
    message: str,
    call: CallContext | None,
    fields: dict[str, Any],
    exception: str | None = None,
) -> str:
    """The JSON format's one line: fixed keys, the call's identity, the record's own fields, then any exception."""
    document: dict[str, Any] = {"time": _CLOCK.iso(created), "level": level, "logger": logger, "message": message}
    if call is not None:
        document.update(call.log_fields())
    document.update(fields)
    if exception is not None:
        document["exception"] = exception
    return json.dumps(document, ensure_ascii=False, default=str, separators=(",", ":"))


class AccessLines:
    """The access line, formatted here and handed to the server's handler without a `LogRecord`, when that handler
    is the only thing a record of the access logger would reach (no other handler, filter or level on the way: a
    test's capture, a library's config). Making a LogRecord (the caller's frame looked up, thread and process
    names), the context filter's label built for a JSON line that never prints it, strftime and the redaction of
    fixed strings cost a tiny call more than half of Verdict's own work; the line this writes is the line the
    formatter would have written. `configure_logging` installs it; `sink` answers None when the fast way does not
    apply and the caller should log as usual."""

    def __init__(self, handler: CoalescingStreamHandler, json_format: bool) -> None:
        self.handler = handler
        self.json_format = json_format

    def sink(self, logger: logging.Logger, level: int) -> CoalescingStreamHandler | None:
        """The handler to hand an access line to directly, or None when logging's own route must run."""
        handler = self.handler
        if logging.root.manager.disable >= level or level < handler.level or len(handler.filters) != 1:
            return None
        node: logging.Logger | None = logger
        while node is not None:
            if node.filters:
                return None
            if node.handlers:
                if node is not logging.root or len(node.handlers) != 1 or node.handlers[0] is not handler:
                    return None
                return handler
            if not node.propagate:
                return None
            node = node.parent
        return None

    def line(
        self, logger: logging.Logger, level: int, message: str, fields: dict[str, Any], call: CallContext | None
    ) -> str:
        """The formatted line for `message` and `fields` at `level`, redacted where a caller chose any of it."""
        now = time.time_ns()
        if self.json_format:
            line = _json_line(now / 1e9, logging.getLevelName(level), logger.name, message, call, fields)
        else:
            second, rest = divmod(now, 1_000_000_000)
            line = _with_fields(
                f"{_CLOCK.local(second, rest // 1_000_000)} {logging.getLevelName(level)} {logger.name} "
                f"[{_call_label(call)}] {message}",
                fields,
            )
        if call is not None and (call.request_id or call.principal or call.learned):
            return redact_secrets(line)
        return line


access_lines: AccessLines | None = None
"""Set by `configure_logging`: how the access line skips logging's per-record work (see AccessLines)."""


def configure_logging(log_format: str, level: str, *, stream: TextIO | None = None) -> logging.Handler:
    """Route every log record of the process to one stream (stderr by default) in one format; returns the handler."""
    handler = CoalescingStreamHandler(stream or sys.stderr)  # lines written in batches (log_stream.py)
    handler.addFilter(CallContextFilter())
    handler.setFormatter(_Redacting(JsonFormatter() if log_format == "json" else TextFormatter()))
    logging.basicConfig(level=level, handlers=[handler], force=True)
    global access_lines
    access_lines = AccessLines(handler, log_format == "json")
    for name in HEADER_LOGGERS:
        library = logging.getLogger(name)
        library.setLevel(max(logging.INFO, library.getEffectiveLevel()))
    return handler
