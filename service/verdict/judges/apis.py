"""The record of a judge that is a provider's own HTTP API (Anthropic Messages, Gemini generateContent).

Teams without a judge CLI in their image still have an API key. One `ApiHost` record per provider holds everything
that differs between the providers: its registered name, base URL, the environment variables its key is read from,
its default model, the function that builds one request (path, headers, JSON body) and the reader for the envelope it
answers with. The call itself (`verdict.judges.api_judge`) is shared: the same timeout, key redaction, response cap,
malfunction classification, ruling cache and token accounting as the OpenAI-compatible host.

A record is data and two pure functions: no I/O here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from verdict.judges.credentials import ApiKey, KeySource
from verdict.judges.envelopes import JudgeReply

__all__ = ["ApiHost", "ApiRequest"]


@dataclass(frozen=True)
class ApiRequest:
    """One POST to a provider: the path under the base URL, the headers (the key's included) and the JSON body."""

    path: str
    headers: Mapping[str, str]
    body: Mapping[str, Any]


ApiBuilder = Callable[["ApiHost", str, str, str, ApiKey], ApiRequest]
"""(host, system, prompt, model, key) -> the request. `model` is already resolved (never empty)."""


@dataclass(frozen=True)
class ApiHost:
    """One provider API, in one record (judges/anthropic.py, judges/gemini.py)."""

    name: str
    """The registered name settings use (`judge_host: anthropic`)."""
    base_url: str
    """Where requests go; a setting may name another (a gateway) as `NAME+https://...`."""
    key_variables: tuple[str, ...]
    """The provider's own variables for its key, in the order they are tried (`judge_api_key_file` and
    `judge_api_key_env` take precedence). Every credential failure names them."""
    default_model: str
    """Asked for when no model is named (or a Claude alias this provider cannot serve)."""
    build: ApiBuilder = field(repr=False)
    read: Callable[[str], JudgeReply] = field(repr=False)
    aliases: Mapping[str, str] = field(default_factory=dict)
    """Short model names this provider's users say (`sonnet`), mapped to model ids the API takes."""
    kind: Literal["api"] = "api"
    structured_output: bool = False
    claude_aliases: bool = False
    credentials: KeySource | None = field(default=None, repr=False, compare=False)

    @property
    def binary(self) -> str:
        """What names this judge in messages and cache keys, as a CLI's binary does: the API's base URL."""
        return self.base_url.rstrip("/")

    def model(self, asked: str) -> str:
        """The model id to send: `asked` (an alias resolved), else the default."""
        asked = asked or self.default_model
        return self.aliases.get(asked, asked)
