"""Metric names, the grpc_code spelling, label folding and pre-initialised series."""

from __future__ import annotations

import grpc
from prometheus_client import CollectorRegistry

from verdict.metrics import GRPC_CODE_LABELS, LabelFolder, Metrics, VerdictLabels, grpc_code_label


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
