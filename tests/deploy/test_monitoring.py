"""The PrometheusRule, its promtool unit tests, the runbooks and the Grafana dashboard, checked without a server.

The live half (every query run against a real Prometheus scraping a real server) is in test_prometheus.py. Here:
promtool accepts the rules and their unit tests pass; every alert is tested, documented and labelled; every metric
name and grpc_code value an expression uses is one the server really exports, in its spelling.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import CollectorRegistry

from tests.deploy.support import MONITORING, ROOT, one, render, tool
from verdict.metrics import GRPC_CODE_LABELS, Metrics

RULES_SOURCE = MONITORING / "prometheusrule.yaml"
DASHBOARD = MONITORING / "dashboards" / "verdict.json"
RUNBOOKS = ROOT / "docs" / "runbooks.md"
PROMTOOL_HOW = "install the Debian package `prometheus` (make system-deps)"
EXTERNAL_METRICS = {"up", "kube_deployment_status_replicas_unavailable"}
"""Series Verdict does not export: Prometheus's own `up`, and kube-state-metrics for the pods-not-ready alert."""
PROMQL_KEYWORDS = {"and", "or", "unless", "bool", "offset", "group_left", "group_right", "inf", "nan"}


def rules_file(tmp_path: Path) -> Path:
    """Write the plain rules file the way operators are told to (deploy/monitoring/rules_file.py) and return it."""
    completed = subprocess.run(
        [sys.executable, str(MONITORING / "rules_file.py")], capture_output=True, text=True, timeout=60, check=True
    )
    target = tmp_path / "verdict-rules.yaml"
    target.write_text(completed.stdout, encoding="utf-8")
    return target


def rule_groups() -> list[dict[str, Any]]:
    groups: list[dict[str, Any]] = yaml.safe_load(RULES_SOURCE.read_text(encoding="utf-8"))["spec"]["groups"]
    return groups


def alerts() -> list[dict[str, Any]]:
    return [rule for group in rule_groups() for rule in group["rules"] if "alert" in rule]


def recordings() -> list[dict[str, Any]]:
    return [rule for group in rule_groups() for rule in group["rules"] if "record" in rule]


def dashboard() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return document


def dashboard_targets() -> list[tuple[str, str]]:
    """(panel title, PromQL expression) for every query on the dashboard."""
    return [
        (panel["title"], target["expr"])
        for panel in dashboard()["panels"]
        if panel["type"] != "row"
        for target in panel["targets"]
    ]


