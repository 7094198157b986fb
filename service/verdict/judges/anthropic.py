"""The Anthropic Messages API as a judge host (`judge_host: anthropic`): POST /v1/messages with `x-api-key`.

Request: `model`, `max_tokens`, `system`, one user message, temperature 0. Response (Anthropic's documented `Message`):
`content` is a list of blocks whose `text` blocks hold the answer, `model` the model that answered, `usage` the
input and output tokens, `stop_reason` why it stopped. An error is `{"type": "error", "error": {"type", "message"}}`
with a 4xx/5xx status. The Claude CLI's aliases (sonnet, opus, haiku) are mapped to model ids, so the server's default
judge model works here too; the model reported is the one the response names.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from verdict.judges.apis import ApiHost, ApiRequest
from verdict.judges.credentials import ApiKey
from verdict.judges.envelopes import EnvelopeError, JudgeReply, error_text, loads, usage_tokens

__all__ = ["ANTHROPIC", "ANTHROPIC_VERSION", "read_message"]

ANTHROPIC_VERSION = "2023-06-01"
"""The `anthropic-version` header: the Messages API's stable version."""
MAX_TOKENS = 4096
"""A verdict object is short; this bounds what one judge answer can cost."""


def _build(host: ApiHost, system: str, prompt: str, model: str, key: ApiKey) -> ApiRequest:
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": MAX_TOKENS,
        "temperature": 0,
        "messages": [{"role": "user", "content": prompt}],
    }
    if system:
        body["system"] = system
    headers = {"x-api-key": key.value(), "anthropic-version": ANTHROPIC_VERSION}
    return ApiRequest("/v1/messages", headers, body)


def read_message(body: str) -> JudgeReply:
    """A Messages API response body (or its error object)."""
    try:
        envelope = loads(body)
    except json.JSONDecodeError as exc:
        raise EnvelopeError("parse_error", f"Failed to parse the Messages API response: {exc}") from None
    if not isinstance(envelope, Mapping):
        raise EnvelopeError("parse_error", "the Messages API response is not an object")
    tokens_in, tokens_out = usage_tokens(envelope.get("usage"))
    common: dict[str, Any] = {"model": str(envelope.get("model") or ""), "input_tokens": tokens_in}
    common["output_tokens"] = tokens_out
    if envelope.get("type") == "error" or envelope.get("error"):
        return JudgeReply("anthropic", is_error=True, error=error_text(envelope.get("error")), **common)
    blocks = envelope.get("content")
    texts = [
        str(block.get("text", ""))
        for block in blocks or ()
        if isinstance(block, Mapping) and block.get("type") == "text"
    ]
    text = "".join(texts)
    if not text.strip():
        raise EnvelopeError("empty_result", "Empty result field in the Messages API response: no text block")
    return JudgeReply("anthropic", text=text, extras={"stop_reason": envelope.get("stop_reason")}, **common)


ANTHROPIC = ApiHost(
    "anthropic",
    "https://api.anthropic.com",
    key_variables=("ANTHROPIC_API_KEY",),
    default_model="claude-sonnet-4-5",
    build=_build,
    read=read_message,
    aliases={"sonnet": "claude-sonnet-4-5", "opus": "claude-opus-4-1", "haiku": "claude-haiku-4-5"},
    claude_aliases=True,
)
"""The Anthropic Messages API."""
