"""VerifyResponse's second opinion: the gate, the excerpt, the parser, and 'an unusable reply is no sample'."""

from __future__ import annotations

import json
import time

import pytest

from tests.judges.support import answer_stdout, chat_body, sample
from verdict.config.keys import Config
from verdict.errors import ConfigError
from verdict.judges import HttpHost, SecondOpinion, build_judges
from verdict.judges.second_opinion import (
    ELISION,
    SECOND_OPINION_SYSTEM,
    build_prompt,
    excerpt,
    interpret_verdict,
    parse_verdict_json,
    worth_second_opinion,
)
from verdict.verify.model import SecondOpinionResult, Verdict, Verification, VerifyInput

UNVERIFIABLE = Verification(Verdict.UNVERIFIABLE, "no fenced blocks in response")
LONG = VerifyInput(text="An answer. " * 800, completion_tokens=2000, request_text="Explain the build.")


def test_only_long_unverifiable_prose_is_worth_a_second_opinion():
    assert worth_second_opinion(Verdict.UNVERIFIABLE, 1500, 1500)
    assert not worth_second_opinion(Verdict.UNVERIFIABLE, 1499, 1500)
    assert not worth_second_opinion(Verdict.UNVERIFIABLE, 0, 1500)
    assert not worth_second_opinion(Verdict.OK, 5000, 1500)
    assert not worth_second_opinion(Verdict.MALFORMED, 5000, 1500)
    assert not worth_second_opinion(Verdict.UNVERIFIABLE, 5000, 1500, has_tool_calls=True)


def test_the_excerpt_drops_the_middle_under_a_labelled_elision():
    text = "HEAD" + "m" * 10_000 + "TAIL."
    short = excerpt(text, 4000)
    assert short.startswith("HEAD")
    assert short.endswith("TAIL.")
    assert ELISION.format(n=len(text) - 4000) in short
    assert len(short) == 4000 + len(ELISION.format(n=len(text) - 4000))
    assert excerpt("short", 4000) == "short"


def test_the_prompt_frames_both_sides():
    prompt = build_prompt("Q?", "A.")
    assert prompt == "USER'S REQUEST:\nQ?\n\nASSISTANT'S ANSWER:\nA."


@pytest.mark.parametrize(
    "raw",
    [
        '{"ok": false, "reason": "ends mid-sentence"}',
        'Let me think. The answer stops at "and then". So:\n{"ok": false, "reason": "ends mid-sentence"}',
        '```json\n{"ok": false, "reason": "ends mid-sentence"}\n```',
        '<think>I would write {"ok": true} but it {stops}.</think>{"ok": false, "reason": "ends mid-sentence"}',
    ],
)
def test_the_verdict_parser_survives_reasoning_and_fences(raw):
    assert parse_verdict_json(raw) == {"ok": False, "reason": "ends mid-sentence"}


def test_a_brace_in_the_reasoning_broke_the_reference_greedy_match():
    raw = 'The code uses {braces}. Verdict: {"ok": true, "reason": "complete"}'
    assert parse_verdict_json(raw) == {"ok": True, "reason": "complete"}


@pytest.mark.parametrize("raw", ["", "   ", "no json here", '{"verdict": "yes"}'])
def test_nothing_usable_is_none(raw):
    assert parse_verdict_json(raw) is None


def test_only_a_real_boolean_is_a_usable_verdict():
    assert interpret_verdict({"ok": True, "reason": "x" * 500}, "h") == SecondOpinionResult(Verdict.OK, "x" * 120, "h")
    assert interpret_verdict({"ok": False}, "h") == SecondOpinionResult(Verdict.MALFORMED, "", "h")
    assert interpret_verdict({"ok": "false"}, "h") is None
    assert interpret_verdict({"ok": 0}, "h") is None
    assert interpret_verdict(None, "h") is None


def opinion(service, host=None, min_tokens=1500) -> SecondOpinion:
    return SecondOpinion(service, service.metrics, host=host, model="", min_tokens=min_tokens, timeout=5)


