"""llm_structured: an LLM judge bound by a verbatim-evidence contract (little-loops' `llm_structured`, made stricter).

LLM self-grades are right a third to a half of the time, so the judge must quote the output for every yes, no,
blocked or partial, and a verdict without a quote becomes `no`. The reference stopped there: a judge could invent a
plausible quote and still pass. Here the quote is also looked up in the judged output (whitespace normalised, quote
marks and `...` elisions tolerated) and a quote that is not there is treated exactly like a missing one, with the
details saying so. `cannot_judge` is an honest abstention and needs no quote.

The building blocks (prompt, grammar, evidence check, post-processing) are pure functions; `LlmStructured` is the
evaluator the dispatcher calls, and the only part that waits for a judge.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import re
from collections.abc import Mapping
from typing import Any

from verdict.evaluators.interpolation import InterpolationError, Namespaces, interpolate
from verdict.evaluators.model import EvaluationInput, EvaluationResult
from verdict.judges.clipping import clip, clip_payload
from verdict.judges.envelopes import JudgeReply
from verdict.judges.model import JudgeAnswer, JudgeRequest
from verdict.judges.payload import verdict_payload
from verdict.judges.ruled import RuledJudge, Seat

__all__ = [
    "DEFAULT_PROMPT",
    "DEFAULT_SCHEMA",
    "EVIDENCE_CONTRACT",
    "MAX_QUOTED_PASSAGES",
    "OUTPUT_TAIL_CHARS",
    "VERDICTS",
    "LlmStructured",
    "build_prompt",
    "evidence_found",
    "settle",
]

OUTPUT_TAIL_CHARS = 4000
"""The judge sees the last 4000 characters of the output: the end of a run is where success or failure shows."""

VERDICTS = ("yes", "no", "blocked", "partial", "cannot_judge")

DEFAULT_PROMPT = "Judge whether this action succeeded, from its output."

EVIDENCE_CONTRACT = """Rules for your answer:
1. Give one verdict: yes, no, partial, blocked (the work cannot go on without outside help) or cannot_judge.
2. For yes, no, partial and blocked, quote the output word for word in `evidence`: the exact text that shows it.
3. If you cannot quote text that shows your verdict, answer cannot_judge instead of guessing.
4. A general impression ("the task appears complete") is not evidence. cannot_judge is not a failure."""

DEFAULT_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {
            "type": "string",
            "enum": list(VERDICTS),
            "description": (
                "yes: the condition holds; no: it does not; blocked: cannot proceed without outside help; "
                "partial: progress but not complete; cannot_judge: the output does not show it either way"
            ),
        },
        "confidence": {"type": "number", "minimum": 0, "maximum": 1, "description": "Confidence in the verdict (0-1)"},
        "reason": {"type": "string", "description": "Brief explanation"},
        "evidence": {
            "type": "string",
            "description": "A verbatim quote from the output that supports the verdict; empty when there is none.",
        },
    },
    "required": ["verdict", "confidence", "reason", "evidence"],
}

_WHITESPACE = re.compile(r"\s+")
_ELISION = re.compile(r"\s*(?:\[\s*(?:\.\.\.|…)\s*\]|\.\.\.|…)\s*")
_QUOTE_PAIRS = {'"': '"', "“": "”", "`": "`"}
_QUOTE_MARKS = "\"'“”‘’`«» "
MAX_QUOTED_PASSAGES = 32
"""Evidence quoting more distinct passages than this is not verified (and so counts as not found): each passage is
looked for in the whole output, which is up to 4 MiB."""


def build_prompt(prompt: str | None, output: str) -> str:
    """The judge's prompt: the question, the evidence contract, then the tail of the output in tags."""
    tail = output[-OUTPUT_TAIL_CHARS:]
    return f"{prompt or DEFAULT_PROMPT}\n\n{EVIDENCE_CONTRACT}\n\n<action_output>\n{tail}\n</action_output>"


