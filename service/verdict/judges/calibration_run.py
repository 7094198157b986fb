"""One calibration run on demand (what `verdict calibrate` does): every case against every judge, one report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry

from verdict.config.keys import Config
from verdict.judges.calibration import Calibrator, drift, judges_to_calibrate
from verdict.judges.calibration_cases import load_cases
from verdict.judges.calibration_report import baseline_kappas, read_report, report_document
from verdict.judges.panels import load_panel_book
from verdict.judges.service import JudgeService
from verdict.metrics import Metrics
from verdict.runner import Runner

__all__ = ["CalibrationRun", "calibrate_judges"]


@dataclass(frozen=True)
class CalibrationRun:
    """The JSON report, and whether any judge drifts (the exit status of `verdict calibrate`)."""

    document: dict[str, Any]
    drifting: bool


async def calibrate_judges(
    config: Config,
    env: Mapping[str, str],
    *,
    cases_path: str = "",
    judges: Sequence[str] = (),
    baseline_path: str = "",
    floor: float | None = None,
    drop: float | None = None,
) -> CalibrationRun:
    """Run `cases_path` (else calibration_path) against `judges` (host[/model]; else calibration_judges, else the
    judge host and the named panels' members), cases in parallel up to max_concurrent_judges. Raises ValueError for
    a missing or broken case set or baseline, ConfigError for a judge that names no known host."""
    path = cases_path or config.calibration_path
    if not path:
        raise ValueError("no calibration cases: pass --cases or set calibration_path")
    cases = load_cases(path)
    earlier = read_report(baseline_path) if baseline_path else None
    if baseline_path and earlier is None:
        raise ValueError(f"{baseline_path}: no such calibration report")
    baselines = baseline_kappas(earlier) if earlier is not None else {}
    floor = config.calibration_kappa_floor if floor is None else floor
    drop = config.calibration_kappa_drop if drop is None else drop
    metrics = Metrics(CollectorRegistry())
    runner = Runner(metrics)
    try:
        service = JudgeService(config, runner, metrics, env)
        panels = load_panel_book(config.judge_panels_file, service.hosts)
        source = "--judge" if judges else "calibration_judges"
        calibrator = Calibrator(service, panels)
        reports, drifts = [], {}
        for judge in judges_to_calibrate(judges or config.calibration_judges, service, panels, source=source):
            report = await calibrator.run(judge, cases, concurrency=config.max_concurrent_judges)
            reports.append(report)
            drifts[report.judge] = drift(report, baselines.get(report.judge), floor=floor, drop=drop)
    finally:
        runner.shutdown()
    drifting = any(verdict["drifting"] for per_judge in drifts.values() for verdict in per_judge.values())
    return CalibrationRun(report_document(reports, drifts, floor=floor, drop=drop), drifting)
