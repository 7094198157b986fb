"""contract: pairs inline or in the workspace, time-bounded patterns, per-pair results, aggregation."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.judges.support import answer_stdout
from verdict.errors import InvalidArgument, PermissionDenied
from verdict.evaluators.catalogue import DEFAULT_CONTRACT
from verdict.evaluators.model import EvaluationInput
from verdict.judges.contract import Contract, aggregate
from verdict.judges.files import MAX_FILE_BYTES

PRODUCER = 'def emit():\n    return {"userId": 1, "userName": "a"}\n'
CONSUMER = "function read(r) { return r.userId + r.user_name; }\n"


def pair(**fields: Any) -> dict[str, Any]:
    return {
        "producer": "api/emit.py",
        "consumer": "web/read.js",
        "contract": DEFAULT_CONTRACT,
        "producer_pattern": None,
        "consumer_pattern": None,
        "producer_content": None,
        "consumer_content": None,
        **fields,
    }


def config(*pairs: dict[str, Any]) -> dict[str, Any]:
    return {"type": "contract", "pairs": list(pairs), "source": None}


def answer(verdict: str) -> dict[str, object]:
    return {"stdout": answer_stdout("claude-code", {"verdict": verdict, "confidence": 0.8, "reason": "names"})}


def request(workspace: str = "") -> EvaluationInput:
    return EvaluationInput(config={}, output="ignored", workspace=workspace)


def test_aggregation_puts_error_first():
    assert aggregate([{"verdict": "yes"}, {"verdict": "no"}, {"verdict": "error"}]) == "error"
    assert aggregate([{"verdict": "yes"}, {"verdict": "no"}]) == "no"
    assert aggregate([{"verdict": "yes"}, {"verdict": "yes"}]) == "yes"


async def test_inline_pairs_are_judged_with_the_rule_and_both_sides(judge_service, fake_judges):
    fake_judges.scenario(answer("no"))
    rule = "field names must match exactly"
    result = await Contract(judge_service("claude-code"))(
        config(pair(contract=rule, producer_content=PRODUCER, consumer_content=CONSUMER)), request(), None
    )
    assert result.verdict == "no"
    [pair_result] = result.details["pair_results"]
    assert pair_result["verdict"] == "no"
    assert pair_result["confidence"] == 0.8
    [call] = fake_judges.calls()
    assert f"Contract rule: {rule}" in call["prompt"]
    assert f'<producer path="api/emit.py">\n{PRODUCER}\n</producer>' in call["prompt"]
    assert f'<consumer path="web/read.js">\n{CONSUMER}\n</consumer>' in call["prompt"]


async def test_files_in_the_workspace_narrowed_by_dotall_patterns(judge_service, fake_judges, tmp_path):
    root = tmp_path / "root"
    (root / "proj/api").mkdir(parents=True)
    (root / "proj/web").mkdir(parents=True)
    (root / "proj/api/emit.py").write_text("# header\n" + PRODUCER)
    (root / "proj/web/read.js").write_text(CONSUMER)
    fake_judges.scenario(answer("yes"))
    service = judge_service("claude-code", workspace_root=str(root))
    result = await Contract(service)(
        config(pair(producer_pattern=r"return (\{.*?\})", consumer_pattern=r"r\.\w+")), request("proj"), None
    )
    assert result.verdict == "yes"
    [call] = fake_judges.calls()
    assert '<producer path="api/emit.py">\n{"userId": 1, "userName": "a"}\n</producer>' in call["prompt"]
    assert '<consumer path="web/read.js">\nr.userId\nr.user_name\n</consumer>' in call["prompt"]


async def test_pair_errors_do_not_stop_the_other_pairs(judge_service, fake_judges, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    fake_judges.scenario(answer("yes"))
    service = judge_service("claude-code", workspace_root=str(root))
    result = await Contract(service)(
        config(
            pair(producer="missing.py", consumer_content=CONSUMER),
            pair(producer_content=PRODUCER, consumer_content=CONSUMER, producer_pattern="nothing-like-this"),
            pair(producer_content=PRODUCER, consumer_content=CONSUMER),
        ),
        request(),
        None,
    )
    assert result.verdict == "error"
    missing, unmatched, judged = result.details["pair_results"]
    assert missing["error"].startswith("cannot read producer file")
    assert unmatched["error"] == "producer_pattern matched nothing in api/emit.py"
    assert judged["verdict"] == "yes"
    assert len(fake_judges.calls()) == 1


async def test_a_pattern_that_runs_too_long_is_a_pair_error(judge_service, fake_judges):
    service = judge_service("claude-code", regex_timeout_seconds=0.05)
    result = await Contract(service)(
        config(pair(producer_content="a" * 40 + "b", consumer_content=CONSUMER, producer_pattern=r"(a|aa)+$")),
        request(),
        None,
    )
    assert result.verdict == "error"
    assert "did not finish" in result.details["pair_results"][0]["error"]
    assert fake_judges.calls() == []


async def test_an_answer_outside_yes_no_is_a_pair_error_not_no(judge_service, fake_judges):
    fake_judges.scenario(answer("mostly"))
    result = await Contract(judge_service("claude-code"))(
        config(pair(producer_content=PRODUCER, consumer_content=CONSUMER)), request(), None
    )
    assert result.verdict == "error"
    assert "'mostly' is not yes or no" in result.details["pair_results"][0]["error"]


async def test_a_judge_failure_is_a_pair_error_and_a_missing_cli_stops_everything(judge_service, fake_judges):
    service = judge_service("claude-code")
    fake_judges.scenario({"stdout": "", "stderr": "overloaded"})
    both = config(*[pair(producer_content=PRODUCER, consumer_content=CONSUMER)] * 2)
    result = await Contract(service)(both, request(), None)
    assert result.verdict == "error"
    assert all(p["empty_output"] for p in result.details["pair_results"])
    (fake_judges.bin_dir / "claude").unlink()
    result = await Contract(service)(both, request(), None)
    assert result.verdict == "error"
    assert result.details["missing_dependency"] is True
    assert "pair_results" not in result.details


async def test_files_outside_the_root_are_refused(judge_service, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    service = judge_service("claude-code", workspace_root=str(root))
    with pytest.raises(PermissionDenied):
        await Contract(service)(config(pair(producer="../../etc/passwd", consumer_content="")), request(), None)


async def test_a_huge_reason_or_made_up_verdict_is_clipped_in_the_pair_result(judge_service, fake_judges):
    reason = {"verdict": "no", "confidence": 0.8, "reason": "r" * 1_000_000}
    fake_judges.scenario({"stdout": answer_stdout("claude-code", reason)})
    service = judge_service("claude-code")
    result = await Contract(service)(config(pair(producer_content="a", consumer_content="b")), request(), None)
    assert result.verdict == "no"
    assert len(result.details["pair_results"][0]["reason"]) < 5000
    made_up = {"verdict": "v" * 1_000_000, "confidence": 0.8, "reason": "?"}
    fake_judges.scenario({"stdout": answer_stdout("claude-code", made_up)})
    result = await Contract(service)(config(pair(producer_content="a", consumer_content="b")), request(), None)
    assert result.verdict == "error"
    assert len(result.details["pair_results"][0]["error"]) < 1000


@contextlib.contextmanager
def fifo(path: Path) -> Iterator[Path]:
    """A FIFO nobody writes to; afterwards a writer is opened and closed, so a reader stuck on it gets its EOF."""
    os.mkfifo(path)
    try:
        yield path
    finally:
        with contextlib.suppress(OSError):
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


async def test_a_fifo_or_an_oversized_file_is_a_pair_error_not_a_hang(judge_service, fake_judges, tmp_path):
    """Reading a FIFO blocked a worker thread for ever (no cancellation reaches it); a huge file was read whole."""
    root = tmp_path / "root"
    root.mkdir()
    with open(root / "huge.log", "wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)
    fake_judges.scenario(answer("yes"))
    service = judge_service("claude-code", workspace_root=str(root))
    with fifo(root / "pipe"):
        result = await asyncio.wait_for(
            Contract(service)(
                config(
                    pair(producer="pipe", consumer_content=CONSUMER),
                    pair(producer="huge.log", consumer_content=CONSUMER),
                ),
                request(),
                None,
            ),
            timeout=10,
        )
    assert result.verdict == "error"
    first, second = result.details["pair_results"]
    assert first["error"] == "cannot read producer file: not a regular file"
    assert "bytes are not read" in second["error"]
    assert fake_judges.calls() == []


@pytest.mark.parametrize(
    ("producer", "error"),
    [("p" * 256, InvalidArgument), ("sub/" * 1100, InvalidArgument), ("alias/producer.py", PermissionDenied)],
)
async def test_paths_the_kernel_refuses_name_the_pair_field(judge_service, tmp_path, producer, error):
    """ENAMETOOLONG and a link on the way (ELOOP) are the caller's: INVALID_ARGUMENT or PERMISSION_DENIED naming
    the pair's field, never INTERNAL. A link is refused even when it stays inside the root."""
    root = tmp_path / "root"
    (root / "real").mkdir(parents=True)
    (root / "real" / "producer.py").write_text(PRODUCER)
    (root / "alias").symlink_to("real")
    service = judge_service("claude-code", workspace_root=str(root))
    with pytest.raises(error) as refused:
        await Contract(service)(config(pair(producer=producer, consumer_content="")), request(), None)
    assert refused.value.metadata["field"] == "config.pairs[0].producer"
