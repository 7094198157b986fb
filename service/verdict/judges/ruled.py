"""What every judge evaluator shares: its judge service, its ruling cache, its panels, and asking through them.

`llm_structured`, `comparator` and `contract` differ in what they ask and how they read the answers, not in how a
ruling is looked up or how a panel votes: written once here so the three cannot drift apart.

One ask is a *seat*: a member's host and model, and which of its samples. Each seat's ruling is looked up under its
own key (the material names the evaluator, the seat's host and model, and its sample index past the first, so a
retried call replays every seat's ruling and the panel's verdict with it); `fresh` skips the lookup, and with no
cache or no host to name the question is judged uncached. A panel of one judge asked once is exactly that judge's
ruling. A larger panel asks every seat at once (each bounded by the call's deadline through the judge service),
lists every seat in `details.panel.members` (vote, confidence, evidence, latency, cost, or the malfunction it
abstained for), and lets `votes.decide` give the verdict.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from verdict.errors import VerdictError
from verdict.evaluators.model import EvaluationResult
from verdict.judges.agreement import Agreement
from verdict.judges.hosts import Host
from verdict.judges.panels import Panel, PanelBook, panel_for
from verdict.judges.rulings import RulingCache, billed, host_identity
from verdict.judges.service import JudgeService
from verdict.judges.votes import Decision, decide, spread

__all__ = ["MALFUNCTIONS", "RuledJudge", "Seat"]

SAMPLE_TEMPERATURE = 0.7
"""Temperature of every sample after the first where the host takes one (HTTP hosts): n asks at temperature 0 would
be n copies of one ruling, not n samples."""

MALFUNCTIONS = (
    "timeout",
    "missing_dependency",
    "api_error",
    "empty_output",
    "parse_error",
    "invalid_verdict",
    "invalid_confidence",
    "rejected",
)
"""Why a seat abstained, in the order a failure's details are searched; `error` for anything else."""


@dataclass(frozen=True)
class Seat:
    """One ask: the host (None: the server's judge host), the model, the sample index and its temperature."""

    host: Host | None
    model: str
    sample: int = 0
    temperature: float | None = None


SeatJudge = Callable[[Seat], Awaitable[EvaluationResult]]
SeatMaterial = Callable[[Seat], dict[str, Any]]


@dataclass
class _Ask:
    seat: Seat
    label: str
    host_name: str
    result: EvaluationResult | None = None
    raised: VerdictError | None = None
    latency_ms: int = 0
    cost_usd: float = 0.0


