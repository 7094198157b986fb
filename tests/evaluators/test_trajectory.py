"""trajectory: every match mode by every argument mode, with the documented examples of the tools it follows
(LangChain agentevals' trajectory match, Google ADK's tool trajectory metrics, promptfoo's tool-sequence)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from verdict.errors import InvalidArgument, InvalidConfig
from verdict.evaluators import EvaluationInput, Evaluations, ResponseFacts, ToolCall, validate

WEATHER_SF = ToolCall(name="get_weather", arguments=json.dumps({"city": "San Francisco"}), id="")
FUN_SF = ToolCall(name="get_fun_activities", arguments=json.dumps({"city": "San Francisco"}), id="")
ACCU_SF = ToolCall(name="accuweather_forecast", arguments=json.dumps({"city": "San Francisco"}), id="")


def _expected(*calls: ToolCall) -> list[dict[str, Any]]:
    return [{"name": call.name, "arguments": call.arguments} for call in calls]


async def _run(
    evaluations: Evaluations, calls: list[ToolCall], expected: list[dict[str, Any]], state: bytes = b"", **settings: Any
) -> Any:
    config = {"type": "trajectory", "expected": expected, **settings}
    return await evaluations.evaluate(
        EvaluationInput(config=config, facts=ResponseFacts(tool_calls=tuple(calls)), state=state)
    )


# --- agentevals' README examples ---------------------------------------------------------------------------------


async def test_agentevals_strict_the_same_call(evaluations: Evaluations) -> None:
    result = await _run(evaluations, [WEATHER_SF], _expected(WEATHER_SF), match="exact")
    assert result.verdict == "yes"
    assert result.details["score"] == 1.0


async def test_agentevals_unordered_the_same_calls_in_another_order(evaluations: Evaluations) -> None:
    calls, expected = [FUN_SF, WEATHER_SF], _expected(WEATHER_SF, FUN_SF)
    assert (await _run(evaluations, calls, expected, match="any_order")).verdict == "yes"
    exact = await _run(evaluations, calls, expected, match="exact")
    assert exact.verdict == "no"
    assert exact.details["order"] == [{"position": 0}, {"position": 1}]


async def test_agentevals_subset_every_call_made_is_expected(evaluations: Evaluations) -> None:
    result = await _run(evaluations, [WEATHER_SF], _expected(WEATHER_SF, FUN_SF), match="subset")
    assert result.verdict == "yes"
    assert result.details["precision"] == 1.0
    assert result.details["recall"] == 0.5
    assert result.details["missing"] == [{"position": 1, "name": "get_fun_activities"}]
    assert (await _run(evaluations, [WEATHER_SF], _expected(WEATHER_SF, FUN_SF), match="superset")).verdict == "no"


async def test_agentevals_superset_every_expected_call_is_made(evaluations: Evaluations) -> None:
    result = await _run(evaluations, [WEATHER_SF, ACCU_SF], _expected(WEATHER_SF), match="superset")
    assert result.verdict == "yes"
    assert result.details["extra"] == [{"position": 1, "name": "accuweather_forecast"}]
    assert (await _run(evaluations, [WEATHER_SF, ACCU_SF], _expected(WEATHER_SF), match="subset")).verdict == "no"


async def test_agentevals_ignore_arguments(evaluations: Evaluations) -> None:
    short = [{"name": "get_weather", "arguments": {"city": "SF"}}]
    assert (await _run(evaluations, [WEATHER_SF], short, arguments="ignore")).verdict == "yes"
    strict = await _run(evaluations, [WEATHER_SF], short, arguments="exact")
    assert strict.verdict == "no"
    assert strict.details["mismatched"] == [
        {"expected_position": 0, "call_position": 0, "name": "get_weather", "arguments": ["city"]}
    ]


async def test_no_calls_is_a_subset_of_anything_and_misses_a_superset(evaluations: Evaluations) -> None:
    assert (await _run(evaluations, [], _expected(WEATHER_SF), match="subset")).verdict == "yes"
    assert (await _run(evaluations, [], _expected(WEATHER_SF), match="superset")).verdict == "no"


# --- ADK / Vertex in_order ---------------------------------------------------------------------------------------


async def test_adk_in_order_allows_calls_between(evaluations: Evaluations) -> None:
    calls = [WEATHER_SF, ACCU_SF, FUN_SF]
    expected = _expected(WEATHER_SF, FUN_SF)
    assert (await _run(evaluations, calls, expected, match="in_order")).verdict == "yes"
    assert (await _run(evaluations, calls, expected, match="exact")).verdict == "no"
    reversed_order = await _run(evaluations, [FUN_SF, WEATHER_SF], expected, match="in_order")
    assert reversed_order.verdict == "no"
    assert reversed_order.details["score"] == 0.5  # the longest in-order run matches one of two
    assert reversed_order.details["order"] == [{"expected_position": 1, "call_position": 0, "before_call": 1}]


# --- every match mode x every argument mode ----------------------------------------------------------------------

SPACED = ToolCall(name="search", arguments='{ "query" : "cats",\n  "limit": 1.0 }', id="")
TIGHT = {"name": "search", "arguments": '{"limit":1,"query":"cats"}'}
"""The same call written differently: whitespace, key order, and 1 against 1.0."""


@pytest.mark.parametrize("match", ["exact", "in_order", "any_order", "subset", "superset"])
@pytest.mark.parametrize(
    ("arguments", "verdict"), [("exact", "no"), ("canonical", "yes"), ("subset", "yes"), ("ignore", "yes")]
)
async def test_each_match_mode_with_each_argument_mode(
    evaluations: Evaluations, match: str, arguments: str, verdict: str
) -> None:
    """Whitespace and key order never fail a match (the raw-string pitfall); only `exact` tells 1 from 1.0."""
    result = await _run(evaluations, [SPACED], [TIGHT], match=match, arguments=arguments)
    assert result.verdict == verdict, result.details


@pytest.mark.parametrize("arguments", ["exact", "canonical"])
async def test_whitespace_alone_never_fails(evaluations: Evaluations, arguments: str) -> None:
    call = ToolCall(name="f", arguments='{"a": [1, {"b": "c"}]}', id="")
    expected = [{"name": "f", "arguments": '{"a":[1,{"b":"c"}]}'}]
    assert (await _run(evaluations, [call], expected, arguments=arguments)).verdict == "yes"


async def test_subset_arguments_allow_extra_arguments_and_nested_subsets(evaluations: Evaluations) -> None:
    call = ToolCall(
        name="book", arguments=json.dumps({"where": {"city": "Paris", "zip": "75001"}, "when": "today", "n": 2}), id=""
    )
    expected = [{"name": "book", "arguments": {"where": {"city": "Paris"}, "n": 2}}]
    assert (await _run(evaluations, [call], expected, arguments="subset")).verdict == "yes"
    assert (await _run(evaluations, [call], expected, arguments="canonical")).verdict == "no"


async def test_per_argument_overrides(evaluations: Evaluations) -> None:
    call = ToolCall(
        name="log", arguments=json.dumps({"message": "hi", "timestamp": "2026-12-02T01:00:00Z", "level": 1}), id=""
    )
    expected = [
        {
            "name": "log",
            "arguments": {"message": "hi", "timestamp": "whenever", "level": 1.0},
            "argument_modes": {"timestamp": "ignore", "level": "exact"},
        }
    ]
    result = await _run(evaluations, [call], expected)
    assert result.verdict == "no"
    assert result.details["mismatched"][0]["arguments"] == ["level"]  # 1 is not 1.0 under exact; timestamp ignored
    expected[0]["argument_modes"] = {"timestamp": "ignore"}
    assert (await _run(evaluations, [call], expected)).verdict == "yes"


async def test_an_expected_call_without_arguments_compares_the_name_only(evaluations: Evaluations) -> None:
    assert (await _run(evaluations, [WEATHER_SF], [{"name": "get_weather"}], arguments="exact")).verdict == "yes"


async def test_duplicate_calls_are_matched_one_to_one(evaluations: Evaluations) -> None:
    """A greedy first fit would pair the general expectation with the only call the specific one accepts."""
    calls = [ToolCall(name="f", arguments='{"a": 1, "b": 2}', id=""), ToolCall(name="f", arguments='{"a": 1}', id="")]
    expected = [{"name": "f", "arguments": {"a": 1}}, {"name": "f", "arguments": {"a": 1, "b": 2}}]
    result = await _run(evaluations, calls, expected, match="any_order", arguments="subset")
    assert result.verdict == "yes"
    assert result.details["f1"] == 1.0


async def test_partial_credit_with_a_threshold(evaluations: Evaluations) -> None:
    calls = [WEATHER_SF, ACCU_SF]
    expected = _expected(WEATHER_SF, FUN_SF)
    result = await _run(evaluations, calls, expected, match="any_order", threshold=0.5)
    assert result.verdict == "yes"
    assert result.details["f1"] == pytest.approx(0.5)
    assert (await _run(evaluations, calls, expected, match="any_order")).verdict == "no"


async def test_malformed_arguments_are_error_naming_the_call(evaluations: Evaluations) -> None:
    result = await _run(
        evaluations, [ToolCall(name="get_weather", arguments='{"city": ', id="")], _expected(WEATHER_SF)
    )
    assert result.verdict == "error"
    assert result.details["malformed"][0]["position"] == 0
    ignored = await _run(
        evaluations,
        [ToolCall(name="get_weather", arguments='{"city": ', id="")],
        _expected(WEATHER_SF),
        arguments="ignore",
    )
    assert ignored.verdict == "yes"


# --- one step at a time ------------------------------------------------------------------------------------------


async def test_the_calls_of_earlier_steps_travel_in_the_state_token(evaluations: Evaluations) -> None:
    expected = _expected(WEATHER_SF, FUN_SF)
    first = await _run(evaluations, [WEATHER_SF], expected, match="exact")
    assert first.verdict == "no"
    assert first.state
    second = await _run(evaluations, [FUN_SF], expected, state=first.state, match="exact")
    assert second.verdict == "yes"
    assert second.details["calls"] == 2


async def test_a_token_of_another_trajectory_is_refused(evaluations: Evaluations) -> None:
    first = await _run(evaluations, [WEATHER_SF], _expected(WEATHER_SF))
    with pytest.raises(InvalidArgument) as refused:
        await _run(evaluations, [WEATHER_SF], _expected(FUN_SF), state=first.state)
    assert refused.value.field == "state"


async def test_a_trajectory_too_long_for_a_token_gets_its_verdict_and_a_token_that_refuses_more(
    evaluations: Evaluations,
) -> None:
    calls = [ToolCall(name="f", arguments=json.dumps({"text": "x" * 2000}), id="")] * 3
    result = await _run(evaluations, calls, [{"name": "f"}], match="superset")
    assert result.verdict == "yes"
    assert "state token" in result.details["state_overflow"]
    following = await _run(
        evaluations, [ToolCall(name="f", arguments="{}", id="")], [{"name": "f"}], state=result.state, match="superset"
    )
    assert following.verdict == "error"
    assert "did not fit in a state token" in following.details["error"]


# --- configuration -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"expected": []}, "config.expected"),
        ({"expected": [{"arguments": "{}"}]}, "config.expected[0].name"),
        ({"expected": [{"name": "f", "arguments": "{not json"}]}, "config.expected[0].arguments"),
        ({"expected": [{"name": "f", "argument_modes": {"a": "fuzzy"}}]}, "config.expected[0].argument_modes.a"),
        ({"expected": [{"name": "f", "args": "{}"}]}, "config.expected[0].args"),
        ({"expected": [{"name": "f"}], "match": "strict"}, "config.match"),
        ({"expected": [{"name": "f"}], "threshold": 2}, "config.threshold"),
    ],
)
def test_configuration_errors_name_the_field(config: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidConfig) as refused:
        validate({"type": "trajectory", **config})
    assert refused.value.field == field


def test_defaults() -> None:
    settings = validate({"type": "trajectory", "expected": [{"name": "f"}]})
    assert settings["match"] == "exact"
    assert settings["arguments"] == "canonical"
    assert settings["threshold"] == 1.0


async def test_large_arguments_are_compared_off_the_loop_and_bounded(evaluations: Evaluations) -> None:
    big = ToolCall(name="f", arguments=json.dumps({"text": "x" * 100_000}), id="")
    assert (await _run(evaluations, [big], [{"name": "f", "arguments": {"text": "x" * 100_000}}])).verdict == "yes"
    expected = [{"name": "f", "arguments": {"n": index}} for index in range(64)]
    calls = [ToolCall(name="f", arguments=json.dumps({"text": "y" * 600_000}), id="")]
    result = await _run(evaluations, calls, expected, match="superset")
    assert result.verdict == "error"
    assert "too much work" in result.details["error"]
