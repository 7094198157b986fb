"""Who is calling, and what they may do: bearer tokens from a directory, mTLS identities, and a policy file.

Authentication. A caller proves a principal in one of two ways:

- a bearer token (`authorization: Bearer <token>` metadata, or the HTTP header on /metrics) equal to the content of
  the file `<auth_tokens_dir>/<principal>`. The directory is a mounted Kubernetes Secret, one key per principal;
  files are re-read when they change, and every presented token is compared with every configured one in constant
  time (`hmac.compare_digest`), so neither the answer nor its timing tells which principal came close.
- a client certificate verified by mutual TLS, whose SAN URI, SAN DNS name or subject CN is listed under the
  principal's `certificates` in the policy.

A presented token wins over the certificate, and a wrong token is UNAUTHENTICATED even when the certificate is good:
a caller that sends a token means that identity. No credentials at all is the principal `anonymous`, which may do
what the policy grants `anonymous` (nothing, unless the policy says otherwise).

Authorization. The policy (`auth_policy_file`, YAML) maps each principal to the RPCs it may call, whether it may run
LLM judges (they cost money: llm_structured, comparator, contract, and VerifyResponse's second opinion), and whether
it may use server reflection and /metrics:

```yaml
principals:
  loop-runner:
    rpcs: [VerifyResponse, Evaluate, ListEvaluators]   # or ["*"]
    judges: true
    certificates: [spiffe://cluster.local/ns/loops/sa/runner]
  prometheus:
    metrics: true
```

Unknown keys, unknown RPC names and a principal with an unusable name stop the server at startup (ConfigError naming
`auth_policy_file`); a policy that becomes invalid later is logged and the last valid one stays in force.

Principals, never tokens, reach logs and metrics. Health is never gated (kubelet and load balancers probe it).
"""

from __future__ import annotations

import contextvars
import hmac
import logging
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from verdict.config.keys import Config
from verdict.errors import ConfigError, PermissionDenied, Unauthenticated

__all__ = [
    "ANONYMOUS",
    "OPEN",
    "Caller",
    "Gate",
    "Grant",
    "Policy",
    "bearer_token",
    "current_caller",
    "load_policy",
    "require_judges",
]

log = logging.getLogger("verdict.auth")

ANONYMOUS = "anonymous"
"""The principal of a caller that presented no credentials."""
ALL_RPCS = "*"
MIN_TOKEN_BYTES = 16
"""Shorter token files are ignored (with an error in the log): a short token can be guessed."""
_PRINCIPAL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")
"""A principal is a Secret key (file name) and a metric label value: short, printable, no path separators."""


@dataclass(frozen=True)
class Grant:
    """What one principal may do."""

    rpcs: frozenset[str] = frozenset()
    """VerdictService method names, or {"*"} for all of them."""
    judges: bool = False
    """May run LLM judges (judge-backed Evaluate types, VerifyResponse's second opinion)."""
    reflection: bool = False
    """May use server reflection (when reflection_requires_auth)."""
    metrics: bool = False
    """May scrape /metrics (when metrics_requires_auth)."""
    certificates: frozenset[str] = frozenset()
    """Client-certificate names (SAN URI, SAN DNS, subject CN) that authenticate as this principal."""

    def allows_rpc(self, method: str) -> bool:
        return ALL_RPCS in self.rpcs or method in self.rpcs


OPEN = Grant(rpcs=frozenset({ALL_RPCS}), judges=True, reflection=True, metrics=True)
"""Everything: the grant of every caller when auth is off."""


@dataclass(frozen=True)
class Caller:
    """The authenticated caller of one call: its principal, how it proved it, and its grant."""

    principal: str
    via: str
    """"token", "certificate", "none" (anonymous) or "off" (auth disabled)."""
    grant: Grant


UNCHECKED = Caller(ANONYMOUS, "off", OPEN)

current_caller: contextvars.ContextVar[Caller] = contextvars.ContextVar("verdict_caller", default=UNCHECKED)
"""The caller of the call being served; set by the auth interceptor, read where a judge is about to be asked."""


@dataclass(frozen=True)
class Policy:
    """Principals and their grants, as loaded from the policy file."""

    principals: Mapping[str, Grant] = field(default_factory=dict)

    def by_certificate(self, identities: Sequence[str]) -> str | None:
        """The principal one of a certificate's names is listed under (names in the order given win)."""
        for name in identities:
            for principal, grant in self.principals.items():
                if name in grant.certificates:
                    return principal
        return None


