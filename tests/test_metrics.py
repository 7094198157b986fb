"""Metric names, the grpc_code spelling, label folding and pre-initialised series."""

from __future__ import annotations

import math
import platform

import grpc
from prometheus_client import CollectorRegistry, Gauge, Histogram
from prometheus_client.metrics import MetricWrapperBase

from tests.support import make_config
from verdict import __version__
from verdict.evaluators import CATALOGUE
from verdict.metrics import GRPC_CODE_LABELS, LabelFolder, Metrics, VerdictLabels, grpc_code_label
from verdict.server.assembly import build_server


def test_grpc_code_uses_go_spelling() -> None:
    assert grpc_code_label(grpc.StatusCode.OK) == "OK"
    assert grpc_code_label(grpc.StatusCode.INVALID_ARGUMENT) == "InvalidArgument"
    assert grpc_code_label(grpc.StatusCode.CANCELLED) == "Canceled"
    assert grpc_code_label(grpc.StatusCode.DEADLINE_EXCEEDED) == "DeadlineExceeded"
    assert len(set(GRPC_CODE_LABELS)) == 17


def test_label_folder_caps_distinct_values_per_scope() -> None:
    folder = LabelFolder(cap=2)
    assert [folder.fold(v, "classify") for v in ("A", "B", "C", "A")] == ["A", "B", "other", "A"]
    assert folder.fold("C", "other_scope") == "C"


def test_label_folder_sends_long_values_to_other_without_using_the_cap() -> None:
    folder = LabelFolder(cap=1)
    assert folder.fold("X" * 4_000_000, "classify") == "other"
    assert folder.fold("GO", "classify") == "GO"


def test_label_folder_allow_list() -> None:
    folder = LabelFolder(allowed=["sonnet"])
    assert folder.fold("sonnet") == "sonnet"
    assert folder.fold("my-finetune-123") == "other"


def test_initialize_rpcs_creates_zero_series() -> None:
    registry = CollectorRegistry()
    metrics = Metrics(registry)
    metrics.initialize_rpcs("verdict.v1.VerdictService", [("VerifyResponse", "unary")])
    labels = {"grpc_type": "unary", "grpc_service": "verdict.v1.VerdictService", "grpc_method": "VerifyResponse"}
    assert registry.get_sample_value("grpc_server_started_total", labels) == 0
    assert registry.get_sample_value("grpc_server_handled_total", {**labels, "grpc_code": "Unavailable"}) == 0


def test_build_info_is_one() -> None:
    registry = CollectorRegistry()
    Metrics(registry)
    samples = [s for m in registry.collect() if m.name == "verdict_build_info" for s in m.samples]
    assert len(samples) == 1
    assert samples[0].value == 1
    assert samples[0].labels["version"]


def test_request_declared_verdicts_are_bounded_and_never_displace_declared_ones() -> None:
    labels = VerdictLabels(allowed=["PASS"])
    assert labels.label("llm_structured", "yes", fixed=("yes", "no")) == "yes"
    assert labels.label("llm_structured", "great", fixed=("yes",), requested={"great"}) == "great"
    assert labels.label("llm_structured", "great", fixed=("yes",)) == "other", "undeclared in this request"
    for n in range(VerdictLabels.REQUEST_DECLARED_CAP + 10):
        labels.label("llm_structured", f"junk{n}", fixed=(), requested={f"junk{n}"})
    assert labels.label("llm_structured", "fresh", fixed=(), requested={"fresh"}) == "other"
    assert labels.label("llm_structured", "PASS", fixed=()) == "PASS", "the allow-list is never squatted"
    assert labels.label("llm_structured", "x" * 65, fixed=(), requested={"x" * 65}) == "other"


