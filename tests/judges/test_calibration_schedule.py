"""The server's scheduled calibration: paced, budgeted, baselined, and never on a request's path."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from tests.judges.standins import Profile, StandIns, StandInService, case_output
from tests.judges.test_calibration import labelled
from verdict.config.keys import Config
from verdict.evaluators.catalogue import validate
from verdict.evaluators.model import EvaluationInput
from verdict.judges import HOSTS, LlmStructured, build_judges
from verdict.judges.calibration import Calibrator, JudgeUnderTest
from verdict.judges.calibration_schedule import DAY_SECONDS, CalibrationSchedule
from verdict.metrics import Metrics
from verdict.runner import Runner, SlotLimit

CLAUDE = HOSTS.by_name["claude-code"]


class Clock:
    """Unix time that moves only when the schedule sleeps."""

    def __init__(self, now: float = 10 * DAY_SECONDS) -> None:
        self.now = now
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


def schedule(standins: StandIns, clock: Clock, metrics: Metrics, **overrides: Any) -> CalibrationSchedule:
    settings: dict[str, Any] = {
        "cases_per_hour": 60,
        "budget_usd_per_day": 100.0,
        "floor": 0.6,
        "drop": 0.1,
        **overrides,
    }
    return CalibrationSchedule(
        Calibrator(StandInService(standins, metrics)),
        [JudgeUnderTest(CLAUDE, "a")],
        labelled(10),
        metrics,
        clock=clock,
        sleep=clock.sleep,
        **settings,
    )


async def test_cases_are_spread_evenly_at_the_configured_pace() -> None:
    clock, metrics = Clock(), Metrics(CollectorRegistry(), model_labels=("a",))
    report = await schedule(StandIns(), clock, metrics, cases_per_hour=12).run_once(JudgeUnderTest(CLAUDE, "a"))
    assert clock.sleeps == [300.0] * 10
    assert report.overall.accuracy == 1.0
    labels = {"judge": "claude-code/a", "evaluator": "llm_structured"}
    assert metrics.registry.get_sample_value("verdict_judge_calibration_kappa", labels) == 1.0
    assert metrics.registry.get_sample_value("verdict_judge_calibration_drift", labels) == 0
    assert metrics.registry.get_sample_value("verdict_judge_calibration_runs_total", {"result": "done"}) == 1


async def test_the_daily_dollar_budget_stops_calibration_until_the_next_day() -> None:
    clock, metrics = Clock(), Metrics(CollectorRegistry())
    standins = StandIns({"a": Profile(cost=0.25)})
    await schedule(standins, clock, metrics, budget_usd_per_day=1.0).run_once(JudgeUnderTest(CLAUDE, "a"))
    assert len(standins.calls) == 10
    # four cases spend the day's dollar; the fifth waits for the next UTC day, and so on
    day_waits = [seconds for seconds in clock.sleeps if seconds > 3600]
    assert len(day_waits) == 2
    assert metrics.registry.get_sample_value("verdict_judge_calibration_runs_total", {"result": "budget"}) == 2


async def test_the_first_run_is_the_baseline_and_a_later_fall_fires_the_drift_gauge(tmp_path: Path) -> None:
    clock, metrics = Clock(), Metrics(CollectorRegistry(), model_labels=("a",))
    standins = StandIns({"a": Profile()})
    report_path = tmp_path / "calibration.json"
    calibration = schedule(standins, clock, metrics, report_path=str(report_path))
    await calibration.run_once(JudgeUnderTest(CLAUDE, "a"))
    standins.profiles["a"] = Profile(rate=0.2, seed=2)  # the judge's model was "updated"
    await calibration.run_once(JudgeUnderTest(CLAUDE, "a"))
    labels = {"judge": "claude-code/a", "evaluator": "llm_structured"}
    assert metrics.registry.get_sample_value("verdict_judge_calibration_kappa_baseline", labels) == 1.0
    assert metrics.registry.get_sample_value("verdict_judge_calibration_drift", labels) == 1
    document = json.loads(report_path.read_text())
    assert document["judges"][0]["drift"]["llm_structured"]["dropped"] is True
    # a restarted server measures from the report it finds
    restarted = schedule(standins, clock, Metrics(CollectorRegistry()), report_path=str(report_path))
    assert restarted.baselines["claude-code/a"]["llm_structured"] < 1.0


async def test_calibration_never_takes_a_request_s_judge_slot() -> None:
    """One judge slot and no queue for requests: while a calibration call is in a judge, a request is still served
    at once (if calibration held the request pool, the request would be refused RESOURCE_EXHAUSTED)."""
    metrics = Metrics(CollectorRegistry())
    standins = StandIns({"slow": Profile(delay=30)})
    requests = StandInService(standins, metrics, max_concurrent_judges=1, judge_queue_size=0)
    calibration_service = StandInService(standins, metrics)
    calibration_service.slots = SlotLimit("calibration", 1, 0)
    calibrator = Calibrator(calibration_service)
    running = asyncio.create_task(calibrator.case(JudgeUnderTest(CLAUDE, "slow"), labelled(1)[0]))
    for _ in range(1000):
        if standins.calls:
            break
        await asyncio.sleep(0.01)
    assert calibration_service.slots.slots == 1
    result = await LlmStructured(requests)(
        validate({"type": "llm_structured", "model": "fast"}), EvaluationInput({}, output=case_output(1, "yes")), None
    )
    assert result.verdict == "yes"
    assert not running.done()  # the request finished while calibration was still in its judge
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await running


def test_the_server_builds_calibration_with_its_own_slot_pool(tmp_path: Path) -> None:
    cases = Path(__file__).resolve().parents[2] / "deploy" / "calibration"
    metrics = Metrics(CollectorRegistry())
    config = Config(judge_host="claude-code", calibration_path=str(cases), calibration_cases_per_hour=30)
    judges = build_judges(config, Runner(metrics), metrics, {"PATH": ""})
    assert judges.calibration is not None
    assert judges.calibration.calibrator.service.slots is not judges.service.slots
    assert judges.calibration.calibrator.service.slots.name == "calibration"
    assert judges.calibration.interval == 120.0
    off = build_judges(Config(judge_host="claude-code", calibration_path=str(cases)), Runner(metrics), metrics, {})
    assert off.calibration is None