def load_policy(text: str, rpc_names: Iterable[str], *, source: str = "policy") -> Policy:
    """Parse and validate a policy document. Raises ValueError naming the offending entry."""
    known = frozenset(rpc_names)
    document = yaml.safe_load(text) or {}
    if not isinstance(document, dict) or set(document) - {"principals"}:
        raise ValueError(f"{source} must be a mapping with one key, `principals`")
    entries = document.get("principals") or {}
    if not isinstance(entries, dict):
        raise ValueError(f"{source}: `principals` must map principal names to grants")
    principals: dict[str, Grant] = {}
    claimed: dict[str, str] = {}
    for name, entry in entries.items():
        if not isinstance(name, str) or not _PRINCIPAL.match(name):
            raise ValueError(f"{source}: principal {name!r} must match {_PRINCIPAL.pattern}")
        entry = entry or {}
        if not isinstance(entry, dict):
            raise ValueError(f"{source}: principals.{name} must be a mapping")
        unknown = set(entry) - {"rpcs", "judges", "reflection", "metrics", "certificates"}
        if unknown:
            raise ValueError(f"{source}: principals.{name} has unknown keys {sorted(unknown)}")
        rpcs = _strings(entry.get("rpcs", []), f"{source}: principals.{name}.rpcs")
        bad = [rpc for rpc in rpcs if rpc != ALL_RPCS and rpc not in known]
        if bad:
            raise ValueError(f"{source}: principals.{name}.rpcs names unknown RPCs {bad} (known: {sorted(known)})")
        certificates = _strings(entry.get("certificates", []), f"{source}: principals.{name}.certificates")
        if name == ANONYMOUS and certificates:
            raise ValueError(f"{source}: principals.{ANONYMOUS} cannot have certificates")
        for certificate in certificates:
            if certificate in claimed:
                raise ValueError(
                    f"{source}: certificate name {certificate!r} is listed for {claimed[certificate]} and {name}"
                )
            claimed[certificate] = name
        flags = {}
        for key in ("judges", "reflection", "metrics"):
            value = entry.get(key, False)
            if not isinstance(value, bool):
                raise ValueError(f"{source}: principals.{name}.{key} must be true or false")
            flags[key] = value
        principals[name] = Grant(rpcs=frozenset(rpcs), certificates=frozenset(certificates), **flags)
    return Policy(principals)


def _strings(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{where} must be a list of strings")
    return value


def bearer_token(header: str | bytes | None) -> str | None:
    """The token of an `authorization: Bearer <token>` value; None when absent or of another scheme."""
    if header is None:
        return None
    if isinstance(header, bytes):
        header = header.decode("latin-1")
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


class _WatchedPolicy:
    """The policy file, re-read when its (device, inode, mtime, size) changes."""

    def __init__(self, path: str, rpc_names: Sequence[str]) -> None:
        self._path = path
        self._rpc_names = rpc_names
        self._stamp = self._stat()
        self.policy = load_policy(Path(path).read_text(encoding="utf-8"), rpc_names, source=path)

    def _stat(self) -> tuple[int, int, int, int]:
        st = os.stat(self._path)
        return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)

    def current(self) -> Policy:
        try:
            stamp = self._stat()
            if stamp != self._stamp:
                self._stamp = stamp
                text = Path(self._path).read_text(encoding="utf-8")
                self.policy = load_policy(text, self._rpc_names, source=self._path)
                log.info("auth policy reloaded: %d principals", len(self.policy.principals))
        except (OSError, ValueError, yaml.YAMLError) as exc:
            log.error("auth policy changed but cannot be used; the previous policy stays in force: %s", exc)
        return self.policy


class _TokenDirectory:
    """`<dir>/<principal>` files holding tokens, re-read when the directory or any file in it changes.

    A Secret volume keeps its files behind `..data` symlinks and swaps that link on update, which changes the
    directory's mtime; an in-place edit changes the file's own stamp. Dot files (`..data`, `..2026_…`) are skipped.
    """

    def __init__(self, path: str) -> None:
        self._path = path
        self._stamp: tuple[Any, ...] = ()
        self._tokens: tuple[tuple[str, bytes], ...] = ()
        self.current()

    def _stat(self) -> tuple[Any, ...]:
        directory = os.stat(self._path)
        stamps: list[Any] = [(directory.st_ino, directory.st_mtime_ns)]
        for principal, _ in self._tokens:
            try:
                st = os.stat(os.path.join(self._path, principal))
                stamps.append((st.st_ino, st.st_mtime_ns, st.st_size))
            except OSError:
                stamps.append(None)
        return tuple(stamps)

    def current(self) -> tuple[tuple[str, bytes], ...]:
        try:
            stamp = self._stat()
            if stamp != self._stamp:
                self._tokens = self._read()
                self._stamp = self._stat()
        except OSError as exc:
            log.error("cannot read auth_tokens_dir %s; keeping the tokens loaded before: %s", self._path, exc.strerror)
        return self._tokens

    def _read(self) -> tuple[tuple[str, bytes], ...]:
        tokens: list[tuple[str, bytes]] = []
        for entry in sorted(os.listdir(self._path)):
            if entry.startswith("."):
                continue
            path = os.path.join(self._path, entry)
            if not os.path.isfile(path):
                continue
            if not _PRINCIPAL.match(entry) or entry == ANONYMOUS:
                log.error("auth token file %r ignored: not a valid principal name", entry)
                continue
            token = Path(path).read_bytes().strip()
            if len(token) < MIN_TOKEN_BYTES:
                log.error("auth token of %s ignored: shorter than %d bytes", entry, MIN_TOKEN_BYTES)
                continue
            tokens.append((entry, token))
        log.info("auth tokens loaded for %d principals", len(tokens))
        return tuple(tokens)

    def principal(self, token: str) -> str | None:
        """The principal whose token this is. Every configured token is compared, whatever matched before."""
        presented = token.encode("utf-8", errors="replace")
        found = None
        for principal, expected in self.current():
            if hmac.compare_digest(presented, expected) and found is None:
                found = principal
        return found


