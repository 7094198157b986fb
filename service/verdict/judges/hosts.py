"""Judge hosts: which program (or HTTP endpoint) answers a judge call, and exactly how it is invoked.

A host is either an LLM CLI run as a child process (claude, codex, gemini, qwen, kimi, omp) or an OpenAI-compatible
chat-completions endpoint (llama.cpp, vLLM, Ollama) named by its base URL. Each CLI's argv, environment and stdin are
built from how the real program behaves when a server runs it (docs/judges.md, shared/reference/judge-clis.md):

- the prompt goes on stdin wherever the CLI reads it there, because Linux refuses any single argument over 128 KiB
  (E2BIG) and a judged output plus a custom prompt can exceed that;
- codex blocks for ever on an open stdin, so stdin is always either fed and closed, or /dev/null;
- claude refuses `--dangerously-skip-permissions` as root unless `IS_SANDBOX=1`, and writes ~150 kB of telemetry per
  call into HOME unless `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`;
- gemini exits 55 in a directory it does not trust (every fresh per-call directory) unless given `--skip-trust`;
- session files and transcripts (the prompt included) are switched off where a flag exists (`--no-session-persistence`,
  `--ephemeral`, `--chat-recording false`, `--no-session`).

Host selection follows the reference: the `judge_host` setting, else `LL_HOST_CLI`, else `LL_HOOK_HOST`, else the
first CLI found on the server's PATH. Pure: no process is started here.
"""

from __future__ import annotations

import difflib
import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from verdict.errors import ConfigError
from verdict.judges.credentials import KeySource

__all__ = [
    "CLAUDE_ONLY_MODELS",
    "CLI_HOSTS",
    "MAX_ARGUMENT_BYTES",
    "PROBE_ORDER",
    "CliHost",
    "Host",
    "HttpHost",
    "Invocation",
    "host_named",
    "select_host",
]

MAX_ARGUMENT_BYTES = 128 * 1024
"""Linux's MAX_ARG_STRLEN: one argv string at or over this size makes exec fail with E2BIG."""

CLAUDE_ONLY_MODELS = frozenset({"sonnet", "opus", "haiku"})
"""Claude CLI aliases. The reference passed `sonnet` (its default) to every host; other hosts cannot serve it."""

CREDENTIAL_VARIABLES: Mapping[str, tuple[str, ...]] = {
    "claude-code": (
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
    "codex": ("OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL"),
    "gemini": (
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_GENAI_USE_GCA",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "GOOGLE_APPLICATION_CREDENTIALS",
    ),
    "qwen": ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "DASHSCOPE_API_KEY"),
    "kimi-code": ("MOONSHOT_API_KEY", "KIMI_API_KEY", "KIMI_BASE_URL"),
    "omp": ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY"),
}
"""The variables each CLI authenticates with. Every call gets a fresh HOME, so a login saved in the server user's
HOME is never seen: credentials reach a judge only through these variables, copied from the server's environment.
Nothing else of that environment is passed on."""

NETWORK_VARIABLES = (
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "https_proxy",
    "http_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "NODE_EXTRA_CA_CERTS",
)
"""Proxy and CA settings every CLI honours; a server behind a proxy needs them to reach its model at all."""

GEMINI_PROMPT_TRAILER = "Reply with the JSON object only."
"""gemini's and qwen's `-p` is appended to the prompt read from stdin; without `-p` they may fall back to their
interactive mode. A short closing instruction is the argument, the prompt itself travels on stdin."""


@dataclass(frozen=True)
class Invocation:
    """One CLI call: argv (argv[0] is the program, looked up on PATH), extra environment, and stdin (None:
    /dev/null)."""

    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    stdin: bytes | None = None

    @property
    def largest_argument(self) -> int:
        return max((len(arg.encode()) for arg in self.argv), default=0)


@dataclass(frozen=True)
class CliHost:
    """A judge CLI. `structured_output`: the CLI enforces a JSON schema itself (`--json-schema`)."""

    name: str
    binary: str
    structured_output: bool
    prompt_on_stdin: bool
    answer_at_end: bool = False
    """The CLI streams events and puts the answer last, so an output over the cap keeps its tail."""
    kind: Literal["cli"] = "cli"

    def invocation(
        self,
        prompt: str,
        *,
        model: str,
        schema: Mapping[str, Any] | None,
        as_root: bool,
        server_env: Mapping[str, str] | None = None,
    ) -> Invocation:
        """The argv, environment and stdin for one blocking JSON call of this CLI."""
        if model in CLAUDE_ONLY_MODELS and self.name != "claude-code":
            model = ""
        builder = _BUILDERS[self.name]
        invocation = builder(self, prompt, model, schema if self.structured_output else None, as_root)
        passed = {
            name: value
            for name in (*CREDENTIAL_VARIABLES.get(self.name, ()), *NETWORK_VARIABLES)
            if (value := (server_env or {}).get(name))
        }
        return Invocation(invocation.argv, {**passed, **invocation.env}, invocation.stdin)


