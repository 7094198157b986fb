"""JudgeService: one judge call, from prompt to answer, with every protection a server needs around it.

One call goes: pick the host → check the caller's deadline leaves time for it → wait for a judge slot (the runner's
`judge` pool: bounded queue, overflow is RESOURCE_EXHAUSTED) → run the CLI through the runner (private HOME and cwd,
stdin fed or /dev/null, the process group killed on timeout and cancellation) or POST to the HTTP endpoint → read the
host's envelope and classify the result (`verdict.judges.interpret`) → record metrics.

What *is* raised: DeadlineTooShort (the caller cannot wait for a judge), ResourceExhausted (the queue is full),
FailedPrecondition (no judge host at all): those are about the request or the server, not about the judged output.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

from verdict.config.keys import JUDGE_TIMEOUT_CEILING_SECONDS, Config
from verdict.errors import DeadlineTooShort, FailedPrecondition, InvalidConfig, VerdictError, resource_exhausted
from verdict.judges import chat
from verdict.judges.api_judge import ask_api, provider_key
from verdict.judges.apis import ApiHost
from verdict.judges.clis import HOSTS
from verdict.judges.credentials import KeySource, bind_origin, key_source, origin
from verdict.judges.hosts import MAX_ARGUMENT_BYTES, CliHost, Host, HostRegistry, HttpHost, model_for
from verdict.judges.interpret import MAX_JUDGE_OUTPUT_BYTES, interpret_completion, interpret_http, schema_instruction
from verdict.judges.model import JudgeAnswer, JudgeOutcome, JudgeRequest, failure
from verdict.judges.rulings import record_spend
from verdict.metrics import Metrics
from verdict.runner import Command, CommandNotFound, Runner, SlotLimit, minimal_env
from verdict.waiting import waiting_outside

__all__ = ["DEADLINE_MARGIN_SECONDS", "MIN_JUDGE_SECONDS", "JudgeService"]

DEADLINE_MARGIN_SECONDS = 0.5
"""Kept back from the caller's deadline so the verdict can still be sent after the judge is stopped."""
MIN_JUDGE_SECONDS = 1.0
"""A judge given less than this cannot answer (the fastest CLIs take ~0.5 s to fail); not starting one is honest."""


