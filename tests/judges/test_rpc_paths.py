"""Every judge path end to end through the gRPC server, with the fake judge CLI.

tests/judges/ proves each path at the JudgeService or evaluator level, and a handful through the RPC. Here each
host's recorded envelope and each failure mode of the fake judge (slow, hanging, crashing, empty, garbage, JSONL,
retries-exhausted, is_error, tags, huge output, missing binary) goes through `Evaluate`, as the issue's acceptance
asks, plus the gRPC deadline killing a judge, the comparator's workspace baseline being promoted, the second
opinion staying off unless configured, and the judge metrics the server exports.
"""

from __future__ import annotations

import json
from typing import Any

import grpc
import grpc.aio
import pytest
from prometheus_client import CollectorRegistry

from tests.judges.support import (
    RPC_OUTPUT,
    RPC_YES,
    answer_stdout,
    chat_body,
    details,
    envelope,
    llm_request,
)
from verdict.config.keys import JUDGE_TIMEOUT_CEILING_SECONDS
from verdict.judges.clis import CLI_HOSTS
from verdict.judges.interpret import MAX_JUDGE_OUTPUT_BYTES
from verdict.v1 import verdict_pb2

OUTPUT = RPC_OUTPUT
YES = RPC_YES
HOSTS = sorted(CLI_HOSTS)
pytestmark = pytest.mark.usefixtures("homes_under_scratch")


# Every host's recorded success envelope, through the RPC (the reference's parser failed codex, gemini, kimi, omp).


@pytest.mark.parametrize("host", HOSTS)
async def test_every_hosts_envelope_gives_a_verified_verdict_through_the_rpc(serve, fake_judges, host):
    fake_judges.answer(host, YES)
    async with serve(host) as stub:
        response = await stub.Evaluate(llm_request(), timeout=30)
    assert response.verdict == "yes", details(response)
    assert details(response)["evidence_verified"] is True
    assert details(response)["judge_host"] == host
    [call] = fake_judges.calls()
    assert call["refused"] is None


@pytest.mark.parametrize(
    ("host", "stdout", "stderr", "rc", "message"),
    [
        ("claude-code", envelope("claude-code", "not-logged-in.json"), "", 1, "Not logged in"),
        ("gemini", "", envelope("gemini", "not-authenticated.stderr.txt"), 41, "Please set an Auth method"),
        ("qwen", envelope("qwen", "not-authenticated.jsonl"), "", 1, "No auth type is selected"),
        ("qwen", envelope("qwen", "api-error-as-answer.jsonl"), "", 0, "[API Error: Connection error."),
        ("codex", envelope("codex", "turn-failed.jsonl"), "", 0, "stream disconnected before completion"),
    ],
    ids=["claude-not-logged-in", "gemini-no-auth", "qwen-no-auth", "qwen-api-error-as-answer", "codex-turn-failed"],
)
async def test_each_hosts_own_error_report_is_error_with_its_message(
    serve, fake_judges, host, stdout, stderr, rc, message
):
    fake_judges.scenario({"stdout": stdout, "stderr": stderr, "rc": rc})
    async with serve(host) as stub:
        response = await stub.Evaluate(llm_request(), timeout=30)
    found = details(response)
    assert response.verdict == "error"
    assert found["api_error"] is True
    assert message in found["error"]
    assert "Empty result field" not in found["error"]


# The fake judge's failure modes and the reference's envelope fallbacks, through the RPC.


def _huge_then(stdout: str) -> dict[str, Any]:
    return {"huge": MAX_JUDGE_OUTPUT_BYTES + 256 * 1024, "stdout": stdout}


MODES: list[tuple[str, str, dict[str, Any], str, dict[str, Any]]] = [
    # (id, host, scenario step, verdict, details that must be present)
    ("slow", "claude-code", {"sleep": 1.5, "stdout": answer_stdout("claude-code", YES)}, "yes", {}),
    ("crash-signal", "claude-code", {"signal": "SIGKILL"}, "error", {"api_error": True, "signal": "SIGKILL"}),
    (
        "crash-exit",
        "claude-code",
        {"stderr": "Segmentation fault in the judge", "rc": 3},
        "error",
        {"api_error": True, "exit_code": 3.0},
    ),
    ("empty", "claude-code", {"stdout": "", "stderr": "nothing to say", "rc": 0}, "error", {"empty_output": True}),
    ("garbage", "claude-code", {"stdout": "this is not JSON at all"}, "error", {}),
    ("jsonl-last-line", "claude-code", {"stdout": envelope("claude-code", "stream.jsonl")}, "yes", {}),
    ("result-as-string", "claude-code", {"stdout": envelope("claude-code", "success-result-string.json")}, "yes", {}),
    ("bare-verdict", "claude-code", {"stdout": envelope("claude-code", "bare-verdict.json")}, "yes", {}),
    ("tags", "claude-code", {"stdout": envelope("claude-code", "tags.json")}, "yes", {}),
    (
        "retries-exhausted",
        "claude-code",
        {"stdout": envelope("claude-code", "retries-exhausted.json"), "rc": 1},
        "error",
        {"api_error": True, "retries_exhausted": True},
    ),
    (
        "is-error-exit-0",
        "claude-code",
        {"stdout": envelope("claude-code", "not-logged-in.json"), "rc": 0},
        "error",
        {"api_error": True},
    ),
    ("huge-stream-tail", "qwen", _huge_then(answer_stdout("qwen", YES)), "yes", {}),
    ("huge-single-object", "claude-code", _huge_then(answer_stdout("claude-code", YES)), "error", {}),
]


