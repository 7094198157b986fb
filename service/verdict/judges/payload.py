"""From a judge's reply to the answer object the evaluators read: the reference's payload fallbacks, in its order.

1. an object the host produced for the schema (`structured_output`, a `result` object, a bare verdict object);
2. the reply text parsed as JSON;
3. tag recovery (llm_structured only): models behind a proxy that ignore the schema answer with `<verdict>`,
   `<confidence>`, `<reason>`, `<evidence>` tags, sometimes inside a json fence;
4. beyond the reference: a JSON object embedded in prose or in a fence. Hosts that cannot enforce a schema (codex,
   gemini, kimi, omp, a local model) often wrap the object in reasoning text, and the reference, which only ever saw
   schema-enforced claude answers, would have failed them all.

Anything else is a parse error or an empty result, and those are judge malfunctions, never verdicts. Pure.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from typing import Any

from verdict.judges.envelopes import JudgeReply, ReplyError, loads, raw_decode

__all__ = ["PayloadError", "json_objects", "recover_tags", "verdict_payload"]

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\r?\n(.*?)```", re.DOTALL)
_MAX_OBJECT_STARTS = 256
"""Bounds the scan for embedded objects (and the fenced blocks tried): each start may read to the end of the text,
so scanning every `{` of a huge reply would be quadratic."""


class PayloadError(ReplyError):
    """Raised when a reply holds no usable answer object. `kind`: `parse_error` or `empty_result`."""


_TAGS = {
    name: (re.compile(f"<{name}>", re.IGNORECASE), re.compile(f"</{name}>", re.IGNORECASE))
    for name in ("verdict", "confidence", "reason", "evidence")
}


def _tag(body: str, name: str) -> str | None:
    """The text between the first `<name>` and the first `</name>` after it, stripped; None without both.

    Two literal searches, so linear: the obvious `<name>\\s*(.*?)\\s*</name>` retries its lazy group from every
    unclosed `<name>` to the end of the text, and a reply of a few hundred kilobytes of `<verdict>` held the event
    loop for minutes. The first opening is the one a regex search would pick: a later opening can only be closed
    by a closing that also closes the first.
    """
    opening, closing = _TAGS[name]
    start = opening.search(body)
    if start is None:
        return None
    end = closing.search(body, start.end())
    return None if end is None else body[start.end() : end.start()].strip()


def _strip_fence(text: str) -> str:
    match = _FENCE.search(text)
    return match.group(1) if match else text


def recover_tags(text: str) -> dict[str, Any] | None:
    """The answer spelled as XML-ish tags, or None without a `<verdict>` tag. The verdict is lower-cased."""
    body = _strip_fence(text)
    verdict = _tag(body, "verdict")
    if verdict is None:
        return None
    answer: dict[str, Any] = {"verdict": verdict.lower()}
    confidence = _tag(body, "confidence")
    if confidence is not None:
        try:
            answer["confidence"] = float(confidence)
        except ValueError:
            answer["confidence"] = confidence
    for name in ("reason", "evidence"):
        value = _tag(body, name)
        if value is not None:
            answer[name] = value
    return answer


def json_objects(text: str) -> Iterator[dict[str, Any]]:
    """Every JSON object found in `text`: fenced blocks first, then objects embedded in prose, in order."""
    for fenced in itertools.islice(_FENCE.finditer(text), _MAX_OBJECT_STARTS):
        try:
            value = loads(fenced.group(1))
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            yield value
    position = 0
    for _ in range(_MAX_OBJECT_STARTS):
        start = text.find("{", position)
        if start == -1:
            return
        try:
            value, end = raw_decode(text, start)
        except json.JSONDecodeError:
            position = start + 1
            continue
        if isinstance(value, dict):
            yield value
        position = end


def verdict_payload(reply: JudgeReply, *, recover: bool = False, key: str = "verdict") -> dict[str, Any]:
    """The answer object in `reply`, trying the fallbacks in the module's order. `recover` enables tag recovery;
    an embedded object is accepted only when it has `key`, and the last one wins (reasoning text before the answer
    may show an example). Raises PayloadError."""
    if reply.structured is not None:
        return dict(reply.structured)
    text = reply.text.strip()
    if not text:
        raise PayloadError("empty_result", f"Empty result field in {reply.host} response")
    try:
        value = loads(text)
    except json.JSONDecodeError as exc:
        if recover and (tagged := recover_tags(text)) is not None:
            return tagged
        embedded = [obj for obj in json_objects(text) if key in obj]
        if not embedded:
            raise PayloadError("parse_error", f"Failed to parse LLM response: {exc}") from None
        return embedded[-1]
    if isinstance(value, dict):
        return value
    kind = "array" if isinstance(value, list) else type(value).__name__
    raise PayloadError("parse_error", f"Failed to parse LLM response: the answer is a JSON {kind}, not an object")
