"""The model grader: what OpenAI's score_model and label_model graders ask a judge, through the judge machinery.

The evaluators layer defines what a model grader is (`verdict.evaluators.ModelGrader`) and calls it from the
openai_grader run; this is the one implementation, on the judge service (host selection, slots, deadline, private
HOME, metrics) and the ruling cache (the same rendered messages, schema and model on the same host get the stored
answer). The rendered messages become one prompt: system and developer messages the system text, the others the
prompt, each under its role. A judge that cannot answer (no host, a timeout, an API error, a reply without the
answer object) raises `GraderMalfunction` with the judge's failure flags, which the grader reports as
`model_grader_server_error`: never a silent 0. A caller whose grant has no judges is refused (PERMISSION_DENIED) before
any judge is asked, as for the judge-backed evaluator types.

The grader's `model` is an OpenAI model name. An HTTP judge host (an OpenAI-compatible endpoint) is asked with it;
a CLI host (claude, codex, ...) would refuse a name it does not know, so it is asked with the server's judge_model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from verdict.errors import FailedPrecondition
from verdict.evaluators.model import EvaluationResult, GraderMalfunction
from verdict.judges.envelopes import JudgeReply
from verdict.judges.hosts import HttpHost
from verdict.judges.model import JudgeRequest
from verdict.judges.payload import verdict_payload
from verdict.judges.ruled import RuledJudge, Seat
from verdict.security import current_caller, require_judges

__all__ = ["ModelGraders"]

_ANSWERED = "answered"


class ModelGraders(RuledJudge):
    """`await graders(messages, schema, model=…, evaluator=…, deadline=…)` -> the judge's answer object."""

    evaluator: ClassVar[str] = "openai_grader"

    async def __call__(
        self,
        messages: tuple[tuple[str, str], ...],
        schema: Mapping[str, Any],
        *,
        model: str,
        evaluator: str,
        deadline: float | None,
    ) -> dict[str, Any]:
        require_judges(current_caller.get(), f"openai_grader {evaluator}")  # judges cost money: the grant decides
        host = self.service.host
        chosen = (model or self.service.config.judge_model) if isinstance(host, HttpHost) else ""
        chosen = chosen or self.service.config.judge_model
        system = "\n\n".join(content for role, content in messages if role in ("system", "developer"))
        prompt = "\n\n".join(
            f"[{role}]\n{content}" for role, content in messages if role not in ("system", "developer")
        )
        key = "result" if "result" in schema.get("properties", {}) else "label"

        def read(reply: JudgeReply) -> dict[str, Any]:
            return verdict_payload(reply, key=key)

        async def judge(seat: Seat) -> EvaluationResult:
            answer = await self.service.ask(
                JudgeRequest(
                    prompt=prompt,
                    model=seat.model,
                    schema=schema,
                    system=system,
                    deadline=deadline,
                    read_payload=read,
                    host=seat.host,
                )
            )
            if not answer.ok or answer.payload is None:
                return EvaluationResult("error", answer.failure_details())
            return EvaluationResult(_ANSWERED, {"answer": answer.payload, "judge_host": answer.host})

        def material(seat: Seat) -> dict[str, Any]:
            return {
                "grader": evaluator,
                "messages": [list(m) for m in messages],
                "schema": dict(schema),
                "model": seat.model,
            }

        try:
            result = await self._ruled({}, deadline, judge, material, model=chosen)
        except FailedPrecondition as refused:
            raise GraderMalfunction(refused.message, {"reason": refused.reason}) from None
        if result.verdict != _ANSWERED or not isinstance(result.details.get("answer"), Mapping):
            raise GraderMalfunction(str(result.details.get("error") or "the judge gave no answer"), result.details)
        return dict(result.details["answer"])
