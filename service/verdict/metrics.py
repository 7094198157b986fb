"""Every metric Verdict exports, built against an injected registry.

Tests make a fresh `CollectorRegistry`, pass it to `Metrics`, and read values back with `get_sample_value` rather than
scraping text. The server passes the registry its /metrics endpoint serves.

Names follow go-grpc-prometheus for the standard server set, so dashboards and alerts written for Go and Java gRPC
services work unchanged; `grpc_code` uses Go's CamelCase spelling (`OK`, `InvalidArgument`, `Canceled` with one L),
not Python's UPPER_SNAKE. Service metrics are prefixed `verdict_`. Every label has a bounded set of values: free-form
values are `other` unless something the operator or the evaluator's configuration declares names them (verdicts:
`VerdictLabels`; model names: an allow-list).
"""

from __future__ import annotations

import platform
from collections.abc import Iterable

import grpc
import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from verdict import __version__

__all__ = [
    "GRPC_CODE_LABELS",
    "LATENCY_BUCKETS",
    "AccessMetrics",
    "AdmissionMetrics",
    "BatchMetrics",
    "BuildMetrics",
    "ChildProcessMetrics",
    "EvaluationMetrics",
    "GrpcServerMetrics",
    "JudgeMetrics",
    "JudgeTrustMetrics",
    "LabelFolder",
    "Metrics",
    "ParsePoolMetrics",
    "RulingCacheMetrics",
    "ScrapeMetrics",
    "ToolCallMetrics",
    "VerdictLabels",
    "VerifyMetrics",
    "grpc_code_label",
    "register_runtime_collectors",
]

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800)
"""Seconds. Structural checks take milliseconds; judges take seconds to 30 minutes (the judge timeout ceiling)."""

_CAMEL_EXCEPTIONS = {"OK": "OK", "CANCELLED": "Canceled"}


def grpc_code_label(code: grpc.StatusCode) -> str:
    """Go's `codes.Code.String()` spelling of a status code: INVALID_ARGUMENT -> InvalidArgument."""
    name = code.name
    return _CAMEL_EXCEPTIONS.get(name) or "".join(part.capitalize() for part in name.split("_"))


GRPC_CODE_LABELS = tuple(grpc_code_label(code) for code in grpc.StatusCode)

OTHER = "other"


class LabelFolder:
    """Keeps a label's values bounded: the first `cap` distinct values pass, later ones become `other`, and so does
    any value longer than `max_length` (a 4 MB classify token must not become a label value).

    With `allowed`, only those values pass (and `cap` is ignored). Used for classify verdicts (free-form routing
    tokens) and model names, which would otherwise create a series per value.
    """

    def __init__(self, cap: int = 0, allowed: Iterable[str] | None = None, max_length: int = 64) -> None:
        self.cap = cap
        self.allowed = frozenset(allowed) if allowed is not None else None
        self.max_length = max_length
        self._seen: dict[str, set[str]] = {}

    def allow(self, values: Iterable[str]) -> None:
        """Add values the operator declared elsewhere (the models of the named judge panels) to the allow-list."""
        if self.allowed is not None:
            self.allowed = self.allowed | {value for value in values if len(value) <= self.max_length}

    def fold(self, value: str, scope: str = "") -> str:
        if self.allowed is not None:
            return value if value in self.allowed else OTHER
        if len(value) > self.max_length:
            return OTHER
        seen = self._seen.setdefault(scope, set())
        if value in seen:
            return value
        if len(seen) < self.cap:
            seen.add(value)
            return value
        return OTHER


