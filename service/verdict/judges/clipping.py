"""Clipping what a judge wrote before it goes into a verdict's details.

A judge's reply may be 8 MiB; a reason, its quote and the raw answer holding both again made a response over gRPC's
4 MiB message limit, so the caller got RESOURCE_EXHAUSTED instead of the verdict. Every text a judge wrote passes
through `clip`, and the answer object shown in `raw` through `clip_payload`. Pure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["DETAIL_TEXT_CHARS", "RAW_PAYLOAD_CHARS", "clip", "clip_payload"]

DETAIL_TEXT_CHARS = 4000
"""The most of any one text the judge wrote (a reason, a quote, a verdict it made up) that goes into a verdict's
details (see the module docstring for why)."""
RAW_PAYLOAD_CHARS = 16 * 1024
"""An answer object bigger than this (as JSON) is shown in `raw` by its answer keys only, each clipped."""
_ANSWER_KEYS = ("verdict", "verdict_a", "verdict_b", "ok", "confidence", "reason", "evidence")


def clip(text: str, limit: int = DETAIL_TEXT_CHARS) -> str:
    """`text`, or its first `limit` characters and a note of how much was cut."""
    return text if len(text) <= limit else f"{text[:limit]}… [{len(text) - limit} more characters]"


def clip_payload(payload: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """The answer object for `raw` in the details, and whether it had to be cut (RAW_PAYLOAD_CHARS)."""
    try:
        size = len(json.dumps(payload, default=str))
    except (ValueError, RecursionError):
        size = RAW_PAYLOAD_CHARS + 1
    if size <= RAW_PAYLOAD_CHARS:
        return dict(payload), False
    kept: dict[str, Any] = {}
    for key in _ANSWER_KEYS:
        if key in payload:
            value = payload[key]
            scalar = value is None or isinstance(value, bool | int | float)
            kept[key] = value if scalar else clip(value if isinstance(value, str) else _repr(value))
    return kept, True


def _repr(value: Any) -> str:
    try:
        return repr(value)
    except RecursionError:
        return "(nested too deeply to show)"
