"""The stateless deterministic evaluators and the dispatcher's exit-code short-circuits, as pure functions.

Each takes a validated `Step` and returns a `Judgement` with the verdict and the details little-loops returns; none
does I/O. output_contains takes the result of its (time-bounded) regular-expression search as an argument, because
that search runs off the event loop in the dispatcher.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from verdict.errors import InvalidConfig
from verdict.evaluators.interpolation import InterpolationError, interpolate
from verdict.evaluators.model import Judgement, Step
from verdict.evaluators.spec import EvaluatorSpec

__all__ = [
    "classify",
    "convergence",
    "exit_code",
    "harbor_scorer",
    "mcp_result",
    "output_contains",
    "output_json",
    "output_numeric",
    "short_circuit",
]

TIMEOUT_EXIT_CODE = 124
NOT_FOUND_EXIT_CODE = 127

_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "eq": lambda value, target: value == target,
    "ne": lambda value, target: value != target,
    "lt": lambda value, target: value < target,
    "le": lambda value, target: value <= target,
    "gt": lambda value, target: value > target,
    "ge": lambda value, target: value >= target,
}
_KEYED_NUMBER = r"[\"']?\s*[=:]\s*[\"']?([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)"
"""After the key: `=` as little-loops reads, and also `:` (test runners, coverage tools, YAML and JSON-ish logs),
with the key and the number optionally quoted (`"key": 5`, `'key': '5'`)."""


def short_circuit(spec: EvaluatorSpec, exit_code: int) -> Judgement | None:
    """The two rules that run before anything else, in this order.

    Exit 124: an action that timed out printed truncated output, and judging it routed to `on_no` and burned
    retries; it is `error` unless the type's record says it reads timeouts itself (`spec.reads_timeouts`: mcp_result,
    which has its own `timeout` verdict).
    Any other non-zero exit: a crashed action judged by an output-reading type took `on_no`; it is `error` unless the
    type reads exit codes itself (`spec.exit_code_aware`). classify is deliberately not exempt, so a crashed
    classifier cannot emit a bad routing token.
    """
    if exit_code == TIMEOUT_EXIT_CODE and not spec.reads_timeouts:
        return Judgement("error", {"exit_code": exit_code, "error": "action timed out"})
    if exit_code != 0 and not spec.exit_code_aware:
        return Judgement("error", {"exit_code": exit_code, "error": f"action exited with code {exit_code}"})
    return None


def exit_code(step: Step) -> Judgement:
    """0 is yes, 1 is no, anything else is error."""
    code = step.exit_code
    verdict = "yes" if code == 0 else "no" if code == 1 else "error"
    return Judgement(verdict, {"exit_code": code})


def output_numeric(step: Step) -> Judgement:
    """The output as a number (or the last `key=<number>` in it) compared with the target.

    Beyond little-loops, `key: <number>` and `"key": <number>` are read as well: little-loops read only `=`, so the
    shapes test runners and JSON-ish logs print (`coverage: 85.3%`, `"numFailedTests": 0`) were "not found".

    A string target is interpolated, then parsed (so `${captured.best.output}` works as a target). Where
    little-loops raised for a target that does not resolve to a number, this raises InvalidConfig: the configuration
    cannot be evaluated at all.
    """
    settings = step.settings
    operator = settings["operator"]
    target = _numeric_target(settings["target"], step)
    key = settings["key"]
    if key is not None:
        found = re.findall(re.escape(key) + _KEYED_NUMBER, step.output)
        if not found:
            return Judgement("error", {"error": f"key {key!r} not found in output"})
        value = float(found[-1])
    else:
        try:
            value = float(step.output.strip())
        except ValueError:
            return Judgement("error", {"error": f"Cannot parse as number: {step.output[:100]}"})
    verdict = "yes" if _COMPARE[operator](value, target) else "no"
    return Judgement(verdict, {"value": value, "target": target, "operator": operator})


def _numeric_target(target: float | str, step: Step) -> float:
    if not isinstance(target, str):
        return float(target)
    try:
        return float(interpolate(target, step.namespaces))
    except (InterpolationError, ValueError) as exc:
        raise InvalidConfig(
            f"output_numeric target must be numeric, got {target!r} ({exc})", field="config.target"
        ) from None


def output_json(step: Step) -> Judgement:
    """The value at a dotted path of the output's JSON, compared with the (never interpolated) target.

    Numbers (bools count) compare with all six operators; anything else only by deep equality with eq and ne.
    """
    settings = step.settings
    path: str = settings["path"]
    operator: str = settings["operator"]
    target = settings["target"]
    try:
        data = json.loads(step.output)
    except RecursionError:
        return Judgement("error", {"error": "Invalid JSON: nested too deeply"})
    except ValueError as exc:
        return Judgement("error", {"error": f"Invalid JSON: {exc}"})
    found, value = _json_path(data, path)
    if not found:
        return Judgement("error", {"error": f"Path not found: {path}"})
    if (isinstance(value, int | float) and isinstance(target, int | float)) or operator in ("eq", "ne"):
        met = _COMPARE[operator](value, target)
    else:
        return Judgement("error", {"error": f"Operator {operator} not supported for non-numeric values"})
    return Judgement("yes" if met else "no", {"value": value, "path": path, "target": target, "operator": operator})


def _json_path(data: Any, path: str) -> tuple[bool, Any]:
    """Walk `.a.b.0`: a mapping key first, then a plain non-negative decimal list index."""
    current = data
    for part in path.removeprefix(".").split("."):
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isascii() and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            return False, None
    return True, current


def output_contains(step: Step, *, matched: bool) -> Judgement:
    """Whether the pattern matched, inverted by `negate`; an un-negated miss with an error pattern present is error.

    HTTP 401/403 text can come back with exit code 0, and a loop seeing `no` retries until max_steps;
    `error_patterns` (plain substrings, first one found wins) route such output to `on_error` instead.
    """
    settings = step.settings
    pattern: str = settings["pattern"]
    negate: bool = settings["negate"]
    verdict = ("no" if matched else "yes") if negate else ("yes" if matched else "no")
    if verdict == "no" and not negate:
        for error_pattern in settings["error_patterns"]:
            if error_pattern in step.output:
                details = {"matched": False, "pattern": pattern, "negate": negate, "error_pattern": error_pattern}
                return Judgement("error", details)
    return Judgement(verdict, {"matched": matched, "pattern": pattern, "negate": negate})


def convergence(step: Step) -> Judgement:
    """Progress of a numeric output towards a target: `target`, `progress`, `stall`, or `error`.

    The target is checked before the first-call `progress` branch (a first value already on target is `target`);
    the distance test is symmetric, so an overshoot under maximize is not "reached" unless within tolerance.
    Without `previous` there is never a `stall`. Failure modes follow little-loops: an unresolvable previous is
    "none", an unresolvable string tolerance is 0, an unresolvable target is an error verdict.
    """
    settings = step.settings
    previous: float | None = None
    if settings["previous"]:
        try:
            previous = float(interpolate(settings["previous"], step.namespaces))
        except (InterpolationError, ValueError):
            previous = None
    try:
        current = float(step.output.strip())
    except ValueError:
        return Judgement("error", {"error": f"Cannot parse output as number: {step.output[:100]}"})
    raw_target = settings["target"]
    if isinstance(raw_target, str):
        try:
            target = float(interpolate(raw_target, step.namespaces))
        except (InterpolationError, ValueError) as exc:
            return Judgement("error", {"error": f"Cannot resolve target: {exc}"})
    else:
        target = float(raw_target)
    raw_tolerance = settings["tolerance"]
    if isinstance(raw_tolerance, str):
        try:
            tolerance = float(interpolate(raw_tolerance, step.namespaces))
        except (InterpolationError, ValueError):
            tolerance = 0.0
    else:
        tolerance = float(raw_tolerance)
    if abs(current - target) <= tolerance:
        return Judgement("target", {"current": current, "target": target, "delta": 0})
    if previous is None:
        return Judgement("progress", {"current": current, "previous": None, "target": target, "delta": None})
    delta = current - previous
    direction: str = settings["direction"]
    progressed = delta < 0 if direction == "minimize" else delta > 0
    details = {"current": current, "previous": previous, "target": target, "delta": delta, "direction": direction}
    return Judgement("progress" if progressed else "stall", details)


def classify(step: Step) -> Judgement:
    """One non-blank line of the output, stripped, is the verdict: one-hop multi-way routing.

    `line` is "last" (also when unset, and for any other string), "first", or an index (negative from the end); an
    index out of range gives the empty verdict with an error detail, which routes to the `_` default.
    """
    line = step.settings["line"]
    lines = [text for text in step.output.splitlines() if text.strip()]
    if not lines:
        return Judgement("", {"token": "", "line": line, "source_lines": 0})
    if line == "first":
        selected = lines[0]
    elif isinstance(line, int):
        if not -len(lines) <= line < len(lines):
            details = {"token": "", "line": line, "source_lines": len(lines), "error": "index out of range"}
            return Judgement("", details)
        selected = lines[line]
    else:
        selected = lines[-1]
    token = selected.strip()
    return Judgement(token, {"token": token, "line": line})


def mcp_result(step: Step) -> Judgement:
    """An MCP tool call: 127 is not_found, 124 is timeout, otherwise the envelope's isError decides.

    mcp-call exits 0 (ok), 1 (isError), 2 (config error), 124 or 127. An empty output counts as `{}`; `isError`
    defaults to "the exit code was not 0", but the envelope's own value wins.
    """
    code = step.exit_code
    if code == NOT_FOUND_EXIT_CODE:
        return Judgement("not_found", {"exit_code": code, "error": "Server or tool not found in .mcp.json"})
    if code == TIMEOUT_EXIT_CODE:
        return Judgement("timeout", {"exit_code": code, "error": "MCP tool call timed out"})
    text = step.output.strip()
    try:
        envelope = json.loads(text) if text else {}
    except (RecursionError, ValueError):
        return Judgement("tool_error", {"exit_code": code, "error": f"Invalid JSON from mcp-call: {step.output[:200]}"})
    if not isinstance(envelope, dict):
        return Judgement(
            "tool_error", {"exit_code": code, "error": f"MCP envelope is not a JSON object: {step.output[:200]}"}
        )
    is_error = envelope.get("isError", code != 0)
    return Judgement("tool_error" if is_error else "success", {"exit_code": code, "envelope": envelope})


def harbor_scorer(step: Step) -> Judgement:
    """A Harbor scorer: a non-zero exit is no; otherwise any float score (0.0 and nan included) is yes."""
    code = step.exit_code
    if code != 0:
        return Judgement("no", {"exit_code": code})
    try:
        score = float(step.output.strip())
    except ValueError:
        return Judgement("error", {"exit_code": code, "error": f"Scorer stdout is not a float: {step.output[:200]}"})
    return Judgement("yes", {"score": score, "exit_code": 0})
