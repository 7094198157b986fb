"""One judge call to a provider's own API (an `ApiHost`: Anthropic Messages, Gemini), from key to answer.

Shared with the OpenAI-compatible host: the POST (judges/chat.py: a worker thread bounded by the socket timeout and
aborted on timeout or cancellation, the response capped), the key redacted from every text that comes back, and the
reading of the answer (judges/interpret.py: the host's own error report, then the answer object). Every failure is an
answer with a cause, never an exception, so a judge that malfunctions never becomes a verdict against the output.

The key: `judge_api_key_file` or `judge_api_key_env` when configured for this host's origin (the service binds it),
else the provider's own variable (ANTHROPIC_API_KEY; GEMINI_API_KEY or GOOGLE_API_KEY) from the server's
environment. Without one the call fails at once, naming the variables that fix it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping

from verdict.judges import chat
from verdict.judges.apis import ApiHost
from verdict.judges.credentials import ApiKey, CredentialError, KeySource, credential_hint
from verdict.judges.envelopes import EnvelopeError, OversizedNumber, loads
from verdict.judges.interpret import PREVIEW_CHARS, RAW_OUTPUT_CHARS, _from_reply, _oversized
from verdict.judges.model import JudgeAnswer, JudgeOutcome, PayloadReader, failure

__all__ = ["ask_api", "interpret_api", "provider_key"]


class _ProviderKey:
    """A key from the provider's own environment variable (read once: a process's environment does not change)."""

    def __init__(self, setting: str, key: ApiKey) -> None:
        self.setting = setting
        self._key = key

    def current(self) -> ApiKey:
        return self._key

    def __repr__(self) -> str:
        return f"_ProviderKey({self.setting})"


def provider_key(host: ApiHost, env: Mapping[str, str]) -> KeySource | None:
    """The key in the first of the provider's variables that is set; None when none is. Raises CredentialError when
    the variable holds no usable key (the message names the variable, never the value)."""
    for variable in host.key_variables:
        if env.get(variable, "").strip():
            return _ProviderKey(variable, ApiKey(env[variable], source=f"the environment variable {variable}"))
    return None


def _no_key(host: ApiHost) -> str:
    return (
        f"the {host.name} judge has no API key: set {' or '.join(host.key_variables)} in the server's environment, "
        "or judge_api_key_file / judge_api_key_env"
    )


async def ask_api(
    host: ApiHost, *, system: str, prompt: str, model: str, seconds: float, read_payload: PayloadReader
) -> JudgeAnswer:
    """POST one judge question to `host` and read the answer. Never raises for the provider's behaviour."""
    url = host.binary
    if host.credentials is None:
        return failure(host.name, url, JudgeOutcome.API_ERROR, _no_key(host), api_error=True, credentials=True)
    try:
        key = host.credentials.current()
    except CredentialError as exc:
        return failure(host.name, url, JudgeOutcome.API_ERROR, str(exc), api_error=True, credentials=True)
    request = host.build(host, system, prompt, host.model(model), key)
    try:
        response = await chat._post(f"{url}{request.path}", request.body, seconds, key, request.headers)
    except TimeoutError:
        return failure(host.name, url, JudgeOutcome.TIMEOUT, "LLM evaluation timeout", timeout=True)
    except chat.ChatUnreachable as exc:
        return failure(host.name, url, JudgeOutcome.API_ERROR, str(exc), api_error=True, unreachable=True)
    return interpret_api(host, response, read_payload)


def interpret_api(host: ApiHost, response: chat.HttpResponse, read_payload: PayloadReader) -> JudgeAnswer:
    """Classify a provider's response: non-2xx is an API error with the provider's message (and, for a credential
    failure, the variables that fix it); 2xx is read by the host's envelope reader. Pure."""
    try:
        return _interpret(host, response, read_payload)
    except OversizedNumber as error:
        return _oversized(host.name, host.binary, error)


def _interpret(host: ApiHost, response: chat.HttpResponse, read_payload: PayloadReader) -> JudgeAnswer:
    name, url = host.name, host.binary
    if not 200 <= response.status < 300:
        cause = response.body.strip()[:200] or "no body"
        with contextlib.suppress(json.JSONDecodeError, AttributeError, TypeError):
            error = loads(response.body).get("error")
            cause = str(error.get("message") if isinstance(error, Mapping) else error or cause)[:200]
        hint = credential_hint(f"{response.status} {cause}", host.key_variables, settings=True)
        flags = {"api_error": True, "http_status": response.status, **({"credentials": True} if hint else {})}
        message = f"{url} answered HTTP {response.status}: {cause}{hint}"
        return failure(name, url, JudgeOutcome.API_ERROR, message, **flags)
    if not response.body.strip():
        return failure(name, url, JudgeOutcome.EMPTY, f"{url} returned an empty body", empty_output=True)
    try:
        reply = host.read(response.body)
    except EnvelopeError as exc:
        return JudgeAnswer(
            name,
            url,
            JudgeOutcome.PARSE_ERROR,
            error=exc.message,
            flags={"raw_preview": response.body[:PREVIEW_CHARS]},
            raw_output=response.body[:RAW_OUTPUT_CHARS],
        )
    return _from_reply(name, url, reply, read_payload, reply.text or response.body, url)
