"""The native judge hosts (judges/anthropic.py, judges/gemini.py): their readers against response shapes recorded from
each provider's documentation (tests/judges/envelopes/anthropic, .../gemini-api), and whole calls against a local
server that speaks the provider's protocol: the request each provider documents (path, key header, body), the key
from the provider's own variable or a file, redaction, the model the provider says answered, token accounting, and
every failure (no key, a refused key, an overloaded provider, a blocked prompt) an `error` with the variables that fix
it, never a verdict against the output."""

from __future__ import annotations

import dataclasses
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.judges.support import RPC_OUTPUT, RPC_YES, ServiceFactory, envelope, sample
from verdict.evaluators.model import EvaluationInput
from verdict.judges import HOSTS, HostRegistry
from verdict.judges.anthropic import ANTHROPIC, ANTHROPIC_VERSION, read_message
from verdict.judges.apis import ApiHost
from verdict.judges.gemini import GEMINI, read_generate_content
from verdict.judges.llm_structured import LlmStructured
from verdict.judges.model import JudgeOutcome, JudgeRequest
from verdict.metrics import Metrics

KEY = "sk-test-0123456789abcdef"


class ProviderServer:
    """A provider API on 127.0.0.1:<free port>: answers (status, body) in order (the last repeats) and keeps every
    request's path, headers and JSON body."""

    def __init__(self) -> None:
        self.replies: list[tuple[int, str]] = []
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                index = len(server.requests)
                server.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                status, reply = server.replies[min(index, len(server.replies) - 1)]
                data = reply.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def provider() -> Iterator[ProviderServer]:
    server = ProviderServer()
    yield server
    server.close()


def _local(host: ApiHost, provider: ProviderServer) -> HostRegistry:
    """The known hosts, with `host` pointed at the local provider server."""
    return HostRegistry((), apis=(dataclasses.replace(host, base_url=provider.url),))


def _ask(**overrides: Any) -> JudgeRequest:
    values: dict[str, Any] = {"prompt": "Is it done?", "system": "You judge.", "read_payload": _payload}
    values.update(overrides)
    return JudgeRequest(**values)


def _payload(reply: Any) -> dict[str, Any]:
    return dict(json.loads(reply.text))


# --- the readers, against the recorded shapes -------------------------------------------------------------------


def test_anthropic_message_text_model_and_usage() -> None:
    reply = read_message(envelope("anthropic", "success.json"))
    assert json.loads(reply.text) == RPC_YES
    assert reply.model == "claude-sonnet-4-5-20250929"
    assert (reply.input_tokens, reply.output_tokens) == (412, 38)
    assert reply.extras["stop_reason"] == "end_turn"
    assert not reply.is_error


def test_anthropic_error_objects_are_the_providers_report() -> None:
    reply = read_message(envelope("anthropic", "authentication-error.json"))
    assert reply.is_error
    assert "invalid x-api-key" in reply.error


def test_gemini_candidate_text_model_version_and_usage() -> None:
    reply = read_generate_content(envelope("gemini-api", "success.json"))
    assert json.loads(reply.text) == RPC_YES
    assert reply.model == "gemini-2.5-flash"
    assert (reply.input_tokens, reply.output_tokens) == (398, 41)
    assert reply.extras["finish_reason"] == "STOP"


def test_gemini_blocked_prompt_and_error_objects_are_errors() -> None:
    blocked = read_generate_content(envelope("gemini-api", "prompt-blocked.json"))
    assert blocked.is_error
    assert "SAFETY" in blocked.error
    invalid = read_generate_content(envelope("gemini-api", "api-key-invalid.json"))
    assert invalid.is_error
    assert "API key not valid" in invalid.error


def test_the_registry_knows_both_by_name_with_did_you_mean() -> None:
    assert HOSTS.named("anthropic") is ANTHROPIC
    assert HOSTS.named("gemini-api") is GEMINI
    assert HOSTS.problems() == []
    from verdict.errors import ConfigError

    with pytest.raises(ConfigError, match="did you mean 'anthropic'"):
        HOSTS.named("anthropc")


# --- whole calls ------------------------------------------------------------------------------------------------


