"""The Evaluate behaviour tables: one row per rule and per edge of the dispatcher, the evaluators and
interpolation as the evaluators use it, plus the documented deviations.

Importable on purpose: the pure-function tests, the `Evaluations.evaluate` tests and the end-to-end RPC tests all run
these same rows. A row's `config` is the dict the rpc layer builds from a typed oneof member (numbers as floats, only
set fields); `yaml_text(case)` is the same block as a little-loops `evaluate:` YAML document. Rows with
`typed=False` use a key or value the typed proto cannot carry (e.g. `history_file`), so only the YAML and dict forms
apply; rows with `dispatcher_only=True` pin behaviour of the dispatcher's outside work (the pattern guard), which the
pure functions do not have.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from google.protobuf.json_format import ParseDict

from verdict.v1 import verdict_pb2

__all__ = [
    "CASES",
    "REJECTED",
    "Case",
    "Rejected",
    "details_match",
    "typed_config",
    "yaml_config",
    "yaml_text",
]


@dataclass(frozen=True)
class Case:
    """One request and the verdict (and details subset) it must get."""

    name: str
    config: Mapping[str, Any]
    output: str
    verdict: str
    details: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    exit_code: int = 0
    context: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    typed: bool = True
    yaml: str | None = None
    dispatcher_only: bool = False

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Rejected:
    """A request whose configuration is the caller's error: INVALID_ARGUMENT naming `field`."""

    name: str
    config: Mapping[str, Any]
    field: str
    output: str = ""
    exit_code: int = 0
    context: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    typed: bool = True

    def __str__(self) -> str:
        return self.name


def yaml_text(case: Case | Rejected) -> str:
    """The row's configuration as a little-loops `evaluate:` block (YAML), as an orchestrator would store it."""
    if isinstance(case, Case) and case.yaml is not None:
        return case.yaml
    return yaml.safe_dump({"evaluate": dict(case.config)}, sort_keys=False)


def typed_config(case: Case | Rejected) -> verdict_pb2.EvaluatorConfig:
    """The row as a typed EvaluatorConfig (only for rows with `typed=True`): the member named by `type`, plus
    the top-level `source`."""
    config = dict(case.config)
    message = verdict_pb2.EvaluatorConfig()
    member = getattr(message, str(config.pop("type")))
    source = config.pop("source", None)
    ParseDict(config, member)
    member.SetInParent()
    if source is not None:
        message.source = source
    return message


def yaml_config(case: Case | Rejected) -> verdict_pb2.EvaluatorConfig:
    """The row as an EvaluatorConfig whose `yaml` member holds the little-loops block."""
    return verdict_pb2.EvaluatorConfig(yaml=yaml_text(case))


def details_match(actual: Mapping[str, Any], expected: Mapping[str, Any]) -> bool:
    """Every expected key is present with an equal value (numbers compare by value, so 5 == 5.0)."""
    return all(key in actual and actual[key] == value for key, value in expected.items())


def _numeric(operator: str, target: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "output_numeric", "operator": operator, "target": target, **extra}


def _json(path: str, operator: str, target: Any) -> dict[str, Any]:
    return {"type": "output_json", "path": path, "operator": operator, "target": target}


def _contains(pattern: str, **extra: Any) -> dict[str, Any]:
    return {"type": "output_contains", "pattern": pattern, **extra}


def _convergence(target: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "convergence", "target": target, **extra}


_PREV_10 = {"prev": {"output": "10"}}

