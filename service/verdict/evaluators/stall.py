"""The stall evaluators, as pure functions of (step, previous state) -> (verdict, details, next state).

"Stalled" is `no` (stop, or take another route) and "still moving" is `yes`, as in little-loops. What little-loops
kept in files (a counter, the last diff or hash, a score history) is the token payload here; see `state.py` for the
envelope. Each function also names the configuration its token is bound to (`*_identity`), so a token from another
configuration is refused.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any

from verdict.errors import InvalidArgument
from verdict.evaluators import state
from verdict.evaluators.interpolation import InterpolationError, Namespaces, interpolate
from verdict.evaluators.model import Judgement, Step

__all__ = [
    "STAT_PREVIEW_CHARS",
    "action_stall",
    "action_stall_identity",
    "diff_stall",
    "diff_stall_content",
    "diff_stall_identity",
    "open_question_stall",
    "score_stall",
    "score_stall_identity",
]

STAT_PREVIEW_CHARS = 512
"""How much of the last `git diff --stat` the diff_stall token keeps for a human reading it; the hash decides."""

_LOOKUP_NAMESPACES = ("context", "captured", "prev", "result")


def diff_stall_identity(settings: Mapping[str, Any], workspace: str) -> dict[str, Any]:
    """A diff_stall token tracks one scope in one workspace (little-loops keyed by scope only, across all loops)."""
    return {"scope": sorted(settings["scope"]), "workspace": workspace}


def diff_stall(step: Step, diff: str) -> Judgement:
    """`diff` is this call's `git diff --stat`; the same diff max_stall times in a row is stalled."""
    max_stall: int = step.settings["max_stall"]
    digest = hashlib.sha256(diff.encode()).hexdigest()
    previous = _snapshot(step.state)
    if previous is not None and digest == previous[0]:
        count = previous[1] + 1
        verdict = "no" if count >= max_stall else "yes"
        changed = False
    else:
        count, verdict, changed = 0, "yes", True
    payload = {"h": digest, "n": count, "stat": diff[:STAT_PREVIEW_CHARS]}
    return Judgement(verdict, {"stall_count": count, "max_stall": max_stall, "diff_changed": changed}, payload)


def diff_stall_content(step: Step, parts: Mapping[str, str]) -> Judgement:
    """`parts` is this call's fingerprint (`fingerprint.PARTS` → digest); the same fingerprint max_stall times in a
    row is stalled. The details name the parts that changed since the previous call (all of them on a first call).

    A token written by `compare: stat` (or by a server from before fingerprints) holds no parts: that call counts as
    a first call, so a loop upgraded in flight sees progress once rather than a stall it did not make.
    """
    max_stall: int = step.settings["max_stall"]
    digest = hashlib.sha256("\0".join(f"{name}={value}" for name, value in parts.items()).encode()).hexdigest()[:32]
    previous = _fingerprint_snapshot(step.state)
    if previous is not None and digest == previous[0]:
        count = previous[1] + 1
        verdict = "no" if count >= max_stall else "yes"
        changed: list[str] = []
    else:
        count, verdict = 0, "yes"
        before = previous[2] if previous is not None else {}
        changed = [name for name, value in parts.items() if before.get(name) != value]
    details = {
        "stall_count": count,
        "max_stall": max_stall,
        "diff_changed": bool(changed),
        "compare": "content",
        "changed": changed,
    }
    return Judgement(verdict, details, {"m": "content", "h": digest, "n": count, "p": dict(parts)})


def _fingerprint_snapshot(payload: Mapping[str, Any] | None) -> tuple[str, int, dict[str, str]] | None:
    """(digest, count, parts) of a content token; None for a first call or a token of `compare: stat`."""
    if payload is None or payload.get("m") != "content":
        return None
    parts = payload.get("p")
    if not isinstance(parts, dict) or not all(isinstance(value, str) for value in parts.values()):
        raise InvalidArgument(
            "state token field 'p' must map part names to digests", field="state", reason="INVALID_STATE_TOKEN"
        )
    return state.read_text(payload, "h"), state.read_count(payload, "n"), parts


def _snapshot(payload: Mapping[str, Any] | None) -> tuple[str, int] | None:
    """The (hash, count) of a diff_stall or action_stall token, checked whole before anything is compared."""
    if payload is None:
        return None
    return state.read_text(payload, "h"), state.read_count(payload, "n")


