"""Evaluate and ListEvaluators end to end: every table row of tests/evaluators/cases.py through a real server, in
both config forms (typed oneof member and little-loops YAML), plus state-token sequences, real git and a
catastrophic regex over the wire."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import pytest_asyncio
from google.protobuf import json_format
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from tests.evaluators.cases import CASES, REJECTED, Case, Rejected, details_match, typed_config, yaml_config
from tests.evaluators.test_diffstat import make_repo
from tests.support import Running, make_config, serving
from verdict.v1 import verdict_pb2
from verdict.verify.languages import LANGUAGES

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Running]:
    root = tmp_path_factory.mktemp("workspaces")
    async with serving(make_config(workspace_root=str(root), regex_timeout_seconds=0.5)) as running:
        yield running


def _request(case: Case | Rejected, config: verdict_pb2.EvaluatorConfig, **extra: Any) -> verdict_pb2.EvaluateRequest:
    request = verdict_pb2.EvaluateRequest(config=config, output=case.output, exit_code=case.exit_code, **extra)
    if case.context:
        json_format.ParseDict(dict(case.context), request.context)
    return request


def _forms(rows: tuple[Any, ...]) -> list[Any]:
    params = []
    for row in rows:
        params.append(pytest.param(row, "yaml", id=f"yaml:{row.name}"))
        if row.typed:
            params.append(pytest.param(row, "typed", id=f"typed:{row.name}"))
    return params


def _config(row: Case | Rejected, form: str) -> verdict_pb2.EvaluatorConfig:
    return typed_config(row) if form == "typed" else yaml_config(row)


@pytest.mark.parametrize(("case", "form"), _forms(CASES))
async def test_case_through_the_rpc(server: Running, case: Case, form: str) -> None:
    response = await server.stub.Evaluate(_request(case, _config(case, form)), timeout=30)
    assert response.verdict == case.verdict
    details = json_format.MessageToDict(response.details)
    assert details_match(details, case.details), details


@pytest.mark.parametrize(("case", "form"), _forms(REJECTED))
async def test_rejected_config_is_invalid_argument_naming_the_field(server: Running, case: Rejected, form: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await server.stub.Evaluate(_request(case, _config(case, form)), timeout=30)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    status = rpc_status.from_call(caught.value)
    assert status is not None
    bad_request = error_details_pb2.BadRequest()
    assert any(detail.Unpack(bad_request) for detail in status.details)
    assert bad_request.field_violations[0].field == case.field


async def test_typed_and_yaml_forms_give_identical_responses(server: Running) -> None:
    for case in CASES:
        if not case.typed:
            continue
        typed = await server.stub.Evaluate(_request(case, typed_config(case)), timeout=30)
        text = await server.stub.Evaluate(_request(case, yaml_config(case)), timeout=30)
        assert typed == text, case.name


async def test_list_evaluators_matches_the_proto(server: Running) -> None:
    catalogue = await server.stub.ListEvaluators(verdict_pb2.ListEvaluatorsRequest(), timeout=10)
    members = {f.name for f in verdict_pb2.EvaluatorConfig.DESCRIPTOR.oneofs_by_name["kind"].fields} - {"yaml"}
    assert {e.type for e in catalogue.evaluators} == members
    numeric = next(e for e in catalogue.evaluators if e.type == "output_numeric")
    assert {f.name for f in numeric.fields if f.required} == {"operator", "target"}
    assert set(numeric.verdicts) == {"yes", "no", "error"}
    classify = next(e for e in catalogue.evaluators if e.type == "classify")
    assert classify.open_verdicts
    stall = next(e for e in catalogue.evaluators if e.type == "action_stall")
    assert stall.stateful
    assert stall.exit_code_aware


async def test_list_evaluators_describes_every_verifier_language(server: Running) -> None:
    catalogue = await server.stub.ListEvaluators(verdict_pb2.ListEvaluatorsRequest(), timeout=10)
    names = [language.name for language in catalogue.languages]
    assert names == sorted(names)
    assert set(names) == {record.name for record in LANGUAGES.records}
    checked = {language.name for language in catalogue.languages if language.checked}
    assert {"python", "shell", "javascript", "typescript", "java", "c", "cpp", "csharp", "go", "rust"} <= checked
    assert {"ruby", "php", "css", "toml", "xml"} <= checked
    assert all(language.sees and language.blind_to for language in catalogue.languages if language.checked)
    assert all(language.unchecked_reason for language in catalogue.languages if not language.checked)


async def _stall(server: Running, action: str, state: bytes) -> verdict_pb2.EvaluateResponse:
    request = verdict_pb2.EvaluateRequest(
        config=verdict_pb2.EvaluatorConfig(yaml="type: action_stall\nmax_repeat: 2\n"), state=state
    )
    json_format.ParseDict({"context": {"action": action}}, request.context)
    return await server.stub.Evaluate(request, timeout=10)


async def test_action_stall_token_round_trip_replay_and_interleaving(server: Running) -> None:
    a1 = await _stall(server, "ls", b"")
    b1 = await _stall(server, "make", b"")
    a2 = await _stall(server, "ls", a1.state)
    b2 = await _stall(server, "make", b1.state)
    a3 = await _stall(server, "ls", a2.state)
    assert [a1.verdict, a2.verdict, a3.verdict] == ["yes", "yes", "no"]
    assert [b1.verdict, b2.verdict] == ["yes", "yes"]
    replayed = await _stall(server, "ls", a2.state)
    assert replayed == a3  # a retried call gives the same verdict and the same next token
    changed = await _stall(server, "pytest", a3.state)
    assert changed.verdict == "yes"


async def test_diff_stall_with_a_real_repository(server: Running) -> None:
    root = Path(server.app.config.workspace_root)
    repo = make_repo(root / "loop", {"a.txt": "one\n"})
    config = verdict_pb2.EvaluatorConfig(diff_stall=verdict_pb2.DiffStallConfig(max_stall=1))

    async def step(state: bytes) -> verdict_pb2.EvaluateResponse:
        return await server.stub.Evaluate(
            verdict_pb2.EvaluateRequest(config=config, workspace="loop", state=state), timeout=30
        )

    first = await step(b"")
    (repo / "a.txt").write_text("two\n")
    changed = await step(first.state)
    unchanged = await step(changed.state)
    assert [first.verdict, changed.verdict, unchanged.verdict] == ["yes", "yes", "no"]
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await server.stub.Evaluate(verdict_pb2.EvaluateRequest(config=config, workspace="/etc"), timeout=30)
    assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED


@pytest.mark.parametrize(
    ("workspace", "code"),
    [
        ("n" * 256, grpc.StatusCode.INVALID_ARGUMENT),  # a name the kernel answers with ENAMETOOLONG
        ("p/" * 2100, grpc.StatusCode.INVALID_ARGUMENT),  # a path past PATH_MAX
        ("linked", grpc.StatusCode.PERMISSION_DENIED),  # ELOOP: a link, even one staying inside the root
    ],
)
async def test_workspace_paths_the_kernel_refuses_are_the_callers_error(
    server: Running, workspace: str, code: grpc.StatusCode
) -> None:
    root = Path(server.app.config.workspace_root)
    if not (root / "linked").is_symlink():
        (root / "linked").symlink_to(".")
    config = verdict_pb2.EvaluatorConfig(diff_stall=verdict_pb2.DiffStallConfig(max_stall=1))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await server.stub.Evaluate(verdict_pb2.EvaluateRequest(config=config, workspace=workspace), timeout=30)
    assert caught.value.code() == code
    status = rpc_status.from_call(caught.value)
    assert status is not None
    info = error_details_pb2.ErrorInfo()
    assert any(detail.Unpack(info) for detail in status.details)
    assert info.metadata["field"] == "workspace"


async def test_catastrophic_regex_is_an_error_verdict_while_other_calls_answer(server: Running) -> None:
    slow = verdict_pb2.EvaluateRequest(
        config=verdict_pb2.EvaluatorConfig(output_contains=verdict_pb2.OutputContainsConfig(pattern="(a|aa)+$")),
        output="a" * 60 + "b",
    )
    pending = asyncio.ensure_future(server.stub.Evaluate(slow, timeout=30))
    quick = verdict_pb2.EvaluateRequest(config=verdict_pb2.EvaluatorConfig(exit_code=verdict_pb2.ExitCodeConfig()))
    answered = [await server.stub.Evaluate(quick, timeout=30) for _ in range(5)]
    assert not pending.done(), "the slow pattern must still be running while quick calls are answered"
    assert [r.verdict for r in answered] == ["yes"] * 5
    response = await pending
    assert response.verdict == "error"
    assert "time" in json_format.MessageToDict(response.details).get("error", "").lower()


async def test_evaluation_metrics(server: Running) -> None:
    quick = verdict_pb2.EvaluateRequest(config=verdict_pb2.EvaluatorConfig(exit_code=verdict_pb2.ExitCodeConfig()))
    before = (
        server.registry.get_sample_value("verdict_evaluations_total", {"evaluator": "exit_code", "verdict": "yes"}) or 0
    )
    await server.stub.Evaluate(quick, timeout=10)
    after = server.registry.get_sample_value("verdict_evaluations_total", {"evaluator": "exit_code", "verdict": "yes"})
    assert after == before + 1
    count = server.registry.get_sample_value("verdict_evaluation_duration_seconds_count", {"evaluator": "exit_code"})
    assert count is not None
    assert count >= 1
