"""promptfoo assertions: every served type with cases from promptfoo's documentation, and each documented quirk
(default thresholds, `not-` on scored types, weight 0, metric, assert-set thresholds, the test threshold)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from verdict.errors import InvalidConfig
from verdict.evaluators import (
    EvaluationInput,
    Evaluations,
    GraderMalfunction,
    ResponseFacts,
    ToolCall,
    ToolDefinition,
    validate,
)
from verdict.evaluators.promptfoo import CHECKS, MODEL_GRADED, NEVER_EXECUTED, score_assertions
from verdict.evaluators.promptfoo.checks import Response, csv_values
from verdict.evaluators.promptfoo.text_metrics import bleu, gleu, levenshtein, rouge_n


def _score(
    assertions: list[dict[str, Any]] | str, output: str = "", facts: ResponseFacts | None = None, **test: Any
) -> Any:
    settings = validate({"type": "promptfoo", "assert": assertions, **test})
    return score_assertions(settings, Response(output, facts or ResponseFacts(), 1.0))


def _one(assertion: dict[str, Any], output: str = "", facts: ResponseFacts | None = None) -> dict[str, Any]:
    result = _score([assertion], output, facts)
    entry: dict[str, Any] = result.details["results"][0]
    entry["verdict"] = result.verdict
    return entry


CASES: list[tuple[dict[str, Any], str, bool]] = [
    # (assertion, output, passes) — outputs and values from promptfoo's deterministic-assertion docs
    ({"type": "equals", "value": "Hello world"}, "Hello world", True),
    ({"type": "equals", "value": "Hello world"}, "hello world", False),
    ({"type": "equals", "value": {"key": "value"}}, '{"key": "value"}', True),
    ({"type": "equals", "value": 42}, "42", True),
    ({"type": "contains", "value": "world"}, "Hello world", True),
    ({"type": "contains", "value": "World"}, "Hello world", False),
    ({"type": "icontains", "value": "WORLD"}, "Hello world", True),
    ({"type": "contains-any", "value": ["cat", "dog"]}, "I have a dog", True),
    ({"type": "contains-any", "value": "cat, dog"}, "I have a dog", True),
    ({"type": "icontains-any", "value": ["CAT", "DOG"]}, "I have a dog", True),
    ({"type": "contains-all", "value": ["cat", "dog"]}, "a cat and a dog", True),
    ({"type": "contains-all", "value": ["cat", "dog"]}, "a cat alone", False),
    ({"type": "icontains-all", "value": "Cat,DOG"}, "a cat and a dog", True),
    ({"type": "starts-with", "value": "Yes"}, "Yes, it is.", True),
    ({"type": "starts-with", "value": "Yes"}, "No. Yes.", False),
    ({"type": "regex", "value": r"\d{4}-\d{2}-\d{2}"}, "Due 2026-12-02", True),
    ({"type": "regex", "value": "^Done$"}, "Not done", False),
    ({"type": "is-json"}, '{"color": "red"}', True),
    ({"type": "is-json"}, "color: red", False),
    (
        {
            "type": "is-json",
            "value": {
                "type": "object",
                "required": ["color"],
                "properties": {"color": {"type": "string", "enum": ["red", "green"]}},
            },
        },
        '{"color": "blue"}',
        False,
    ),
    ({"type": "contains-json"}, 'Here you go: {"a": 1} thanks', True),
    ({"type": "contains-json", "value": {"type": "object", "required": ["b"]}}, 'x {"a": 1} y {"b": 2}', True),
    ({"type": "contains-json"}, "no json { here", False),
    ({"type": "is-xml"}, "<root><item>1</item></root>", True),
    ({"type": "is-xml", "value": "root.item"}, "<root><item>1</item></root>", True),
    ({"type": "is-xml", "value": {"requiredElements": ["root.missing"]}}, "<root><item>1</item></root>", False),
    ({"type": "is-xml"}, "<root><item>1</root>", False),
    ({"type": "contains-xml"}, "Result: <analysis><sentiment>ok</sentiment></analysis> done", True),
    ({"type": "is-html"}, "<div><p>Hello</p></div>", True),
    ({"type": "is-html"}, "Hello <b>world</b>", False),
    ({"type": "contains-html"}, "Hello <b>world</b>", True),
    ({"type": "contains-html"}, "a < b > c", False),
    ({"type": "levenshtein", "value": "hello world"}, "hello wrld", True),
    ({"type": "levenshtein", "value": "hello world", "threshold": 0}, "hello wrld", True),  # `threshold || 5`
    ({"type": "levenshtein", "value": "abcdefghij", "threshold": 2}, "abc", False),
    ({"type": "rouge-n", "value": "The cat sat on the mat"}, "The cat sat on the mat", True),
    ({"type": "rouge-n", "value": "The cat sat on the mat"}, "A dog ran far away", False),
    ({"type": "bleu", "value": "the cat is on the mat"}, "the cat is on the mat", True),
    ({"type": "gleu", "value": ["the cat is on the mat", "there is a cat on the mat"]}, "the cat is on the mat", True),
    ({"type": "finish-reason", "value": "stop"}, "", True),
    ({"type": "finish-reason", "value": "length"}, "", False),
    ({"type": "is-refusal"}, "I'm sorry, but I can't help with that.", True),
    ({"type": "is-refusal"}, "", True),
    ({"type": "is-refusal"}, "Paris is the capital of France.", False),
    ({"type": "word-count", "value": 3}, "one two three", True),
    ({"type": "word-count", "value": {"min": 2, "max": 4}}, "one two three", True),
    ({"type": "word-count", "value": {"max": 2}}, "one two three", False),
    ({"type": "tool-call-f1", "value": ["get_weather", "get_time"]}, "", False),
    ({"type": "tool-call-f1", "value": "get_weather", "threshold": 0.5}, "", True),
    ({"type": "latency", "threshold": 1000}, "", True),
    ({"type": "cost", "threshold": 0.001}, "", False),
    ({"type": "perplexity", "threshold": 2}, "", True),
    ({"type": "perplexity-score", "threshold": 0.5}, "", True),
    ({"type": "is-valid-openai-tools-call"}, "", True),
    ({"type": "is-sql"}, "SELECT id, name FROM users WHERE age > 21", True),
    ({"type": "is-sql"}, "SELEC * FRM users", False),
    ({"type": "is-sql"}, "this is not sql", False),
    (
        {
            "type": "is-sql",
            "value": {
                "databaseType": "MySQL",
                "allowedTables": ["select::null::departments"],
                "allowedColumns": ["select::null::name"],
            },
        },
        "SELECT name FROM departments",
        True,
    ),
    (
        {"type": "is-sql", "value": {"allowedTables": ["select::null::departments"]}},
        "SELECT * FROM employees",
        False,
    ),
    ({"type": "is-sql", "value": {"allowedColumns": ["select::null::name"]}}, "SELECT id FROM departments", False),
    ({"type": "contains-sql"}, "Here is the query:\n```sql\nSELECT 1;\n```\nDone.", True),
    ({"type": "contains-sql"}, "I cannot write that query.", False),
    # trajectory:* read the request's tool calls where promptfoo reads its trace's tool steps
    ({"type": "trajectory:tool-used", "value": "search_orders"}, "", True),
    ({"type": "trajectory:tool-used", "value": ["search_orders", "refund"]}, "", False),
    ({"type": "trajectory:tool-used", "value": {"pattern": "search_*", "min": 1, "max": 1}}, "", True),
    ({"type": "trajectory:tool-sequence", "value": ["search_orders", "compose_reply"]}, "", True),
    (
        {"type": "trajectory:tool-sequence", "value": {"mode": "exact", "steps": ["search_orders", "compose_reply"]}},
        "",
        False,
    ),
    ({"type": "trajectory:tool-args-match", "value": {"name": "search_orders", "args": {"order_id": "123"}}}, "", True),
    (
        {
            "type": "trajectory:tool-args-match",
            "value": {"name": "search_orders", "args": {"order_id": "123"}, "mode": "exact"},
        },
        "",
        False,
    ),
    ({"type": "trajectory:step-count", "value": {"min": 1, "max": 3}}, "", True),
    ({"type": "trajectory:step-count", "value": {"pattern": "search_*", "max": 0}}, "", False),
]
TRAJECTORY = ResponseFacts(
    tool_calls=(
        ToolCall(name="search_orders", arguments='{"order_id": "123", "include": "items"}', id=""),
        ToolCall(name="lookup_customer", arguments='{"id": 7}', id=""),
        ToolCall(name="compose_reply", arguments='{"tone": "friendly"}', id=""),
    )
)
FACTS = ResponseFacts(
    tool_calls=(ToolCall(name="get_weather", arguments='{"city": "Paris"}', id="call_1"),),
    finish_reason="stop",
    latency_ms=250.0,
    cost=0.002,
    logprobs=(-0.1, -0.2, -0.3),
    tools=(
        ToolDefinition(
            name="get_weather",
            parameters=json.dumps({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        ),
    ),
)


@pytest.mark.parametrize(("assertion", "output", "passes"), CASES, ids=lambda v: str(v)[:60])
def test_each_type_as_documented(assertion: dict[str, Any], output: str, passes: bool) -> None:
    entry = _one(assertion, output, TRAJECTORY if assertion["type"].startswith("trajectory:") else FACTS)
    assert entry["pass"] is passes, entry
    assert entry["verdict"] == ("yes" if passes else "no")


def test_every_served_type_has_a_documented_case() -> None:
    graded = {kind for kind, check in CHECKS.items() if check.model_graded}
    assert graded == {"llm-rubric"}  # tested against a judge below
    assert {case[0]["type"] for case in CASES} == set(CHECKS) - graded


BOOLEAN_CASES = [
    case
    for case in CASES
    if not CHECKS[case[0]["type"]].scored
    and case[0]["type"] not in ("latency", "cost")
    and not (case[0]["type"] == "trajectory:tool-used" and isinstance(case[0]["value"], list))
]
"""Scored types invert by their threshold, latency and cost read facts, and not-trajectory:tool-used with a list has
promptfoo's own negation (each tested on its own)."""