@dataclass(frozen=True)
class HttpHost:
    """An OpenAI-compatible chat-completions endpoint; `base_url` without the `/v1/chat/completions` suffix.

    `credentials` is the bearer key it is sent (judges.credentials); left out of repr and comparisons, so a host that
    is logged or compared never shows or depends on it."""

    base_url: str
    kind: Literal["http"] = "http"
    name: str = "openai-compatible"
    structured_output: bool = False
    credentials: KeySource | None = field(default=None, repr=False, compare=False)

    @property
    def completions_url(self) -> str:
        base = self.base_url.rstrip("/")
        if base.endswith("/chat/completions"):
            return base
        if base.endswith("/v1"):
            return f"{base}/chat/completions"
        return f"{base}/v1/chat/completions"


Host = CliHost | HttpHost


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


_BUILDERS = {
    "claude-code": _claude,
    "codex": _codex,
    "gemini": _gemini,
    "qwen": _qwen,
    "kimi-code": _kimi,
    "omp": _omp,
}

CLI_HOSTS: Mapping[str, CliHost] = {
    "claude-code": CliHost("claude-code", "claude", structured_output=True, prompt_on_stdin=True),
    "codex": CliHost("codex", "codex", structured_output=False, prompt_on_stdin=True, answer_at_end=True),
    "gemini": CliHost("gemini", "gemini", structured_output=False, prompt_on_stdin=True),
    "qwen": CliHost("qwen", "qwen", structured_output=True, prompt_on_stdin=True, answer_at_end=True),
    "kimi-code": CliHost("kimi-code", "kimi", structured_output=False, prompt_on_stdin=False, answer_at_end=True),
    "omp": CliHost("omp", "omp", structured_output=False, prompt_on_stdin=False, answer_at_end=True),
}
"""The hosts with a blocking JSON mode, by the reference's registered names."""

PROBE_ORDER = ("claude-code", "codex", "gemini", "omp", "kimi-code", "qwen")
"""The reference's PATH probe order, without `pi` (a stub host that can only fail)."""

_STUB_HOSTS = frozenset({"opencode", "pi"})


def host_named(name: str, *, source: str = "judge_host") -> Host:
    """The host a setting names: a registered CLI name or an http(s) base URL. Raises ConfigError naming `source`."""
    name = name.strip()
    if name.startswith(("http://", "https://")):
        try:
            parts = urlsplit(name)
            parts.port  # noqa: B018 - raises ValueError for a port that is not a number in 0-65535
        except ValueError as exc:
            raise ConfigError(source, f"{name!r} is not a usable URL: {exc}") from None
        if not parts.hostname or any(character.isspace() for character in parts.netloc):
            raise ConfigError(source, f"{name!r} is not a usable URL")
        return HttpHost(name)
    if name in CLI_HOSTS:
        return CLI_HOSTS[name]
    if name in _STUB_HOSTS:
        raise ConfigError(source, f"host {name!r} has no blocking JSON mode; use one of {', '.join(CLI_HOSTS)}")
    by_binary = {host.binary: host.name for host in CLI_HOSTS.values()}
    close = [by_binary[name]] if name in by_binary else difflib.get_close_matches(name, list(CLI_HOSTS), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ConfigError(source, f"unknown judge host {name!r}{hint}; use one of {', '.join(CLI_HOSTS)} or an http(s) URL")


def select_host(configured: str, env: Mapping[str, str]) -> Host | None:
    """The judge host: `configured`, else LL_HOST_CLI, else LL_HOOK_HOST, else the first CLI on env's PATH; None
    when there is none. A name that is set but unknown raises ConfigError (the server refuses to start with it)."""
    if configured.strip():
        return host_named(configured)
    for variable in ("LL_HOST_CLI", "LL_HOOK_HOST"):
        if env.get(variable, "").strip():
            return host_named(env[variable], source=variable)
    path = env.get("PATH", "")
    for name in PROBE_ORDER:
        if shutil.which(CLI_HOSTS[name].binary, path=path):
            return CLI_HOSTS[name]
    return None
