"""The API key an OpenAI-compatible judge sends as `Authorization: Bearer <key>`, kept out of every output.

Hosted endpoints (OpenAI, OpenRouter, a vLLM or LiteLLM gateway behind a key) refuse a request without one. The key
comes from a file (`judge_api_key_file`: a Kubernetes Secret mounted as a volume, re-read when it changes, so a
rotated Secret is used without a restart) or from an environment variable the operator names
(`judge_api_key_env`: `env: valueFrom: secretKeyRef`). There is deliberately no key setting of its own: a value in
the config file, a ConfigMap or a flag would sit in plain text where configuration is read and shown.

How it stays secret:

- `ApiKey` never prints its value (repr and str are redacted), so a logged or formatted host or exception cannot
  carry it; the value leaves only through `authorization()`, into the request header.
- A key with characters outside visible ASCII (or a quote or backslash) is refused at load: `http.client` would
  reject such a header with an exception whose message quotes the value, a CR/LF would inject headers, and a key that
  JSON escapes could be echoed in a spelling `redact` does not look for.
- Every text that came back from the endpoint (an error body that echoes the key, a reply that quotes it) passes
  through `redact` before anything reads it, so it cannot reach details, logs or metrics either.
- The key goes only to the origin (scheme, host, port) of the judge host it was configured for, never to another
  endpoint such as a second-opinion model elsewhere.
- Errors about the key name the setting and the file, never the content.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

from verdict.errors import ConfigError

__all__ = [
    "REDACTED",
    "ApiKey",
    "CredentialError",
    "KeyEnv",
    "KeyFile",
    "KeySource",
    "bind_origin",
    "credential_hint",
    "credential_variables",
    "key_source",
    "origin",
]

_log = logging.getLogger(__name__)

REDACTED = "[redacted]"
MAX_KEY_BYTES = 16 * 1024
"""A key file bigger than this is a wrong file (a certificate bundle, a log), not a key."""
_KEY_CHARACTERS = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")
"""Visible ASCII but `"` and `\\`: a key is spelled the same in JSON (but for `/`), so an echo of it is found."""


def _json_spellings(character: str) -> str:
    """A pattern for every way JSON can spell one key character: itself, `\\uXXXX` (either case), `\\/` for `/`."""
    spellings = [re.escape(character), f"\\\\u(?i:{ord(character):04x})"]
    if character == "/":
        spellings.append(r"\\/")
    return f"(?:{'|'.join(spellings)})"


class CredentialError(Exception):
    """The key cannot be read or is unusable; the message names the setting and never contains the key."""


class ApiKey:
    """One bearer key. Compare with `==`; printing it shows `ApiKey([redacted])`."""

    __slots__ = ("_value",)

    def __init__(self, value: str, *, source: str) -> None:
        value = value.strip()
        if not value:
            raise CredentialError(f"{source} holds no key (it is empty)")
        if len(value.encode()) > MAX_KEY_BYTES or not _KEY_CHARACTERS.fullmatch(value):
            raise CredentialError(
                f"{source} does not hold a usable key: it must be one line of visible ASCII characters other than "
                f"quote and backslash, at most {MAX_KEY_BYTES} bytes"
            )
        self._value = value

    def authorization(self) -> str:
        """The Authorization header's value."""
        return f"Bearer {self._value}"

    def value(self) -> str:
        """The key itself, for a provider that takes it in a header of its own (`x-api-key`, `x-goog-api-key`)."""
        return self._value

    def redact(self, text: str) -> str:
        """`text` with every occurrence of the key (also JSON's `\\/`-escaped spelling) replaced by REDACTED."""
        for spelling in {self._value, self._value.replace("/", "\\/")}:
            text = text.replace(spelling, REDACTED)
        if "\\u" in text:  # JSON may spell any character as \uXXXX: match the key as decoded, not one spelling
            text = re.sub("".join(_json_spellings(c) for c in self._value), REDACTED, text)
        return text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ApiKey) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __repr__(self) -> str:
        return f"ApiKey({REDACTED})"

    __str__ = __repr__


class KeySource(Protocol):
    """Where the key comes from; `current()` raises CredentialError when it cannot be had now."""

    setting: str

    def current(self) -> ApiKey: ...


class KeyEnv:
    """The key in an environment variable, read once (a process's environment does not change under it)."""

    def __init__(self, variable: str, env: Mapping[str, str]) -> None:
        self.setting = "judge_api_key_env"
        if variable not in env:
            raise CredentialError(f"judge_api_key_env names {variable}, which is not set in the server's environment")
        self._key = ApiKey(env[variable], source=f"the environment variable {variable} (judge_api_key_env)")

    def current(self) -> ApiKey:
        return self._key

    def __repr__(self) -> str:
        return f"KeyEnv({REDACTED})"