@pytest.mark.parametrize(("assertion", "output", "passes"), BOOLEAN_CASES, ids=lambda v: str(v)[:60])
def test_not_inverts_every_boolean_type(assertion: dict[str, Any], output: str, passes: bool) -> None:
    facts = TRAJECTORY if assertion["type"].startswith("trajectory:") else FACTS
    entry = _one({**assertion, "type": f"not-{assertion['type']}"}, output, facts)
    assert entry["pass"] is (not passes)
    assert entry["score"] == (0.0 if passes else 1.0)


def test_not_on_a_scored_type_passes_below_the_threshold_and_reports_one_minus_the_score() -> None:
    plain = _one({"type": "rouge-n", "value": "The cat sat on the mat"}, "The cat ran")
    negated = _one({"type": "not-rouge-n", "value": "The cat sat on the mat"}, "The cat ran")
    assert plain["pass"] is False
    assert negated["pass"] is True
    assert negated["score"] == pytest.approx(1 - plain["score"])
    assert plain["threshold"] == 0.75


@pytest.mark.parametrize(("kind", "default"), [("rouge-n", 0.75), ("bleu", 0.5), ("gleu", 0.5), ("tool-call-f1", 1.0)])
def test_default_thresholds(kind: str, default: float) -> None:
    value: Any = "get_weather" if kind == "tool-call-f1" else "a b c d"
    assert _one({"type": kind, "value": value}, "a b c d", FACTS)["threshold"] == default


