"""Every evaluator type is one complete record, reachable through Evaluate and ListEvaluators; a piece left out of a
record fails here, in `make test`, never as INTERNAL to a caller.

Also keeps the "How to add an evaluator" section of docs/architecture.md honest: a toy evaluator is added exactly as
that section says (one record in a registry) and runs through the real dispatcher, touching no other table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from prometheus_client import CollectorRegistry

from tests.support import make_config, serving
from verdict.config.keys import Config
from verdict.errors import InvalidArgument, InvalidConfig
from verdict.evaluators import (
    CATALOGUE,
    EvaluationInput,
    Evaluations,
    Evaluator,
    EvaluatorSpec,
    FieldSpec,
    Judgement,
    Pure,
    Registry,
    Step,
)
from verdict.judges import build_judges
from verdict.metrics import Metrics
from verdict.runner import Runner
from verdict.v1 import verdict_pb2

TYPED_MEMBERS = sorted(
    field.name
    for field in verdict_pb2.EvaluatorConfig.DESCRIPTOR.oneofs_by_name["kind"].fields
    if field.message_type is not None
)
TEXT_MEMBERS = sorted(
    field.name
    for field in verdict_pb2.EvaluatorConfig.DESCRIPTOR.oneofs_by_name["kind"].fields
    if field.message_type is None and field.name != "yaml"
)
"""Members that carry another tool's configuration as text; their examples are that text."""

EXAMPLES: dict[str, Any] = {
    # One valid typed configuration per evaluator type; a new type needs a row here (the test below says so).
    "exit_code": {},
    "output_numeric": {"operator": "ge", "target": 3},
    "output_json": {"path": ".a", "operator": "eq", "target": 1},
    "output_contains": {"pattern": "ok"},
    "convergence": {"target": 0},
    "classify": {},
    "diff_stall": {},
    "action_stall": {},
    "score_stall": {},
    "open_question_stall": {},
    "mcp_result": {},
    "harbor_scorer": {},
    "llm_structured": {"prompt": "Did it work?"},
    "comparator": {"baseline": "the old answer"},
    "contract": {"pairs": [{"producer_content": "def f(): ...", "consumer_content": "f()"}]},
    "trajectory": {"expected": [{"name": "search", "arguments": '{"q": "x"}'}], "match": "superset"},
    "promptfoo": "- type: contains\n  value: '5'\n",
    "openai_grader": '{"type": "string_check", "name": "s", "input": "{{sample.output_text}}", "reference": "5", '
    '"operation": "eq"}',
}


def _toy_spec(**overrides: Any) -> EvaluatorSpec:
    spec = EvaluatorSpec(
        "shout",
        "Yes when the output is in capitals.",
        (FieldSpec("source", "string", "Replaces the output."),),
        ("yes", "no", "error"),
    )
    return replace(spec, **overrides)


def _shout(step: Step) -> Judgement:
    loud = step.output.strip() != "" and step.output.upper() == step.output
    return Judgement("yes" if loud else "no", {"length": len(step.output)})


def test_every_record_is_complete() -> None:
    assert [problem for record in CATALOGUE.values() for problem in record.problems()] == []


def test_every_proto_member_has_a_record_and_every_record_a_proto_member() -> None:
    assert sorted(CATALOGUE) == sorted(TYPED_MEMBERS + TEXT_MEMBERS)


