"""The ruling cache with the in-process store, driven through the real evaluators, runner and fake judge CLI."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.judges.support import RPC_OUTPUT, RPC_YES, FakeJudges, ServiceFactory, answer_stdout, sample
from verdict.evaluators.catalogue import validate
from verdict.evaluators.model import EvaluationInput
from verdict.judges import Comparator, Contract, LlmStructured
from verdict.judges.ruling_stores import MAX_RULING_BYTES, MemoryStore, StoredRuling
from verdict.judges.rulings import RulingCache, ruling_key
from verdict.metrics import Metrics

YES = {"stdout": answer_stdout("claude-code", RPC_YES)}
NO = {"stdout": answer_stdout("claude-code", {**RPC_YES, "verdict": "no", "reason": "changed its mind"})}
FAILED = {"stdout": "", "stderr": "overloaded", "rc": 1}


class Clock:
    """Unix time that a test moves by hand, for TTLs."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def cache(metrics: Metrics, *, max_entries: int = 100, ttl: float = 3600, clock: Clock | None = None) -> RulingCache:
    clock = clock or Clock()
    return RulingCache(
        MemoryStore(max_entries=max_entries, ttl=ttl, clock=clock), metrics, wait_seconds=30, clock=clock
    )


def llm(**fields: Any) -> dict[str, Any]:
    return validate({"type": "llm_structured", **fields}, judge_model="sonnet")


async def ask(evaluator: LlmStructured, output: str = RPC_OUTPUT, **fields: Any) -> Any:
    config = llm(**fields)
    return await evaluator(config, EvaluationInput(config=config, output=output), None)


def lookups(metrics: Metrics, result: str, evaluator: str = "llm_structured") -> float:
    return sample(metrics, "verdict_judge_cache_lookups_total", evaluator=evaluator, result=result)


async def test_a_repeated_question_gets_the_stored_ruling_and_says_so(
    judge_service: ServiceFactory, fake_judges: FakeJudges, metrics: Metrics
) -> None:
    fake_judges.scenario(YES, NO)  # asked again, the judge would change its mind
    clock = Clock()
    evaluator = LlmStructured(judge_service(), cache(metrics, clock=clock))
    first = await ask(evaluator)
    clock.now += 42.5
    second = await ask(evaluator)
    assert len(fake_judges.calls()) == 1
    assert (first.verdict, second.verdict) == ("yes", "yes")
    assert first.details["cached"] is False
    assert second.details["cached"] is True
    assert second.details["cached_age_seconds"] == 42.5
    assert {k: v for k, v in second.details.items() if not k.startswith("cached")} == {
        k: v for k, v in first.details.items() if k != "cached"
    }
    assert (lookups(metrics, "miss"), lookups(metrics, "hit")) == (1, 1)
    saved = sample(metrics, "verdict_judge_cache_saved_usd_total", evaluator="llm_structured")
    assert saved == pytest.approx(0.0123), "the recorded claude envelope reports total_cost_usd 0.0123"


@pytest.mark.parametrize(
    "change",
    [
        {"output": "running 12 checks\nAll 42 tests passed\nand one more line\n"},
        {"model": "opus"},
        {"prompt": "Did the build pass?"},
        {"min_confidence": 0.95},
        {"uncertain_suffix": True},
        {"schema": {"type": "object", "properties": {"verdict": {"type": "string"}}}},
    ],
)
async def test_anything_that_determines_the_ruling_is_another_question(
    judge_service: ServiceFactory, fake_judges: FakeJudges, metrics: Metrics, change: dict[str, Any]
) -> None:
    fake_judges.scenario(YES)
    evaluator = LlmStructured(judge_service(), cache(metrics))
    await ask(evaluator)
    changed = dict(change)
    output = changed.pop("output", RPC_OUTPUT)
    result = await ask(evaluator, output, **changed)
    assert result.details["cached"] is False
    assert len(fake_judges.calls()) == 2


async def test_the_whole_output_is_part_of_the_question_not_only_the_tail_the_judge_sees(
    judge_service: ServiceFactory, fake_judges: FakeJudges, metrics: Metrics
) -> None:
    """The evidence check reads the whole output: an output that differs only before the shown tail can flip it."""
    fake_judges.scenario(YES)
    evaluator = LlmStructured(judge_service(), cache(metrics))
    tail = "x" * 4000
    first = await ask(evaluator, "All 42 tests passed\n" + tail)
    second = await ask(evaluator, "no such line here\n" + tail)
    assert (first.verdict, second.verdict) == ("yes", "no")
    assert second.details["cached"] is False


