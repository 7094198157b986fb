"""Hostile judge replies: whatever a judge prints (up to the 8 MiB cap), reading it ends in a verdict or a named
failure, quickly, and never in an exception the server turns into INTERNAL.

A judge's output is partly under the caller's control (the judged output and a custom prompt are in its prompt), and
the readers run on the event loop, so a reply that is slow to read stalls every call on the server.
"""

from __future__ import annotations

import json

import pytest

from tests.judges.support import chat_body
from tests.support import cpu_seconds, growth
from verdict.judges import JudgeOutcome, JudgeRequest
from verdict.judges.clis import READERS, read_envelope
from verdict.judges.envelopes import EnvelopeError, JudgeReply, read_chat_completion
from verdict.judges.payload import PayloadError, verdict_payload
from verdict.judges.second_opinion import parse_verdict_json

DEEP = "[" * 100_000
"""Nesting past the interpreter's recursion limit: json raises RecursionError, not JSONDecodeError."""


@pytest.mark.parametrize("host", sorted(READERS))
def test_deep_nesting_is_a_parse_error_for_every_reader(host):
    with pytest.raises(EnvelopeError) as caught:
        read_envelope(host, DEEP, "")
    assert caught.value.kind == "parse_error"


def test_deep_nesting_on_geminis_stderr_is_not_a_crash():
    with pytest.raises(EnvelopeError):
        read_envelope("gemini", "", 'YOLO mode is enabled.\n{"error": ' + DEEP)


def test_deep_nesting_in_a_chat_completion_or_an_answer_text_is_a_parse_error():
    with pytest.raises(EnvelopeError):
        read_chat_completion(DEEP)
    for text in (DEEP, 'The answer: {"verdict": ' + DEEP, "```json\n" + DEEP + "\n```"):
        with pytest.raises(PayloadError):
            verdict_payload(JudgeReply("claude-code", text=text), recover=True)
    assert parse_verdict_json('{"ok": ' + DEEP) is None


def test_many_unclosed_tags_are_read_in_linear_time():
    # the lazy `<verdict>\s*(.*?)\s*</verdict>` took ~40 s on 180 kB of this, and grows with the square of the size:
    # eight times the tags must cost about eight times as much (a quadratic reader: 64 times), whatever the machine
    def unclosed(count: int) -> None:
        with pytest.raises(PayloadError):
            verdict_payload(JudgeReply("claude-code", text="<verdict>" * count), recover=True)

    def unclosed_after_an_answer(count: int) -> None:
        reply = JudgeReply("claude-code", text="<verdict>yes</verdict>" + "<reason>" * count)
        assert verdict_payload(reply, recover=True) == {"verdict": "yes"}

    assert growth(unclosed, 1_000) < 32
    assert growth(unclosed_after_an_answer, 1_000) < 32


def test_many_fences_are_bounded():
    # Each fenced block is tried as JSON; trying all 500,000 of these costs seconds where the same size of prose costs
    # milliseconds. Compared with that prose, measured here, so the machine's speed cancels out: a bounded reader
    # costs about the same (a few scans of the text), an unbounded one hundreds of times more.
    fences = "```json\n" * 1_000_000
    prose = "x" * len(fences)

    def read(text: str) -> None:
        with pytest.raises(PayloadError):
            verdict_payload(JudgeReply("codex", text=text), recover=True)

    assert cpu_seconds(lambda: read(fences)) < 50 * cpu_seconds(lambda: read(prose))


def test_a_gemini_reply_full_of_braces_is_read_in_linear_time():
    # every `{` was tried with a copy of the rest of the text: ~10 s for 400,000 of them, hours for the 8 MiB cap.
    # Compared with a reply of the same size without braces, measured here: about as fast when each `{` is not
    # retried (twice as slow at most), thousands of times slower when it is.
    def read(reply: str) -> None:
        with pytest.raises(EnvelopeError):
            read_envelope("gemini", reply, "")
        with pytest.raises(EnvelopeError):
            read_envelope("gemini", "", "warning\n" + reply)

    braces = "{" * 100_000
    assert cpu_seconds(lambda: read(braces)) < 50 * cpu_seconds(lambda: read("x" * len(braces)))


def test_gemini_json_after_plain_lines_and_brace_noise_is_still_found():
    error = {"session_id": "s", "error": {"type": "Error", "message": "Please set an Auth method", "code": 41}}
    stderr = "YOLO mode is enabled. {noise}\nApproval mode overridden {x: 1}\n" + json.dumps(error, indent=2)
    reply = read_envelope("gemini", "", stderr)
    assert reply.is_error
    assert reply.error == "Please set an Auth method"


async def test_a_deeply_nested_reply_is_a_parse_error_end_to_end(judge_service, fake_judges):
    service = judge_service("claude-code")
    fake_judges.scenario({"stdout": DEEP})
    answer = await service.ask(JudgeRequest(prompt="Judge this.", schema={"type": "object"}))
    assert answer.outcome is JudgeOutcome.PARSE_ERROR
    assert "nested too deeply" in answer.error
    fake_judges.scenario({"stdout": DEEP, "rc": 1})
    answer = await service.ask(JudgeRequest(prompt="Judge this.", schema={"type": "object"}))
    assert answer.outcome is JudgeOutcome.API_ERROR


async def test_a_deeply_nested_http_error_body_is_an_api_error(judge_service, chat_server):
    chat_server.replies = [(500, DEEP), (200, chat_body("x"))]
    service = judge_service(chat_server.url)
    answer = await service.ask(JudgeRequest(prompt="Judge this."))
    assert answer.outcome is JudgeOutcome.API_ERROR
    assert answer.flags["http_status"] == 500
