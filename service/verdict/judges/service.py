"""JudgeService: one judge call, from prompt to answer object, with every protection a server needs around it.

One call goes: pick the host → check the caller's deadline leaves time for it → wait for a judge slot (bounded queue,
overflow is RESOURCE_EXHAUSTED) → run the CLI through the runner (private HOME and cwd, stdin fed or /dev/null, the
process group killed on timeout and cancellation) or POST to the HTTP endpoint → read the host's envelope → pick the
answer object. Failures are classified in the reference's order, and each is an answer with a cause, never an
exception, because a judge that malfunctions must never become a verdict against the output it was judging:

1. timeout                      `timeout: true`
2. missing binary               `missing_dependency: true`
3. non-zero exit                `api_error: true`; the cause is read from the envelope first (claude prints it on
                                stdout and exits 1 with an empty stderr; gemini prints it as JSON on stderr), then
                                from stderr
4. empty stdout                 `empty_output: true`, with the start of stderr
5. parse                        retries exhausted and `is_error` (`api_error: true`), then no readable answer
                                (`raw_preview`)

What *is* raised: DeadlineTooShort (the caller cannot wait for a judge), ResourceExhausted (the queue is full),
FailedPrecondition (no judge host at all): those are about the request or the server, not about the judged output.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from verdict.config import JUDGE_TIMEOUT_CEILING_SECONDS, Config
from verdict.errors import DeadlineTooShort, FailedPrecondition, InvalidConfig, VerdictError
from verdict.judges import chat
from verdict.judges.envelopes import EnvelopeError, JudgeReply, loads, read_chat_completion, read_envelope
from verdict.judges.hosts import CLAUDE_ONLY_MODELS, MAX_ARGUMENT_BYTES, CliHost, Host, HttpHost, select_host
from verdict.judges.payload import PayloadError, verdict_payload
from verdict.judges.rulings import record_spend
from verdict.metrics import Metrics
from verdict.runner import Command, CommandNotFound, Completed, Runner, SlotLimit, minimal_env

__all__ = [
    "DEADLINE_MARGIN_SECONDS",
    "DETAIL_TEXT_CHARS",
    "MAX_JUDGE_OUTPUT_BYTES",
    "MIN_JUDGE_SECONDS",
    "JudgeAnswer",
    "JudgeOutcome",
    "JudgeRequest",
    "JudgeService",
    "clip",
    "clip_payload",
    "interpret_completion",
    "interpret_http",
]

DEADLINE_MARGIN_SECONDS = 0.5
"""Kept back from the caller's deadline so the verdict can still be sent after the judge is stopped."""
MIN_JUDGE_SECONDS = 1.0
"""A judge given less than this cannot answer (the fastest CLIs take ~0.5 s to fail); not starting one is honest."""
MAX_JUDGE_OUTPUT_BYTES = 8 * 1024 * 1024
"""Stdout kept per call. Stream hosts (codex, qwen) put the answer in the *last* event, after every progress event,
so the cap is generous; output beyond it is dropped and the call reports that it was cut."""
PREVIEW_CHARS = 300
RAW_OUTPUT_CHARS = 500
DETAIL_TEXT_CHARS = 4000
"""The most of any one text the judge wrote (a reason, a quote, a verdict it made up) that goes into a verdict's
details. A judge's reply may be 8 MiB, and a reason, its quote and the raw answer holding both again made a response
over gRPC's 4 MiB message limit: the caller got RESOURCE_EXHAUSTED instead of the verdict."""
RAW_PAYLOAD_CHARS = 16 * 1024
"""An answer object bigger than this (as JSON) is shown in `raw` by its answer keys only, each clipped."""
_ANSWER_KEYS = ("verdict", "verdict_a", "verdict_b", "ok", "confidence", "reason", "evidence")


def clip(text: str, limit: int = DETAIL_TEXT_CHARS) -> str:
    """`text`, or its first `limit` characters and a note of how much was cut."""
    return text if len(text) <= limit else f"{text[:limit]}… [{len(text) - limit} more characters]"