async def test_fresh_asks_again_and_leaves_the_stored_ruling_alone(
    judge_service: ServiceFactory, fake_judges: FakeJudges, metrics: Metrics
) -> None:
    fake_judges.scenario(YES, NO, NO)
    evaluator = LlmStructured(judge_service(), cache(metrics))
    assert (await ask(evaluator)).verdict == "yes"
    sampled = await ask(evaluator, fresh=True)
    assert (sampled.verdict, sampled.details["cached"]) == ("no", False)
    replayed = await ask(evaluator)
    assert (replayed.verdict, replayed.details["cached"]) == ("yes", True)
    assert len(fake_judges.calls()) == 2
    assert lookups(metrics, "fresh") == 1


@pytest.mark.parametrize(
    "failure",
    [
        FAILED,
        {"stdout": answer_stdout("claude-code", {**RPC_YES, "confidence": "very"})},  # a malfunction, not a ruling
        {"hang": True},
    ],
    ids=["api-error", "invalid-confidence", "timeout"],
)
async def test_errors_and_malfunctions_are_never_cached(
    judge_service: ServiceFactory, fake_judges: FakeJudges, metrics: Metrics, failure: dict[str, Any]
) -> None:
    fake_judges.scenario(failure, YES)
    store = MemoryStore(max_entries=10, ttl=3600)
    evaluator = LlmStructured(judge_service(judge_timeout_seconds=1), RulingCache(store, metrics, wait_seconds=30))
    first = await ask(evaluator)
    assert (first.verdict, first.details["cached"]) == ("error", False)
    assert len(store) == 0
    second = await ask(evaluator)
    assert (second.verdict, second.details["cached"]) == ("yes", False)
    third = await ask(evaluator)
    assert (third.verdict, third.details["cached"]) == ("yes", True)
    assert len(fake_judges.calls()) == 2


async def test_a_ruling_expires_after_its_ttl(
    judge_service: ServiceFactory, fake_judges: FakeJudges, metrics: Metrics
) -> None:
    fake_judges.scenario(YES, NO)
    clock = Clock()
    evaluator = LlmStructured(judge_service(), cache(metrics, ttl=60, clock=clock))
    await ask(evaluator)
    clock.now += 59
    assert (await ask(evaluator)).details["cached"] is True
    clock.now += 1
    expired = await ask(evaluator)
    assert (expired.verdict, expired.details["cached"]) == ("no", False)
    assert len(fake_judges.calls()) == 2


async def test_least_recently_used_rulings_are_evicted_past_the_bound(
    judge_service: ServiceFactory, fake_judges: FakeJudges, metrics: Metrics
) -> None:
    fake_judges.scenario(YES)
    evaluator = LlmStructured(judge_service(), cache(metrics, max_entries=2))
    outputs = [f"All 42 tests passed\nrun {n}\n" for n in range(3)]
    await ask(evaluator, outputs[0])
    await ask(evaluator, outputs[1])
    assert (await ask(evaluator, outputs[0])).details["cached"] is True  # 0 is now the most recently used
    await ask(evaluator, outputs[2])  # evicts 1
    assert sample(metrics, "verdict_judge_cache_evictions_total", store="memory") == 1
    assert (await ask(evaluator, outputs[0])).details["cached"] is True
    assert (await ask(evaluator, outputs[1])).details["cached"] is False
    assert len(fake_judges.calls()) == 4


async def test_a_ruling_too_large_to_store_is_judged_each_time(metrics: Metrics) -> None:
    store = MemoryStore(max_entries=10, ttl=3600)
    assert await store.put("k", StoredRuling("yes", {"reason": "x" * MAX_RULING_BYTES}, 0.0)) == 0
    assert len(store) == 0


async def test_the_same_question_asked_at_once_is_judged_once(
    judge_service: ServiceFactory, fake_judges: FakeJudges, metrics: Metrics
) -> None:
    fake_judges.scenario({**YES, "sleep": 1})
    evaluator = LlmStructured(judge_service(), cache(metrics))
    results = await asyncio.gather(*(ask(evaluator) for _ in range(3)))
    assert [result.verdict for result in results] == ["yes"] * 3
    assert sorted(result.details["cached"] for result in results) == [False, True, True]
    assert len(fake_judges.calls()) == 1


