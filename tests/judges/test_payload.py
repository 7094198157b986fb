"""The answer object in a reply: structured output, JSON text, tag recovery, objects embedded in prose."""

from __future__ import annotations

import json

import pytest

from verdict.judges.envelopes import JudgeReply
from verdict.judges.payload import PayloadError, json_objects, recover_tags, verdict_payload

ANSWER = {"verdict": "no", "confidence": 0.7, "reason": "a test failed", "evidence": "1 failed"}


def reply(text: str = "", structured=None) -> JudgeReply:
    return JudgeReply("claude-code", text=text, structured=structured)


def test_structured_output_wins_over_text():
    assert verdict_payload(reply("garbage", structured=ANSWER)) == ANSWER


def test_json_text():
    assert verdict_payload(reply(json.dumps(ANSWER))) == ANSWER


def test_tags_are_recovered_only_when_asked_and_the_verdict_is_lowercased():
    text = (
        "```json\n<verdict>No</verdict>\n<confidence>0.7</confidence>\n<reason>x</reason>\n"
        "<evidence>1 failed</evidence>\n```"
    )
    assert verdict_payload(reply(text), recover=True) == {
        "verdict": "no",
        "confidence": 0.7,
        "reason": "x",
        "evidence": "1 failed",
    }
    with pytest.raises(PayloadError) as caught:
        verdict_payload(reply(text))
    assert caught.value.kind == "parse_error"


def test_without_a_verdict_tag_the_parse_error_stands():
    with pytest.raises(PayloadError, match="Failed to parse LLM response"):
        verdict_payload(reply("<reason>no verdict here</reason>"), recover=True)
    assert recover_tags("<reason>x</reason>") is None


def test_an_object_in_a_fence_or_after_reasoning_is_found_and_the_last_one_wins():
    text = f'I will answer like {{"verdict": "yes"}} but first check.\n```json\n{json.dumps(ANSWER)}\n```\nDone.'
    assert verdict_payload(reply(text)) == ANSWER


def test_an_embedded_object_must_carry_the_expected_key():
    with pytest.raises(PayloadError):
        verdict_payload(reply('Here: {"something": 1}'))
    assert verdict_payload(reply('Here: {"verdict_a": "yes", "verdict_b": "no"}'), key="verdict_a")["verdict_b"] == "no"


def test_an_answer_that_is_not_an_object_is_a_parse_error():
    with pytest.raises(PayloadError, match="array"):
        verdict_payload(reply("[1, 2]"))


def test_an_empty_reply_is_an_empty_result():
    with pytest.raises(PayloadError) as caught:
        verdict_payload(reply("   "))
    assert caught.value.kind == "empty_result"


def test_the_object_scan_is_bounded_on_hostile_text():
    assert list(json_objects('{"a": "' * 20_000)) == []