CASES: tuple[Case, ...] = (
    # --- the 124 short-circuit (a timed-out action's output is truncated), before anything else, exit-code-aware
    # types included
    Case(
        "124 short-circuits exit_code",
        {"type": "exit_code"},
        "",
        "error",
        {"exit_code": 124, "error": "action timed out"},
        exit_code=124,
    ),
    Case("124 short-circuits output_numeric", _numeric("eq", 5.0), "5", "error", {"exit_code": 124}, exit_code=124),
    Case("124 short-circuits classify", {"type": "classify"}, "GO", "error", {"exit_code": 124}, exit_code=124),
    Case(
        "124 short-circuits harbor_scorer", {"type": "harbor_scorer"}, "1.0", "error", {"exit_code": 124}, exit_code=124
    ),
    Case(
        "124 short-circuits before config validation",
        {"type": "output_numeric", "operator": "eq"},
        "5",
        "error",
        {"error": "action timed out"},
        exit_code=124,
    ),
    Case(
        "124 is mcp_result's own timeout verdict",
        {"type": "mcp_result"},
        "",
        "timeout",
        {"exit_code": 124, "error": "MCP tool call timed out"},
        exit_code=124,
    ),
    # --- the non-zero short-circuit (a crashed action) for types that do not read exit codes
    Case(
        "non-zero short-circuits output_contains",
        _contains("ok"),
        "ok",
        "error",
        {"exit_code": 2, "error": "action exited with code 2"},
        exit_code=2,
    ),
    Case("non-zero short-circuits output_numeric", _numeric("eq", 5.0), "5", "error", {"exit_code": 1}, exit_code=1),
    Case("non-zero short-circuits output_json", _json(".a", "eq", 1.0), '{"a": 1}', "error", exit_code=3),
    Case("non-zero short-circuits convergence", _convergence(0.0), "0", "error", {"exit_code": 1}, exit_code=1),
    Case("non-zero short-circuits classify", {"type": "classify"}, "GO", "error", exit_code=1),
    Case(
        "negative exit code short-circuits too",
        _contains("ok"),
        "ok",
        "error",
        {"error": "action exited with code -9"},
        exit_code=-9,
    ),
    Case(
        "non-zero short-circuits before config validation",
        {"type": "output_contains", "negate": True},
        "x",
        "error",
        {"exit_code": 1},
        exit_code=1,
    ),
    # --- exit_code
    Case("exit_code 0 is yes", {"type": "exit_code"}, "", "yes", {"exit_code": 0}),
    Case(
        "exit_code 1 is no (exempt from the non-zero rule)",
        {"type": "exit_code"},
        "",
        "no",
        {"exit_code": 1},
        exit_code=1,
    ),
    Case("exit_code 2 is error", {"type": "exit_code"}, "", "error", {"exit_code": 2}, exit_code=2),
    # --- output_numeric
    Case("numeric eq", _numeric("eq", 5.0), "5", "yes", {"value": 5.0, "target": 5.0, "operator": "eq"}),
    Case("numeric eq misses", _numeric("eq", 5.0), "6", "no", {"value": 6.0, "target": 5.0}),
    Case("numeric ne", _numeric("ne", 5.0), "6", "yes"),
    Case("numeric lt", _numeric("lt", 5.0), "4.5", "yes"),
    Case("numeric le", _numeric("le", 5.0), "5", "yes"),
    Case("numeric gt", _numeric("gt", 5.0), "5", "no"),
    Case("numeric ge", _numeric("ge", 5.0), "5", "yes"),
    Case("numeric output is stripped", _numeric("eq", 3.0), "  3\n", "yes"),
    Case("numeric accepts an exponent", _numeric("ge", 1000.0), "1e3", "yes", {"value": 1000.0}),
    Case("numeric accepts underscores", _numeric("eq", 1000.0), "1_000", "yes"),
    Case("numeric accepts inf", _numeric("gt", 1e308), "inf", "yes", {"value": "inf"}),
    Case("numeric accepts nan", _numeric("ne", 0.0), "nan", "yes", {"value": "nan"}),
    Case(
        "numeric parse failure is error",
        _numeric("eq", 5.0),
        "five",
        "error",
        {"error": "Cannot parse as number: five"},
    ),
    Case(
        "numeric parse failure quotes 100 chars",
        _numeric("eq", 5.0),
        "x" * 150,
        "error",
        {"error": "Cannot parse as number: " + "x" * 100},
    ),
    Case("numeric string target is parsed", _numeric("eq", "3.5"), "3.5", "yes", {"target": 3.5}),
    Case(
        "numeric string target is interpolated",
        _numeric("le", "${context.max}"),
        "7",
        "yes",
        {"target": 7.0},
        context={"context": {"max": 7}},
    ),
    Case(
        "numeric key: last match wins",
        _numeric("eq", 4.0, key="failed"),
        "passed=3 failed=2\nretry: failed = 4\n",
        "yes",
        {"value": 4.0},
    ),
    Case("numeric key reads a signed exponent", _numeric("eq", -150.0, key="score"), "score=-1.5e2", "yes"),
    Case("numeric key is escaped", _numeric("eq", 6.0, key="a.b"), "axb=5 a.b=6", "yes", {"value": 6.0}),
    Case("numeric key is not anchored", _numeric("eq", 3.0, key="count"), "error_count=3", "yes"),
    Case(
        "numeric key missing is error",
        _numeric("eq", 1.0, key="total"),
        "passed=3",
        "error",
        {"error": "key 'total' not found in output"},
    ),
    Case("numeric key checked before the operator", _numeric("eq", 1.0, key="n"), "n=x", "error"),
    # key: N and "key": N, as real tools print them; still the last occurrence
    Case(
        "numeric key reads `key: N` (go test -cover)",
        _numeric("ge", 80.0, key="coverage"),
        "ok  \texample.com/pkg\t0.012s\tcoverage: 85.3% of statements\n",
        "yes",
        {"value": 85.3},
    ),
    Case(
        "numeric key reads `key : N` (istanbul text-summary)",
        _numeric("ge", 90.0, key="Lines"),
        "=============================== Coverage summary ===============================\n"
        "Statements   : 85.71% ( 6/7 )\nBranches     : 100% ( 2/2 )\nFunctions    : 75% ( 3/4 )\n"
        "Lines        : 83.33% ( 5/6 )\n",
        "no",
        {"value": 83.33},
    ),
    Case(
        "numeric key reads the first number of a jest summary line",
        _numeric("eq", 0.0, key="Snapshots"),
        "Test Suites: 1 failed, 3 passed, 4 total\nTests:       2 failed, 10 passed, 12 total\n"
        "Snapshots:   0 total\nTime:        1.234 s\nRan all test suites.\n",
        "yes",
        {"value": 0.0},
    ),
    Case(
        'numeric key reads `"key": N` (jest --json)',
        _numeric("eq", 0.0, key="numFailedTests"),
        '{"numFailedTestSuites":0,"numFailedTests":0,"numPassedTestSuites":4,"numPassedTests":12,"success":true}',
        "yes",
        {"value": 0.0},
    ),
    Case(
        'numeric key reads `"key": N` (pytest-json-report summary)',
        _numeric("eq", 2.0, key="failed"),
        '{"created": 1700000000.5, "duration": 0.42, "exitcode": 1, '
        '"summary": {"passed": 10, "failed": 2, "total": 12, "collected": 12}}',
        "yes",
        {"value": 2.0},
    ),
    Case(
        "numeric key takes the last occurrence across JSON lines of a training log",
        _numeric("le", 0.2, key="loss"),
        '{"step": 100, "loss": 0.91}\n{"step": 200, "loss": 0.35}\n{"step": 300, "loss": 0.18}\n',
        "yes",
        {"value": 0.18},
    ),
    Case(
        "numeric key mixes `key=N` and `key: N`, last occurrence wins (Keras then a summary)",
        _numeric("ge", 0.9, key="accuracy"),
        "Epoch 3/3\n100/100 - 1s - loss: 0.2345 - accuracy: 0.9123\nfinal accuracy=0.88\n",
        "no",
        {"value": 0.88},
    ),
    Case(
        "numeric key reads a quoted number (`'key': '5'`)",
        _numeric("eq", 5.0, key="retries"),
        "{'retries': '5', 'status': 'done'}",
        "yes",
        {"value": 5.0},
    ),
    Case(
        "numeric key with a colon but no number is still not found",
        _numeric("eq", 1.0, key="status"),
        '{"status": "done"}',
        "error",
        {"error": "key 'status' not found in output"},
    ),
    # --- output_json
    Case(
        "json eq at a path",
        _json(".total", "eq", 0.0),
        '{"total": 0, "open": 3}',
        "yes",
        {"value": 0, "path": ".total", "target": 0, "operator": "eq"},
    ),
    Case("json path without leading dot", _json("summary.failed", "gt", 1.0), '{"summary": {"failed": 2}}', "yes"),
    Case("json list index", _json(".items.1.n", "eq", 2.0), '{"items": [{"n": 1}, {"n": 2}]}', "yes"),
    Case("json top-level list", _json("0", "eq", "a"), '["a"]', "yes"),
    Case("json dict key before index", _json(".a.0", "eq", "key"), '{"a": {"0": "key"}}', "yes"),
    Case(
        "json negative index is not found",
        _json(".a.-1", "eq", 1.0),
        '{"a": [1]}',
        "error",
        {"error": "Path not found: .a.-1"},
    ),
    Case("json index out of range", _json(".a.5", "eq", 1.0), '{"a": [1]}', "error", {"error": "Path not found: .a.5"}),
    Case("json missing key", _json(".b", "eq", 1.0), '{"a": 1}', "error", {"error": "Path not found: .b"}),
    Case("json scalar mid-path", _json(".a.b", "eq", 1.0), '{"a": 1}', "error", {"error": "Path not found: .a.b"}),
    Case(
        "json path of a lone dot is the empty path",
        _json(".", "eq", 1.0),
        '{"a": 1}',
        "error",
        {"error": "Path not found: ."},
    ),
    Case("json invalid JSON", _json(".a", "eq", 1.0), "not json", "error"),
    Case("json preamble breaks parsing", _json(".a", "eq", 1.0), 'Result: {"a": 1}', "error"),
    Case("json numbers: bools count", _json(".ok", "gt", 0.0), '{"ok": true}', "yes"),
    Case("json string 5 is not number 5", _json(".v", "eq", 5.0), '{"v": "5"}', "no"),
    Case("json null eq null", _json(".v", "eq", None), '{"v": null}', "yes", {"value": None, "target": None}),
    Case("json deep equality", _json(".v", "eq", [1.0, {"a": "b"}]), '{"v": [1, {"a": "b"}]}', "yes"),
    Case("json ne on strings", _json(".s", "ne", "done"), '{"s": "open"}', "yes"),
    Case(
        "json ordering on non-numbers is error",
        _json(".s", "lt", "b"),
        '{"s": "a"}',
        "error",
        {"error": "Operator lt not supported for non-numeric values"},
    ),
    Case("json target is never interpolated", _json(".s", "eq", "${context.x}"), '{"s": "${context.x}"}', "yes"),
    Case(
        "json deep nesting is an error verdict, not a crash",
        _json(".a", "eq", 1.0),
        "[" * 100_000 + "]" * 100_000,
        "error",
        {"error": "Invalid JSON: nested too deeply"},
    ),
    Case("json oversized integer is an error verdict", _json(".a", "eq", 1.0), '{"a": ' + "1" * 5000 + "}", "error"),
    # --- output_contains
    Case(
        "contains regex match", _contains(r"PASS(ED)?"), "all PASSED", "yes", {"matched": True, "pattern": r"PASS(ED)?"}
    ),
    Case("contains miss", _contains("PASS"), "FAIL", "no", {"matched": False, "negate": False}),
    Case("contains negate inverts a match", _contains("ERROR", negate=True), "ERROR: x", "no", {"negate": True}),
    Case("contains negate inverts a miss", _contains("ERROR", negate=True), "fine", "yes"),
    Case("contains invalid regex falls back to substring", _contains("a(b"), "xa(by", "yes", {"matched": True}),
    Case("contains invalid regex substring miss", _contains("a(b"), "ab", "no"),
    Case("contains is case-sensitive", _contains("error"), "ERROR", "no"),
    Case("contains has no MULTILINE", _contains("^b"), "a\nb", "no"),
    Case("contains has no DOTALL", _contains("a.b"), "a\nb", "no"),
    Case(
        "contains error pattern turns no into error",
        _contains("OK", error_patterns=["401", "403"]),
        "HTTP 403 Forbidden",
        "error",
        {"matched": False, "error_pattern": "403"},
    ),
    Case(
        "contains first error pattern found wins",
        _contains("OK", error_patterns=["401", "403"]),
        "403 then 401",
        "error",
        {"error_pattern": "401"},
    ),
    Case("contains error patterns are substrings", _contains("OK", error_patterns=["a+"]), "aaa", "no"),
    Case("contains error patterns ignored on a match", _contains("OK", error_patterns=["401"]), "OK 401", "yes"),
    Case(
        "contains error patterns ignored under negate",
        _contains("OK", negate=True, error_patterns=["401"]),
        "OK 401",
        "no",
    ),
    Case(
        "contains refuses a pattern that would expand beyond memory",
        _contains("a{1000000000}"),
        "aaa",
        "error",
        {"pattern": "a{1000000000}", "negate": False},
        dispatcher_only=True,
    ),
    # --- convergence
    Case(
        "convergence within tolerance is target",
        _convergence(0.0, tolerance=0.05),
        "0.04",
        "target",
        {"current": 0.04, "target": 0.0, "delta": 0},
    ),
    Case(
        "convergence checks the target before the first call",
        _convergence(3.0),
        "3",
        "target",
        {"delta": 0},
    ),
    Case(
        "convergence first call is progress",
        _convergence(0.0),
        "5",
        "progress",
        {"current": 5.0, "previous": None, "target": 0.0, "delta": None},
    ),
    Case(
        "convergence minimize progress",
        _convergence(0.0, previous="${prev.output}"),
        "8",
        "progress",
        {"current": 8.0, "previous": 10.0, "delta": -2.0, "direction": "minimize"},
        context=_PREV_10,
    ),
    Case(
        "convergence minimize no change is stall",
        _convergence(0.0, previous="${prev.output}"),
        "10",
        "stall",
        {"delta": 0.0},
        context=_PREV_10,
    ),
    Case(
        "convergence minimize worse is stall",
        _convergence(0.0, previous="${prev.output}"),
        "12",
        "stall",
        context=_PREV_10,
    ),
    Case(
        "convergence maximize progress",
        _convergence(20.0, previous="${prev.output}", direction="maximize"),
        "11",
        "progress",
        {"direction": "maximize", "delta": 1.0},
        context=_PREV_10,
    ),
    Case(
        "convergence maximize overshoot is not target",
        _convergence(9.0, previous="${prev.output}", direction="maximize", tolerance=0.5),
        "12",
        "progress",
        context=_PREV_10,
    ),
    Case(
        "convergence target is interpolated",
        _convergence("${context.goal}", tolerance=0.1),
        "0.95",
        "target",
        {"target": 1.0},
        context={"context": {"goal": 1}},
    ),
    Case(
        "convergence unresolvable target is an error verdict",
        _convergence("${context.goal}"),
        "1",
        "error",
        context={"context": {}},
    ),
    Case("convergence non-numeric target string is an error verdict", _convergence("high"), "1", "error"),
    Case(
        "convergence unresolvable previous is none",
        _convergence(0.0, previous="${prev.output}"),
        "5",
        "progress",
        {"previous": None},
    ),
    Case(
        "convergence non-numeric previous is none",
        _convergence(0.0, previous="${context.p}"),
        "5",
        "progress",
        {"previous": None},
        context={"context": {"p": "n/a"}},
    ),
    Case(
        "convergence output must be a number",
        _convergence(0.0),
        "about 5",
        "error",
        {"error": "Cannot parse output as number: about 5"},
    ),
    Case(
        "convergence string tolerance is interpolated",
        _convergence(0.0, tolerance="${context.tol}"),
        "0.2",
        "target",
        context={"context": {"tol": 0.5}},
    ),
    Case(
        "convergence unresolvable tolerance is 0",
        _convergence(0.0, tolerance="${context.tol}"),
        "0.2",
        "progress",
    ),
    Case("convergence without previous never stalls", _convergence(0.0), "10", "progress"),
    # --- classify
    Case(
        "classify last by default",
        {"type": "classify"},
        "thinking...\n\nREFINE\n\n",
        "REFINE",
        {"token": "REFINE", "line": None},
    ),
    Case("classify first", {"type": "classify", "line": "first"}, "\nA\nB", "A", {"line": "first"}),
    Case("classify last explicit", {"type": "classify", "line": "last"}, "A\nB", "B"),
    Case("classify index", {"type": "classify", "line": 1.0}, "A\n\nB\nC", "B", {"line": 1}),
    Case("classify negative index", {"type": "classify", "line": -2.0}, "A\nB\nC", "B"),
    Case(
        "classify index out of range",
        {"type": "classify", "line": 5.0},
        "A\nB",
        "",
        {"token": "", "line": 5, "source_lines": 2, "error": "index out of range"},
    ),
    Case(
        "classify blank output is the empty verdict",
        {"type": "classify"},
        "  \n\n",
        "",
        {"token": "", "source_lines": 0},
    ),
    Case("classify other strings mean last", {"type": "classify", "line": "middle"}, "A\nB", "B"),
    Case("classify the string 1 means last", {"type": "classify", "line": "1"}, "A\nB\nC", "C"),
    Case("classify strips the line", {"type": "classify"}, "   GO  \n", "GO"),
    Case("classify is case-sensitive", {"type": "classify"}, "Yes", "Yes"),
    # --- mcp_result
    Case(
        "mcp 127 is not_found",
        {"type": "mcp_result"},
        "",
        "not_found",
        {"exit_code": 127, "error": "Server or tool not found in .mcp.json"},
        exit_code=127,
    ),
    Case("mcp empty output is success", {"type": "mcp_result"}, "", "success", {"exit_code": 0, "envelope": {}}),
    Case("mcp isError false is success", {"type": "mcp_result"}, '{"isError": false, "content": []}', "success"),
    Case("mcp isError true is tool_error", {"type": "mcp_result"}, '{"isError": true}', "tool_error"),
    Case(
        "mcp exit 1 defaults to tool_error", {"type": "mcp_result"}, "{}", "tool_error", {"exit_code": 1}, exit_code=1
    ),
    Case(
        "mcp envelope wins over the exit code",
        {"type": "mcp_result"},
        '{"isError": false}',
        "success",
        {"exit_code": 1},
        exit_code=1,
    ),
    Case("mcp config error exit 2 is tool_error", {"type": "mcp_result"}, "", "tool_error", exit_code=2),
    Case(
        "mcp invalid JSON is tool_error even with exit 0",
        {"type": "mcp_result"},
        "oops",
        "tool_error",
        {"exit_code": 0},
    ),
    Case("mcp non-object envelope is tool_error", {"type": "mcp_result"}, "[1, 2]", "tool_error"),
    # --- harbor_scorer
    Case("harbor non-zero exit is no", {"type": "harbor_scorer"}, "0.9", "no", {"exit_code": 1}, exit_code=1),
    Case("harbor score is yes", {"type": "harbor_scorer"}, "0.75\n", "yes", {"score": 0.75, "exit_code": 0}),
    Case("harbor zero score is still yes", {"type": "harbor_scorer"}, "0.0", "yes", {"score": 0.0}),
    Case("harbor nan score is still yes", {"type": "harbor_scorer"}, "nan", "yes", {"score": "nan"}),
    Case("harbor unparsable score is error", {"type": "harbor_scorer"}, "n/a", "error", {"exit_code": 0}),
    # --- source (executor semantics): the interpolated value replaces the output
    Case(
        "source replaces the output",
        {"type": "classify", "source": "${captured.review.output}"},
        "echo done",
        "CLOSE",
        context={"captured": {"review": {"output": "thinking\nCLOSE"}}},
    ),
    Case(
        "source that does not resolve keeps the raw output",
        {"type": "classify", "source": "${captured.review.output}"},
        "RAW",
        "RAW",
    ),
    # --- interpolation as the evaluators see it
    Case(
        "escape: $${ is a literal ${, never resolved",
        {"type": "classify", "source": "$${context.x} and $${X:-0}"},
        "",
        "${context.x} and ${X:-0}",
        context={"context": {"x": "resolved"}},
    ),
    Case(
        "a reference ends at the first }: nesting is impossible",
        {"type": "classify", "source": "${context.a${context.b}}"},
        "RAW",
        "RAW",
        context={"context": {"a": "x", "b": "y"}},
    ),
    Case(
        "default suffix when the path is missing",
        _numeric("eq", "${context.max:default=9}"),
        "9",
        "yes",
    ),
    Case(
        "optional suffix gives empty, which is not a number",
        _convergence("${context.goal?}"),
        "1",
        "error",
    ),
    Case(
        "Struct integral floats interpolate as integers",
        {"type": "classify", "source": "${state.name}:${state.iteration}"},
        "",
        "fix:3",
        context={"state": {"name": "fix", "iteration": 3.0}},
    ),
    Case(
        "env is the request's, never the server's",
        {"type": "classify", "source": "${env.HOME:default=unset}"},
        "",
        "unset",
    ),
    Case(
        "env from the request context",
        {"type": "classify", "source": "${env.TARGET}"},
        "",
        "prod",
        context={"env": {"TARGET": "prod"}},
    ),
    # --- keys the stateless server accepts and ignores
    Case(
        "history_file is accepted and ignored",
        {"type": "score_stall", "history_file": "${context.run_dir}/.score_history"},
        "3",
        "yes",
        {"rounds": 1},
        typed=False,
    ),
)