@pytest.mark.parametrize(("host", "step", "verdict", "expected"), [m[1:] for m in MODES], ids=[m[0] for m in MODES])
async def test_failure_modes_and_fallbacks_through_the_rpc(serve, fake_judges, host, step, verdict, expected):
    fake_judges.scenario(step)
    async with serve(host) as stub:
        response = await stub.Evaluate(llm_request(), timeout=60)
    found = details(response)
    assert response.verdict == verdict, found
    for key, value in expected.items():
        assert found[key] == value, (key, found)
    if verdict == "yes":
        assert found["evidence_verified"] is True
    else:
        assert found["error"], found


async def test_garbage_is_a_parse_error_with_a_preview_through_the_rpc(serve, fake_judges):
    fake_judges.scenario({"stdout": "this is not JSON at all"})
    async with serve() as stub:
        response = await stub.Evaluate(llm_request(), timeout=30)
    found = details(response)
    assert response.verdict == "error"
    assert found["error"].startswith("Failed to parse LLM response")
    assert found["raw_preview"] == "this is not JSON at all"


async def test_a_cut_single_object_says_it_was_cut_through_the_rpc(serve, fake_judges):
    fake_judges.scenario(_huge_then(answer_stdout("claude-code", YES)))
    async with serve() as stub:
        response = await stub.Evaluate(llm_request(), timeout=60)
    assert response.verdict == "error"
    assert f"cut at {MAX_JUDGE_OUTPUT_BYTES} bytes" in details(response)["error"]


async def test_a_missing_judge_binary_is_error_with_missing_dependency_through_the_rpc(serve, fake_judges):
    async with serve() as stub:
        (fake_judges.bin_dir / "claude").unlink()
        response = await stub.Evaluate(llm_request(), timeout=30)
    found = details(response)
    assert response.verdict == "error"
    assert found["missing_dependency"] is True
    assert "claude CLI not found" in found["error"]


async def test_the_grpc_deadline_kills_a_hanging_judge_and_its_child(serve, fake_judges):
    """judge_timeout_seconds is 600, the caller waits 4 s: the judge gets the caller's time, not its own, and its
    process group (the orphan-making child included) is killed within it."""
    fake_judges.scenario({"hang": True, "orphan": True})
    async with serve(judge_timeout_seconds=600) as stub:
        call = stub.Evaluate(llm_request(), timeout=4)
        code = await call.code()
        # the verdict may lose the race with the deadline on a loaded machine; the judge must be dead either way
        assert code in (grpc.StatusCode.OK, grpc.StatusCode.DEADLINE_EXCEEDED)
        if code is grpc.StatusCode.OK:
            response = await call
            assert response.verdict == "error"
            assert details(response)["timeout"] is True
    assert len(fake_judges.calls()) == 1
    # the serve fixture asserts no process group is left; conftest's check finds the orphan if it survived


# comparator in workspace mode: the baseline file inside workspace_root, both orders, promotion writes the file.


async def test_comparator_promotes_a_winning_output_into_the_workspace_file(serve, fake_judges, tmp_path):
    root = tmp_path / "root"
    (root / "loop" / "baselines").mkdir(parents=True)
    baseline_file = root / "loop" / "baselines" / "output.txt"
    baseline_file.write_text("OLD baseline output")
    wins = {"verdict_a": "yes", "verdict_b": "no", "confidence": 0.9, "reason": "the new output is complete"}
    loses = {"verdict_a": "no", "verdict_b": "yes", "confidence": 0.9, "reason": "the new output is complete"}
    # the new output passes in whichever position it is shown: a real difference, which survives the swap
    fake_judges.scenario(
        {
            "stdout": answer_stdout("claude-code", loses),
            "match": [{"contains": "<output_a>\nNEW", "stdout": answer_stdout("claude-code", wins)}],
        }
    )
    request = verdict_pb2.EvaluateRequest(
        config=verdict_pb2.EvaluatorConfig(
            comparator=verdict_pb2.ComparatorConfig(baseline_path="baselines", auto_promote=True)
        ),
        output="NEW output",
        workspace="loop",
    )
    async with serve(workspace_root=str(root)) as stub:
        response = await stub.Evaluate(request, timeout=30)
    found = details(response)
    assert response.verdict == "yes", found
    assert found["promoted"] is True
    assert (found["harness_wins"], found["baseline_wins"]) == (1, 0)
    assert baseline_file.read_text() == "NEW output"
    prompts = sorted(call["prompt"].split("<output_a>\n", 1)[1][:3] for call in fake_judges.calls())
    assert prompts == ["NEW", "OLD"], "one order with the output as A, one with it as B"


