"""The server's configuration: one frozen, typed value, validated at startup.

This module holds the keys (each with its default, documentation and bounds) and their validation, alone and across
keys. Reading them from the YAML file, `VERDICT_*` variables and flags (the later winning) is `sources.py`.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verdict.errors import ConfigError

__all__ = [
    "DEFAULT_JUDGE_MODEL",
    "ENV_PREFIX",
    "JUDGE_TIMEOUT_CEILING_SECONDS",
    "Config",
    "config_keys",
]

ENV_PREFIX = "VERDICT_"
JUDGE_TIMEOUT_CEILING_SECONDS = 1800.0
"""The longest any judge call may run (30 minutes): long enough for an expensive evaluation, short enough that a hung
CLI cannot hold a judge slot for ever. No setting may exceed it."""
DEFAULT_JUDGE_MODEL = "sonnet"
"""The model a judge is asked for when neither the evaluator nor the server names one: a Claude alias, which hosts
that cannot serve it drop (they then use their own default model)."""


_GRPC_INT_MAX = 2**31 - 1
"""gRPC channel arguments and the concurrency limit are C ints: a bigger value crashes the server as it is built."""
_GRPC_MILLISECONDS_MAX = _GRPC_INT_MAX / 1000
"""Longest duration, in seconds, that fits a gRPC millisecond channel argument (about 24.8 days)."""


def _key(
    default: Any,
    doc: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    choices: tuple[str, ...] = (),
    secret: bool = False,
) -> Any:
    """A configuration key. A `secret` one is left out of the Config's repr, so logging a Config never leaks it."""
    metadata = {"doc": doc, "minimum": minimum, "maximum": maximum, "choices": choices}
    return field(default=default, metadata=metadata, repr=not secret)


