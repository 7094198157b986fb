"""The `openai_grader` evaluator: one grader object run against the step's output, tool calls and `item` context,
and the same outcome in the shape of OpenAI's graders run endpoint (`run_response`), which the HTTP drop-in sends."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from verdict.evaluators.graders.grader import ERROR_FLAGS, Sample, check_grader, grade
from verdict.evaluators.model import EvaluationResult, Judgement, Step
from verdict.evaluators.outside import Outside

__all__ = ["check", "run", "run_response"]


def check(settings: dict[str, Any]) -> None:
    """The record's check: the grader object (or its JSON text) checked and normalised."""
    settings["grader"] = check_grader(settings["grader"])


def run_response(
    name: str,
    kind: str,
    reward: float,
    errors: Mapping[str, Any],
    sub_rewards: Mapping[str, float],
    execution_time: float,
) -> dict[str, Any]:
    """A graders run response as OpenAI's API answered it: reward, metadata (with every error flag), sub_rewards."""
    flags: dict[str, Any] = {flag: bool(errors.get(flag)) for flag in ERROR_FLAGS}
    flags["python_grader_server_error_type"] = None
    flags["python_grader_runtime_error_details"] = None
    flags["model_grader_server_error_details"] = errors.get("model_grader_server_error_details")
    return {
        "reward": reward,
        "metadata": {
            "name": name,
            "type": kind,
            "errors": flags,
            "execution_time": execution_time,
            "scores": dict(sub_rewards) or {name: reward},
            "token_usage": None,
            "sampled_model_name": None,
        },
        "sub_rewards": dict(sub_rewards),
        "model_grader_token_usage_per_model": {},
    }


async def run(step: Step, outside: Outside) -> Judgement | EvaluationResult:
    """The record's run: yes when the reward reaches the pass threshold, error when any error flag is set."""
    grader = step.settings["grader"]
    item = step.namespaces.values.get("item", {})
    started = time.monotonic()
    graded = await grade(grader, Sample(step.output, item, step.facts), outside.grader, outside.deadline)
    response = run_response(
        grader["name"], grader["type"], graded.reward, graded.errors, graded.sub_rewards, time.monotonic() - started
    )
    details: dict[str, Any] = {
        "reward": graded.reward,
        "score": graded.reward,
        "pass_threshold": graded.threshold if graded.threshold is not None else graded.top,
        "name": grader["name"],
        "type": grader["type"],
        "errors": response["metadata"]["errors"],
        "execution_time": response["metadata"]["execution_time"],
        "sub_rewards": graded.sub_rewards,
        **graded.details,
    }
    for extra in ("invalid_variables", "formula_error_details", "similarity_error_details"):
        if extra in graded.errors:
            details[extra] = graded.errors[extra]
    if "ignored_keys" in grader:
        details["grader_ignored_keys"] = grader["ignored_keys"]
    if graded.failed_to_grade:
        return EvaluationResult("error", details)
    return EvaluationResult("yes" if graded.passed else "no", details)
