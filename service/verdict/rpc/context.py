"""The call being answered, as every layer above the domain sees it: method, request id, deadline, trace, principal.

Set once per call by the server's metrics interceptor (or the HTTP port) in a contextvar, and read by the log
formatter, the access line and the decision record, so none of them threads a context through pure code.
"""

from __future__ import annotations

import contextvars
import re
from dataclasses import dataclass, field

__all__ = ["CallContext", "TraceContext", "current_call", "parse_traceparent"]

_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?")


@dataclass(frozen=True)
class TraceContext:
    """The W3C trace context a caller sent (`traceparent`): which distributed trace and parent span a call is in."""

    trace_id: str
    span_id: str
    sampled: bool


def parse_traceparent(value: str) -> TraceContext | None:
    """Read a W3C `traceparent` header; None when it is absent or invalid (the spec says: then ignore it).

    Version ff, all-zero ids and upper-case hex are invalid; a future version may append fields after a dash."""
    match = _TRACEPARENT.fullmatch(value.strip())
    if match is None:
        return None
    version, trace_id, span_id, flags, rest = match.groups()
    if version == "ff" or (version == "00" and rest) or set(trace_id) == {"0"} or set(span_id) == {"0"}:
        return None
    return TraceContext(trace_id, span_id, bool(int(flags, 16) & 1))


@dataclass(frozen=True)
class CallContext:
    """What a log line (and a decision record) about the current call should carry."""

    method: str
    request_id: str
    deadline_seconds: float | None
    trace: TraceContext | None = None
    principal: str = ""
    """The authenticated principal (never a token); empty until the access interceptor has authenticated the call."""
    transport: str = "grpc"
    learned: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    """Facts learned inside the call that lines written after it need: the access interceptor records the principal
    here too, because the context it publishes with the principal is reset before the access line is written."""

    @property
    def trace_id(self) -> str:
        return self.trace.trace_id if self.trace is not None else ""

    def log_fields(self) -> dict[str, str]:
        """The call's identity as structured log fields (empty ones left out)."""
        fields = {
            "method": self.method,
            "request_id": self.request_id,
            "trace_id": self.trace_id,
            "span_id": self.trace.span_id if self.trace is not None else "",
            "principal": self.principal or self.learned.get("principal", ""),
        }
        return {key: value for key, value in fields.items() if value}


current_call: contextvars.ContextVar[CallContext | None] = contextvars.ContextVar("verdict_call", default=None)