FAMILIES = [
    (
        "grpc_server_handled",
        "counter",
        ("grpc_type", "grpc_service", "grpc_method", "grpc_code"),
        "RPCs completed on the server, regardless of success or failure.",
    ),
    (
        "grpc_server_handling_seconds",
        "histogram",
        ("grpc_type", "grpc_service", "grpc_method"),
        "Time from the start of an RPC to its completion on the server.",
    ),
    (
        "grpc_server_msg_received",
        "counter",
        ("grpc_type", "grpc_service", "grpc_method"),
        "Stream messages received on the server.",
    ),
    (
        "grpc_server_msg_sent",
        "counter",
        ("grpc_type", "grpc_service", "grpc_method"),
        "Stream messages sent by the server.",
    ),
    ("grpc_server_started", "counter", ("grpc_type", "grpc_service", "grpc_method"), "RPCs started on the server."),
    ("verdict_admission_queued", "gauge", (), "VerdictService calls waiting for a running slot now."),
    ("verdict_admission_running", "gauge", (), "VerdictService calls running under admission control now."),
    (
        "verdict_auth_decisions",
        "counter",
        ("principal", "decision"),
        "Access decisions on gRPC calls (health excepted), by principal (the policy's principals, anonymous, other) "
        "and decision (allowed, unauthenticated, permission_denied, limited).",
    ),
    (
        "verdict_batch_items",
        "counter",
        ("method", "outcome"),
        "Items of BatchVerifyResponses and BatchEvaluate calls, by method and outcome (ok, error, deadline_exceeded).",
    ),
    (
        "verdict_block_checks",
        "counter",
        ("lang", "verdict"),
        "Fenced blocks checked, by language label (one per language record, plus other and none) and verdict.",
    ),
    ("verdict_build_info", "gauge", ("version", "python"), "Always 1; the labels say which build is running."),
    (
        "verdict_calls_in_flight_rejected",
        "counter",
        ("limit",),
        "Calls rejected with RESOURCE_EXHAUSTED by an in-flight limit (per_connection, per_principal, "
        "health_watches_per_connection).",
    ),
    ("verdict_evaluation_duration_seconds", "histogram", ("evaluator",), "Time to reach a verdict, by evaluator."),
    ("verdict_evaluations", "counter", ("evaluator", "verdict"), "Evaluate verdicts, by evaluator and verdict."),
    (
        "verdict_http_connections_rejected",
        "counter",
        ("reason",),
        "Connections to the HTTP port closed unanswered, by reason (too_many, timeout, tls).",
    ),
    (
        "verdict_judge_abstentions",
        "counter",
        ("judge", "reason"),
        "Panel asks that gave no vote (the member malfunctioned), by judge and reason.",
    ),
    (
        "verdict_judge_agreement_ratio",
        "gauge",
        ("panel", "judge_a", "judge_b"),
        "Share of recent panel questions on which two members gave the same vote (both answered), by panel and pair.",
    ),
    (
        "verdict_judge_cache_errors",
        "counter",
        ("store", "operation"),
        "Ruling-cache operations that failed (the question was judged fresh), by store and operation.",
    ),
    (
        "verdict_judge_cache_evictions",
        "counter",
        ("store",),
        "Rulings evicted to stay within judge_cache_max_entries, by store.",
    ),
    (
        "verdict_judge_cache_lookups",
        "counter",
        ("evaluator", "result"),
        "Judged evaluations by what the ruling cache did: hit (replayed), miss (judged and stored unless an error), "
        "fresh (the request opted out).",
    ),
    (
        "verdict_judge_cache_saved_usd",
        "counter",
        ("evaluator",),
        "What the judge calls of replayed rulings had cost, in US dollars (where the host reports cost).",
    ),
    (
        "verdict_judge_calibration_accuracy_ratio",
        "gauge",
        ("judge", "evaluator"),
        "Share of labelled calibration cases the judge ruled as labelled (last run), by judge and evaluator.",
    ),
    (
        "verdict_judge_calibration_cases",
        "counter",
        ("judge", "result"),
        "Calibration cases judged, by judge and result (right, wrong, malfunction).",
    ),
    (
        "verdict_judge_calibration_confusion_cases",
        "gauge",
        ("judge", "evaluator", "expected", "judged"),
        "Cases of the last calibration run by label and judged verdict (the confusion counts), by judge and evaluator.",
    ),
    (
        "verdict_judge_calibration_cost_usd",
        "counter",
        ("judge",),
        "What calibration's judge calls cost, in US dollars, by judge.",
    ),
    (
        "verdict_judge_calibration_drift",
        "gauge",
        ("judge", "evaluator"),
        "1 when the judge's kappa is below calibration_kappa_floor or fell more than calibration_kappa_drop "
        "from its baseline, else 0; by judge and evaluator.",
    ),
    (
        "verdict_judge_calibration_kappa",
        "gauge",
        ("judge", "evaluator"),
        "Cohen's kappa of the judge's verdicts against the labels (last run), by judge and evaluator.",
    ),
    (
        "verdict_judge_calibration_kappa_baseline",
        "gauge",
        ("judge", "evaluator"),
        "The kappa a judge's drift is measured from (its baseline run), by judge and evaluator.",
    ),
    (
        "verdict_judge_calibration_last_run_timestamp_seconds",
        "gauge",
        (),
        "When the last calibration run finished (Unix time).",
    ),
    (
        "verdict_judge_calibration_latency_seconds",
        "gauge",
        ("judge",),
        "Mean time a calibration case took (last run), by judge.",
    ),
    (
        "verdict_judge_calibration_position_bias_ratio",
        "gauge",
        ("judge",),
        "Share of comparator calibration cases whose ruling flipped when the order of the outputs flipped.",
    ),
    (
        "verdict_judge_calibration_runs",
        "counter",
        ("result",),
        "Scheduled calibration runs, by result (done, budget: stopped by a budget, failed).",
    ),
    (
        "verdict_judge_calls",
        "counter",
        ("host", "outcome"),
        "Judge calls, by host and outcome (ok, timeout, missing, api_error, empty, parse_error, rejected, cancelled).",
    ),
    ("verdict_judge_cost_usd", "counter", ("host",), "Cost the judge reported, in US dollars, by host."),
    ("verdict_judge_duration_seconds", "histogram", ("host",), "Wall time of judge calls, by host."),
    (
        "verdict_judge_panel_agreement_ratio",
        "gauge",
        ("panel", "judge"),
        "Share of recent decided panel questions on which a member voted the panel's verdict, by panel and judge.",
    ),
    (
        "verdict_judge_tokens",
        "counter",
        ("host", "model", "kind"),
        "Tokens the judge reported, by host, model and kind (input, output).",
    ),
    (
        "verdict_judge_verdict_cost_usd",
        "counter",
        ("evaluator",),
        "What the judge calls behind judged verdicts cost, in US dollars, by evaluator (divide by "
        "verdict_judge_verdicts_total for the cost per verdict).",
    ),
    (
        "verdict_judge_verdicts",
        "counter",
        ("evaluator", "how"),
        "Judged verdicts, by evaluator and how they were reached (single, quorum, tie_first, tie_cautious, "
        "no_winner, below_quorum).",
    ),
    ("verdict_judges_waiting", "gauge", (), "Judge calls queued for a free slot."),
    (
        "verdict_metrics_connections_rejected",
        "counter",
        ("reason",),
        "Connections to the /metrics port closed unanswered, by reason (too_many, timeout, tls).",
    ),
    (
        "verdict_parse_pool_tasks",
        "counter",
        ("outcome",),
        "Large parses run in the process pool, by outcome (ok, timeout, crashed, cancelled).",
    ),
    (
        "verdict_resource_exhaustion",
        "counter",
        ("resource",),
        "Calls refused with UNAVAILABLE because the server ran out of a resource (file_descriptors, memory, "
        "processes).",
    ),
    (
        "verdict_second_opinions",
        "counter",
        ("outcome",),
        "VerifyResponse second opinions, by outcome (ok, malformed, no_sample).",
    ),
    (
        "verdict_shed",
        "counter",
        ("reason",),
        "VerdictService calls refused by admission control before any work, by reason (overloaded: "
        "RESOURCE_EXHAUSTED, running slots and queue full or a queue standing; queue_wait: RESOURCE_EXHAUSTED, "
        "waited max_queue_wait_seconds for a slot; deadline: DEADLINE_EXCEEDED, too little of the deadline left "
        "on arrival; deadline_in_queue: DEADLINE_EXCEEDED, it ran out while waiting; draining: UNAVAILABLE, "
        "the server is shutting down).",
    ),
    ("verdict_subprocess_duration_seconds", "histogram", ("tool",), "Wall time of child processes, by tool."),
    (
        "verdict_subprocess_runs",
        "counter",
        ("tool", "outcome"),
        "Child processes run, by tool and outcome (ok, nonzero, signalled, timeout, cancelled, missing, no_resources).",
    ),
    ("verdict_subprocess_timeouts", "counter", ("tool",), "Child processes killed at their time limit."),
    ("verdict_subprocesses_running", "gauge", ("tool",), "Child processes running now."),
    (
        "verdict_tool_checks",
        "counter",
        ("tool", "verdict", "reason"),
        "Tool calls checked by VerifyResponse, by tool (allow-listed names, else other), verdict and reason.",
    ),
    (
        "verdict_tool_schema_cache",
        "counter",
        ("outcome",),
        "Tool lists looked up in the compiled-schema cache, by outcome (hit, miss).",
    ),
    (
        "verdict_transport_calls",
        "counter",
        ("event",),
        "Calls grpc-core itself started and failed on the gRPC listeners (channelz), whether or not the "
        "application saw them: started above grpc_server_started_total is calls the transport refused or still "
        "holds unaccepted, which no other series counts.",
    ),
    ("verdict_verifications", "counter", ("verdict",), "VerifyResponse verdicts."),
]
"""(name, type, label names, help) of every family a fresh `Metrics` exposes, as the code declared them."""