async def test_off_judges_every_time_and_adds_no_detail(
    judge_service: ServiceFactory, fake_judges: FakeJudges, metrics: Metrics
) -> None:
    fake_judges.scenario(YES, NO)
    evaluator = LlmStructured(judge_service(), RulingCache(None, metrics, wait_seconds=30))
    first, second = await ask(evaluator), await ask(evaluator)
    assert (first.verdict, second.verdict) == ("yes", "no")
    assert "cached" not in first.details


def test_the_key_covers_every_part_of_the_material() -> None:
    material = {"evaluator": "llm_structured", "host": "claude-code claude", "model": "sonnet", "prompt": "p"}
    keys = {ruling_key(material)} | {ruling_key({**material, name: "other"}) for name in material}
    assert len(keys) == len(material) + 1
    assert ruling_key(dict(reversed(list(material.items())))) == ruling_key(material), "order does not matter"


def test_a_corrupt_stored_value_is_a_miss() -> None:
    for data in (b"not json", b"[]", b'{"v": 1, "d": {}, "t": 0, "c": 0}', b"\xff"):
        assert StoredRuling.decode(data) is None
    ruling = StoredRuling("yes", {"confidence": float("inf")}, 12.5, 0.01)
    assert StoredRuling.decode(ruling.encode()) == ruling


# --- comparator and contract -----------------------------------------------------------------------------------------


def _comparator_config(**fields: Any) -> dict[str, Any]:
    return validate({"type": "comparator", "baseline": "the old output", **fields}, judge_model="sonnet")


async def test_comparator_rulings_are_cached_and_a_replayed_win_still_promotes(
    judge_service: ServiceFactory, fake_judges: FakeJudges, metrics: Metrics
) -> None:
    win = {"verdict_a": "yes", "verdict_b": "no", "confidence": 0.8, "reason": "A"}
    fake_judges.scenario(
        {
            "stdout": answer_stdout("claude-code", {**win, "verdict_a": "no", "verdict_b": "yes"}),
            "match": [{"contains": "<output_a>\nthe new output", "stdout": answer_stdout("claude-code", win)}],
        }
    )
    evaluator = Comparator(judge_service(), cache(metrics))
    config = _comparator_config(auto_promote=True)
    request = EvaluationInput(config=config, output="the new output")
    first = await evaluator(config, request, None)
    second = await evaluator(config, request, None)
    assert (first.verdict, second.verdict) == ("yes", "yes")
    assert (first.details["cached"], second.details["cached"]) == (False, True)
    assert first.details["promoted"] is second.details["promoted"] is True
    assert len(fake_judges.calls()) == 2, "one ruling: the pair judged in both orders, once"
    assert lookups(metrics, "hit", "comparator") == 1


async def test_comparator_min_pairs_samples_within_one_ruling(
    judge_service: ServiceFactory, fake_judges: FakeJudges, metrics: Metrics
) -> None:
    """The cache is per ruling, not per judge call: min_pairs still asks the judge min_pairs times per order."""
    fake_judges.scenario({"stdout": answer_stdout("claude-code", {"verdict_a": "yes", "verdict_b": "yes"})})
    evaluator = Comparator(judge_service(), cache(metrics))
    config = _comparator_config(min_pairs=3)
    result = await evaluator(config, EvaluationInput(config=config, output="new"), None)
    assert result.verdict == "tie"
    assert len(fake_judges.calls()) == 6


def _contract_config(**pair: Any) -> dict[str, Any]:
    return validate({"type": "contract", "pairs": [pair]}, judge_model="sonnet")


async def test_contract_rulings_are_cached_unless_a_side_cannot_be_read(
    judge_service: ServiceFactory, fake_judges: FakeJudges, metrics: Metrics
) -> None:
    fake_judges.scenario(
        {"stdout": answer_stdout("claude-code", {"verdict": "yes", "confidence": 0.9, "reason": "aligned"})}
    )
    evaluator = Contract(judge_service(), cache(metrics))
    config = _contract_config(producer_content='{"user_id": 1}', consumer_content="reads user_id")
    first = await evaluator(config, EvaluationInput(config=config), None)
    second = await evaluator(config, EvaluationInput(config=config), None)
    assert (first.verdict, second.verdict) == ("yes", "yes")
    assert second.details["cached"] is True
    assert len(fake_judges.calls()) == 1
    unreadable = _contract_config(producer_content="x", consumer_content="y", consumer_pattern="nothing matches")
    for _ in range(2):
        result = await evaluator(unreadable, EvaluationInput(config=unreadable), None)
        assert result.verdict == "error"
        assert "cached" not in result.details
