"""The typed oneof members: each table row built as its proto message and read back the way the rpc layer does
(`{"type": member, **MessageToDict(member, preserving_proto_field_name=True)}`), then evaluated.

This pins that the dict rows really are what a typed request produces, so the end-to-end RPC tests can reuse them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict
from google.protobuf.struct_pb2 import Struct

from tests.evaluators.cases import CASES, REJECTED, Case, Rejected, details_match, typed_config, yaml_config
from verdict.errors import InvalidArgument
from verdict.evaluators import EvaluationInput, Evaluations, load_evaluate_block
from verdict.v1 import verdict_pb2


def rpc_dict(message: verdict_pb2.EvaluatorConfig) -> dict[str, Any]:
    """What the rpc layer builds from a typed member: `{"type": member, **MessageToDict(member)}` plus `source`."""
    kind = message.WhichOneof("kind")
    assert kind is not None
    built: dict[str, Any] = {"type": kind, **MessageToDict(getattr(message, kind), preserving_proto_field_name=True)}
    if message.HasField("source"):
        built["source"] = message.source
    return built


def struct_context(context: Mapping[str, Any]) -> dict[str, Any]:
    struct = Struct()
    struct.update(dict(context))
    return MessageToDict(struct)


@pytest.mark.parametrize("case", [c for c in CASES if c.typed], ids=str)
async def test_typed_case(evaluations: Evaluations, case: Case) -> None:
    request = EvaluationInput(rpc_dict(typed_config(case)), case.output, case.exit_code, struct_context(case.context))
    result = await evaluations.evaluate(request)
    assert result.verdict == case.verdict
    assert details_match(result.details, case.details), result.details
    details = Struct()
    details.update(result.details)  # the details fit a protobuf Struct


@pytest.mark.parametrize("case", [c for c in REJECTED if c.typed], ids=str)
async def test_typed_rejected(evaluations: Evaluations, case: Rejected) -> None:
    request = EvaluationInput(rpc_dict(typed_config(case)), case.output, case.exit_code, case.context)
    with pytest.raises(InvalidArgument) as raised:
        await evaluations.evaluate(request)
    assert raised.value.field == case.field


@pytest.mark.parametrize("case", CASES, ids=str)
async def test_yaml_member(evaluations: Evaluations, case: Case) -> None:
    message = yaml_config(case)
    assert message.WhichOneof("kind") == "yaml"
    result = await evaluations.evaluate(
        EvaluationInput(load_evaluate_block(message.yaml), case.output, case.exit_code, case.context)
    )
    assert result.verdict == case.verdict
