"""Each host's envelope reader against its recorded shapes (tests/judges/envelopes/), and the reference's defect:
its claude-shaped parse finds no answer in what codex, gemini, kimi and omp print."""

from __future__ import annotations

import json

import pytest

from tests.judges.support import envelope
from verdict.judges.clis import read_envelope
from verdict.judges.envelopes import EnvelopeError, read_chat_completion

ANSWER = {
    "verdict": "yes",
    "confidence": 0.9,
    "reason": "the summary line reports every test passing",
    "evidence": "All 42 tests passed",
}


def test_claude_not_logged_in_is_an_error_reported_on_stdout():
    reply = read_envelope("claude-code", envelope("claude-code", "not-logged-in.json"))
    assert reply.is_error
    assert reply.error == "Not logged in · Please run /login"
    assert reply.subtype == "success"


def test_claude_structured_output_with_cost_tokens_and_model():
    reply = read_envelope("claude-code", envelope("claude-code", "success-structured.json"))
    assert not reply.is_error
    assert reply.structured == ANSWER
    assert reply.cost_usd == pytest.approx(0.0123)
    assert (reply.input_tokens, reply.output_tokens) == (1520, 85)
    assert reply.model == "claude-sonnet-4-5"


def test_claude_result_as_a_json_string_is_text_for_the_payload_reader():
    reply = read_envelope("claude-code", envelope("claude-code", "success-result-string.json"))
    assert reply.structured is None
    assert json.loads(reply.text) == ANSWER


def test_claude_result_as_an_object_is_structured():
    stdout = json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": ANSWER})
    assert read_envelope("claude-code", stdout).structured == ANSWER


def test_claude_retries_exhausted():
    reply = read_envelope("claude-code", envelope("claude-code", "retries-exhausted.json"))
    assert reply.retries_exhausted
    assert reply.is_error


def test_claude_stream_takes_the_last_line():
    reply = read_envelope("claude-code", envelope("claude-code", "stream.jsonl"))
    assert json.loads(reply.text) == ANSWER


def test_a_bare_verdict_object_is_the_answer():
    assert read_envelope("claude-code", envelope("claude-code", "bare-verdict.json")).structured == ANSWER


def test_claude_tags_arrive_as_text():
    assert "<verdict>Yes</verdict>" in read_envelope("claude-code", envelope("claude-code", "tags.json")).text


def test_garbage_is_a_parse_error_and_an_answerless_envelope_an_empty_result():
    with pytest.raises(EnvelopeError) as garbage:
        read_envelope("claude-code", "this is not json\nnor this")
    assert garbage.value.kind == "parse_error"
    with pytest.raises(EnvelopeError) as empty:
        read_envelope("claude-code", json.dumps({"type": "result", "subtype": "success", "result": ""}))
    assert empty.value.kind == "empty_result"
    assert "Empty result field" in empty.value.message


@pytest.mark.parametrize("name", ["not-authenticated.jsonl", "not-authenticated.json"])
def test_qwen_not_authenticated_in_stream_and_array_form(name):
    reply = read_envelope("qwen", envelope("qwen", name))
    assert reply.is_error
    assert reply.error.startswith("No auth type is selected.")


def test_qwen_success_is_the_final_result_event():
    reply = read_envelope("qwen", envelope("qwen", "success.jsonl"))
    assert json.loads(reply.text) == ANSWER
    assert (reply.input_tokens, reply.output_tokens) == (1400, 70)


def test_qwen_api_failure_dressed_as_an_answer_is_an_error():
    reply = read_envelope("qwen", envelope("qwen", "api-error-as-answer.jsonl"))
    assert reply.is_error
    assert reply.error.startswith("[API Error: Connection error.")


def test_codex_answer_is_the_agent_message_and_a_warning_item_is_not_a_failure():
    reply = read_envelope("codex", envelope("codex", "success.jsonl"))
    assert not reply.is_error
    assert json.loads(reply.text) == ANSWER
    assert (reply.input_tokens, reply.output_tokens) == (1650, 90)


def test_codex_turn_failed_is_an_error_with_its_message():
    reply = read_envelope("codex", envelope("codex", "turn-failed.jsonl"))
    assert reply.is_error
    assert "failed to lookup address information" in reply.error


def test_codex_offline_stream_without_an_answer_reports_the_last_error_event():
    reply = read_envelope("codex", envelope("codex", "offline-retrying.jsonl"))
    assert reply.is_error
    assert reply.error.startswith("Reconnecting... 5/5")


def test_gemini_error_json_on_stderr_after_text_lines():
    reply = read_envelope("gemini", "", envelope("gemini", "not-authenticated.stderr.txt"))
    assert reply.is_error
    assert reply.error.startswith("Please set an Auth method")


def test_gemini_response_field_with_token_stats():
    reply = read_envelope("gemini", envelope("gemini", "success.json"))
    assert json.loads(reply.text) == ANSWER
    assert (reply.input_tokens, reply.output_tokens) == (1300, 75)


def test_kimi_answer_is_the_last_assistant_text_before_the_meta_line():
    reply = read_envelope("kimi-code", envelope("kimi-code", "success.jsonl"))
    assert json.loads(reply.text) == ANSWER


def test_omp_answer_is_the_last_assistant_message_with_usage_and_cost():
    reply = read_envelope("omp", envelope("omp", "success.jsonl"))
    assert json.loads(reply.text) == ANSWER
    assert reply.cost_usd == pytest.approx(0.0021)
    assert (reply.input_tokens, reply.output_tokens) == (1500, 80)
    assert reply.model == "claude-sonnet-4-5"


def test_omp_error_stop_reason_is_an_error():
    stdout = json.dumps(
        {
            "type": "message_end",
            "message": {
                "role": "assistant",
                "content": [],
                "stopReason": "error",
                "errorMessage": "401 invalid x-api-key",
            },
        }
    )
    reply = read_envelope("omp", stdout)
    assert reply.is_error
    assert reply.error == "401 invalid x-api-key"


@pytest.mark.parametrize(
    ("host", "name"),
    [
        ("codex", "success.jsonl"),
        ("gemini", "success.json"),
        ("kimi-code", "success.jsonl"),
        ("omp", "success.jsonl"),
    ],
)
def test_the_reference_claude_shaped_parse_fails_where_the_host_reader_succeeds(host, name):
    stdout = envelope(host, name)
    with pytest.raises(EnvelopeError) as reference:
        read_envelope("claude-code", stdout)
    assert reference.value.kind == "empty_result"
    assert json.loads(read_envelope(host, stdout).text) == ANSWER


@pytest.mark.parametrize("host", ["codex", "gemini", "qwen", "kimi-code", "omp"])
def test_every_host_falls_back_to_a_bare_verdict_object(host):
    assert read_envelope(host, json.dumps(ANSWER)).structured == ANSWER


def test_chat_completion_content_usage_and_model():
    body = json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": "qwen2.5-7b-instruct",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": '{"ok": true}'}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 900, "completion_tokens": 12, "total_tokens": 912},
        }
    )
    reply = read_chat_completion(body)
    assert reply.text == '{"ok": true}'
    assert reply.model == "qwen2.5-7b-instruct"
    assert (reply.input_tokens, reply.output_tokens) == (900, 12)


def test_chat_completion_without_choices_is_an_empty_result():
    with pytest.raises(EnvelopeError) as caught:
        read_chat_completion(json.dumps({"choices": []}))
    assert caught.value.kind == "empty_result"
