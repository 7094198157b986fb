"""What every judge reply becomes (`JudgeReply`), and the JSON reading all envelope readers share.

The per-CLI readers (`verdict.judges.readers`) and the chat-completion reader below build a `JudgeReply` from what
a host printed; the helpers here are the parts they have in common: JSON that cannot blow the recursion limit, JSON
lines amid progress text, usage objects in Anthropic, OpenAI and codex spelling, a claude-shaped result object, and
the plain reading every reader falls back to when its own shape is absent (the whole output as JSON, else its last
non-blank line, read as a claude envelope), so a bare verdict object or a `result` field works on any host. Pure: no
I/O.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MAX_INTEGER_DIGITS",
    "RETRIES_EXHAUSTED",
    "EnvelopeError",
    "JudgeReply",
    "OversizedNumber",
    "ReplyError",
    "as_float",
    "as_int",
    "error_text",
    "fallback",
    "json_lines",
    "loads",
    "message_text",
    "raw_decode",
    "read_chat_completion",
    "result_envelope",
    "string_or_empty",
    "usage_tokens",
    "whole_or_last_line",
]

RETRIES_EXHAUSTED = "error_max_structured_output_retries"


class ReplyError(Exception):
    """A judge's reply that cannot be used; `kind` is `parse_error` (not readable at all) or `empty_result`
    (readable, but without the thing looked for). The message is what the caller's details show."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class EnvelopeError(ReplyError):
    """Raised when a host's output holds no answer and no error the reader can name."""


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


def json_lines(text: str) -> Iterator[Any]:
    """Every line of `text` that parses as JSON, in order; other lines (progress text, warnings) are skipped."""
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] not in "{[":
            continue
        try:
            yield loads(line)
        except json.JSONDecodeError:
            continue


def whole_or_last_line(stdout: str) -> Any:
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


def as_int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int):
        return value if abs(value) < 2**63 else None
    return int(value) if math.isfinite(value) and abs(value) < 2**63 else None


def as_float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int) and abs(value) >= 2**63:
        return None
    return float(value) if math.isfinite(value) else None


def usage_tokens(usage: Any) -> tuple[int | None, int | None]:
    """Input and output tokens from the usage objects the hosts print (Anthropic, OpenAI and codex spellings)."""
    if not isinstance(usage, Mapping):
        return None, None
    tokens_in = as_int(usage.get("input_tokens", usage.get("prompt_tokens", usage.get("input"))))
    tokens_out = as_int(usage.get("output_tokens", usage.get("completion_tokens", usage.get("output"))))
    return tokens_in, tokens_out


def result_envelope(host: str, envelope: Any) -> JudgeReply:
    """A claude-shaped result object (claude's only output, qwen's final event): the reference's field order."""
    if not isinstance(envelope, Mapping):
        raise EnvelopeError("parse_error", f"Failed to parse LLM response: expected an object, got {_kind(envelope)}")
    subtype = str(envelope.get("subtype") or "")
    tokens_in, tokens_out = usage_tokens(envelope.get("usage"))
    model_usage = envelope.get("modelUsage")
    model = next(iter(model_usage), "") if isinstance(model_usage, Mapping) and model_usage else ""
    common: dict[str, Any] = {
        "host": host,
        "subtype": subtype,
        "model": str(model),
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
        "cost_usd": as_float(envelope.get("total_cost_usd")),
    }
    if subtype == RETRIES_EXHAUSTED:
        return JudgeReply(is_error=True, error="could not produce valid structured output after retries", **common)
    result = envelope.get("result")
    if envelope.get("is_error"):
        return JudgeReply(is_error=True, error=error_text(result, envelope.get("error")), **common)
    if isinstance(envelope.get("structured_output"), Mapping):
        return JudgeReply(structured=envelope["structured_output"], text=string_or_empty(result), **common)
    if isinstance(result, Mapping):
        return JudgeReply(structured=result, **common)
    if isinstance(result, str) and result.strip():
        return JudgeReply(text=result, **common)
    if "verdict" in envelope or ("ok" in envelope and "type" not in envelope):
        return JudgeReply(structured=envelope, **common)
    raise EnvelopeError("empty_result", f"Empty result field in {host} response")


def error_text(*candidates: Any) -> str:
    for candidate in candidates:
        if isinstance(candidate, Mapping) and candidate.get("message"):
            return str(candidate["message"])
        if isinstance(candidate, str) and candidate.strip():
            return candidate
    return "no message"


def string_or_empty(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _kind(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", type(None): "null", bool: "boolean"}.get(
        type(value), "number"
    )


def message_text(content: Any) -> str:
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


def fallback(host: str, stdout: str) -> JudgeReply:
    """The reference's reading, for output that is not in the host's own shape."""
    return result_envelope(host, whole_or_last_line(stdout))


def read_chat_completion(body: str) -> JudgeReply:
    """An OpenAI-compatible chat-completions response body."""
    try:
        envelope = loads(body)
    except json.JSONDecodeError as exc:
        raise EnvelopeError("parse_error", f"Failed to parse chat completion: {exc}") from None
    if not isinstance(envelope, Mapping):
        raise EnvelopeError("parse_error", f"chat completion is {_kind(envelope)}, not an object")
    tokens_in, tokens_out = usage_tokens(envelope.get("usage"))
    common: dict[str, Any] = {
        "model": str(envelope.get("model") or ""),
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
    }
    if envelope.get("error"):
        return JudgeReply("openai-compatible", is_error=True, error=error_text(envelope["error"]), **common)
    choices = envelope.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise EnvelopeError("empty_result", "Empty result field in chat completion: no choices")
    message = choices[0].get("message")
    content = message_text(message.get("content")) if isinstance(message, Mapping) else ""
    if not content.strip():
        raise EnvelopeError("empty_result", "Empty result field in chat completion: empty message content")
    return JudgeReply(
        "openai-compatible", text=content, extras={"finish_reason": choices[0].get("finish_reason")}, **common
    )
