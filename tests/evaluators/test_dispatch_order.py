"""Edges of the dispatcher's order that the behaviour table in tests/evaluators/cases.py does not pin yet,
run like the table (pure functions; `Evaluations.evaluate` with the dict and YAML forms; the RPC with the typed and
YAML forms), and the `yaml` member fed JSON text (the block may be YAML or JSON) for every table row over the wire.

Each expected verdict below follows little-loops' own evaluators: `path[1:]` strips exactly one
leading dot; `str.isdigit()` takes "01"; `splitlines()` splits on CR and U+2028 too and `ln.strip()` drops
whitespace-only lines; `envelope.get("isError", exit_code != 0)` is truthiness of a present key; harbor_scorer and
exit_code read any non-zero exit themselves.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from google.protobuf import json_format
from prometheus_client import CollectorRegistry

from tests.evaluators.cases import CASES, Case, details_match, typed_config, yaml_config, yaml_text
from tests.evaluators.test_deterministic import judge
from tests.support import Running, make_config, serving
from verdict.config.keys import Config
from verdict.evaluators import EvaluationInput, Evaluations, load_evaluate_block
from verdict.metrics import Metrics
from verdict.runner import Runner
from verdict.v1 import verdict_pb2

_PREV_10 = {"prev": {"output": "10"}}


def _maximize(**extra: Any) -> dict[str, Any]:
    return {"type": "convergence", "target": 20.0, "previous": "${prev.output}", "direction": "maximize", **extra}


def _json(path: str) -> dict[str, Any]:
    return {"type": "output_json", "path": path, "operator": "eq", "target": 1.0}


EDGES: tuple[Case, ...] = (
    Case("convergence maximize worse is stall", _maximize(), "9", "stall", {"delta": -1.0}, context=_PREV_10),
    Case("convergence maximize no change is stall", _maximize(), "10", "stall", {"delta": 0.0}, context=_PREV_10),
    Case("json strips exactly one leading dot", _json("..a"), '{"": {"a": 1}}', "yes", {"value": 1}),
    Case(
        "json second leading dot is an empty key", _json("..a"), '{"a": 1}', "error", {"error": "Path not found: ..a"}
    ),
    Case("json index with a leading zero", _json("a.01"), '{"a": [0, 1]}', "yes", {"value": 1}),
    Case("classify splits on CR like splitlines", {"type": "classify"}, "A\rB", "B"),
    Case("classify splits on U+2028 like splitlines", {"type": "classify"}, "A\u2028B", "B"),
    Case("classify drops whitespace-only lines", {"type": "classify"}, "A\n \t\n", "A"),
    Case(
        "mcp isError null is falsy even with exit 1",
        {"type": "mcp_result"},
        '{"isError": null}',
        "success",
        exit_code=1,
    ),
    Case("mcp isError 0 is falsy", {"type": "mcp_result"}, '{"isError": 0}', "success", exit_code=1),
    Case("mcp isError string is truthy", {"type": "mcp_result"}, '{"isError": "false"}', "tool_error"),
    Case("mcp whitespace output is an empty envelope", {"type": "mcp_result"}, " \n ", "success", {"envelope": {}}),
    Case("harbor reads a signal exit itself", {"type": "harbor_scorer"}, "1.0", "no", {"exit_code": -9}, exit_code=-9),
    Case("exit_code negative is error", {"type": "exit_code"}, "", "error", {"exit_code": -9}, exit_code=-9),
)


@pytest.mark.parametrize("case", EDGES, ids=str)
async def test_edge_on_the_pure_functions(case: Case) -> None:
    judgement = await judge(case)
    assert judgement.verdict == case.verdict
    assert details_match(judgement.details, case.details), judgement.details


@pytest.mark.parametrize("case", EDGES, ids=str)
@pytest.mark.parametrize("form", ["dict", "yaml"])
async def test_edge_through_evaluations(case: Case, form: str) -> None:
    metrics = Metrics(CollectorRegistry())
    evaluations = Evaluations(Config(), Runner(metrics), metrics)
    config = dict(case.config) if form == "dict" else load_evaluate_block(yaml_text(case))
    result = await evaluations.evaluate(EvaluationInput(config, case.output, case.exit_code, case.context))
    assert result.verdict == case.verdict
    assert details_match(result.details, case.details), result.details


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[Running]:
    async with serving(make_config()) as running:
        yield running


def _request(case: Case, config: verdict_pb2.EvaluatorConfig) -> verdict_pb2.EvaluateRequest:
    request = verdict_pb2.EvaluateRequest(config=config, output=case.output, exit_code=case.exit_code)
    if case.context:
        json_format.ParseDict(dict(case.context), request.context)
    return request


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("case", EDGES, ids=str)
@pytest.mark.parametrize("form", ["typed", "yaml"])
async def test_edge_through_the_rpc(server: Running, case: Case, form: str) -> None:
    config = typed_config(case) if form == "typed" else yaml_config(case)
    response = await server.stub.Evaluate(_request(case, config), timeout=30)
    assert response.verdict == case.verdict
    assert details_match(json_format.MessageToDict(response.details), case.details)


def _json_text(case: Case) -> str | None:
    """The row's block as JSON (`{"evaluate": {...}}`), or None when its YAML carries what JSON cannot."""
    if case.yaml is not None:
        return None
    try:
        return json.dumps({"evaluate": dict(case.config)}, allow_nan=False)
    except ValueError:
        return None


JSON_ROWS = [case for case in CASES if _json_text(case) is not None and case.typed]


def test_most_table_rows_have_a_json_form() -> None:
    assert len(JSON_ROWS) > 0.8 * len(CASES)


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("case", JSON_ROWS, ids=str)
async def test_a_json_block_in_the_yaml_member_answers_like_the_typed_form(server: Running, case: Case) -> None:
    text = _json_text(case)
    assert text is not None
    from_json = await server.stub.Evaluate(_request(case, verdict_pb2.EvaluatorConfig(yaml=text)), timeout=30)
    typed = await server.stub.Evaluate(_request(case, typed_config(case)), timeout=30)
    assert from_json == typed
    assert from_json.verdict == case.verdict
