"""Who is calling and what they may do, and the TLS material that follows its files.

- `gate.py`: bearer tokens from a directory, mTLS identities, the per-principal policy file, and the `Gate` that
  authenticates a call and answers what it may do.
- `tls.py`: certificate files re-read when they change, for the gRPC port, /metrics and the HTTP port.

Pure of grpc's servicer side: the server's interceptors and the HTTP port put the gate in front of every call.
"""

from __future__ import annotations

from verdict.security.gate import (
    ANONYMOUS,
    OPEN,
    Caller,
    Gate,
    Grant,
    Policy,
    bearer_token,
    current_caller,
    load_policy,
    require_judges,
)
from verdict.security.tls import Certificates, peer_identities, server_credentials, ssl_peer_identities

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
