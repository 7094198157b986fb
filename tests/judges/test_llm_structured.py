"""llm_structured: the prompt, the grammar, evidence coercion and verification, and the evaluator end to end."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.judges.support import envelope
from tests.support import growth
from verdict.evaluators.model import EvaluationInput
from verdict.judges.llm_structured import (
    DEFAULT_PROMPT,
    DEFAULT_SCHEMA,
    EVIDENCE_CONTRACT,
    MAX_QUOTED_PASSAGES,
    LlmStructured,
    build_prompt,
    evidence_found,
    settle,
)

OUTPUT = "collecting ...\n============ All 42 tests passed in 3.1s ============\n"
CONFIG = {
    "type": "llm_structured",
    "prompt": None,
    "schema": None,
    "min_confidence": 0.5,
    "uncertain_suffix": False,
    "model": "sonnet",
    "source": None,
}


def settled(
    payload: dict[str, Any],
    *,
    output: str = OUTPUT,
    custom_schema: bool = False,
    min_confidence: float = 0.5,
    uncertain_suffix: bool = False,
) -> tuple[str, dict[str, Any]]:
    return settle(
        payload,
        output=output,
        custom_schema=custom_schema,
        min_confidence=min_confidence,
        uncertain_suffix=uncertain_suffix,
    )


def test_the_prompt_has_the_question_the_contract_and_the_tail_of_the_output():
    prompt = build_prompt(None, "x" * 5000 + "END")
    assert prompt.startswith(DEFAULT_PROMPT + "\n\n" + EVIDENCE_CONTRACT)
    assert prompt.endswith("x" * 3997 + "END\n</action_output>")
    assert "<action_output>\n" + "x" * 3997 + "END" in prompt


def test_the_default_schema_has_the_full_grammar():
    assert DEFAULT_SCHEMA["properties"]["verdict"]["enum"] == ["yes", "no", "blocked", "partial", "cannot_judge"]
    assert DEFAULT_SCHEMA["required"] == ["verdict", "confidence", "reason", "evidence"]


def test_a_quoted_verdict_stands():
    verdict, details = settled({"verdict": "yes", "confidence": 0.9, "reason": "r", "evidence": "All 42 tests passed"})
    assert verdict == "yes"
    assert details["evidence_verified"] is True
    assert details["evidence_coerced"] is False
    assert details["confident"] is True


@pytest.mark.parametrize("verdict", ["yes", "no", "blocked", "partial"])
def test_blank_evidence_becomes_no(verdict):
    result, details = settled({"verdict": verdict, "confidence": 0.9, "reason": "r", "evidence": "  "})
    assert result == "no"
    assert details["evidence_coerced"] is True


def test_evidence_that_is_not_in_the_output_is_treated_as_missing():
    """The reference accepted any non-blank quote: a judge inventing "All tests passed" got `yes`."""
    verdict, details = settled(
        {"verdict": "yes", "confidence": 0.95, "reason": "r", "evidence": "All tests passed successfully"}
    )
    assert verdict == "no"
    assert details["evidence_coerced"] is True
    assert details["evidence_verified"] is False
    assert "does not occur" in details["evidence_not_found"]


def test_cannot_judge_needs_no_evidence_and_error_is_left_alone():
    assert settled({"verdict": "cannot_judge", "confidence": 0.9, "reason": "r", "evidence": ""})[0] == "cannot_judge"
    assert settled({"confidence": 0.9})[0] == "error"


@pytest.mark.parametrize("verdict", ["Yes", "maybe", "pass"])
def test_a_verdict_outside_the_grammar_is_an_error(verdict):
    result, details = settled({"verdict": verdict, "confidence": 0.9, "reason": "r", "evidence": "All 42"})
    assert result == "error"
    assert details["invalid_verdict"] is True
    assert details["raw_verdict"] == verdict


def test_a_custom_schema_skips_grammar_and_evidence():
    verdict, details = settled({"verdict": "ship_it", "confidence": 0.9}, custom_schema=True)
    assert verdict == "ship_it"
    assert details["evidence_coerced"] is False
    assert "evidence_verified" not in details


def test_uncertain_suffix_after_coercion():
    base = {"confidence": 0.2, "reason": "r"}
    assert settled({**base, "verdict": "yes", "evidence": ""}, uncertain_suffix=True)[0] == "no_uncertain"
    assert settled({**base, "verdict": "cannot_judge"}, uncertain_suffix=True)[0] == "cannot_judge_uncertain"
    assert settled({**base, "verdict": "yes", "evidence": "All 42"}, uncertain_suffix=False)[0] == "yes"


def test_a_confidence_that_is_not_a_number_is_an_error_not_a_crash():
    verdict, details = settled({"verdict": "yes", "confidence": "high", "evidence": "All 42"})
    assert verdict == "error"
    assert details["invalid_confidence"] is True


def test_null_evidence_is_blank_not_a_crash():
    assert settled({"verdict": "yes", "confidence": 0.9, "evidence": None})[0] == "no"


@pytest.mark.parametrize(
    "evidence",
    [
        "All 42 tests passed",
        "  All 42\n tests   passed  ",
        '"All 42 tests passed"',
        "“All 42 tests passed in 3.1s”",
        "collecting ... All 42 tests passed",
        "collecting [...] tests passed in 3.1s",
        '"collecting" and "All 42 tests passed"',
    ],
)
def test_evidence_found_tolerates_whitespace_quotes_and_elisions(evidence):
    assert evidence_found(evidence, OUTPUT)


@pytest.mark.parametrize("evidence", ["all 42 tests passed", "All 43 tests passed", "tests passed ... 9 failed", '""'])
def test_evidence_found_is_verbatim(evidence):
    assert not evidence_found(evidence, OUTPUT)


def request(output: str = OUTPUT, context: dict[str, Any] | None = None) -> EvaluationInput:
    return EvaluationInput(config=CONFIG, output=output, context=context or {})


async def test_the_evaluator_end_to_end(judge_service, fake_judges):
    fake_judges.answer(
        "claude-code", {"verdict": "yes", "confidence": 0.9, "reason": "r", "evidence": "All 42 tests passed"}
    )
    result = await LlmStructured(judge_service("claude-code"))(CONFIG, request(), None)
    assert result.verdict == "yes"
    details = result.details
    assert details["judge_host"] == "claude-code"
    assert details["llm_model"] == "claude-sonnet-4-5"  # the model the envelope says answered, not the alias asked
    assert details["llm_prompt"] == build_prompt(None, OUTPUT)[:500]
    assert set(details) >= {"confidence", "confident", "reason", "evidence", "evidence_coerced", "raw"}
    [call] = fake_judges.calls()
    assert json.loads(call["argv"][call["argv"].index("--json-schema") + 1]) == DEFAULT_SCHEMA


async def test_the_prompt_is_interpolated_or_used_raw_when_it_cannot_be(judge_service, fake_judges):
    fake_judges.answer("claude-code", {"verdict": "cannot_judge", "confidence": 0.9, "reason": "r", "evidence": ""})
    evaluator = LlmStructured(judge_service("claude-code"))
    config = {**CONFIG, "prompt": "Did ${context.task} succeed?"}
    await evaluator(config, request(context={"context": {"task": "the build"}}), None)
    await evaluator(config, request(), None)
    first, second = fake_judges.calls()
    assert first["prompt"].startswith("Did the build succeed?")
    assert second["prompt"].startswith("Did ${context.task} succeed?")


async def test_tags_from_a_model_that_ignored_the_schema_are_recovered(judge_service, fake_judges):
    fake_judges.scenario({"stdout": envelope("claude-code", "tags.json")})
    result = await LlmStructured(judge_service("claude-code"))(CONFIG, request(), None)
    assert result.verdict == "yes"
    assert result.details["confidence"] == 0.8


async def test_a_fabricated_quote_fails_end_to_end(judge_service, fake_judges):
    fake_judges.answer("codex", {"verdict": "yes", "confidence": 0.9, "reason": "r", "evidence": "0 failures"})
    result = await LlmStructured(judge_service("codex"))(CONFIG, request(), None)
    assert result.verdict == "no"
    assert result.details["evidence_verified"] is False


@pytest.mark.parametrize("host", ["claude-code", "codex", "gemini", "qwen", "kimi-code", "omp"])
async def test_every_host_gives_a_verdict(judge_service, fake_judges, host):
    fake_judges.answer(host, {"verdict": "partial", "confidence": 0.6, "reason": "r", "evidence": "All 42 tests"})
    result = await LlmStructured(judge_service(host))(CONFIG, request(), None)
    assert result.verdict == "partial"


async def test_a_judge_malfunction_is_error_with_the_cause_never_no(judge_service, fake_judges):
    fake_judges.scenario({"stdout": envelope("claude-code", "not-logged-in.json"), "rc": 1})
    result = await LlmStructured(judge_service("claude-code"))(CONFIG, request(), None)
    assert result.verdict == "error"
    assert result.details["api_error"] is True
    assert "Not logged in" in result.details["error"]
    assert result.details["judge_host"] == "claude-code"


def test_a_made_up_verdict_of_any_size_is_clipped_in_the_details():
    verdict, details = settle(
        {"verdict": "v" * 1_000_000, "confidence": 0.9, "reason": "r", "evidence": "e"},
        output="e",
        custom_schema=False,
        min_confidence=0.5,
        uncertain_suffix=False,
    )
    assert verdict == "error"
    assert len(details["raw_verdict"]) < 1000
    assert len(details["error"]) < 1000
    assert details["raw_truncated"] is True


@pytest.mark.parametrize("evidence", ["All 42 tests passed ... collecting", "3.1s [...] All 42"])
def test_elided_pieces_must_come_in_the_outputs_order(evidence):
    """A quote with elisions is the output with gaps; the pieces were looked up anywhere, in any order."""
    assert not evidence_found(evidence, OUTPUT)


def test_more_quoted_passages_than_can_be_checked_are_not_verified():
    output = " ".join(f"line{n}" for n in range(100))
    assert evidence_found(" and ".join(f'"line{n}"' for n in range(MAX_QUOTED_PASSAGES)), output)
    assert not evidence_found(" and ".join(f'"line{n}"' for n in range(MAX_QUOTED_PASSAGES + 1)), output)


@pytest.mark.parametrize(
    ("evidence", "count"),
    [
        # every unclosed opening mark was retried to the end: quadratic
        (lambda count: "“" * 2 * count, 2_500),
        # every piece was looked up from the start of the output (a cheap search each, so a larger count for the
        # quadratic part to dominate)
        (lambda count: " ... ".join(["b"] * 2 * count), 5_000),
        # as many passages, each looked up in the whole output
        (lambda count: " ".join(f'"b{n}"' for n in range(count)), 2_500),
    ],
)
def test_hostile_evidence_is_checked_in_linear_time(evidence: Callable[[int], str], count: int) -> None:
    # Evidence and output both eight times larger must cost about eight times as much, not 64 (the old checks cost
    # the evidence's size times the output's): a ratio measured in this test, so the machine's speed cancels out.
    def check(count: int) -> None:
        evidence_found(evidence(count), "a" * 40 * count + " " + " ".join(f"b{n}" for n in range(count)))

    assert growth(check, count) < 32
