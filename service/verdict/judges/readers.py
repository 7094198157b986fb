"""One envelope reader per judge CLI, each turning what that CLI printed into one normalized `JudgeReply`.

Each reader knows the shape its CLI really prints (docs/judges.md lists them, tests/judges/envelopes/ holds recorded
examples of each); the host records in `verdict.judges.clis` name their reader:

- claude: one `{"type":"result", ...}` object; `is_error` and the cause are in it even when the CLI exits 1;
- qwen: stream-json lines (or a JSON array with `--output-format json`) whose last `type:"result"` event carries the
  answer, or `is_error` with `error.message`; an API failure can come back as a successful answer `[API Error: ...]`;
- codex: NDJSON events; the answer is the last `item.completed` event whose item is an `agent_message`, usage is on
  `turn.completed`, and a failure is `turn.failed` or top-level `error` events (an `item.type == "error"` item is a
  warning, not a failure);
- gemini: `{response, stats, error?}` on stdout, or, when it fails early, that JSON on **stderr** after plain lines;
- kimi: stream-json messages; the last `role: "assistant"` message carries the answer, a trailing meta line follows;
- omp: JSONL agent events; the last assistant message carries the answer.

Every reader falls back to the plain reading (`envelopes.fallback`: the whole stdout as JSON, else its last non-blank
line, read as a claude envelope) when its own shape is not found, so a bare verdict object or a `result` field works
on any host. Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping
from typing import Any

from verdict.judges.envelopes import (
    EnvelopeError,
    JudgeReply,
    as_float,
    as_int,
    error_text,
    fallback,
    json_lines,
    loads,
    message_text,
    raw_decode,
    result_envelope,
    string_or_empty,
    usage_tokens,
    whole_or_last_line,
)

__all__ = ["read_claude", "read_codex", "read_gemini", "read_kimi", "read_omp", "read_qwen"]


def read_claude(stdout: str, stderr: str) -> JudgeReply:
    return result_envelope("claude-code", whole_or_last_line(stdout))


def read_qwen(stdout: str, stderr: str) -> JudgeReply:
    events: list[Any] = []
    stripped = stdout.strip()
    if stripped.startswith("["):
        try:
            whole = loads(stripped)
        except json.JSONDecodeError:
            whole = None
        if isinstance(whole, list):
            events = whole
    if not events:
        events = list(json_lines(stdout))
    results = [event for event in events if isinstance(event, Mapping) and event.get("type") == "result"]
    if not results:
        return fallback("qwen", stdout)
    reply = result_envelope("qwen", results[-1])
    if not reply.is_error and reply.structured is None and reply.text.lstrip().startswith("[API Error"):
        return dataclasses.replace(reply, is_error=True, error=reply.text.strip(), text="")
    return reply


_CODEX_EVENTS = frozenset(
    {
        "thread.started",
        "turn.started",
        "turn.completed",
        "turn.failed",
        "item.started",
        "item.updated",
        "item.completed",
        "error",
    }
)
"""The event types of `codex exec --json` (as named in the 0.171.0 binary)."""


def read_codex(stdout: str, stderr: str) -> JudgeReply:
    answer: str | None = None
    failure = ""
    stream_error = ""
    tokens_in: int | None = None
    tokens_out: int | None = None
    seen = False
    for event in json_lines(stdout):
        if not isinstance(event, Mapping) or event.get("type") not in _CODEX_EVENTS:
            continue
        seen = True
        kind = event.get("type")
        item = event.get("item")
        if kind == "item.completed" and isinstance(item, Mapping) and item.get("type") == "agent_message":
            answer = string_or_empty(item.get("text"))
        elif kind == "turn.completed":
            tokens_in, tokens_out = usage_tokens(event.get("usage"))
        elif kind == "turn.failed":
            failure = error_text(event.get("error"))
        elif kind == "error":
            stream_error = error_text(event.get("message"), event.get("error"))
    if not seen:
        return fallback("codex", stdout)
    if answer is not None and answer.strip():
        return JudgeReply("codex", text=answer, input_tokens=tokens_in, output_tokens=tokens_out)
    if failure or stream_error:
        return JudgeReply(
            "codex", is_error=True, error=failure or stream_error, input_tokens=tokens_in, output_tokens=tokens_out
        )
    raise EnvelopeError("empty_result", "Empty result field in codex response: no agent_message event")


_GEMINI_OBJECT_STARTS = 64
"""How many line-initial `{` are tried: each try may read to the end of up to 8 MiB of output."""


def _gemini_object(text: str) -> Mapping[str, Any] | None:
    """gemini's JSON object, which may follow plain-text lines (its stderr on an early failure).

    gemini prints the object pretty-printed, so it starts a line and runs to the end of the text. Only `{` at the
    start of a line is tried, a bounded number of times, and without copying the text: trying every `{` of an
    8 MiB reply (a truncated answer full of braces) with a slice each was quadratic, minutes on the event loop.
    """
    stripped = text.strip()
    start = 0 if stripped.startswith("{") else stripped.find("\n{")
    for _ in range(_GEMINI_OBJECT_STARTS):
        if start == -1:
            return None
        start = stripped.index("{", start)
        try:
            value, end = raw_decode(stripped, start)
        except json.JSONDecodeError:
            start = stripped.find("\n{", start)
            continue
        if end != len(stripped):
            start = stripped.find("\n{", start)
            continue
        return value if isinstance(value, Mapping) else None
    return None


def read_gemini(stdout: str, stderr: str) -> JudgeReply:
    envelope = _gemini_object(stdout) if stdout.strip() else _gemini_object(stderr)
    if envelope is None or not ({"response", "error", "stats"} & envelope.keys()):
        return fallback("gemini", stdout)
    tokens_in, tokens_out = _gemini_tokens(envelope.get("stats"))
    error = envelope.get("error")
    if error:
        return JudgeReply(
            "gemini", is_error=True, error=error_text(error), input_tokens=tokens_in, output_tokens=tokens_out
        )
    response = envelope.get("response")
    if isinstance(response, Mapping):
        return JudgeReply("gemini", structured=response, input_tokens=tokens_in, output_tokens=tokens_out)
    if isinstance(response, str) and response.strip():
        return JudgeReply("gemini", text=response, input_tokens=tokens_in, output_tokens=tokens_out)
    raise EnvelopeError("empty_result", "Empty result field in gemini response")


def _gemini_tokens(stats: Any) -> tuple[int | None, int | None]:
    models = stats.get("models") if isinstance(stats, Mapping) else None
    if not isinstance(models, Mapping):
        return None, None
    tokens_in = tokens_out = 0
    found = False
    for per_model in models.values():
        tokens = per_model.get("tokens") if isinstance(per_model, Mapping) else None
        if isinstance(tokens, Mapping):
            found = True
            tokens_in += as_int(tokens.get("prompt")) or 0
            tokens_out += as_int(tokens.get("candidates")) or 0
    return (tokens_in, tokens_out) if found else (None, None)


def read_kimi(stdout: str, stderr: str) -> JudgeReply:
    answer: str | None = None
    for event in json_lines(stdout):
        if isinstance(event, Mapping) and event.get("role") == "assistant":
            text = message_text(event.get("content"))
            if text.strip():
                answer = text
    if answer is None:
        return fallback("kimi-code", stdout)
    return JudgeReply("kimi-code", text=answer)


def _assistant_messages(event: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    message = event.get("message")
    if isinstance(message, Mapping) and message.get("role") == "assistant":
        yield message
    messages = event.get("messages")
    if isinstance(messages, list):
        yield from (m for m in messages if isinstance(m, Mapping) and m.get("role") == "assistant")
    if event.get("role") == "assistant":
        yield event


def read_omp(stdout: str, stderr: str) -> JudgeReply:
    last: Mapping[str, Any] | None = None
    for event in json_lines(stdout):
        if isinstance(event, Mapping):
            for message in _assistant_messages(event):
                last = message
    if last is None:
        return fallback("omp", stdout)
    tokens_in, tokens_out = usage_tokens(last.get("usage"))
    usage = last.get("usage")
    cost = usage.get("cost") if isinstance(usage, Mapping) else None
    cost_usd = as_float(cost.get("total")) if isinstance(cost, Mapping) else as_float(cost)
    common: dict[str, Any] = {
        "model": str(last.get("model") or ""),
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
        "cost_usd": cost_usd,
    }
    if last.get("stopReason") in ("error", "aborted") or last.get("errorMessage"):
        return JudgeReply("omp", is_error=True, error=error_text(last.get("errorMessage")), **common)
    text = message_text(last.get("content"))
    if not text.strip():
        raise EnvelopeError("empty_result", "Empty result field in omp response")
    return JudgeReply("omp", text=text, **common)
