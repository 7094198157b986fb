"""OpenAI grader objects: string_check and multi exactly, text_similarity pinned by golden vectors, templating,
the refusals (python, meteor, cosine), and the error flags."""

from __future__ import annotations

import importlib.metadata
import json
from typing import Any

import pytest

from verdict.errors import InvalidConfig
from verdict.evaluators import EvaluationInput, Evaluations, ResponseFacts, ToolCall, validate
from verdict.evaluators.graders import check_grader
from verdict.evaluators.graders.formula import FormulaError, compute, parse
from verdict.evaluators.graders.similarity import METRICS, implementation, similarity


async def _grade(
    evaluations: Evaluations, grader: dict[str, Any], output: str = "", item: dict[str, Any] | None = None, **facts: Any
) -> Any:
    request = EvaluationInput(
        config={"type": "openai_grader", "grader": json.dumps(grader)},
        output=output,
        context={"item": item} if item is not None else {},
        facts=ResponseFacts(**facts),
    )
    return await evaluations.evaluate(request)


def _string_check(operation: str, reference: str = "{{item.answer}}") -> dict[str, Any]:
    return {
        "type": "string_check",
        "name": "check",
        "input": "{{sample.output_text}}",
        "reference": reference,
        "operation": operation,
    }


@pytest.mark.parametrize(
    ("operation", "output", "answer", "reward"),
    [
        ("eq", "Paris", "Paris", 1.0),
        ("eq", "paris", "Paris", 0.0),
        ("ne", "London", "Paris", 1.0),
        ("ne", "Paris", "Paris", 0.0),
        ("like", "The answer is Paris.", "Paris", 1.0),
        ("like", "The answer is paris.", "Paris", 0.0),
        ("ilike", "The answer is PARIS.", "paris", 1.0),
        ("ilike", "The answer is Rome.", "paris", 0.0),
    ],
)
async def test_string_check_operations(
    evaluations: Evaluations, operation: str, output: str, answer: str, reward: float
) -> None:
    result = await _grade(evaluations, _string_check(operation), output, {"answer": answer})
    assert result.details["reward"] == reward
    assert result.verdict == ("yes" if reward == 1.0 else "no")


GOLDEN = {
    ("The quick brown fox jumps over the lazy dog", "A quick brown fox jumped over the lazy dog"): {
        "fuzzy_match": 0.9176470588235294,
        "bleu": 0.43167001068522526,
        "gleu": 0.5333333333333333,
        "rouge_1": 0.7777777777777778,
        "rouge_2": 0.625,
        "rouge_3": 0.42857142857142855,
        "rouge_4": 0.16666666666666666,
        "rouge_5": 0.0,
        "rouge_l": 0.7777777777777778,
    },
    ("hello world", "hello world"): {
        "fuzzy_match": 1.0,
        "bleu": 1.0,
        "gleu": 1.0,
        "rouge_1": 1.0,
        "rouge_2": 1.0,
        "rouge_3": 0.0,
        "rouge_4": 0.0,
        "rouge_5": 0.0,
        "rouge_l": 1.0,
    },
    ("Paris is the capital of France.", "The capital of France is Paris."): {
        "fuzzy_match": 0.6774193548387097,
        "bleu": 0.09554427922043669,
        "gleu": 0.2222222222222222,
        "rouge_1": 1.0,
        "rouge_2": 0.6,
        "rouge_3": 0.5,
        "rouge_4": 0.3333333333333333,
        "rouge_5": 0.0,
        "rouge_l": 0.6666666666666666,
    },
}
"""Scores of rapidfuzz 3.14, nltk 3.10 and rouge-score 0.1.2: an upgrade that moves a score fails here first."""


@pytest.mark.parametrize("pair", list(GOLDEN), ids=lambda pair: pair[0][:20])
@pytest.mark.parametrize("metric", sorted(METRICS))
def test_golden_vectors(pair: tuple[str, str], metric: str) -> None:
    assert similarity(metric, *pair) == pytest.approx(GOLDEN[pair][metric], abs=1e-9)


def test_every_metric_has_golden_vectors() -> None:
    assert all(set(scores) == set(METRICS) for scores in GOLDEN.values())


