"""The model grader (score_model, label_model) on the judge machinery: a real host (the fake CLI, a local HTTP
endpoint), the ruling cache, and malfunctions that become error flags, never a silent 0."""

from __future__ import annotations

import json
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from tests.judges.support import chat_body
from verdict.config.keys import Config
from verdict.evaluators import EvaluationInput, Evaluations, GraderMalfunction
from verdict.judges import ModelGraders
from verdict.judges.rulings import build_ruling_cache
from verdict.metrics import Metrics
from verdict.runner import Runner

SCORE_SCHEMA = {"type": "object", "properties": {"result": {"type": "number"}}, "required": ["result"]}
MESSAGES = (("system", "Grade the answer from 0 to 1."), ("user", "Q: 2+2? A: 4"))

SCORE_MODEL = {
    "type": "score_model",
    "name": "judge",
    "model": "gpt-4o-2024-08-06",
    "input": [
        {"role": "system", "content": "You are an expert grader. Score the answer between 0 and 1."},
        {"role": "user", "content": "Reference: {{item.reference}}\nAnswer: {{sample.output_text}}"},
    ],
    "range": [0, 1],
    "pass_threshold": 0.5,
}
LABEL_MODEL = {
    "type": "label_model",
    "name": "sentiment",
    "model": "gpt-4o",
    "input": [{"role": "user", "content": "Classify the sentiment of: {{sample.output_text}}"}],
    "labels": ["positive", "neutral", "negative"],
    "passing_labels": ["positive", "neutral"],
}


async def test_a_cli_judge_answers_the_score(judge_service: Any, fake_judges: Any) -> None:
    service = judge_service("claude-code")
    fake_judges.answer("claude-code", {"result": 0.75, "steps": ["compared"]})
    answer = await ModelGraders(service)(MESSAGES, SCORE_SCHEMA, model="gpt-4o", evaluator="score_model", deadline=None)
    assert answer["result"] == 0.75
    [call] = fake_judges.calls()
    assert "Grade the answer" in json.dumps(call)
    assert "gpt-4o" not in json.dumps(call["argv"])  # a CLI host is asked with the server's judge_model


async def test_an_http_judge_is_asked_with_the_graders_model(judge_service: Any, chat_server: Any) -> None:
    chat_server.replies = [(200, chat_body(json.dumps({"result": 1})))]
    service = judge_service(chat_server.url)
    answer = await ModelGraders(service)(MESSAGES, SCORE_SCHEMA, model="gpt-4o", evaluator="score_model", deadline=None)
    assert answer == {"result": 1}
    [(_, body)] = chat_server.requests
    assert body["model"] == "gpt-4o"


async def test_a_failing_judge_is_a_malfunction_with_its_flags(judge_service: Any, fake_judges: Any) -> None:
    service = judge_service("claude-code")
    fake_judges.scenario({"stdout": "not an envelope", "rc": 1})
    with pytest.raises(GraderMalfunction) as failed:
        await ModelGraders(service)(MESSAGES, SCORE_SCHEMA, model="", evaluator="score_model", deadline=None)
    assert failed.value.message
    assert failed.value.flags.get("judge_host") == "claude-code"


async def test_the_same_question_is_answered_from_the_ruling_cache(
    judge_service: Any, fake_judges: Any, metrics: Metrics
) -> None:
    service = judge_service("claude-code")
    graders = ModelGraders(service, build_ruling_cache(Config(), metrics))
    fake_judges.answer("claude-code", {"result": 0.5})
    first = await graders(MESSAGES, SCORE_SCHEMA, model="", evaluator="score_model", deadline=None)
    second = await graders(MESSAGES, SCORE_SCHEMA, model="", evaluator="score_model", deadline=None)
    assert first == second == {"result": 0.5}
    assert len(fake_judges.calls()) == 1


def _evaluations(service: Any) -> Evaluations:
    metrics = Metrics(CollectorRegistry())
    return Evaluations(Config(), Runner(metrics), metrics, grader=ModelGraders(service))


