"""Who is calling, and what they may do: the `Gate` that authenticates a call and checks its grant.

Authentication. A caller proves a principal in one of two ways:

- a bearer token (`authorization: Bearer <token>` metadata, or the HTTP header on /metrics) equal to one in the token
  directory (`tokens.py`);
- a client certificate verified by mutual TLS, whose SAN URI, SAN DNS name or subject CN is listed under the
  principal's `certificates` in the policy (`policy.py`).

A presented token wins over the certificate, and a wrong token is UNAUTHENTICATED even when the certificate is good:
a caller that sends a token means that identity. No credentials at all is the principal `anonymous`, which may do
what the policy grants `anonymous` (nothing, unless the policy says otherwise).

Authorization. The policy grants each principal RPCs, LLM judges, reflection and /metrics; the gate checks the grant
of the caller where each is used. A policy file or token directory the server cannot use at startup is a ConfigError
naming `auth_policy_file` or `auth_tokens_dir`.

Principals, never tokens, reach logs and metrics. Health is never gated (kubelet and load balancers probe it).
`bearer_token` and `ANONYMOUS` are here too, for the callers of the gate that read the header and name the principal.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Sequence
from dataclasses import dataclass

import yaml

from verdict.config.keys import Config
from verdict.errors import ConfigError, PermissionDenied, Unauthenticated
from verdict.security.policy import ANONYMOUS, OPEN, Grant, WatchedPolicy
from verdict.security.tokens import TokenDirectory, bearer_token

__all__ = [
    "ANONYMOUS",
    "Caller",
    "Gate",
    "bearer_token",
    "current_caller",
    "require_judges",
]


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


class Gate:
    """Authenticates callers and checks their grants; one per server, shared by the gRPC and /metrics ports."""

    def __init__(self, config: Config, rpc_names: Sequence[str]) -> None:
        self.enabled = config.auth
        self.reflection_requires_auth = config.reflection_requires_auth
        self.metrics_requires_auth = config.metrics_requires_auth
        self._policy: WatchedPolicy | None = None
        self._tokens: TokenDirectory | None = None
        if not self.enabled:
            return
        try:
            self._policy = WatchedPolicy(config.auth_policy_file, rpc_names)
        except OSError as exc:
            raise ConfigError("auth_policy_file", f"cannot read {config.auth_policy_file}: {exc.strerror}") from None
        except (ValueError, yaml.YAMLError) as exc:
            raise ConfigError("auth_policy_file", str(exc)) from None
        if config.auth_tokens_dir:
            if not os.path.isdir(config.auth_tokens_dir):
                raise ConfigError("auth_tokens_dir", f"{config.auth_tokens_dir} is not a directory")
            self._tokens = TokenDirectory(config.auth_tokens_dir)

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