async def test_comparator_without_a_baseline_file_bootstraps_it_through_the_rpc(serve, fake_judges, tmp_path):
    root = tmp_path / "root"
    (root / "loop").mkdir(parents=True)
    request = verdict_pb2.EvaluateRequest(
        config=verdict_pb2.EvaluatorConfig(
            comparator=verdict_pb2.ComparatorConfig(baseline_path="baselines", auto_promote=True)
        ),
        output="first output",
        workspace="loop",
    )
    async with serve(workspace_root=str(root)) as stub:
        response = await stub.Evaluate(request, timeout=30)
        no_promote = verdict_pb2.EvaluateRequest()
        no_promote.CopyFrom(request)
        no_promote.config.comparator.baseline_path = "elsewhere"
        no_promote.config.comparator.auto_promote = False
        missing = await stub.Evaluate(no_promote, timeout=30)
    assert response.verdict == "yes"
    assert details(response)["bootstrapped"] is True
    assert (root / "loop" / "baselines" / "output.txt").read_text() == "first output"
    assert missing.verdict == "no_baseline"
    assert fake_judges.calls() == []


# The second opinion is off unless configured, and a malfunctioning CLI judge is no sample.

LONG_PROSE = "A long prose answer that goes on. " * 300 + "And then"


async def test_the_second_opinion_is_off_by_default(serve, chat_server):
    request = verdict_pb2.VerifyResponseRequest(text=LONG_PROSE, completion_tokens=5000, request_text="Explain.")
    async with serve(judge_host=chat_server.url) as stub:
        response = await stub.VerifyResponse(request, timeout=30)
    assert response.verdict == verdict_pb2.VERIFY_VERDICT_UNVERIFIABLE
    assert not response.HasField("second_opinion")
    assert chat_server.requests == []


async def test_a_tool_call_turn_gets_no_second_opinion_through_the_rpc(serve, chat_server):
    chat_server.replies = [(200, chat_body(json.dumps({"ok": False, "reason": "ends mid-sentence"})))]
    request = verdict_pb2.VerifyResponseRequest(
        text=LONG_PROSE, completion_tokens=5000, request_text="Explain.", has_tool_calls=True
    )
    async with serve(second_opinion=True, second_opinion_host=chat_server.url) as stub:
        response = await stub.VerifyResponse(request, timeout=30)
    assert not response.HasField("second_opinion")
    assert chat_server.requests == []


@pytest.mark.parametrize(
    "step",
    [{"stdout": "garbage"}, {"signal": "SIGKILL"}, {"stdout": answer_stdout("claude-code", {"ok": "yes"})}],
    ids=["garbage", "crash", "ok-not-a-boolean"],
)
async def test_a_malfunctioning_cli_second_opinion_is_no_sample_through_the_rpc(serve, fake_judges, step):
    fake_judges.scenario(step)
    request = verdict_pb2.VerifyResponseRequest(text=LONG_PROSE, completion_tokens=5000, request_text="Explain.")
    async with serve(second_opinion=True, second_opinion_host="claude-code") as stub:
        response = await stub.VerifyResponse(request, timeout=30)
    assert response.verdict == verdict_pb2.VERIFY_VERDICT_UNVERIFIABLE
    assert not response.failed
    assert not response.HasField("second_opinion")
    assert len(fake_judges.calls()) == 1


# Metrics, as the server exports them after RPCs.


def _sample(registry: CollectorRegistry, name: str, **labels: str) -> float:
    value = registry.get_sample_value(name, labels)
    return 0.0 if value is None else float(value)


async def test_judge_metrics_after_rpcs(serve, fake_judges):
    fake_judges.scenario(
        {"stdout": answer_stdout("claude-code", YES), "match": [{"contains": "BROKEN", "stdout": "garbage"}]}
    )
    registry = CollectorRegistry()
    async with serve(registry=registry) as stub:
        await stub.Evaluate(llm_request(), timeout=30)
        await stub.Evaluate(llm_request(output="BROKEN"), timeout=30)
        assert _sample(registry, "verdict_judge_calls_total", host="claude-code", outcome="ok") == 1
        assert _sample(registry, "verdict_judge_calls_total", host="claude-code", outcome="parse_error") == 1
        assert _sample(registry, "verdict_judge_duration_seconds_count", host="claude-code") == 2
        assert _sample(registry, "verdict_judge_cost_usd_total", host="claude-code") == pytest.approx(0.0123)
        # the model the envelope names is not on the (empty) allow-list: it is folded, never a label of its own
        assert _sample(registry, "verdict_judge_tokens_total", host="claude-code", model="other", kind="input") == 1520
        families = {family.name: family for family in registry.collect()}
        bounds = {
            float(sample.labels["le"])
            for sample in families["verdict_judge_duration_seconds"].samples
            if sample.name.endswith("_bucket")
        }
    finite = sorted(bound for bound in bounds if bound != float("inf"))
    assert finite[-1] >= JUDGE_TIMEOUT_CEILING_SECONDS, "a judge at its longest timeout falls in a finite bucket"