def exported_series_names() -> set[str]:
    """Every series name the server's registry can expose (counters with _total, histograms with _bucket...)."""
    from verdict.config.keys import Config
    from verdict.rpc.decisions import build_decision_log

    names: set[str] = set()
    registry = Metrics(CollectorRegistry()).registry
    decisions = build_decision_log(Config(decision_log="stdout"), registry)  # its own counters, on the same registry
    assert decisions is not None
    decisions.close()
    for family in registry.collect():
        if family.type == "counter":
            names |= {family.name + "_total", family.name + "_created"}
        elif family.type == "histogram":
            names |= {family.name + suffix for suffix in ("_bucket", "_sum", "_count", "_created")}
        else:
            names.add(family.name)
    return names


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects: not functions, keywords, labels or recorded (colon) names."""
    text = re.sub(r"\"[^\"]*\"|'[^']*'", " ", expr)
    text = re.sub(r"\{[^}]*\}|\[[^\]]*\]", " ", text)
    text = re.sub(r"\b(by|without|on|ignoring)\s*\([^)]*\)", " ", text)
    names = set()
    for match in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", text):
        token = match.group(0)
        if text[match.end() :].lstrip().startswith("(") or ":" in token or token.lower() in PROMQL_KEYWORDS:
            continue
        names.add(token)
    return names


def grpc_codes(expr: str) -> set[str]:
    codes: set[str] = set()
    for match in re.finditer(r'grpc_code\s*(?:=~|=|!=|!~)\s*"([^"]*)"', expr):
        codes |= set(match.group(1).split("|"))
    return codes


def test_metric_name_extraction_sees_selectors_and_skips_functions() -> None:
    expr = (
        'sum by (le) (rate(a_bucket{x="y"}[5m])) / b_total - up == 0 and job:c:rate5m > 1 + histogram_quantile(d[1m])'
    )
    assert metric_names(expr) == {"a_bucket", "b_total", "up", "d"}
    assert metric_names('x / ignoring (verdict) group_left sum(y{a=~"$b"}[$__rate_interval])') == {"x", "y"}
    assert metric_names("absent(up{job='v'} == 1)") == {"up"}


def test_promtool_accepts_the_rules(tmp_path: Path) -> None:
    promtool = tool("promtool", PROMTOOL_HOW)
    completed = subprocess.run(
        [promtool, "check", "rules", str(rules_file(tmp_path))], capture_output=True, text=True, timeout=60, check=False
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert f"SUCCESS: {len(alerts()) + len(recordings())} rules found" in completed.stdout


def test_promtool_unit_tests_pass(tmp_path: Path) -> None:
    promtool = tool("promtool", PROMTOOL_HOW)
    rules_file(tmp_path)
    tests = sorted((MONITORING / "tests").glob("*.yaml"))
    assert tests
    for test in tests:
        shutil.copy(test, tmp_path / test.name)
    completed = subprocess.run(
        [promtool, "test", "rules", *(t.name for t in tests)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_promtool_unit_tests_can_fail(tmp_path: Path) -> None:
    """A changed threshold must break the tests: proof that they compare, not merely run."""
    promtool = tool("promtool", PROMTOOL_HOW)
    rules = rules_file(tmp_path)
    rules.write_text(rules.read_text(encoding="utf-8").replace("> 0.05", "> 0.5"), encoding="utf-8")
    shutil.copy(MONITORING / "tests" / "alerts.yaml", tmp_path)
    completed = subprocess.run(
        [promtool, "test", "rules", "alerts.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode != 0
    assert "VerdictRPCErrorRatioHigh" in completed.stdout + completed.stderr


def _alert_tests() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for path in (MONITORING / "tests").glob("*.yaml"):
        for test in yaml.safe_load(path.read_text(encoding="utf-8"))["tests"]:
            cases += test.get("alert_rule_test", [])
    return cases


@pytest.mark.parametrize("name", [rule["alert"] for rule in alerts()])
def test_every_alert_has_a_firing_and_a_silent_unit_test(name: str) -> None:
    cases = [case for case in _alert_tests() if case["alertname"] == name]
    assert any(case["exp_alerts"] for case in cases), f"{name}: no test in which it fires"
    assert any(not case["exp_alerts"] for case in cases), f"{name}: no test in which it stays silent"


def test_every_recording_rule_is_unit_tested_or_feeds_a_tested_alert() -> None:
    tested: set[str] = set()
    for path in (MONITORING / "tests").glob("*.yaml"):
        for test in yaml.safe_load(path.read_text(encoding="utf-8"))["tests"]:
            tested |= {case["expr"].split("{")[0] for case in test.get("promql_expr_test", [])}
    alert_exprs = " ".join(rule["expr"] for rule in alerts())
    for rule in recordings():
        assert rule["record"] in tested or rule["record"] in alert_exprs, rule["record"]


@pytest.mark.parametrize("rule", alerts(), ids=lambda rule: rule["alert"])
def test_alert_is_labelled_and_annotated(rule: dict[str, Any]) -> None:
    assert re.fullmatch(r"Verdict[A-Z][A-Za-z]+", rule["alert"])
    assert rule["labels"]["severity"] in ("critical", "warning")
    assert set(rule["annotations"]) == {"summary", "description", "runbook_url"}
    assert re.fullmatch(r"[0-9]+m", rule["for"]), "a for: duration, so one bad scrape does not page"


def _runbook_anchors() -> set[str]:
    """GitHub's anchors for the `## ` headings of docs/runbooks.md."""
    headings = re.findall(r"^## (.+)$", RUNBOOKS.read_text(encoding="utf-8"), re.M)
    return {re.sub(r"[^a-z0-9 _-]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def test_every_runbook_url_points_at_a_section_of_docs_runbooks() -> None:
    anchors = _runbook_anchors()
    prefixes = set()
    for rule in alerts():
        prefix, _, anchor = rule["annotations"]["runbook_url"].partition("#")
        prefixes.add(prefix)
        assert anchor == rule["alert"].lower()
        assert anchor in anchors, f"docs/runbooks.md has no section for {rule['alert']}"
    assert len(prefixes) == 1, "one prefix, so publishing the runbooks elsewhere is one replace"
    assert prefixes.pop().endswith("/docs/runbooks.md")


def test_runbooks_have_no_section_for_an_alert_that_does_not_exist() -> None:
    names = {rule["alert"].lower() for rule in alerts()}
    assert {anchor for anchor in _runbook_anchors() if anchor.startswith("verdict")} == names


def _all_expressions() -> list[tuple[str, str]]:
    rules = [(rule.get("alert") or rule["record"], rule["expr"]) for rule in alerts() + recordings()]
    return rules + dashboard_targets()


@pytest.mark.parametrize(("where", "expr"), _all_expressions(), ids=lambda value: str(value)[:60])
def test_expressions_use_only_metrics_the_server_exports(where: str, expr: str) -> None:
    names = metric_names(expr)
    recorded = {rule["record"] for rule in recordings()}
    assert names or any(record in expr for record in recorded), f"{where}: selects no metric"
    unknown = names - exported_series_names() - EXTERNAL_METRICS
    assert not unknown, f"{where}: {sorted(unknown)} are not exported by service/verdict/metrics.py"
    assert grpc_codes(expr) <= set(GRPC_CODE_LABELS), f"{where}: grpc_code values must be Go CamelCase"


def test_server_fault_codes_are_spelt_as_the_server_exports_them() -> None:
    faults = {"Unknown", "ResourceExhausted", "Internal", "Unavailable", "DataLoss", "DeadlineExceeded"}
    ratio = next(r for r in recordings() if "server_errors" in r["record"])
    assert grpc_codes(ratio["expr"]) == faults
    assert faults <= set(GRPC_CODE_LABELS)


def test_rules_select_the_job_the_service_monitor_produces() -> None:
    job = one(render("overlays/production"), "Service", "verdict")["metadata"]["name"]
    for rule in alerts() + recordings():
        verdict_metrics = metric_names(rule["expr"]) - EXTERNAL_METRICS
        if verdict_metrics:
            assert f'job="{job}"' in rule["expr"] or ":" in rule["expr"], rule.get("alert") or rule["record"]


def test_dashboard_has_a_fixed_uid_and_a_datasource_variable() -> None:
    document = dashboard()
    assert document["uid"] == "verdict-overview"
    variables = {v["name"]: v for v in document["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    for name in ("namespace", "job"):
        assert variables[name]["datasource"] == {"type": "prometheus", "uid": "${datasource}"}


def test_every_panel_uses_the_datasource_variable_and_rate_interval() -> None:
    ids = []
    for panel in dashboard()["panels"]:
        ids.append(panel["id"])
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
        assert panel["fieldConfig"]["defaults"]["unit"], f"{panel['title']}: no unit"
        for target in panel["targets"]:
            assert target["datasource"] == panel["datasource"]
            expr = target["expr"]
            assert 'job=~"$job"' in expr, panel["title"]
            assert 'namespace=~"$namespace"' in expr, panel["title"]
            for window in re.findall(r"\[([^\]]+)\]", expr):
                assert window == "$__rate_interval", f"{panel['title']}: fixed window [{window}]"
    assert len(ids) == len(set(ids)), "panel ids must be unique"


def test_dashboard_panels_do_not_overlap() -> None:
    cells: set[tuple[int, int]] = set()
    for panel in dashboard()["panels"]:
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24
        area = {
            (x, y) for x in range(grid["x"], grid["x"] + grid["w"]) for y in range(grid["y"], grid["y"] + grid["h"])
        }
        assert not cells & area, f"{panel['title']} overlaps another panel"
        cells |= area


@pytest.mark.parametrize(
    ("topic", "pattern"),
    [
        ("verdicts per evaluator", r"sum by \(evaluator, verdict\) \(rate\(verdict_evaluations_total"),
        ("truncated/malformed ratio", r'verdict_verifications_total\{[^}]*verdict=~"truncated\|malformed"\}.*/'),
        ("RPC rate by code", r"rate\(grpc_server_handled_total"),
        ("RPC latency", r"histogram_quantile\(0\.99, .*grpc_server_handling_seconds_bucket"),
        ("RPC server errors", r'grpc_code=~"Unknown\|ResourceExhausted'),
        ("in-flight", r"grpc_server_started_total\{[^}]*\}\) - sum by \(grpc_method\) \(grpc_server_handled_total"),
        ("rejected", r'grpc_code="ResourceExhausted"'),
        ("subprocess latency", r"histogram_quantile\(.*verdict_subprocess_duration_seconds_bucket"),
        ("judge latency", r"histogram_quantile\(.*verdict_judge_duration_seconds_bucket"),
        ("admission running", r"verdict_admission_running\{"),
        ("admission queued", r"verdict_admission_queued\{"),
        ("load shed", r"rate\(verdict_shed_total\{"),
        ("in-flight refusals", r"rate\(verdict_calls_in_flight_rejected_total\{"),
        ("judge cache lookups", r"sum by \(result\) \(rate\(verdict_judge_cache_lookups_total\{"),
        ("judge cache savings", r"rate\(verdict_judge_cache_saved_usd_total\{"),
        ("decision log delivered", r"rate\(verdict_decision_log_records_total\{"),
        ("decision log dropped", r"sum by \(reason\) \(rate\(verdict_decision_log_dropped_total\{"),
        ("resource exhaustion", r"rate\(verdict_resource_exhaustion_total\{"),
    ],
)
def test_dashboard_shows_what_the_issue_asks_for(topic: str, pattern: str) -> None:
    assert any(re.search(pattern, expr) for _title, expr in dashboard_targets()), topic


def test_dashboard_configmap_carries_the_file_and_the_grafana_label() -> None:
    configmap = one(render("monitoring"), "ConfigMap", "verdict-dashboard")
    assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert json.loads(configmap["data"]["verdict.json"]) == dashboard()


def test_rules_file_script_prints_exactly_the_groups(tmp_path: Path) -> None:
    plain = yaml.safe_load(rules_file(tmp_path).read_text(encoding="utf-8"))
    assert plain == {"groups": rule_groups()}
    configmap = yaml.safe_dump({"kind": "ConfigMap"})
    completed = subprocess.run(
        [sys.executable, str(MONITORING / "rules_file.py"), "-"], input=configmap, capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert completed.returncode == 2
    assert "not a PrometheusRule" in completed.stderr