class RuledJudge:
    """Base of the judge evaluators: `service` asks the judges, `rulings` (optional) remembers their rulings, `panels`
    are the server's named panels and `agreement` (optional) watches how often panel members agree."""

    evaluator: ClassVar[str]
    """The evaluator type, as the ruling cache and its metrics name it."""
    cautious: ClassVar[str] = "no"
    """The verdict a panel with no winner gives under `tie: cautious`: the one that accepts nothing."""

    def __init__(
        self,
        service: JudgeService,
        rulings: RulingCache | None = None,
        panels: PanelBook | None = None,
        agreement: Agreement | None = None,
    ) -> None:
        self.service = service
        self.rulings = rulings
        self.panels: PanelBook = panels or {}
        self.agreement = agreement

    def vote(self, result: EvaluationResult) -> str | None:
        """The vote a seat's ruling casts; None (an abstention) for a malfunction."""
        return None if result.verdict == "error" else result.verdict

    def panel_verdict(self, verdict: str, winners: list[EvaluationResult], config: Mapping[str, Any]) -> str:
        """The verdict a panel gives for its winning vote (llm_structured marks an unconfident panel)."""
        return verdict

    async def _ruled(
        self,
        config: Mapping[str, Any],
        deadline: float | None,
        judge: SeatJudge,
        material: SeatMaterial | None,
        *,
        model: str,
    ) -> EvaluationResult:
        """The ruling for the question `material(seat)` describes (besides evaluator and host), from one judge or a
        panel (see the module). `material` None is a question that cannot be named: judged uncached."""
        panel = panel_for(config, self.panels, self.service.hosts)
        if panel.single:
            member = panel.members[0]
            seat = Seat(member.host, member.model or model)
            result, cost = await billed(lambda: self._seat(config, deadline, judge, material, seat))
            self._count("single", cost)
            return result
        return await self._panel(config, deadline, judge, material, panel, model)

    async def _seat(
        self,
        config: Mapping[str, Any],
        deadline: float | None,
        judge: SeatJudge,
        material: SeatMaterial | None,
        seat: Seat,
    ) -> EvaluationResult:
        host = seat.host or self.service.host
        if self.rulings is None or host is None or material is None:
            return await judge(seat)
        named: dict[str, Any] = {"evaluator": self.evaluator, "host": host_identity(host), **material(seat)}
        if seat.sample:
            named["sample"] = seat.sample
        fresh = bool(config.get("fresh", False))
        return await self.rulings.rule(self.evaluator, named, fresh=fresh, deadline=deadline, judge=lambda: judge(seat))

    async def _panel(
        self,
        config: Mapping[str, Any],
        deadline: float | None,
        judge: SeatJudge,
        material: SeatMaterial | None,
        panel: Panel,
        model: str,
    ) -> EvaluationResult:
        default_host = self.service.host.name if self.service.host is not None else "judge_host"
        asks = [
            _Ask(
                Seat(
                    member.host,
                    member.model or model,
                    sample,
                    SAMPLE_TEMPERATURE if sample else None,
                ),
                member.label(default_host, model),
                member.host.name if member.host is not None else default_host,
            )
            for member in panel.members
            for sample in range(panel.samples)
        ]

        async def run(ask: _Ask) -> None:
            started = time.monotonic()
            try:
                ask.result, ask.cost_usd = await billed(lambda: self._seat(config, deadline, judge, material, ask.seat))
            except VerdictError as exc:
                ask.raised = exc
            ask.latency_ms = int((time.monotonic() - started) * 1000)

        async with asyncio.TaskGroup() as group:
            for ask in asks:
                group.create_task(run(ask))

        votes = [self.vote(ask.result) if ask.result is not None else None for ask in asks]
        decision = decide(votes, panel.quorum, panel.tie, self.cautious)
        total_cost = round(sum(ask.cost_usd for ask in asks), 6)
        self._count(decision.how, total_cost)
        self._watch(panel, asks, votes, decision)
        if decision.verdict is None and decision.how == "below_quorum":
            raised = next((ask.raised for ask in asks if ask.raised is not None), None)
            if raised is not None and not any(ask.result is not None for ask in asks):
                raise raised  # nobody was even asked (deadline, queue, no host): the request's problem, as itself
        return self._panel_result(config, panel, asks, votes, decision, total_cost)

    def _panel_result(
        self,
        config: Mapping[str, Any],
        panel: Panel,
        asks: list[_Ask],
        votes: list[str | None],
        decision: Decision,
        total_cost: float,
    ) -> EvaluationResult:
        abstained = [ask.label for ask, vote in zip(asks, votes, strict=True) if vote is None]
        summary: dict[str, Any] = {
            "quorum": panel.quorum,
            "tie": panel.tie,
            "asked": len(asks),
            "answered": decision.answered,
            "needed": decision.needed,
            "votes": decision.counts,
            "decided_by": decision.how,
            "abstained": abstained,
            "members": [_member_entry(ask, vote, panel.samples > 1) for ask, vote in zip(asks, votes, strict=True)],
            "cost_usd": total_cost,
            "latency_ms": max((ask.latency_ms for ask in asks), default=0),
        }
        if panel.name:
            summary["name"] = panel.name
        if panel.samples > 1:
            summary["samples"] = panel.samples
            summary["spread"] = spread(decision.counts)
        if decision.verdict is None:
            error = (
                f"only {decision.answered} of {len(asks)} judges answered; the quorum ({panel.quorum}) needs "
                f"{decision.needed}"
                if decision.how == "below_quorum"
                else f"no verdict won the panel's quorum ({panel.quorum}) and the tie policy is error"
            )
            flags = {"below_quorum": True} if decision.how == "below_quorum" else {"no_winner": True}
            return EvaluationResult("error", {"error": error, **flags, "judge_host": "panel", "panel": summary})
        winners = [
            ask.result
            for ask, vote in zip(asks, votes, strict=True)
            if ask.result is not None and vote == decision.verdict
        ]
        verdict = self.panel_verdict(decision.verdict, winners, config)
        shown = {key: value for key, value in winners[0].details.items() if key not in ("cached", "cached_age_seconds")}
        cached = all(bool(ask.result.details.get("cached")) for ask in asks if ask.result is not None)
        details: dict[str, Any] = {**shown, "judge_host": "panel", "panel": summary}
        if self.rulings is not None and self.rulings.store is not None:
            details["cached"] = cached
        confidences = [w.details["confidence"] for w in winners if isinstance(w.details.get("confidence"), float)]
        if confidences:
            details["confidence"] = round(sum(confidences) / len(confidences), 4)
        return EvaluationResult(verdict, details)

    def _count(self, how: str, cost: float) -> None:
        metrics = self.service.metrics
        metrics.judge_verdicts.labels(evaluator=self.evaluator, how=how).inc()
        if cost > 0:
            metrics.judge_verdict_cost.labels(evaluator=self.evaluator).inc(cost)

    def _watch(self, panel: Panel, asks: list[_Ask], votes: list[str | None], decision: Decision) -> None:
        """Abstentions by reason, and each member's vote (its samples' most common) for the agreement gauges."""
        metrics = self.service.metrics
        by_member: dict[str, list[str]] = {}
        for ask, vote in zip(asks, votes, strict=True):
            label = self._metric_label(ask)
            if vote is None:
                metrics.judge_abstentions.labels(judge=label, reason=_malfunction(ask)).inc()
            else:
                by_member.setdefault(label, []).append(vote)
        if self.agreement is None:
            return
        members = {self._metric_label(ask) for ask in asks}
        member_votes = [
            (label, Counter(by_member[label]).most_common(1)[0][0] if label in by_member else None)
            for label in sorted(members)
        ]
        self.agreement.record(panel.name or "inline", member_votes, decision.verdict)

    def _metric_label(self, ask: _Ask) -> str:
        return f"{ask.host_name}/{self.service.metrics.model_labels.fold(ask.seat.model)}"


def _malfunction(ask: _Ask) -> str:
    if ask.raised is not None:
        return "rejected"
    details = ask.result.details if ask.result is not None else {}
    return next((reason for reason in MALFUNCTIONS if details.get(reason)), "error")


def _member_entry(ask: _Ask, vote: str | None, sampled: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"judge": ask.label, "host": ask.host_name, "model": ask.seat.model}
    if sampled:
        entry["sample"] = ask.seat.sample
    entry["latency_ms"] = ask.latency_ms
    entry["cost_usd"] = round(ask.cost_usd, 6)
    if vote is None:
        entry["abstained"] = True
        entry["malfunction"] = _malfunction(ask)
        if ask.raised is not None:
            entry["error"] = str(ask.raised)
        elif ask.result is not None:
            entry["error"] = str(ask.result.details.get("error", ""))[:500]
        return entry
    assert ask.result is not None
    details = ask.result.details
    entry["vote"] = vote
    for key in ("confidence", "evidence", "reason", "cached"):
        if key in details:
            entry[key] = details[key]
    return entry