class KeyFile:
    """The key in a file, re-read whenever the file changes (inode, size or modification time).

    A Kubernetes Secret volume is updated by swapping a symlink to a new directory, so the path's inode changes on
    every rotation; a file edited in place changes its size or mtime. One stat per judge call costs microseconds
    next to a model call. When the file cannot be read any more the call fails with a message naming the file,
    rather than going on with a key the operator has revoked."""

    def __init__(self, path: str) -> None:
        self.setting = "judge_api_key_file"
        self.path = Path(path)
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int, int] | None = None
        self._key: ApiKey | None = None
        self.current()

    def current(self) -> ApiKey:
        try:
            stat = os.stat(self.path)
            stamp = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
            with self._lock:
                if self._key is None or stamp != self._stamp:
                    with open(self.path, "rb") as handle:
                        data = handle.read(MAX_KEY_BYTES + 1)
                    source = f"{self.path} (judge_api_key_file)"
                    self._key = ApiKey(data.decode("ascii", "replace"), source=source)
                    self._stamp = stamp
                return self._key
        except OSError as exc:
            raise CredentialError(
                f"cannot read the judge API key from {self.path} (judge_api_key_file): {exc.strerror or exc}"
            ) from None

    def __repr__(self) -> str:
        return f"KeyFile({str(self.path)!r})"


_NOT_AUTHENTICATED = re.compile(
    r"not logged in|/login|log ?in again|auth method|unauthori[sz]ed|unauthenticated|authentication|not authenticated|"
    r"invalid[ _-]?(?:x-)?api[ _-]?key|api key not valid|api[ _-]?key (?:is )?(?:missing|required|invalid)|"
    r"missing (?:an )?api key|no api key|permission[ _]denied|\b401\b|\b403\b|credentials?",
    re.IGNORECASE,
)
_SECRET_VARIABLE = re.compile(r".*(?:_API_KEY|_AUTH_TOKEN|_OAUTH_TOKEN)$")


def credential_variables(variables: tuple[str, ...]) -> tuple[str, ...]:
    """Of a host's credential variables, the ones that hold a key or token (not base URLs, regions or switches)."""
    return tuple(name for name in variables if _SECRET_VARIABLE.fullmatch(name)) or variables


def credential_hint(cause: str, variables: tuple[str, ...], *, settings: bool = False) -> str:
    """What fixes a judge's credential failure, when `cause` reads like one; empty otherwise.

    A CLI's own advice ("Please run /login") cannot help: every judge call runs with a fresh HOME, so a login saved
    in the server user's HOME is never seen. What works is a key in the server's environment, named here per host;
    an HTTP host (`settings`) can also be given one by `judge_api_key_file` or `judge_api_key_env`."""
    if not _NOT_AUTHENTICATED.search(cause):
        return ""
    named = " or ".join(credential_variables(variables))
    where = f"set {named} in the server's environment" if named else ""
    if settings:
        where = (
            f"{where}, or judge_api_key_file / judge_api_key_env"
            if where
            else "set judge_api_key_file or judge_api_key_env"
        )
    return f" (to authenticate this judge, {where}: each judge call runs with a fresh HOME, so a saved login is unseen)"


def origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL, the unit a key is bound to."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or (443 if scheme == "https" else 80)


def key_source(file: str, variable: str, env: Mapping[str, str]) -> KeySource | None:
    """The configured key source, checked now so a missing or unusable key stops the server at startup. Raises
    ConfigError naming the setting."""
    try:
        if file:
            return KeyFile(file)
        if variable:
            return KeyEnv(variable, env)
    except CredentialError as exc:
        raise ConfigError("judge_api_key_file" if file else "judge_api_key_env", str(exc)) from None
    return None


def _is_loopback(hostname: str) -> bool:
    if hostname == "localhost":
        return True
    try:
        return ipaddress.ip_address(hostname).is_loopback
    except ValueError:
        return False


def bind_origin(source: KeySource, judge_url: str | None) -> tuple[str, str, int]:
    """The one origin the key may go to: the judge host's. Raises ConfigError when the judge host is not an http(s)
    URL (the key would be a setting that does nothing); warns when the key would cross the network in clear text."""
    if judge_url is None:
        raise ConfigError(
            source.setting,
            "is set, but the judge host is not an http(s) URL; a CLI judge reads its credentials from its own "
            "environment variables (docs/judges.md)",
        )
    bound = origin(judge_url)
    if bound[0] == "http" and not _is_loopback(bound[1]):
        _log.warning(
            "the judge API key is sent over plain http to %s: anyone on the network path can read it; use https",
            bound[1],
        )
    return bound