def test_weight_zero_is_a_measurement_that_always_passes() -> None:
    result = _score(
        [{"type": "contains", "value": "x"}, {"type": "contains", "value": "nowhere", "weight": 0, "metric": "m"}],
        "x marks",
    )
    assert result.verdict == "yes"
    assert result.details["score"] == 1.0  # the weight-0 failure does not count towards the mean
    assert result.details["named_scores"] == {"m": 0.0}


def test_weights_make_a_weighted_mean() -> None:
    result = _score(
        [{"type": "contains", "value": "a", "weight": 3}, {"type": "contains", "value": "zzz", "weight": 1}], "abc"
    )
    assert result.details["score"] == pytest.approx(0.75)
    assert result.verdict == "no"  # a failure fails the test without a test threshold


def test_the_test_threshold_overrides_single_failures() -> None:
    assertions: list[dict[str, Any]] = [
        {"type": "contains", "value": "a", "weight": 3},
        {"type": "contains", "value": "zzz"},
    ]
    assert _score(assertions, "abc", threshold=0.7).verdict == "yes"
    assert _score(assertions, "abc", threshold=0.8).verdict == "no"
    as_test = {"threshold": 0.7, "assert": assertions}
    assert _score(json.dumps(as_test), "abc").verdict == "yes"


def test_assert_set_with_a_threshold_counts_as_one_assertion() -> None:
    result = _score(
        [
            {"type": "contains", "value": "hello"},
            {
                "type": "assert-set",
                "threshold": 0.5,
                "metric": "style",
                "assert": [{"type": "contains", "value": "world"}, {"type": "contains", "value": "zzz"}],
            },
        ],
        "hello world",
    )
    assert result.verdict == "yes"
    group = result.details["results"][1]
    assert group["pass"] is True
    assert group["score"] == 0.5
    assert [member["pass"] for member in group["results"]] == [True, False]
    assert result.details["named_scores"]["style"] == 0.5
    assert result.details["score"] == pytest.approx(0.75)


