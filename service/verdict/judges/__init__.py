"""LLM judges: the evaluators that ask a model (llm_structured, comparator, contract) and VerifyResponse's optional
second opinion, reached through a host CLI run by the runner or an OpenAI-compatible HTTP endpoint.

```
build_judges(config, runner, metrics, env) -> Judges
    .evaluators      {"llm_structured": LlmStructured, "comparator": Comparator, "contract": Contract}
    .second_opinion  SecondOpinion, or None unless `second_opinion` is on
    .service         the JudgeService they share (one slot pool, one set of metrics)
    .rulings         the RulingCache they share (judge_cache: memory, redis or off)
    await .aclose()
```

Nothing here imports grpc. Layout: `hosts` (argv, env, stdin per CLI; host selection), `envelopes` (one reader per
host → JudgeReply), `payload` (the answer object: structured output, JSON, tags), `chat` (the HTTP backend),
`service` (one call: deadline, slot, private HOME, failure order, metrics), `rulings` (the ruling cache), then one
module per evaluator and `second_opinion`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from verdict.config import Config
from verdict.evaluators.model import JudgedEvaluator
from verdict.judges.comparator import Comparator
from verdict.judges.contract import Contract
from verdict.judges.envelopes import JudgeReply
from verdict.judges.hosts import CliHost, Host, HttpHost, host_named, select_host
from verdict.judges.llm_structured import LlmStructured
from verdict.judges.rulings import RulingCache, build_ruling_cache
from verdict.judges.second_opinion import SecondOpinion
from verdict.judges.service import JudgeAnswer, JudgeOutcome, JudgeRequest, JudgeService
from verdict.metrics import Metrics
from verdict.runner import Runner

__all__ = [
    "CliHost",
    "Comparator",
    "Contract",
    "Host",
    "HttpHost",
    "JudgeAnswer",
    "JudgeOutcome",
    "JudgeReply",
    "JudgeRequest",
    "JudgeService",
    "Judges",
    "LlmStructured",
    "RulingCache",
    "SecondOpinion",
    "build_judges",
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

    async def aclose(self) -> None:
        """Close the ruling cache's connections; judge processes belong to the runner, which kills them at shutdown."""
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
    evaluators: dict[str, JudgedEvaluator] = {
        "llm_structured": LlmStructured(service, rulings),
        "comparator": Comparator(service, rulings),
        "contract": Contract(service, rulings),
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
    return Judges(service, evaluators, second_opinion, rulings)
