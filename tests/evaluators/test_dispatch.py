"""`Evaluations.evaluate`: every table row in both config forms, the dispatcher's order, judges, metrics, limits."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Mapping
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from tests.evaluators.cases import CASES, REJECTED, Case, Rejected, details_match, yaml_text
from verdict.config.keys import Config
from verdict.errors import DeadlineTooShort, FailedPrecondition, InvalidArgument, InvalidConfig
from verdict.evaluators import EvaluationInput, EvaluationResult, Evaluations, deterministic, load_evaluate_block
from verdict.metrics import Metrics
from verdict.runner import Runner
from verdict.v1 import verdict_pb2

CATASTROPHIC = "(a|aa)+$"
"""Exponential backtracking in both `re` and `regex` (which optimises the classic `(a+)+$` away)."""


def _request(case: Case | Rejected, config: Mapping[str, Any], **extra: Any) -> EvaluationInput:
    return EvaluationInput(config, case.output, case.exit_code, case.context, **extra)


@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("form", ["dict", "yaml"])
async def test_case(evaluations: Evaluations, case: Case, form: str) -> None:
    config = dict(case.config) if form == "dict" else load_evaluate_block(yaml_text(case))
    result = await evaluations.evaluate(_request(case, config))
    assert result.verdict == case.verdict
    assert details_match(result.details, case.details), result.details


@pytest.mark.parametrize("case", REJECTED, ids=str)
@pytest.mark.parametrize("form", ["dict", "yaml"])
async def test_rejected(evaluations: Evaluations, case: Rejected, form: str) -> None:
    config = dict(case.config) if form == "dict" else load_evaluate_block(yaml_text(case))
    with pytest.raises(InvalidArgument) as raised:
        await evaluations.evaluate(_request(case, config))
    assert raised.value.field == case.field


async def test_both_forms_give_identical_results(evaluations: Evaluations) -> None:
    for case in CASES:
        typed = await evaluations.evaluate(_request(case, dict(case.config)))
        parsed = await evaluations.evaluate(_request(case, load_evaluate_block(yaml_text(case))))
        assert (typed.verdict, typed.details, typed.state) == (parsed.verdict, parsed.details, parsed.state), case


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("type: exit_code", {"type": "exit_code"}),
        ('{"type": "classify", "line": "first"}', {"type": "classify", "line": "first"}),
        ("evaluate:\n  type: output_contains\n  pattern: ok\n", {"type": "output_contains", "pattern": "ok"}),
    ],
)
def test_load_evaluate_block(text: str, expected: dict[str, Any]) -> None:
    assert load_evaluate_block(text) == expected


@pytest.mark.parametrize("text", ["type: [unclosed", "- a list", "just text", ""])
def test_load_evaluate_block_rejects(text: str) -> None:
    with pytest.raises(InvalidConfig) as raised:
        load_evaluate_block(text)
    assert raised.value.field == "config.yaml"


async def test_catastrophic_pattern_is_error_within_bound_while_others_answer(metrics: Metrics) -> None:
    evaluations = Evaluations(Config(regex_timeout_seconds=1.0), Runner(metrics), metrics)
    slow = EvaluationInput({"type": "output_contains", "pattern": CATASTROPHIC}, "a" * 60 + "b")
    fast = EvaluationInput({"type": "output_contains", "pattern": "b$"}, "a" * 60 + "b")
    slow_call = asyncio.create_task(evaluations.evaluate(slow))
    fast_results = [await evaluations.evaluate(fast) for _ in range(5)]
    assert not slow_call.done(), "the slow pattern finished before the quick calls; it does not test concurrency"
    result = await asyncio.wait_for(slow_call, timeout=10)
    assert result.verdict == "error"
    assert result.details["timed_out"] is True
    assert "regex_timeout_seconds" in result.details["error"]
    assert [r.verdict for r in fast_results] == ["yes"] * 5


async def test_pattern_timeout_respects_a_nearer_deadline(metrics: Metrics) -> None:
    config = Config(regex_timeout_seconds=60)
    evaluations = Evaluations(config, Runner(metrics), metrics)
    request = EvaluationInput({"type": "output_contains", "pattern": CATASTROPHIC}, "a" * 60 + "b")
    result = await asyncio.wait_for(evaluations.evaluate(request, deadline=time.monotonic() + 0.2), timeout=10)
    assert result.verdict == "error"
    with pytest.raises(DeadlineTooShort):
        await evaluations.evaluate(request, deadline=time.monotonic() - 1)


async def test_stateless_type_rejects_a_state(evaluations: Evaluations) -> None:
    with pytest.raises(InvalidArgument) as raised:
        await evaluations.evaluate(EvaluationInput({"type": "exit_code"}, state=b"v1:{}"))
    assert raised.value.field == "state"


async def test_stateless_types_return_an_empty_state(evaluations: Evaluations) -> None:
    result = await evaluations.evaluate(EvaluationInput({"type": "classify"}, "GO"))
    assert result.state == b""


async def test_short_circuit_returns_a_stateful_token_unchanged(evaluations: Evaluations) -> None:
    first = await evaluations.evaluate(EvaluationInput({"type": "score_stall"}, "3"))
    timed_out = await evaluations.evaluate(EvaluationInput({"type": "score_stall"}, "9", 124, state=first.state))
    assert timed_out.verdict == "error"
    assert timed_out.state == first.state


class RecordingJudge:
    def __init__(self) -> None:
        self.calls: list[tuple[Mapping[str, Any], EvaluationInput, float | None]] = []

    async def __call__(
        self, config: Mapping[str, Any], request: EvaluationInput, deadline: float | None
    ) -> EvaluationResult:
        self.calls.append((config, request, deadline))
        return EvaluationResult("yes", {"confidence": float("nan")})


@pytest.fixture
def judge() -> RecordingJudge:
    return RecordingJudge()


@pytest.fixture
def judged(metrics: Metrics, judge: RecordingJudge) -> Evaluations:
    config = Config(judge_model="opus")
    kinds = ("llm_structured", "comparator", "contract")
    return Evaluations(config, Runner(metrics), metrics, judged=dict.fromkeys(kinds, judge))


async def test_judge_gets_validated_config_with_defaults_and_the_source_output(
    judged: Evaluations, judge: RecordingJudge
) -> None:
    request = EvaluationInput(
        {"type": "llm_structured", "prompt": "Quote the evidence.", "source": "${captured.x.output}"},
        "echo",
        context={"captured": {"x": {"output": "the real output"}}},
        workspace="w",
    )
    result = await judged.evaluate(request, deadline=123.0)
    assert result.verdict == "yes"
    assert result.details == {"confidence": "nan"}, "judge details are made strict JSON too"
    config, seen, deadline = judge.calls[0]
    assert config == {
        "type": "llm_structured",
        "prompt": "Quote the evidence.",
        "schema": None,
        "min_confidence": 0.5,
        "uncertain_suffix": False,
        "model": "opus",
        "fresh": False,
        "source": "${captured.x.output}",
        "judges": [],  # no panel: the judge host, asked once
        "quorum": None,
        "judge": None,
        "samples": None,
        "tie": None,
    }
    assert seen.output == "the real output"
    assert seen.workspace == "w"
    assert deadline == 123.0


async def test_judge_config_for_comparator_and_contract(judged: Evaluations, judge: RecordingJudge) -> None:
    await judged.evaluate(EvaluationInput({"type": "comparator", "baseline": "old", "min_pairs": 0.0}))
    await judged.evaluate(
        EvaluationInput({"type": "contract", "pairs": [{"producer": "a.py", "consumer_content": "x"}]})
    )
    comparator, contract = judge.calls[0][0], judge.calls[1][0]
    assert comparator["min_pairs"] == 1, "clamped to at least 1, as the reference does"
    assert comparator["baseline_path"] is None
    assert comparator["model"] == "opus"
    assert contract["pairs"] == [
        {
            "producer": "a.py",
            "consumer": "",
            "contract": "the producer and consumer must be compatible",
            "producer_pattern": None,
            "consumer_pattern": None,
            "producer_content": None,
            "consumer_content": "x",
        }
    ]


async def test_judge_types_short_circuit_like_the_reference(judged: Evaluations, judge: RecordingJudge) -> None:
    comparator = await judged.evaluate(EvaluationInput({"type": "comparator", "baseline": "b"}, exit_code=2))
    assert comparator.verdict == "error", "comparator is not exit-code aware"
    timed_out = await judged.evaluate(EvaluationInput({"type": "llm_structured"}, exit_code=124))
    assert timed_out.verdict == "error"
    await judged.evaluate(
        EvaluationInput({"type": "contract", "pairs": [{"producer": "a", "consumer": "b"}]}, exit_code=1)
    )
    assert len(judge.calls) == 1, "contract is exit-code aware: only it reached the judge"


async def test_judge_type_without_a_judge_is_failed_precondition(evaluations: Evaluations) -> None:
    with pytest.raises(FailedPrecondition, match="no LLM judge"):
        await evaluations.evaluate(EvaluationInput({"type": "llm_structured"}))


async def test_invalid_judge_config_is_rejected_before_any_judge(evaluations: Evaluations) -> None:
    with pytest.raises(InvalidConfig):
        await evaluations.evaluate(EvaluationInput({"type": "llm_structured", "min_confidence": 2.0}))


async def test_metrics_count_verdicts_and_durations(evaluations: Evaluations, registry: CollectorRegistry) -> None:
    await evaluations.evaluate(EvaluationInput({"type": "exit_code"}))
    await evaluations.evaluate(EvaluationInput({"type": "exit_code"}, exit_code=1))
    await evaluations.evaluate(EvaluationInput({"type": "exit_code"}, exit_code=1))
    sample = registry.get_sample_value
    assert sample("verdict_evaluations_total", {"evaluator": "exit_code", "verdict": "yes"}) == 1
    assert sample("verdict_evaluations_total", {"evaluator": "exit_code", "verdict": "no"}) == 2
    assert sample("verdict_evaluation_duration_seconds_count", {"evaluator": "exit_code"}) == 3


async def test_rejected_calls_count_no_verdict(evaluations: Evaluations, registry: CollectorRegistry) -> None:
    with pytest.raises(InvalidConfig):
        await evaluations.evaluate(EvaluationInput({"type": "output_numeric"}))
    assert (
        registry.get_sample_value("verdict_evaluation_duration_seconds_count", {"evaluator": "output_numeric"}) is None
    )


async def test_undeclared_classify_verdicts_are_other_and_cannot_squat_a_declared_one(
    registry: CollectorRegistry,
) -> None:
    """The first callers used to take the 20 label values: afterwards a legitimate PASS was `other` for the life
    of the process. Labels now come from what is declared (the server's verdict_labels here), whoever comes first."""
    metrics = Metrics(registry, verdict_labels=("PASS", "FAIL"))
    evaluations = Evaluations(Config(), Runner(metrics), metrics)
    for token in [f"SQUAT{n}" for n in range(100)] + ["PASS", "FAIL", "PASS"]:
        result = await evaluations.evaluate(EvaluationInput({"type": "classify"}, token))
        assert result.verdict == token, "the label changes, never the verdict"
    sample = registry.get_sample_value
    assert sample("verdict_evaluations_total", {"evaluator": "classify", "verdict": "PASS"}) == 2
    assert sample("verdict_evaluations_total", {"evaluator": "classify", "verdict": "FAIL"}) == 1
    assert sample("verdict_evaluations_total", {"evaluator": "classify", "verdict": "other"}) == 100
    assert sample("verdict_evaluations_total", {"evaluator": "classify", "verdict": "SQUAT0"}) is None
    await evaluations.evaluate(EvaluationInput({"type": "exit_code"}))
    assert sample("verdict_evaluations_total", {"evaluator": "exit_code", "verdict": "yes"}) == 1, "fixed verdicts pass"


async def test_the_fixed_verdicts_of_an_open_evaluator_count_as_themselves(registry: CollectorRegistry) -> None:
    metrics = Metrics(registry)
    evaluations = Evaluations(Config(), Runner(metrics), metrics)
    for token in ("A", "", "B"):
        await evaluations.evaluate(EvaluationInput({"type": "classify"}, token))
    sample = registry.get_sample_value
    assert sample("verdict_evaluations_total", {"evaluator": "classify", "verdict": ""}) == 1
    assert sample("verdict_evaluations_total", {"evaluator": "classify", "verdict": "other"}) == 2


@pytest.mark.parametrize(
    "text",
    [
        "type: output_numeric\noperator: eq\ntarget: " + "1" * 5000,
        "type: output_json\npath: a\noperator: eq\ntarget: 2024-02-30",
        "type: output_json\npath: a\noperator: eq\ntarget: 2024-13-01 10:00:00",
    ],
)
def test_yaml_values_python_cannot_build_are_invalid_config(text: str) -> None:
    """PyYAML raises ValueError, not YAMLError, for an integer over Python's 4300-digit limit or an impossible date."""
    with pytest.raises(InvalidConfig) as raised:
        load_evaluate_block(text)
    assert raised.value.field == "config.yaml"


def _nested(depth: int) -> str:
    return '{"k": ' * depth + "1" + "}" * depth


@pytest.mark.parametrize(
    ("config", "output"),
    [
        ({"type": "output_json", "path": "a", "operator": "gt", "target": 0.0}, '{"a": 1' + "0" * 400 + "}"),
        ({"type": "mcp_result"}, '{"content": -1' + "0" * 400 + "}"),
        ({"type": "output_json", "path": "a", "operator": "ne", "target": 1.0}, '{"a": ' + _nested(40) + "}"),
        ({"type": "output_json", "path": "a", "operator": "ne", "target": 1.0}, '{"a": ' + _nested(2000) + "}"),
        ({"type": "mcp_result"}, '{"content": [' + "[" * 2000 + "]" * 2000 + "]}"),
        ({"type": "output_json", "path": "a", "operator": "eq", "target": 10**400}, '{"a": 1' + "0" * 400 + "}"),
    ],
    ids=["huge-int-value", "huge-int-envelope", "nested-40", "nested-2000", "nested-envelope", "huge-int-target"],
)
async def test_details_from_any_output_fit_a_response_clients_can_read(
    evaluations: Evaluations, config: dict[str, Any], output: str
) -> None:
    """Details become a protobuf Struct: a number past 1e308 cannot be a double (OverflowError), deep nesting broke
    `jsonable` (RecursionError), and a Struct nested past ~32 levels is sent but refused by every client's decoder."""
    result = await evaluations.evaluate(EvaluationInput(config, output))
    response = verdict_pb2.EvaluateResponse(verdict=result.verdict, state=result.state)
    response.details.update(result.details)
    decoded = verdict_pb2.EvaluateResponse.FromString(response.SerializeToString())
    assert decoded.verdict == result.verdict in ("yes", "success", "tool_error")


async def test_error_patterns_are_searched_off_the_event_loop(
    evaluations: Evaluations, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each error pattern is a pass over the output (about 10 ms for 4 MB); 64 of them on the event loop stopped
    every other call for most of a second (and an unbounded list, for minutes).

    Checked by the thread the passes run in, not by timing the loop's longest stall: on a loaded machine a
    descheduled event loop stalls about as long as those passes take on a fast one."""
    config = {"type": "output_contains", "pattern": "^$", "error_patterns": ["ab"] * 64}
    request = EvaluationInput(config, "a" * 4_000_000)
    searched_in: list[int] = []
    judge = deterministic.output_contains

    def spy(step: Any, *, matched: bool) -> Any:
        searched_in.append(threading.get_ident())
        return judge(step, matched=matched)

    monkeypatch.setattr(deterministic, "output_contains", spy)
    result = await evaluations.evaluate(request)
    assert result.verdict == "no"
    assert searched_in, "the error patterns were not searched"
    assert threading.get_ident() not in searched_in, "the error patterns were searched on the event loop"
