"""How a client reaches Verdict: deadlines, retries, load balancing, keepalive, TLS, message size.

Each concern is a frozen value with a docstring per field, so a configuration can be compared, printed and shared
between the sync and the asyncio client. `ClientConfig.channel_options()` renders everything that gRPC configures
per channel; the deadlines are applied per call by the clients.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ClientConfig", "Keepalive", "RetryPolicy", "TlsConfig"]

SERVICE_NAME = "verdict.v1.VerdictService"
"""The fully-qualified service the retry policy applies to."""

_MIB = 1024 * 1024


@dataclass(frozen=True)
class RetryPolicy:
    """Transparent retries of calls that failed with UNAVAILABLE, done by gRPC itself from the service config.

    Every RPC is idempotent for the server (stateless; the stall state travels with the request), so a retry
    returns the same answer. Two costs remain and are the caller's call (docs/clients.md): a retried Evaluate of a
    judge-backed type (llm_structured, comparator, contract) may pay for a second judge call when the first one ran
    on a replica that then went away, and a comparator with `auto_promote` may already have promoted its output on
    that replica. gRPC never retries once the server has sent response headers. `max_attempts=1` turns retries off.
    """

    max_attempts: int = 4
    """Attempts in total, the first included; gRPC caps this at 5. 1 disables retries."""
    initial_backoff_seconds: float = 0.2
    """Upper bound of the first randomised back-off."""
    max_backoff_seconds: float = 5.0
    """Upper bound of any back-off."""
    backoff_multiplier: float = 2.0
    """Growth of the back-off bound per attempt."""
    retryable_status_codes: tuple[str, ...] = ("UNAVAILABLE",)
    """Status codes retried. Only UNAVAILABLE means "not processed, try elsewhere" for Verdict."""

    def __post_init__(self) -> None:
        if not 1 <= self.max_attempts <= 5:
            raise ValueError(f"max_attempts must be between 1 and 5 (gRPC's cap), got {self.max_attempts}")
        if self.initial_backoff_seconds <= 0 or self.max_backoff_seconds <= 0:
            raise ValueError("back-off bounds must be positive")
        if self.backoff_multiplier <= 0:
            raise ValueError(f"backoff_multiplier must be positive, got {self.backoff_multiplier}")
        if self.max_attempts > 1 and not self.retryable_status_codes:
            raise ValueError("retryable_status_codes must name at least one code when retries are on")

    def method_config(self) -> dict[str, Any] | None:
        """The `retryPolicy` entry of the service config, or None when retries are off."""
        if self.max_attempts == 1:
            return None
        return {
            "maxAttempts": self.max_attempts,
            "initialBackoff": _duration(self.initial_backoff_seconds),
            "maxBackoff": _duration(self.max_backoff_seconds),
            "backoffMultiplier": self.backoff_multiplier,
            "retryableStatusCodes": list(self.retryable_status_codes),
        }


@dataclass(frozen=True)
class Keepalive:
    """HTTP/2 pings that detect a dead connection (a pod gone without a FIN) while calls are in flight.

    gRPC servers by default answer a client that pings more often than every 5 minutes with GOAWAY
    ENHANCE_YOUR_CALM ("too_many_pings"), and refuse pings on a connection with no calls; the defaults stay inside
    both limits, so they work against a Verdict server (and any other) left at its defaults.
    """

    time_seconds: float = 300.0
    """Interval between pings on a connection with calls in flight. Below 300 only if the server allows it."""
    timeout_seconds: float = 20.0
    """How long a ping may go unanswered before the connection is closed and calls fail UNAVAILABLE."""
    permit_without_calls: bool = False
    """Ping idle connections too; servers at their defaults reject that, so leave it off unless yours allows it."""

    def __post_init__(self) -> None:
        if self.time_seconds < 10:
            raise ValueError(f"time_seconds must be at least 10, got {self.time_seconds}")
        if self.timeout_seconds <= 0:
            raise ValueError(f"timeout_seconds must be positive, got {self.timeout_seconds}")


@dataclass(frozen=True)
class TlsConfig:
    """Transport security. Without a TlsConfig the client speaks plaintext (in-cluster, or behind a mesh's mTLS)."""

    root_certificates: bytes | None = None
    """PEM roots that verify the server; None uses the system's default roots."""
    private_key: bytes | None = None
    """PEM private key of the client certificate, for mutual TLS; set with certificate_chain."""
    certificate_chain: bytes | None = None
    """PEM client certificate chain, for mutual TLS; set with private_key."""
    server_name_override: str | None = None
    """Host name expected in the server certificate when it differs from the target's (testing, IP targets)."""

    def __post_init__(self) -> None:
        if (self.private_key is None) != (self.certificate_chain is None):
            raise ValueError("private_key and certificate_chain are set together (mutual TLS) or not at all")

    def __repr__(self) -> str:
        key = "<redacted>" if self.private_key is not None else None
        return (
            f"TlsConfig(root_certificates={_pem_summary(self.root_certificates)}, private_key={key}, "
            f"certificate_chain={_pem_summary(self.certificate_chain)}, "
            f"server_name_override={self.server_name_override!r})"
        )


@dataclass(frozen=True)
class ClientConfig:
    """Everything a Verdict client needs besides the target. The defaults suit a caller inside the cluster."""

    timeout_seconds: float = 30.0
    """Default deadline of VerifyResponse, ListEvaluators and Evaluate of types that run no judge."""
    judge_timeout_seconds: float = 330.0
    """Default deadline of Evaluate for judge-backed types (and raw YAML configs, whose type the client does not
    parse): the server's default judge time limit (300 s) plus a margin, so a slow judge is not cut short."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    """Retries of UNAVAILABLE calls."""
    load_balancing: str = "round_robin"
    """gRPC load-balancing policy. round_robin spreads calls over every address a `dns:///` target resolves to
    (a headless Service); pick_first pins every call to one connection."""
    keepalive: Keepalive = field(default_factory=Keepalive)
    """Connection liveness pings."""
    tls: TlsConfig | None = None
    """Transport security; None is plaintext."""
    max_message_bytes: int = 4 * _MIB
    """Largest message sent or received. The server's default limit (max_message_bytes) is also 4 MiB."""
    options: tuple[tuple[str, str | int], ...] = ()
    """Extra raw gRPC channel arguments, appended last so they win (an escape hatch, e.g. a user agent)."""
    bearer_token: str | None = field(default=None, repr=False)
    """Sent as `authorization: Bearer <token>` on every call, for a server with auth on. Never printed (repr). Send
    it over TLS (`tls`), or on loopback only: on a plaintext connection anyone on the path can read it."""
    bearer_token_file: str | None = None
    """A file holding the token (a mounted Secret), re-read when it changes, so a rotated token is used without a
    restart. Set this or `bearer_token`, not both."""

    def __post_init__(self) -> None:
        if self.timeout_seconds <= 0 or self.judge_timeout_seconds <= 0:
            raise ValueError("deadlines must be positive")
        if self.max_message_bytes < 1024:
            raise ValueError(f"max_message_bytes must be at least 1024, got {self.max_message_bytes}")
        if self.bearer_token is not None and self.bearer_token_file is not None:
            raise ValueError("set bearer_token or bearer_token_file, not both")
        if self.bearer_token is not None and (not self.bearer_token.strip() or "\n" in self.bearer_token):
            raise ValueError("bearer_token must be one non-empty line")
        if self.load_balancing not in ("round_robin", "pick_first"):
            raise ValueError(f"load_balancing must be round_robin or pick_first, got {self.load_balancing!r}")

    def service_config(self) -> dict[str, Any]:
        """The gRPC service config: the load-balancing policy and the retry policy of VerdictService."""
        config: dict[str, Any] = {"loadBalancingConfig": [{self.load_balancing: {}}]}
        retry = self.retry.method_config()
        if retry is not None:
            config["methodConfig"] = [{"name": [{"service": SERVICE_NAME}], "retryPolicy": retry}]
        return config

    def channel_options(self) -> list[tuple[str, str | int]]:
        """The channel arguments for `grpc.insecure_channel` / `grpc.secure_channel` (sync or aio)."""
        options: list[tuple[str, str | int]] = [
            ("grpc.service_config", json.dumps(self.service_config(), separators=(",", ":"))),
            # Our service config, not one a DNS TXT record might carry, decides balancing and retries.
            ("grpc.service_config_disable_resolution", 1),
            ("grpc.enable_retries", int(self.retry.max_attempts > 1)),
            ("grpc.keepalive_time_ms", int(self.keepalive.time_seconds * 1000)),
            ("grpc.keepalive_timeout_ms", int(self.keepalive.timeout_seconds * 1000)),
            ("grpc.keepalive_permit_without_calls", int(self.keepalive.permit_without_calls)),
            ("grpc.max_send_message_length", self.max_message_bytes),
            ("grpc.max_receive_message_length", self.max_message_bytes),
        ]
        if self.tls is not None and self.tls.server_name_override:
            options.append(("grpc.ssl_target_name_override", self.tls.server_name_override))
        options.extend(self.options)
        return options


def _duration(seconds: float) -> str:
    return f"{seconds:.9f}".rstrip("0").rstrip(".") + "s"


def _pem_summary(pem: bytes | None) -> str | None:
    return None if pem is None else f"<{len(pem)} bytes>"