class JudgeService:
    """Runs judge calls for the evaluators and the second opinion. One per server.

    `env` is the server's environment: it selects the host (LL_HOST_CLI, LL_HOOK_HOST, PATH) and supplies the judge
    child's PATH, proxy settings and the host's credential variables (docs/judges.md), nothing else. `scratch_root`
    is where per-call HOME directories are made (the system temp dir by default). `hosts` is the registry hosts are
    chosen from (every known CLI by default); a test or an embedding program passes its own. `slots` replaces the
    runner's `judge` pool: calibration passes a pool of its own so it never holds a slot a request waits for.
    """

    def __init__(
        self,
        config: Config,
        runner: Runner,
        metrics: Metrics,
        env: Mapping[str, str],
        *,
        scratch_root: str | Path | None = None,
        hosts: HostRegistry = HOSTS,
        slots: SlotLimit | None = None,
    ) -> None:
        self.config = config
        self.runner = runner
        self.metrics = metrics
        self.env = dict(env)
        self.scratch_root = str(scratch_root) if scratch_root is not None else None
        self.hosts = hosts
        # Found now, once: tempfile probes for a usable directory by opening files in it, which fails (as "no
        # usable temporary directory") whenever the server is out of descriptors, and every judge call would.
        tempfile.gettempdir()
        if slots is None:
            self.slots = runner.limit("judge", config)
            self.metrics.judges_waiting.set_function(lambda: self.slots.waiting)
        else:
            self.slots = slots
        self._host = hosts.select(config.judge_host, self.env)
        self._as_root = os.geteuid() == 0
        self._credentials, self._key_origin = self._bind_credentials()

    def _bind_credentials(self) -> tuple[KeySource | None, tuple[str, str, int] | None]:
        """The configured API key and the one origin it may be sent to: the judge host's. Raises ConfigError when
        the key cannot be read or there is no HTTP judge host to send it to (a setting that would do nothing)."""
        source = key_source(self.config.judge_api_key_file, self.config.judge_api_key_env, self.env)
        if source is None:
            return None, None
        judge_url = self._host.base_url if isinstance(self._host, HttpHost | ApiHost) else None
        return source, bind_origin(source, judge_url)

    def _with_credentials(self, host: Host) -> Host:
        """`host` carrying the API key when it is the origin the key was configured for; any other host unchanged."""
        if isinstance(host, HttpHost) and self._credentials is not None and origin(host.base_url) == self._key_origin:
            return dataclasses.replace(host, credentials=self._credentials)
        if isinstance(host, ApiHost):  # the configured key for its origin, else the provider's own variable
            if self._credentials is not None and origin(host.base_url) == self._key_origin:
                return dataclasses.replace(host, credentials=self._credentials)
            with contextlib.suppress(chat.CredentialError):  # an unusable key: the call fails naming the variables
                return dataclasses.replace(host, credentials=provider_key(host, self.env))
        return host

    @property
    def host(self) -> Host | None:
        """The judge host now: the configured one, or the first CLI on PATH (probed again while there is none)."""
        if self._host is None:
            self._host = self.hosts.select("", self.env)
        return self._host

    async def ask(self, request: JudgeRequest) -> JudgeAnswer:
        """Ask one judge one question. Raises DeadlineTooShort, ResourceExhausted, FailedPrecondition (see module)."""
        host = request.host or self.host
        if host is not None:
            host = self._with_credentials(host)
        if host is None:
            raise FailedPrecondition(
                "no judge host: set judge_host (a CLI name or an http(s) URL) or LL_HOST_CLI, or put one of "
                f"{', '.join(self.hosts.binaries)} on the server's PATH",
                reason="NO_JUDGE_HOST",
            )
        timeout = request.timeout if request.timeout is not None else self.config.judge_timeout_seconds
        # second_opinion_timeout_seconds has no ceiling of its own: no judge call may run past the 1800 s ceiling
        timeout = min(timeout, JUDGE_TIMEOUT_CEILING_SECONDS)
        calls = self.metrics.judge_calls
        try:
            self._model(host, request)
            self._budget(timeout, request.deadline)
            async with waiting_outside(), self._slot(request.deadline):
                budget = self._budget(timeout, request.deadline)
                started = time.monotonic()
                try:
                    if isinstance(host, HttpHost):
                        answer = await self._ask_http(host, request, budget)
                    elif isinstance(host, ApiHost):
                        answer = await ask_api(
                            host,
                            system=request.system,
                            prompt=self._prompt(host, request),
                            model=self._model(host, request),
                            seconds=budget,
                            read_payload=request.read_payload,
                        )
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
        return model_for(host, model)

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
            return failure(
                host.name,
                host.binary,
                JudgeOutcome.REJECTED,
                f"{what} ({invocation.largest_argument} bytes) is over the {MAX_ARGUMENT_BYTES}-byte limit of one "
                "command-line argument",
                **{flag: True},
            )
        try:
            call_dir = Path(tempfile.mkdtemp(prefix=f"verdict-judge-{host.name}-", dir=self.scratch_root))
        except OSError as exc:
            exhausted = resource_exhausted(exc, what=f"make a private HOME for {host.binary}")
            if exhausted is None:
                raise
            self.metrics.resource_exhaustion.labels(resource=exhausted.metadata["resource"]).inc()
            raise exhausted from None
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
                slot_held=True,
            )
            try:
                completed = await self.runner.run(command)
            except CommandNotFound:
                return failure(
                    host.name,
                    host.binary,
                    JudgeOutcome.MISSING,
                    f"{host.binary} CLI not found. Install the active host CLI (see LL_HOST_CLI).",
                    missing_dependency=True,
                )
            except OSError as exc:
                return failure(
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
                temperature=request.temperature or 0,
            )
        except TimeoutError:
            return failure(host.name, url, JudgeOutcome.TIMEOUT, "LLM evaluation timeout", timeout=True)
        except chat.ChatUnreachable as exc:
            return failure(host.name, url, JudgeOutcome.API_ERROR, str(exc), api_error=True, unreachable=True)
        except chat.CredentialError as exc:
            return failure(host.name, url, JudgeOutcome.API_ERROR, str(exc), api_error=True, credentials=True)
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