def test_metrics_average_their_assertions() -> None:
    result = _score(
        [
            {"type": "contains", "value": "a", "metric": "m"},
            {"type": "contains", "value": "zzz", "metric": "m"},
            {"type": "contains", "value": "b", "metric": "n"},
        ],
        "ab",
    )
    assert result.details["named_scores"] == {"m": 0.5, "n": 1.0}


def test_vars_render_into_values() -> None:
    test = {"vars": {"city": "Paris"}, "assert": [{"type": "icontains", "value": "{{ city }}"}]}
    assert _score(json.dumps(test), "I love PARIS").verdict == "yes"


def test_yaml_text_as_written_in_a_promptfooconfig() -> None:
    text = """
- type: contains
  value: Paris
- type: not-contains
  value: London
- type: javascript-free-check-uses-no-code
  value: x
"""
    with pytest.raises(InvalidConfig) as refused:
        _score(text, "Paris")
    assert refused.value.field == "config.assert[2].type"


@pytest.mark.parametrize("kind", sorted(NEVER_EXECUTED))
def test_code_running_types_are_refused_naming_the_type(kind: str) -> None:
    with pytest.raises(InvalidConfig) as refused:
        _score([{"type": kind, "value": "output.length > 0"}])
    assert refused.value.field == "config.assert[0].type"
    assert kind in refused.value.message
    assert refused.value.reason == "ASSERTION_NOT_SERVED"


def test_an_unknown_database_type_is_refused() -> None:
    with pytest.raises(InvalidConfig) as refused:
        _score([{"type": "is-sql", "value": {"databaseType": "DB9000"}}], "SELECT 1")
    assert refused.value.field == "config.assert[0].value.databaseType"


@pytest.mark.parametrize("kind", sorted(MODEL_GRADED))
def test_types_not_served_are_refused_naming_the_type(kind: str) -> None:
    with pytest.raises(InvalidConfig) as refused:
        _score([{"type": f"not-{kind}", "value": "be nice"}])
    assert refused.value.field == "config.assert[0].type"
    assert kind in refused.value.message


