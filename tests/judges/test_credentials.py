"""The OpenAI-compatible judge's API key: sent as `Authorization: Bearer` from a file or a named variable, only to
the judge's own origin, re-read when the file rotates, and never written anywhere else."""

from __future__ import annotations

import json
import logging
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.judges.support import ChatServer, ServiceFactory, chat_body
from verdict.config.keys import Config
from verdict.config.sources import load_config
from verdict.errors import ConfigError
from verdict.judges import JudgeOutcome, JudgeRequest
from verdict.judges.credentials import REDACTED, ApiKey, CredentialError, KeyFile
from verdict.judges.hosts import HttpHost

KEY = "sk-proj-PLANTED/credential_0123456789abcdef"
ANSWER = {"verdict": "yes", "confidence": 0.8, "reason": "ok", "evidence": "done"}


def ask() -> JudgeRequest:
    return JudgeRequest(prompt="Judge this.", schema={"type": "object"})


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    path = tmp_path / "secret" / "api-key"
    path.parent.mkdir()
    path.write_text(f"{KEY}\n")
    return path


def rotate(path: Path, value: str) -> None:
    """Replace the file the way kubelet updates a Secret volume: a new file renamed over the old (a new inode)."""
    fresh = path.with_name(".new")
    fresh.write_text(value)
    fresh.rename(path)


async def test_the_key_file_is_sent_as_a_bearer_header(
    judge_service: ServiceFactory, chat_server: ChatServer, key_file
):
    chat_server.key = KEY
    chat_server.replies = [(200, chat_body(json.dumps(ANSWER)))]
    answer = await judge_service(chat_server.url, judge_api_key_file=str(key_file)).ask(ask())
    assert answer.ok, answer.error
    assert chat_server.authorizations == [f"Bearer {KEY}"]


async def test_the_named_variable_is_sent(judge_service: ServiceFactory, chat_server: ChatServer):
    chat_server.key = KEY
    chat_server.replies = [(200, chat_body(json.dumps(ANSWER)))]
    service = judge_service(chat_server.url, env={"OPENROUTER_API_KEY": KEY}, judge_api_key_env="OPENROUTER_API_KEY")
    assert (await service.ask(ask())).ok
    assert chat_server.authorizations == [f"Bearer {KEY}"]


async def test_without_a_key_no_header_is_sent_and_the_endpoint_refuses(
    judge_service: ServiceFactory, chat_server: ChatServer
):
    chat_server.key = KEY
    answer = await judge_service(chat_server.url).ask(ask())
    assert chat_server.authorizations == [None]
    assert answer.outcome is JudgeOutcome.API_ERROR
    assert answer.flags["http_status"] == 401


async def test_a_rotated_key_file_is_used_from_the_next_call(judge_service: ServiceFactory, chat_server, key_file):
    chat_server.replies = [(200, chat_body(json.dumps(ANSWER)))]
    service = judge_service(chat_server.url, judge_api_key_file=str(key_file))
    await service.ask(ask())
    rotate(key_file, "sk-rotated-key\n")
    await service.ask(ask())
    key_file.write_text("sk-edited-in-place-longer\n")
    await service.ask(ask())
    assert chat_server.authorizations == [f"Bearer {KEY}", "Bearer sk-rotated-key", "Bearer sk-edited-in-place-longer"]


async def test_a_key_file_gone_after_startup_fails_the_call_without_sending(
    judge_service: ServiceFactory, chat_server, key_file
):
    service = judge_service(chat_server.url, judge_api_key_file=str(key_file))
    key_file.unlink()
    answer = await service.ask(ask())
    assert answer.outcome is JudgeOutcome.API_ERROR
    assert answer.flags == {"api_error": True, "credentials": True}
    assert str(key_file) in (answer.error or "")
    assert chat_server.requests == [], "no request without the key"


async def test_a_second_opinion_elsewhere_never_gets_the_key(judge_service: ServiceFactory, key_file):
    judge, other = ChatServer(), ChatServer()
    try:
        for server in (judge, other):
            server.replies = [(200, chat_body(json.dumps(ANSWER)))]
        service = judge_service(judge.url, judge_api_key_file=str(key_file))
        await service.ask(JudgeRequest(prompt="p", host=HttpHost(other.url)))
        await service.ask(JudgeRequest(prompt="p", host=HttpHost(f"{judge.url}/v1")))
        assert other.authorizations == [None]
        assert judge.authorizations == [f"Bearer {KEY}"], "same origin, another path: the same endpoint"
    finally:
        judge.close()
        other.close()