class Gate:
    """Authenticates callers and checks their grants; one per server, shared by the gRPC and /metrics ports."""

    def __init__(self, config: Config, rpc_names: Sequence[str]) -> None:
        self.enabled = config.auth
        self.reflection_requires_auth = config.reflection_requires_auth
        self.metrics_requires_auth = config.metrics_requires_auth
        self._policy: _WatchedPolicy | None = None
        self._tokens: _TokenDirectory | None = None
        if not self.enabled:
            return
        try:
            self._policy = _WatchedPolicy(config.auth_policy_file, rpc_names)
        except OSError as exc:
            raise ConfigError("auth_policy_file", f"cannot read {config.auth_policy_file}: {exc.strerror}") from None
        except (ValueError, yaml.YAMLError) as exc:
            raise ConfigError("auth_policy_file", str(exc)) from None
        if config.auth_tokens_dir:
            if not os.path.isdir(config.auth_tokens_dir):
                raise ConfigError("auth_tokens_dir", f"{config.auth_tokens_dir} is not a directory")
            self._tokens = _TokenDirectory(config.auth_tokens_dir)

    def principals(self) -> tuple[str, ...]:
        """The principals the policy names at startup: the allow-list of the `principal` metric label."""
        return tuple(self._policy.policy.principals) if self._policy is not None else ()

    def authenticate(self, token: str | None, identities: Sequence[str]) -> Caller:
        """The caller behind a token and/or verified certificate names. Raises Unauthenticated for a token that
        matches no principal, and for a caller without credentials when the policy grants `anonymous` nothing."""
        if self._policy is None:
            return UNCHECKED
        policy = self._policy.current()
        if token is not None:
            principal = self._tokens.principal(token) if self._tokens is not None else None
            if principal is None:
                raise Unauthenticated("the bearer token is not valid", reason="INVALID_TOKEN")
            return Caller(principal, "token", policy.principals.get(principal, Grant()))
        if identities:
            principal = policy.by_certificate(identities)
            if principal is not None:
                return Caller(principal, "certificate", policy.principals[principal])
        anonymous = policy.principals.get(ANONYMOUS)
        if anonymous is None:
            raise Unauthenticated(
                "this server needs a bearer token (authorization: Bearer ...) or a client certificate the policy names",
                reason="CREDENTIALS_MISSING" if not identities else "UNKNOWN_CERTIFICATE",
            )
        return Caller(ANONYMOUS, "none", anonymous)

    def authorize_rpc(self, caller: Caller, method: str) -> None:
        """Raises PermissionDenied unless the caller's grant names the VerdictService method."""
        if not caller.grant.allows_rpc(method):
            raise PermissionDenied(
                f"principal {caller.principal} may not call {method}",
                reason="RPC_NOT_ALLOWED",
                metadata={"principal": caller.principal, "rpc": method},
            )

    def authorize_reflection(self, caller: Caller) -> None:
        if self.reflection_requires_auth and not caller.grant.reflection:
            raise PermissionDenied(
                f"principal {caller.principal} may not use server reflection",
                reason="REFLECTION_NOT_ALLOWED",
                metadata={"principal": caller.principal},
            )

    def metrics_allowed(self, token: str | None, identities: Sequence[str]) -> tuple[int, str]:
        """The HTTP answer to a /metrics request: (200, principal), (401, reason) or (403, principal)."""
        if not self.enabled or not self.metrics_requires_auth:
            return 200, ANONYMOUS
        try:
            caller = self.authenticate(token, identities)
        except Unauthenticated as error:
            return 401, error.reason
        return (200 if caller.grant.metrics else 403), caller.principal


def require_judges(caller: Caller, what: str) -> None:
    """Raises PermissionDenied when the caller's grant does not include judges (which cost money)."""
    if not caller.grant.judges:
        raise PermissionDenied(
            f"principal {caller.principal} may not run LLM judges ({what})",
            reason="JUDGES_NOT_ALLOWED",
            metadata={"principal": caller.principal, "evaluator": what},
        )