async def test_score_model_end_to_end_clamps_to_the_range(judge_service: Any, fake_judges: Any) -> None:
    evaluations = _evaluations(judge_service("claude-code"))
    fake_judges.answer("claude-code", {"result": 7, "steps": ["generous"]})
    request = EvaluationInput(
        config={"type": "openai_grader", "grader": json.dumps(SCORE_MODEL)},
        output="4",
        context={"item": {"reference": "4"}},
    )
    result = await evaluations.evaluate(request)
    assert result.verdict == "yes"
    assert result.details["reward"] == 1.0
    assert result.details["result"] == 7
    assert not any(value for key, value in result.details["errors"].items() if key.endswith("_error"))
    [call] = fake_judges.calls()
    assert "Reference: 4\\nAnswer: 4" in json.dumps(call)


async def test_a_non_numeric_score_is_zero_with_the_parse_flag(judge_service: Any, fake_judges: Any) -> None:
    evaluations = _evaluations(judge_service("claude-code"))
    fake_judges.answer("claude-code", {"result": "high"})
    request = EvaluationInput(config={"type": "openai_grader", "grader": SCORE_MODEL}, output="4")
    result = await evaluations.evaluate(request)
    assert result.verdict == "error"
    assert result.details["reward"] == 0.0
    assert result.details["errors"]["model_grader_parse_error"] is True
    assert result.details["errors"]["invalid_variable_error"] is True  # {{item.reference}} was not sent


async def test_a_judge_malfunction_is_error_with_the_server_flag(judge_service: Any, fake_judges: Any) -> None:
    evaluations = _evaluations(judge_service("claude-code"))
    fake_judges.scenario({"stdout": "", "rc": 2})
    result = await evaluations.evaluate(
        EvaluationInput(config={"type": "openai_grader", "grader": LABEL_MODEL}, output="great!")
    )
    assert result.verdict == "error"
    assert result.details["errors"]["model_grader_server_error"] is True
    assert result.details["errors"]["model_grader_server_error_details"]


@pytest.mark.parametrize(("label", "verdict"), [("positive", "yes"), ("neutral", "yes"), ("negative", "no")])
async def test_label_model_passes_on_a_passing_label(
    judge_service: Any, fake_judges: Any, label: str, verdict: str
) -> None:
    evaluations = _evaluations(judge_service("claude-code"))
    fake_judges.answer("claude-code", {"label": label})
    result = await evaluations.evaluate(
        EvaluationInput(config={"type": "openai_grader", "grader": LABEL_MODEL}, output="fine")
    )
    assert result.verdict == verdict
    assert result.details["label"] == label


async def test_a_label_outside_the_labels_is_the_parse_flag(judge_service: Any, fake_judges: Any) -> None:
    evaluations = _evaluations(judge_service("claude-code"))
    fake_judges.answer("claude-code", {"label": "ecstatic"})
    result = await evaluations.evaluate(
        EvaluationInput(config={"type": "openai_grader", "grader": LABEL_MODEL}, output="fine")
    )
    assert result.verdict == "error"
    assert result.details["errors"]["model_grader_parse_error"] is True


async def test_promptfoo_llm_rubric_is_graded_by_the_judge(judge_service: Any, fake_judges: Any) -> None:
    evaluations = _evaluations(judge_service("claude-code"))
    fake_judges.answer("claude-code", {"reason": "It is French.", "pass": True, "score": 0.9})
    config = {"type": "promptfoo", "assert": "- type: llm-rubric\n  value: is written in French\n  threshold: 0.8\n"}
    result = await evaluations.evaluate(EvaluationInput(config=config, output="Bonjour tout le monde"))
    assert result.verdict == "yes", result.details
    assert result.details["results"][0]["score"] == 0.9
    [call] = fake_judges.calls()
    assert "is written in French" in json.dumps(call)
