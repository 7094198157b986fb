"""What each principal may do: the policy file, its grants, and the rules for a principal's name.

The policy (`auth_policy_file`, YAML) maps each principal to the RPCs it may call, whether it may run LLM judges (they
cost money: llm_structured, comparator, contract, and VerifyResponse's second opinion), whether it may use server
reflection and /metrics, and which client-certificate names authenticate as it:

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
`auth_policy_file`, raised by the gate); a policy that becomes invalid later is logged and the last valid one stays in
force.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "ALL_RPCS",
    "ANONYMOUS",
    "OPEN",
    "PRINCIPAL",
    "Grant",
    "Policy",
    "WatchedPolicy",
    "load_policy",
]

log = logging.getLogger("verdict.auth")

ANONYMOUS = "anonymous"
"""The principal of a caller that presented no credentials."""
ALL_RPCS = "*"
PRINCIPAL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")
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
        if not isinstance(name, str) or not PRINCIPAL.match(name):
            raise ValueError(f"{source}: principal {name!r} must match {PRINCIPAL.pattern}")
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


class WatchedPolicy:
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