class VerdictLabels:
    """The `verdict` label of verdict_evaluations_total: a verdict counts as itself only when something declared it.

    Declared are: the evaluator's fixed verdict set (exit_code's yes/no/error, llm_structured's yes/no/…), the
    server's `verdict_labels` allow-list (an operator's classify tokens and custom verdicts), and the verdict enum of
    the custom JSON schema the request itself sends (llm_structured). Anything else is `other`.

    A first-come cap would let whoever calls first squat the label values: twenty junk classify tokens, and a
    legitimate `PASS` is `other` for the life of the process. Here no caller can take a value from a declared verdict.
    Request-declared enums are still the caller's words, so they are bounded: at most `REQUEST_DECLARED_CAP` such
    values per evaluator, each at most `max_length` characters, first come; an operator who needs a custom verdict
    counted whatever callers do puts it in `verdict_labels`.
    """

    REQUEST_DECLARED_CAP = 50

    def __init__(self, allowed: Iterable[str] = (), max_length: int = 64) -> None:
        self.allowed = frozenset(allowed)
        self.max_length = max_length
        self._requested: dict[str, set[str]] = {}

    def label(self, evaluator: str, verdict: str, fixed: Iterable[str], requested: Iterable[str] = ()) -> str:
        if verdict in self.allowed or verdict in fixed:
            return verdict
        if len(verdict) > self.max_length or verdict not in requested:
            return OTHER
        seen = self._requested.setdefault(evaluator, set())
        if verdict in seen:
            return verdict
        if len(seen) < self.REQUEST_DECLARED_CAP:
            seen.add(verdict)
            return verdict
        return OTHER


class GrpcServerMetrics:
    """The standard go-grpc-prometheus server set, recorded by the server's MetricsInterceptor."""

    def __init__(self, registry: CollectorRegistry) -> None:
        grpc_labels = ("grpc_type", "grpc_service", "grpc_method")
        self.grpc_started = Counter(
            "grpc_server_started_total", "RPCs started on the server.", grpc_labels, registry=registry
        )
        self.grpc_handled = Counter(
            "grpc_server_handled_total",
            "RPCs completed on the server, regardless of success or failure.",
            (*grpc_labels, "grpc_code"),
            registry=registry,
        )
        self.grpc_msg_received = Counter(
            "grpc_server_msg_received_total", "Stream messages received on the server.", grpc_labels, registry=registry
        )
        self.grpc_msg_sent = Counter(
            "grpc_server_msg_sent_total", "Stream messages sent by the server.", grpc_labels, registry=registry
        )
        self.grpc_handling_seconds = Histogram(
            "grpc_server_handling_seconds",
            "Time from the start of an RPC to its completion on the server.",
            grpc_labels,
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )

    def initialize_rpcs(self, service: str, methods: Iterable[tuple[str, str]]) -> None:
        """Pre-create every (method, code) series at 0 so rate() and absence alerts work from the first scrape."""
        for method, grpc_type in methods:
            labels = {"grpc_type": grpc_type, "grpc_service": service, "grpc_method": method}
            self.grpc_started.labels(**labels)
            self.grpc_msg_received.labels(**labels)
            self.grpc_msg_sent.labels(**labels)
            self.grpc_handling_seconds.labels(**labels)
            for code in GRPC_CODE_LABELS:
                self.grpc_handled.labels(**labels, grpc_code=code)


class VerifyMetrics:
    """VerifyResponse: its verdicts, the fenced blocks it checked, and the judge's second opinions."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.verifications = Counter(
            "verdict_verifications_total", "VerifyResponse verdicts.", ("verdict",), registry=registry
        )
        self.block_checks = Counter(
            "verdict_block_checks_total",
            "Fenced blocks checked, by language label (one per language record, plus other and none) and verdict.",
            ("lang", "verdict"),
            registry=registry,
        )
        self.second_opinions = Counter(
            "verdict_second_opinions_total",
            "VerifyResponse second opinions, by outcome (ok, malformed, no_sample).",
            ("outcome",),
            registry=registry,
        )


class ToolCallMetrics:
    """VerifyResponse's tool calls: each call's verdict by tool and reason, and the compiled-schema cache.

    The `tool` label is the called tool's name only when the operator allow-listed it (`tool_labels`), like model
    names: tool names are the caller's words, and a series per name would grow without bound. `reason` is one of a
    fixed set (`verify.tool_calls.REASONS`, `none` for a passing call).
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        self.tool_checks = Counter(
            "verdict_tool_checks_total",
            "Tool calls checked by VerifyResponse, by tool (allow-listed names, else other), verdict and reason.",
            ("tool", "verdict", "reason"),
            registry=registry,
        )
        self.tool_schema_cache = Counter(
            "verdict_tool_schema_cache_total",
            "Tool lists looked up in the compiled-schema cache, by outcome (hit, miss).",
            ("outcome",),
            registry=registry,
        )


