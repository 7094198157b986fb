"""Judge hosts: what a host record is, and how a setting picks one from a registry of them.

A host is either an LLM CLI run as a child process or an OpenAI-compatible chat-completions endpoint (llama.cpp, vLLM,
Ollama) named by its base URL. Each CLI is one frozen `CliHost` record holding everything that differs between CLIs:
its registered name and binary, the credential variables it authenticates with, the function that builds its argv,
environment and stdin, the reader for the envelope it prints, and its place in the PATH probe. Every host list the
server uses (names in error messages, the probe order, the credential table, the readers) is derived from a
`HostRegistry` of those records, so a new CLI is one record (`verdict.judges.clis`) plus its recorded envelopes, and
`HostRegistry.problems()` names whatever a record is missing.

Selection: the `judge_host` setting, else `LL_HOST_CLI`, else `LL_HOOK_HOST`, else the first CLI found on the
server's PATH in probe order. Pure: no process is started here.
"""

from __future__ import annotations

import difflib
import re
import shutil
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from verdict.errors import ConfigError
from verdict.judges.apis import ApiHost
from verdict.judges.credentials import KeySource
from verdict.judges.envelopes import JudgeReply

__all__ = [
    "CLAUDE_ONLY_MODELS",
    "MAX_ARGUMENT_BYTES",
    "NETWORK_VARIABLES",
    "Builder",
    "CliHost",
    "Host",
    "HostRegistry",
    "HttpHost",
    "Invocation",
    "Reader",
    "model_for",
]

MAX_ARGUMENT_BYTES = 128 * 1024
"""Linux's MAX_ARG_STRLEN: one argv string at or over this size makes exec fail with E2BIG."""

CLAUDE_ONLY_MODELS = frozenset({"sonnet", "opus", "haiku"})
"""Claude CLI aliases. The default judge model is one of them; a host that does not take them gets no model at all
and picks its own default, because `--model sonnet` makes codex, gemini and a local server fail the call."""

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

_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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


Builder = Callable[["CliHost", str, str, "Mapping[str, Any] | None", bool], Invocation]
"""(host, prompt, model, schema or None, running as root) -> the CLI's argv, added environment and stdin. `model` is
already empty when the host cannot take it, and `schema` is None unless the host enforces schemas itself."""

Reader = Callable[[str, str], JudgeReply]
"""(stdout, stderr) -> the reply; raises EnvelopeError when the output holds neither an answer nor a named error."""


@dataclass(frozen=True)
class CliHost:
    """One judge CLI: everything that differs between CLIs, in one record."""

    name: str
    """The registered name settings use (`claude-code`), which need not be the binary's."""
    binary: str
    """The program looked up on PATH."""
    build: Builder = field(repr=False)
    """Builds one blocking JSON call: argv, environment and stdin."""
    read: Reader = field(repr=False)
    """Reads what the CLI printed into a JudgeReply."""
    credentials: tuple[str, ...]
    """The variables it authenticates with. Every call gets a fresh HOME, so a login saved in the server user's HOME
    is never seen: credentials reach a judge only through these variables, copied from the server's environment."""
    probe_rank: int
    """Its place in the PATH probe when no host is configured: lower is tried first."""
    structured_output: bool
    """The CLI enforces a JSON schema itself (`--json-schema`); the others are told the schema in the prompt."""
    prompt_on_stdin: bool
    """The prompt travels on stdin; otherwise it is one argument, limited to MAX_ARGUMENT_BYTES."""
    answer_at_end: bool = False
    """The CLI streams events and puts the answer last, so an output over the cap keeps its tail."""
    claude_aliases: bool = False
    """The CLI understands the Claude model aliases (CLAUDE_ONLY_MODELS)."""
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
        """The argv, environment and stdin for one blocking JSON call of this CLI. Of the server's environment only
        this host's credential variables and the network settings are passed on."""
        built = self.build(self, prompt, model_for(self, model), schema if self.structured_output else None, as_root)
        passed = {
            name: value for name in (*self.credentials, *NETWORK_VARIABLES) if (value := (server_env or {}).get(name))
        }
        return Invocation(built.argv, {**passed, **built.env}, built.stdin)


@dataclass(frozen=True)
class HttpHost:
    """An OpenAI-compatible chat-completions endpoint; `base_url` without the `/v1/chat/completions` suffix.

    `credentials` is the bearer key it is sent (judges.credentials); left out of repr and comparisons, so a host that
    is logged or compared never shows or depends on it."""

    base_url: str
    kind: Literal["http"] = "http"
    name: str = "openai-compatible"
    structured_output: bool = False
    claude_aliases: bool = False
    credentials: KeySource | None = field(default=None, repr=False, compare=False)

    @property
    def completions_url(self) -> str:
        base = self.base_url.rstrip("/")
        if base.endswith("/chat/completions"):
            return base
        if base.endswith("/v1"):
            return f"{base}/chat/completions"
        return f"{base}/v1/chat/completions"


Host = CliHost | HttpHost | ApiHost
"""A CLI, an OpenAI-compatible endpoint, or a provider's own API (judges/apis.py)."""


