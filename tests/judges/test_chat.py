"""The OpenAI-compatible HTTP backend against a small server on 127.0.0.1."""

from __future__ import annotations

import json
import socket

import pytest

from tests.judges.support import chat_body, sample
from verdict.judges import HttpHost, JudgeOutcome, JudgeRequest
from verdict.judges.chat import MAX_RESPONSE_BYTES

ANSWER = {"verdict": "yes", "confidence": 0.8, "reason": "ok", "evidence": "done"}


def ask(**fields) -> JudgeRequest:
    return JudgeRequest(prompt="Judge this.", schema={"type": "object"}, **fields)


async def test_a_chat_completion_is_the_answer(judge_service, chat_server, metrics):
    chat_server.replies = [(200, chat_body(json.dumps(ANSWER)))]
    service = judge_service(chat_server.url, judge_model_labels=("qwen2.5-7b-instruct",))
    answer = await service.ask(ask(system="You are a judge."))
    assert answer.ok, answer.error
    assert answer.payload == ANSWER
    assert answer.host == "openai-compatible"
    [(path, body)] = chat_server.requests
    assert path == "/v1/chat/completions"
    assert body["messages"][0] == {"role": "system", "content": "You are a judge."}
    assert body["messages"][1]["role"] == "user"
    assert body["messages"][1]["content"].startswith("Judge this.")
    assert "JSON schema" in body["messages"][1]["content"]
    assert body["response_format"] == {"type": "json_object"}
    assert "model" not in body  # the Claude alias `sonnet` means nothing to a local server
    assert sample(metrics, "verdict_judge_calls_total", host="openai-compatible", outcome="ok") == 1
    assert sample(metrics, "verdict_judge_tokens_total", host="openai-compatible", model="other", kind="input") == 900


async def test_the_model_is_sent_when_it_is_a_real_name(judge_service, chat_server):
    chat_server.replies = [(200, chat_body(json.dumps(ANSWER)))]
    await judge_service(f"{chat_server.url}/v1", judge_model="qwen2.5-7b-instruct").ask(ask())
    [(path, body)] = chat_server.requests
    assert path == "/v1/chat/completions"
    assert body["model"] == "qwen2.5-7b-instruct"


async def test_reasoning_around_the_json_is_survived(judge_service, chat_server):
    content = "<think>Is {this} ok? Let me see.</think>\nSure:\n```json\n" + json.dumps(ANSWER) + "\n```"
    chat_server.replies = [(200, chat_body(content))]
    assert (await judge_service(chat_server.url).ask(ask())).payload == ANSWER


async def test_a_server_that_rejects_response_format_is_asked_again_without_it(judge_service, chat_server):
    rejection = json.dumps({"error": {"message": "response_format is not supported", "type": "invalid_request_error"}})
    chat_server.replies = [(400, rejection), (200, chat_body(json.dumps(ANSWER)))]
    answer = await judge_service(chat_server.url).ask(ask())
    assert answer.ok, answer.error
    first, second = (body for _, body in chat_server.requests)
    assert "response_format" in first
    assert "response_format" not in second


async def test_an_http_error_is_an_api_error_with_the_servers_message(judge_service, chat_server):
    chat_server.replies = [(503, json.dumps({"error": {"message": "model is loading"}}))]
    answer = await judge_service(chat_server.url).ask(ask())
    assert answer.outcome is JudgeOutcome.API_ERROR
    assert answer.flags["http_status"] == 503
    assert answer.error.endswith("answered HTTP 503: model is loading")


async def test_a_slow_server_times_out(judge_service, chat_server):
    chat_server.replies = [(200, chat_body(json.dumps(ANSWER)), 30)]
    answer = await judge_service(chat_server.url, judge_timeout_seconds=1).ask(ask())
    assert answer.outcome is JudgeOutcome.TIMEOUT
    assert answer.flags == {"timeout": True}


async def test_nobody_listening_is_an_api_error(judge_service):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    answer = await judge_service(f"http://127.0.0.1:{port}").ask(ask())
    assert answer.outcome is JudgeOutcome.API_ERROR
    assert answer.flags["unreachable"] is True


async def test_a_url_the_client_cannot_use_is_an_api_error_not_a_crash(judge_service, chat_server):
    service = judge_service(chat_server.url)
    answer = await service.ask(ask(host=HttpHost("http://127.0.0.1:99999")))
    assert answer.outcome is JudgeOutcome.API_ERROR
    assert answer.flags["unreachable"] is True


@pytest.mark.parametrize(
    ("body", "outcome"),
    [("not json", JudgeOutcome.PARSE_ERROR), (json.dumps({"choices": []}), JudgeOutcome.PARSE_ERROR)],
)
async def test_unreadable_bodies_are_parse_errors(judge_service, chat_server, body, outcome):
    chat_server.replies = [(200, body)]
    assert (await judge_service(chat_server.url).ask(ask())).outcome is outcome


async def test_a_body_over_the_cap_is_cut_and_is_a_parse_error(judge_service, chat_server):
    huge = chat_body(json.dumps({**ANSWER, "reason": "r" * (MAX_RESPONSE_BYTES + 1024)}))
    chat_server.replies = [(200, huge)]
    answer = await judge_service(chat_server.url).ask(ask())
    assert answer.outcome is JudgeOutcome.PARSE_ERROR
    assert len(answer.flags["raw_preview"]) <= 300
    chat_server.replies = [(500, huge)]
    answer = await judge_service(chat_server.url).ask(ask())
    assert answer.outcome is JudgeOutcome.API_ERROR
    assert len(answer.error) < 400
