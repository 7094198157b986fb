"""The catalogue against the proto contract, and validation details the behaviour tables do not spell out."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf.descriptor import FieldDescriptor
from prometheus_client import CollectorRegistry

from tests.evaluators.cases import CASES
from verdict.config.keys import Config
from verdict.errors import InvalidConfig, ResourceExhausted
from verdict.evaluators import Evaluations, EvaluatorSpec, load_evaluate_block
from verdict.evaluators.catalogue import SPECS, validate
from verdict.metrics import Metrics
from verdict.runner import Runner
from verdict.v1 import verdict_pb2

ONEOF = verdict_pb2.EvaluatorConfig.DESCRIPTOR.oneofs_by_name["kind"]
MEMBERS = {field.name: field for field in ONEOF.fields if field.name != "yaml"}
TYPED_MEMBERS = {name: field for name, field in MEMBERS.items() if field.message_type is not None}
TEXT_MEMBERS = {name: field for name, field in MEMBERS.items() if field.message_type is None}
"""Members that carry another tool's configuration as text (promptfoo, openai_grader)."""
ALLOWED_TYPES = {
    "string",
    "number",
    "integer",
    "boolean",
    "number|string",
    "string|integer",
    "any",
    "list[string]",
    "object",
    "list[object]",
}
SERVER_ONLY_KEYS = {"source", "history_file"}
"""`source` is EvaluatorConfig's own field; `history_file` is accepted from loop files and ignored."""


def _proto_type(field: FieldDescriptor) -> set[str]:
    if field.message_type is not None:
        name = field.message_type.full_name
        if name == "google.protobuf.Value":
            return {"number|string", "string|integer", "any"}
        if name == "google.protobuf.Struct":
            return {"object"}
        return {"list[object]"} if field.is_repeated else {"object"}
    if field.is_repeated:
        return {"list[string]"}
    return {
        FieldDescriptor.TYPE_STRING: {"string", "string|integer"},  # a string that YAML may spell as a number
        FieldDescriptor.TYPE_BOOL: {"boolean"},
        FieldDescriptor.TYPE_INT32: {"integer"},
        FieldDescriptor.TYPE_DOUBLE: {"number"},
    }[field.type]


def test_every_member_is_in_the_catalogue() -> None:
    assert set(SPECS) == set(MEMBERS)


@pytest.mark.parametrize("kind", sorted(TEXT_MEMBERS))
def test_a_text_member_names_the_required_field_it_fills(kind: str) -> None:
    assert TEXT_MEMBERS[kind].type == FieldDescriptor.TYPE_STRING
    spec = SPECS[kind]
    field = spec.field(spec.text_member)
    assert field is not None
    assert field.required
    assert {name for name, other in SPECS.items() if other.text_member} == set(TEXT_MEMBERS)


@pytest.mark.parametrize("kind", sorted(TYPED_MEMBERS))
def test_catalogue_fields_match_the_proto_message(kind: str) -> None:
    message = TYPED_MEMBERS[kind].message_type
    assert message is not None
    spec = SPECS[kind]
    names = {field.name for field in spec.fields}
    assert names - SERVER_ONLY_KEYS == set(message.fields_by_name)
    for field in spec.fields:
        assert field.type in ALLOWED_TYPES
        if field.name in message.fields_by_name:
            assert field.type in _proto_type(message.fields_by_name[field.name]), field.name


def test_catalogue_is_sorted_and_shows_the_server_judge_model() -> None:
    metrics = Metrics(CollectorRegistry())
    catalogue = Evaluations(Config(judge_model="haiku"), Runner(metrics), metrics).catalogue()
    assert [spec.type for spec in catalogue] == sorted(SPECS)
    by_type = {spec.type: spec for spec in catalogue}
    model = by_type["llm_structured"].field("model")
    assert model is not None
    assert model.default == "haiku"
    assert SPECS["llm_structured"].field("model").default is None  # type: ignore[union-attr]


def test_catalogue_flags() -> None:
    assert {k for k, s in SPECS.items() if s.stateful} == {
        "trajectory",
        "diff_stall",
        "action_stall",
        "score_stall",
        "open_question_stall",
    }
    assert {k for k, s in SPECS.items() if s.uses_judge} == {"llm_structured", "comparator", "contract"}
    assert {k for k, s in SPECS.items() if s.open_verdicts} == {"classify", "llm_structured"}


