"""Known-answer calibration: labelled cases run against a judge, measured as accuracy, Cohen's kappa, confusion
counts, comparator position bias, latency and cost; and the drift rule the alert follows.

The cases and their file format are `calibration_cases`; the JSON report is `calibration_report`.

Calibration asks through the judge evaluators themselves (one judge, asked once, no ruling cache: a cached ruling
says nothing about the judge today), so what is measured is exactly what routes production verdicts, the evidence
contract and both-order comparison included. A malfunction (`error`) is no answer: it is counted apart and left out
of accuracy and kappa. A comparator case's ruling *flipped* when its two orders named different winners: the
position-bias rate is the share of answered comparator cases that flipped (a judge that always prefers the output
shown first flips on every case).

Drift: a judge drifts when its kappa is below `floor`, or fell by more than `drop` from its baseline kappa.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from verdict.errors import ConfigError, InvalidConfig
from verdict.evaluators.model import EvaluationInput, EvaluationResult, JudgedEvaluator
from verdict.judges.calibration_cases import CalibrationCase
from verdict.judges.comparator import Comparator
from verdict.judges.contract import Contract
from verdict.judges.hosts import Host
from verdict.judges.kappa import Agreement, agreement
from verdict.judges.llm_structured import LlmStructured
from verdict.judges.panels import PanelBook, resolve_host
from verdict.judges.rulings import billed
from verdict.judges.service import JudgeService
from verdict.metrics import Metrics

__all__ = [
    "Calibrator",
    "CaseResult",
    "JudgeReport",
    "JudgeUnderTest",
    "drift",
    "judges_to_calibrate",
    "publish",
]


@dataclass(frozen=True)
class JudgeUnderTest:
    """A judge as calibration names it: a host and a model ("" for the server's judge_model), or a named panel
    (`panel`), calibrated as a unit: its quorum and tie policy included, as the loops that name it see it."""

    host: Host | None = None
    model: str = ""
    panel: str = ""

    def label(self, default_model: str) -> str:
        if self.panel:
            return f"panel/{self.panel}"
        assert self.host is not None
        return f"{self.host.name}/{self.model or default_model}"


def judges_to_calibrate(
    names: Iterable[str], service: JudgeService, panels: PanelBook, *, source: str = "calibration_judges"
) -> list[JudgeUnderTest]:
    """`host`, `host/model` or named-panel names (a URL host cannot take a `/model` suffix: name its model in a
    panel); none given: the judge host, every member of the named panels, and each named panel as a unit, each once.
    Raises ConfigError naming `source`."""
    found: list[JudgeUnderTest] = []
    for name in names:
        if name in panels:
            found.append(JudgeUnderTest(panel=name))
            continue
        host_name, _, model = name.partition("/") if not name.startswith(("http://", "https://")) else (name, "", "")
        found.append(JudgeUnderTest(resolve_host(service.hosts, host_name, source=source), model))
    if not found:
        if service.host is not None:
            found.append(JudgeUnderTest(service.host, ""))
        for panel in panels.values():
            found.extend(JudgeUnderTest(member.host or service.host, member.model) for member in panel.members)
        found.extend(JudgeUnderTest(panel=name) for name in panels)
    if not found:
        raise ConfigError(source, "no judge to calibrate: configure judge_host or name judges")
    unique: dict[str, JudgeUnderTest] = {}
    for judge in found:
        if judge.panel or judge.host is not None:
            unique.setdefault(judge.label(service.config.judge_model), judge)
    return list(unique.values())


@dataclass(frozen=True)
class CaseResult:
    """One case judged: the verdict (None: a malfunction, with its error), whether the comparator's orders flipped."""

    id: str
    evaluator: str
    expected: str
    judged: str | None
    latency_ms: int
    cost_usd: float
    flipped: bool | None = None
    error: str = ""

    @property
    def right(self) -> bool:
        return self.judged == self.expected


@dataclass(frozen=True)
class JudgeReport:
    """A judge's calibration: every case's result and the statistics, per evaluator and over all cases."""

    judge: str
    results: tuple[CaseResult, ...]
    finished_at: float = field(default_factory=time.time)

    def by_evaluator(self) -> dict[str, Agreement]:
        evaluators = sorted({result.evaluator for result in self.results})
        return {
            evaluator: agreement([(r.expected, r.judged) for r in self.results if r.evaluator == evaluator])
            for evaluator in evaluators
        }

    @property
    def overall(self) -> Agreement:
        return agreement([(result.expected, result.judged) for result in self.results])

    @property
    def position_bias(self) -> float | None:
        """Share of answered comparator cases whose orders named different winners; None without any."""
        flips = [result.flipped for result in self.results if result.flipped is not None]
        return round(sum(flips) / len(flips), 4) if flips else None

    @property
    def cost_usd(self) -> float:
        return round(sum(result.cost_usd for result in self.results), 6)

    def to_json(self) -> dict[str, Any]:
        latencies = [result.latency_ms for result in self.results]
        overall = self.overall
        return {
            "judge": self.judge,
            "cases": len(self.results),
            "answered": overall.answered,
            "malfunctions": overall.malfunctions,
            "accuracy": overall.accuracy,
            "kappa": overall.kappa,
            "confusion": overall.confusion,
            "evaluators": {
                evaluator: {
                    "answered": stats.answered,
                    "malfunctions": stats.malfunctions,
                    "accuracy": stats.accuracy,
                    "kappa": stats.kappa,
                    "confusion": stats.confusion,
                }
                for evaluator, stats in self.by_evaluator().items()
            },
            "position_bias": self.position_bias,
            "cost_usd": self.cost_usd,
            "latency_ms": {
                "mean": round(sum(latencies) / len(latencies), 1) if latencies else 0,
                "max": max(latencies, default=0),
            },
            "finished_at": round(self.finished_at, 3),
            "results": [
                {
                    "id": r.id,
                    "evaluator": r.evaluator,
                    "expected": r.expected,
                    "judged": r.judged,
                    "right": r.right,
                    **({"flipped": r.flipped} if r.flipped is not None else {}),
                    **({"error": r.error} if r.error else {}),
                    "latency_ms": r.latency_ms,
                    "cost_usd": r.cost_usd,
                }
                for r in self.results
            ],
        }


class Calibrator:
    """Runs cases against judges through the judge evaluators (no ruling cache). `service` is the judge service the
    calls go through: the server gives calibration one with its own judge slot, so it never takes a request's."""

    def __init__(self, service: JudgeService, panels: PanelBook | None = None) -> None:
        self.service = service
        self._evaluators: dict[str, JudgedEvaluator] = {
            "llm_structured": LlmStructured(service, panels=panels),
            "comparator": Comparator(service, panels=panels),
            "contract": Contract(service, panels=panels),
        }

    def label(self, judge: JudgeUnderTest) -> str:
        return judge.label(self.service.config.judge_model)

    async def case(self, judge: JudgeUnderTest, case: CalibrationCase, deadline: float | None = None) -> CaseResult:
        """One case against one judge. A judge call the server refuses (a full queue, a deadline) is a malfunction
        of this case, not the end of the run."""
        if judge.panel:
            settings = {**case.settings, "judge": judge.panel}
        else:
            assert judge.host is not None
            settings = {**case.settings, "judges": [{"host": _host_spelling(judge.host), "model": judge.model}]}
        started = time.monotonic()
        try:
            result, cost = await billed(
                lambda: self._evaluators[case.evaluator](settings, EvaluationInput(settings, case.output), deadline)
            )
        except (InvalidConfig, ConfigError):
            raise
        except Exception as exc:
            latency = int((time.monotonic() - started) * 1000)
            return CaseResult(case.id, case.evaluator, case.expected, None, latency, 0.0, error=str(exc)[:300])
        latency = int((time.monotonic() - started) * 1000)
        judged = None if result.verdict == "error" else result.verdict.removesuffix("_uncertain")
        error = str(result.details.get("error", ""))[:300] if judged is None else ""
        flipped = _flipped(result) if case.evaluator == "comparator" and judged is not None else None
        return CaseResult(case.id, case.evaluator, case.expected, judged, latency, round(cost, 6), flipped, error)

    async def run(
        self, judge: JudgeUnderTest, cases: Sequence[CalibrationCase], *, concurrency: int = 1
    ) -> JudgeReport:
        """Every case, at most `concurrency` at once (`verdict calibrate` uses the judge slots; the server's schedule
        runs one at a time), the results in case order."""
        gate = asyncio.Semaphore(max(concurrency, 1))

        async def one(case: CalibrationCase) -> CaseResult:
            async with gate:
                return await self.case(judge, case)

        results = await asyncio.gather(*(one(case) for case in cases))
        return JudgeReport(self.label(judge), tuple(results))


def _host_spelling(host: Host) -> str:
    """How a panel entry names `host`: its URL for an HTTP host, its name otherwise."""
    url = getattr(host, "base_url", None)
    return str(url) if url else host.name


def _flipped(result: EvaluationResult) -> bool | None:
    """Whether any pair's two orders named different winners (harness, baseline, or neither)."""
    orders = result.details.get("orders")
    if not isinstance(orders, list) or not orders:
        return None
    for pair in orders:
        winners = []
        for order in (pair.get("output_as_a", {}), pair.get("output_as_b", {})):
            harness_is_a = bool(order.get("harness_is_a"))
            harness = order.get("verdict_a" if harness_is_a else "verdict_b") == "yes"
            baseline = order.get("verdict_b" if harness_is_a else "verdict_a") == "yes"
            winners.append("harness" if harness and not baseline else "baseline" if baseline and not harness else "")
        if winners[0] != winners[1]:
            return True
    return False


def drift(
    report: JudgeReport, baseline: Mapping[str, float] | None, *, floor: float, drop: float
) -> dict[str, dict[str, Any]]:
    """Per evaluator: the kappa, its baseline, and whether the judge drifts (below `floor`, or more than `drop`
    under the baseline). An evaluator with no answered case drifts: a judge that cannot answer cannot be trusted."""
    verdicts: dict[str, dict[str, Any]] = {}
    for evaluator, stats in report.by_evaluator().items():
        before = (baseline or {}).get(evaluator)
        below = stats.answered == 0 or stats.kappa < floor
        dropped = before is not None and before - stats.kappa > drop
        verdicts[evaluator] = {
            "kappa": stats.kappa,
            "baseline": before,
            "below_floor": below,
            "dropped": dropped,
            "drifting": below or dropped,
        }
    return verdicts


def publish(metrics: Metrics, report: JudgeReport, drifts: Mapping[str, Mapping[str, Any]]) -> None:
    """The report as metrics (the gauges hold the last run; the case counters add up)."""
    judge = _metric_judge(metrics, report.judge)
    for evaluator, stats in report.by_evaluator().items():
        metrics.calibration_accuracy.labels(judge=judge, evaluator=evaluator).set(stats.accuracy)
        metrics.calibration_kappa.labels(judge=judge, evaluator=evaluator).set(stats.kappa)
        verdict = drifts.get(evaluator, {})
        if verdict.get("baseline") is not None:
            metrics.calibration_kappa_baseline.labels(judge=judge, evaluator=evaluator).set(verdict["baseline"])
        metrics.calibration_drift.labels(judge=judge, evaluator=evaluator).set(1 if verdict.get("drifting") else 0)
        # every label against every label and every verdict seen, zeros included: a cell that emptied since the
        # last run reads 0, not its old count
        judged_seen = set(stats.confusion) | {judged for row in stats.confusion.values() for judged in row}
        for expected, row in stats.confusion.items():
            for judged in judged_seen:
                metrics.calibration_confusion.labels(
                    judge=judge, evaluator=evaluator, expected=_verdict_label(expected), judged=_verdict_label(judged)
                ).set(row.get(judged, 0))
    if report.position_bias is not None:
        metrics.calibration_position_bias.labels(judge=judge).set(report.position_bias)
    if report.results:
        mean_ms = sum(result.latency_ms for result in report.results) / len(report.results)
        metrics.calibration_latency.labels(judge=judge).set(mean_ms / 1000)
    for result in report.results:
        outcome = "malfunction" if result.judged is None else "right" if result.right else "wrong"
        metrics.calibration_cases.labels(judge=judge, result=outcome).inc()
    if report.cost_usd > 0:
        metrics.calibration_cost.labels(judge=judge).inc(report.cost_usd)


_VERDICT_LABELS = frozenset({"yes", "no", "tie", "partial", "blocked", "cannot_judge", "no_baseline"})
"""Verdicts the judge evaluators give (llm_structured's grammar, comparator's tie): a label outside them (a custom
schema's verdict) is `other`, so the confusion series stay bounded."""


def _verdict_label(verdict: str) -> str:
    return verdict if verdict in _VERDICT_LABELS else "other"


def _metric_judge(metrics: Metrics, label: str) -> str:
    """host/model with the model folded; a named panel (`panel/<name>`, declared by the operator) as itself."""
    if label.startswith("panel/"):
        return label
    host, _, model = label.partition("/")
    return f"{host}/{metrics.model_labels.fold(model)}"