def _nested_schema(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


@pytest.mark.parametrize(
    ("assertions", "field"),
    [
        ([{"type": "contians", "value": "x"}], "config.assert[0].type"),
        ([{"type": "contains"}], "config.assert[0].value"),
        ([{"type": "latency"}], "config.assert[0].threshold"),
        ([{"type": "contains", "value": "x", "wieght": 2}], "config.assert[0].wieght"),
        ([{"type": "contains", "value": "x", "transform": "output.trim()"}], "config.assert[0].transform"),
        ([{"type": "contains", "value": "x", "weight": -1}], "config.assert[0].weight"),
        ([{"type": "assert-set", "assert": []}], "config.assert[0].assert"),
        ([], "config.assert"),
        ([{"type": "regex", "value": "("}], "config.assert[0].value"),
        ([{"type": "is-json", "value": {"type": "nonsense"}}], "config.assert[0].value"),
        # the tool-schema compiler's bounds (verify/tool_schemas.compile_tool) hold for assertion schemas too
        ([{"type": "is-json", "value": {"$ref": "https://example.com/s.json"}}], "config.assert[0].value"),
        ([{"type": "contains-json", "value": {"$ref": "#/$defs/missing"}}], "config.assert[0].value"),
        ([{"type": "is-json", "value": {"type": "string", "pattern": "("}}], "config.assert[0].value"),
        ([{"type": "is-json", "value": {"enum": list(range(5000))}}], "config.assert[0].value"),
        ([{"type": "is-json", "value": _nested_schema(80)}], "config.assert[0].value"),
    ],
)
def test_configuration_errors_name_the_field(assertions: list[dict[str, Any]], field: str) -> None:
    with pytest.raises(InvalidConfig) as refused:
        _score(assertions, "x")
    assert refused.value.field == field


def test_an_assertion_schema_with_a_local_ref_and_pattern_checks_values() -> None:
    schema = {
        "$defs": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}},
        "type": "object",
        "properties": {"currency": {"$ref": "#/$defs/code"}},
        "required": ["currency"],
    }
    assert _score([{"type": "is-json", "value": schema}], '{"currency": "EUR"}').verdict == "yes"
    failed = _score([{"type": "is-json", "value": schema}], '{"currency": "euro"}')
    assert failed.verdict == "no"
    assert "/currency" in str(failed.details)


def test_a_response_fact_that_was_not_sent_is_error_not_a_failure() -> None:
    result = _score([{"type": "latency", "threshold": 100}], "x")
    assert result.verdict == "error"
    assert "latency_ms" in result.details["error"]
    assert _score([{"type": "perplexity"}], "x").verdict == "error"


def test_an_endless_regex_is_error() -> None:
    settings = validate({"type": "promptfoo", "assert": [{"type": "regex", "value": "(a|aa)+$"}]})
    result = score_assertions(settings, Response("a" * 40 + "b", ResponseFacts(), 0.05))
    assert result.verdict == "error"


def test_tools_call_validation_against_the_schema() -> None:
    bad = ResponseFacts(
        tool_calls=(ToolCall(name="get_weather", arguments='{"town": "Paris"}', id=""),), tools=FACTS.tools
    )
    assert _one({"type": "is-valid-openai-tools-call"}, "", bad)["pass"] is False
    unknown = ResponseFacts(tool_calls=(ToolCall(name="launch", arguments="{}", id=""),), tools=FACTS.tools)
    assert _one({"type": "is-valid-openai-tools-call"}, "", unknown)["pass"] is False


def test_csv_values_keep_quoted_commas() -> None:
    assert csv_values('a, "b, c", d', "p", "contains-any") == ["a", "b, c", "d"]


# --- the metrics promptfoo computes itself, pinned -------------------------------------------------------------


