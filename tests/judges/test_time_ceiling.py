"""1800 s (little-loops' own limit) is the ceiling of every judge call's time limit.

`judge_timeout_seconds` and `second_opinion_timeout_seconds` over 1800 are refused at startup, and a judge call that
asks for more time than the ceiling anyway is capped: here the time limit the runner is really given is recorded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.judges.support import FakeJudges
from verdict.config.keys import JUDGE_TIMEOUT_CEILING_SECONDS, Config
from verdict.errors import ConfigError
from verdict.judges import JudgeRequest, build_judges
from verdict.metrics import Metrics
from verdict.runner import Command, Completed, Runner
from verdict.verify.model import VerifyInput

LONG = VerifyInput(text="A long prose answer. " * 400, completion_tokens=5000, request_text="Explain.")


def record_timeouts(runner: Runner) -> list[float]:
    """The `timeout` of every command the runner is asked to run (the call itself still runs)."""
    seen: list[float] = []
    run = runner.run

    async def spy(command: Command, *args: Any, **kwargs: Any) -> Completed:
        seen.append(command.timeout)
        return await run(command, *args, **kwargs)

    runner.run = spy  # type: ignore[method-assign]
    return seen


def test_a_second_opinion_timeout_over_the_ceiling_is_refused_at_startup() -> None:
    with pytest.raises(ConfigError) as caught:
        Config(second_opinion=True, second_opinion_timeout_seconds=2 * JUDGE_TIMEOUT_CEILING_SECONDS)
    assert caught.value.key == "second_opinion_timeout_seconds"


async def test_a_judge_request_over_the_ceiling_is_capped(
    fake_judges: FakeJudges, runner: Runner, metrics: Metrics, scratch: Path
) -> None:
    fake_judges.install("claude")
    fake_judges.answer("claude-code", {"verdict": "yes"})
    built = build_judges(
        Config(judge_host="claude-code"), runner, metrics, {"PATH": fake_judges.path}, scratch_root=scratch
    )
    seen = record_timeouts(runner)
    answer = await built.service.ask(JudgeRequest(prompt="Judge this.", timeout=10 * JUDGE_TIMEOUT_CEILING_SECONDS))
    assert answer.ok, answer.error
    assert seen == [JUDGE_TIMEOUT_CEILING_SECONDS]
