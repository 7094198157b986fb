"""What every judge evaluator shares: its judge service, its ruling cache, and asking through the cache.

`llm_structured`, `comparator` and `contract` differ in what they ask and how they read the answers, not in how a
ruling is looked up: the material names the evaluator and the judge host, `fresh` skips the lookup, and with no
cache or no host to name the question is judged uncached. Written once here so the three cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from verdict.evaluators.model import EvaluationResult
from verdict.judges.rulings import Judge, RulingCache, host_identity
from verdict.judges.service import JudgeService

__all__ = ["RuledJudge"]


class RuledJudge:
    """Base of the judge evaluators: `service` asks the judges, `rulings` (optional) remembers their rulings."""

    evaluator: ClassVar[str]
    """The evaluator type, as the ruling cache and its metrics name it."""

    def __init__(self, service: JudgeService, rulings: RulingCache | None = None) -> None:
        self.service = service
        self.rulings = rulings

    async def _ruled(
        self,
        config: Mapping[str, Any],
        deadline: float | None,
        judge: Judge,
        material: Callable[[], dict[str, Any]] | None,
    ) -> EvaluationResult:
        """The ruling for the question `material()` describes (besides evaluator and host), cached when a cache and
        a judge host are configured; judged uncached otherwise, or when `material` is None (a question that cannot
        be named: its verdict is `error`, which is never cached). `material` is only built when it is used."""
        host = self.service.host
        if self.rulings is None or host is None or material is None:
            return await judge()
        named = {"evaluator": self.evaluator, "host": host_identity(host), **material()}
        fresh = bool(config.get("fresh", False))
        return await self.rulings.rule(self.evaluator, named, fresh=fresh, deadline=deadline, judge=judge)
