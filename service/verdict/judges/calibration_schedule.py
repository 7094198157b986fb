"""The server's scheduled calibration: the labelled cases, run against every configured judge, in the background.

Never on the request path: it is one asyncio task of its own, started after the server is serving, asking through
a judge service with a judge slot of its own (so a calibration call never holds a slot a request is waiting for),
one case at a time, spread evenly at `calibration_cases_per_hour`, and stopped for the rest of the UTC day once
`calibration_budget_usd_per_day` is spent (as the judges report cost). A full pass of one judge over the set is a
*run*: its statistics become the calibration gauges, its drift (kappa under the floor or fallen from the baseline)
the drift gauge the alert reads, and the JSON report at `calibration_report_path` is rewritten. The baseline is the
judge's entry in the report that was there at startup, or else this process's first run of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from verdict.judges.calibration import Calibrator, CaseResult, JudgeReport, JudgeUnderTest, drift, publish
from verdict.judges.calibration_cases import CalibrationCase
from verdict.judges.calibration_report import baseline_kappas, read_report, report_document, write_report
from verdict.metrics import Metrics

__all__ = ["CalibrationSchedule"]

log = logging.getLogger(__name__)

DAY_SECONDS = 86_400


class CalibrationSchedule:
    """`start()` once the server serves; `await stop()` at shutdown. `clock` (Unix time) and `sleep` are injected so
    tests drive the pace and the budget without waiting for them."""

    def __init__(
        self,
        calibrator: Calibrator,
        judges: Sequence[JudgeUnderTest],
        cases: Sequence[CalibrationCase],
        metrics: Metrics,
        *,
        cases_per_hour: int,
        budget_usd_per_day: float,
        floor: float,
        drop: float,
        report_path: str = "",
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        if cases_per_hour < 1:
            raise ValueError("cases_per_hour must be at least 1")
        self.calibrator = calibrator
        self.judges = list(judges)
        self.cases = list(cases)
        self.metrics = metrics
        self.interval = 3600.0 / cases_per_hour
        self.budget = budget_usd_per_day
        self.floor, self.drop = floor, drop
        self.report_path = report_path
        self._clock, self._sleep = clock, sleep
        self._spent: dict[int, float] = {}
        self.reports: dict[str, JudgeReport] = {}
        self.drifts: dict[str, dict[str, dict[str, Any]]] = {}
        self.baselines: dict[str, dict[str, float]] = {}
        if report_path:
            try:
                earlier = read_report(report_path)
            except ValueError as exc:
                log.warning("calibration: ignoring the earlier report: %s", exc)
                earlier = None
            if earlier is not None:
                self.baselines = baseline_kappas(earlier)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._forever(), name="verdict-calibration")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _forever(self) -> None:
        while True:
            for judge in self.judges:
                try:
                    await self.run_once(judge)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("calibration run of %s failed", self.calibrator.label(judge))
                    self.metrics.calibration_runs.labels(result="failed").inc()

    async def run_once(self, judge: JudgeUnderTest) -> JudgeReport:
        """One paced, budgeted pass of `judge` over every case; its report published and written."""
        results: list[CaseResult] = []
        for case in self.cases:
            await self._sleep(self.interval)
            while self._spent.get(self._day(), 0.0) >= self.budget:
                self.metrics.calibration_runs.labels(result="budget").inc()
                log.info("calibration: the day's budget of $%.2f is spent; waiting for the next day", self.budget)
                await self._sleep(DAY_SECONDS - self._clock() % DAY_SECONDS + 1)
            result = await self.calibrator.case(judge, case)
            day = self._day()
            self._spent[day] = self._spent.get(day, 0.0) + result.cost_usd
            for old in [d for d in self._spent if d < day]:
                del self._spent[old]
            results.append(result)
        report = JudgeReport(self.calibrator.label(judge), tuple(results), self._clock())
        self._finish(report)
        return report

    def _finish(self, report: JudgeReport) -> None:
        baseline = self.baselines.get(report.judge)
        verdicts = drift(report, baseline, floor=self.floor, drop=self.drop)
        if baseline is None:
            self.baselines[report.judge] = {name: stats.kappa for name, stats in report.by_evaluator().items()}
        publish(self.metrics, report, verdicts)
        self.reports[report.judge] = report
        self.drifts[report.judge] = verdicts
        self.metrics.calibration_runs.labels(result="done").inc()
        self.metrics.calibration_last_run.set(self._clock())
        for evaluator, verdict in verdicts.items():
            if verdict["drifting"]:
                log.warning(
                    "calibration: judge %s drifts on %s: kappa %.3f (floor %.2f, baseline %s)",
                    report.judge,
                    evaluator,
                    verdict["kappa"],
                    self.floor,
                    verdict["baseline"],
                )
        if self.report_path:
            document = report_document(list(self.reports.values()), self.drifts, floor=self.floor, drop=self.drop)
            try:
                write_report(self.report_path, document)
            except OSError as exc:
                log.warning("calibration: cannot write the report to %s: %s", self.report_path, exc)

    def _day(self) -> int:
        return int(self._clock() // DAY_SECONDS)