class ChildProcessMetrics:
    """The runner's child processes, and the calls refused because a resource ran out."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.subprocess_runs = Counter(
            "verdict_subprocess_runs_total",
            "Child processes run, by tool and outcome (ok, nonzero, signalled, timeout, cancelled, missing, "
            "no_resources).",
            ("tool", "outcome"),
            registry=registry,
        )
        self.subprocess_duration = Histogram(
            "verdict_subprocess_duration_seconds",
            "Wall time of child processes, by tool.",
            ("tool",),
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.subprocess_timeouts = Counter(
            "verdict_subprocess_timeouts_total",
            "Child processes killed at their time limit.",
            ("tool",),
            registry=registry,
        )
        self.subprocesses_running = Gauge(
            "verdict_subprocesses_running",
            "Child processes running now.",
            ("tool",),
            registry=registry,
            multiprocess_mode="livesum",
        )
        self.resource_exhaustion = Counter(
            "verdict_resource_exhaustion_total",
            "Calls refused with UNAVAILABLE because the server ran out of a resource (file_descriptors, memory, "
            "processes).",
            ("resource",),
            registry=registry,
        )
        for resource in ("file_descriptors", "memory", "processes"):
            self.resource_exhaustion.labels(resource=resource)


class ParsePoolMetrics:
    """The process pool that runs large parses off the event loop."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.parse_pool_tasks = Counter(
            "verdict_parse_pool_tasks_total",
            "Large parses run in the process pool, by outcome (ok, timeout, crashed, cancelled).",
            ("outcome",),
            registry=registry,
        )