async def test_a_local_model_reads_the_answer(judge_service, chat_server, metrics):
    chat_server.replies = [(200, chat_body('<think>hmm</think>{"ok": false, "reason": "cut off at the end"}'))]
    service = judge_service("claude-code")
    result = await opinion(service, HttpHost(chat_server.url)).consider(LONG, UNVERIFIABLE)
    assert result == SecondOpinionResult(Verdict.MALFORMED, "cut off at the end", "openai-compatible")
    [(_, body)] = chat_server.requests
    assert body["messages"][0] == {"role": "system", "content": SECOND_OPINION_SYSTEM}
    assert body["messages"][1]["content"].startswith("USER'S REQUEST:\nExplain the build.")
    assert "characters elided from the middle" in body["messages"][1]["content"]
    assert sample(metrics, "verdict_second_opinions_total", outcome="malformed") == 1


async def test_a_cli_judge_with_a_schema_gives_a_structured_opinion(judge_service, fake_judges, metrics):
    fake_judges.scenario({"stdout": answer_stdout("claude-code", {"ok": True, "reason": "complete"})})
    service = judge_service("claude-code")
    result = await opinion(service).consider(LONG, UNVERIFIABLE)
    assert result == SecondOpinionResult(Verdict.OK, "complete", "claude-code")
    [call] = fake_judges.calls()
    assert call["prompt"].startswith(SECOND_OPINION_SYSTEM)
    assert sample(metrics, "verdict_second_opinions_total", outcome="ok") == 1


async def test_not_worth_asking_asks_nobody(judge_service, chat_server, metrics):
    second = opinion(judge_service("claude-code"), HttpHost(chat_server.url))
    assert await second.consider(VerifyInput(text="short", completion_tokens=20), UNVERIFIABLE) is None
    assert await second.consider(LONG, Verification(Verdict.OK)) is None
    assert chat_server.requests == []
    assert sample(metrics, "verdict_second_opinions_total", outcome="no_sample") == 0


@pytest.mark.parametrize(
    "reply",
    [
        (500, json.dumps({"error": {"message": "out of memory"}})),
        (200, chat_body("I think it is fine.")),
        (200, chat_body('{"ok": "yes"}')),
        (200, chat_body('{"ok": true}'), 30),
    ],
)
async def test_a_malfunctioning_judge_is_no_sample_never_a_failure(judge_service, chat_server, metrics, reply):
    chat_server.replies = [reply]
    second = SecondOpinion(
        judge_service("claude-code"), metrics, host=HttpHost(chat_server.url), model="", min_tokens=1500, timeout=1
    )
    assert await second.consider(LONG, UNVERIFIABLE) is None
    assert sample(metrics, "verdict_second_opinions_total", outcome="no_sample") == 1


async def test_no_host_or_no_time_is_no_sample(judge_service, metrics):
    second = opinion(judge_service("", env={"PATH": ""}))
    assert await second.consider(LONG, UNVERIFIABLE) is None
    second = opinion(judge_service("claude-code"))
    assert await second.consider(LONG, UNVERIFIABLE, deadline=time.monotonic() + 0.5) is None
    assert sample(metrics, "verdict_second_opinions_total", outcome="no_sample") == 2


def test_build_judges_wires_the_second_opinion_only_when_asked(runner, metrics, scratch):
    env = {"PATH": ""}
    judges = build_judges(Config(), runner, metrics, env, scratch_root=scratch)
    assert judges.second_opinion is None
    assert set(judges.evaluators) == {"llm_structured", "comparator", "contract"}
    config = Config(second_opinion=True, second_opinion_host="http://127.0.0.1:8080", second_opinion_model="qwen")
    second = build_judges(config, runner, metrics, env).second_opinion
    assert second is not None
    assert second.host == HttpHost("http://127.0.0.1:8080")
    assert second.model == "qwen"
    with pytest.raises(ConfigError) as caught:
        build_judges(Config(second_opinion=True, second_opinion_host="llama"), runner, metrics, env)
    assert caught.value.key == "second_opinion_host"
