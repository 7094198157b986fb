"""Every row of the behaviour table, run on the pure functions (no dispatcher, no metrics, no event-loop work)."""

from __future__ import annotations

import contextlib

import pytest

from tests.evaluators.cases import CASES, Case, details_match
from verdict import patterns
from verdict.evaluators import deterministic
from verdict.evaluators.catalogue import SPECS, validate
from verdict.evaluators.dispatch import PURE_EVALUATORS
from verdict.evaluators.interpolation import InterpolationError, Namespaces, interpolate
from verdict.evaluators.model import Judgement, Step


async def judge(case: Case) -> Judgement:
    """What the pure layer decides for a row: short-circuit, else validate, apply `source`, run the function."""
    kind = str(case.config["type"])
    short = deterministic.short_circuit(kind, case.exit_code)
    if short is not None:
        return short
    settings = validate(case.config)
    namespaces = Namespaces.from_context(case.context)
    output = case.output
    if settings["source"]:
        with contextlib.suppress(InterpolationError):
            output = interpolate(settings["source"], namespaces)
    step = Step(settings, output, case.exit_code, namespaces)
    if kind == "output_contains":
        matched = await patterns.search(settings["pattern"], output, timeout=5)
        return deterministic.output_contains(step, matched=matched)
    return PURE_EVALUATORS[kind](step)


PURE_CASES = [case for case in CASES if case.config["type"] != "diff_stall" and not case.dispatcher_only]


@pytest.mark.parametrize("case", PURE_CASES, ids=str)
async def test_pure_function(case: Case) -> None:
    judgement = await judge(case)
    assert judgement.verdict == case.verdict
    assert details_match(_plain(judgement.details), case.details), judgement.details


def _plain(details: dict[str, object]) -> dict[str, object]:
    from verdict.evaluators.dispatch import jsonable

    plain: dict[str, object] = jsonable(details)
    return plain


def test_short_circuit_exempts_exactly_the_exit_code_aware_types() -> None:
    aware = {kind for kind in SPECS if deterministic.short_circuit(kind, 1) is None}
    assert aware == {
        "exit_code",
        "mcp_result",
        "harbor_scorer",
        "diff_stall",
        "score_stall",
        "open_question_stall",
        "action_stall",
        "llm_structured",
        "contract",
    }
    assert {kind for kind in SPECS if deterministic.short_circuit(kind, 124) is None} == {"mcp_result"}
    assert all(deterministic.short_circuit(kind, 0) is None for kind in SPECS)