class EvaluationMetrics:
    """Evaluate: verdicts and time to a verdict, by evaluator."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.evaluations = Counter(
            "verdict_evaluations_total",
            "Evaluate verdicts, by evaluator and verdict.",
            ("evaluator", "verdict"),
            registry=registry,
        )
        self.evaluation_duration = Histogram(
            "verdict_evaluation_duration_seconds",
            "Time to reach a verdict, by evaluator.",
            ("evaluator",),
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )


class JudgeMetrics:
    """Calls to the judge hosts: outcomes, time, the cost and tokens they report, and the queue for a slot."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.judge_calls = Counter(
            "verdict_judge_calls_total",
            "Judge calls, by host and outcome (ok, timeout, missing, api_error, empty, parse_error, rejected, "
            "cancelled).",
            ("host", "outcome"),
            registry=registry,
        )
        self.judge_duration = Histogram(
            "verdict_judge_duration_seconds",
            "Wall time of judge calls, by host.",
            ("host",),
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.judge_cost = Counter(
            "verdict_judge_cost_usd_total",
            "Cost the judge reported, in US dollars, by host.",
            ("host",),
            registry=registry,
        )
        self.judge_tokens = Counter(
            "verdict_judge_tokens_total",
            "Tokens the judge reported, by host, model and kind (input, output).",
            ("host", "model", "kind"),
            registry=registry,
        )
        self.judges_waiting = Gauge(
            "verdict_judges_waiting",
            "Judge calls queued for a free slot.",
            registry=registry,
            multiprocess_mode="livesum",
        )


class JudgeTrustMetrics:
    """How far the judges can be trusted: panel verdicts and abstentions, pairwise agreement between panel members
    over a sliding window, and the known-answer calibration of each judge (accuracy, Cohen's kappa, drift).

    `judge` labels are `host/model` with the model folded through the model allow-list, `panel` labels a named
    panel or `inline`: both bounded."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.judge_verdicts = Counter(
            "verdict_judge_verdicts_total",
            "Judged verdicts, by evaluator and how they were reached (single, quorum, tie_first, tie_cautious, "
            "no_winner, below_quorum).",
            ("evaluator", "how"),
            registry=registry,
        )
        self.judge_verdict_cost = Counter(
            "verdict_judge_verdict_cost_usd_total",
            "What the judge calls behind judged verdicts cost, in US dollars, by evaluator (divide by "
            "verdict_judge_verdicts_total for the cost per verdict).",
            ("evaluator",),
            registry=registry,
        )
        self.judge_abstentions = Counter(
            "verdict_judge_abstentions_total",
            "Panel asks that gave no vote (the member malfunctioned), by judge and reason.",
            ("judge", "reason"),
            registry=registry,
        )
        self.judge_agreement = Gauge(
            "verdict_judge_agreement_ratio",
            "Share of recent panel questions on which two members gave the same vote (both answered), by panel and "
            "pair.",
            ("panel", "judge_a", "judge_b"),
            registry=registry,
            multiprocess_mode="liveall",
        )
        self.judge_panel_agreement = Gauge(
            "verdict_judge_panel_agreement_ratio",
            "Share of recent decided panel questions on which a member voted the panel's verdict, by panel and judge.",
            ("panel", "judge"),
            registry=registry,
            multiprocess_mode="liveall",
        )
        self.calibration_accuracy = Gauge(
            "verdict_judge_calibration_accuracy_ratio",
            "Share of labelled calibration cases the judge ruled as labelled (last run), by judge and evaluator.",
            ("judge", "evaluator"),
            registry=registry,
            multiprocess_mode="liveall",
        )
        self.calibration_kappa = Gauge(
            "verdict_judge_calibration_kappa",
            "Cohen's kappa of the judge's verdicts against the labels (last run), by judge and evaluator.",
            ("judge", "evaluator"),
            registry=registry,
            multiprocess_mode="liveall",
        )
        self.calibration_kappa_baseline = Gauge(
            "verdict_judge_calibration_kappa_baseline",
            "The kappa a judge's drift is measured from (its baseline run), by judge and evaluator.",
            ("judge", "evaluator"),
            registry=registry,
            multiprocess_mode="liveall",
        )
        self.calibration_drift = Gauge(
            "verdict_judge_calibration_drift",
            "1 when the judge's kappa is below calibration_kappa_floor or fell more than calibration_kappa_drop from "
            "its baseline, else 0; by judge and evaluator.",
            ("judge", "evaluator"),
            registry=registry,
            multiprocess_mode="liveall",
        )
        self.calibration_position_bias = Gauge(
            "verdict_judge_calibration_position_bias_ratio",
            "Share of comparator calibration cases whose ruling flipped when the order of the outputs flipped.",
            ("judge",),
            registry=registry,
            multiprocess_mode="liveall",
        )
        self.calibration_confusion = Gauge(
            "verdict_judge_calibration_confusion_cases",
            "Cases of the last calibration run by label and judged verdict (the confusion counts), by judge and "
            "evaluator.",
            ("judge", "evaluator", "expected", "judged"),
            registry=registry,
            multiprocess_mode="liveall",
        )
        self.calibration_latency = Gauge(
            "verdict_judge_calibration_latency_seconds",
            "Mean time a calibration case took (last run), by judge.",
            ("judge",),
            registry=registry,
            multiprocess_mode="liveall",
        )
        self.calibration_cases = Counter(
            "verdict_judge_calibration_cases_total",
            "Calibration cases judged, by judge and result (right, wrong, malfunction).",
            ("judge", "result"),
            registry=registry,
        )
        self.calibration_cost = Counter(
            "verdict_judge_calibration_cost_usd_total",
            "What calibration's judge calls cost, in US dollars, by judge.",
            ("judge",),
            registry=registry,
        )
        self.calibration_runs = Counter(
            "verdict_judge_calibration_runs_total",
            "Scheduled calibration runs, by result (done, budget: stopped by a budget, failed).",
            ("result",),
            registry=registry,
        )
        self.calibration_last_run = Gauge(
            "verdict_judge_calibration_last_run_timestamp_seconds",
            "When the last calibration run finished (Unix time).",
            registry=registry,
            multiprocess_mode="max",
        )


class RulingCacheMetrics:
    """The judges' ruling cache: lookups by result, evictions, what replays saved, and store errors."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.judge_cache_lookups = Counter(
            "verdict_judge_cache_lookups_total",
            "Judged evaluations by what the ruling cache did: hit (replayed), miss (judged and stored unless an "
            "error), fresh (the request opted out).",
            ("evaluator", "result"),
            registry=registry,
        )
        self.judge_cache_evictions = Counter(
            "verdict_judge_cache_evictions_total",
            "Rulings evicted to stay within judge_cache_max_entries, by store.",
            ("store",),
            registry=registry,
        )
        self.judge_cache_saved = Counter(
            "verdict_judge_cache_saved_usd_total",
            "What the judge calls of replayed rulings had cost, in US dollars (where the host reports cost).",
            ("evaluator",),
            registry=registry,
        )
        self.judge_cache_errors = Counter(
            "verdict_judge_cache_errors_total",
            "Ruling-cache operations that failed (the question was judged fresh), by store and operation.",
            ("store", "operation"),
            registry=registry,
        )

    def initialize_judge_types(self, evaluators: Iterable[str]) -> None:
        """Pre-create the lookup series of each judged evaluator type at 0, so rate() and absence alerts work from the
        first scrape. The server passes the types its evaluator records mark `uses_judge` (this module is below the
        evaluators and does not know them)."""
        for evaluator in evaluators:
            for result in ("hit", "miss", "fresh"):
                self.judge_cache_lookups.labels(evaluator=evaluator, result=result)


