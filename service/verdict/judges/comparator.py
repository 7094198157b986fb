"""comparator: a blind A/B judgement of the output against a baseline.

The reference hid which output was which by a coin flip per pair. That does not cancel position bias: a judge that
prefers whatever sits in position A hands the win to whichever arm the coin put there, so the verdict is the coin's.
Here every pair is judged in **both orders** (the output as A, then as B) and an arm's pass counts only when both
orders give it: a preference for a position then passes neither arm and the result is a tie, while a real
difference survives the swap.

A judge that fails (timeout, missing CLI, unreadable answer, a ruling that is not exactly yes or no) makes the
verdict `error` with the cause, where the reference quietly counted a tie: a comparison that never happened says
nothing about the output.

The baseline is inline in the request (`baseline`) or the file `<baseline_path>/output.txt` inside the workspace.
A missing baseline is `no_baseline`, or with `auto_promote` the output becomes the baseline (`bootstrapped`); with
`auto_promote` a winning output replaces the baseline: the file is written in workspace mode, and the details say
`promoted` so an inline caller can store it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from typing import Any

from verdict.evaluators.model import EvaluationInput, EvaluationResult
from verdict.judges.clipping import clip
from verdict.judges.envelopes import JudgeReply
from verdict.judges.files import WorkspaceFile, read_text, workspace_file, write_text
from verdict.judges.model import JudgeAnswer, JudgeRequest
from verdict.judges.payload import verdict_payload
from verdict.judges.ruled import RuledJudge, Seat

__all__ = ["BLIND_SCHEMA", "DEFAULT_FRAMING", "Comparator", "Ruling", "build_blind_prompt", "read_ruling", "tally"]

OUTPUT_TAIL_CHARS = 4000
BASELINE_FILE = "output.txt"

BLIND_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "verdict_a": {"type": "string", "enum": ["yes", "no"], "description": "Whether Output A meets the criteria"},
        "verdict_b": {"type": "string", "enum": ["yes", "no"], "description": "Whether Output B meets the criteria"},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1, "description": "Confidence in the verdicts"},
        "reason": {"type": "string", "description": "Brief explanation comparing the two outputs"},
    },
    "required": ["verdict_a", "verdict_b", "confidence", "reason"],
}

DEFAULT_FRAMING = (
    "Two outputs, 'Output A' and 'Output B', come from independent runs of the same task. Judge for each one "
    "whether it meets the task's criteria. The labels are arbitrary and say nothing about which is better."
)


def build_blind_prompt(prompt: str | None, output_a: str, output_b: str) -> str:
    """A custom prompt replaces the default framing, as in the reference."""
    return (
        f"{prompt or DEFAULT_FRAMING}\n\n"
        f"<output_a>\n{output_a[-OUTPUT_TAIL_CHARS:]}\n</output_a>\n\n"
        f"<output_b>\n{output_b[-OUTPUT_TAIL_CHARS:]}\n</output_b>"
    )


@dataclass(frozen=True)
class Ruling:
    """One order's judgement, de-anonymised. An arm passes only on exactly "yes"; a missing verdict is "no"."""

    harness_is_a: bool
    verdict_a: str
    verdict_b: str
    confidence: float
    reason: str

    @property
    def harness_pass(self) -> bool:
        return (self.verdict_a if self.harness_is_a else self.verdict_b) == "yes"

    @property
    def baseline_pass(self) -> bool:
        return (self.verdict_b if self.harness_is_a else self.verdict_a) == "yes"

    def raw(self) -> dict[str, Any]:
        return {"verdict_a": self.verdict_a, "verdict_b": self.verdict_b, "harness_is_a": self.harness_is_a}


def read_ruling(payload: Mapping[str, Any], *, harness_is_a: bool) -> Ruling:
    """The judge's answer object as a Ruling. A confidence that is not a number counts as 0."""
    try:
        confidence = float(payload.get("confidence", 0.0))
    except (TypeError, ValueError):
        confidence = 0.0
    return Ruling(
        harness_is_a,
        str(payload.get("verdict_a", "no")),
        str(payload.get("verdict_b", "no")),
        confidence,
        str(payload.get("reason", "") or ""),
    )


