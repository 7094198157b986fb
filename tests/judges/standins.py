"""Stand-in judges with known error rates, for the panel and calibration tests.

A stand-in is wrong on case i exactly when `wrong(i, seed, rate)` says so (a hash, so the pattern is deterministic,
independent between seeds, and its realised error rate is known before the test runs). The case's truth travels in
the judged output as `RESULT: <truth>` (comparator: `SCORE: <n>` in each output, the higher wins), which the
stand-in reads from the prompt like a judge would, and quotes as its evidence.

`StandInService` is a real JudgeService whose `ask` answers in-process (fast: a 500-case panel run takes a second);
`standin_cli.py` is the same judge as a CLI speaking claude's real envelope, for the tests through real processes.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from verdict.config.keys import Config
from verdict.judges import CliHost, JudgeAnswer, JudgeOutcome, JudgeRequest, JudgeService
from verdict.judges.model import failure
from verdict.judges.rulings import record_spend
from verdict.metrics import Metrics
from verdict.runner import Runner

RESULT = re.compile(r"RESULT: (\w+)")
SCORE = re.compile(r"SCORE: (\d+)")
OUTPUT_A = re.compile(r"<output_a>\n(.*?)\n</output_a>", re.S)
OUTPUT_B = re.compile(r"<output_b>\n(.*?)\n</output_b>", re.S)
CASE = re.compile(r"case (\d+)")


def wrong(case: int, seed: int, rate: float) -> bool:
    """Whether a stand-in with this seed and error rate is wrong on `case`."""
    digest = hashlib.sha256(f"{seed}:{case}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


def case_output(case: int, truth: str) -> str:
    return f"running case {case}\nchecks finished\nRESULT: {truth}\n"


def flip(verdict: str) -> str:
    return "no" if verdict == "yes" else "yes"


@dataclass
class Profile:
    """How one stand-in (a host/model) behaves: its error rate and seed, a malfunction mode, its delay and cost.

    `mode`: answer, hang (never answers: the call runs into its time limit), crash (the host fails), garbage (an
    answer outside the grammar), first (comparator: always prefers the output shown first)."""

    rate: float = 0.0
    seed: int = 0
    mode: str = "answer"
    delay: float = 0.0
    cost: float = 0.01


@dataclass
class Call:
    model: str
    host: str
    started: float
    ended: float = 0.0
    temperature: float | None = None


@dataclass
class StandIns:
    """The profiles by model (every stand-in is a model on the claude-code host, or `host:model` for another)."""

    profiles: dict[str, Profile] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)

    def profile(self, host: str, model: str) -> Profile:
        return self.profiles.get(f"{host}:{model}") or self.profiles.get(model) or Profile()


class StandInService(JudgeService):
    """A JudgeService whose judges are stand-ins: the deadline, the panel and the cache around it are the real ones."""

    def __init__(self, standins: StandIns, metrics: Metrics | None = None, **config: Any) -> None:
        metrics = metrics or Metrics(CollectorRegistry(), model_labels=("a", "b", "c", "d", "e"))
        super().__init__(Config(judge_host="claude-code", **config), Runner(metrics), metrics, {"PATH": ""})
        self.standins = standins

    async def ask(self, request: JudgeRequest) -> JudgeAnswer:
        host = request.host or self.host
        assert isinstance(host, CliHost)
        model = request.model or self.config.judge_model
        async with self._slot(request.deadline):  # the real judge pool: a full one refuses, as for a real judge
            return await self._answer(host, model, request)

    async def _answer(self, host: CliHost, model: str, request: JudgeRequest) -> JudgeAnswer:
        profile = self.standins.profile(host.name, model)
        call = Call(model, host.name, time.monotonic(), temperature=request.temperature)
        self.standins.calls.append(call)
        try:
            if profile.delay:
                await asyncio.sleep(profile.delay)
            if profile.mode == "hang":
                limit = self.config.judge_timeout_seconds
                if request.deadline is not None:
                    limit = min(limit, request.deadline - time.monotonic() - 0.5)
                await asyncio.sleep(max(limit, 0))
                return failure(host.name, host.binary, JudgeOutcome.TIMEOUT, "LLM evaluation timeout", timeout=True)
            if profile.mode == "crash":
                return failure(host.name, host.binary, JudgeOutcome.API_ERROR, "judge died: SIGSEGV", api_error=True)
            record_spend(profile.cost)
            if profile.mode == "garbage":
                return JudgeAnswer(host.name, host.binary, JudgeOutcome.OK, payload={"verdict": "¯\\_(ツ)_/¯"})
            return JudgeAnswer(host.name, host.binary, JudgeOutcome.OK, payload=answer(request.prompt, profile))
        finally:
            call.ended = time.monotonic()


def answer(prompt: str, profile: Profile) -> dict[str, Any]:
    """The stand-in's answer object for a prompt: llm_structured/contract (`RESULT:`) or comparator (`SCORE:`)."""
    case_match = CASE.search(prompt)
    case = int(case_match.group(1)) if case_match else 0
    is_wrong = wrong(case, profile.seed, profile.rate)
    a, b = OUTPUT_A.search(prompt), OUTPUT_B.search(prompt)
    if a and b:
        if profile.mode == "first":
            return {"verdict_a": "yes", "verdict_b": "no", "confidence": 0.9, "reason": "A reads better"}
        score_a, score_b = (int(SCORE.search(side.group(1)).group(1)) for side in (a, b))  # type: ignore[union-attr]
        a_wins = (score_a > score_b) != is_wrong
        verdicts = ("yes", "no") if a_wins else ("no", "yes")
        return {"verdict_a": verdicts[0], "verdict_b": verdicts[1], "confidence": 0.9, "reason": "scores"}
    results = RESULT.findall(prompt)
    truth = results[-1] if results else "no"
    verdict = flip(truth) if is_wrong else truth
    return {"verdict": verdict, "confidence": 0.9, "reason": "the result line", "evidence": f"RESULT: {truth}"}


