"""The real judge CLIs, installed from npm (tests/judges/real_cli, `make judge-clis`), run through the JudgeService
with no credentials and no network: the verdict must be `error` carrying the CLI's own "not logged in" message, in
time, with nothing left running, and never an argument, environment or parse error of ours. codex never fails
offline (it waits for the network for ever), so for it the timeout path is what is checked."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from verdict.config.keys import Config
from verdict.evaluators.model import EvaluationInput
from verdict.judges import JudgeService, LlmStructured

REAL_BIN = Path(__file__).parent / "real_cli" / "node_modules" / ".bin"

pytestmark = [
    pytest.mark.real_cli,
    pytest.mark.skipif(not REAL_BIN.is_dir(), reason="the real CLIs are not installed: run `make judge-clis`"),
]

CONFIG = {
    "type": "llm_structured",
    "prompt": "Did the tests pass? Quote the summary line.",
    "schema": None,
    "min_confidence": 0.5,
    "uncertain_suffix": False,
    "model": "sonnet",
    "source": None,
}
OUR_MISTAKES = (
    "unknown option",
    "Unknown arguments",
    "unexpected argument",
    "root/sudo",
    "trusted directory",
    "Failed to parse",
    "Empty result field",
    "No prompt provided",
    "Input must be provided",
    "No input provided",
)


def service(host: str, runner, metrics, scratch, timeout: float) -> JudgeService:
    node = shutil.which("node")
    assert node is not None, "the real CLIs need node on PATH"
    path = f"{REAL_BIN}:{Path(node).parent}:/usr/bin:/bin"
    config = Config(judge_host=host, judge_timeout_seconds=timeout)
    return JudgeService(config, runner, metrics, {"PATH": path}, scratch_root=scratch)


@pytest.mark.parametrize(
    ("host", "message"),
    [
        ("claude-code", "Not logged in"),
        ("gemini", "Please set an Auth method"),
        ("qwen", "No auth type is selected"),
    ],
)
@pytest.mark.parametrize("prompt_size", [0, 200_000])
async def test_without_credentials_the_verdict_carries_the_clis_own_auth_message(
    runner, metrics, scratch, host, message, prompt_size
):
    config = {**CONFIG, "prompt": f"{CONFIG['prompt']} {'p' * prompt_size}"}
    evaluator = LlmStructured(service(host, runner, metrics, scratch, timeout=60))
    result = await evaluator(config, EvaluationInput(config=config, output="All 42 tests passed"), None)
    assert result.verdict == "error"
    assert result.details["api_error"] is True
    assert message in result.details["error"]
    assert not any(mistake in result.details["error"] for mistake in OUR_MISTAKES), result.details["error"]


async def test_codex_offline_is_stopped_at_the_timeout_with_its_native_child(runner, metrics, scratch):
    evaluator = LlmStructured(service("codex", runner, metrics, scratch, timeout=4))
    result = await evaluator(CONFIG, EvaluationInput(config=CONFIG, output="All 42 tests passed"), None)
    assert result.verdict == "error"
    assert result.details["timeout"] is True
    assert runner.live_process_groups == frozenset()
    # conftest's leftover check fails the test if the node wrapper or the native codex outlived it