def clip_payload(payload: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """The answer object for `raw` in the details, and whether it had to be cut (RAW_PAYLOAD_CHARS)."""
    try:
        size = len(json.dumps(payload, default=str))
    except (ValueError, RecursionError):
        size = RAW_PAYLOAD_CHARS + 1
    if size <= RAW_PAYLOAD_CHARS:
        return dict(payload), False
    kept: dict[str, Any] = {}
    for key in _ANSWER_KEYS:
        if key in payload:
            value = payload[key]
            scalar = value is None or isinstance(value, bool | int | float)
            kept[key] = value if scalar else clip(value if isinstance(value, str) else _repr(value))
    return kept, True


def _repr(value: Any) -> str:
    try:
        return repr(value)
    except RecursionError:
        return "(nested too deeply to show)"


PayloadReader = Callable[[JudgeReply], dict[str, Any]]


class JudgeOutcome(StrEnum):
    """How a judge call ended; the `outcome` label of verdict_judge_calls_total."""

    OK = "ok"
    TIMEOUT = "timeout"
    MISSING = "missing"
    API_ERROR = "api_error"
    EMPTY = "empty"
    PARSE_ERROR = "parse_error"
    REJECTED = "rejected"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class JudgeRequest:
    """One question for a judge.

    `schema` is the JSON schema of the answer: enforced by hosts that can (claude, qwen), spelled out in the prompt
    for the others. `system` goes in a system message on HTTP hosts and before the prompt on CLIs. `timeout`
    defaults to judge_timeout_seconds and is at most JUDGE_TIMEOUT_CEILING_SECONDS; `deadline` (time.monotonic())
    caps it. `host` defaults to the judge host.
    """

    prompt: str
    model: str = ""
    schema: Mapping[str, Any] | None = None
    system: str = ""
    timeout: float | None = None
    deadline: float | None = None
    read_payload: PayloadReader = verdict_payload
    host: Host | None = None


@dataclass(frozen=True)
class JudgeAnswer:
    """A judge call's result: the answer object when `outcome` is ok, otherwise the cause.

    `flags` are the reference's detail keys for the failure (`timeout`, `missing_dependency`, `api_error`,
    `empty_output`, `raw_preview`, ...), so clients written against little-loops read the same details.
    """

    host: str
    binary: str
    outcome: JudgeOutcome
    payload: dict[str, Any] | None = None
    error: str = ""
    flags: Mapping[str, Any] = field(default_factory=dict)
    latency_ms: int = 0
    raw_output: str = ""
    reply: JudgeReply | None = None

    @property
    def ok(self) -> bool:
        return self.outcome is JudgeOutcome.OK

    def failure_details(self) -> dict[str, Any]:
        """The details of an `error` verdict caused by this call."""
        return {"error": self.error, **self.flags, "judge_host": self.host}


def _failure(host: str, binary: str, outcome: JudgeOutcome, error: str, **flags: Any) -> JudgeAnswer:
    return JudgeAnswer(host, binary, outcome, error=error, flags=flags)


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _tail(text: str, limit: int = 500) -> str:
    text = text.strip()
    return text if len(text) <= limit else "…" + text[-limit:]


def _from_reply(
    host: str, binary: str, reply: JudgeReply, read_payload: PayloadReader, raw: str, label: str
) -> JudgeAnswer:
    """Steps 5 onwards, shared by CLI and HTTP hosts: the host's own error report, then the answer object."""
    if reply.retries_exhausted:
        return JudgeAnswer(
            host,
            binary,
            JudgeOutcome.API_ERROR,
            error=f"{label} could not produce valid structured output after retries",
            flags={"api_error": True, "retries_exhausted": True},
            reply=reply,
            raw_output=raw[:RAW_OUTPUT_CHARS],
        )
    if reply.is_error:
        return JudgeAnswer(
            host,
            binary,
            JudgeOutcome.API_ERROR,
            error=f"{label} reported error: {reply.error[:200]}",
            flags={"api_error": True},
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


def interpret_completion(host: CliHost, completed: Completed, read_payload: PayloadReader) -> JudgeAnswer:
    """Classify a finished CLI call in the reference's order (the module docstring). Pure."""
    name, binary = host.name, host.binary
    if completed.timed_out:
        return _failure(name, binary, JudgeOutcome.TIMEOUT, "LLM evaluation timeout", timeout=True)
    stdout, stderr = _decode(completed.stdout), _decode(completed.stderr)
    if completed.returncode != 0:
        # claude exits 1 whenever its envelope says is_error (not logged in, API error, retries exhausted): the
        # envelope names the cause and carries the cost and usage the call ran up, which the metrics record
        envelope: JudgeReply | None = None
        with contextlib.suppress(EnvelopeError):
            envelope = read_envelope(name, stdout, stderr)
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
        answer = _failure(name, binary, JudgeOutcome.API_ERROR, f"{binary} CLI error: {cause}", **flags)
        return dataclasses.replace(answer, raw_output=stdout[:RAW_OUTPUT_CHARS], reply=envelope)
    if not stdout.strip():
        error = f"{binary} CLI returned empty output"
        if stderr.strip():
            error += f" (stderr: {stderr.strip()[:200]})"
        return _failure(name, binary, JudgeOutcome.EMPTY, error, empty_output=True)
    try:
        reply = read_envelope(name, stdout, stderr)
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
    name, url = host.name, host.completions_url
    if not 200 <= response.status < 300:
        cause = response.body.strip()[:200] or "no body"
        with contextlib.suppress(json.JSONDecodeError, AttributeError, TypeError):
            error = loads(response.body).get("error")
            cause = str(error.get("message") if isinstance(error, Mapping) else error or cause)[:200]
        return _failure(
            name,
            url,
            JudgeOutcome.API_ERROR,
            f"{url} answered HTTP {response.status}: {cause}",
            api_error=True,
            http_status=response.status,
        )
    if not response.body.strip():
        return _failure(name, url, JudgeOutcome.EMPTY, f"{url} returned an empty body", empty_output=True)
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
    """What a host that cannot enforce a schema is told instead (the reference told it nothing)."""
    return (
        f"Reply with only a JSON object, no other text, that matches this JSON schema:\n{json.dumps(schema, indent=1)}"
    )


class JudgeService:
    """Runs judge calls for the evaluators and the second opinion. One per server.

    `env` is the server's environment: it selects the host (LL_HOST_CLI, LL_HOOK_HOST, PATH) and supplies the judge
    child's PATH, proxy settings and the host's credential variables (docs/judges.md), nothing else. `scratch_root`
    is where per-call HOME directories are made (the system temp dir by default).
    """

    def __init__(
        self,
        config: Config,
        runner: Runner,
        metrics: Metrics,
        env: Mapping[str, str],
        *,
        scratch_root: str | Path | None = None,
    ) -> None:
        self.config = config
        self.runner = runner
        self.metrics = metrics
        self.env = dict(env)
        self.scratch_root = str(scratch_root) if scratch_root is not None else None
        self.slots = SlotLimit("judge", config.max_concurrent_judges, config.judge_queue_size)
        self.metrics.judges_waiting.set_function(lambda: self.slots.waiting)
        self._host = select_host(config.judge_host, self.env)
        self._as_root = os.geteuid() == 0

    @property
    def host(self) -> Host | None:
        """The judge host now: the configured one, or the first CLI on PATH (probed again while there is none)."""
        if self._host is None:
            self._host = select_host("", self.env)
        return self._host

    async def ask(self, request: JudgeRequest) -> JudgeAnswer:
        """Ask one judge one question. Raises DeadlineTooShort, ResourceExhausted, FailedPrecondition (see module)."""
        host = request.host or self.host
        if host is None:
            raise FailedPrecondition(
                "no judge host: set judge_host (a CLI name or an http(s) URL) or LL_HOST_CLI, or put one of claude, "
                "codex, gemini, omp, kimi, qwen on the server's PATH",
                reason="NO_JUDGE_HOST",
            )
        timeout = request.timeout if request.timeout is not None else self.config.judge_timeout_seconds
        # second_opinion_timeout_seconds has no ceiling of its own: no judge call may run past the reference's 1800 s
        timeout = min(timeout, JUDGE_TIMEOUT_CEILING_SECONDS)
        calls = self.metrics.judge_calls
        try:
            self._model(host, request)
            self._budget(timeout, request.deadline)
            async with self._slot(request.deadline):
                budget = self._budget(timeout, request.deadline)
                started = time.monotonic()
                try:
                    if isinstance(host, HttpHost):
                        answer = await self._ask_http(host, request, budget)
                    else:
                        answer = await self._ask_cli(host, request, budget)
                except asyncio.CancelledError:
                    calls.labels(host=host.name, outcome=JudgeOutcome.CANCELLED.value).inc()
                    raise
        except VerdictError:
            calls.labels(host=host.name, outcome=JudgeOutcome.REJECTED.value).inc()
            raise
        elapsed = time.monotonic() - started
        answer = dataclasses.replace(answer, latency_ms=int(elapsed * 1000))
        self._record(host, request, answer, elapsed)
        return answer

    def _budget(self, timeout: float, deadline: float | None) -> float:
        if deadline is None:
            return timeout
        remaining = deadline - time.monotonic() - DEADLINE_MARGIN_SECONDS
        if remaining < MIN_JUDGE_SECONDS:
            raise DeadlineTooShort(
                f"the call's deadline leaves {max(remaining, 0.0):.2f}s for a judge, which needs at least "
                f"{MIN_JUDGE_SECONDS:g}s",
                metadata={"remainingSeconds": f"{max(remaining, 0.0):.3f}"},
            )
        return min(timeout, remaining)

    @contextlib.asynccontextmanager
    async def _slot(self, deadline: float | None) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            if deadline is None:
                await stack.enter_async_context(self.slots.hold())
            else:
                try:
                    async with asyncio.timeout(
                        deadline - time.monotonic() - DEADLINE_MARGIN_SECONDS - MIN_JUDGE_SECONDS
                    ):
                        await stack.enter_async_context(self.slots.hold())
                except TimeoutError:
                    raise DeadlineTooShort(
                        "the call's deadline passed while waiting for a free judge slot",
                        metadata={"slots": str(self.slots.slots)},
                    ) from None
            yield

    def _prompt(self, host: Host, request: JudgeRequest) -> str:
        prompt = request.prompt
        if request.schema is not None and not host.structured_output:
            prompt = f"{prompt}\n\n{schema_instruction(request.schema)}"
        if request.system and isinstance(host, CliHost):
            prompt = f"{request.system}\n\n{prompt}"
        return prompt

    def _model(self, host: Host, request: JudgeRequest) -> str:
        model = request.model or self.config.judge_model
        if model.startswith("-"):
            raise InvalidConfig(f"model {model!r} must not start with '-'", field="config.model")
        return "" if isinstance(host, HttpHost) and model in CLAUDE_ONLY_MODELS else model

    async def _ask_cli(self, host: CliHost, request: JudgeRequest, budget: float) -> JudgeAnswer:
        invocation = host.invocation(
            self._prompt(host, request),
            model=self._model(host, request),
            schema=request.schema,
            as_root=self._as_root,
            server_env=self.env,
        )
        if invocation.largest_argument >= MAX_ARGUMENT_BYTES:
            # claude and qwen read the prompt from stdin but take the JSON schema as an argument
            what, flag = (
                ("the JSON schema", "schema_too_large")
                if host.prompt_on_stdin
                else (f"the prompt, which {host.binary} takes only as an argument,", "prompt_too_large")
            )
            return _failure(
                host.name,
                host.binary,
                JudgeOutcome.REJECTED,
                f"{what} ({invocation.largest_argument} bytes) is over the {MAX_ARGUMENT_BYTES}-byte limit of one "
                "command-line argument",
                **{flag: True},
            )
        call_dir = Path(tempfile.mkdtemp(prefix=f"verdict-judge-{host.name}-", dir=self.scratch_root))
        try:
            home, work = call_dir / "home", call_dir / "work"
            home.mkdir()
            work.mkdir()
            command = Command(
                tool="judge",
                argv=invocation.argv,
                timeout=budget,
                env=minimal_env(path=self.env.get("PATH", os.defpath), home=str(home), **invocation.env),
                stdin=invocation.stdin,
                cwd=str(work),
                max_output_bytes=MAX_JUDGE_OUTPUT_BYTES,
                keep_tail=host.answer_at_end,
            )
            try:
                completed = await self.runner.run(command)
            except CommandNotFound:
                return _failure(
                    host.name,
                    host.binary,
                    JudgeOutcome.MISSING,
                    f"{host.binary} CLI not found. Install the active host CLI (see LL_HOST_CLI).",
                    missing_dependency=True,
                )
            except OSError as exc:
                return _failure(
                    host.name, host.binary, JudgeOutcome.API_ERROR, f"cannot start {host.binary}: {exc}", api_error=True
                )
        finally:
            shutil.rmtree(call_dir, ignore_errors=True)
        return interpret_completion(host, completed, request.read_payload)

    async def _ask_http(self, host: HttpHost, request: JudgeRequest, budget: float) -> JudgeAnswer:
        url = host.completions_url
        try:
            response = await chat.complete(
                host,
                system=request.system,
                prompt=self._prompt(host, request),
                model=self._model(host, request),
                seconds=budget,
            )
        except TimeoutError:
            return _failure(host.name, url, JudgeOutcome.TIMEOUT, "LLM evaluation timeout", timeout=True)
        except chat.ChatUnreachable as exc:
            return _failure(host.name, url, JudgeOutcome.API_ERROR, str(exc), api_error=True, unreachable=True)
        return interpret_http(host, response, request.read_payload)

    def _record(self, host: Host, request: JudgeRequest, answer: JudgeAnswer, elapsed: float) -> None:
        self.metrics.judge_calls.labels(host=host.name, outcome=answer.outcome.value).inc()
        if answer.outcome is not JudgeOutcome.REJECTED:
            self.metrics.judge_duration.labels(host=host.name).observe(elapsed)
        reply = answer.reply
        if reply is None:
            return
        if reply.cost_usd:
            self.metrics.judge_cost.labels(host=host.name).inc(max(reply.cost_usd, 0.0))
            record_spend(reply.cost_usd)
        model = self.metrics.model_labels.fold(reply.model or self._model(host, request))
        for kind, tokens in (("input", reply.input_tokens), ("output", reply.output_tokens)):
            if tokens:
                self.metrics.judge_tokens.labels(host=host.name, model=model, kind=kind).inc(max(tokens, 0))
