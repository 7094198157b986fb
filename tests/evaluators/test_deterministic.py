"""Every row of the behaviour table, run on the pure functions (no dispatcher, no metrics, no event-loop work)."""

from __future__ import annotations

import contextlib

import pytest
from prometheus_client import CollectorRegistry

from tests.evaluators.cases import CASES, Case, details_match
from verdict.config.keys import Config
from verdict.evaluators import CATALOGUE, EvaluationResult, Outside, deterministic, jsonable
from verdict.evaluators.catalogue import SPECS, validate
from verdict.evaluators.interpolation import InterpolationError, Namespaces, interpolate
from verdict.evaluators.model import Judgement, Step
from verdict.metrics import Metrics
from verdict.runner import Runner


async def judge(case: Case) -> Judgement | EvaluationResult:
    """What the records decide for a row: short-circuit, else validate, apply `source`, run the record's run."""
    kind = str(case.config["type"])
    short = deterministic.short_circuit(SPECS[kind], case.exit_code)
    if short is not None:
        return short
    settings = validate(case.config)
    namespaces = Namespaces.from_context(case.context)
    output = case.output
    if settings["source"]:
        with contextlib.suppress(InterpolationError):
            output = interpolate(settings["source"], namespaces)
    step = Step(settings, output, case.exit_code, namespaces)
    run = CATALOGUE[kind].run
    assert run is not None, f"{kind} has no run of its own"
    outside = Outside(Config(regex_timeout_seconds=5), Runner(Metrics(CollectorRegistry())))
    return await run(step, outside)


PURE_CASES = [case for case in CASES if case.config["type"] != "diff_stall" and not case.dispatcher_only]


@pytest.mark.parametrize("case", PURE_CASES, ids=str)
async def test_pure_function(case: Case) -> None:
    judgement = await judge(case)
    assert judgement.verdict == case.verdict
    assert details_match(_plain(judgement.details), case.details), judgement.details


def _plain(details: dict[str, object]) -> dict[str, object]:
    plain: dict[str, object] = jsonable(details)
    return plain


def test_short_circuit_exempts_exactly_the_exit_code_aware_types() -> None:
    aware = {kind for kind in SPECS if deterministic.short_circuit(SPECS[kind], 1) is None}
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
        "trajectory",
    }
    timeout_readers = {kind for kind in SPECS if SPECS[kind].reads_timeouts}
    assert timeout_readers == {"mcp_result"}
    assert {kind for kind in SPECS if deterministic.short_circuit(SPECS[kind], 124) is None} == timeout_readers
    assert all(deterministic.short_circuit(SPECS[kind], 0) is None for kind in SPECS)
