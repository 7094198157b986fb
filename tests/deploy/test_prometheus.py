"""A real Prometheus scraping a real `verdict serve`: the numbers the dashboard will show are the calls that were made.

The test starts the installed `verdict` console script and Debian's `prometheus` (both on loopback, free ports),
loads the alert and recording rules into Prometheus, sends a known mix of calls over a real gRPC channel, waits until
Prometheus has scraped them, and asks its HTTP API. Then it runs every dashboard query and every recording rule
against that Prometheus and requires data from each. Waits are bounded polls of Prometheus's own answers, never
sleeps tuned to a machine.

The judge is a stand-in `claude` on the server's PATH that prints a fixed claude-shaped envelope (with a cost and
token counts), so the judge panels have data without credentials or a network; the real CLIs are tested elsewhere.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml

from tests.deploy.support import MONITORING, tool
from tests.deploy.test_monitoring import (
    PROMTOOL_HOW,
    alerts,
    dashboard,
    dashboard_targets,
    recordings,
)
from tests.support import read_ready
from verdict.v1 import verdict_pb2, verdict_pb2_grpc

JOB = "verdict"
SCRAPE_SECONDS = 1
WAIT_SECONDS = 60.0
RATE_WINDOW = "1m"
"""What $__rate_interval becomes: many 1 s scrapes, so every rate() over the calls has samples on both sides."""
SERVICE = "verdict.v1.VerdictService"
RECENT_SAMPLES = f'{{__name__=~"verdict_.+|grpc_server_.+", job="{JOB}"}}[30s]'

BIG_PYTHON_BLOCK = "```python\n" + "total = 1 + 2\n" * 2000 + "```\n"
"""About 28 kB: larger than inline_parse_bytes (16 kB), so it is parsed in the parse pool."""
VERIFY_CALLS: list[tuple[str, verdict_pb2.VerifyResponseRequest]] = [
    ("ok", verdict_pb2.VerifyResponseRequest(text="Done:\n```python\nprint('hi')\n```\n", finish_reason="stop")),
    ("ok", verdict_pb2.VerifyResponseRequest(text="Run:\n```bash\necho hello\n```\n", finish_reason="stop")),
    ("ok", verdict_pb2.VerifyResponseRequest(text=BIG_PYTHON_BLOCK, finish_reason="stop")),
    ("truncated", verdict_pb2.VerifyResponseRequest(text="The answer is", finish_reason="length")),
    ("truncated", verdict_pb2.VerifyResponseRequest(text="```python\nx = 1\n", finish_reason="stop")),
    ("malformed", verdict_pb2.VerifyResponseRequest(text="```python\ndef f(:\n    pass\n```\n", finish_reason="stop")),
]
EXIT_CODE_CALLS: list[tuple[str, int]] = [("yes", 0), ("no", 1), ("error", 2)]
"""exit_code evaluator: 0 -> yes, 1 -> no, anything else -> error."""
JUDGED_OUTPUT = "ran the suite: all tests passed"
JUDGE_COST_USD = 0.0125
FAKE_CLAUDE = f"""#!/bin/bash
# A stand-in for the claude CLI: reads its prompt, answers yes with evidence quoted from the judged output.
cat > /dev/null
cat <<'ENVELOPE'
{{"type": "result", "subtype": "success", "is_error": false, "result": "",
 "structured_output": {{"verdict": "yes", "confidence": 0.9, "reason": "the output says so",
  "evidence": "all tests passed"}},
 "total_cost_usd": {JUDGE_COST_USD}, "usage": {{"input_tokens": 120, "output_tokens": 30}},
 "modelUsage": {{"claude-sonnet-4-5": {{}}}}}}
ENVELOPE
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def wait_for(what: str, check: Callable[[], Any], seconds: float = WAIT_SECONDS) -> Any:
    """Poll `check` until it returns something truthy; fail naming `what` and the last answer after `seconds`."""
    deadline = time.monotonic() + seconds
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except OSError as error:
            last = error
        else:
            if last:
                return last
        time.sleep(0.2)
    pytest.fail(f"gave up waiting for {what} after {seconds:.0f} s; last answer: {last!r}")