class AccessMetrics:
    """The security layer's decisions on gRPC calls: who was let in, and the in-flight limits."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.auth_decisions = Counter(
            "verdict_auth_decisions_total",
            "Access decisions on gRPC calls (health excepted), by principal (the policy's principals, anonymous, "
            "other) and decision (allowed, unauthenticated, permission_denied, limited).",
            ("principal", "decision"),
            registry=registry,
        )
        self.calls_in_flight_rejected = Counter(
            "verdict_calls_in_flight_rejected_total",
            "Calls rejected with RESOURCE_EXHAUSTED by an in-flight limit (per_connection, per_principal, "
            "health_watches_per_connection).",
            ("limit",),
            registry=registry,
        )


class AdmissionMetrics:
    """Admission control: calls running and queued, and those shed before any work; and what the transport below
    it started, so the calls it refused are counted too."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.shed = Counter(
            "verdict_shed_total",
            "VerdictService calls refused by admission control before any work, by reason (overloaded: "
            "RESOURCE_EXHAUSTED, running slots and queue full or a queue standing; queue_wait: RESOURCE_EXHAUSTED, "
            "waited max_queue_wait_seconds for a slot; deadline: DEADLINE_EXCEEDED, too little of the deadline left "
            "on arrival; deadline_in_queue: DEADLINE_EXCEEDED, it ran out while waiting; draining: UNAVAILABLE, "
            "the server is shutting down).",
            ("reason",),
            registry=registry,
        )
        for reason in ("overloaded", "queue_wait", "deadline", "deadline_in_queue", "draining"):
            self.shed.labels(reason=reason)
        self.admission_running = Gauge(
            "verdict_admission_running", "VerdictService calls running under admission control now.", registry=registry
        )
        self.admission_queued = Gauge(
            "verdict_admission_queued", "VerdictService calls waiting for a running slot now.", registry=registry
        )
        self.transport_calls = Counter(
            "verdict_transport_calls",
            "Calls grpc-core itself started and failed on the gRPC listeners (channelz), whether or not the "
            "application saw them: started above grpc_server_started_total is calls the transport refused or still "
            "holds unaccepted, which no other series counts.",
            ("event",),
            registry=registry,
        )
        for event in ("started", "failed"):
            self.transport_calls.labels(event=event)


