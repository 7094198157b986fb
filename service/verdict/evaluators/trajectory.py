"""trajectory: the tool calls an agent made, checked against the calls it was expected to make.

The match modes carry the meanings of the agent-evaluation tools teams migrate from (LangChain agentevals'
trajectory match, promptfoo's `trajectory:tool-sequence`, Google ADK's and Vertex's trajectory metrics):

- `exact`: the same calls in the same order and nothing else (agentevals `strict`, ADK/Vertex `exact_match`);
- `in_order`: the expected calls appear in this order, other calls allowed between them (ADK/Vertex `in_order`);
- `any_order`: the same calls, each once, in any order (agentevals `unordered`, ADK/Vertex `any_order`);
- `subset`: every call the agent made is among the expected ones (agentevals `subset`; no calls at all passes);
- `superset`: the agent's calls include every expected one (agentevals `superset`, Vertex recall = 1).

Arguments are parsed before they are compared (see `json_compare`), so whitespace or key order never fails a match:
`exact` (equal values and JSON types), `canonical` (the default: numbers by value), `subset` (the expected arguments
are among the call's) or `ignore`, with per-argument overrides by top-level name. A call "matches" an expected call
when the names are equal and the arguments compare; each call matches at most one expected call (a maximum
bipartite matching, so the greedy first-fit pitfall of pairing a call with the wrong duplicate cannot happen).

The score is the mode's own ratio (exact: matching positions over the longer list; in_order: the longest in-order
run of expected calls over the expected count; any_order: F1; subset: precision; superset: recall), 1 exactly when
the mode holds; the verdict is yes when the score reaches `threshold` (default 1). Details always hold precision,
recall and F1 of the matching, and the missing, extra and mismatched calls with their positions.

When the caller sends one step at a time, each response's state token carries the calls so far; the next step's
calls are appended to them. Calls too large for a token still get their verdict (a whole trajectory sent at once),
and the token says so: a next step sent with it is `error` rather than a verdict on a partial trajectory.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from verdict.errors import InvalidArgument, InvalidConfig
from verdict.evaluators import state as tokens
from verdict.evaluators.json_compare import NotJson, canonical_equal, parse_json_text, strict_equal, subset_of
from verdict.evaluators.model import Judgement, Step, ToolCall
from verdict.evaluators.outside import Outside

__all__ = [
    "ARGUMENT_MODES",
    "MATCH_MODES",
    "MAX_CALLS",
    "Comparison",
    "check_expected",
    "compare",
    "identity",
    "run",
    "verdict",
]

MATCH_MODES = ("exact", "in_order", "any_order", "subset", "superset")
ARGUMENT_MODES = ("exact", "canonical", "subset", "ignore")
MAX_CALLS = 256
"""Most calls one trajectory holds: the in-order score is a table of calls × expected calls."""
MAX_COMPARED_CHARS = 32 * 1024 * 1024
"""Bound on the argument text one verdict may compare: each expected call is compared with every call of its name,
so the work is about (expected calls) × (characters of the calls' arguments); past this it is `error`."""
INLINE_CHARS = 64 * 1024
"""Calls whose arguments total more than this are compared off the event loop."""
_TOKEN_ROOM = tokens.MAX_TOKEN_BYTES - 256
"""What the calls may take of a state token; the rest is its envelope."""


def check_expected(settings: dict[str, Any]) -> None:
    """The record's check: each expected call normalised to {name, arguments (parsed, or None), argument_modes}."""
    expected = settings["expected"]
    if not expected:
        raise InvalidConfig("trajectory needs at least one expected call", field="config.expected")
    settings["expected"] = [_expected_call(call, index) for index, call in enumerate(expected)]


def _expected_call(call: Mapping[str, Any], index: int) -> dict[str, Any]:
    base = f"config.expected[{index}]"
    for key in call:
        if key not in ("name", "arguments", "argument_modes"):
            raise InvalidConfig(
                f"unknown key `{key}` in an expected call; it takes name, arguments, argument_modes",
                field=f"{base}.{key}",
            )
    name = call.get("name")
    if not isinstance(name, str) or not name:
        raise InvalidConfig("an expected call needs a `name`", field=f"{base}.name")
    arguments = call.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = parse_json_text(arguments)
        except NotJson as exc:
            raise InvalidConfig(f"{base}.arguments is not JSON: {exc}", field=f"{base}.arguments") from None
    elif arguments is not None and not isinstance(arguments, Mapping | list | int | float | bool):
        raise InvalidConfig(f"{base}.arguments must be a JSON object or JSON text", field=f"{base}.arguments")
    modes = call.get("argument_modes") or {}
    if not isinstance(modes, Mapping):
        raise InvalidConfig(f"{base}.argument_modes must map argument names to modes", field=f"{base}.argument_modes")
    for key, mode in modes.items():
        if mode not in ARGUMENT_MODES:
            raise InvalidConfig(
                f"{base}.argument_modes.{key} must be one of {', '.join(ARGUMENT_MODES)}, got {mode!r}",
                field=f"{base}.argument_modes.{key}",
            )
    return {"name": name, "arguments": arguments, "argument_modes": dict(modes)}


def identity(settings: Mapping[str, Any]) -> Mapping[str, Any]:
    """A token is bound to the expected calls and the modes (a new threshold keeps the calls so far)."""
    return {"expected": settings["expected"], "match": settings["match"], "arguments": settings["arguments"]}


@dataclass(frozen=True)
class Comparison:
    """The outcome of comparing calls with expected calls (see the module docstring for the score)."""

    score: float
    precision: float
    recall: float
    f1: float
    details: dict[str, Any]
    malformed: list[dict[str, Any]]


async def run(step: Step, outside: Outside) -> Judgement:
    """The record's run: `verdict` on the event loop for small arguments, in a worker thread for large ones."""
    size = sum(len(call.arguments) for call in step.facts.tool_calls)
    if size <= INLINE_CHARS:
        return verdict(step)
    return await asyncio.to_thread(verdict, step)


def verdict(step: Step) -> Judgement:
    """The trajectory verdict of the calls so far (the token's, then this step's)."""
    settings = step.settings
    if step.state is not None and step.state.get("overflow") is True:
        error = (
            "the calls of the earlier steps did not fit in a state token, so this step cannot be added to them; "
            "send the whole trajectory in one call with an empty state"
        )
        return Judgement("error", {"error": error}, dict(step.state))
    earlier = _earlier_calls(step.state)
    calls = [*earlier, *((call.name, call.arguments) for call in step.facts.tool_calls)]
    if len(calls) > MAX_CALLS:
        return Judgement(
            "error",
            {"error": f"the trajectory holds {len(calls)} calls; at most {MAX_CALLS} are compared"},
            {"calls": [list(call) for call in earlier]},
        )
    compared = len(settings["expected"]) * sum(len(arguments) for _, arguments in calls)
    if compared > MAX_COMPARED_CHARS:
        error = (
            f"comparing {len(settings['expected'])} expected calls with {len(calls)} calls is too much work (over "
            f"{MAX_COMPARED_CHARS} characters of arguments compared)"
        )
        return Judgement("error", {"error": error}, {"calls": [list(call) for call in earlier]})
    payload: dict[str, Any] = {"calls": [list(call) for call in calls]}
    carried = len(json.dumps(payload, ensure_ascii=False).encode()) <= _TOKEN_ROOM
    if not carried:  # this verdict stands; a next step sent with this token is error instead of silently partial
        payload = {"calls": [], "overflow": True}
    outcome = compare(
        settings["expected"],
        [ToolCall(name=name, arguments=arguments, id="") for name, arguments in calls],
        match=settings["match"],
        arguments=settings["arguments"],
    )
    threshold = float(settings["threshold"])
    details = {
        "match": settings["match"],
        "arguments": settings["arguments"],
        "score": outcome.score,
        "threshold": threshold,
        "precision": outcome.precision,
        "recall": outcome.recall,
        "f1": outcome.f1,
        **outcome.details,
    }
    if not carried:
        details["state_overflow"] = (
            "the calls so far do not fit in a state token: a next step sent with this token is error"
        )
    if outcome.malformed:
        details["malformed"] = outcome.malformed
        details["error"] = "a call's arguments are not JSON, so they cannot be compared"
        return Judgement("error", details, payload)
    return Judgement("yes" if outcome.score >= threshold else "no", details, payload)


def _earlier_calls(payload: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    if payload is None:
        return []
    calls = payload.get("calls")
    if not isinstance(calls, list) or not all(
        isinstance(call, list) and len(call) == 2 and all(isinstance(part, str) for part in call) for call in calls
    ):
        raise InvalidArgument("state token field 'calls' is corrupt", field="state", reason="INVALID_STATE_TOKEN")
    return [(call[0], call[1]) for call in calls]


class _Matcher:
    """Whether call j matches expected call i, each pair decided once; malformed argument texts are collected."""

    def __init__(self, expected: Sequence[Mapping[str, Any]], calls: Sequence[ToolCall], mode: str) -> None:
        self.expected = expected
        self.calls = calls
        self.mode = mode
        self.parsed: list[Any] = []
        self.malformed: dict[int, str] = {}
        for index, call in enumerate(calls):
            text = call.arguments.strip()
            try:
                self.parsed.append(parse_json_text(text) if text else {})
            except NotJson as exc:
                self.parsed.append(None)
                self.malformed[index] = str(exc)
        self._cache: dict[tuple[int, int], list[str]] = {}

    def differences(self, i: int, j: int) -> list[str]:
        """The arguments on which call j differs from expected call i ([] when they compare); the names must match."""
        key = (i, j)
        if key not in self._cache:
            self._cache[key] = self._differences(i, j)
        return self._cache[key]

    def _differences(self, i: int, j: int) -> list[str]:
        expected = self.expected[i]
        wanted, modes = expected["arguments"], expected["argument_modes"]
        if wanted is None or (self.mode == "ignore" and not any(m != "ignore" for m in modes.values())):
            return []
        if j in self.malformed:
            return ["(not JSON)"]
        return argument_differences(wanted, self.parsed[j], self.mode, modes)

    def matches(self, i: int, j: int) -> bool:
        return self.expected[i]["name"] == self.calls[j].name and not self.differences(i, j)

    def needs_arguments(self, j: int) -> bool:
        """Whether a malformed call j would be compared by any expected call of its name."""
        return any(
            expected["name"] == self.calls[j].name and self._differences(i, j) == ["(not JSON)"]
            for i, expected in enumerate(self.expected)
        )


def argument_differences(wanted: Any, actual: Any, mode: str, modes: Mapping[str, str]) -> list[str]:
    """The top-level argument names that differ under `mode` and the per-argument `modes` ("" for a whole value
    that is not an object)."""
    if not isinstance(wanted, Mapping) or not isinstance(actual, Mapping):
        return [] if _values_compare(wanted, actual, mode) else [""]
    names = set(wanted) | set(modes)
    if mode in ("exact", "canonical"):
        names |= set(actual)
    differing = []
    for name in sorted(names):
        chosen = modes.get(name, mode)
        if chosen == "ignore":
            continue
        if name not in wanted:
            if name in actual and chosen in ("exact", "canonical") and name not in modes:
                differing.append(name)
            continue
        if name not in actual or not _values_compare(wanted[name], actual[name], chosen):
            differing.append(name)
    return differing


def _values_compare(wanted: Any, actual: Any, mode: str) -> bool:
    if mode == "ignore":
        return True
    if mode == "exact":
        return strict_equal(wanted, actual)
    if mode == "subset":
        return subset_of(wanted, actual)
    return canonical_equal(wanted, actual)


def compare(
    expected: Sequence[Mapping[str, Any]], calls: Sequence[ToolCall], *, match: str, arguments: str
) -> Comparison:
    """Compare `calls` with the normalised `expected` calls (see `check_expected`) under the two modes."""
    matcher = _Matcher(expected, calls, arguments)
    pairs = _maximum_matching(len(expected), len(calls), matcher.matches)
    matched = len(pairs)
    precision = matched / len(calls) if calls else 1.0
    recall = matched / len(expected) if expected else 1.0
    f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    if match == "exact":
        positional = sum(1 for i in range(min(len(expected), len(calls))) if matcher.matches(i, i))
        longest = max(len(expected), len(calls))
        score = positional / longest if longest else 1.0
    elif match == "in_order":
        score = _in_order(len(expected), len(calls), matcher.matches) / len(expected) if expected else 1.0
    elif match == "any_order":
        score = f1
    elif match == "subset":
        score = precision
    else:
        score = recall
    details = _listing(expected, calls, pairs, matcher)
    if match in ("exact", "in_order"):
        details["order"] = _order_findings(match, len(expected), len(calls), pairs, matcher)
    malformed = [
        {"position": j, "name": calls[j].name, "error": error}
        for j, error in sorted(matcher.malformed.items())
        if matcher.needs_arguments(j)
    ]
    return Comparison(score, precision, recall, f1, details, malformed)


def _maximum_matching(rows: int, columns: int, edge: Any) -> dict[int, int]:
    """Expected index → call index of a maximum bipartite matching (Kuhn's augmenting paths, in index order, so
    among maximum matchings the earliest calls are preferred)."""
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in range(columns):
            if j in seen or not edge(i, j):
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(rows):
        augment(i, set())
    return {i: j for j, i in owner.items()}


def _in_order(rows: int, columns: int, edge: Any) -> int:
    """The most expected calls matched by calls in the same relative order (a longest common subsequence)."""
    previous = [0] * (columns + 1)
    for i in range(rows):
        current = [0] * (columns + 1)
        for j in range(columns):
            current[j + 1] = previous[j] + 1 if edge(i, j) else max(previous[j + 1], current[j])
        previous = current
    return previous[columns]


def _listing(
    expected: Sequence[Mapping[str, Any]], calls: Sequence[ToolCall], pairs: Mapping[int, int], matcher: _Matcher
) -> dict[str, Any]:
    """Matched pairs; unmatched expected calls paired with an unmatched call of the same name are `mismatched`
    (the right tool, other arguments), the rest are `missing` (expected, not made) and `extra` (made, not expected)."""
    used = set(pairs.values())
    spare = [j for j in range(len(calls)) if j not in used]
    mismatched, missing = [], []
    for i in range(len(expected)):
        if i in pairs:
            continue
        same_name = next((j for j in spare if calls[j].name == expected[i]["name"]), None)
        if same_name is None:
            missing.append({"position": i, "name": expected[i]["name"]})
            continue
        spare.remove(same_name)
        mismatched.append(
            {
                "expected_position": i,
                "call_position": same_name,
                "name": expected[i]["name"],
                "arguments": matcher.differences(i, same_name),
            }
        )
    return {
        "calls": len(calls),
        "expected": len(expected),
        "matched": [{"expected_position": i, "call_position": j} for i, j in sorted(pairs.items())],
        "missing": missing,
        "extra": [{"position": j, "name": calls[j].name} for j in spare],
        "mismatched": mismatched,
    }


def _order_findings(
    match: str, rows: int, columns: int, pairs: Mapping[int, int], matcher: _Matcher
) -> list[dict[str, Any]]:
    """exact: the positions whose call is not the expected one; in_order: matched calls that come before the call
    matched to an earlier expected call."""
    if match == "exact":
        return [
            {"position": i}
            for i in range(max(rows, columns))
            if not (i < rows and i < columns and matcher.matches(i, i))
        ]
    findings, latest = [], -1
    for i in sorted(pairs):
        if pairs[i] < latest:
            findings.append({"expected_position": i, "call_position": pairs[i], "before_call": latest})
        latest = max(latest, pairs[i])
    return findings