def stop(process: subprocess.Popen[Any]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@dataclass
class Stack:
    grpc_port: int
    metrics_port: int
    prometheus: str
    server: subprocess.Popen[Any]

    def api(self, path: str, **params: str) -> Any:
        url = f"{self.prometheus}/api/v1/{path}?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - a loopback URL built here
            body = json.load(response)
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        data = self.api("query", query=expr)
        assert data["resultType"] == "vector", f"{expr}: {data['resultType']}"
        result: list[dict[str, Any]] = data["result"]
        return result

    def values(self, expr: str, *labels: str) -> dict[tuple[str, ...], float]:
        return {tuple(s["metric"].get(label, "") for label in labels): float(s["value"][1]) for s in self.query(expr)}


def start_server(tmp: Path) -> tuple[subprocess.Popen[str], int, int]:
    verdict = shutil.which("verdict", path=str(Path(sys.executable).parent))
    assert verdict is not None, "the verdict console script is not installed in this virtualenv (make install)"
    judges = tmp / "judges"
    judges.mkdir()
    (judges / "claude").write_text(FAKE_CLAUDE, encoding="utf-8")
    (judges / "claude").chmod(0o755)
    env = {name: value for name, value in os.environ.items() if not name.startswith(("VERDICT_", "LL_"))}
    env["PATH"] = f"{judges}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    env["VERDICT_JUDGE_HOST"] = "claude-code"
    process = subprocess.Popen(
        [verdict, "serve", "--grpc-address", "127.0.0.1:0", "--metrics-address", "127.0.0.1:0", "--log-format", "json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    ready, _lines = read_ready(process, WAIT_SECONDS)
    return process, ready["grpc_port"], ready["metrics_port"]


def start_prometheus(tmp: Path, metrics_port: int) -> tuple[subprocess.Popen[Any], str]:
    binary = tool("prometheus", PROMTOOL_HOW)
    rules = subprocess.run(
        [sys.executable, str(MONITORING / "rules_file.py")], capture_output=True, text=True, timeout=60, check=True
    )
    (tmp / "verdict-rules.yaml").write_text(rules.stdout, encoding="utf-8")
    config = {
        "global": {"scrape_interval": f"{SCRAPE_SECONDS}s", "evaluation_interval": f"{SCRAPE_SECONDS}s"},
        "rule_files": ["verdict-rules.yaml"],
        "scrape_configs": [{"job_name": JOB, "static_configs": [{"targets": [f"127.0.0.1:{metrics_port}"]}]}],
    }
    (tmp / "prometheus.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    port = free_port()
    process = subprocess.Popen(
        [
            binary,
            f"--config.file={tmp / 'prometheus.yml'}",
            f"--storage.tsdb.path={tmp / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--log.level=warn",
        ],
        stdout=subprocess.DEVNULL,
        stderr=(tmp / "prometheus.log").open("wb"),
    )
    url = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        if process.poll() is not None:
            pytest.fail(f"prometheus exited: {(tmp / 'prometheus.log').read_text(errors='replace')}")
        with urllib.request.urlopen(f"{url}/-/ready", timeout=5) as response:  # noqa: S310 - loopback
            return bool(response.status == 200)

    wait_for("Prometheus to be ready", ready)
    return process, url


def send_known_mix(grpc_port: int) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
        stub = verdict_pb2_grpc.VerdictServiceStub(channel)
        for expected, request in VERIFY_CALLS:
            response = stub.VerifyResponse(request, timeout=30)
            assert verdict_pb2.VerifyVerdict.Name(response.verdict) == f"VERIFY_VERDICT_{expected.upper()}", (
                request.text[:40],
                response.detail,
            )
        for expected, exit_code in EXIT_CODE_CALLS:
            config = verdict_pb2.EvaluatorConfig(exit_code=verdict_pb2.ExitCodeConfig())
            response = stub.Evaluate(verdict_pb2.EvaluateRequest(config=config, exit_code=exit_code), timeout=30)
            assert response.verdict == expected
        config = verdict_pb2.EvaluatorConfig(llm_structured=verdict_pb2.LlmStructuredConfig())
        response = stub.Evaluate(verdict_pb2.EvaluateRequest(config=config, output=JUDGED_OUTPUT), timeout=60)
        assert response.verdict == "yes", response.details


def expected_verifications() -> dict[tuple[str, ...], float]:
    counts: dict[tuple[str, ...], float] = {}
    for verdict, _request in VERIFY_CALLS:
        counts[(verdict,)] = counts.get((verdict,), 0) + 1
    return counts


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("prometheus")
    server, grpc_port, metrics_port = start_server(tmp)
    try:
        prometheus, url = start_prometheus(tmp, metrics_port)
    except BaseException:
        stop(server)
        raise
    running = Stack(grpc_port, metrics_port, url, server)
    try:
        # A scrape before the calls, so every counter's increase is seen from a sample taken before it.
        wait_for("the first scrape", lambda: running.values(f'up{{job="{JOB}"}}') == {(): 1.0})
        send_known_mix(grpc_port)
        wait_for(
            "Prometheus to scrape every call sent",
            lambda: (
                running.values(f'sum by (verdict) (verdict_verifications_total{{job="{JOB}"}})', "verdict")
                == expected_verifications()
                and sum(running.values(f'sum(verdict_evaluations_total{{job="{JOB}"}})').values())
                == len(EXIT_CODE_CALLS) + 1
            ),
        )
        # rate() needs two samples after an increase: wait until even the newest series has three.
        wait_for(
            "three scrapes of every series after the calls",
            lambda: (
                min(
                    (len(series["values"]) for series in running.api("query", query=RECENT_SAMPLES)["result"]),
                    default=0,
                )
                >= 3
            ),
        )
        yield running
    finally:
        stop(prometheus)
        stop(server)


def test_prometheus_counts_exactly_the_verify_verdicts_sent(stack: Stack) -> None:
    counts = stack.values(f'sum by (verdict) (verdict_verifications_total{{job="{JOB}"}})', "verdict")
    assert counts == {("ok",): 3.0, ("truncated",): 2.0, ("malformed",): 1.0}


def test_prometheus_counts_exactly_the_evaluate_verdicts_sent(stack: Stack) -> None:
    counts = stack.values(
        f'sum by (evaluator, verdict) (verdict_evaluations_total{{job="{JOB}"}})', "evaluator", "verdict"
    )
    assert counts == {
        ("exit_code", "yes"): 1.0,
        ("exit_code", "no"): 1.0,
        ("exit_code", "error"): 1.0,
        ("llm_structured", "yes"): 1.0,
    }


def test_prometheus_counts_the_judge_call_its_cost_and_tokens(stack: Stack) -> None:
    assert stack.values(f'verdict_judge_calls_total{{job="{JOB}"}}', "host", "outcome") == {("claude-code", "ok"): 1.0}
    assert stack.values(f'verdict_judge_cost_usd_total{{job="{JOB}"}}', "host") == {("claude-code",): JUDGE_COST_USD}
    tokens = stack.values(f'sum by (kind) (verdict_judge_tokens_total{{job="{JOB}"}})', "kind")
    assert tokens == {("input",): 120.0, ("output",): 30.0}


def test_prometheus_counts_the_rpcs_by_method_and_code(stack: Stack) -> None:
    handled = stack.values(
        f'sum by (grpc_method, grpc_code) (grpc_server_handled_total{{job="{JOB}", grpc_service="{SERVICE}"}}) > 0',
        "grpc_method",
        "grpc_code",
    )
    assert handled == {("VerifyResponse", "OK"): 6.0, ("Evaluate", "OK"): 4.0}
    in_flight = stack.values(
        f'sum(grpc_server_started_total{{job="{JOB}", grpc_service="{SERVICE}"}})'
        f' - sum(grpc_server_handled_total{{job="{JOB}", grpc_service="{SERVICE}"}})'
    )
    assert in_flight == {(): 0.0}


def _substitute(expr: str) -> str:
    """A dashboard query as Grafana sends it, for this Prometheus: all namespaces, our job, a window of scrapes."""
    return (
        expr.replace("$__rate_interval", RATE_WINDOW)
        .replace('namespace=~"$namespace"', 'namespace=~".*"')
        .replace('job=~"$job"', f'job=~"{JOB}"')
    )


def _assert_returns_data(stack: Stack, where: str, expr: str) -> None:
    assert stack.query(expr), f"{where}: no data after the calls:\n{expr}"


NEEDS_EVENTS = {
    "Panel agreement by pair": "a judge panel has answered (this stack asks one judge)",
    "Agreement with the panel": "a judge panel has answered (this stack asks one judge)",
    "Calibration kappa by judge": "a calibration run (tests/judges/test_calibration*.py covers the gauges)",
    "Calibration accuracy and comparator position bias": "a calibration run",
    "Judge malfunction rate by reason": "a judge that malfunctioned (this stack's judge answers)",
}
"""Dashboard panels whose series exist only after an event the stack does not cause, and why; their queries must
still be accepted and run."""


@pytest.mark.parametrize(("title", "expr"), dashboard_targets(), ids=lambda value: str(value)[:50])
def test_every_dashboard_query_returns_data(stack: Stack, title: str, expr: str) -> None:
    assert "$" not in _substitute(expr), "a dashboard variable this test does not know"
    if title in NEEDS_EVENTS:
        assert isinstance(stack.query(_substitute(expr)), list)
        return
    _assert_returns_data(stack, title, _substitute(expr))


def test_every_exempt_panel_is_on_the_dashboard() -> None:
    assert set(NEEDS_EVENTS) <= {title for title, _ in dashboard_targets()}


@pytest.mark.parametrize("rule", recordings(), ids=lambda rule: f"{rule['record']}{rule.get('labels', '')}")
def test_every_recording_rule_expression_returns_data(stack: Stack, rule: dict[str, Any]) -> None:
    _assert_returns_data(stack, rule["record"], rule["expr"])


@pytest.mark.parametrize("rule", alerts(), ids=lambda rule: rule["alert"])
def test_every_alert_expression_runs(stack: Stack, rule: dict[str, Any]) -> None:
    """Alert expressions are empty when all is well (that is the point); Prometheus must still accept and run them."""
    assert isinstance(stack.query(rule["expr"]), list)


def test_healthy_server_raises_no_verdict_alert(stack: Stack) -> None:
    for rule in alerts():
        if rule["alert"] == "VerdictPodsNotReady":
            continue  # reads kube-state-metrics, which this Prometheus does not scrape
        assert stack.query(rule["expr"]) == [], rule["alert"]


def test_prometheus_loaded_every_rule_and_evaluates_it_cleanly(stack: Stack) -> None:
    def evaluated() -> list[dict[str, Any]]:
        rules = [rule for group in stack.api("rules")["groups"] for rule in group["rules"]]
        return rules if all(rule.get("lastEvaluation", "").startswith("2") and rule["health"] for rule in rules) else []

    rules = wait_for("every rule to be evaluated once", evaluated)
    assert len(rules) == len(alerts()) + len(recordings())
    assert {rule["name"]: rule["health"] for rule in rules} == {rule["name"]: "ok" for rule in rules}, [
        rule.get("lastError") for rule in rules
    ]
    recorded = wait_for(
        "the verification rate to be recorded",
        lambda: stack.values(f'verdict:verdict_verifications:rate5m{{job="{JOB}"}}', "verdict"),
    )
    assert set(recorded) == {("ok",), ("truncated",), ("malformed",)}


def test_dashboard_variables_resolve_to_this_job(stack: Stack) -> None:
    jobs = stack.api("label/job/values", **{"match[]": "verdict_build_info"})
    assert jobs == [JOB]
    variables = {v["name"]: v for v in dashboard()["templating"]["list"]}
    assert "verdict_build_info" in variables["job"]["definition"]