def tally(pairs: list[tuple[Ruling, Ruling]]) -> tuple[str, int, int]:
    """(verdict, harness wins, baseline wins): an arm wins a pair when it passes in both orders; more wins → yes or
    no, equal → tie (both pass, both fail, or a position preference)."""
    harness = sum(1 for first, second in pairs if first.harness_pass and second.harness_pass)
    baseline = sum(1 for first, second in pairs if first.baseline_pass and second.baseline_pass)
    verdict = "yes" if harness > baseline else "no" if baseline > harness else "tie"
    return verdict, harness, baseline


def _failure(answers: tuple[JudgeAnswer, JudgeAnswer]) -> dict[str, Any] | None:
    """The details of the first unusable answer of a pair, or None: a failed call, or a ruling outside the binary
    grammar. An arm the judge did not rule on (a missing `verdict_b`, a "Yes" from a host that cannot enforce the
    schema) has not been found wanting: counting it as "no", as the reference did, turns a judge that cannot follow
    the grammar into a tie, or into a loss when the other pairs went the baseline's way."""
    for answer in answers:
        if not answer.ok or answer.payload is None:
            return answer.failure_details()
        for key in ("verdict_a", "verdict_b"):
            value = answer.payload.get(key)
            if value not in ("yes", "no"):
                return {
                    "error": f"the judge's {key} {clip(repr(value), 200)} is not yes or no",
                    "invalid_verdict": True,
                    "raw_verdict": clip(str(value), 200),
                    "judge_host": answer.host,
                }
    return None


def _read_payload(reply: JudgeReply) -> dict[str, Any]:
    return verdict_payload(reply, key="verdict_a")


async def _both(first: Awaitable[JudgeAnswer], second: Awaitable[JudgeAnswer]) -> tuple[JudgeAnswer, JudgeAnswer]:
    """Run two judge calls at once; if either raises, the other is cancelled (its process group killed) and the
    first error is raised as itself, so a DeadlineTooShort or ResourceExhausted keeps its status code."""
    try:
        async with asyncio.TaskGroup() as group:
            a, b = group.create_task(_answer(first)), group.create_task(_answer(second))
    except BaseExceptionGroup as failed:
        raise failed.exceptions[0] from None
    return a.result(), b.result()


async def _answer(call: Awaitable[JudgeAnswer]) -> JudgeAnswer:
    return await call


