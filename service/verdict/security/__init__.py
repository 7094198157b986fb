"""Who is calling and what they may do, and the TLS material that follows its files.

- `gate.py`: the `Gate` that authenticates a call (bearer token, mTLS identity or anonymous) and answers what it may
  do; the `Caller` of the call being served, and the judges check.
- `tokens.py`: bearer tokens: the `authorization` header, and the token directory (one file per principal).
- `policy.py`: the per-principal policy file (re-read when it changes), its grants, and what a principal's name may be.
- `tls.py`: certificate files re-read when they change, for the gRPC port, /metrics and the HTTP port.

Pure of grpc's servicer side: the server's interceptors and the HTTP port put the gate in front of every call.
"""

from __future__ import annotations

from verdict.security.gate import ANONYMOUS, Caller, Gate, current_caller, require_judges
from verdict.security.policy import OPEN, Grant, Policy, load_policy
from verdict.security.tls import Certificates, peer_identities, server_credentials, ssl_peer_identities
from verdict.security.tokens import bearer_token

__all__ = [
    "ANONYMOUS",
    "OPEN",
    "Caller",
    "Certificates",
    "Gate",
    "Grant",
    "Policy",
    "bearer_token",
    "current_caller",
    "load_policy",
    "peer_identities",
    "require_judges",
    "server_credentials",
    "ssl_peer_identities",
]