async def test_anthropic_call_sends_the_documented_request_and_reports_the_answering_model(
    judge_service: ServiceFactory, provider: ProviderServer, metrics: Metrics
) -> None:
    provider.replies = [(200, envelope("anthropic", "success.json"))]
    service = judge_service("anthropic", env={"ANTHROPIC_API_KEY": KEY}, hosts=_local(ANTHROPIC, provider))
    answer = await service.ask(_ask())
    assert answer.outcome is JudgeOutcome.OK, answer.error
    assert answer.payload == RPC_YES
    assert answer.reply is not None
    assert answer.reply.model == "claude-sonnet-4-5-20250929"
    [(path, headers, body)] = provider.requests
    assert path == "/v1/messages"
    assert headers["x-api-key"] == KEY
    assert headers["anthropic-version"] == ANTHROPIC_VERSION
    assert "authorization" not in headers
    assert body["model"] == "claude-sonnet-4-5"  # the server's default alias `sonnet`, as a model id
    assert body["system"] == "You judge."
    assert body["messages"][0]["role"] == "user"
    assert "Is it done?" in body["messages"][0]["content"]
    assert sample(metrics, "verdict_judge_tokens_total", host="anthropic", model="other", kind="input") == 412


async def test_gemini_call_puts_the_model_in_the_path_and_the_key_in_its_header(
    judge_service: ServiceFactory, provider: ProviderServer
) -> None:
    provider.replies = [(200, envelope("gemini-api", "success.json"))]
    service = judge_service("gemini-api", env={"GOOGLE_API_KEY": KEY}, hosts=_local(GEMINI, provider))
    answer = await service.ask(_ask())
    assert answer.outcome is JudgeOutcome.OK, answer.error
    [(path, headers, body)] = provider.requests
    # the Claude alias `sonnet` (the server default) is not a Gemini model: the host's default is asked for
    assert path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert headers["x-goog-api-key"] == KEY
    assert body["systemInstruction"] == {"parts": [{"text": "You judge."}]}
    assert body["generationConfig"]["responseMimeType"] == "application/json"
    answer = await service.ask(_ask(model="gemini-2.5-pro"))
    assert provider.requests[-1][0] == "/v1beta/models/gemini-2.5-pro:generateContent"


async def test_the_llm_structured_evaluator_reports_the_model_that_answered(
    judge_service: ServiceFactory, provider: ProviderServer
) -> None:
    provider.replies = [(200, envelope("gemini-api", "success.json"))]
    service = judge_service("gemini-api", env={"GEMINI_API_KEY": KEY}, hosts=_local(GEMINI, provider))
    config = {
        "type": "llm_structured",
        "prompt": "Did the tests pass?",
        "schema": None,
        "min_confidence": 0.5,
        "uncertain_suffix": False,
        "model": "sonnet",  # asked for; the provider answered with its own model, which is what is reported
        "source": None,
    }
    result = await LlmStructured(service)(config, EvaluationInput(config=config, output=RPC_OUTPUT), None)
    assert result.verdict == "yes"
    assert result.details["judge_host"] == "gemini-api"
    assert result.details["llm_model"] == "gemini-2.5-flash"


@pytest.mark.parametrize(("host", "variables"), [(ANTHROPIC, "ANTHROPIC_API_KEY"), (GEMINI, "GEMINI_API_KEY or")])
async def test_without_a_key_the_call_fails_naming_the_variables(
    judge_service: ServiceFactory, provider: ProviderServer, host: ApiHost, variables: str
) -> None:
    service = judge_service(host.name, hosts=_local(host, provider))
    answer = await service.ask(_ask())
    assert answer.outcome is JudgeOutcome.API_ERROR
    assert answer.flags["credentials"] is True
    assert variables in answer.error
    assert "judge_api_key_file" in answer.error
    assert provider.requests == []


async def test_a_refused_key_names_the_variables_and_never_shows_the_key(
    judge_service: ServiceFactory, provider: ProviderServer
) -> None:
    refusal = json.loads(envelope("anthropic", "authentication-error.json"))
    refusal["error"]["message"] = f"invalid x-api-key {KEY}"  # a provider that echoes the key: the worst case
    provider.replies = [(401, json.dumps(refusal))]
    service = judge_service("anthropic", env={"ANTHROPIC_API_KEY": KEY}, hosts=_local(ANTHROPIC, provider))
    answer = await service.ask(_ask())
    assert answer.outcome is JudgeOutcome.API_ERROR
    assert answer.flags["http_status"] == 401
    assert answer.flags["credentials"] is True
    assert "ANTHROPIC_API_KEY" in answer.error
    assert KEY not in answer.error
    assert KEY not in json.dumps(answer.flags)


