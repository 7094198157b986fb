"""Envelope readers: one per host, each turning what that CLI printed into one normalized `JudgeReply`.

The reference understood only claude-shaped envelopes (a `result` object, or a bare verdict object), so codex, gemini,
kimi and omp always came back "Empty result field". Here each host has its own reader for the shape that CLI really
prints (docs/judges.md lists them, tests/judges/envelopes/ holds a recorded example of each):

- claude: one `{"type":"result", ...}` object; `is_error` and the cause are in it even when the CLI exits 1;
- qwen: stream-json lines (or a JSON array with `--output-format json`) whose last `type:"result"` event carries the
  answer, or `is_error` with `error.message`; an API failure can come back as a successful answer `[API Error: ...]`;
- codex: NDJSON events; the answer is the last `item.completed` event whose item is an `agent_message`, usage is on
  `turn.completed`, and a failure is `turn.failed` or top-level `error` events (an `item.type == "error"` item is a
  warning, not a failure);
- gemini: `{response, stats, error?}` on stdout, or, when it fails early, that JSON on **stderr** after plain lines;
- kimi: stream-json messages; the last `role: "assistant"` message carries the answer, a trailing meta line follows;
- omp: JSONL agent events; the last assistant message carries the answer.

Every reader falls back to the reference's parse (the whole stdout as JSON, else its last non-blank line, read as a
claude envelope) when its own shape is not found, so a bare verdict object or a `result` field works on any host.
Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MAX_INTEGER_DIGITS",
    "READERS",
    "EnvelopeError",
    "JudgeReply",
    "OversizedNumber",
    "loads",
    "raw_decode",
    "read_envelope",
]

RETRIES_EXHAUSTED = "error_max_structured_output_retries"


class EnvelopeError(Exception):
    """Raised when a host's output holds no answer and no error the reader can name.

    `kind` is `parse_error` (not JSON at all) or `empty_result` (JSON, but no answer in it).
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass(frozen=True)
class JudgeReply:
    """What a judge said, whatever host said it.

    `structured` is an answer object the host produced for a JSON schema (or an answer that arrived as an object);
    `text` is the model's final text otherwise. `is_error` with `error` is the host's own report of a failure
    (not logged in, API error, retries exhausted: `subtype`). Usage and cost are present only when the host
    reported them.
    """

    host: str
    text: str = ""
    structured: Mapping[str, Any] | None = None
    is_error: bool = False
    error: str = ""
    subtype: str = ""
    model: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    extras: Mapping[str, Any] = field(default_factory=dict)

    @property
    def retries_exhausted(self) -> bool:
        return self.subtype == RETRIES_EXHAUSTED


MAX_INTEGER_DIGITS = 20
"""The longest integer a judge's JSON may hold: every count, cost and score fits in 64 bits (20 digits). Python
refuses to parse integers past 4,300 digits (a ValueError no caller expects) and a 400-digit token count overflows
every float it is turned into; either was an INTERNAL error for a judge's garbage."""


class OversizedNumber(ValueError):
    """Raised when a judge's JSON holds an integer longer than MAX_INTEGER_DIGITS: a malfunctioning judge, whose
    reply is an `error` verdict (`api_error`, `oversized_number`), never a parse of a number nobody can use."""

    def __init__(self, digits: int) -> None:
        super().__init__(f"an integer of {digits} digits, longer than any count or score ({MAX_INTEGER_DIGITS})")
        self.digits = digits


def _bounded_int(text: str) -> int:
    digits = len(text) - text.startswith("-")
    if digits > MAX_INTEGER_DIGITS:
        raise OversizedNumber(digits)
    return int(text)


_DECODER = json.JSONDecoder(parse_int=_bounded_int)


def loads(text: str) -> Any:
    """`json.loads` for text a judge wrote. Nesting deeper than the interpreter's recursion limit (`[[[[…`, a few
    hundred kilobytes at most) makes the json module raise RecursionError, which no caller expects and which
    would turn a judge's garbage into an INTERNAL error; here it is the JSONDecodeError it is. An integer longer
    than MAX_INTEGER_DIGITS raises OversizedNumber."""
    try:
        return _DECODER.decode(text)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, 0) from None


def raw_decode(text: str, start: int) -> tuple[Any, int]:
    """`JSONDecoder.raw_decode` at `start`, with the same treatment of deep nesting as `loads`."""
    try:
        return _DECODER.raw_decode(text, start)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, start) from None