def test_text_metric_golden_vectors() -> None:
    assert bleu("the cat is on the mat", ["the cat is on the mat"]) == pytest.approx(1.0)
    # p1 = 1/4 (clipped), p2..p4 = 0 -> 1e-7 each, no brevity penalty (4 words against 2)
    assert bleu("the the the the", ["the cat"]) == pytest.approx(0.25**0.25 * 1e-7**0.75)
    assert gleu("the cat sat", ["the cat sat on the mat"]) == pytest.approx(6 / 18)  # min(6/6, 6/18)
    assert gleu("The cat.", ["the cat"]) == 1.0
    assert rouge_n("The cat sat", "The cat ran") == pytest.approx(2 / 3)
    assert levenshtein("kitten", "sitting") == 3
    assert math.isclose(bleu("", ["x"]), 0.0)


async def test_through_the_dispatcher_with_the_request_facts(evaluations: Evaluations) -> None:
    config = {
        "type": "promptfoo",
        "assert": "- type: finish-reason\n  value: stop\n- type: tool-call-f1\n  value: get_weather\n",
    }
    result = await evaluations.evaluate(EvaluationInput(config=config, output="ok", facts=FACTS))
    assert result.verdict == "yes"
    assert [entry["type"] for entry in result.details["results"]] == ["finish-reason", "tool-call-f1"]


@pytest.mark.parametrize(
    ("assertions", "output", "inline"),
    [
        ([{"type": "contains", "value": "a"}], "a", True),
        ([{"type": "is-json"}], "{}", True),
        ([{"type": "regex", "value": "a"}], "a", False),
        ([{"type": "is-json", "value": {"type": "object"}}], "{}", False),
        ([{"type": "assert-set", "assert": [{"type": "regex", "value": "a"}]}], "a", False),
        ([{"type": "contains", "value": "a"}], "a" * 9000, False),
    ],
)
def test_only_small_pattern_free_lists_are_scored_on_the_event_loop(
    assertions: list[dict[str, Any]], output: str, inline: bool
) -> None:
    from verdict.evaluators.promptfoo.assertions import _inline

    assert _inline(validate({"type": "promptfoo", "assert": assertions}), output) is inline


def test_aliases_in_assert_text_are_refused() -> None:
    with pytest.raises(InvalidConfig, match="aliases"):
        _score("- &a {type: contains, value: x}\n- *a\n", "x")


# --- llm-rubric through the server's judge -----------------------------------------------------------------------


class FakeGrader:
    """A model grader that answers what the test says and records what it was asked."""

    def __init__(self, answer: dict[str, Any] | None = None, failure: str = "") -> None:
        self.answer = answer or {}
        self.failure = failure
        self.asked: list[tuple[tuple[tuple[str, str], ...], Any]] = []

    async def __call__(
        self, messages: tuple[tuple[str, str], ...], schema: Any, *, model: str, evaluator: str, deadline: float | None
    ) -> dict[str, Any]:
        self.asked.append((messages, schema))
        if self.failure:
            raise GraderMalfunction(self.failure, {"timeout": True})
        return dict(self.answer)


def _judged(grader: FakeGrader | None) -> Evaluations:
    from prometheus_client import CollectorRegistry

    from verdict.config.keys import Config
    from verdict.metrics import Metrics
    from verdict.runner import Runner

    metrics = Metrics(CollectorRegistry())
    return Evaluations(Config(), Runner(metrics), metrics, grader=grader)


async def _rubric(grader: FakeGrader | None, assertion: dict[str, Any], output: str = "Bonjour!") -> Any:
    config = {"type": "promptfoo", "assert": {"vars": {"language": "French"}, "assert": [assertion]}}
    return await _judged(grader).evaluate(EvaluationInput(config=config, output=output))


