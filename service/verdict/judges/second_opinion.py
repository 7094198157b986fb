"""VerifyResponse's optional second opinion: a judge reads a long answer nothing structural could check.

Only `unverifiable` answers qualify (a block that parsed, or failed to, already has an exact and free verdict), only
long ones (a check costs about 15% of a median 193-token answer, so it pays only where failures are likely enough;
`second_opinion_min_tokens`), and never a tool-call turn (it reads as "ends mid-sentence": 8 false failures in 9 on
real agent traffic). Long texts are shortened by dropping the *middle* under a labelled elision, because a
head-truncated answer reaches the judge ending mid-sentence and is duly reported as cut off: a false failure made by
the harness.

A judge that malfunctions is never a verdict: a timeout, a crash, an answer without a boolean `ok`, a full queue or
a deadline too short all give no sample (None), and the answer keeps its `unverifiable` verdict.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from verdict.errors import VerdictError
from verdict.judges.envelopes import JudgeReply
from verdict.judges.hosts import Host
from verdict.judges.model import JudgeRequest
from verdict.judges.payload import PayloadError, json_objects
from verdict.judges.service import JudgeService
from verdict.metrics import Metrics
from verdict.verify.model import SecondOpinionResult, Verdict, Verification, VerifyInput

__all__ = [
    "ELISION",
    "EXCERPT_CHARS",
    "SECOND_OPINION_SCHEMA",
    "SECOND_OPINION_SYSTEM",
    "SecondOpinion",
    "build_prompt",
    "excerpt",
    "interpret_verdict",
    "parse_verdict_json",
    "worth_second_opinion",
]

log = logging.getLogger("verdict.judges")

EXCERPT_CHARS = 4000
ELISION = "\n\n[... {n} characters elided from the middle ...]\n\n"
REASON_CHARS = 120

SECOND_OPINION_SYSTEM = (
    "You check whether an assistant's answer actually addresses the user's request. Reply with ONLY a JSON object: "
    '{"ok": true|false, "reason": "<short reason>"}. Answer false ONLY for a clear failure: the answer is empty, '
    "refuses without cause, ENDS mid-sentence, contradicts itself, or responds to a different question. Style, "
    "brevity and debatable choices are NOT failures. When unsure, answer true.\n"
    "IMPORTANT: a marker reading '[... N characters elided from the middle ...]' is this harness shortening a long "
    "answer so you can read it. It is NOT a defect. Ignore it and judge only the beginning and the ending you were "
    "given."
)

SECOND_OPINION_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["ok", "reason"],
}

_THINKING = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.DOTALL | re.IGNORECASE)


def worth_second_opinion(
    verdict: Verdict, completion_tokens: int, min_tokens: int, has_tool_calls: bool = False
) -> bool:
    """The reference's `worth_local_check`: unverifiable, not a tool-call turn, and at least `min_tokens` long."""
    if verdict is not Verdict.UNVERIFIABLE or has_tool_calls:
        return False
    return bool(completion_tokens and completion_tokens >= min_tokens)


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """`text` shortened to about `limit` characters by dropping its middle under a labelled elision."""
    if not text or len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head
    return text[:head] + ELISION.format(n=len(text) - limit) + text[-tail:]


def build_prompt(request_text: str, answer: str, limit: int = EXCERPT_CHARS) -> str:
    return f"USER'S REQUEST:\n{excerpt(request_text, limit)}\n\nASSISTANT'S ANSWER:\n{excerpt(answer, limit)}"


def parse_verdict_json(raw: str) -> dict[str, Any] | None:
    """The `{"ok": ..., "reason": ...}` object in a judge's reply, or None when there is none.

    Local models are reasoning models and leak their thinking around the JSON despite `response_format`, so the
    whole reply is tried, then (with any `<think>` block removed) every fenced or embedded object, the last one with
    an `ok` key winning. The reference's greedy `{.*}` failed whenever the reasoning itself held a brace.
    """
    if not raw or not raw.strip():
        return None
    candidates: list[dict[str, Any]] = []
    for text in (raw, _THINKING.sub("", raw)):
        candidates += [obj for obj in json_objects(text) if "ok" in obj]
    return candidates[-1] if candidates else None


def interpret_verdict(parsed: Mapping[str, Any] | None, host: str) -> SecondOpinionResult | None:
    """A usable second opinion, or None: `ok` must be a real boolean (not "true", not 1)."""
    if parsed is None:
        return None
    ok = parsed.get("ok")
    if not isinstance(ok, bool):
        return None
    reason = str(parsed.get("reason", "") or "")[:REASON_CHARS]
    return SecondOpinionResult(Verdict.OK if ok else Verdict.MALFORMED, reason, host)


def _read_opinion(reply: JudgeReply) -> dict[str, Any]:
    if reply.structured is not None and "ok" in reply.structured:
        return dict(reply.structured)
    parsed = parse_verdict_json(reply.text)
    if parsed is None:
        raise PayloadError("parse_error", "no JSON object with an `ok` key in the judge's reply")
    return parsed


class SecondOpinion:
    """What the Verifier calls: `await second_opinion.consider(request, verification)`."""

    def __init__(
        self,
        service: JudgeService,
        metrics: Metrics,
        *,
        host: Host | None,
        model: str,
        min_tokens: int,
        timeout: float,
    ) -> None:
        self.service = service
        self.metrics = metrics
        self.host = host
        self.model = model
        self.min_tokens = min_tokens
        self.timeout = timeout

    async def consider(
        self, request: VerifyInput, verification: Verification, deadline: float | None = None
    ) -> SecondOpinionResult | None:
        """A judge's reading of the answer, or None when it is not worth asking or the judge gave nothing usable.

        Never raises for a judge's sake (only cancellation propagates, and the judge's processes die with it).
        """
        if not worth_second_opinion(
            verification.verdict, request.completion_tokens, self.min_tokens, request.has_tool_calls
        ):
            return None
        outcomes = self.metrics.second_opinions
        try:
            answer = await self.service.ask(
                JudgeRequest(
                    prompt=build_prompt(request.request_text, request.text),
                    system=SECOND_OPINION_SYSTEM,
                    model=self.model,
                    schema=SECOND_OPINION_SCHEMA,
                    timeout=self.timeout,
                    deadline=deadline,
                    read_payload=_read_opinion,
                    host=self.host,
                )
            )
        except VerdictError as exc:
            log.info("second opinion skipped: %s", exc)
            outcomes.labels(outcome="no_sample").inc()
            return None
        result = interpret_verdict(answer.payload, answer.host) if answer.ok else None
        if result is None:
            if not answer.ok:
                log.info("second opinion judge failed (%s): %s", answer.outcome.value, answer.error)
            outcomes.labels(outcome="no_sample").inc()
            return None
        outcomes.labels(outcome=result.verdict.value).inc()
        return result