def _normalise(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


def _fragments_found(fragments: list[str], haystack: str) -> bool:
    """Whether the fragments occur in the haystack in this order, without overlapping: a quote with elisions is the
    output with gaps, so "A ... B" needs B after A. Each search starts where the last match ended, so the whole check
    reads the haystack once however many fragments there are."""
    fragments = [fragment.strip(_QUOTE_MARKS) for fragment in fragments]
    fragments = [fragment for fragment in fragments if fragment]
    position = 0
    for fragment in fragments:
        found = haystack.find(fragment, position)
        if found == -1:
            return False
        position = found + len(fragment)
    return bool(fragments)


def _passages(quote: str) -> list[str]:
    """The non-empty texts between quote marks ("…", “…”, `…`), left to right, each once.

    A scan rather than a regex: `“([^”]+)”` retries from every unclosed `“` to the end of the text, so a judge's
    "evidence" of 20,000 `“` took 1.6 s and a few hundred kilobytes of it hours. Here an opening mark with no closing
    one ends the search for that kind (no later opening can be closed either), and every search starts further on.
    """
    passages: dict[str, None] = {}
    upcoming = {mark: quote.find(mark) for mark in _QUOTE_PAIRS}
    while live := {mark: index for mark, index in upcoming.items() if index != -1}:
        mark = min(live, key=live.__getitem__)
        start = live[mark]
        end = quote.find(_QUOTE_PAIRS[mark], start + 1)
        if end == -1:
            upcoming[mark] = -1
            continue
        if end > start + 1:
            passages[quote[start + 1 : end]] = None
            if len(passages) > MAX_QUOTED_PASSAGES:
                break
        for other, index in upcoming.items():
            if index != -1 and index <= end:
                upcoming[other] = quote.find(other, end + 1)
    return list(passages)


def evidence_found(evidence: str, output: str) -> bool:
    """Whether a quote really occurs in the output, with runs of whitespace counted as one space.

    Accepted: the whole quote (surrounding quote marks stripped); its pieces around `...` elisions, found in that
    order; or, for evidence that quotes several passages (at most MAX_QUOTED_PASSAGES), every passage in quote marks
    found. Case-sensitive: it is verbatim.
    """
    haystack = _normalise(output)
    quote = _normalise(evidence)
    if _fragments_found([quote], haystack) or _fragments_found(_ELISION.split(quote), haystack):
        return True
    passages = _passages(quote)
    if not passages or len(passages) > MAX_QUOTED_PASSAGES:
        return False
    return all(_fragments_found(_ELISION.split(passage), haystack) for passage in passages)


def _evidence_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return " ... ".join(str(item) for item in value if item is not None)
    return str(value)


def settle(
    payload: Mapping[str, Any],
    *,
    output: str,
    custom_schema: bool,
    min_confidence: float,
    uncertain_suffix: bool,
) -> tuple[str, dict[str, Any]]:
    """Turn the judge's answer object into the verdict and its details (little-loops' post-processing, in its order):
    defaults, grammar, evidence (blank or not found in the output → `no`), then the `_uncertain` suffix.

    A confidence that is not a number is the judge malfunctioning: `error`, where the reference raised.
    """
    raw_verdict = payload.get("verdict", "error")
    verdict = "error" if raw_verdict is None else str(raw_verdict)
    evidence = _evidence_text(payload.get("evidence", ""))
    raw, raw_truncated = clip_payload(payload)
    details: dict[str, Any] = {
        "reason": clip(str(payload.get("reason", "") or "")),
        "evidence": clip(evidence),
        "evidence_coerced": False,
        "raw": raw,
    }
    if raw_truncated:
        details["raw_truncated"] = True
    raw_confidence = payload.get("confidence", 1.0)
    try:
        if isinstance(raw_confidence, bool):
            raise TypeError
        confidence = float(raw_confidence)
        if math.isnan(confidence):
            raise ValueError
    except (TypeError, ValueError):
        return "error", {
            **details,
            "error": f"the judge's confidence {clip(repr(raw_confidence), 200)} is not a number",
            "invalid_confidence": True,
        }
    confident = confidence >= min_confidence
    details = {"confidence": confidence, "confident": confident, **details}
    if not custom_schema:
        if verdict not in VERDICTS and verdict != "error":
            return "error", {
                **details,
                "error": f"the judge's verdict {clip(repr(verdict), 200)} is not one of {', '.join(VERDICTS)}",
                "invalid_verdict": True,
                "raw_verdict": clip(verdict, 200),
            }
        if verdict not in ("error", "cannot_judge"):
            if not evidence.strip():
                verdict = "no"
                details["evidence_coerced"] = True
            elif not evidence_found(evidence, output):
                verdict = "no"
                details["evidence_coerced"] = True
                details["evidence_verified"] = False
                details["evidence_not_found"] = "the quoted evidence does not occur in the judged output"
            else:
                details["evidence_verified"] = True
    if uncertain_suffix and not confident and verdict != "error":
        verdict = f"{verdict}_uncertain"
    return verdict, details


def _read_payload(reply: JudgeReply) -> dict[str, Any]:
    return verdict_payload(reply, recover=True)


class LlmStructured(RuledJudge):
    """The `llm_structured` evaluator: `await evaluator(config, request, deadline)`.

    With `rulings`, a question asked before (same host, model, prompt, schema, output and settings) is answered with
    the ruling it got then (see `rulings`)."""

    evaluator = "llm_structured"

    async def __call__(
        self, config: Mapping[str, Any], request: EvaluationInput, deadline: float | None
    ) -> EvaluationResult:
        prompt = config.get("prompt")
        if prompt:
            # an unresolvable `${...}` leaves the prompt raw rather than failing the call: a judge can still read it
            with contextlib.suppress(InterpolationError):
                prompt = interpolate(prompt, Namespaces.from_context(request.context))
        custom_schema = config.get("schema")
        model = config["model"] or self.service.config.judge_model  # validation fills an unset model; "" stays
        user_prompt = build_prompt(prompt, request.output)

        async def judge(seat: Seat) -> EvaluationResult:
            return await self._judge(config, request, deadline, seat, user_prompt)

        def material(seat: Seat) -> dict[str, Any]:
            return {
                "model": seat.model,
                "prompt": user_prompt,
                "schema": custom_schema or DEFAULT_SCHEMA,
                # the evidence check reads the whole output, not only the tail the prompt shows
                "output": hashlib.sha256(request.output.encode("utf-8", "surrogatepass")).hexdigest(),
                "settings": {
                    "min_confidence": float(config["min_confidence"]),
                    "uncertain_suffix": bool(config["uncertain_suffix"]),
                    "custom_schema": bool(custom_schema),
                },
            }

        return await self._ruled(config, deadline, judge, material, model=model)

    def vote(self, result: EvaluationResult) -> str | None:
        """A ruling's vote without its `_uncertain` mark: an unsure yes is still a yes (the panel's confidence, the
        mean of its winners', decides whether the panel's verdict is marked)."""
        if result.verdict == "error":
            return None
        return result.verdict.removesuffix("_uncertain")

    def panel_verdict(self, verdict: str, winners: list[EvaluationResult], config: Mapping[str, Any]) -> str:
        if not config["uncertain_suffix"] or verdict.endswith("_uncertain"):
            return verdict
        confidences = [float(w.details["confidence"]) for w in winners if "confidence" in w.details]
        if confidences and sum(confidences) / len(confidences) < float(config["min_confidence"]):
            return f"{verdict}_uncertain"
        return verdict

    async def _judge(
        self,
        config: Mapping[str, Any],
        request: EvaluationInput,
        deadline: float | None,
        seat: Seat,
        user_prompt: str,
    ) -> EvaluationResult:
        custom_schema = config.get("schema")
        answer = await self.service.ask(
            JudgeRequest(
                prompt=user_prompt,
                model=seat.model,
                schema=custom_schema or DEFAULT_SCHEMA,
                deadline=deadline,
                read_payload=_read_payload,
                host=seat.host,
                temperature=seat.temperature,
            )
        )
        trace = _trace(answer, seat.model, user_prompt)
        if not answer.ok or answer.payload is None:
            return EvaluationResult("error", {**answer.failure_details(), **trace})
        verdict, details = settle(
            answer.payload,
            output=request.output,
            custom_schema=bool(custom_schema),
            min_confidence=float(config["min_confidence"]),
            uncertain_suffix=bool(config["uncertain_suffix"]),
        )
        return EvaluationResult(verdict, {**details, **trace})


def _trace(answer: JudgeAnswer, model: str, prompt: str) -> dict[str, Any]:
    return {
        "judge_host": answer.host,
        # the model the provider says answered (an endpoint may serve another than the one asked for)
        "llm_model": (answer.reply.model if answer.reply is not None else "") or model,
        "llm_latency_ms": answer.latency_ms,
        "llm_prompt": prompt[:500],
        "llm_raw_output": answer.raw_output[:500],
    }