class Comparator(RuledJudge):
    """The `comparator` evaluator: `await evaluator(config, request, deadline)`."""

    evaluator = "comparator"
    cautious = "tie"

    async def __call__(
        self, config: Mapping[str, Any], request: EvaluationInput, deadline: float | None
    ) -> EvaluationResult:
        output = request.output
        auto_promote = bool(config["auto_promote"])
        baseline_file: WorkspaceFile | None = None
        if config.get("baseline") is not None:
            baseline = str(config["baseline"])
        elif config.get("baseline_path"):
            baseline_file = workspace_file(
                self.service.config.workspace_root,
                request.workspace,
                str(config["baseline_path"]),
                BASELINE_FILE,
                field="config.baseline_path",
            )
            try:
                baseline = await read_text(baseline_file)
            except FileNotFoundError:
                if not auto_promote:
                    return EvaluationResult(
                        "no_baseline", {"reason": f"Baseline file not found: {config['baseline_path']}/{BASELINE_FILE}"}
                    )
                return await self._bootstrap(baseline_file, output)
            except OSError as exc:
                return EvaluationResult("error", {"error": f"cannot read the baseline: {exc.strerror or exc}"})
        else:
            return EvaluationResult("no_baseline", {"reason": "No baseline_path or baseline configured"})

        model = config["model"] or self.service.config.judge_model  # validation fills an unset model; "" stays
        min_pairs = int(config["min_pairs"])  # validation made it at least 1
        prompt = config.get("prompt")

        async def judge(seat: Seat) -> EvaluationResult:
            return await self._compare(prompt, output, baseline, seat, min_pairs, deadline)

        def material(seat: Seat) -> dict[str, Any]:
            return {
                "model": seat.model,
                "prompts": [build_blind_prompt(prompt, output, baseline), build_blind_prompt(prompt, baseline, output)],
                "schema": BLIND_SCHEMA,
                "settings": {"min_pairs": min_pairs},
            }

        result = await self._ruled(config, deadline, judge, material, model=model)
        if result.verdict != "yes" or not auto_promote:
            return result
        # promotion is not part of the ruling: a replayed win still promotes (the file held the old baseline, or the
        # ruling's key, which covers the baseline's text, would not have matched)
        details = dict(result.details)
        if baseline_file is not None:
            try:
                await write_text(baseline_file, output)
            except OSError as exc:
                return EvaluationResult(
                    "error", {**details, "error": f"cannot promote the output: {exc.strerror or exc}"}
                )
        details["promoted"] = True
        return EvaluationResult(result.verdict, details)

    async def _compare(
        self, prompt: str | None, output: str, baseline: str, seat: Seat, min_pairs: int, deadline: float | None
    ) -> EvaluationResult:
        """Judge `min_pairs` pairs, each in both orders, and tally them (the ruling, before any promotion)."""
        pairs: list[tuple[Ruling, Ruling]] = []
        host = ""
        answered = seat.model
        for _ in range(min_pairs):
            if self.service.slots.slots > 1:
                answers = await _both(
                    self._judge(prompt, output, baseline, seat, deadline, harness_is_a=True),
                    self._judge(prompt, output, baseline, seat, deadline, harness_is_a=False),
                )
            else:
                # one judge slot: the second order would wait for the first anyway, and with no queue it would be
                # refused (RESOURCE_EXHAUSTED) by the comparator's own first order
                answers = (
                    await self._judge(prompt, output, baseline, seat, deadline, harness_is_a=True),
                    await self._judge(prompt, output, baseline, seat, deadline, harness_is_a=False),
                )
            host = answers[0].host
            # the model the provider says answered, when it says (an endpoint may serve another than asked for)
            answered = next((a.reply.model for a in answers if a.reply is not None and a.reply.model), answered)
            failure = _failure(answers)
            if failure is not None:
                verdict, harness_wins, baseline_wins = tally(pairs)
                return EvaluationResult(
                    "error",
                    {
                        **failure,
                        "harness_wins": harness_wins,
                        "baseline_wins": baseline_wins,
                        "pairs_judged": len(pairs),
                        "min_pairs": min_pairs,
                        "llm_model": answered,
                    },
                )
            first, second = (answer.payload or {} for answer in answers)
            pairs.append((read_ruling(first, harness_is_a=True), read_ruling(second, harness_is_a=False)))
        verdict, harness_wins, baseline_wins = tally(pairs)
        last = pairs[-1][1]
        details: dict[str, Any] = {
            "harness_wins": harness_wins,
            "baseline_wins": baseline_wins,
            "min_pairs": min_pairs,
            "reason": clip(last.reason),
            "raw": last.raw(),
            "orders": [{"output_as_a": first.raw(), "output_as_b": second.raw()} for first, second in pairs],
            "judge_host": host,
            "llm_model": answered,
        }
        return EvaluationResult(verdict, details)

    async def _bootstrap(self, baseline_file: WorkspaceFile, output: str) -> EvaluationResult:
        try:
            await write_text(baseline_file, output)
        except OSError as exc:
            return EvaluationResult("error", {"error": f"cannot write the baseline: {exc.strerror or exc}"})
        return EvaluationResult(
            "yes",
            {
                "reason": "No baseline found; current output promoted as new baseline.",
                "bootstrapped": True,
                "promoted": True,
            },
        )

    def _judge(
        self, prompt: str | None, output: str, baseline: str, seat: Seat, deadline: float | None, *, harness_is_a: bool
    ) -> Awaitable[JudgeAnswer]:
        output_a, output_b = (output, baseline) if harness_is_a else (baseline, output)
        return self.service.ask(
            JudgeRequest(
                prompt=build_blind_prompt(prompt, output_a, output_b),
                model=seat.model,
                schema=BLIND_SCHEMA,
                deadline=deadline,
                read_payload=_read_payload,
                host=seat.host,
                temperature=seat.temperature,
            )
        )