def test_every_type_has_an_example_here() -> None:
    assert sorted(EXAMPLES) == sorted(TYPED_MEMBERS + TEXT_MEMBERS), "add a configuration of the new type to EXAMPLES"


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        (Evaluator(_toy_spec(), run=None), "a run is required exactly when the type does not use a judge"),
        (Evaluator(_toy_spec(uses_judge=True), run=Pure(_shout)), "a run is required exactly when"),
        (Evaluator(_toy_spec(stateful=True), run=Pure(_shout)), "needs the identity its state token is bound to"),
        (
            Evaluator(_toy_spec(), run=Pure(_shout), identity=lambda settings, workspace: {}),
            "an identity without state binds no token",
        ),
        (Evaluator(_toy_spec(fields=()), run=Pure(_shout)), "every type accepts `source`"),
        (
            Evaluator(_toy_spec(reads_timeouts=True), run=Pure(_shout)),
            "a type that reads timeouts (exit 124) reads exit codes",
        ),
        (Evaluator(_toy_spec(verdicts=()), run=Pure(_shout)), "verdicts are required"),
        (
            Evaluator(_toy_spec(fields=(FieldSpec("source", "string", ""),)), run=Pure(_shout)),
            "shout.source: a description is required",
        ),
    ],
    ids=[
        "no-run",
        "judge-with-run",
        "stateful-without-identity",
        "identity-without-state",
        "no-source",
        "timeout-reader-blind-to-exit-codes",
        "no-verdicts",
        "undocumented-field",
    ],
)
def test_the_completeness_check_fails_on_a_deliberately_incomplete_record(record: Evaluator, problem: str) -> None:
    assert any(problem in found for found in record.problems()), record.problems()
    with pytest.raises(ValueError, match="incomplete evaluator records: ") as refused:
        Registry([*CATALOGUE.values(), record])
    assert problem in str(refused.value)
    complete = Evaluator(_toy_spec(), run=Pure(_shout))
    assert complete.problems() == [], "the complete toy passes the same check"
    assert "shout" in Registry([*CATALOGUE.values(), complete])


def test_two_records_for_one_type_are_refused_at_construction() -> None:
    with pytest.raises(ValueError, match="two records for evaluator type 'exit_code'"):
        Registry([CATALOGUE["exit_code"], CATALOGUE["exit_code"]])


def test_the_judges_package_supplies_a_run_for_exactly_the_judge_backed_records() -> None:
    metrics = Metrics(CollectorRegistry())
    judges = build_judges(Config(judge_host="http://127.0.0.1:9"), Runner(metrics), metrics, {})
    assert set(judges.evaluators) == {kind for kind, record in CATALOGUE.items() if record.run is None}


async def test_every_type_is_reachable_through_evaluate_and_list_evaluators(tmp_path: Path) -> None:
    """Over a real server: each example gets one of its type's verdicts (an RpcError, INTERNAL above all, fails).

    The judge host is a URL nothing listens on, so the judge-backed runs are reached and fail fast as `error`.
    """
    config = make_config(workspace_root=str(tmp_path), judge_host="http://127.0.0.1:9", judge_timeout_seconds=5)
    async with serving(config) as running:
        listed = await running.stub.ListEvaluators(verdict_pb2.ListEvaluatorsRequest(), timeout=10)
        assert sorted(info.type for info in listed.evaluators) == sorted(TYPED_MEMBERS + TEXT_MEMBERS)
        for kind in TYPED_MEMBERS + TEXT_MEMBERS:
            message = verdict_pb2.EvaluatorConfig()
            if kind in TEXT_MEMBERS:
                setattr(message, kind, EXAMPLES[kind])
            else:
                member = getattr(message, kind)
                json_format.ParseDict(EXAMPLES[kind], member)
                member.SetInParent()
            request = verdict_pb2.EvaluateRequest(config=message, output="5")
            response = await running.stub.Evaluate(request, timeout=30)
            spec = CATALOGUE[kind].spec
            assert response.verdict in spec.verdicts or spec.open_verdicts, (kind, response.verdict)


# --- How to add an evaluator (docs/architecture.md), done with a toy --------------------------------------------


