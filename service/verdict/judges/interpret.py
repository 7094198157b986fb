"""The pure reading of a finished judge call: a CLI's exit, stdout and stderr, or an HTTP response, classified in one
fixed order into a `JudgeAnswer` (docs/judges.md has the table):

1. timeout                      `timeout: true`
2. missing binary               `missing_dependency: true` (decided by the service, which sees the runner's error)
3. non-zero exit                `api_error: true`; the cause is read from the envelope first (claude prints it on
                                stdout and exits 1 with an empty stderr; gemini prints it as JSON on stderr), then
                                from stderr
4. empty stdout                 `empty_output: true`, with the start of stderr
5. parse                        retries exhausted and `is_error` (`api_error: true`), then no readable answer
                                (`raw_preview`)

Each failure is an answer with a cause, never an exception, because a judge that malfunctions must never become a
verdict against the output it was judging. No I/O.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from verdict.judges import chat
from verdict.judges.clipping import clip
from verdict.judges.credentials import credential_hint
from verdict.judges.envelopes import EnvelopeError, JudgeReply, OversizedNumber, loads, read_chat_completion
from verdict.judges.hosts import CliHost, HttpHost
from verdict.judges.model import JudgeAnswer, JudgeOutcome, PayloadReader, failure
from verdict.judges.payload import PayloadError
from verdict.runner import Completed

__all__ = ["MAX_JUDGE_OUTPUT_BYTES", "interpret_completion", "interpret_http", "schema_instruction"]

MAX_JUDGE_OUTPUT_BYTES = 8 * 1024 * 1024
"""Stdout kept per call. Stream hosts (codex, qwen) put the answer in the *last* event, after every progress event,
so the cap is generous; output beyond it is dropped and the call reports that it was cut."""
PREVIEW_CHARS = 300
RAW_OUTPUT_CHARS = 500


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _tail(text: str, limit: int = 500) -> str:
    text = text.strip()
    return text if len(text) <= limit else "…" + text[-limit:]


def _from_reply(
    host: str, binary: str, reply: JudgeReply, read_payload: PayloadReader, raw: str, label: str
) -> JudgeAnswer:
    """Steps 5 onwards, shared by CLI and HTTP hosts: the host's own error report, then the answer object."""
    if reply.retries_exhausted or reply.is_error:
        exhausted = reply.retries_exhausted
        return JudgeAnswer(
            host,
            binary,
            JudgeOutcome.API_ERROR,
            error=f"{label} could not produce valid structured output after retries"
            if exhausted
            else f"{label} reported error: {reply.error[:200]}",
            flags={"api_error": True, "retries_exhausted": True} if exhausted else {"api_error": True},
            reply=reply,
            raw_output=raw[:RAW_OUTPUT_CHARS],
        )
    try:
        payload = read_payload(reply)
    except PayloadError as exc:
        return JudgeAnswer(
            host,
            binary,
            JudgeOutcome.PARSE_ERROR,
            error=exc.message,
            flags={"raw_preview": raw[:PREVIEW_CHARS]},
            reply=reply,
            raw_output=raw[:RAW_OUTPUT_CHARS],
        )
    return JudgeAnswer(host, binary, JudgeOutcome.OK, payload=payload, reply=reply, raw_output=raw[:RAW_OUTPUT_CHARS])


def _oversized(host: str, binary: str, error: OversizedNumber) -> JudgeAnswer:
    """A reply holding a number no count or score can have is a malfunctioning judge, as an API error is."""
    return failure(
        host, binary, JudgeOutcome.API_ERROR, f"{binary} replied with {error}", api_error=True, oversized_number=True
    )


def interpret_completion(host: CliHost, completed: Completed, read_payload: PayloadReader) -> JudgeAnswer:
    """Classify a finished CLI call in the reference's order (the module docstring). Pure."""
    try:
        return _interpret_completion(host, completed, read_payload)
    except OversizedNumber as error:
        return _oversized(host.name, host.binary, error)


