"""OpenAI grader objects: checked (`check_grader`) and run (`grade`) against one sample.

The grader types and what passes:

- `string_check`: `operation` eq, ne, like (the input contains the reference, case-sensitive) or ilike (ignoring
  case); the reward is 1 or 0.
- `text_similarity`: `evaluation_metric` (see `similarity`) scores the input against the reference.
- `score_model`: a judge answers `{"result": <number>}` for the rendered `input` messages; the number is clamped to
  `range` (default [0, 1]). A missing or non-numeric result is reward 0 *with* `model_grader_parse_error` set.
- `label_model`: a judge picks one of `labels`; the reward is 1 when it is among `passing_labels`.
- `multi`: `graders` (a mapping of name to grader) each run, then `calculate_output` (see `formula`) over their
  rewards by name.
- `python`: refused, never executed.

Templates (`{{item.…}}`, `{{sample.output_text}}`, `{{sample.output_json.…}}`, `{{sample.output_tools}}`) are
rendered first; a variable that does not resolve sets `invalid_variable_error`. The verdict is `yes` when the reward
reaches `pass_threshold` (when the grader has none: the top of its range, 1 for every type but score_model), `no`
below it, and `error` when any error flag is set: the reward is still reported, but a judge that could not answer is
never a silent 0.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from verdict.errors import InvalidConfig
from verdict.evaluators.graders import formula, similarity
from verdict.evaluators.json_compare import NotJson, parse_json_text
from verdict.evaluators.model import GraderMalfunction, ModelGrader, ResponseFacts
from verdict.evaluators.templates import render

__all__ = ["ERROR_FLAGS", "GRADER_TYPES", "MAX_GRADERS", "Graded", "Sample", "check_grader", "grade"]

ERROR_FLAGS = (
    "formula_parse_error",
    "sample_parse_error",
    "truncated_observation_error",
    "unresponsive_reward_error",
    "invalid_variable_error",
    "other_error",
    "python_grader_server_error",
    "python_grader_runtime_error",
    "model_grader_server_error",
    "model_grader_refusal_error",
    "model_grader_parse_error",
)
"""OpenAI's boolean error flags, in the order its run response lists them (the *_details/_type companions are
filled beside them)."""

MAX_GRADERS = 16
"""Most graders one object holds (a multi's sub-graders included): a model grader is a judge call each."""

_KEYS: Mapping[str, frozenset[str]] = {
    "string_check": frozenset({"type", "name", "input", "reference", "operation"}),
    "text_similarity": frozenset({"type", "name", "input", "reference", "evaluation_metric", "pass_threshold"}),
    "score_model": frozenset({"type", "name", "model", "input", "range", "pass_threshold", "sampling_params"}),
    "label_model": frozenset({"type", "name", "model", "input", "labels", "passing_labels"}),
    "multi": frozenset({"type", "name", "graders", "calculate_output", "pass_threshold"}),
}
GRADER_TYPES = tuple(_KEYS)
_IGNORED = frozenset({"sampling_params"})
"""Accepted and reported as ignored: the judge host runs with its own sampling settings."""
_OPERATIONS = ("eq", "ne", "like", "ilike")
_ROLES = ("system", "developer", "user", "assistant")


def _invalid(message: str, path: str) -> InvalidConfig:
    return InvalidConfig(message, field=path)


def _string(grader: Mapping[str, Any], key: str, path: str, *, required: bool = True) -> str | None:
    value = grader.get(key)
    if value is None:
        if required:
            raise _invalid(f"a {grader['type']} grader needs `{key}`", f"{path}.{key}")
        return None
    if not isinstance(value, str):
        raise _invalid(f"{path}.{key} must be a string", f"{path}.{key}")
    return value


def _threshold(grader: Mapping[str, Any], path: str) -> float | None:
    value = grader.get("pass_threshold")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _invalid(f"{path}.pass_threshold must be a number", f"{path}.pass_threshold")
    return float(value)


def _messages(grader: Mapping[str, Any], path: str) -> list[dict[str, str]]:
    """score_model / label_model `input`: chat messages whose content is text (a string, an input_text part, or a
    list of them)."""
    raw = grader.get("input")
    if not isinstance(raw, list) or not raw:
        raise _invalid(f"a {grader['type']} grader needs `input`: a list of messages", f"{path}.input")
    messages = []
    for index, message in enumerate(raw):
        where = f"{path}.input[{index}]"
        if not isinstance(message, Mapping):
            raise _invalid(f"{where} must be a message with role and content", where)
        role = message.get("role")
        if role not in _ROLES:
            raise _invalid(f"{where}.role must be one of {', '.join(_ROLES)}", f"{where}.role")
        messages.append({"role": role, "content": _content(message.get("content"), f"{where}.content")})
    return messages


def _content(content: Any, path: str) -> str:
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else [content]
    texts = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, Mapping) and part.get("type") in ("input_text", "output_text", "text"):
            if not isinstance(part.get("text"), str):
                raise _invalid(f"{path} text parts need a string `text`", path)
            texts.append(part["text"])
        else:
            raise _invalid(f"{path} must be text: images and audio are not served", path)
    return "\n".join(texts)