BUCKETS = (
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1,
    2.5,
    5,
    10,
    30,
    60,
    120,
    300,
    600,
    1800,
    math.inf,
)

GAUGE_MODES = {
    "verdict_admission_queued": "all",
    "verdict_admission_running": "all",
    "verdict_build_info": "max",
    "verdict_judge_calibration_confusion_cases": "liveall",
    "verdict_judge_calibration_latency_seconds": "liveall",
    "verdict_judge_agreement_ratio": "liveall",
    "verdict_judge_calibration_accuracy_ratio": "liveall",
    "verdict_judge_calibration_drift": "liveall",
    "verdict_judge_calibration_kappa": "liveall",
    "verdict_judge_calibration_kappa_baseline": "liveall",
    "verdict_judge_calibration_last_run_timestamp_seconds": "max",
    "verdict_judge_calibration_position_bias_ratio": "liveall",
    "verdict_judge_panel_agreement_ratio": "liveall",
    "verdict_judges_waiting": "livesum",
    "verdict_subprocesses_running": "livesum",
}
"""How the multiprocess collector merges each gauge over the workers."""

PRE_INITIALISED = sorted(
    [
        ("verdict_admission_queued", (), 0.0),
        ("verdict_admission_running", (), 0.0),
        ("verdict_build_info", (("python", platform.python_version()), ("version", __version__)), 1.0),
        ("verdict_judge_calibration_last_run_timestamp_seconds", (), 0.0),
        ("verdict_judges_waiting", (), 0.0),
        *(
            ("verdict_resource_exhaustion_total", (("resource", resource),), 0.0)
            for resource in ("file_descriptors", "memory", "processes")
        ),
        *(
            ("verdict_shed_total", (("reason", reason),), 0.0)
            for reason in ("deadline", "deadline_in_queue", "draining", "overloaded", "queue_wait")
        ),
        *(("verdict_transport_calls_total", (("event", event),), 0.0) for event in ("failed", "started")),
    ]
)
"""The series a fresh `Metrics` exposes before anything happened: (sample name, sorted labels, value)."""