class BatchMetrics:
    """The items of the batch calls."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.batch_items = Counter(
            "verdict_batch_items_total",
            "Items of BatchVerifyResponses and BatchEvaluate calls, by method and outcome (ok, error, "
            "deadline_exceeded).",
            ("method", "outcome"),
            registry=registry,
        )


class ScrapeMetrics:
    """The /metrics HTTP port itself."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.metrics_connections_rejected = Counter(
            "verdict_metrics_connections_rejected_total",
            "Connections to the /metrics port closed unanswered, by reason (too_many, timeout, tls).",
            ("reason",),
            registry=registry,
        )
        self.http_connections_rejected = Counter(
            "verdict_http_connections_rejected_total",
            "Connections to the HTTP port closed unanswered, by reason (too_many, timeout, tls).",
            ("reason",),
            registry=registry,
        )


class BuildMetrics:
    """Which build is running."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.build_info = Gauge(
            "verdict_build_info",
            "Always 1; the labels say which build is running.",
            ("version", "python"),
            registry=registry,
            multiprocess_mode="max",
        )
        self.build_info.labels(version=__version__, python=platform.python_version()).set(1)


class Metrics(
    GrpcServerMetrics,
    VerifyMetrics,
    ToolCallMetrics,
    ChildProcessMetrics,
    ParsePoolMetrics,
    EvaluationMetrics,
    JudgeMetrics,
    RulingCacheMetrics,
    JudgeTrustMetrics,
    AccessMetrics,
    AdmissionMetrics,
    BatchMetrics,
    ScrapeMetrics,
    BuildMetrics,
):
    """Every room's metrics on one object, one attribute each, as every layer receives it. Construct once per registry.

    Each room is a class of its own above (`ChildProcessMetrics` for the runner, `AdmissionMetrics` for admission
    control...), built against the same registry; `Metrics` is all of them, so `metrics.subprocess_runs` is the
    runner room's counter.
    """

    def __init__(
        self,
        registry: CollectorRegistry,
        *,
        verdict_labels: Iterable[str] = (),
        model_labels: Iterable[str] = (),
        tool_labels: Iterable[str] = (),
    ):
        self.registry = registry
        GrpcServerMetrics.__init__(self, registry)
        VerifyMetrics.__init__(self, registry)
        ToolCallMetrics.__init__(self, registry)
        ChildProcessMetrics.__init__(self, registry)
        ParsePoolMetrics.__init__(self, registry)
        EvaluationMetrics.__init__(self, registry)
        JudgeMetrics.__init__(self, registry)
        RulingCacheMetrics.__init__(self, registry)
        JudgeTrustMetrics.__init__(self, registry)
        AccessMetrics.__init__(self, registry)
        AdmissionMetrics.__init__(self, registry)
        BatchMetrics.__init__(self, registry)
        ScrapeMetrics.__init__(self, registry)
        BuildMetrics.__init__(self, registry)
        self.verdict_labels = VerdictLabels(verdict_labels)
        self.model_labels = LabelFolder(allowed=model_labels)
        self.tool_labels = LabelFolder(allowed=tool_labels)


def register_runtime_collectors(registry: CollectorRegistry) -> None:
    """The standard `process_*` (CPU, memory, open fds, start time) and `python_*` (version info, GC) series on the
    injected registry: on-call engineers and stock dashboards expect them from any Prometheus-instrumented process,
    and prometheus_client only registers them on its global registry, which Verdict does not serve."""
    prometheus_client.ProcessCollector(registry=registry)
    prometheus_client.PlatformCollector(registry=registry)
    prometheus_client.GCCollector(registry=registry)