def _tracked(settings: Mapping[str, Any]) -> list[str]:
    track: list[str] = settings["track"]
    return track or ["action"]


def action_stall_identity(settings: Mapping[str, Any]) -> dict[str, Any]:
    return {"track": sorted(_tracked(settings))}


def _tracked_value(key: str, namespaces: Namespaces) -> str:
    """A dotted key is a ${...} path; a bare key is tried in context, captured, prev and result. Misses are ""."""
    candidates = [key] if "." in key else [f"{namespace}.{key}" for namespace in _LOOKUP_NAMESPACES]
    for candidate in candidates:
        try:
            return interpolate(f"${{{candidate}}}", namespaces)
        except InterpolationError:
            continue
    return ""


def action_stall(step: Step) -> Judgement:
    """The same tracked values max_repeat times in a row is stalled (the same action while files change).

    Never an error: a key that resolves nowhere counts as "".
    """
    track = _tracked(step.settings)
    max_repeat: int = step.settings["max_repeat"]
    combined = "|".join(f"{key}={_tracked_value(key, step.namespaces)}" for key in track)
    current = hashlib.md5(combined.encode(), usedforsecurity=False).hexdigest()
    previous = _snapshot(step.state)
    details: dict[str, Any] = {"max_repeat": max_repeat, "tracked_keys": list(track)}
    if previous is not None and current == previous[0]:
        count = previous[1] + 1
        verdict = "no" if count >= max_repeat else "yes"
        details.update(stall_count=count, hash_changed=False)
        if verdict == "no":
            details["repeated_hash"] = current
    else:
        count, verdict = 0, "yes"
        details.update(stall_count=0, hash_changed=True)
    return Judgement(verdict, details, {"h": current, "n": count})


def score_stall_identity(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The running best depends on epsilon, so a token is bound to it; max_stall is only a threshold."""
    return {"epsilon": settings["epsilon"]}


def score_stall(step: Step) -> Judgement:
    """No new best score (by more than epsilon) for max_stall calls is stalled.

    little-loops re-read a history file and folded over it: a score above best+epsilon resets the count, anything
    else increments it (a small gain still raises the best). The fold's accumulator (rounds, best, count) is the
    token, which gives exactly little-loops' answer for the whole history at a constant size.
    """
    return _plateau(step, improves=lambda value, best, epsilon: value > best + epsilon, beats=lambda a, b: a > b)


def open_question_stall(step: Step) -> Judgement:
    """score_stall with a running minimum: progress is a count below the lowest minus epsilon."""
    return _plateau(step, improves=lambda value, best, epsilon: value < best - epsilon, beats=lambda a, b: a < b)


def _plateau(
    step: Step, *, improves: Callable[[float, float, float], bool], beats: Callable[[float, float], bool]
) -> Judgement:
    max_stall: int = step.settings["max_stall"]
    epsilon: float = step.settings["epsilon"]
    previous = step.state
    rounds, best, count = 0, 0.0, 0
    if previous is not None:
        rounds, count = state.read_count(previous, "r"), state.read_count(previous, "n")
        best = state.read_number(previous, "b")
    value = _score(step.output)
    skipped = value is None
    if value is not None:
        if rounds == 0 or improves(value, best, epsilon):
            best, count = value, 0
        else:
            if beats(value, best):
                best = value
            count += 1
        rounds += 1
    details: dict[str, Any] = {
        "stall_count": count if rounds >= 2 else 0,
        "max_stall": max_stall,
        "epsilon": epsilon,
        "rounds": rounds,
        "best": best if rounds else None,
    }
    if skipped:
        details["skipped"] = True
    verdict = "no" if rounds >= 2 and count >= max_stall else "yes"
    # A skipped score leaves the state as it was; it is rebuilt from the fields read, never echoed, so whatever else
    # a client put in the payload is not re-encoded into the next token.
    payload = None if previous is None and skipped else {"r": rounds, "b": state.number(best), "n": count}
    return Judgement(verdict, details, payload)


def _score(output: str) -> float | None:
    """One score per call; a blank or non-numeric output is skipped, as little-loops skipped such history lines."""
    text = output.strip()
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        return None