def collectors(registry: CollectorRegistry) -> dict[str, MetricWrapperBase]:
    """The registry's metrics by family name (prometheus_client keeps label names and buckets on private fields)."""
    found = {}
    for collector in registry._collector_to_names:
        assert isinstance(collector, MetricWrapperBase)
        found[collector._name] = collector
    return found


def test_a_fresh_registry_exposes_the_declared_families() -> None:
    registry = CollectorRegistry()
    Metrics(registry)
    declared = collectors(registry)
    exposed = sorted(
        (family.name, family.type, tuple(declared[family.name]._labelnames), family.documentation)
        for family in registry.collect()
    )
    assert exposed == FAMILIES
    assert {name: c._upper_bounds for name, c in declared.items() if isinstance(c, Histogram)} == {
        name: list(BUCKETS) for name, kind, _, _ in FAMILIES if kind == "histogram"
    }
    assert {name: c._multiprocess_mode for name, c in declared.items() if isinstance(c, Gauge)} == GAUGE_MODES


def test_a_fresh_registry_pre_initialises_the_declared_series() -> None:
    registry = CollectorRegistry()
    Metrics(registry)
    samples = sorted(
        (sample.name, tuple(sorted(sample.labels.items())), sample.value)
        for family in registry.collect()
        for sample in family.samples
        if not sample.name.endswith("_created")
    )
    assert samples == PRE_INITIALISED


def test_each_room_stands_alone_and_no_two_rooms_share_an_attribute() -> None:
    declared: dict[str, str] = {}
    for room in Metrics.__bases__:
        for attribute in vars(room(CollectorRegistry())):
            assert attribute not in declared, f"{room.__name__}.{attribute} shadows {declared[attribute]}'s"
            declared[attribute] = room.__name__
    own = {"registry", "verdict_labels", "model_labels", "tool_labels"}
    assert set(vars(Metrics(CollectorRegistry()))) == set(declared) | own


def judge_cache_series(registry: CollectorRegistry) -> set[tuple[str, str]]:
    return {
        (sample.labels["evaluator"], sample.labels["result"])
        for family in registry.collect()
        if family.name == "verdict_judge_cache_lookups"
        for sample in family.samples
        if sample.name.endswith("_total")
    }


def test_the_judge_types_are_whatever_the_caller_names() -> None:
    metrics = Metrics(CollectorRegistry())
    assert judge_cache_series(metrics.registry) == set(), "metrics.py keeps no list of the judged evaluators"
    metrics.initialize_judge_types(["contract"])
    assert judge_cache_series(metrics.registry) == {("contract", "hit"), ("contract", "miss"), ("contract", "fresh")}


async def test_the_server_pre_initialises_the_ruling_cache_series_of_the_judged_records() -> None:
    registry = CollectorRegistry()
    app, _ = await build_server(make_config(), registry=registry, env={"PATH": "/usr/bin:/bin"})
    try:
        series = judge_cache_series(registry)
    finally:
        await app.stop(grace=0)
    judged = {spec.type for spec in CATALOGUE.specs.values() if spec.uses_judge}
    assert judged, "the catalogue has judged types"
    assert series == {(kind, result) for kind in judged for result in ("hit", "miss", "fresh")}
