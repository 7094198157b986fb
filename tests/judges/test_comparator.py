"""comparator: both orders against position bias, baselines inline or in the workspace, bootstrap and promotion."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any

import pytest

from tests.judges.support import FakeJudges, answer_stdout
from verdict.errors import FailedPrecondition, InvalidArgument, PermissionDenied
from verdict.evaluators.model import EvaluationInput
from verdict.judges.comparator import Comparator, Ruling, build_blind_prompt, read_ruling, tally

GOOD, BAD = "GOOD: all 42 tests passed", "BAD: 3 tests failed"
CONFIG = {
    "type": "comparator",
    "prompt": None,
    "baseline_path": None,
    "baseline": BAD,
    "auto_promote": False,
    "min_pairs": 1,
    "model": "sonnet",
    "source": None,
}


def ruling(a: str, b: str) -> dict[str, object]:
    return {"verdict_a": a, "verdict_b": b, "confidence": 0.8, "reason": f"A {a}, B {b}"}


def judge_prefers(fake_judges: FakeJudges, *, position_a: bool = False, output: str | None = None) -> None:
    """The fake judge says yes to position A always, or to whichever position shows `output`."""
    if position_a:
        fake_judges.scenario({"stdout": answer_stdout("claude-code", ruling("yes", "no"))})
        return
    fake_judges.scenario(
        {
            "stdout": answer_stdout("claude-code", ruling("no", "yes")),
            "match": [
                {"contains": f"<output_a>\n{output}", "stdout": answer_stdout("claude-code", ruling("yes", "no"))}
            ],
        }
    )


def request(output: str = GOOD, workspace: str = "") -> EvaluationInput:
    return EvaluationInput(config=CONFIG, output=output, workspace=workspace)


def test_an_arm_wins_a_pair_only_when_both_orders_pass_it():
    both_a = (Ruling(True, "yes", "no", 1, ""), Ruling(False, "yes", "no", 1, ""))
    assert tally([both_a]) == ("tie", 0, 0)
    harness = (Ruling(True, "yes", "no", 1, ""), Ruling(False, "no", "yes", 1, ""))
    assert tally([harness]) == ("yes", 1, 0)
    baseline = (Ruling(True, "no", "yes", 1, ""), Ruling(False, "yes", "no", 1, ""))
    assert tally([baseline, baseline, harness]) == ("no", 1, 2)
    both_pass = (Ruling(True, "yes", "yes", 1, ""), Ruling(False, "yes", "yes", 1, ""))
    assert tally([both_pass]) == ("tie", 1, 1)


def test_a_missing_verdict_is_no_and_a_bad_confidence_is_zero():
    ruled = read_ruling({"verdict_a": "yes", "confidence": "high"}, harness_is_a=True)
    assert ruled == Ruling(True, "yes", "no", 0.0, "")


def test_a_custom_prompt_replaces_the_framing():
    prompt = build_blind_prompt("Which is more polite?", "a" * 5000, "b")
    assert prompt.startswith("Which is more polite?\n\n<output_a>\n" + "a" * 4000 + "\n</output_a>")
    assert "labels are arbitrary" not in prompt


async def test_a_judge_that_prefers_position_a_gives_a_tie(judge_service, fake_judges):
    """The reference judged one randomly ordered pair: with min_pairs=1 it returned yes or no on the coin alone."""
    judge_prefers(fake_judges, position_a=True)
    result = await Comparator(judge_service("claude-code"))(CONFIG, request(), None)
    assert result.verdict == "tie"
    assert (result.details["harness_wins"], result.details["baseline_wins"]) == (0, 0)
    first, second = (call["prompt"] for call in fake_judges.calls())
    assert {first.index(GOOD) < first.index(BAD), second.index(GOOD) < second.index(BAD)} == {True, False}
    orders = result.details["orders"][0]
    reference_single_order = read_ruling(ruling("yes", "no"), harness_is_a=True)
    assert reference_single_order.harness_pass
    assert not reference_single_order.baseline_pass
    assert orders["output_as_a"]["verdict_a"] == "yes"
    assert orders["output_as_b"]["verdict_a"] == "yes"


async def test_a_real_difference_survives_the_swap(judge_service, fake_judges):
    judge_prefers(fake_judges, output=GOOD)
    result = await Comparator(judge_service("claude-code"))(CONFIG, request(GOOD), None)
    assert result.verdict == "yes"
    assert (result.details["harness_wins"], result.details["baseline_wins"]) == (1, 0)
    judge_prefers(fake_judges, output=BAD)
    assert (await Comparator(judge_service("claude-code"))(CONFIG, request(GOOD), None)).verdict == "no"


async def test_min_pairs_judges_every_pair_in_both_orders(judge_service, fake_judges):
    judge_prefers(fake_judges, output=GOOD)
    result = await Comparator(judge_service("claude-code"))({**CONFIG, "min_pairs": 3}, request(), None)
    assert result.verdict == "yes"
    assert result.details["harness_wins"] == 3
    assert len(fake_judges.calls()) == 6


async def test_a_judge_failure_is_error_not_tie(judge_service, fake_judges):
    fake_judges.scenario({"stdout": "the judge rambles"})
    result = await Comparator(judge_service("claude-code"))(CONFIG, request(), None)
    assert result.verdict == "error"
    assert result.details["pairs_judged"] == 0
    assert "raw_preview" in result.details


@pytest.mark.parametrize(
    "answer",
    [
        {"verdict": "yes", "confidence": 0.9, "reason": "a host that ignored the schema"},
        {"verdict_a": "Yes", "verdict_b": "No", "confidence": 0.9, "reason": "capitalised"},
        {"verdict_a": "yes", "confidence": 0.9, "reason": "one arm not ruled on"},
    ],
)
async def test_a_ruling_outside_the_grammar_is_error_not_a_tie(judge_service, fake_judges, answer):
    """The reference counted an arm without an exact "yes" as failed: a judge that cannot follow the grammar made a
    tie (here: harness and baseline both "failed" in both orders), never an error."""
    fake_judges.scenario({"stdout": answer_stdout("claude-code", answer)})
    result = await Comparator(judge_service("claude-code"))(CONFIG, request(), None)
    assert result.verdict == "error"
    assert result.details["invalid_verdict"] is True
    assert result.details["pairs_judged"] == 0


async def test_a_malformed_later_pair_does_not_turn_into_a_loss(judge_service, fake_judges):
    malformed = answer_stdout("claude-code", {"verdict": "yes", "confidence": 1, "reason": ""})
    baseline_wins = {"contains": f"<output_a>\n{BAD}", "stdout": answer_stdout("claude-code", ruling("yes", "no"))}
    fake_judges.scenario(
        {"stdout": answer_stdout("claude-code", ruling("no", "yes")), "match": [baseline_wins]},
        {"stdout": answer_stdout("claude-code", ruling("no", "yes")), "match": [baseline_wins]},
        {"stdout": malformed},
    )
    result = await Comparator(judge_service("claude-code"))({**CONFIG, "min_pairs": 2}, request(), None)
    assert result.verdict == "error"
    assert (result.details["pairs_judged"], result.details["baseline_wins"]) == (1, 1)


async def test_one_judge_slot_and_no_queue_still_judges_both_orders(judge_service, fake_judges):
    """Both orders at once need two slots; with one and no queue the comparator refused itself (RESOURCE_EXHAUSTED)
    on every call."""
    judge_prefers(fake_judges, output=GOOD)
    service = judge_service("claude-code", max_concurrent_judges=1, judge_queue_size=0)
    result = await Comparator(service)({**CONFIG, "min_pairs": 2}, request(), None)
    assert result.verdict == "yes"
    assert result.details["harness_wins"] == 2
    assert len(fake_judges.calls()) == 4


async def test_a_huge_reason_is_clipped_in_the_details(judge_service, fake_judges):
    fake_judges.scenario({"stdout": answer_stdout("claude-code", {**ruling("yes", "yes"), "reason": "r" * 1_000_000})})
    result = await Comparator(judge_service("claude-code"))(CONFIG, request(), None)
    assert result.verdict == "tie"
    assert len(result.details["reason"]) < 5000
    assert result.details["reason"].endswith("more characters]")


async def test_a_missing_cli_is_error_with_missing_dependency(judge_service, fake_judges):
    service = judge_service("claude-code")
    (fake_judges.bin_dir / "claude").unlink()
    result = await Comparator(service)(CONFIG, request(), None)
    assert result.verdict == "error"
    assert result.details["missing_dependency"] is True


async def test_inline_baseline_with_auto_promote_says_promoted(judge_service, fake_judges):
    judge_prefers(fake_judges, output=GOOD)
    result = await Comparator(judge_service("claude-code"))({**CONFIG, "auto_promote": True}, request(), None)
    assert result.verdict == "yes"
    assert result.details["promoted"] is True


def workspace_config(tmp_path: Path, **fields: Any) -> tuple[Path, dict[str, Any]]:
    root = tmp_path / "root"
    (root / "proj").mkdir(parents=True)
    config = {**CONFIG, "baseline": None, "baseline_path": ".loops/baselines/check", **fields}
    return root, config


async def test_the_baseline_file_in_the_workspace(judge_service, fake_judges, tmp_path):
    root, config = workspace_config(tmp_path)
    baseline = root / "proj/.loops/baselines/check/output.txt"
    baseline.parent.mkdir(parents=True)
    baseline.write_text(BAD)
    judge_prefers(fake_judges, output=GOOD)
    service = judge_service("claude-code", workspace_root=str(root))
    result = await Comparator(service)(config, request(workspace="proj"), None)
    assert result.verdict == "yes"
    assert baseline.read_text() == BAD
    promoted = await Comparator(service)({**config, "auto_promote": True}, request(workspace="proj"), None)
    assert promoted.details["promoted"] is True
    assert baseline.read_text() == GOOD


async def test_a_missing_baseline_file_is_no_baseline_or_bootstrapped(judge_service, fake_judges, tmp_path):
    root, config = workspace_config(tmp_path)
    service = judge_service("claude-code", workspace_root=str(root))
    result = await Comparator(service)(config, request(workspace="proj"), None)
    assert result.verdict == "no_baseline"
    assert fake_judges.calls() == []
    result = await Comparator(service)({**config, "auto_promote": True}, request(workspace="proj"), None)
    assert result.verdict == "yes"
    assert result.details["bootstrapped"] is True
    assert (root / "proj/.loops/baselines/check/output.txt").read_text() == GOOD
    assert fake_judges.calls() == []


async def test_the_baseline_must_lie_inside_the_workspace_root(judge_service, tmp_path):
    root, config = workspace_config(tmp_path, baseline_path="../../outside")
    with pytest.raises(PermissionDenied):
        await Comparator(judge_service("claude-code", workspace_root=str(root)))(
            config, request(workspace="proj"), None
        )
    with pytest.raises(FailedPrecondition):
        await Comparator(judge_service("claude-code"))(config, request(workspace="proj"), None)


async def test_a_baseline_that_is_a_fifo_is_an_error_not_a_hang(judge_service, fake_judges, tmp_path):
    root, config = workspace_config(tmp_path)
    baseline = root / "proj/.loops/baselines/check/output.txt"
    baseline.parent.mkdir(parents=True)
    os.mkfifo(baseline)
    service = judge_service("claude-code", workspace_root=str(root))
    try:
        result = await asyncio.wait_for(
            Comparator(service)({**config, "auto_promote": True}, request(workspace="proj"), None), timeout=10
        )
    finally:
        with contextlib.suppress(OSError):
            os.close(os.open(baseline, os.O_WRONLY | os.O_NONBLOCK))
    assert result.verdict == "error"
    assert result.details["error"] == "cannot read the baseline: not a regular file"
    assert fake_judges.calls() == []


@pytest.mark.parametrize(
    ("baseline_path", "error", "field"),
    [
        ("x" * 300, InvalidArgument, "config.baseline_path"),  # ENAMETOOLONG from the kernel, refused first here
        ("deep/" * 900, InvalidArgument, "config.baseline_path"),  # past PATH_MAX
        ("linked", PermissionDenied, "config.baseline_path"),  # ELOOP: a link on the way, even one staying inside
    ],
)
async def test_paths_the_kernel_refuses_name_the_field(judge_service, tmp_path, baseline_path, error, field):
    root, config = workspace_config(tmp_path, baseline_path=baseline_path)
    (root / "proj" / "real").mkdir(parents=True, exist_ok=True)
    (root / "proj" / "linked").symlink_to("real")
    service = judge_service("claude-code", workspace_root=str(root))
    with pytest.raises(error) as refused:
        await Comparator(service)({**config, "auto_promote": True}, request(workspace="proj"), None)
    assert refused.value.metadata["field"] == field


async def test_auto_promote_replaces_a_link_never_writes_through_it(judge_service, fake_judges, tmp_path):
    """The baseline file itself a link (to a file inside or outside the root): refused, and the target untouched."""
    root, config = workspace_config(tmp_path)
    baseline = root / "proj/.loops/baselines/check/output.txt"
    baseline.parent.mkdir(parents=True)
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep\n")
    baseline.symlink_to(target)
    service = judge_service("claude-code", workspace_root=str(root))
    with pytest.raises(PermissionDenied):
        await Comparator(service)({**config, "auto_promote": True}, request(workspace="proj"), None)
    assert target.read_text() == "keep\n"
    assert fake_judges.calls() == []