def _interpret_completion(host: CliHost, completed: Completed, read_payload: PayloadReader) -> JudgeAnswer:
    name, binary = host.name, host.binary
    if completed.timed_out:
        return failure(name, binary, JudgeOutcome.TIMEOUT, "LLM evaluation timeout", timeout=True)
    stdout, stderr = _decode(completed.stdout), _decode(completed.stderr)
    if completed.returncode != 0:
        # claude exits 1 whenever its envelope says is_error (not logged in, API error, retries exhausted): the
        # envelope names the cause and carries the cost and usage the call ran up, which the metrics record
        envelope: JudgeReply | None = None
        with contextlib.suppress(EnvelopeError):
            envelope = host.read(stdout, stderr)
        cause = clip(envelope.error.strip(), 500) if envelope is not None and envelope.is_error else ""
        if not cause:
            cause = _tail(stderr) or (
                f"killed by {completed.signal_name}" if completed.signal_name else "no output on stderr"
            )
        flags: dict[str, Any] = {"api_error": True, "exit_code": completed.returncode}
        if completed.signal_name:
            flags["signal"] = completed.signal_name
        if envelope is not None and envelope.retries_exhausted:
            flags["retries_exhausted"] = True
        hint = credential_hint(cause, host.credentials)
        if hint:
            flags["credentials"] = True
        answer = failure(name, binary, JudgeOutcome.API_ERROR, f"{binary} CLI error: {cause}{hint}", **flags)
        return dataclasses.replace(answer, raw_output=stdout[:RAW_OUTPUT_CHARS], reply=envelope)
    if not stdout.strip():
        error = f"{binary} CLI returned empty output"
        if stderr.strip():
            error += f" (stderr: {stderr.strip()[:200]})"
        return failure(name, binary, JudgeOutcome.EMPTY, error, empty_output=True)
    try:
        reply = host.read(stdout, stderr)
    except EnvelopeError as exc:
        error = exc.message
        if completed.stdout_truncated:
            error += f" (the output was cut at {MAX_JUDGE_OUTPUT_BYTES} bytes)"
        return JudgeAnswer(
            name,
            binary,
            JudgeOutcome.PARSE_ERROR,
            error=error,
            flags={"raw_preview": stdout[:PREVIEW_CHARS]},
            raw_output=stdout[:RAW_OUTPUT_CHARS],
        )
    return _from_reply(name, binary, reply, read_payload, stdout, f"{binary} CLI")


def interpret_http(host: HttpHost, response: chat.HttpResponse, read_payload: PayloadReader) -> JudgeAnswer:
    """Classify an HTTP judge's response: a non-2xx status is an API error with the server's message. Pure."""
    try:
        return _interpret_http(host, response, read_payload)
    except OversizedNumber as error:
        return _oversized(host.name, host.completions_url, error)


def _interpret_http(host: HttpHost, response: chat.HttpResponse, read_payload: PayloadReader) -> JudgeAnswer:
    name, url = host.name, host.completions_url
    if not 200 <= response.status < 300:
        cause = response.body.strip()[:200] or "no body"
        with contextlib.suppress(json.JSONDecodeError, AttributeError, TypeError):
            error = loads(response.body).get("error")
            cause = str(error.get("message") if isinstance(error, Mapping) else error or cause)[:200]
        hint = credential_hint(f"{response.status} {cause}", (), settings=True)
        return failure(
            name,
            url,
            JudgeOutcome.API_ERROR,
            f"{url} answered HTTP {response.status}: {cause}{hint}",
            api_error=True,
            http_status=response.status,
            **({"credentials": True} if hint else {}),
        )
    if not response.body.strip():
        return failure(name, url, JudgeOutcome.EMPTY, f"{url} returned an empty body", empty_output=True)
    try:
        reply = read_chat_completion(response.body)
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


def schema_instruction(schema: Mapping[str, Any]) -> str:
    """What a host that cannot enforce a schema is told instead (otherwise it would not know the answer's shape)."""
    return (
        f"Reply with only a JSON object, no other text, that matches this JSON schema:\n{json.dumps(schema, indent=1)}"
    )
