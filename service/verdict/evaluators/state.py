"""State tokens: what the stall evaluators remember between calls, carried by the client instead of the server.

little-loops kept stall counters and snapshots in files under `.loops/tmp`, keyed only by scope or tracked keys, so
two loops (or two runs of one loop) with the same scope shared a counter. Here the server keeps nothing: each response
carries a token the client sends back with its next call, so any replica can answer, a retried call with the same
token gets the same answer, and two loops can never see each other's state.

Format (version 1): the ASCII bytes `v1:` followed by compact JSON with sorted keys,

    v1:{"e":"<evaluator type>","k":"<identity>","s":{...payload...}}

`k` is the first 16 hex digits of the SHA-256 of the canonical JSON of the configuration that identifies what is
being tracked (diff_stall's scope and workspace, action_stall's track list, the stall epsilon), so a token from
another evaluator type or another configuration is refused rather than silently misread. Tokens are not signed: a
client that forges one only changes its own verdicts. A token is at most `MAX_TOKEN_BYTES`.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any

from verdict.errors import InvalidArgument
from verdict.evaluators.values import NON_FINITE_NAMES, non_finite_name

__all__ = [
    "MAX_COUNT",
    "MAX_TOKEN_BYTES",
    "VERSION",
    "decode",
    "encode",
    "identity",
    "number",
    "read_count",
    "read_number",
    "read_text",
]

VERSION = b"v1"
MAX_TOKEN_BYTES = 4096
MAX_COUNT = 2**53
"""No counter a server wrote can be larger (one call adds one); a larger one is forged, and past about 1e308 it could
not even be a detail (a Struct number is a double)."""
_PREFIX = VERSION + b":"


def _invalid(message: str) -> InvalidArgument:
    return InvalidArgument(message, field="state", reason="INVALID_STATE_TOKEN")


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def identity(evaluator: str, tracked: Mapping[str, Any]) -> str:
    """The key a token is bound to: a short digest of the evaluator type and the configuration it tracks."""
    return hashlib.sha256(_canonical([evaluator, tracked]).encode()).hexdigest()[:16]


def encode(evaluator: str, key: str, payload: Mapping[str, Any]) -> bytes:
    """The token for `payload`; deterministic, so the same state always gives the same bytes."""
    token = _PREFIX + _canonical({"e": evaluator, "k": key, "s": payload}).encode()
    if len(token) > MAX_TOKEN_BYTES:  # pragma: no cover - payloads are bounded by construction
        raise ValueError(f"state token of {len(token)} bytes exceeds {MAX_TOKEN_BYTES}")
    return token


def decode(token: bytes, evaluator: str, key: str) -> dict[str, Any] | None:
    """The payload of `token`, or None for the empty token of a first call.

    Raises InvalidArgument(field="state") for a token that is too big, of another version, malformed, or bound to
    another evaluator or configuration: resetting silently would hide the client's mix-up and make a stall that
    should fire never fire.
    """
    if not token:
        return None
    if len(token) > MAX_TOKEN_BYTES:
        raise _invalid(f"state token is {len(token)} bytes, more than the {MAX_TOKEN_BYTES} any token has")
    if not token.startswith(_PREFIX):
        raise _invalid("state token is not a version 1 token; send back exactly the bytes the last response held")
    try:
        document = json.loads(token[len(_PREFIX) :])
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise _invalid("state token is corrupt") from None
    if not isinstance(document, dict) or not isinstance(document.get("s"), dict):
        raise _invalid("state token is corrupt")
    if document.get("e") != evaluator:
        raise _invalid(f"state token belongs to a {document.get('e')!r} evaluator, not {evaluator!r}")
    if document.get("k") != key:
        raise _invalid(f"state token belongs to another {evaluator} configuration; start again with an empty state")
    payload: dict[str, Any] = document["s"]
    return payload


def read_count(payload: Mapping[str, Any], name: str) -> int:
    """A non-negative integer field of a decoded payload, at most MAX_COUNT."""
    value = payload.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise _invalid(f"state token field {name!r} must be an integer from 0 to 2^53")
    return value


def read_text(payload: Mapping[str, Any], name: str) -> str:
    """A string field of a decoded payload."""
    value = payload.get(name)
    if not isinstance(value, str):
        raise _invalid(f"state token field {name!r} must be a string")
    return value


def read_number(payload: Mapping[str, Any], name: str) -> float:
    """A number field of a decoded payload; "nan", "inf" and "-inf" stand for the values JSON cannot spell."""
    value = payload.get(name)
    if isinstance(value, bool):
        raise _invalid(f"state token field {name!r} must be a number")
    if isinstance(value, float):
        return value
    if isinstance(value, int) and abs(value) <= MAX_COUNT:
        return float(value)
    if value in NON_FINITE_NAMES:
        return float(value)
    raise _invalid(f"state token field {name!r} must be a number")


def number(value: float) -> float | str:
    """How a float is written into a payload: itself when finite, else "nan", "inf" or "-inf"."""
    return value if math.isfinite(value) else non_finite_name(value)
