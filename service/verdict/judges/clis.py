"""The judge CLIs, one record each: name, binary, credential variables, argv builder, envelope reader, probe rank.

Each builder follows how the real program behaves when a server runs it (docs/judges.md has the table):

- the prompt goes on stdin wherever the CLI reads it there, because Linux refuses any single argument over 128 KiB
  (E2BIG) and a judged output plus a custom prompt can exceed that;
- codex blocks for ever on an open stdin, so stdin is always either fed and closed, or /dev/null;
- claude refuses `--dangerously-skip-permissions` as root unless `IS_SANDBOX=1`, and writes ~150 kB of telemetry per
  call into HOME unless `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`;
- gemini exits 55 in a directory it does not trust (every fresh per-call directory) unless given `--skip-trust`;
- session files and transcripts (the prompt included) are switched off where a flag exists (`--no-session-persistence`,
  `--ephemeral`, `--chat-recording false`, `--no-session`).

Adding a CLI: write its builder and reader, add its record to `HOSTS`, and record its envelopes under
tests/judges/envelopes/<name>/; every table below is derived from `HOSTS`, and the record-completeness test checks the
new record. Pure: no process is started here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from verdict.judges.anthropic import ANTHROPIC
from verdict.judges.envelopes import JudgeReply
from verdict.judges.gemini import GEMINI
from verdict.judges.hosts import CliHost, Host, HostRegistry, Invocation
from verdict.judges.readers import read_claude, read_codex, read_gemini, read_kimi, read_omp, read_qwen

__all__ = [
    "CLI_HOSTS",
    "CREDENTIAL_VARIABLES",
    "HOSTS",
    "PROBE_ORDER",
    "READERS",
    "host_named",
    "read_envelope",
    "select_host",
]

GEMINI_PROMPT_TRAILER = "Reply with the JSON object only."
"""gemini's and qwen's `-p` is appended to the prompt read from stdin; without `-p` they may fall back to their
interactive mode. A short closing instruction is the argument, the prompt itself travels on stdin."""


def _model_args(flag: str, model: str) -> tuple[str, ...]:
    return (flag, model) if model else ()


def _claude(host: CliHost, prompt: str, model: str, schema: Mapping[str, Any] | None, as_root: bool) -> Invocation:
    argv = [
        host.binary,
        "--dangerously-skip-permissions",
        "--output-format",
        "json",
        "-p",
        *_model_args("--model", model),
    ]
    if schema is not None:
        argv += ["--json-schema", json.dumps(schema)]
    argv.append("--no-session-persistence")
    env = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    if as_root:
        env["IS_SANDBOX"] = "1"
    return Invocation(tuple(argv), env, prompt.encode())


def _codex(host: CliHost, prompt: str, model: str, schema: Mapping[str, Any] | None, as_root: bool) -> Invocation:
    argv = (
        host.binary,
        "exec",
        "--dangerously-bypass-approvals-and-sandbox",
        "--json",
        "--skip-git-repo-check",
        "--ephemeral",
        *_model_args("--model", model),
        "-",
    )
    return Invocation(argv, {}, prompt.encode())


def _gemini(host: CliHost, prompt: str, model: str, schema: Mapping[str, Any] | None, as_root: bool) -> Invocation:
    argv = (
        host.binary,
        "--approval-mode",
        "yolo",
        "--output-format",
        "json",
        "--skip-trust",
        *_model_args("--model", model),
        "-p",
        GEMINI_PROMPT_TRAILER,
    )
    return Invocation(argv, {}, prompt.encode())


def _qwen(host: CliHost, prompt: str, model: str, schema: Mapping[str, Any] | None, as_root: bool) -> Invocation:
    argv = [host.binary, "--yolo", "--output-format", "stream-json", *_model_args("--model", model)]
    if schema is not None:
        argv += ["--json-schema", json.dumps(schema)]
    argv += ["--chat-recording", "false", "-p", GEMINI_PROMPT_TRAILER]
    return Invocation(tuple(argv), {"QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"}, prompt.encode())


def _argument_prompt(prompt: str) -> str:
    """A prompt passed as an argument must not start with `-`, or the CLI's option parser may read it as a flag (a
    Markdown bullet would). A leading newline changes nothing for the model."""
    return f"\n{prompt}" if prompt.startswith("-") else prompt


def _kimi(host: CliHost, prompt: str, model: str, schema: Mapping[str, Any] | None, as_root: bool) -> Invocation:
    model_args = _model_args("--model", model)
    return Invocation((host.binary, "--output-format", "stream-json", *model_args, "-p", _argument_prompt(prompt)))


def _omp(host: CliHost, prompt: str, model: str, schema: Mapping[str, Any] | None, as_root: bool) -> Invocation:
    model_args = _model_args("--model", model)
    return Invocation((host.binary, "--mode", "json", "--no-session", "-p", _argument_prompt(prompt), *model_args))


HOSTS = HostRegistry(
    (
        CliHost(
            "claude-code",
            "claude",
            build=_claude,
            read=read_claude,
            credentials=(
                "ANTHROPIC_API_KEY",
                "ANTHROPIC_AUTH_TOKEN",
                "ANTHROPIC_BASE_URL",
                "CLAUDE_CODE_OAUTH_TOKEN",
                "CLAUDE_CODE_USE_BEDROCK",
                "CLAUDE_CODE_USE_VERTEX",
                "AWS_REGION",
                "AWS_ACCESS_KEY_ID",
                "AWS_SECRET_ACCESS_KEY",
                "AWS_SESSION_TOKEN",
                "AWS_BEARER_TOKEN_BEDROCK",
                "ANTHROPIC_VERTEX_PROJECT_ID",
                "CLOUD_ML_REGION",
                "GOOGLE_APPLICATION_CREDENTIALS",
            ),
            probe_rank=0,
            structured_output=True,
            prompt_on_stdin=True,
            claude_aliases=True,
        ),
        CliHost(
            "codex",
            "codex",
            build=_codex,
            read=read_codex,
            credentials=("OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL"),
            probe_rank=1,
            structured_output=False,
            prompt_on_stdin=True,
            answer_at_end=True,
        ),
        CliHost(
            "gemini",
            "gemini",
            build=_gemini,
            read=read_gemini,
            credentials=(
                "GEMINI_API_KEY",
                "GOOGLE_API_KEY",
                "GOOGLE_GENAI_USE_VERTEXAI",
                "GOOGLE_GENAI_USE_GCA",
                "GOOGLE_CLOUD_PROJECT",
                "GOOGLE_CLOUD_LOCATION",
                "GOOGLE_APPLICATION_CREDENTIALS",
            ),
            probe_rank=2,
            structured_output=False,
            prompt_on_stdin=True,
        ),
        CliHost(
            "qwen",
            "qwen",
            build=_qwen,
            read=read_qwen,
            credentials=("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "DASHSCOPE_API_KEY"),
            probe_rank=5,
            structured_output=True,
            prompt_on_stdin=True,
            answer_at_end=True,
        ),
        CliHost(
            "kimi-code",
            "kimi",
            build=_kimi,
            read=read_kimi,
            credentials=("MOONSHOT_API_KEY", "KIMI_API_KEY", "KIMI_BASE_URL"),
            probe_rank=4,
            structured_output=False,
            prompt_on_stdin=False,
            answer_at_end=True,
        ),
        CliHost(
            "omp",
            "omp",
            build=_omp,
            read=read_omp,
            credentials=("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY"),
            probe_rank=3,
            structured_output=False,
            prompt_on_stdin=False,
            answer_at_end=True,
        ),
    ),
    stubs=frozenset({"opencode", "pi"}),
    apis=(ANTHROPIC, GEMINI),
)
"""The CLIs with a blocking JSON mode. `opencode` and `pi` are known names with no such mode; `pi` is also left out
of the PATH probe, since a host that can only fail must not be picked just because it is installed."""

CLI_HOSTS: Mapping[str, CliHost] = HOSTS.by_name
PROBE_ORDER: tuple[str, ...] = HOSTS.probe_order
CREDENTIAL_VARIABLES: Mapping[str, tuple[str, ...]] = {host.name: host.credentials for host in HOSTS}
READERS = {host.name: host.read for host in HOSTS}


def host_named(name: str, *, source: str = "judge_host") -> Host:
    """`HOSTS.named`: the host a setting names (a registered CLI name or an http(s) base URL)."""
    return HOSTS.named(name, source=source)


def select_host(configured: str, env: Mapping[str, str]) -> Host | None:
    """`HOSTS.select`: the configured host, else LL_HOST_CLI, else LL_HOOK_HOST, else the first CLI on PATH."""
    return HOSTS.select(configured, env)


def read_envelope(host: str, stdout: str, stderr: str = "") -> JudgeReply:
    """The reply in a registered CLI's output. Raises EnvelopeError when there is neither an answer nor a named
    error."""
    return CLI_HOSTS[host].read(stdout, stderr)