REJECTED: tuple[Rejected, ...] = (
    Rejected("missing type", {"operator": "eq"}, "config.type", typed=False),
    Rejected("unknown type lists the valid ones", {"type": "output_regex"}, "config.type", typed=False),
    Rejected(
        "unknown key with a did-you-mean",
        {"type": "output_numeric", "operator": "eq", "target": 1.0, "kye": "x"},
        "config.kye",
        typed=False,
    ),
    Rejected(
        "key of another type",
        {"type": "output_numeric", "operator": "eq", "target": 1.0, "expected": []},
        "config.expected",
        typed=False,
    ),
    Rejected("output_numeric needs operator", {"type": "output_numeric", "target": 1.0}, "config.operator"),
    Rejected("output_numeric needs target", {"type": "output_numeric", "operator": "eq"}, "config.target"),
    Rejected(
        "output_numeric null target (little-loops raised)",
        {"type": "output_numeric", "operator": "eq", "target": None},
        "config.target",
        typed=False,
    ),
    Rejected(
        "output_numeric unparsable target (little-loops raised)",
        {"type": "output_numeric", "operator": "eq", "target": "five"},
        "config.target",
    ),
    Rejected(
        "output_numeric unresolvable target (little-loops raised)",
        {"type": "output_numeric", "operator": "eq", "target": "${context.max}"},
        "config.target",
    ),
    Rejected("unknown operator", {"type": "output_numeric", "operator": "equals", "target": 1.0}, "config.operator"),
    Rejected("diff_stall compare outside content|stat", {"type": "diff_stall", "compare": "text"}, "config.compare"),
    Rejected("judge fresh must be a boolean", {"type": "llm_structured", "fresh": "yes"}, "config.fresh", typed=False),
    Rejected(
        "output_numeric whitespace-only key (quadratic search over whitespace output)",
        _numeric("eq", 1.0, key=" \t"),
        "config.key",
    ),
    Rejected("output_json needs path", {"type": "output_json", "operator": "eq", "target": 1.0}, "config.path"),
    Rejected("output_json needs target", {"type": "output_json", "path": ".a", "operator": "eq"}, "config.target"),
    Rejected("output_contains needs pattern", {"type": "output_contains"}, "config.pattern"),
    Rejected(
        "empty pattern counts as missing", {"type": "output_contains", "pattern": ""}, "config.pattern", typed=False
    ),
    Rejected(
        "negate must be a boolean",
        {"type": "output_contains", "pattern": "x", "negate": "yes"},
        "config.negate",
        typed=False,
    ),
    Rejected(
        "error_patterns must be strings",
        {"type": "output_contains", "pattern": "x", "error_patterns": [401]},
        "config.error_patterns",
        typed=False,
    ),
    Rejected("convergence needs target", {"type": "convergence"}, "config.target"),
    Rejected("convergence direction", {"type": "convergence", "target": 1.0, "direction": "up"}, "config.direction"),
    Rejected(
        "convergence negative tolerance", {"type": "convergence", "target": 1.0, "tolerance": -0.1}, "config.tolerance"
    ),
    Rejected("classify fractional line", {"type": "classify", "line": 1.5}, "config.line"),
    Rejected("diff_stall max_stall at least 1", {"type": "diff_stall", "max_stall": 0}, "config.max_stall"),
    Rejected("diff_stall scope must be a list", {"type": "diff_stall", "scope": "src/"}, "config.scope", typed=False),
    Rejected("action_stall max_repeat at least 1", {"type": "action_stall", "max_repeat": 0}, "config.max_repeat"),
    Rejected("score_stall max_stall at least 1", {"type": "score_stall", "max_stall": 0}, "config.max_stall"),
    Rejected("score_stall epsilon at least 0", {"type": "score_stall", "epsilon": -1.0}, "config.epsilon"),
    Rejected(
        "open_question_stall epsilon at least 0", {"type": "open_question_stall", "epsilon": -0.5}, "config.epsilon"
    ),
    Rejected("integer must be integral", {"type": "score_stall", "max_stall": 2.5}, "config.max_stall", typed=False),
    Rejected(
        "llm_structured min_confidence in [0, 1]",
        {"type": "llm_structured", "min_confidence": 1.5},
        "config.min_confidence",
    ),
    Rejected("comparator needs a baseline", {"type": "comparator"}, "config.baseline_path"),
    Rejected(
        "comparator baseline and baseline_path are exclusive",
        {"type": "comparator", "baseline": "a", "baseline_path": "b"},
        "config.baseline",
    ),
    Rejected("contract needs pairs", {"type": "contract"}, "config.pairs"),
    Rejected(
        "contract pair needs a producer", {"type": "contract", "pairs": [{"consumer": "b"}]}, "config.pairs[0].producer"
    ),
    Rejected(
        "contract pair unknown key",
        {"type": "contract", "pairs": [{"producer": "a", "consumer": "b", "produce_pattern": "x"}]},
        "config.pairs[0].produce_pattern",
        typed=False,
    ),
    Rejected("source must be a string", {"type": "exit_code", "source": 5}, "config.source", typed=False),
    # list fields are bounded: every entry costs a pass over the output, an interpolation, or a git argument
    Rejected(
        "too many error_patterns",
        _contains("OK", error_patterns=[f"E{index}" for index in range(65)]),
        "config.error_patterns",
    ),
    Rejected("too many tracked keys", {"type": "action_stall", "track": [f"k{i}" for i in range(65)]}, "config.track"),
    Rejected("too many scope paths", {"type": "diff_stall", "scope": [f"p{i}" for i in range(65)]}, "config.scope"),
    # YAML integers have no size limit; a float() of one past 1e308 raised OverflowError (INTERNAL)
    Rejected("huge numeric target", _numeric("eq", 10**400), "config.target", typed=False),
    Rejected("huge tolerance", _convergence(1.0, tolerance=10**400), "config.tolerance", typed=False),
    Rejected("huge epsilon", {"type": "score_stall", "epsilon": 10**400}, "config.epsilon", typed=False),
    Rejected("huge max_stall", {"type": "score_stall", "max_stall": 10**400}, "config.max_stall", typed=False),
    Rejected("huge classify line", {"type": "classify", "line": -(10**400)}, "config.line", typed=False),
    Rejected("unknown context namespace", {"type": "exit_code"}, "context.contxt", context={"contxt": {}}),
    Rejected(
        "context namespace must be a mapping", {"type": "exit_code"}, "context.captured", context={"captured": "x"}
    ),
)
