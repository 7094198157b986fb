"""JudgeService end to end with the fake judge CLI and the real runner: the failure order, what each CLI is given,
timeouts, cancellation, deadlines, the bounded queue and the metrics."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import time

import pytest

from tests.judges.support import answer_stdout, envelope, sample
from verdict.errors import DeadlineTooShort, FailedPrecondition, InvalidConfig, ResourceExhausted
from verdict.judges import HOSTS, HostRegistry, JudgeOutcome, JudgeRequest
from verdict.judges.service import DEADLINE_MARGIN_SECONDS, MIN_JUDGE_SECONDS

ANSWER = {"verdict": "yes", "confidence": 0.9, "reason": "ok", "evidence": "All 42 tests passed"}
SCHEMA = {"type": "object"}


def ask(prompt: str = "Judge this.", **fields) -> JudgeRequest:
    return JudgeRequest(prompt=prompt, schema=SCHEMA, **fields)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


async def test_an_answer_comes_back_with_its_payload(judge_service, fake_judges):
    service = judge_service("claude-code")
    fake_judges.answer("claude-code", ANSWER)
    answer = await service.ask(ask())
    assert answer.outcome is JudgeOutcome.OK
    assert answer.payload == ANSWER
    assert answer.host == "claude-code"


async def test_the_prompt_goes_on_stdin_so_its_size_is_not_an_argv_limit(judge_service, fake_judges):
    service = judge_service("claude-code")
    fake_judges.answer("claude-code", ANSWER)
    prompt = "p" * 200_000
    answer = await service.ask(ask(prompt))
    assert answer.ok
    [call] = fake_judges.calls()
    assert call["prompt"] == prompt
    assert all(len(arg) < 1000 for arg in call["argv"])


async def test_a_prompt_too_big_for_an_argv_host_is_refused_without_starting_it(judge_service, fake_judges):
    service = judge_service("kimi-code")
    answer = await service.ask(ask("p" * 200_000))
    assert answer.outcome is JudgeOutcome.REJECTED
    assert answer.flags["prompt_too_large"] is True
    assert fake_judges.calls() == []


async def test_a_schema_too_big_for_an_argument_is_named_as_the_schema(judge_service, fake_judges):
    """claude takes its prompt on stdin but its schema as an argument: the refusal blamed "the prompt"."""
    service = judge_service("claude-code")
    schema = {"type": "object", "description": "d" * 200_000}
    answer = await service.ask(JudgeRequest(prompt="Judge this.", schema=schema))
    assert answer.outcome is JudgeOutcome.REJECTED
    assert answer.flags == {"schema_too_large": True}
    assert answer.error.startswith("the JSON schema (")
    assert fake_judges.calls() == []


async def test_each_call_gets_a_private_home_and_cwd_that_are_removed_after(judge_service, fake_judges, scratch):
    service = judge_service("claude-code", env={"ANTHROPIC_API_KEY": "sk-test", "SERVER_SECRET": "x"})
    fake_judges.answer("claude-code", ANSWER)
    await service.ask(ask())
    await service.ask(ask())
    first, second = fake_judges.calls()
    assert first["env"]["HOME"].startswith(str(scratch))
    assert first["cwd"].startswith(str(scratch))
    assert first["env"]["HOME"] != second["env"]["HOME"]
    assert first["env"]["ANTHROPIC_API_KEY"] == "sk-test"
    assert "SERVER_SECRET" not in first["env"]
    assert first["env"]["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert list(scratch.iterdir()) == []


async def test_claude_is_not_refused_as_root(judge_service, fake_judges):
    service = judge_service("claude-code")
    fake_judges.answer("claude-code", ANSWER)
    assert (await service.ask(ask())).ok
    [call] = fake_judges.calls()
    assert call["refused"] is None
    assert ("IS_SANDBOX" in call["env"]) == (os.geteuid() == 0)


async def test_gemini_runs_in_an_untrusted_fresh_directory(judge_service, fake_judges):
    service = judge_service("gemini")
    fake_judges.answer("gemini", ANSWER)
    answer = await service.ask(ask())
    assert answer.ok, answer.error
    [call] = fake_judges.calls()
    assert call["prompt"].startswith("Judge this.")
    assert "JSON schema" in call["prompt"]


@pytest.mark.parametrize("host", ["claude-code", "codex", "gemini", "qwen", "kimi-code", "omp"])
async def test_every_host_is_invoked_the_way_its_cli_accepts(judge_service, fake_judges, host):
    service = judge_service(host)
    fake_judges.answer(host, ANSWER)
    answer = await service.ask(ask(model="sonnet"))
    assert answer.ok, answer.error
    assert answer.payload == ANSWER
    [call] = fake_judges.calls()
    assert call["refused"] is None
    assert call["prompt"].startswith("Judge this.")


# The failure order: timeout → missing binary → non-zero exit → empty stdout → parse.


async def test_a_hanging_judge_is_killed_at_its_timeout_with_its_children(judge_service, fake_judges):
    service = judge_service("codex", judge_timeout_seconds=1)
    fake_judges.scenario({"hang": True, "orphan": True})
    answer = await service.ask(ask())
    assert answer.outcome is JudgeOutcome.TIMEOUT
    assert answer.flags == {"timeout": True}
    assert answer.error == "LLM evaluation timeout"
    [orphan] = fake_judges.orphans()
    for _ in range(3000):  # up to 30 s; a killed orphan is gone in milliseconds
        if not alive(orphan):
            break
        await asyncio.sleep(0.01)
    assert not alive(orphan)


async def test_a_missing_binary(judge_service, fake_judges):
    service = judge_service("claude-code")
    (fake_judges.bin_dir / "claude").unlink()
    answer = await service.ask(ask())
    assert answer.outcome is JudgeOutcome.MISSING
    assert answer.flags == {"missing_dependency": True}
    assert "claude CLI not found" in answer.error


async def test_claude_failing_with_exit_1_is_read_from_its_stdout_envelope(judge_service, fake_judges):
    service = judge_service("claude-code")
    fake_judges.scenario({"stdout": envelope("claude-code", "not-logged-in.json"), "rc": 1})
    answer = await service.ask(ask())
    assert answer.outcome is JudgeOutcome.API_ERROR
    assert answer.error.startswith("claude CLI error: Not logged in · Please run /login (to authenticate")
    assert "ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN or CLAUDE_CODE_OAUTH_TOKEN" in answer.error
    assert answer.flags == {"api_error": True, "exit_code": 1, "credentials": True}


async def test_retries_exhausted_with_exit_1_keeps_its_flag_and_its_cost(judge_service, fake_judges, metrics):
    """claude exits 1 whenever its envelope says is_error; the reply read for the cause was then thrown away, so the
    retries-exhausted flag never appeared and the cost of the retries was never counted."""
    service = judge_service("claude-code")
    fake_judges.scenario({"stdout": envelope("claude-code", "retries-exhausted.json"), "rc": 1})
    answer = await service.ask(ask())
    assert answer.outcome is JudgeOutcome.API_ERROR
    assert answer.flags == {"api_error": True, "exit_code": 1, "retries_exhausted": True}
    assert sample(metrics, "verdict_judge_cost_usd_total", host="claude-code") == pytest.approx(0.0123)
    tokens = "verdict_judge_tokens_total"
    assert sample(metrics, tokens, host="claude-code", model="claude-sonnet-4-5", kind="input") == 1520


async def test_a_huge_error_message_in_a_failing_envelope_is_clipped(judge_service, fake_judges):
    failing = {**json.loads(envelope("claude-code", "not-logged-in.json")), "result": "API Error: " + "x" * 5_000_000}
    service = judge_service("claude-code")
    fake_judges.scenario({"stdout": json.dumps(failing), "rc": 1})
    answer = await service.ask(ask())
    assert answer.outcome is JudgeOutcome.API_ERROR
    assert answer.error.startswith("claude CLI error: API Error: xxx")
    assert len(answer.error) < 1000


async def test_gemini_failing_is_read_from_the_json_on_its_stderr(judge_service, fake_judges):
    service = judge_service("gemini")
    fake_judges.scenario({"stderr": envelope("gemini", "not-authenticated.stderr.txt"), "rc": 41})
    answer = await service.ask(ask())
    assert answer.outcome is JudgeOutcome.API_ERROR
    assert answer.error.startswith("gemini CLI error: Please set an Auth method")


async def test_a_crash_reports_its_stderr_or_signal(judge_service, fake_judges):
    service = judge_service("codex")
    fake_judges.scenario({"stderr": "thread 'main' panicked at src/main.rs:1\n", "rc": 101})
    answer = await service.ask(ask())
    assert answer.outcome is JudgeOutcome.API_ERROR
    assert "panicked" in answer.error
    fake_judges.scenario({"signal": "SIGSEGV"})
    answer = await service.ask(ask())
    assert answer.outcome is JudgeOutcome.API_ERROR
    assert answer.flags["signal"] == "SIGSEGV"


async def test_a_wrong_flag_would_be_caught_by_the_fake_as_by_the_real_cli(judge_service, fake_judges):
    codex = HOSTS.by_name["codex"]

    def with_a_typo(*args):
        invocation = codex.build(*args)
        return dataclasses.replace(invocation, argv=(*invocation.argv[:2], "--skip-git-check", *invocation.argv[2:]))

    typo = dataclasses.replace(codex, build=with_a_typo)
    registry = HostRegistry(tuple(typo if host is codex else host for host in HOSTS))
    answer = await judge_service("codex", hosts=registry).ask(ask())
    assert answer.outcome is JudgeOutcome.API_ERROR
    assert answer.flags["exit_code"] == 2
    assert "error: unexpected argument '--skip-git-check' found" in answer.error


async def test_a_model_name_that_looks_like_a_flag_is_refused(judge_service, fake_judges):
    with pytest.raises(InvalidConfig) as caught:
        await judge_service("codex").ask(ask(model="--dangerously-bypass-approvals-and-sandbox"))
    assert caught.value.field == "config.model"
    assert fake_judges.calls() == []


async def test_empty_output_names_stderr(judge_service, fake_judges):
    service = judge_service("claude-code")
    fake_judges.scenario({"stdout": "  \n", "stderr": "rate limited"})
    answer = await service.ask(ask())
    assert answer.outcome is JudgeOutcome.EMPTY
    assert answer.flags == {"empty_output": True}
    assert answer.error == "claude CLI returned empty output (stderr: rate limited)"


async def test_garbage_is_a_parse_error_with_a_preview(judge_service, fake_judges):
    service = judge_service("claude-code")
    fake_judges.scenario({"stdout": "I think the answer is yes.\n"})
    answer = await service.ask(ask())
    assert answer.outcome is JudgeOutcome.PARSE_ERROR
    assert answer.flags["raw_preview"] == "I think the answer is yes.\n"


async def test_retries_exhausted_and_is_error(judge_service, fake_judges):
    service = judge_service("claude-code")
    fake_judges.scenario({"stdout": envelope("claude-code", "retries-exhausted.json")})
    answer = await service.ask(ask())
    assert answer.outcome is JudgeOutcome.API_ERROR
    assert answer.flags == {"api_error": True, "retries_exhausted": True}
    fake_judges.scenario({"stdout": envelope("claude-code", "not-logged-in.json"), "rc": 0})
    answer = await service.ask(ask())
    assert answer.error == "claude CLI reported error: Not logged in · Please run /login"


async def test_an_empty_result_field(judge_service, fake_judges):
    service = judge_service("claude-code")
    fake_judges.scenario({"stdout": json.dumps({"type": "result", "subtype": "success", "result": ""})})
    answer = await service.ask(ask())
    assert answer.outcome is JudgeOutcome.PARSE_ERROR
    assert "Empty result field" in answer.error


async def test_a_huge_stream_before_the_final_event_is_still_read(judge_service, fake_judges):
    service = judge_service("qwen")
    fake_judges.scenario({"huge": 3_000_000, "stdout": answer_stdout("qwen", ANSWER)})
    answer = await service.ask(ask())
    assert answer.ok, answer.error


async def test_a_stream_over_the_cap_keeps_its_tail_where_the_answer_is(judge_service, fake_judges):
    service = judge_service("qwen")
    fake_judges.scenario({"huge": 10_000_000, "stdout": answer_stdout("qwen", ANSWER)})
    answer = await service.ask(ask())
    assert answer.ok, answer.error


async def test_output_beyond_the_cap_is_a_parse_error_that_says_it_was_cut(judge_service, fake_judges):
    service = judge_service("claude-code")
    fake_judges.scenario({"huge": 10_000_000, "stdout": answer_stdout("claude-code", ANSWER)})
    answer = await service.ask(ask())
    assert answer.outcome is JudgeOutcome.PARSE_ERROR
    assert "cut at" in answer.error


# Cancellation, deadlines, the queue.


async def test_cancelling_the_call_kills_the_judge_and_its_children(judge_service, fake_judges, metrics):
    service = judge_service("gemini")
    fake_judges.scenario({"hang": True, "orphan": True})
    task = asyncio.ensure_future(service.ask(ask()))
    await fake_judges.wait_for_calls(1)
    for _ in range(3000):  # up to 30 s for the judge's child to start
        if fake_judges.orphans():
            break
        await asyncio.sleep(0.01)
    [orphan] = fake_judges.orphans()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(3000):  # up to 30 s; a killed orphan is gone in milliseconds
        if not alive(orphan):
            break
        await asyncio.sleep(0.01)
    assert not alive(orphan)
    assert sample(metrics, "verdict_judge_calls_total", host="gemini", outcome="cancelled") == 1


async def test_no_judge_is_started_when_the_deadline_leaves_no_time(judge_service, fake_judges, metrics):
    service = judge_service("claude-code")
    fake_judges.answer("claude-code", ANSWER)
    with pytest.raises(DeadlineTooShort):
        await service.ask(ask(deadline=time.monotonic() + 1.0))
    assert fake_judges.calls() == []
    assert sample(metrics, "verdict_judge_calls_total", host="claude-code", outcome="rejected") == 1


async def test_the_deadline_caps_the_judge_timeout(judge_service, fake_judges, monkeypatch):
    """The judge is given what the caller's deadline leaves, less the margin for sending the verdict, not its own
    600 s. Checked on the time limit the runner is handed, not by racing the kill against the deadline's last half
    second (a loaded machine's scheduling); 3 s leaves 1.5 s of slack before the deadline is too short to start."""
    service = judge_service("claude-code", judge_timeout_seconds=600)
    fake_judges.scenario({"hang": True})
    limits: list[float] = []
    run = service.runner.run

    async def spy(command):
        limits.append(command.timeout)
        return await run(command)

    monkeypatch.setattr(service.runner, "run", spy)
    deadline = time.monotonic() + 3.0
    answer = await service.ask(ask(deadline=deadline))
    assert answer.outcome is JudgeOutcome.TIMEOUT
    assert len(limits) == 1
    assert MIN_JUDGE_SECONDS <= limits[0] <= 3.0 - DEADLINE_MARGIN_SECONDS


async def test_a_full_queue_is_resource_exhausted(judge_service, fake_judges, metrics):
    service = judge_service("claude-code", max_concurrent_judges=1, judge_queue_size=1)
    fake_judges.scenario({"hang": True})
    running = asyncio.ensure_future(service.ask(ask()))
    await fake_judges.wait_for_calls(1)
    queued = asyncio.ensure_future(service.ask(ask()))
    for _ in range(3000):  # up to 30 s for the second call to reach the queue
        if sample(metrics, "verdict_judges_waiting") == 1:
            break
        await asyncio.sleep(0.01)
    assert sample(metrics, "verdict_judges_waiting") == 1
    with pytest.raises(ResourceExhausted) as caught:
        await service.ask(ask())
    assert caught.value.reason == "TOO_MANY_CONCURRENT_CALLS"
    for task in (queued, running):
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert len(fake_judges.calls()) == 1
    assert sample(metrics, "verdict_judges_waiting") == 0


async def test_a_deadline_passing_in_the_queue_is_deadline_exceeded(judge_service, fake_judges):
    service = judge_service("claude-code", max_concurrent_judges=1, judge_queue_size=4)
    fake_judges.scenario({"hang": True})
    running = asyncio.ensure_future(service.ask(ask()))
    await fake_judges.wait_for_calls(1)
    # What a judge needs to start, plus 1.5 s: the deadline passes in the queue, however long reaching it takes
    # (up to 1.5 s, where it takes microseconds), never before the first check of the deadline.
    with pytest.raises(DeadlineTooShort, match="waiting for a free judge slot"):
        await service.ask(ask(deadline=time.monotonic() + DEADLINE_MARGIN_SECONDS + MIN_JUDGE_SECONDS + 1.5))
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await running


async def test_no_host_at_all_is_a_failed_precondition(judge_service):
    service = judge_service("", env={"PATH": ""})
    with pytest.raises(FailedPrecondition, match="no judge host"):
        await service.ask(ask())


async def test_the_path_probe_finds_a_cli_installed_later(judge_service, fake_judges):
    service = judge_service("")
    assert service.host is None
    fake_judges.install("qwen")
    fake_judges.answer("qwen", ANSWER)
    assert (await service.ask(ask())).host == "qwen"


# Metrics.


async def test_metrics_count_calls_cost_and_tokens_with_models_folded(judge_service, fake_judges, metrics):
    claude = judge_service("claude-code")
    fake_judges.answer("claude-code", ANSWER)
    await claude.ask(ask())
    assert sample(metrics, "verdict_judge_calls_total", host="claude-code", outcome="ok") == 1
    assert sample(metrics, "verdict_judge_duration_seconds_count", host="claude-code") == 1
    assert sample(metrics, "verdict_judge_cost_usd_total", host="claude-code") == pytest.approx(0.0123)
    tokens = "verdict_judge_tokens_total"
    assert sample(metrics, tokens, host="claude-code", model="claude-sonnet-4-5", kind="input") == 1520
    assert sample(metrics, tokens, host="claude-code", model="claude-sonnet-4-5", kind="output") == 85
    codex = judge_service("codex", judge_model="gpt-5-codex")
    fake_judges.answer("codex", ANSWER)
    await codex.ask(ask())
    assert sample(metrics, tokens, host="codex", model="other", kind="input") == 1650
    fake_judges.scenario({"stdout": "garbage"})
    await codex.ask(ask())
    assert sample(metrics, "verdict_judge_calls_total", host="codex", outcome="parse_error") == 1