def _json_lines(text: str) -> Iterator[Any]:
    """Every line of `text` that parses as JSON, in order; other lines (progress text, warnings) are skipped."""
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] not in "{[":
            continue
        try:
            yield loads(line)
        except json.JSONDecodeError:
            continue


def _whole_or_last_line(stdout: str) -> Any:
    """The reference's parse: the whole output as JSON, else its last non-blank line."""
    stripped = stdout.strip()
    try:
        return loads(stripped)
    except json.JSONDecodeError as whole:
        lines = [line for line in stripped.splitlines() if line.strip()]
        if not lines:
            raise EnvelopeError("parse_error", f"Failed to parse LLM response: {whole}") from None
        try:
            return loads(lines[-1])
        except json.JSONDecodeError as last:
            raise EnvelopeError("parse_error", f"Failed to parse LLM response: {last}") from None


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int):
        return value if abs(value) < 2**63 else None
    return int(value) if math.isfinite(value) and abs(value) < 2**63 else None


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int) and abs(value) >= 2**63:
        return None
    return float(value) if math.isfinite(value) else None


def _usage(usage: Any) -> tuple[int | None, int | None]:
    """Input and output tokens from the usage objects the hosts print (Anthropic, OpenAI and codex spellings)."""
    if not isinstance(usage, Mapping):
        return None, None
    tokens_in = _int(usage.get("input_tokens", usage.get("prompt_tokens", usage.get("input"))))
    tokens_out = _int(usage.get("output_tokens", usage.get("completion_tokens", usage.get("output"))))
    return tokens_in, tokens_out


def _result_envelope(host: str, envelope: Any) -> JudgeReply:
    """A claude-shaped result object (claude's only output, qwen's final event): the reference's field order."""
    if not isinstance(envelope, Mapping):
        raise EnvelopeError("parse_error", f"Failed to parse LLM response: expected an object, got {_kind(envelope)}")
    subtype = str(envelope.get("subtype") or "")
    tokens_in, tokens_out = _usage(envelope.get("usage"))
    model_usage = envelope.get("modelUsage")
    model = next(iter(model_usage), "") if isinstance(model_usage, Mapping) and model_usage else ""
    common: dict[str, Any] = {
        "host": host,
        "subtype": subtype,
        "model": str(model),
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
        "cost_usd": _float(envelope.get("total_cost_usd")),
    }
    if subtype == RETRIES_EXHAUSTED:
        return JudgeReply(is_error=True, error="could not produce valid structured output after retries", **common)
    result = envelope.get("result")
    if envelope.get("is_error"):
        return JudgeReply(is_error=True, error=_error_text(result, envelope.get("error")), **common)
    if isinstance(envelope.get("structured_output"), Mapping):
        return JudgeReply(structured=envelope["structured_output"], text=_text(result), **common)
    if isinstance(result, Mapping):
        return JudgeReply(structured=result, **common)
    if isinstance(result, str) and result.strip():
        return JudgeReply(text=result, **common)
    if "verdict" in envelope or ("ok" in envelope and "type" not in envelope):
        return JudgeReply(structured=envelope, **common)
    raise EnvelopeError("empty_result", f"Empty result field in {host} response")


def _error_text(*candidates: Any) -> str:
    for candidate in candidates:
        if isinstance(candidate, Mapping) and candidate.get("message"):
            return str(candidate["message"])
        if isinstance(candidate, str) and candidate.strip():
            return candidate
    return "no message"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _kind(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", type(None): "null", bool: "boolean"}.get(
        type(value), "number"
    )


