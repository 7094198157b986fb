"""A promptfoo `assert:` list, checked when the configuration is validated and run against one response.

Parsing (`check_assertions`, the record's check) takes the list verbatim, as YAML or JSON text or as a list already,
or a test case holding `assert:` (and `threshold:`, `vars:`); every assertion is checked before anything runs:
an unknown type is INVALID_ARGUMENT with a did-you-mean, `javascript`/`python`/`ruby`/`webhook` are refused naming
the type (they would run the config's code), and so are the model-graded types Verdict does not serve.

Scoring follows promptfoo's runAssertions and AssertionsResult:

- each assertion has a score (1 or 0 for boolean types) and a pass; `not-<type>` inverts it (a scored type passes
  when its score is below the threshold and reports 1 - score);
- `weight` (default 1) weighs the score in the test's weighted mean; `weight: 0` is a measurement: it always
  passes and does not count towards the mean, but its `metric` still gets its score;
- `metric` names a score: named_scores holds the weighted mean of the scores that carry each name;
- an `assert-set` groups assertions: its score is its members' weighted mean, it passes when every member passes
  or, with a `threshold`, when its score reaches it; it then counts as one assertion with its own weight and metric;
- the test passes when every assertion passes or, with a test-level `threshold`, when the weighted mean reaches
  it (individual failures then do not matter); with no weight at all the score is 0.

The verdict is `yes` (pass), `no`, or `error` when an assertion could not be decided (the response lacked what it
reads, a regular expression ran out of time).
"""

from __future__ import annotations

import asyncio
import difflib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from verdict.errors import InvalidConfig
from verdict.evaluators.evaluate_block import load_yaml_value
from verdict.evaluators.model import EvaluationResult, GraderMalfunction, Judgement, Step
from verdict.evaluators.outside import Outside
from verdict.evaluators.promptfoo.checks import (
    CHECKS,
    LLM_RUBRIC_SCHEMA,
    LLM_RUBRIC_SYSTEM,
    LLM_RUBRIC_USER,
    MODEL_GRADED,
    NEVER_EXECUTED,
    Response,
    Undecided,
)
from verdict.evaluators.templates import render

__all__ = ["ASSERTION_KEYS", "INLINE_OUTPUT_CHARS", "MAX_ASSERTIONS", "check_assertions", "run", "score_assertions"]

MAX_ASSERTIONS = 64
"""Most assertions one list holds, assert-set members included: each is a pass over the output."""

ASSERTION_KEYS = frozenset(
    {"type", "value", "threshold", "weight", "metric", "transform", "provider", "rubricPrompt", "config", "assert"}
)
_IGNORED_KEYS = frozenset({"provider", "rubricPrompt", "config"})
"""Keys promptfoo reads only for model-graded or scripted types; accepted and named in `ignored` (a `rubricPrompt`
of llm-rubric, a template over `{{output}}` and `{{rubric}}`, is used instead)."""
_TEST_KEYS = frozenset({"assert", "threshold", "vars", "description", "options", "metadata"})


def check_assertions(settings: dict[str, Any]) -> None:
    """The record's check: `assert` parsed and every assertion checked, the test's threshold and vars taken."""
    raw = settings["assert"]
    if isinstance(raw, str):
        raw = load_yaml_value(raw, "config.assert")
    threshold = settings.get("threshold")
    variables: Mapping[str, Any] = settings.get("vars") or {}
    if isinstance(raw, Mapping):
        unknown = [key for key in raw if key not in _TEST_KEYS]
        if unknown:
            raise InvalidConfig(
                f"unknown key `{unknown[0]}` in a promptfoo test case; it takes {', '.join(sorted(_TEST_KEYS))}",
                field=f"config.assert.{unknown[0]}",
            )
        if raw.get("threshold") is not None:
            threshold = _number(raw["threshold"], "config.assert.threshold")
        variables = raw.get("vars") or {}
        if not isinstance(variables, Mapping):
            raise InvalidConfig("the test case's vars must be a mapping", field="config.assert.vars")
        raw = raw.get("assert")
    if not isinstance(raw, list) or not raw:
        raise InvalidConfig("promptfoo needs a non-empty `assert:` list", field="config.assert")
    counter = [0]
    settings["assert"] = [_assertion(item, f"config.assert[{index}]", counter, True) for index, item in enumerate(raw)]
    settings["threshold"] = threshold
    settings["vars"] = dict(variables)