def model_for(host: Host, model: str) -> str:
    """The model to ask `host` for: `model`, or nothing when it is a Claude alias the host cannot serve."""
    return "" if model in CLAUDE_ONLY_MODELS and not host.claude_aliases else model


def _record_problems(host: CliHost) -> Iterator[str]:
    """What makes one record unusable; the registry adds the problems between records."""
    if not host.name.strip() or host.name != host.name.strip() or host.name.startswith(("http://", "https://")):
        yield f"{host.name!r}: the name must be a non-blank word, not a URL"
    if not host.binary.strip() or "/" in host.binary:
        yield f"{host.name!r}: the binary must be a program name looked up on PATH"
    if not callable(host.build):
        yield f"{host.name!r}: no argv builder"
    if not callable(host.read):
        yield f"{host.name!r}: no envelope reader"
    if not host.credentials:
        yield f"{host.name!r}: no credential variables (a judge would never be logged in)"
    bad = [name for name in host.credentials if not _VARIABLE_NAME.fullmatch(name)]
    if bad:
        yield f"{host.name!r}: credential variables that are not variable names: {bad}"
    if host.probe_rank < 0:
        yield f"{host.name!r}: the probe rank must be 0 or more"


@dataclass(frozen=True)
class HostRegistry:
    """The judge CLIs a server knows, and every host list derived from them.

    `stubs` are names of hosts that exist elsewhere but have no blocking JSON mode (they can only fail): naming one is
    a configuration error that says so, instead of "unknown".
    """

    hosts: tuple[CliHost, ...]
    stubs: frozenset[str] = frozenset()
    apis: tuple[ApiHost, ...] = ()
    """Providers' own APIs, named like CLIs (`anthropic`); never picked by the PATH probe."""

    def __iter__(self) -> Iterator[CliHost]:
        return iter(self.hosts)

    @property
    def by_name(self) -> Mapping[str, CliHost]:
        return {host.name: host for host in self.hosts}

    @property
    def probe_order(self) -> tuple[str, ...]:
        """Host names in the order the PATH is probed."""
        return tuple(host.name for host in sorted(self.hosts, key=lambda host: host.probe_rank))

    @property
    def binaries(self) -> tuple[str, ...]:
        """The programs, in probe order: what an operator may put on PATH."""
        return tuple(self.by_name[name].binary for name in self.probe_order)

    def problems(self) -> list[str]:
        """Everything that would make a record unreachable or half-built; empty when the registry is whole."""
        found = [problem for host in self.hosts for problem in _record_problems(host)]
        for what, values in (
            ("name", [host.name for host in self.hosts]),
            ("binary", [host.binary for host in self.hosts]),
            ("probe rank", [str(host.probe_rank) for host in self.hosts]),
        ):
            repeated = sorted({value for value in values if values.count(value) > 1})
            if repeated:
                found.append(f"more than one host has the {what} {', '.join(repeated)}")
        api_names = [api.name for api in self.apis]
        clashes = sorted({*self.stubs, *self.by_name} & set(api_names))
        if clashes or len(set(api_names)) < len(api_names):
            found.append(f"API host names that are also other hosts or repeated: {clashes or api_names}")
        found += [f"{api.name!r}: no key variables" for api in self.apis if not api.key_variables]
        clashes = sorted(self.stubs & self.by_name.keys())
        if clashes:
            found.append(f"stub names that are also hosts: {clashes}")
        return found

    def named(self, name: str, *, source: str = "judge_host") -> Host:
        """The host a setting names: a registered CLI name or an http(s) base URL. Raises ConfigError naming
        `source`."""
        name = name.strip()
        if name.startswith(("http://", "https://")):
            return _http_host(name, source)
        hosts = self.by_name
        if name in hosts:
            return hosts[name]
        apis = {api.name: api for api in self.apis}
        if name in apis:
            return apis[name]
        known = ", ".join([*hosts, *apis])
        if name in self.stubs:
            raise ConfigError(source, f"host {name!r} has no blocking JSON mode; use one of {known}")
        by_binary = {host.binary: host.name for host in self.hosts}
        close = [by_binary[name]] if name in by_binary else difflib.get_close_matches(name, [*hosts, *apis], n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(source, f"unknown judge host {name!r}{hint}; use one of {known} or an http(s) URL")

    def select(self, configured: str, env: Mapping[str, str]) -> Host | None:
        """The judge host: `configured`, else LL_HOST_CLI, else LL_HOOK_HOST, else the first CLI on env's PATH;
        None when there is none. A name that is set but unknown raises ConfigError (the server refuses to start)."""
        if configured.strip():
            return self.named(configured)
        for variable in ("LL_HOST_CLI", "LL_HOOK_HOST"):
            if env.get(variable, "").strip():
                return self.named(env[variable], source=variable)
        path = env.get("PATH", "")
        hosts = self.by_name
        for name in self.probe_order:
            if shutil.which(hosts[name].binary, path=path):
                return hosts[name]
        return None


def _http_host(url: str, source: str) -> HttpHost:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in 0-65535
    except ValueError as exc:
        raise ConfigError(source, f"{url!r} is not a usable URL: {exc}") from None
    if not parts.hostname or any(character.isspace() for character in parts.netloc):
        raise ConfigError(source, f"{url!r} is not a usable URL")
    return HttpHost(url)
