"""The Gemini API as a judge host (`judge_host: gemini-api`): POST /v1beta/models/MODEL:generateContent with
`x-goog-api-key`.

Request: one user turn in `contents`, the system prompt as `systemInstruction`, temperature 0 and
`responseMimeType: application/json` (the answer is a JSON object). Response (Google's documented
`GenerateContentResponse`): `candidates[0].content.parts[].text` hold the answer, `modelVersion` the model that
answered, `usageMetadata` the prompt and candidate token counts; no candidates with `promptFeedback.blockReason` is a
refusal of the prompt. An error is `{"error": {"code", "message", "status"}}`. Named `gemini-api` beside the `gemini`
CLI, which reads the same keys.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from verdict.judges.apis import ApiHost, ApiRequest
from verdict.judges.credentials import ApiKey
from verdict.judges.envelopes import EnvelopeError, JudgeReply, as_int, error_text, loads

__all__ = ["GEMINI", "read_generate_content"]


def _build(host: ApiHost, system: str, prompt: str, model: str, key: ApiKey) -> ApiRequest:
    body: dict[str, Any] = {
        "contents": [{"role": "user", "parts": [{"text": prompt}]}],
        "generationConfig": {"temperature": 0, "responseMimeType": "application/json"},
    }
    if system:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    path = f"/v1beta/models/{quote(model.removeprefix('models/'), safe='-._')}:generateContent"
    return ApiRequest(path, {"x-goog-api-key": key.value()}, body)


def read_generate_content(body: str) -> JudgeReply:
    """A generateContent response body (or its error object)."""
    try:
        envelope = loads(body)
    except json.JSONDecodeError as exc:
        raise EnvelopeError("parse_error", f"Failed to parse the generateContent response: {exc}") from None
    if not isinstance(envelope, Mapping):
        raise EnvelopeError("parse_error", "the generateContent response is not an object")
    usage = envelope.get("usageMetadata")
    usage = usage if isinstance(usage, Mapping) else {}
    common: dict[str, Any] = {
        "model": str(envelope.get("modelVersion") or ""),
        "input_tokens": as_int(usage.get("promptTokenCount")),
        "output_tokens": as_int(usage.get("candidatesTokenCount")),
    }
    if envelope.get("error"):
        return JudgeReply("gemini-api", is_error=True, error=error_text(envelope["error"]), **common)
    candidates = envelope.get("candidates")
    if not isinstance(candidates, list) or not candidates or not isinstance(candidates[0], Mapping):
        feedback = envelope.get("promptFeedback")
        reason = feedback.get("blockReason") if isinstance(feedback, Mapping) else None
        if reason:
            return JudgeReply("gemini-api", is_error=True, error=f"the prompt was blocked ({reason})", **common)
        raise EnvelopeError("empty_result", "Empty result field in the generateContent response: no candidates")
    content = candidates[0].get("content")
    parts = content.get("parts") if isinstance(content, Mapping) else None
    text = "".join(
        str(part.get("text", "")) for part in parts or () if isinstance(part, Mapping) and not part.get("thought")
    )
    if not text.strip():
        reason = candidates[0].get("finishReason")
        raise EnvelopeError("empty_result", f"Empty result field in the generateContent response (finish {reason})")
    return JudgeReply("gemini-api", text=text, extras={"finish_reason": candidates[0].get("finishReason")}, **common)


GEMINI = ApiHost(
    "gemini-api",
    "https://generativelanguage.googleapis.com",
    key_variables=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    default_model="gemini-2.5-flash",
    build=_build,
    read=read_generate_content,
)
"""The Gemini API (Google AI Studio keys)."""