async def test_the_endpoint_echoing_the_key_is_redacted_everywhere_in_the_answer(
    judge_service: ServiceFactory, chat_server: ChatServer, key_file
):
    quoted = {**ANSWER, "reason": f"you sent {KEY}", "evidence": json.dumps(KEY)}
    chat_server.replies = [
        (401, json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}"}})),
        (200, f"not json at all {KEY}"),
        (200, chat_body(json.dumps(quoted))),
        (500, KEY),
    ]
    service = judge_service(chat_server.url, judge_api_key_file=str(key_file))
    answers = [await service.ask(ask()) for _ in range(4)]
    assert [a.outcome for a in answers] == [
        JudgeOutcome.API_ERROR,
        JudgeOutcome.PARSE_ERROR,
        JudgeOutcome.OK,
        JudgeOutcome.API_ERROR,
    ]
    for answer in answers:
        text = repr(answer)
        assert KEY not in text
        assert KEY.replace("/", "\\/") not in text
    assert REDACTED in (answers[0].error or "")
    assert answers[2].payload is not None
    assert answers[2].payload["reason"] == f"you sent {REDACTED}"


async def test_unreachable_and_timeout_errors_do_not_carry_the_key(
    judge_service: ServiceFactory, chat_server, key_file
):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    unreachable = await judge_service(closed, judge_api_key_file=str(key_file)).ask(ask())
    assert unreachable.flags.get("unreachable") is True
    chat_server.replies = [(200, chat_body(json.dumps(ANSWER)), 30)]
    slow = judge_service(chat_server.url, judge_api_key_file=str(key_file), judge_timeout_seconds=1)
    timed_out = await slow.ask(ask())
    assert timed_out.outcome is JudgeOutcome.TIMEOUT
    assert KEY not in repr(unreachable) + repr(timed_out)


def test_the_key_never_prints(key_file: Path) -> None:
    key = ApiKey(f"  {KEY}\n", source="test")
    assert key.authorization() == f"Bearer {KEY}"
    assert key == KeyFile(str(key_file)).current()
    for shown in (repr(key), str(key), f"{key}", "%s %r" % (key, key)):  # noqa: UP031 - logging's style
        assert KEY not in shown
    host = HttpHost("https://api.example.com", credentials=KeyFile(str(key_file)))
    assert KEY not in repr(host)
    assert host == HttpHost("https://api.example.com"), "the key takes no part in comparisons"


@pytest.mark.parametrize(
    "content", ["", "\n  \n", "sk-one\nsk-two", "sk-\x00nul", "sk-abc\r\nX-Injected: yes", "ключ", 'sk-"quoted"']
)
def test_an_unusable_key_is_refused_without_echoing_it(tmp_path: Path, content: str) -> None:
    path = tmp_path / "key"
    path.write_text(content)
    with pytest.raises(CredentialError) as raised:
        KeyFile(str(path))
    message = str(raised.value)
    assert str(path) in message
    for part in content.split():
        assert len(part) < 4 or part not in message


def test_settings_are_checked_at_load(tmp_path: Path) -> None:
    cases: dict[str, dict[str, Any]] = {
        "judge_api_key_env": {"judge_api_key_file": "/run/key", "judge_api_key_env": "OPENAI_API_KEY"},
        "judge_api_key_file": {"judge_api_key_file": "relative/key"},
    }
    for key, values in cases.items():
        with pytest.raises(ConfigError) as raised:
            Config(**values)
        assert raised.value.key == key
    for name in ("OPENAI-API-KEY", "1KEY", "sk-proj-abc123"):
        with pytest.raises(ConfigError, match="name of an environment variable"):
            Config(judge_api_key_env=name)
    with pytest.raises(ConfigError, match="read as a configuration key"):
        Config(judge_api_key_env="VERDICT_JUDGE_KEY")
    config = load_config(env={"VERDICT_JUDGE_API_KEY_FILE": str(tmp_path / "key")})
    assert config.judge_api_key_file == str(tmp_path / "key")


def test_the_server_refuses_to_start_without_the_key_it_was_told_to_send(
    judge_service: ServiceFactory, chat_server: ChatServer, tmp_path: Path, key_file: Path
) -> None:
    with pytest.raises(ConfigError) as missing_file:
        judge_service(chat_server.url, judge_api_key_file=str(tmp_path / "absent"))
    assert missing_file.value.key == "judge_api_key_file"
    with pytest.raises(ConfigError) as missing_variable:
        judge_service(chat_server.url, judge_api_key_env="OPENAI_API_KEY")
    assert missing_variable.value.key == "judge_api_key_env"
    assert "OPENAI_API_KEY" in str(missing_variable.value)
    with pytest.raises(ConfigError, match="not an http"):
        judge_service("claude-code", judge_api_key_file=str(key_file))


def test_plain_http_to_another_machine_is_warned_about(
    judge_service: ServiceFactory, key_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        judge_service("http://10.255.0.9:8000", judge_api_key_file=str(key_file))
        judge_service("http://127.0.0.1:8000", judge_api_key_file=str(key_file))
        judge_service("https://10.255.0.9", judge_api_key_file=str(key_file))
    warnings = [r.getMessage() for r in caplog.records if "plain http" in r.getMessage()]
    assert warnings == [warnings[0]]
    assert "10.255.0.9" in warnings[0]
    assert KEY not in caplog.text