@dataclass(frozen=True)
class Config:
    """Everything the server reads at startup. Compare, print and pass it around freely; it never changes."""

    grpc_address: str = _key("[::]:50051", "Address the gRPC server binds (host:port; port 0 picks a free port).")
    metrics_address: str = _key(
        "[::]:9464", "Address of the Prometheus /metrics HTTP server (host:port); empty disables it."
    )
    http_address: str = _key(
        "",
        "Address of the HTTP port serving the same RPCs over Connect (JSON or binary, curl-friendly), gRPC-Web and "
        "gRPC, on HTTP/1.1 and HTTP/2 (host:port); empty disables it.",
    )
    http_cors_allowed_origins: tuple[str, ...] = _key(
        (),
        "Browser origins (comma-separated, e.g. https://app.example.com; `*` for any) allowed cross-origin calls to "
        "the HTTP port (CORS); empty: no cross-origin headers, browsers refuse cross-origin answers.",
    )
    max_message_bytes: int = _key(
        4 * 1024 * 1024,
        "Largest request accepted, in bytes; a bigger one is RESOURCE_EXHAUSTED before any work is done.",
        minimum=1024,
        maximum=_GRPC_INT_MAX,
    )
    shell_check_timeout_seconds: float = _key(
        5.0, "Time limit for one `bash -n` parse; a parse that runs out is unverifiable, never malformed.", minimum=0.1
    )
    grace_period_seconds: float = _key(
        20.0, "On SIGTERM, how long in-flight calls may run before they are cancelled and children killed.", minimum=0
    )
    reflection: bool = _key(True, "Serve gRPC server reflection (grpcurl, grpcui, Postman use it).")
    max_connection_age_seconds: float = _key(
        300.0,
        "Close client connections after this age so clients re-resolve DNS and reach pods the HPA added; 0 disables.",
        minimum=0,
        maximum=_GRPC_MILLISECONDS_MAX,
    )
    max_connection_age_grace_seconds: float = _key(
        30.0, "Time a connection closed for age gets to finish its calls.", minimum=0, maximum=_GRPC_MILLISECONDS_MAX
    )
    max_concurrent_rpcs: int = _key(
        0,
        "Admission control: VerdictService calls run at once; more wait in a queue of max_queued_rpcs, and past that "
        "are refused at once with RESOURCE_EXHAUSTED and a RetryInfo hint. Health is exempt. Per worker process "
        "(each has one event loop). 0: 2.",
        minimum=0,
        maximum=_GRPC_INT_MAX,
    )
    max_queued_rpcs: int = _key(
        -1,
        "Admission control: VerdictService calls that may wait for a running slot (first come, first served). "
        "-1: three times max_concurrent_rpcs; 0: no queue, refuse at once.",
        minimum=-1,
        maximum=_GRPC_INT_MAX,
    )
    max_queue_wait_seconds: float = _key(
        0.1,
        "Admission control: the longest a call waits for a running slot before it is refused with RESOURCE_EXHAUSTED "
        "and a retry hint (CoDel's interval: a queue that stands this long is overload, and new calls are then refused "
        "at once instead of queued).",
        minimum=0.001,
    )
    admission_control: bool = _key(
        True,
        "Refuse calls past max_concurrent_rpcs + max_queued_rpcs, and calls whose deadline leaves less than "
        "min_deadline_seconds, before any work. Off: every call is accepted and waits.",
    )
    min_deadline_seconds: float = _key(
        0.01,
        "A call with less than this left of its deadline (on arrival, or when its turn in the queue comes) is "
        "refused with DEADLINE_EXCEEDED before any work: it could not be answered in time.",
        minimum=0,
    )
    max_batch_items: int = _key(
        1000, "Items one BatchVerifyResponses or BatchEvaluate call may carry; more is INVALID_ARGUMENT.", minimum=1
    )
    max_batch_bytes: int = _key(
        16 * 1024 * 1024,
        "Largest batch request (and batch response), in bytes; a bigger request is INVALID_ARGUMENT. Single calls "
        "keep max_message_bytes, which also bounds each item.",
        minimum=1024,
        maximum=_GRPC_INT_MAX,
    )
    batch_concurrency: int = _key(
        8,
        "Items of one batch run at once (bash and parse pools still bound the work inside them); the rest wait "
        "their turn in order.",
        minimum=1,
    )
    inline_parse_budget_bytes: int = _key(
        64 * 1024,
        "Bytes of blocks one call may parse on the event loop in total; past it, even small blocks parse off the "
        "loop, so a call with many mid-sized blocks cannot hold every other call and the health check.",
        minimum=0,
    )
    workers: int = _key(
        0,
        "Server processes sharing the gRPC port under one supervisor, which serves one /metrics for all of them and "
        "restarts a worker that dies; 0 means the cores of the container's CPU quota, 1 a single process.",
        minimum=0,
        maximum=256,
    )
    log_level: str = _key("INFO", "Logging level.", choices=("DEBUG", "INFO", "WARNING", "ERROR"))
    log_format: str = _key(
        "text",
        "Format of every server log line on stderr: `text` (one human line) or `json` (one JSON object per line).",
        choices=("text", "json"),
    )
    access_log_level: str = _key(
        "INFO",
        "Level of the one line logged per call (method, code, latency, request id, trace id, principal); OFF for none. "
        "Shown when at or above log_level.",
        choices=("DEBUG", "INFO", "WARNING", "ERROR", "OFF"),
    )
    otlp_endpoint: str = _key(
        "",
        "OpenTelemetry: base URL of an OTLP/HTTP collector (e.g. http://otel-collector:4318; spans are POSTed to "
        "/v1/traces) that gets one server span per call on both ports, parented by the caller's traceparent; empty: "
        "no tracing, and the OpenTelemetry SDK is never imported.",
    )
    otlp_service_name: str = _key("verdict", "OpenTelemetry: the `service.name` resource attribute of every span.")
    otlp_sample_ratio: float = _key(
        1.0,
        "OpenTelemetry: share of traces sampled where the caller sent no traceparent (a caller's sampled flag is "
        "followed either way).",
        minimum=0,
        maximum=1,
    )
    decision_log: str = _key(
        "off",
        "Where decision records go (one JSON line per VerifyResponse/Evaluate/ListEvaluators answer): off, stdout, "
        "stderr, file (decision_log_path, rotated) or http (decision_log_url, batched).",
        choices=("off", "stdout", "stderr", "file", "http"),
    )
    decision_log_path: str = _key("", "File the `file` decision log writes; rotated at decision_log_max_bytes.")
    decision_log_max_bytes: int = _key(
        100 * 1024 * 1024, "Size at which the decision log file is rotated (0: never).", minimum=0
    )
    decision_log_backups: int = _key(5, "Rotated decision log files kept (name.1 ... name.N).", minimum=0)
    decision_log_url: str = _key("", "HTTP(S) endpoint the `http` decision log POSTs batches to (a JSON array).")
    decision_log_http_token: str = _key(
        "", "Bearer token sent with each decision log batch (Authorization header); empty sends none.", secret=True
    )
    decision_log_batch_size: int = _key(
        100, "Records per HTTP batch; a batch is also sent after decision_log_flush_seconds.", minimum=1
    )
    decision_log_flush_seconds: float = _key(1.0, "Longest a record waits before its HTTP batch is sent.", minimum=0.01)
    decision_log_buffer_size: int = _key(
        10_000,
        "Records held for a slow or unreachable sink; beyond that new records are dropped and counted "
        "(verdict_decision_log_dropped_total), never blocking a call.",
        minimum=1,
    )
    decision_log_raw: bool = _key(
        False,
        "Include the request itself (text, output, config, context, state) in each decision record, so a decision can "
        "be replayed. Off: records carry SHA-256 digests and sizes only.",
    )
    decision_log_raw_max_bytes: int = _key(
        64 * 1024,
        "Cap per raw text field in a decision record; longer text is cut and the record says so (`truncated`).",
        minimum=64,
    )
    decision_log_redact: tuple[str, ...] = _key(
        (),
        "Regular expressions (comma-separated) whose matches are replaced by [REDACTED] in the raw text of decision "
        "records (digests are of the text as received, so they still match a replayed request).",
    )
    max_block_bytes: int = _key(
        1024 * 1024,
        "A fenced block larger than this is not parsed (unverifiable): bounds the work one block can cost.",
        minimum=1,
    )
    max_checked_blocks: int = _key(
        256,
        "Blocks parsed per response; later blocks are unverifiable. Unterminated fences are caught in all of them.",
        minimum=1,
    )
    inline_parse_bytes: int = _key(
        16 * 1024,
        "Blocks up to this size parse on the event loop; larger ones in the parse pool, so no parse holds the GIL.",
        minimum=0,
    )
    parse_workers: int = _key(2, "Processes in the parse pool for large blocks.", minimum=1)
    parse_timeout_seconds: float = _key(
        10.0, "Time limit for one parse in the pool; the worker is killed and the block is unverifiable.", minimum=0.1
    )
    max_concurrent_shell_checks: int = _key(8, "`bash -n` processes run at once.", minimum=1)
    workspace_root: str = _key(
        "",
        "Directory inside which request workspaces and files must resolve (diff_stall, comparator, contract). "
        "Empty: evaluators that need files report a clear error.",
    )
    git_timeout_seconds: float = _key(
        30.0, "Time limit for the git commands of one diff_stall call, together.", minimum=0.1
    )
    diff_stall_max_bytes: int = _key(
        64 * 1024 * 1024,
        "Bytes one diff_stall fingerprint may read (git's listings and patch, untracked files' content); a repository "
        "past it is verdict `error`, never a guessed stall.",
        minimum=1024,
    )
    diff_stall_max_files: int = _key(
        20_000,
        "Untracked files one diff_stall fingerprint may hash; more is verdict `error` (ignore them or narrow scope).",
        minimum=1,
    )
    regex_timeout_seconds: float = _key(
        1.0,
        "Time limit for one regular-expression search from a request; running out gives verdict `error`.",
        minimum=0.01,
    )
    judge_host: str = _key(
        "",
        "Judge host: a judge CLI's registered name (docs/judges.md lists them; an unknown name stops startup with the "
        "list) or an OpenAI-compatible base URL. Empty: LL_HOST_CLI, then the first CLI found on PATH.",
    )
    judge_api_key_file: str = _key(
        "",
        "File holding the API key an OpenAI-compatible judge_host is sent as `Authorization: Bearer` (a mounted "
        "Secret); re-read when it changes. Empty: no key, unless judge_api_key_env names one.",
    )
    judge_api_key_env: str = _key(
        "",
        "Name of the environment variable holding that key (the name, not the key). At most one of the two is set.",
    )
    judge_model: str = _key(DEFAULT_JUDGE_MODEL, "Model alias passed to the judge when the evaluator names none.")
    judge_timeout_seconds: float = _key(
        300.0, f"Time limit for one judge call; at most {JUDGE_TIMEOUT_CEILING_SECONDS:.0f}.", minimum=1
    )
    max_concurrent_judges: int = _key(4, "Judge processes run at once.", minimum=1)
    judge_queue_size: int = _key(
        16, "Judge calls that may wait for a free slot; more are rejected with RESOURCE_EXHAUSTED.", minimum=0
    )
    judge_model_labels: tuple[str, ...] = _key(
        (), "Models that may appear as metric labels (comma-separated); others are labelled `other`."
    )
    tool_labels: tuple[str, ...] = _key(
        (),
        "Tool names that may appear as the `tool` label of verdict_tool_checks_total (comma-separated); others are "
        "labelled `other`.",
    )
    verdict_labels: tuple[str, ...] = _key(
        (),
        "Verdicts of open evaluators (classify tokens, custom-schema verdicts) counted as themselves in "
        "verdict_evaluations_total (comma-separated); undeclared verdicts are labelled `other`.",
    )
    judge_cache: str = _key(
        "memory",
        "Where judge rulings are kept so a repeated question gets the same ruling: memory (this process), redis "
        "(shared by every replica, at judge_cache_url) or off.",
        choices=("memory", "redis", "off"),
    )
    judge_cache_url: str = _key(
        "", "The Redis the ruling cache uses with judge_cache: redis (redis://, rediss:// or unix:// URL)."
    )
    judge_cache_ttl_seconds: float = _key(
        24 * 3600.0, "How long a ruling is replayed, from when it was judged.", minimum=1
    )
    judge_cache_max_entries: int = _key(
        10_000, "Rulings kept; past it the least recently used go first (in Redis too).", minimum=1
    )
    judge_cache_timeout_seconds: float = _key(
        0.5,
        "Time limit for connecting to Redis and for each cache operation; past it the question is judged fresh.",
        minimum=0.01,
        maximum=60,
    )
    judge_panels_file: str = _key(
        "",
        "YAML file of named judge panels (`panels: {name: {judges: [{host, model}], quorum, tie, samples}}`) that "
        "judge evaluators name with `judge: <name>`; empty: none.",
    )
    judge_agreement_window: int = _key(
        200, "Panel questions the pairwise agreement gauges remember, per pair of judges.", minimum=1
    )
    calibration_path: str = _key(
        "",
        "Labelled known-answer cases (a YAML/JSON file or a directory of them) that calibration runs against the "
        "judges; empty: no calibration.",
    )
    calibration_judges: tuple[str, ...] = _key(
        (),
        "Judges to calibrate, as host, host/model or a named panel (comma-separated); empty: the judge host, every "
        "member of the named panels and each named panel as a unit.",
    )
    calibration_cases_per_hour: int = _key(
        0,
        "Budget of the server's scheduled calibration, in cases judged per hour (spread evenly, in the background, "
        "never on a request's path); 0 turns scheduled calibration off; at most 3600.",
        minimum=0,
        maximum=3600,
    )
    calibration_budget_usd_per_day: float = _key(
        5.0,
        "Budget of the scheduled calibration in US dollars per UTC day (as the judges report cost); past it "
        "calibration waits for the next day.",
        minimum=0,
    )
    calibration_kappa_floor: float = _key(
        0.6,
        "A judge whose Cohen's kappa against the labels is below this is drifting (the drift alert fires).",
        minimum=-1,
        maximum=1,
    )
    calibration_kappa_drop: float = _key(
        0.1,
        "A judge whose kappa fell by more than this from its baseline (its first run, or the baseline report) is "
        "drifting.",
        minimum=0,
        maximum=2,
    )
    calibration_report_path: str = _key(
        "",
        "Where scheduled calibration writes its JSON report after each run; a report already there is the baseline. "
        "Empty: the first run of this process is the baseline.",
    )
    second_opinion: bool = _key(False, "Ask a judge about long unverifiable answers in VerifyResponse.")
    second_opinion_host: str = _key(
        "", "Judge for the second opinion: an OpenAI-compatible base URL (a local model) or a CLI host name."
    )
    second_opinion_model: str = _key("", "Model name sent to the second-opinion judge.")
    second_opinion_min_tokens: int = _key(
        1500, "Completion tokens an unverifiable answer needs before a second opinion is worth its cost.", minimum=1
    )
    second_opinion_timeout_seconds: float = _key(60.0, "Time limit for one second-opinion call.", minimum=0.1)
    tls_cert_file: str = _key(
        "",
        "PEM certificate chain the gRPC and /metrics ports present; set with tls_key_file to serve TLS. Re-read when "
        "the file changes (a rotated Secret), for new connections only. Empty: plaintext.",
    )
    tls_key_file: str = _key("", "PEM private key of tls_cert_file; re-read with it.")
    tls_client_ca_file: str = _key(
        "", "PEM certificate authorities that sign client certificates (mutual TLS); needs tls_client_auth require."
    )
    tls_client_auth: str = _key(
        "none",
        "Client certificates: none (not asked for), or require (every connection presents one signed by "
        "tls_client_ca_file; its identity can be a principal in auth_policy_file).",
        choices=("none", "require"),
    )
    auth_policy_file: str = _key(
        "",
        "YAML file naming the principals and what each may call (RPCs, judges, reflection, /metrics); setting it turns "
        "authentication and authorization on. Re-read when it changes. Empty: every caller may call everything.",
    )
    auth_tokens_dir: str = _key(
        "",
        "Directory of bearer tokens, one file per principal (file name = principal, content = token), as a mounted "
        "Kubernetes Secret; re-read when it changes. Needs auth_policy_file.",
    )
    reflection_requires_auth: bool = _key(
        True, "With auth on, only principals the policy allows `reflection` may use server reflection."
    )
    metrics_requires_auth: bool = _key(
        False, "With auth on, only principals the policy allows `metrics` may scrape /metrics (bearer token or mTLS)."
    )
    health_address: str = _key(
        "",
        "Extra plaintext listener (host:port) serving only grpc.health.v1, for exec probes and kubelet when the main "
        "port needs TLS or a token; bind it to 127.0.0.1. Empty: none.",
    )
    max_concurrent_streams: int = _key(
        100,
        "HTTP/2 streams one connection may have open (calls past it wait in the client); 0 leaves gRPC's default.",
        minimum=0,
        maximum=_GRPC_INT_MAX,
    )
    max_connections: int = _key(
        1024,
        "gRPC connections held at once; more are closed as they arrive (gRPC's max_allowed_incoming_connections). "
        "0 means no limit.",
        minimum=0,
        maximum=_GRPC_INT_MAX,
    )
    max_calls_per_connection: int = _key(
        0,
        "Calls in flight on one connection; more are RESOURCE_EXHAUSTED (TOO_MANY_CALLS_PER_CONNECTION). Health is "
        "exempt. 0 means no limit beyond max_concurrent_streams.",
        minimum=0,
    )
    max_calls_per_principal: int = _key(
        0,
        "Calls in flight per principal (anonymous callers share one budget); more are RESOURCE_EXHAUSTED "
        "(TOO_MANY_CALLS_PER_PRINCIPAL). Health is exempt. 0 means no limit.",
        minimum=0,
    )
    max_connection_idle_seconds: float = _key(
        600.0,
        "Close a gRPC connection with no call for this long (GOAWAY), so idle sockets do not pile up; 0 disables.",
        minimum=0,
        maximum=_GRPC_MILLISECONDS_MAX,
    )
    handshake_timeout_seconds: float = _key(
        10.0,
        "Time a new gRPC or HTTP-port connection gets to finish its TLS (and HTTP/2) handshake before it is closed.",
        minimum=0.1,
        maximum=_GRPC_MILLISECONDS_MAX,
    )
    max_pending_messages: int = _key(
        1000,
        "gRPC calls that may wait for their request message at once (health has a budget of its own of this size); "
        "more are RESOURCE_EXHAUSTED (TOO_MANY_PENDING_MESSAGES) before their message is read.",
        minimum=1,
    )
    request_message_timeout_seconds: float = _key(
        10.0,
        "Time a gRPC call gets for its whole request message after its headers; past it the call is "
        "DEADLINE_EXCEEDED (REQUEST_MESSAGE_TIMEOUT).",
        minimum=0.1,
    )
    http_max_connections: int = _key(
        256,
        "Connections the HTTP port holds at once (TLS handshakes included); more are closed as they arrive. Never "
        "more than a quarter of the descriptor limit (RLIMIT_NOFILE), so the port cannot starve the others.",
        minimum=1,
    )
    http_body_timeout_seconds: float = _key(
        30.0,
        "Time an HTTP-port request gets for its whole body after its head; past it the call is DEADLINE_EXCEEDED and "
        "the connection closed.",
        minimum=0.1,
    )
    http_idle_timeout_seconds: float = _key(
        5.0,
        "Time an HTTP-port connection may sit without a call in flight (a request head that never completes "
        "included) before it is closed.",
        minimum=0.1,
    )
    metrics_max_connections: int = _key(
        64, "Connections the /metrics server holds at once; more are closed on accept.", minimum=1
    )
    metrics_read_timeout_seconds: float = _key(
        10.0,
        "Time a /metrics connection gets for its TLS handshake and request headers before it is closed.",
        minimum=0.1,
    )

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, float) and not math.isfinite(value):
                raise ConfigError(f.name, f"must be a finite number, got {value!r}")
            minimum = f.metadata.get("minimum")
            if minimum is not None and value < minimum:
                raise ConfigError(f.name, f"must be at least {minimum}, got {value!r}")
            maximum = f.metadata.get("maximum")
            if maximum is not None and value > maximum:
                raise ConfigError(f.name, f"must be at most {maximum}, got {value!r}")
            choices = f.metadata.get("choices")
            if choices and value not in choices:
                raise ConfigError(f.name, f"must be one of {', '.join(choices)}, got {value!r}")
        for name in ("grpc_address", "metrics_address", "health_address", "http_address"):
            address = getattr(self, name)
            if address or name == "grpc_address":
                _check_address(name, address)
        for key in ("judge_timeout_seconds", "second_opinion_timeout_seconds"):
            if getattr(self, key) > JUDGE_TIMEOUT_CEILING_SECONDS:
                raise ConfigError(key, f"must be at most {JUDGE_TIMEOUT_CEILING_SECONDS:.0f}, got {getattr(self, key)}")
        if self.judge_cache == "redis" and not self.judge_cache_url.startswith(("redis://", "rediss://", "unix://")):
            raise ConfigError(
                "judge_cache_url",
                f"judge_cache: redis needs a redis://, rediss:// or unix:// URL, got {self.judge_cache_url!r}",
            )
        if self.otlp_endpoint and not self.otlp_endpoint.startswith(("http://", "https://")):
            raise ConfigError("otlp_endpoint", f"must be an http(s) URL, got {self.otlp_endpoint!r}")
        if self.decision_log == "file" and not self.decision_log_path:
            raise ConfigError("decision_log_path", "must be set when decision_log is file")
        if self.decision_log == "http" and not self.decision_log_url.startswith(("http://", "https://")):
            raise ConfigError(
                "decision_log_url", f"must be an http(s) URL when decision_log is http, got {self.decision_log_url!r}"
            )
        for pattern in self.decision_log_redact:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ConfigError("decision_log_redact", f"{pattern!r} is not a regular expression: {exc}") from None
        self._check_api_key_settings()
        if self.workspace_root and not Path(self.workspace_root).is_absolute():
            raise ConfigError("workspace_root", f"must be an absolute path, got {self.workspace_root!r}")
        self._check_security()

    def _check_security(self) -> None:
        """TLS and auth settings that only make sense together are checked together, so a half-configured server
        (a key without a certificate, a CA that nothing uses) stops at startup instead of running open."""
        if bool(self.tls_cert_file) != bool(self.tls_key_file):
            key = "tls_key_file" if self.tls_cert_file else "tls_cert_file"
            raise ConfigError(key, "tls_cert_file and tls_key_file are set together")
        if self.tls_client_auth == "require" and not self.tls_client_ca_file:
            raise ConfigError("tls_client_ca_file", "is required when tls_client_auth is require")
        if self.tls_client_ca_file and self.tls_client_auth != "require":
            raise ConfigError("tls_client_auth", "must be require when tls_client_ca_file is set")
        if self.tls_client_auth == "require" and not self.tls_cert_file:
            raise ConfigError("tls_cert_file", "is required for mutual TLS (tls_client_auth require)")
        if self.auth_tokens_dir and not self.auth_policy_file:
            raise ConfigError("auth_policy_file", "is required when auth_tokens_dir is set (who may call what)")

    @property
    def tls(self) -> bool:
        """Whether the gRPC and /metrics ports serve TLS."""
        return bool(self.tls_cert_file)

    @property
    def auth(self) -> bool:
        """Whether callers must authenticate and are authorized by the policy."""
        return bool(self.auth_policy_file)

    def _check_api_key_settings(self) -> None:
        """Shape only: whether the file can be read and the variable is set is checked when the judges are built."""
        if self.judge_api_key_file and self.judge_api_key_env:
            raise ConfigError("judge_api_key_env", "set judge_api_key_file or judge_api_key_env, not both")
        if self.judge_api_key_file and not Path(self.judge_api_key_file).is_absolute():
            raise ConfigError("judge_api_key_file", f"must be an absolute path, got {self.judge_api_key_file!r}")
        variable = self.judge_api_key_env
        if variable and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", variable):
            raise ConfigError("judge_api_key_env", "must be the name of an environment variable (letters, digits, _)")
        if variable.upper().startswith(ENV_PREFIX):
            raise ConfigError(
                "judge_api_key_env",
                f"{variable} would be read as a configuration key; name a variable without the "
                f"{ENV_PREFIX} prefix (e.g. OPENAI_API_KEY)",
            )

    def describe(self) -> dict[str, str]:
        """Each key's documentation, for `verdict serve --help` and docs/configuration.md."""
        return {f.name: f.metadata["doc"] for f in dataclasses.fields(self)}


def _check_address(key: str, address: str) -> None:
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(key, f"must be host:port, got {address!r}")


def config_keys() -> tuple[str, ...]:
    """Every configuration key, in declaration order."""
    return tuple(f.name for f in dataclasses.fields(Config))