@pytest.mark.parametrize("case", [c for c in CASES if not SPECS[str(c.config["type"])].open_verdicts], ids=str)
def test_every_verdict_the_tables_produce_is_listed(case: Any) -> None:
    spec: EvaluatorSpec = SPECS[str(case.config["type"])]
    assert case.verdict in spec.verdicts


def test_required_fields_per_reference() -> None:
    required = {kind: {f.name for f in spec.fields if f.required} for kind, spec in SPECS.items()}
    assert required == {
        "exit_code": set(),
        "output_numeric": {"operator", "target"},
        "output_json": {"path", "operator", "target"},
        "output_contains": {"pattern"},
        "convergence": {"target"},
        "classify": set(),
        "diff_stall": set(),
        "action_stall": set(),
        "score_stall": set(),
        "open_question_stall": set(),
        "mcp_result": set(),
        "harbor_scorer": set(),
        "llm_structured": set(),
        "comparator": set(),
        "contract": {"pairs"},
        "trajectory": {"expected"},
        "promptfoo": {"assert"},
        "openai_grader": {"grader"},
    }


def test_validate_fills_every_default() -> None:
    assert validate({"type": "convergence", "target": 1}) == {
        "type": "convergence",
        "target": 1.0,
        "tolerance": 0.0,
        "previous": None,
        "direction": "minimize",
        "source": None,
    }
    assert validate({"type": "score_stall"}) == {
        "type": "score_stall",
        "max_stall": 1,
        "epsilon": 0.5,
        "history_file": None,
        "source": None,
    }
    assert validate({"type": "action_stall"})["track"] == ["action"]


def test_validate_accepts_integral_floats_for_integers() -> None:
    assert validate({"type": "diff_stall", "max_stall": 3.0})["max_stall"] == 3
    assert validate({"type": "classify", "line": -1.0})["line"] == -1


@pytest.mark.parametrize(
    ("config", "fragment"),
    [
        ({"type": "output_regex"}, "valid types: action_stall, classify"),
        ({"type": "output_contain", "pattern": "x"}, "did you mean 'output_contains'"),
        ({"type": "output_numeric", "operator": "eq", "target": 1, "kye": "n"}, "did you mean 'key'"),
        ({"type": "output_numeric", "operator": "eq", "target": 1, "expected": []}, "belongs to trajectory"),
        ({"type": "diff_stall", "max_stall": True}, "must be an integer"),
        ({"type": "output_json", "path": ".a", "operator": "eq", "target": float("nan")}, "finite"),
        ({"type": "llm_structured", "schema": {"a": {1, 2}}}, "JSON value"),
    ],
)
def test_messages_name_the_problem(config: dict[str, Any], fragment: str) -> None:
    with pytest.raises(InvalidConfig) as raised:
        validate(config)
    assert fragment in raised.value.message


def test_config_must_be_a_mapping() -> None:
    with pytest.raises(InvalidConfig) as raised:
        validate(["type", "exit_code"])  # type: ignore[arg-type]
    assert raised.value.field == "config"


def test_yaml_aliases_are_refused_so_a_billion_laughs_cannot_expand() -> None:
    levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for previous, name in zip("abcdefg", "bcdefgh", strict=True):
        levels.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 10) + "]")
    bomb = "type: llm_structured\nschema:\n" + "\n".join(f"  {line}" for line in levels) + "\n"
    with pytest.raises(InvalidConfig, match="aliases") as caught:
        load_evaluate_block(bomb)
    assert caught.value.field == "config.yaml"


def test_deeply_nested_yaml_is_invalid_config_not_a_crash() -> None:
    with pytest.raises(InvalidConfig, match="nested too deeply"):
        load_evaluate_block("type: classify\nline: " + "[" * 5000 + "]" * 5000)


def test_an_oversized_block_is_resource_exhausted() -> None:
    with pytest.raises(ResourceExhausted) as caught:
        load_evaluate_block("type: classify\n# " + "x" * 70_000)
    assert caught.value.reason == "CONFIG_TOO_LARGE"


def test_min_pairs_is_bounded() -> None:
    with pytest.raises(InvalidConfig) as caught:
        validate({"type": "comparator", "baseline": "b", "min_pairs": 1_000_000})
    assert caught.value.field == "config.min_pairs"
    assert validate({"type": "comparator", "baseline": "b", "min_pairs": 16})["min_pairs"] == 16