async def test_a_toy_record_in_a_fresh_registry_runs_through_the_dispatcher() -> None:
    def no_shouting_about_nothing(settings: dict[str, Any]) -> None:
        if settings["min_length"] < 1:
            raise InvalidConfig("shout needs min_length of at least 1", field="config.min_length")

    toy = Evaluator(
        EvaluatorSpec(
            "shout",
            "Yes when the output is in capitals.",
            (
                FieldSpec("min_length", "integer", "Shorter outputs are no.", default=1),
                FieldSpec("source", "string", "Replaces the output."),
            ),
            ("yes", "no", "error"),
        ),
        run=Pure(_shout),
        checks=(no_shouting_about_nothing,),
    )
    registry = Registry([toy])
    metrics = Metrics(CollectorRegistry())
    evaluations = Evaluations(Config(), Runner(metrics), metrics, registry=registry)

    assert [spec.type for spec in evaluations.catalogue()] == ["shout"]
    loud = await evaluations.evaluate(EvaluationInput({"type": "shout"}, output="HELLO"))
    quiet = await evaluations.evaluate(EvaluationInput({"type": "shout"}, output="hello"))
    assert (loud.verdict, loud.details, loud.state) == ("yes", {"length": 5}, b"")
    assert quiet.verdict == "no"
    with pytest.raises(InvalidConfig, match="min_length of at least 1"):
        await evaluations.evaluate(EvaluationInput({"type": "shout", "min_length": 0}, output="HI"))
    with pytest.raises(InvalidConfig, match="unknown evaluator type 'exit_code'"):
        await evaluations.evaluate(EvaluationInput({"type": "exit_code"}))
    crashed = await evaluations.evaluate(EvaluationInput({"type": "shout"}, output="HI", exit_code=3))
    assert crashed.verdict == "error", "the exit-code short-circuit comes from the record's flags, not a type list"
    timed_out = await evaluations.evaluate(EvaluationInput({"type": "shout"}, output="HI", exit_code=124))
    assert timed_out.verdict == "error", "a record that does not read timeouts gets the 124 short-circuit"


async def test_the_timeout_exemption_is_the_records_flag_not_its_name() -> None:
    """`reads_timeouts` on a toy record lets exit 124 through to its run; mcp_result is exempt by the same flag."""

    def timed(step: Step) -> Judgement:
        return Judgement("timeout" if step.exit_code == 124 else "yes", {"exit_code": step.exit_code})

    spec = _toy_spec(verdicts=("yes", "timeout"), exit_code_aware=True, reads_timeouts=True)
    metrics = Metrics(CollectorRegistry())
    evaluations = Evaluations(Config(), Runner(metrics), metrics, registry=Registry([Evaluator(spec, run=Pure(timed))]))
    answered = await evaluations.evaluate(EvaluationInput({"type": "shout"}, exit_code=124))
    assert answered.verdict == "timeout"
    assert CATALOGUE["mcp_result"].spec.reads_timeouts
    assert [kind for kind, record in CATALOGUE.items() if record.spec.reads_timeouts] == ["mcp_result"]


async def test_a_stateful_toy_gets_its_token_bound_to_its_identity() -> None:
    def count(step: Step) -> Judgement:
        seen = 0 if step.state is None else int(step.state["seen"])
        return Judgement("yes", {"seen": seen + 1}, {"seen": seen + 1})

    def identity(settings: Mapping[str, Any], workspace: str) -> Mapping[str, Any]:
        return {"label": settings["label"]}

    toy = Evaluator(
        EvaluatorSpec(
            "counter",
            "Counts its calls.",
            (FieldSpec("label", "string", "What is counted.", default=""), FieldSpec("source", "string", "Unused.")),
            ("yes",),
            stateful=True,
        ),
        run=Pure(count),
        identity=identity,
    )
    metrics = Metrics(CollectorRegistry())
    evaluations = Evaluations(Config(), Runner(metrics), metrics, registry=Registry([toy]))
    first = await evaluations.evaluate(EvaluationInput({"type": "counter", "label": "a"}))
    second = await evaluations.evaluate(EvaluationInput({"type": "counter", "label": "a"}, state=first.state))
    assert second.details == {"seen": 2}
    with pytest.raises(InvalidArgument, match="state token"):
        await evaluations.evaluate(EvaluationInput({"type": "counter", "label": "b"}, state=first.state))


def test_no_module_outside_the_records_names_an_evaluator_type() -> None:
    """The dispatcher and validation switch on no type: a new type must not need a branch there."""
    root = Path(__file__).resolve().parents[2] / "service" / "verdict" / "evaluators"
    for module in ("dispatch.py", "validation.py", "record.py"):
        text = (root / module).read_text(encoding="utf-8")
        named = [kind for kind in CATALOGUE if f'"{kind}"' in text]
        assert named == [], f"{module} names {named}"