@pytest.mark.parametrize(
    ("answer", "assertion", "verdict", "score"),
    [
        (
            {"pass": True, "score": 1.0, "reason": "It is French."},
            {"type": "llm-rubric", "value": "is French"},
            "yes",
            1,
        ),
        ({"pass": False, "score": 0.0, "reason": "English."}, {"type": "llm-rubric", "value": "is French"}, "no", 0),
        ({"pass": True, "score": 0.6}, {"type": "llm-rubric", "value": "x", "threshold": 0.8}, "no", 0.6),
        ({"score": 0.9}, {"type": "llm-rubric", "value": "x", "threshold": 0.8}, "yes", 0.9),
        ({"pass": True}, {"type": "not-llm-rubric", "value": "is rude"}, "no", 0),
    ],
)
async def test_llm_rubric_reads_the_judges_answer_as_promptfoo_does(
    answer: dict[str, Any], assertion: dict[str, Any], verdict: str, score: float
) -> None:
    result = await _rubric(FakeGrader(answer), assertion)
    assert result.verdict == verdict, result.details
    assert result.details["results"][0]["score"] == pytest.approx(score)


async def test_the_rubric_and_the_output_reach_the_judge_with_vars_filled() -> None:
    grader = FakeGrader({"pass": True})
    await _rubric(grader, {"type": "llm-rubric", "value": "is written in {{ language }}"})
    [(messages, schema)] = grader.asked
    assert messages[0][0] == "system"
    assert "<Output>\nBonjour!\n</Output>" in messages[1][1]
    assert "is written in French" in messages[1][1]
    assert schema["required"] == ["pass"]


async def test_a_rubric_prompt_template_replaces_the_default() -> None:
    grader = FakeGrader({"pass": True})
    await _rubric(grader, {"type": "llm-rubric", "value": "polite", "rubricPrompt": "Is [{{output}}] {{rubric}}?"})
    assert grader.asked[0][0][1][1] == "Is [Bonjour!] polite?"


@pytest.mark.parametrize(
    ("grader", "fragment"), [(None, "no LLM judge"), (FakeGrader(failure="timed out"), "timed out")]
)
async def test_a_judge_that_cannot_answer_is_error_not_a_failure(grader: FakeGrader | None, fragment: str) -> None:
    result = await _rubric(grader, {"type": "llm-rubric", "value": "x"})
    assert result.verdict == "error"
    assert fragment in result.details["error"]


async def test_an_unreadable_answer_is_error() -> None:
    result = await _rubric(FakeGrader({"pass": "yes"}), {"type": "llm-rubric", "value": "x"})
    assert result.verdict == "error"


def test_not_tool_used_with_a_list_means_none_of_them_was_used() -> None:
    """promptfoo: a forbidden-tools list passes only when no listed tool was called, not when one is missing."""
    one_used = _one({"type": "not-trajectory:tool-used", "value": ["search_orders", "refund"]}, "", TRAJECTORY)
    assert one_used["pass"] is False
    none_used = _one({"type": "not-trajectory:tool-used", "value": ["refund", "delete_account"]}, "", TRAJECTORY)
    assert none_used["pass"] is True


def test_tool_args_match_ignores_and_defaults() -> None:
    value = {
        "name": "search_orders",
        "args": {"order_id": "123"},
        "mode": "exact",
        "ignore": "include",
    }
    assert _one({"type": "trajectory:tool-args-match", "value": value}, "", TRAJECTORY)["pass"] is True
    value = {**value, "ignore": [], "defaults": {"include": "items"}}
    assert _one({"type": "trajectory:tool-args-match", "value": value}, "", TRAJECTORY)["pass"] is True


def test_levenshtein_against_a_huge_output_is_cut_off_at_the_threshold() -> None:
    entry = _one({"type": "levenshtein", "value": "hello"}, "x" * 1_000_000)
    assert entry["pass"] is False
    assert "over 5" in entry["reason"]
    assert levenshtein("kitten", "sitting", 2) == 3  # above the limit: limit + 1


def test_list_values_are_bounded() -> None:
    with pytest.raises(InvalidConfig) as refused:
        _score([{"type": "contains-any", "value": [str(n) for n in range(300)]}], "x")
    assert refused.value.field == "config.assert[0].value"