def check_grader(raw: Any, path: str = "config.grader", counter: list[int] | None = None) -> dict[str, Any]:
    """A grader object (or its JSON text) checked and normalised; raises InvalidConfig naming the field."""
    counter = counter if counter is not None else [0]
    if isinstance(raw, str):
        try:
            raw = parse_json_text(raw)
        except NotJson as exc:
            raise _invalid(f"{path} is not JSON: {exc}", path) from None
    if not isinstance(raw, Mapping):
        raise _invalid(f"{path} must be a grader object with a `type`", path)
    counter[0] += 1
    if counter[0] > MAX_GRADERS:
        raise _invalid(f"the grader holds more than {MAX_GRADERS} graders", path)
    kind = raw.get("type")
    if kind == "python":
        raise InvalidConfig(
            "python graders run the grader's code; Verdict never executes it",
            field=f"{path}.type",
            reason="GRADER_NOT_SERVED",
        )
    if not isinstance(kind, str) or kind not in _KEYS:
        close = difflib.get_close_matches(str(kind), GRADER_TYPES, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise _invalid(f"unknown grader type {kind!r}{hint}; served: {', '.join(GRADER_TYPES)}", f"{path}.type")
    for key in raw:
        if key not in _KEYS[kind]:
            close = difflib.get_close_matches(str(key), sorted(_KEYS[kind]), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise _invalid(f"unknown key `{key}` for a {kind} grader{hint}", f"{path}.{key}")
    grader: dict[str, Any] = {"type": kind, "name": _string(raw, "name", path, required=False) or kind}
    ignored = sorted(key for key in raw if key in _IGNORED)
    if ignored:
        grader["ignored_keys"] = ignored
    if kind in ("string_check", "text_similarity"):
        grader["input"] = _string(raw, "input", path)
        grader["reference"] = _string(raw, "reference", path)
    if kind == "string_check":
        operation = _string(raw, "operation", path)
        if operation not in _OPERATIONS:
            raise _invalid(f"{path}.operation must be one of {', '.join(_OPERATIONS)}", f"{path}.operation")
        grader["operation"] = operation
    elif kind == "text_similarity":
        metric = _string(raw, "evaluation_metric", path)
        assert metric is not None
        if metric in similarity.REFUSED:
            raise InvalidConfig(
                similarity.REFUSED[metric], field=f"{path}.evaluation_metric", reason="METRIC_NOT_SERVED"
            )
        if metric not in similarity.METRICS:
            served = ", ".join(sorted(similarity.METRICS))
            raise _invalid(f"unknown evaluation_metric {metric!r}; served: {served}", f"{path}.evaluation_metric")
        grader["evaluation_metric"] = metric
        grader["pass_threshold"] = _threshold(raw, path)
    elif kind in ("score_model", "label_model"):
        grader["model"] = _string(raw, "model", path, required=False) or ""
        grader["input"] = _messages(raw, path)
    if kind == "score_model":
        span = raw.get("range", [0, 1])
        if (
            not isinstance(span, list)
            or len(span) != 2
            or not all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in span)
            or span[0] >= span[1]
        ):
            raise _invalid(f"{path}.range must be [low, high] with low < high", f"{path}.range")
        grader["range"] = [float(span[0]), float(span[1])]
        grader["pass_threshold"] = _threshold(raw, path)
    elif kind == "label_model":
        for key in ("labels", "passing_labels"):
            value = raw.get(key)
            if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
                raise _invalid(f"a label_model grader needs `{key}`: a list of strings", f"{path}.{key}")
            grader[key] = list(value)
        if not set(grader["passing_labels"]) <= set(grader["labels"]):
            raise _invalid("passing_labels must be among labels", f"{path}.passing_labels")
    elif kind == "multi":
        graders = raw.get("graders")
        if (
            isinstance(graders, Mapping)
            and graders.get("type") is not None
            and not isinstance(graders["type"], Mapping)
        ):
            graders = {str(graders.get("name") or graders["type"]): graders}  # one grader, as the SDK types spell it
        if not isinstance(graders, Mapping) or not graders:
            raise _invalid("a multi grader needs `graders`: a mapping of name to grader", f"{path}.graders")
        grader["graders"] = {
            str(name): check_grader(sub, f"{path}.graders.{name}", counter) for name, sub in graders.items()
        }
        text = _string(raw, "calculate_output", path)
        assert text is not None
        try:
            parsed = formula.parse(text)
        except formula.FormulaError as exc:
            raise InvalidConfig(
                f"{path}.calculate_output: {exc}", field=f"{path}.calculate_output", reason="FORMULA_PARSE_ERROR"
            ) from None
        unknown = sorted(parsed.names - set(grader["graders"]))
        if unknown:
            raise _invalid(
                f"calculate_output names {unknown[0]!r}, which is not one of the graders", f"{path}.calculate_output"
            )
        grader["calculate_output"] = text
        grader["pass_threshold"] = _threshold(raw, path)
    return grader


@dataclass(frozen=True)
class Sample:
    """What a grader's templates read: the `item` namespace and the sample (output text, tool calls)."""

    output_text: str
    item: Mapping[str, Any] = field(default_factory=dict)
    facts: ResponseFacts = field(default_factory=ResponseFacts)

    def namespaces(self) -> dict[str, Any]:
        try:
            output_json = parse_json_text(self.output_text)
        except NotJson:
            output_json = None
        tools = [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
            for call in self.facts.tool_calls
        ]
        return {
            "item": dict(self.item),
            "sample": {"output_text": self.output_text, "output_json": output_json, "output_tools": tools},
        }


@dataclass
class Graded:
    """A grader's outcome: the reward, the error flags set, and what each sub-grader and metric found."""

    reward: float
    top: float
    threshold: float | None
    errors: dict[str, Any] = field(default_factory=dict)
    sub_rewards: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.reward >= (self.threshold if self.threshold is not None else self.top)

    @property
    def failed_to_grade(self) -> bool:
        return any(self.errors.get(flag) for flag in ERROR_FLAGS)


def _render(text: str, namespaces: Mapping[str, Any], errors: dict[str, Any], path: str) -> str:
    unresolved: list[str] = []
    rendered = render(text, namespaces, field=path, unresolved=unresolved)
    if unresolved:
        errors["invalid_variable_error"] = True
        errors.setdefault("invalid_variables", []).extend(unresolved)
    return rendered


async def grade(
    grader: Mapping[str, Any], sample: Sample, model_grader: ModelGrader | None, deadline: float | None
) -> Graded:
    """Run a checked grader (see `check_grader`) against `sample`; a model grader needs `model_grader`."""
    return await _grade(grader, sample.namespaces(), model_grader, deadline, "grader")


async def _grade(
    grader: Mapping[str, Any],
    namespaces: Mapping[str, Any],
    model_grader: ModelGrader | None,
    deadline: float | None,
    path: str,
) -> Graded:
    kind = grader["type"]
    errors: dict[str, Any] = {}
    if kind == "string_check":
        text = _render(grader["input"], namespaces, errors, f"{path}.input")
        reference = _render(grader["reference"], namespaces, errors, f"{path}.reference")
        operation = grader["operation"]
        matched = {
            "eq": text == reference,
            "ne": text != reference,
            "like": reference in text,
            "ilike": reference.lower() in text.lower(),
        }[operation]
        return Graded(1.0 if matched else 0.0, 1.0, None, errors, details={"operation": operation})
    if kind == "text_similarity":
        text = _render(grader["input"], namespaces, errors, f"{path}.input")
        reference = _render(grader["reference"], namespaces, errors, f"{path}.reference")
        metric = grader["evaluation_metric"]
        details = {"evaluation_metric": metric, "implementation": similarity.implementation(metric)}
        longest = max(len(text), len(reference))
        if longest > similarity.MAX_SIMILARITY_CHARS:
            errors["truncated_observation_error"] = True
            errors["similarity_error_details"] = (
                f"the texts are {longest} characters; similarity is computed on at most "
                f"{similarity.MAX_SIMILARITY_CHARS} (ROUGE-L is quadratic in pure Python)"
            )
            return Graded(0.0, 1.0, grader["pass_threshold"], errors, details=details)
        if longest > similarity.INLINE_SIMILARITY_CHARS:
            score = await asyncio.to_thread(similarity.similarity, metric, text, reference)
        else:
            score = similarity.similarity(metric, text, reference)
        return Graded(score, 1.0, grader["pass_threshold"], errors, details=details)
    if kind == "multi":
        sub = {
            name: await _grade(child, namespaces, model_grader, deadline, f"{path}.graders.{name}")
            for name, child in grader["graders"].items()
        }
        for child in sub.values():
            for flag, value in child.errors.items():
                if isinstance(value, list):
                    errors.setdefault(flag, []).extend(value)
                elif value:
                    errors[flag] = value
        rewards = {name: child.reward for name, child in sub.items()}
        try:
            reward = formula.compute(formula.parse(grader["calculate_output"]), rewards)
        except formula.FormulaError as exc:
            errors["formula_parse_error"] = True
            errors["formula_error_details"] = str(exc)
            reward = 0.0
        details = {"graders": {name: {"reward": child.reward, **child.details} for name, child in sub.items()}}
        return Graded(reward, 1.0, grader["pass_threshold"], errors, rewards, details)
    return await _model_graded(grader, namespaces, model_grader, deadline, path, errors)


async def _model_graded(
    grader: Mapping[str, Any],
    namespaces: Mapping[str, Any],
    model_grader: ModelGrader | None,
    deadline: float | None,
    path: str,
    errors: dict[str, Any],
) -> Graded:
    kind = grader["type"]
    messages = tuple(
        (message["role"], _render(message["content"], namespaces, errors, f"{path}.input[{index}].content"))
        for index, message in enumerate(grader["input"])
    )
    low, top = grader["range"] if kind == "score_model" else (0.0, 1.0)
    threshold = grader.get("pass_threshold")
    if kind == "score_model":
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {"steps": {"type": "array", "items": {"type": "string"}}, "result": {"type": "number"}},
            "required": ["result"],
        }
    else:
        schema = {
            "type": "object",
            "properties": {"label": {"type": "string", "enum": grader["labels"]}},
            "required": ["label"],
        }
    if model_grader is None:
        errors["model_grader_server_error"] = True
        errors["model_grader_server_error_details"] = "no judge is configured on this server"
        return Graded(low, top, threshold, errors)
    started = time.monotonic()
    try:
        answer = await model_grader(messages, schema, model=grader["model"], evaluator=kind, deadline=deadline)
    except GraderMalfunction as malfunction:
        errors["model_grader_server_error"] = True
        errors["model_grader_server_error_details"] = malfunction.message
        return Graded(low, top, threshold, errors, details={"judge": malfunction.flags})
    details: dict[str, Any] = {"judge_latency_ms": round((time.monotonic() - started) * 1000)}
    if kind == "score_model":
        result = answer.get("result")
        if isinstance(result, bool) or not isinstance(result, int | float) or not math.isfinite(result):
            errors["model_grader_parse_error"] = True
            details["judge_answer"] = json.dumps(answer)[:500]
            return Graded(0.0, top, threshold, errors, details=details)
        details["result"] = result
        if isinstance(answer.get("steps"), list):
            details["steps"] = [str(step)[:500] for step in answer["steps"][:20]]
        return Graded(min(max(float(result), low), top), top, threshold, errors, details=details)
    label = answer.get("label")
    if not isinstance(label, str) or label not in grader["labels"]:
        errors["model_grader_parse_error"] = True
        details["judge_answer"] = json.dumps(answer)[:500]
        return Graded(0.0, 1.0, None, errors, details=details)
    details["label"] = label
    return Graded(1.0 if label in grader["passing_labels"] else 0.0, 1.0, None, errors, details=details)
