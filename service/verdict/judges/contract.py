"""contract: does each producer still satisfy its consumer? One judge call per pair.

Each side is the pair's inline content or a file inside the workspace; an optional pattern (DOTALL, time-bounded
like every pattern from a request) narrows it to its matches joined by newlines, otherwise the last 4000 characters
are shown. Every pair gets its own result; the verdict is `error` if any pair errored, `yes` if all are aligned,
`no` otherwise. A missing judge CLI stops at once (every pair would fail the same way).

Beyond the reference, an answer outside yes/no is a pair error rather than a silent `no`: a judge that cannot follow
the grammar has not found a mismatch.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import regex

from verdict import patterns
from verdict.evaluators.model import EvaluationInput, EvaluationResult
from verdict.judges.clipping import clip
from verdict.judges.files import read_text, workspace_file
from verdict.judges.model import JudgeOutcome, JudgeRequest
from verdict.judges.ruled import RuledJudge, Seat

__all__ = ["CONTRACT_SCHEMA", "Contract", "aggregate", "build_contract_prompt"]

OUTPUT_TAIL_CHARS = 4000

CONTRACT_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["yes", "no"]},
        "confidence": {"type": "number"},
        "reason": {"type": "string"},
    },
    "required": ["verdict", "confidence", "reason"],
}


def build_contract_prompt(rule: str, producer: str, producer_text: str, consumer: str, consumer_text: str) -> str:
    return (
        "You are checking whether a producer's output satisfies a consumer's contract.\n\n"
        f"Contract rule: {rule}\n\n"
        f'<producer path="{producer}">\n{producer_text}\n</producer>\n\n'
        f'<consumer path="{consumer}">\n{consumer_text}\n</consumer>\n\n'
        "Does the producer satisfy the consumer's contract? Consider field names, types, casing and structure. "
        "Answer yes if they are aligned, no if they are mismatched."
    )


def aggregate(pair_results: Sequence[Mapping[str, Any]]) -> str:
    """Any error → error; every pair yes → yes; otherwise no."""
    if any(result["verdict"] == "error" for result in pair_results):
        return "error"
    return "yes" if all(result["verdict"] == "yes" for result in pair_results) else "no"


class _PairError(Exception):
    pass


class Contract(RuledJudge):
    """The `contract` evaluator: `await evaluator(config, request, deadline)`.

    Every side is read (and narrowed by its pattern) before any judge is asked, so the ruling's key can name every
    prompt; a pair whose side cannot be read makes the verdict `error`, which is never cached."""

    evaluator = "contract"

    async def __call__(
        self, config: Mapping[str, Any], request: EvaluationInput, deadline: float | None
    ) -> EvaluationResult:
        questions: list[tuple[dict[str, Any], str | None]] = []
        # validation refused an empty list and filled every pair's defaults
        for index, pair in enumerate(config["pairs"]):
            producer, consumer = str(pair.get("producer", "")), str(pair.get("consumer", ""))
            result: dict[str, Any] = {"producer": producer, "consumer": consumer}
            try:
                producer_text = await self._side(pair, "producer", request, index)
                consumer_text = await self._side(pair, "consumer", request, index)
            except _PairError as exc:
                questions.append(({**result, "verdict": "error", "error": str(exc)}, None))
                continue
            prompt = build_contract_prompt(str(pair["contract"]), producer, producer_text, consumer, consumer_text)
            questions.append((result, prompt))

        async def judge(seat: Seat) -> EvaluationResult:
            return await self._judge(questions, deadline, seat)

        def material(seat: Seat) -> dict[str, Any]:
            return {
                "model": seat.model,
                "prompts": [prompt for _, prompt in questions],
                "schema": CONTRACT_SCHEMA,
            }

        named = None if any(prompt is None for _, prompt in questions) else material
        return await self._ruled(config, deadline, judge, named, model=self.service.config.judge_model)

    async def _judge(
        self, questions: list[tuple[dict[str, Any], str | None]], deadline: float | None, seat: Seat
    ) -> EvaluationResult:
        """One judge call per readable pair, in order; a missing judge CLI stops at once."""
        results: list[dict[str, Any]] = []
        host = ""
        for result, prompt in questions:
            if prompt is None:
                results.append(result)
                continue
            answer = await self.service.ask(
                JudgeRequest(
                    prompt=prompt,
                    model=seat.model,
                    schema=CONTRACT_SCHEMA,
                    deadline=deadline,
                    host=seat.host,
                    temperature=seat.temperature,
                )
            )
            host = answer.host
            result = {**result, "llm_latency_ms": answer.latency_ms}
            if answer.outcome is JudgeOutcome.MISSING:
                return EvaluationResult("error", answer.failure_details())
            if not answer.ok or answer.payload is None:
                results.append({**result, **answer.failure_details(), "verdict": "error"})
                continue
            results.append({**result, **_pair_verdict(answer.payload)})
        details: dict[str, Any] = {"pair_results": results}
        if host:
            details["judge_host"] = host
        return EvaluationResult(aggregate(results), details)

    async def _side(self, pair: Mapping[str, Any], side: str, request: EvaluationInput, index: int) -> str:
        path = str(pair.get(side, ""))
        inline = pair.get(f"{side}_content")
        if inline is not None:
            text = str(inline)
        else:
            root = self.service.config.workspace_root
            file = workspace_file(root, request.workspace, path, field=f"config.pairs[{index}].{side}")
            try:
                text = await read_text(file)
            except OSError as exc:
                raise _PairError(f"cannot read {side} file: {exc.strerror or exc}") from None
        pattern = pair.get(f"{side}_pattern")
        if not pattern:
            return text[-OUTPUT_TAIL_CHARS:]
        try:
            matches = await patterns.findall(
                str(pattern), text, timeout=self.service.config.regex_timeout_seconds, flags=regex.DOTALL
            )
        except patterns.PatternTimeout as exc:
            raise _PairError(f"{side}_pattern: {exc}") from None
        if not matches:
            raise _PairError(f"{side}_pattern matched nothing in {path or 'the inline ' + side}")
        return "\n".join(matches)


def _pair_verdict(payload: Mapping[str, Any]) -> dict[str, Any]:
    verdict = str(payload.get("verdict", "error"))
    reason = clip(str(payload.get("reason", "") or ""))
    if verdict not in ("yes", "no"):
        return {
            "verdict": "error",
            "error": f"the judge's verdict {clip(repr(verdict), 200)} is not yes or no",
            "reason": reason,
        }
    raw_confidence = payload.get("confidence", 1.0)
    try:
        confidence = float(raw_confidence)
        if isinstance(raw_confidence, bool) or math.isnan(confidence):
            raise ValueError
    except (TypeError, ValueError):
        return {
            "verdict": "error",
            "error": f"the judge's confidence {clip(repr(raw_confidence), 200)} is not a number",
        }
    return {"verdict": verdict, "confidence": confidence, "reason": reason}