async def test_text_similarity_names_its_implementation_and_passes_at_the_threshold(evaluations: Evaluations) -> None:
    grader = {
        "type": "text_similarity",
        "name": "sim",
        "input": "{{sample.output_text}}",
        "reference": "{{item.reference}}",
        "evaluation_metric": "fuzzy_match",
        "pass_threshold": 0.9,
    }
    text = "The quick brown fox jumps over the lazy dog"
    result = await _grade(evaluations, grader, text, {"reference": "A quick brown fox jumped over the lazy dog"})
    assert result.verdict == "yes"
    assert result.details["implementation"] == {
        "package": "rapidfuzz",
        "version": importlib.metadata.version("rapidfuzz"),
        "function": "fuzz.ratio / 100",
    }
    grader["pass_threshold"] = 0.95
    assert (
        await _grade(evaluations, grader, text, {"reference": "A quick brown fox jumped over the lazy dog"})
    ).verdict == "no"


def test_each_metric_names_a_package_with_its_version() -> None:
    for metric in METRICS:
        named = implementation(metric)
        assert named["version"] == importlib.metadata.version(named["package"])


@pytest.mark.parametrize(("metric", "fragment"), [("meteor", "WordNet"), ("cosine", "embeddings endpoint")])
def test_metrics_that_cannot_run_here_are_refused_saying_why(metric: str, fragment: str) -> None:
    grader = {"type": "text_similarity", "input": "a", "reference": "b", "evaluation_metric": metric}
    with pytest.raises(InvalidConfig) as refused:
        check_grader(grader)
    assert refused.value.field == "config.grader.evaluation_metric"
    assert fragment in refused.value.message


def test_python_graders_are_refused_never_executed() -> None:
    with pytest.raises(InvalidConfig) as refused:
        validate({"type": "openai_grader", "grader": {"type": "python", "source": "def grade(s, i): return 1"}})
    assert refused.value.field == "config.grader.type"
    assert refused.value.reason == "GRADER_NOT_SERVED"


# --- multi and its formula ---------------------------------------------------------------------------------------

MULTI = {
    "type": "multi",
    "name": "example multi grader",
    "graders": {
        "name": {
            "type": "string_check",
            "name": "name",
            "input": "{{sample.output_json.name}}",
            "reference": "{{item.name}}",
            "operation": "eq",
        },
        "email": {
            "type": "string_check",
            "name": "email",
            "input": "{{sample.output_json.email}}",
            "reference": "{{item.email}}",
            "operation": "eq",
        },
    },
    "calculate_output": "(name + email) / 2",
}


async def test_multi_combines_sub_rewards_by_name(evaluations: Evaluations) -> None:
    output = json.dumps({"name": "Ada", "email": "ada@example.com"})
    result = await _grade(evaluations, MULTI, output, {"name": "Ada", "email": "ada@other.com"})
    assert result.details["sub_rewards"] == {"name": 1.0, "email": 0.0}
    assert result.details["reward"] == 0.5
    assert result.verdict == "no"
    full = await _grade(evaluations, MULTI, output, {"name": "Ada", "email": "ada@example.com"})
    assert full.verdict == "yes"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1 + 2 * 3", 7.0),
        ("(1 + 2) * 3", 9.0),
        ("2 ^ 3 ^ 2", 512.0),
        ("-2 ^ 2", -4.0),
        ("min(a, b) + max(a, b)", 1.5),
        ("abs(-a) + floor(1.7) + ceil(0.2)", 3.0),
        ("sqrt(4) * exp(0) + log(1)", 2.0),
        ("a / b", 2.0),
        ("0.25*a + 0.75*b", 0.625),
    ],
)
def test_formula_arithmetic(text: str, value: float) -> None:
    assert compute(parse(text), {"a": 1.0, "b": 0.5}) == pytest.approx(value)


@pytest.mark.parametrize(
    "text", ["", "a +", "(a", "a b", "__import__('os')", "a; b", "pow(a, 2)", "min()", "a ** 2", "(" * 100 + "a"]
)
def test_formulas_that_do_not_parse(text: str) -> None:
    with pytest.raises(FormulaError):
        parse(text)


@pytest.mark.parametrize("text", ["a / 0", "log(0 - a)", "(0 - a) ^ 0.5", "exp(1000)"])
def test_formulas_without_a_finite_value(text: str) -> None:
    with pytest.raises(FormulaError):
        compute(parse(text), {"a": 1.0})