async def test_gemini_invalid_key_is_a_credential_failure_too(
    judge_service: ServiceFactory, provider: ProviderServer
) -> None:
    provider.replies = [(400, envelope("gemini-api", "api-key-invalid.json"))]
    service = judge_service("gemini-api", env={"GEMINI_API_KEY": KEY}, hosts=_local(GEMINI, provider))
    answer = await service.ask(_ask())
    assert answer.outcome is JudgeOutcome.API_ERROR
    assert "GEMINI_API_KEY or GOOGLE_API_KEY" in answer.error


@pytest.mark.parametrize(
    ("host", "status", "recorded", "outcome"),
    [
        (ANTHROPIC, 529, ("anthropic", "overloaded-error.json"), JudgeOutcome.API_ERROR),
        (GEMINI, 200, ("gemini-api", "prompt-blocked.json"), JudgeOutcome.API_ERROR),
        (ANTHROPIC, 200, None, JudgeOutcome.EMPTY),
        (GEMINI, 200, "not json", JudgeOutcome.PARSE_ERROR),
    ],
    ids=["overloaded", "blocked prompt", "empty body", "garbage"],
)
async def test_a_malfunctioning_provider_is_an_answer_with_a_cause(
    judge_service: ServiceFactory,
    provider: ProviderServer,
    host: ApiHost,
    status: int,
    recorded: Any,
    outcome: JudgeOutcome,
) -> None:
    body = envelope(*recorded) if isinstance(recorded, tuple) else (recorded or "")
    provider.replies = [(status, body)]
    env = dict.fromkeys(host.key_variables, KEY)
    service = judge_service(host.name, env=env, hosts=_local(host, provider))
    answer = await service.ask(_ask())
    assert answer.outcome is outcome
    assert answer.error
    assert "credentials" not in answer.flags


async def test_a_key_file_is_used_for_the_providers_origin(
    judge_service: ServiceFactory, provider: ProviderServer, tmp_path: Path
) -> None:
    key_file = tmp_path / "key"
    key_file.write_text(KEY + "\n")
    provider.replies = [(200, envelope("anthropic", "success.json"))]
    service = judge_service("anthropic", hosts=_local(ANTHROPIC, provider), judge_api_key_file=str(key_file))
    answer = await service.ask(_ask())
    assert answer.outcome is JudgeOutcome.OK, answer.error
    assert provider.requests[0][1]["x-api-key"] == KEY


# --- every CLI host's credential failure names its own variables ---------------------------------------------------

CLI_REFUSALS = {
    "claude-code": ("not-logged-in.json", ""),
    "gemini": ("", "not-authenticated.stderr.txt"),
}


@pytest.mark.parametrize("name", [host.name for host in HOSTS])
def test_every_cli_credential_failure_names_the_variables_that_fix_it(name: str) -> None:
    from verdict.judges.credentials import credential_variables
    from verdict.judges.interpret import interpret_completion
    from verdict.judges.payload import verdict_payload
    from verdict.runner import Completed

    host = HOSTS.by_name[name]
    stdout_file, stderr_file = CLI_REFUSALS.get(name, ("", ""))
    stdout = envelope(name, stdout_file) if stdout_file else ""
    stderr = envelope(name, stderr_file) if stderr_file else "Error: not authenticated: no API key found\n"
    answer = interpret_completion(host, Completed(1, stdout.encode(), stderr.encode(), 0.1), verdict_payload)
    assert answer.outcome is JudgeOutcome.API_ERROR
    assert answer.flags.get("credentials") is True, answer.error
    named = credential_variables(host.credentials)
    assert named
    assert " or ".join(named) in answer.error
    assert "fresh HOME" in answer.error


def test_a_failure_that_is_not_about_credentials_gets_no_hint() -> None:
    from verdict.judges.interpret import interpret_completion
    from verdict.judges.payload import verdict_payload
    from verdict.runner import Completed

    host = HOSTS.by_name["codex"]
    answer = interpret_completion(host, Completed(1, b"", b"Error: stream disconnected\n", 0.1), verdict_payload)
    assert "credentials" not in answer.flags
    assert "fresh HOME" not in answer.error


async def test_an_openai_compatible_refusal_names_the_key_settings(
    judge_service: ServiceFactory, chat_server: Any
) -> None:
    chat_server.key = KEY
    service = judge_service(chat_server.url)
    answer = await service.ask(_ask())
    assert answer.flags["http_status"] == 401
    assert answer.flags["credentials"] is True
    assert "judge_api_key_file" in answer.error