def config(**overrides: Any) -> dict[str, Any]:
    """A validated llm_structured configuration."""
    from verdict.evaluators.catalogue import validate

    return validate({"type": "llm_structured", **overrides})


def members(*models: str, host: str = "claude") -> list[Mapping[str, str]]:
    return [{"host": host, "model": model} for model in models]


STANDIN_CLI = Path(__file__).parent / "standin_cli.py"


def install_cli(bin_dir: Path, profiles: Mapping[str, Mapping[str, Any]], key: Mapping[str, str] | None = None) -> str:
    """The stand-in CLI installed as `claude` in `bin_dir` with these profiles; returns the PATH to give the server."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    target = bin_dir / "claude"
    target.write_text(f"#!{sys.executable}\n{STANDIN_CLI.read_text().split(chr(10), 1)[1]}")
    target.chmod(0o755)
    (bin_dir / "standin.json").write_text(json.dumps({"profiles": profiles, "key": key or {}}))
    return f"{bin_dir}:/usr/bin:/bin"


def answer_key(cases_dir: Path) -> dict[str, str]:
    """The labels of a calibration set as the stand-in CLI reads them: by the digest of each judged text."""
    import yaml

    key: dict[str, str] = {}
    for path in sorted(cases_dir.glob("*.yaml")):
        for case in yaml.safe_load(path.read_text())["cases"]:
            expected = case["expected"] if isinstance(case["expected"], str) else ("yes" if case["expected"] else "no")
            if case.get("evaluator") == "comparator":
                key[_digest(case["output"])] = "win" if expected == "yes" else "lose"
                key[_digest(case["baseline"])] = "lose" if expected == "yes" else "win"
            else:
                key[_digest(case["output"][-4000:])] = expected
    return key


def calls_of(bin_dir: Path) -> list[dict[str, Any]]:
    path = bin_dir / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _digest(text: str) -> str:
    return hashlib.sha256(text.strip().encode()).hexdigest()