def test_a_formula_naming_no_grader_is_refused() -> None:
    with pytest.raises(InvalidConfig) as refused:
        check_grader({**MULTI, "calculate_output": "name + phone"})
    assert refused.value.field == "config.grader.calculate_output"


async def test_a_formula_without_a_value_sets_the_flag(evaluations: Evaluations) -> None:
    grader = {**MULTI, "calculate_output": "name / email"}
    result = await _grade(evaluations, grader, json.dumps({"name": "x", "email": "y"}), {"name": "x", "email": "z"})
    assert result.verdict == "error"
    assert result.details["errors"]["formula_parse_error"] is True


# --- templating and flags ----------------------------------------------------------------------------------------


async def test_an_unresolved_variable_sets_invalid_variable_error(evaluations: Evaluations) -> None:
    result = await _grade(evaluations, _string_check("eq", "{{item.missing}}"), "x", {"answer": "x"})
    assert result.verdict == "error"
    assert result.details["errors"]["invalid_variable_error"] is True
    assert result.details["invalid_variables"] == ["item.missing"]


async def test_output_tools_render_the_tool_calls(evaluations: Evaluations) -> None:
    grader = _string_check("like", '"name":"get_weather"')
    grader["input"] = "{{sample.output_tools}}"
    calls = (ToolCall(name="get_weather", arguments='{"city":"Paris"}', id="call_1"),)
    assert (await _grade(evaluations, grader, "", {}, tool_calls=calls)).verdict == "yes"


async def test_a_model_grader_without_a_judge_is_error_not_zero(evaluations: Evaluations) -> None:
    grader = {
        "type": "score_model",
        "name": "s",
        "input": [{"role": "user", "content": "Score {{sample.output_text}}"}],
    }
    result = await _grade(evaluations, grader, "x")
    assert result.verdict == "error"
    assert result.details["errors"]["model_grader_server_error"] is True


@pytest.mark.parametrize(
    ("grader", "field"),
    [
        ({"type": "string_chek"}, "config.grader.type"),
        ({"type": "string_check", "input": "a", "reference": "b", "operation": "contains"}, "config.grader.operation"),
        ({"type": "string_check", "input": "a", "operation": "eq"}, "config.grader.reference"),
        (
            {"type": "string_check", "input": "a", "reference": "b", "operation": "eq", "refrence": "c"},
            "config.grader.refrence",
        ),
        (
            {"type": "text_similarity", "input": "a", "reference": "b", "evaluation_metric": "rouge_9"},
            "config.grader.evaluation_metric",
        ),
        ({"type": "score_model", "input": []}, "config.grader.input"),
        ({"type": "score_model", "input": [{"role": "user", "content": "x"}], "range": [1, 0]}, "config.grader.range"),
        (
            {
                "type": "label_model",
                "input": [{"role": "user", "content": "x"}],
                "labels": ["a"],
                "passing_labels": ["b"],
            },
            "config.grader.passing_labels",
        ),
        ({"type": "multi", "graders": {}, "calculate_output": "1"}, "config.grader.graders"),
    ],
)
def test_grader_errors_name_the_field(grader: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidConfig) as refused:
        check_grader(grader)
    assert refused.value.field == field


def test_sampling_params_are_accepted_and_reported_as_ignored() -> None:
    checked = check_grader(
        {"type": "score_model", "input": [{"role": "user", "content": "x"}], "sampling_params": {"temperature": 0}}
    )
    assert checked["ignored_keys"] == ["sampling_params"]


async def test_texts_past_the_similarity_bound_set_the_truncation_flag(evaluations: Evaluations) -> None:
    grader = {
        "type": "text_similarity",
        "input": "{{sample.output_text}}",
        "reference": "a reference",
        "evaluation_metric": "rouge_l",
    }
    result = await _grade(evaluations, grader, "word " * 10_000)
    assert result.verdict == "error"
    assert result.details["errors"]["truncated_observation_error"] is True
    assert "at most" in result.details["similarity_error_details"]
    medium = await _grade(evaluations, {**grader, "reference": "word " * 800}, "word " * 800)
    assert medium.details["reward"] == 1.0  # scored in a worker thread, same number