def _number(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidConfig(f"{path} must be a number", field=path)
    return float(value)


def _assertion(item: Any, path: str, counter: list[int], top: bool) -> dict[str, Any]:
    if not isinstance(item, Mapping):
        raise InvalidConfig(f"{path} must be a mapping with a `type`", field=path)
    counter[0] += 1
    if counter[0] > MAX_ASSERTIONS:
        raise InvalidConfig(f"config.assert holds more than {MAX_ASSERTIONS} assertions", field="config.assert")
    kind = item.get("type")
    if not isinstance(kind, str) or not kind:
        raise InvalidConfig(f"{path} needs a `type`", field=f"{path}.type")
    for key in item:
        if key not in ASSERTION_KEYS:
            close = difflib.get_close_matches(str(key), sorted(ASSERTION_KEYS), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise InvalidConfig(f"unknown key `{key}` in a promptfoo assertion{hint}", field=f"{path}.{key}")
    checked: dict[str, Any] = {"type": kind, "path": path}
    for name in ("threshold", "weight"):
        if item.get(name) is not None:
            checked[name] = _number(item[name], f"{path}.{name}")
    if checked.get("weight", 1.0) < 0:
        raise InvalidConfig(f"{path}.weight must be at least 0", field=f"{path}.weight")
    if item.get("metric") is not None:
        if not isinstance(item["metric"], str):
            raise InvalidConfig(f"{path}.metric must be a string", field=f"{path}.metric")
        checked["metric"] = item["metric"]
    if "transform" in item:
        raise InvalidConfig(
            f"{path}.transform is JavaScript promptfoo would run; Verdict never executes config code",
            field=f"{path}.transform",
        )
    if isinstance(item.get("rubricPrompt"), str) and kind.removeprefix("not-") == "llm-rubric":
        checked["rubric_prompt"] = item["rubricPrompt"]
    ignored = sorted(key for key in item if key in _IGNORED_KEYS and "rubric_prompt" not in checked)
    if ignored:
        checked["ignored"] = ignored
    if kind == "assert-set":
        if not top:
            raise InvalidConfig("promptfoo does not nest assert-set inside assert-set", field=f"{path}.type")
        members = item.get("assert")
        if not isinstance(members, list) or not members:
            raise InvalidConfig("an assert-set needs a non-empty `assert:` list", field=f"{path}.assert")
        checked["assert"] = [
            _assertion(member, f"{path}.assert[{index}]", counter, False) for index, member in enumerate(members)
        ]
        return checked
    if "assert" in item:
        raise InvalidConfig(f"`assert` belongs to assert-set, not {kind}", field=f"{path}.assert")
    inverse = kind.startswith("not-")
    base = kind[4:] if inverse else kind
    if base in NEVER_EXECUTED:
        raise InvalidConfig(
            f"promptfoo assertion type {kind!r} runs code or calls a URL from the config; Verdict never executes "
            "either",
            field=f"{path}.type",
            reason="ASSERTION_NOT_SERVED",
        )
    if base in MODEL_GRADED:
        raise InvalidConfig(
            f"promptfoo assertion type {kind!r} is not served: it needs a model, an endpoint or data this server "
            "does not run it with (see docs/evaluators.md)",
            field=f"{path}.type",
            reason="ASSERTION_NOT_SERVED",
        )
    check = CHECKS.get(base)
    if check is None:
        close = difflib.get_close_matches(base, sorted(CHECKS), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise InvalidConfig(f"unknown promptfoo assertion type {kind!r}{hint}", field=f"{path}.type")
    if check.value == "required" and item.get("value") is None:
        raise InvalidConfig(f"{kind} needs a `value`", field=f"{path}.value")
    if check.threshold_required and "threshold" not in checked:
        raise InvalidConfig(f"{kind} needs a `threshold`", field=f"{path}.threshold")
    checked["value"] = item.get("value")
    checked["inverse"] = inverse
    checked["base"] = base
    return checked


@dataclass
class _Tally:
    """promptfoo's AssertionsResult: the weighted score, the failures and the named scores of one level."""

    threshold: float | None = None
    total: float = 0.0
    weight: float = 0.0
    failed: str | None = None
    named: dict[str, float] = field(default_factory=dict)
    named_weight: dict[str, float] = field(default_factory=dict)

    def add(self, score: float, passed: bool, reason: str, weight: float, metric: str | None) -> None:
        self.total += score * weight
        self.weight += weight
        if metric:
            metric_weight = weight if weight > 0 else 1.0
            self.named[metric] = self.named.get(metric, 0.0) + score * metric_weight
            self.named_weight[metric] = self.named_weight.get(metric, 0.0) + metric_weight
        if not passed:
            self.failed = reason

    def result(self) -> tuple[bool, float, str, dict[str, float]]:
        score = self.total / self.weight if self.weight > 0 else 0.0
        passed, reason = self.failed is None, self.failed or "All assertions passed"
        if self.threshold is not None:
            passed = score >= self.threshold
            reason = f"Aggregate score {score:.2f} {'≥' if passed else '<'} {self.threshold:g} threshold"
        named = {key: value / self.named_weight[key] for key, value in self.named.items() if self.named_weight[key]}
        return passed, score, reason, named


def _one(assertion: Mapping[str, Any], response: Response, variables: Mapping[str, Any]) -> dict[str, Any]:
    """One assertion's result entry: pass, score, reason (or error)."""
    check = CHECKS[assertion["base"]]
    value = assertion["value"]
    path = assertion["path"]
    if isinstance(value, str):
        value = render(value, variables, field=f"{path}.value")
    elif isinstance(value, list):
        value = [render(item, variables, field=f"{path}.value") if isinstance(item, str) else item for item in value]
    threshold = assertion.get("threshold")
    entry: dict[str, Any] = {"type": assertion["type"]}
    try:
        outcome = check.handler(response, value, threshold, path)
    except Undecided as undecided:
        entry.update({"pass": False, "score": 0.0, "error": str(undecided), "reason": str(undecided)})
        return entry
    inverse = assertion["inverse"]
    if check.scored:
        limit = threshold if threshold is not None else check.default_threshold or 0.0
        passed = (outcome.score >= limit) != inverse
        score = 1 - outcome.score if inverse else outcome.score
        entry["threshold"] = limit
    else:
        passed = outcome.inverted if inverse and outcome.inverted is not None else outcome.passed != inverse
        score = outcome.score if not inverse else (1.0 if passed else 0.0)  # is-refusal's empty output: pass, 0
    entry.update({"pass": passed, "score": score, "reason": "Assertion passed" if passed else outcome.reason})
    if check.scored:
        entry["raw_score"] = outcome.score
    return entry


def score_assertions(settings: Mapping[str, Any], response: Response) -> EvaluationResult:
    """Every assertion against `response`, aggregated as promptfoo does (see the module docstring)."""
    variables = settings.get("vars") or {}
    main = _Tally(threshold=settings.get("threshold"))
    results: list[dict[str, Any]] = []
    errors: list[str] = []

    def run_one(assertion: Mapping[str, Any], tally: _Tally) -> dict[str, Any]:
        entry = _one(assertion, response, variables)
        weight = float(assertion.get("weight", 1.0))
        if weight == 0:  # promptfoo: a weight-0 assertion is a measurement and always passes
            entry["pass"] = True
        entry["weight"] = weight
        if "metric" in assertion:
            entry["metric"] = assertion["metric"]
        if "ignored" in assertion:
            entry["ignored_keys"] = assertion["ignored"]
        if "error" in entry:
            errors.append(f"{assertion['path']}: {entry['error']}")
        tally.add(entry["score"], entry["pass"], entry["reason"], weight, assertion.get("metric"))
        return entry

    for index, assertion in enumerate(settings["assert"]):
        if assertion["type"] != "assert-set":
            results.append({"index": index, **run_one(assertion, main)})
            continue
        inner = _Tally(threshold=assertion.get("threshold"))
        members = [{"index": j, **run_one(member, inner)} for j, member in enumerate(assertion["assert"])]
        passed, score, reason, named = inner.result()
        weight = float(assertion.get("weight", 1.0))
        entry = {"index": index, "type": "assert-set", "pass": passed, "score": score, "reason": reason}
        entry.update({"weight": weight, "results": members})
        if "metric" in assertion:
            entry["metric"] = assertion["metric"]
        for metric, value in named.items():
            main.named[metric] = main.named.get(metric, 0.0) + value
            main.named_weight[metric] = main.named_weight.get(metric, 0.0) + 1.0
        main.add(score, passed, reason, weight, assertion.get("metric"))
        results.append(entry)
    passed, score, reason, named = main.result()
    details: dict[str, Any] = {"pass": passed, "score": score, "reason": reason, "results": results}
    details["named_scores"] = named
    if settings.get("threshold") is not None:
        details["threshold"] = settings["threshold"]
    if errors:
        details["error"] = "; ".join(errors)
        return EvaluationResult("error", details)
    return EvaluationResult("yes" if passed else "no", details)


INLINE_OUTPUT_CHARS = 8 * 1024
"""Below this, a list without regular expressions is scored on the event loop: every other check is linear in the
output (or the tool calls), so a few KB cost microseconds, less than the hop to a worker thread (about 1 ms under
load, measured in bench/bench_evaluators.py). A regex (or a JSON Schema, whose `pattern` is one) always runs off
the loop: its time bound is regex_timeout_seconds, far longer than a loop may stall."""
_SCHEMA_TYPES = frozenset({"is-json", "contains-json"})


def _inline(settings: Mapping[str, Any], output: str) -> bool:
    """Whether the list may be scored on the event loop: a small output, no regex, no JSON Schema."""
    if len(output) > INLINE_OUTPUT_CHARS:
        return False
    flat = [member for item in settings["assert"] for member in item.get("assert", [item])]
    for item in flat:
        if item["base"] in ("regex", "is-valid-openai-tools-call"):
            return False
        if item["base"] in _SCHEMA_TYPES and item["value"] is not None:
            return False
    return True


async def _model_answers(settings: Mapping[str, Any], output: str, outside: Outside) -> dict[str, dict[str, Any] | str]:
    """Ask the judge every model-graded assertion (llm-rubric), in order; a malfunction is kept as its message."""
    answers: dict[str, dict[str, Any] | str] = {}
    variables = settings.get("vars") or {}
    flat = [member for item in settings["assert"] for member in item.get("assert", [item])]
    for item in flat:
        if item.get("base") is None or not CHECKS[item["base"]].model_graded:
            continue
        if outside.grader is None:
            answers[item["path"]] = "no LLM judge is configured on this server, so llm-rubric cannot be graded"
            continue
        rubric = render(str(item["value"]), variables, field=f"{item['path']}.value")
        template = item.get("rubric_prompt") or LLM_RUBRIC_USER
        prompt = render(template, {"output": output, "rubric": rubric}, field=f"{item['path']}.rubricPrompt")
        try:
            answers[item["path"]] = await outside.grader(
                (("system", LLM_RUBRIC_SYSTEM), ("user", prompt)),
                LLM_RUBRIC_SCHEMA,
                model="",
                evaluator="llm-rubric",
                deadline=outside.deadline,
            )
        except GraderMalfunction as malfunction:
            answers[item["path"]] = f"the judge could not grade: {malfunction.message}"
    return answers


async def run(step: Step, outside: Outside) -> Judgement | EvaluationResult:
    """The record's run: the judge asked for any llm-rubric first, then the list scored, inline for a small output
    without patterns (`INLINE_OUTPUT_CHARS`), else off the event loop."""
    answers = await _model_answers(step.settings, step.output, outside)
    bound = outside.bound(outside.config.regex_timeout_seconds)
    response = Response(step.output, step.facts, bound, answers)
    if _inline(step.settings, step.output):
        return score_assertions(step.settings, response)
    return await asyncio.to_thread(score_assertions, step.settings, response)
