"""LLM judges: the evaluators that ask a model (llm_structured, comparator, contract) and VerifyResponse's optional
second opinion, reached through a host CLI run by the runner or an OpenAI-compatible HTTP endpoint.

```
build_judges(config, runner, metrics, env) -> Judges
    .evaluators      {"llm_structured": LlmStructured, "comparator": Comparator, "contract": Contract}
    .second_opinion  SecondOpinion, or None unless `second_opinion` is on
    .service         the JudgeService they share (the runner's judge pool, one set of metrics)
    .rulings         the RulingCache they share (judge_cache: memory, redis or off); `await .aclose()` at shutdown
    .panels          the named judge panels (judge_panels_file), by name
```

Nothing here imports grpc. Layout, one job per module: `hosts` (what a host record is; the registry and host
selection), `clis` (one record per judge CLI: credentials, argv builder, reader, probe rank), `readers` (one envelope
reader per CLI), `envelopes` (JudgeReply and the JSON reading the readers share), `payload` (the answer object:
structured output, JSON, tags), `chat` (the HTTP backend) and `credentials` (its API key), `model` (request,
outcome, answer), `interpret` (a finished call → an answer, pure), `clipping` (bounding what a judge wrote),
`service` (one call: deadline, slot, private HOME, metrics), `rulings` and `ruling_stores` (the ruling cache: a
repeated question gets the stored ruling), `panels` (who is asked: members, quorum, tie policy, samples), `votes`
(how votes become a verdict, pure), `agreement` (pairwise agreement gauges), `ruled` (what the judge evaluators
share: asking every seat of a panel through the cache), then one module per evaluator and `second_opinion`;
`calibration` (known-answer cases, the statistics in `kappa`) and `calibration_schedule` measure the judges;
`graders` is the model grader of the openai_grader and promptfoo evaluators (score_model, label_model, llm-rubric).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from verdict.config.keys import Config
from verdict.errors import ConfigError
from verdict.evaluators.model import JudgedEvaluator
from verdict.judges.agreement import Agreement
from verdict.judges.calibration import Calibrator, judges_to_calibrate
from verdict.judges.calibration_cases import load_cases
from verdict.judges.calibration_run import calibrate_judges
from verdict.judges.calibration_schedule import CalibrationSchedule
from verdict.judges.clis import HOSTS, host_named, select_host
from verdict.judges.comparator import Comparator
from verdict.judges.contract import Contract
from verdict.judges.envelopes import JudgeReply
from verdict.judges.graders import ModelGraders
from verdict.judges.hosts import CliHost, Host, HostRegistry, HttpHost
from verdict.judges.llm_structured import LlmStructured
from verdict.judges.model import JudgeAnswer, JudgeOutcome, JudgeRequest
from verdict.judges.panels import Panel, load_panel_book
from verdict.judges.rulings import RulingCache, build_ruling_cache
from verdict.judges.second_opinion import SecondOpinion
from verdict.judges.service import JudgeService
from verdict.metrics import Metrics
from verdict.runner import Runner, SlotLimit

__all__ = [
    "HOSTS",
    "CliHost",
    "Comparator",
    "Contract",
    "Host",
    "HostRegistry",
    "HttpHost",
    "JudgeAnswer",
    "JudgeOutcome",
    "JudgeReply",
    "JudgeRequest",
    "JudgeService",
    "Judges",
    "LlmStructured",
    "ModelGraders",
    "RulingCache",
    "SecondOpinion",
    "build_judges",
    "calibrate_judges",
    "host_named",
    "select_host",
]


@dataclass(frozen=True)
class Judges:
    """What the server wires in: the judged evaluators for Evaluations, the second opinion for the Verifier."""

    service: JudgeService
    evaluators: Mapping[str, JudgedEvaluator]
    second_opinion: SecondOpinion | None
    rulings: RulingCache | None = None
    panels: Mapping[str, Panel] = field(default_factory=dict)
    calibration: CalibrationSchedule | None = None
    """The scheduled calibration (calibration_cases_per_hour > 0 and calibration_path set), not yet started."""

    def start_calibration(self) -> None:
        """Start the scheduled calibration, if configured: once the server serves, never on a request's path."""
        if self.calibration is not None:
            self.calibration.start()

    async def aclose(self) -> None:
        """Stop calibration, close the ruling cache's connections (judge processes belong to the runner, which kills
        them)."""
        if self.calibration is not None:
            await self.calibration.stop()
        if self.rulings is not None:
            await self.rulings.aclose()


def build_judges(
    config: Config,
    runner: Runner,
    metrics: Metrics,
    env: Mapping[str, str],
    *,
    scratch_root: str | Path | None = None,
) -> Judges:
    """Build the judges once per server. Raises ConfigError for a judge host setting (`judge_host`,
    `second_opinion_host`, LL_HOST_CLI, LL_HOOK_HOST) that names no known host."""
    service = JudgeService(config, runner, metrics, env, scratch_root=scratch_root)
    rulings = build_ruling_cache(config, metrics)
    panels = load_panel_book(config.judge_panels_file, service.hosts)
    # the operator named these models, so they are bounded: the agreement and calibration gauges can show them
    metrics.model_labels.allow(member.model for panel in panels.values() for member in panel.members if member.model)
    metrics.model_labels.allow(
        name.partition("/")[2] for name in config.calibration_judges if "/" in name and "://" not in name
    )
    agreement = Agreement(metrics, config.judge_agreement_window)
    evaluators: dict[str, JudgedEvaluator] = {
        "llm_structured": LlmStructured(service, rulings, panels, agreement),
        "comparator": Comparator(service, rulings, panels, agreement),
        "contract": Contract(service, rulings, panels, agreement),
    }
    second_opinion = None
    if config.second_opinion:
        host = (
            host_named(config.second_opinion_host, source="second_opinion_host") if config.second_opinion_host else None
        )
        second_opinion = SecondOpinion(
            service,
            metrics,
            host=host,
            model=config.second_opinion_model,
            min_tokens=config.second_opinion_min_tokens,
            timeout=config.second_opinion_timeout_seconds,
        )
    calibration = _calibration(config, runner, metrics, env, panels, scratch_root) if config.calibration_path else None
    return Judges(service, evaluators, second_opinion, rulings, panels, calibration)


def _calibration(
    config: Config,
    runner: Runner,
    metrics: Metrics,
    env: Mapping[str, str],
    panels: Mapping[str, Panel],
    scratch_root: str | Path | None,
) -> CalibrationSchedule | None:
    """The schedule the calibration keys ask for; the cases are loaded now, so a broken set stops the server at
    startup (ConfigError) instead of failing in the background an hour later."""
    try:
        cases = load_cases(config.calibration_path)
    except ValueError as exc:
        raise ConfigError("calibration_path", str(exc)) from None
    if config.calibration_cases_per_hour == 0:
        return None
    service = JudgeService(
        config, runner, metrics, env, scratch_root=scratch_root, slots=SlotLimit("calibration", 1, 0)
    )
    return CalibrationSchedule(
        Calibrator(service, panels),
        judges_to_calibrate(config.calibration_judges, service, panels),
        cases,
        metrics,
        cases_per_hour=config.calibration_cases_per_hour,
        budget_usd_per_day=config.calibration_budget_usd_per_day,
        floor=config.calibration_kappa_floor,
        drop=config.calibration_kappa_drop,
        report_path=config.calibration_report_path,
    )