def read_claude(stdout: str, stderr: str) -> JudgeReply:
    return _result_envelope("claude-code", _whole_or_last_line(stdout))


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
        events = list(_json_lines(stdout))
    results = [event for event in events if isinstance(event, Mapping) and event.get("type") == "result"]
    if not results:
        return _fallback("qwen", stdout)
    reply = _result_envelope("qwen", results[-1])
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
    for event in _json_lines(stdout):
        if not isinstance(event, Mapping) or event.get("type") not in _CODEX_EVENTS:
            continue
        seen = True
        kind = event.get("type")
        item = event.get("item")
        if kind == "item.completed" and isinstance(item, Mapping) and item.get("type") == "agent_message":
            answer = _text(item.get("text"))
        elif kind == "turn.completed":
            tokens_in, tokens_out = _usage(event.get("usage"))
        elif kind == "turn.failed":
            failure = _error_text(event.get("error"))
        elif kind == "error":
            stream_error = _error_text(event.get("message"), event.get("error"))
    if not seen:
        return _fallback("codex", stdout)
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
        return _fallback("gemini", stdout)
    tokens_in, tokens_out = _gemini_tokens(envelope.get("stats"))
    error = envelope.get("error")
    if error:
        return JudgeReply(
            "gemini", is_error=True, error=_error_text(error), input_tokens=tokens_in, output_tokens=tokens_out
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
            tokens_in += _int(tokens.get("prompt")) or 0
            tokens_out += _int(tokens.get("candidates")) or 0
    return (tokens_in, tokens_out) if found else (None, None)


def _message_text(content: Any) -> str:
    """A message's text: a string, or the text parts of a content list (thinking and tool parts are skipped)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, Mapping) and part.get("type", "text") == "text"
        )
    return ""


def read_kimi(stdout: str, stderr: str) -> JudgeReply:
    answer: str | None = None
    for event in _json_lines(stdout):
        if isinstance(event, Mapping) and event.get("role") == "assistant":
            text = _message_text(event.get("content"))
            if text.strip():
                answer = text
    if answer is None:
        return _fallback("kimi-code", stdout)
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
    for event in _json_lines(stdout):
        if isinstance(event, Mapping):
            for message in _assistant_messages(event):
                last = message
    if last is None:
        return _fallback("omp", stdout)
    tokens_in, tokens_out = _usage(last.get("usage"))
    usage = last.get("usage")
    cost = usage.get("cost") if isinstance(usage, Mapping) else None
    cost_usd = _float(cost.get("total")) if isinstance(cost, Mapping) else _float(cost)
    common: dict[str, Any] = {
        "model": str(last.get("model") or ""),
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
        "cost_usd": cost_usd,
    }
    if last.get("stopReason") in ("error", "aborted") or last.get("errorMessage"):
        return JudgeReply("omp", is_error=True, error=_error_text(last.get("errorMessage")), **common)
    text = _message_text(last.get("content"))
    if not text.strip():
        raise EnvelopeError("empty_result", "Empty result field in omp response")
    return JudgeReply("omp", text=text, **common)


def _fallback(host: str, stdout: str) -> JudgeReply:
    """The reference's reading, for output that is not in the host's own shape."""
    return _result_envelope(host, _whole_or_last_line(stdout))


def read_chat_completion(body: str) -> JudgeReply:
    """An OpenAI-compatible chat-completions response body."""
    try:
        envelope = loads(body)
    except json.JSONDecodeError as exc:
        raise EnvelopeError("parse_error", f"Failed to parse chat completion: {exc}") from None
    if not isinstance(envelope, Mapping):
        raise EnvelopeError("parse_error", f"chat completion is {_kind(envelope)}, not an object")
    tokens_in, tokens_out = _usage(envelope.get("usage"))
    common: dict[str, Any] = {
        "model": str(envelope.get("model") or ""),
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
    }
    if envelope.get("error"):
        return JudgeReply("openai-compatible", is_error=True, error=_error_text(envelope["error"]), **common)
    choices = envelope.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise EnvelopeError("empty_result", "Empty result field in chat completion: no choices")
    message = choices[0].get("message")
    content = _message_text(message.get("content")) if isinstance(message, Mapping) else ""
    if not content.strip():
        raise EnvelopeError("empty_result", "Empty result field in chat completion: empty message content")
    return JudgeReply(
        "openai-compatible", text=content, extras={"finish_reason": choices[0].get("finish_reason")}, **common
    )


READERS: Mapping[str, Callable[[str, str], JudgeReply]] = {
    "claude-code": read_claude,
    "codex": read_codex,
    "gemini": read_gemini,
    "qwen": read_qwen,
    "kimi-code": read_kimi,
    "omp": read_omp,
}


def read_envelope(host: str, stdout: str, stderr: str = "") -> JudgeReply:
    """The reply in a CLI host's output. Raises EnvelopeError when there is neither an answer nor a named error."""
    return READERS[host](stdout, stderr)
