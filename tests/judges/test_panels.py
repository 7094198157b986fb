"""Judge panels with stand-in judges of known error rates: quorum, abstention, ties, cost, latency, cache, samples."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from tests.judges.standins import Profile, StandIns, StandInService, case_output, config, members, wrong
from verdict.errors import ConfigError, InvalidConfig
from verdict.evaluators.catalogue import validate
from verdict.evaluators.model import EvaluationInput
from verdict.judges import HOSTS, Comparator, Contract, LlmStructured
from verdict.judges.agreement import Agreement
from verdict.judges.panels import load_panel_book
from verdict.judges.ruling_stores import MemoryStore
from verdict.judges.rulings import RulingCache
from verdict.judges.votes import decide, needed_answers, spread
from verdict.metrics import Metrics

CASES = 500


def truth(case: int) -> str:
    return "yes" if case % 2 else "no"


def evaluator(standins: StandIns, *, cache: bool = False, **service: Any) -> LlmStructured:
    judge_service = StandInService(standins, **service)
    rulings = (
        RulingCache(MemoryStore(max_entries=10_000, ttl=3600), judge_service.metrics, wait_seconds=5) if cache else None
    )
    return LlmStructured(judge_service, rulings, agreement=Agreement(judge_service.metrics))


async def judge(evaluator: LlmStructured, case: int, **settings: Any) -> Any:
    return await evaluator(config(**settings), EvaluationInput({}, output=case_output(case, truth(case))), None)


# --- the vote, pure ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("votes", "quorum", "tie", "verdict", "how"),
    [
        (["yes", "yes", "no"], "majority", "error", "yes", "quorum"),
        (["yes", None, "yes"], "majority", "error", "yes", "quorum"),
        (["yes", None, None], "majority", "first", None, "below_quorum"),
        (["yes", "no", None], "majority", "error", None, "no_winner"),
        (["yes", "no", None], "majority", "cautious", "no", "tie_cautious"),
        (["yes", "no", None], "majority", "first", "yes", "tie_first"),
        ([None, "no", "yes"], "majority", "first", "no", "tie_first"),
        (["yes", "yes", "yes"], "unanimous", "error", "yes", "quorum"),
        (["yes", "yes", "no"], "unanimous", "cautious", "no", "tie_cautious"),
        (["yes", "yes", None], "unanimous", "error", "yes", "quorum"),
        (["yes", "no", "no", "yes"], "2", "error", None, "no_winner"),
        (["yes", "no", "no", None], "2", "error", "no", "quorum"),
        (["yes", None, None, None], "2", "first", None, "below_quorum"),
    ],
)
def test_the_quorum_counts_answers_and_the_tie_policy_decides_the_rest(
    votes: list[str | None], quorum: str, tie: str, verdict: str | None, how: str
) -> None:
    decision = decide(votes, quorum, tie, "no")
    assert (decision.verdict, decision.how) == (verdict, how)
    assert decision.answered == sum(vote is not None for vote in votes)


def test_needed_answers_and_spread() -> None:
    assert [needed_answers("majority", n) for n in (1, 2, 3, 4, 5)] == [1, 2, 2, 3, 3]
    assert needed_answers("unanimous", 3) == 2
    assert needed_answers("2", 5) == 2
    assert spread({"yes": 3, "no": 1}) == 0.25
    assert spread({}) == 0.0


# --- the target: three 20 %-wrong judges, majority ------------------------------------------------------------------


async def test_a_majority_of_three_20_percent_wrong_judges_is_wrong_at_most_12_percent_of_the_time() -> None:
    standins = StandIns({model: Profile(rate=0.2, seed=seed) for seed, model in enumerate("abc", start=1)})
    panel = evaluator(standins)
    single = evaluator(standins)
    panel_wrong = single_wrong = 0
    for case in range(CASES):
        result = await judge(panel, case, judges=members("a", "b", "c"), quorum="majority")
        assert result.verdict in ("yes", "no"), result.details
        panel_wrong += result.verdict != truth(case)
        alone = await judge(single, case, model="a")
        single_wrong += alone.verdict != truth(case)
    print(f"panel wrong {panel_wrong / CASES:.3f}, single wrong {single_wrong / CASES:.3f} over {CASES} cases")
    # the stand-ins are each wrong 20 % of the time (measured, not assumed) and the panel is right where two are
    assert 0.15 <= single_wrong / CASES <= 0.25
    expected = sum(sum(wrong(case, seed, 0.2) for seed in (1, 2, 3)) >= 2 for case in range(CASES))
    assert panel_wrong == expected
    assert panel_wrong / CASES <= 0.12


# --- members that malfunction abstain -------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["hang", "crash", "garbage"])
async def test_a_member_that_malfunctions_abstains_named_and_the_rest_decide(mode: str) -> None:
    standins = StandIns({"a": Profile(), "b": Profile(), "c": Profile(mode=mode)})
    panel = evaluator(standins, judge_timeout_seconds=1)
    result = await judge(panel, 3, judges=members("a", "b", "c"))
    assert result.verdict == "yes"
    summary = result.details["panel"]
    assert summary["abstained"] == ["claude-code/c"]
    broken = summary["members"][2]
    assert broken["abstained"] is True
    assert broken["malfunction"] == {"hang": "timeout", "crash": "api_error", "garbage": "invalid_verdict"}[mode]
    assert summary["answered"] == 2
    assert summary["votes"] == {"yes": 2}
    metrics = panel.service.metrics
    reason = broken["malfunction"]
    assert (
        metrics.registry.get_sample_value(
            "verdict_judge_abstentions_total", {"judge": "claude-code/c", "reason": reason}
        )
        == 1
    )


async def test_below_quorum_is_error_never_a_guess() -> None:
    standins = StandIns({"a": Profile(), "b": Profile(mode="crash"), "c": Profile(mode="garbage")})
    result = await judge(evaluator(standins), 3, judges=members("a", "b", "c"), tie="first")
    assert result.verdict == "error"
    assert result.details["below_quorum"] is True
    assert result.details["panel"]["abstained"] == ["claude-code/b", "claude-code/c"]
    assert "only 1 of 3 judges answered" in result.details["error"]


async def test_a_split_panel_follows_its_tie_policy() -> None:
    standins = StandIns({"a": Profile(), "b": Profile(rate=1.0), "c": Profile(mode="crash")})
    panel = evaluator(standins)
    split = {"judges": members("a", "b", "c")}
    assert (await judge(panel, 3, **split)).verdict == "error"
    assert (await judge(panel, 3, **split, tie="cautious")).verdict == "no"
    assert (await judge(panel, 3, **split, tie="first")).verdict == "yes"  # a, the first listed, answered yes


async def test_unanimous_and_k_quorums() -> None:
    standins = StandIns({"a": Profile(), "b": Profile(), "c": Profile(rate=1.0)})
    panel = evaluator(standins)
    assert (await judge(panel, 3, judges=members("a", "b", "c"), quorum="unanimous")).verdict == "error"
    assert (await judge(panel, 3, judges=members("a", "b", "c"), quorum="2")).verdict == "yes"
    assert (await judge(panel, 3, judges=members("a", "b", "c"), quorum="3", tie="cautious")).verdict == "no"


# --- cost, latency, concurrency -------------------------------------------------------------------------------------


async def test_members_are_asked_at_once_and_the_panel_reports_total_cost_and_slowest_latency() -> None:
    standins = StandIns(
        {"a": Profile(delay=0.2, cost=0.01), "b": Profile(delay=0.3, cost=0.02), "c": Profile(delay=0.4)}
    )
    panel = evaluator(standins)
    started = time.monotonic()
    result = await judge(panel, 3, judges=members("a", "b", "c"))
    elapsed_ms = (time.monotonic() - started) * 1000
    summary = result.details["panel"]
    # structural: every member started before any finished, so the members overlapped
    assert max(call.started for call in standins.calls) < min(call.ended for call in standins.calls)
    assert summary["cost_usd"] == pytest.approx(0.04)
    assert [member["cost_usd"] for member in summary["members"]] == [0.01, 0.02, 0.01]
    slowest = max(member["latency_ms"] for member in summary["members"])
    assert summary["latency_ms"] == slowest
    print(f"panel {elapsed_ms:.0f} ms / slowest member {slowest} ms = {elapsed_ms / slowest:.3f}")
    assert result.details["judge_host"] == "panel"


# --- the cache and self-consistency ---------------------------------------------------------------------------------


async def test_each_member_is_cached_under_its_own_key() -> None:
    standins = StandIns({"a": Profile(), "b": Profile(), "c": Profile()})
    panel = evaluator(standins, cache=True)
    first = await judge(panel, 3, judges=members("a", "b", "c"))
    assert len(standins.calls) == 3
    assert first.details["cached"] is False
    again = await judge(panel, 3, judges=members("a", "b", "c"))
    assert len(standins.calls) == 3
    assert again.details["cached"] is True
    assert [member["cached"] for member in again.details["panel"]["members"]] == [True, True, True]
    assert again.details["panel"]["cost_usd"] == 0
    other = await judge(panel, 3, judges=members("a", "d"), quorum="2")  # a is replayed, only d is asked
    assert [call.model for call in standins.calls[3:]] == ["d"]
    assert other.verdict == "yes"
    alone = await judge(panel, 3, model="b")  # the single judge's question is the panel member's
    assert alone.details["cached"] is True
    assert len(standins.calls) == 4


async def test_samples_ask_one_judge_n_times_report_the_spread_and_replay_on_retry() -> None:
    standins = StandIns({"a": Profile()})
    panel = evaluator(standins, cache=True)
    result = await judge(panel, 3, model="a", samples=3)
    assert result.verdict == "yes"
    summary = result.details["panel"]
    assert summary["samples"] == 3
    assert summary["spread"] == 0.0
    assert [member["sample"] for member in summary["members"]] == [0, 1, 2]
    assert [call.temperature for call in standins.calls] == [None, 0.7, 0.7]
    retried = await judge(panel, 3, model="a", samples=3)
    assert len(standins.calls) == 3
    assert retried.details["cached"] is True
    assert retried.verdict == result.verdict


async def test_samples_of_a_judge_that_disagrees_with_itself_show_it() -> None:
    class Flaky(StandInService):
        async def ask(self, request: Any) -> Any:
            answer = await super().ask(request)
            if request.temperature and answer.payload is not None:
                answer.payload["verdict"] = "no"
            return answer

    standins = StandIns({"a": Profile()})
    result = await LlmStructured(Flaky(standins))(
        config(model="a", samples=5), EvaluationInput({}, output=case_output(3, "yes")), None
    )
    assert result.verdict == "no"
    assert result.details["panel"]["votes"] == {"yes": 1, "no": 4}
    assert result.details["panel"]["spread"] == 0.2


# --- named panels, validation ---------------------------------------------------------------------------------------


def test_named_panels_load_from_the_panels_file(tmp_path: Path) -> None:
    path = tmp_path / "panels.yaml"
    path.write_text(
        "panels:\n  panel-a:\n    judges: [{host: claude, model: a}, {host: codex}, {host: gemini, model: c}]\n"
        "    quorum: 2\n    tie: cautious\n"
    )
    book = load_panel_book(str(path), HOSTS)
    panel = book["panel-a"]
    assert [(m.host.name if m.host else None, m.model) for m in panel.members] == [
        ("claude-code", "a"),
        ("codex", ""),
        ("gemini", "c"),
    ]
    assert (panel.quorum, panel.tie, panel.samples) == ("2", "cautious", 1)
    path.write_text("panels:\n  bad:\n    judges: [{host: nosuch}]\n")
    with pytest.raises(ConfigError, match="unknown judge host"):
        load_panel_book(str(path), HOSTS)
    path.write_text("panels:\n  bad:\n    judges: [{host: claude}]\n    quorum: 3\n")
    with pytest.raises(ConfigError, match="quorum"):
        load_panel_book(str(path), HOSTS)


async def test_a_request_names_a_server_panel(tmp_path: Path) -> None:
    path = tmp_path / "panels.yaml"
    path.write_text("panels:\n  panel-a:\n    judges: [{host: claude, model: a}, {host: claude, model: b}]\n")
    standins = StandIns({"b": Profile(mode="crash")})
    service = StandInService(standins)
    evaluator = LlmStructured(service, panels=load_panel_book(str(path), HOSTS))
    result = await evaluator(
        config(judge="panel-a", tie="first"), EvaluationInput({}, output=case_output(3, "yes")), None
    )
    assert result.details["panel"]["name"] == "panel-a"
    assert result.verdict == "error"  # one of two answered: a majority of two needs both
    with pytest.raises(InvalidConfig) as raised:
        await evaluator(config(judge="panel-z"), EvaluationInput({}, output="x"), None)
    assert raised.value.field == "config.judge"


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"judges": [{"model": "a"}]}, "config.judges[0].host"),
        ({"judges": [{"host": "claude", "temperature": 1}]}, "config.judges[0].temperature"),
        ({"judges": members("a", "b"), "judge": "panel-a"}, "config.judge"),
        ({"judges": members("a", "b"), "quorum": "3"}, "config.quorum"),
        ({"quorum": "most"}, "config.quorum"),
        ({"samples": 0}, "config.samples"),
        ({"tie": "coin"}, "config.tie"),
        ({"judges": members(*"abcdefghij")}, "config.judges"),
        ({"judges": members("a", "b", "c", "d"), "samples": 3}, "config.samples"),
        ({"judges": members("a", "b", "a")}, "config.judges[2]"),
    ],
)
def test_panel_settings_are_checked_naming_the_field(settings: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidConfig) as raised:
        validate({"type": "llm_structured", **settings})
    assert raised.value.field == field


def test_a_yaml_quorum_may_be_a_number() -> None:
    assert validate({"type": "comparator", "baseline": "x", "quorum": 2, "judges": members("a", "b")})["quorum"] == "2"


async def test_an_unknown_member_host_is_invalid_argument_naming_it() -> None:
    with pytest.raises(InvalidConfig) as raised:
        await judge(evaluator(StandIns()), 3, judges=[{"host": "claude"}, {"host": "nosuch"}])
    assert raised.value.field == "config.judges[1].host"


# --- comparator and contract panels ---------------------------------------------------------------------------------


async def test_a_comparator_panel_votes_on_each_members_both_order_ruling() -> None:
    standins = StandIns({"a": Profile(), "b": Profile(), "c": Profile(mode="first")})
    service = StandInService(standins)
    comparator = Comparator(service)
    settings = validate({"type": "comparator", "baseline": "case 1\nSCORE: 3", "judges": members("a", "b", "c")})
    result = await comparator(settings, EvaluationInput({}, output="case 1\nSCORE: 9"), None)
    assert result.verdict == "yes"
    votes = [member["vote"] for member in result.details["panel"]["members"]]
    assert votes == ["yes", "yes", "tie"]  # the position-biased member's both orders cancel into a tie
    assert len(standins.calls) == 6


async def test_a_contract_panel() -> None:
    standins = StandIns({"a": Profile(), "b": Profile(rate=1.0), "c": Profile()})
    contract = Contract(StandInService(standins))
    pair = {"producer_content": "case 2\nRESULT: yes", "consumer_content": "reads it", "producer": "p", "consumer": "c"}
    settings = validate({"type": "contract", "pairs": [pair], "judges": members("a", "b", "c")})
    result = await contract(settings, EvaluationInput({}), None)
    assert result.verdict == "yes"
    assert result.details["panel"]["votes"] == {"yes": 2, "no": 1}


# --- agreement in production ----------------------------------------------------------------------------------------


async def test_a_member_that_starts_disagreeing_shows_in_the_agreement_gauges() -> None:
    standins = StandIns({"a": Profile(), "b": Profile(), "c": Profile(rate=0.5, seed=9)})
    metrics = Metrics(CollectorRegistry(), model_labels=("a", "b", "c"))
    panel = evaluator(standins, metrics=metrics)
    for case in range(100):
        await judge(panel, case, judges=members("a", "b", "c"))
    registry = metrics.registry

    def pair(a: str, b: str) -> float | None:
        labels = {"panel": "inline", "judge_a": f"claude-code/{a}", "judge_b": f"claude-code/{b}"}
        return registry.get_sample_value("verdict_judge_agreement_ratio", labels)

    assert pair("a", "b") == 1.0
    assert pair("a", "c") == pytest.approx(1 - sum(wrong(case, 9, 0.5) for case in range(100)) / 100)
    assert (pair("a", "c") or 1.0) < 0.7
    member_c = registry.get_sample_value(
        "verdict_judge_panel_agreement_ratio", {"panel": "inline", "judge": "claude-code/c"}
    )
    assert member_c is not None
    assert member_c < 0.7
    assert (
        registry.get_sample_value("verdict_judge_verdicts_total", {"evaluator": "llm_structured", "how": "quorum"})
        == 100
    )


async def test_cancelling_a_panel_call_cancels_every_member() -> None:
    standins = StandIns({"a": Profile(delay=30), "b": Profile(delay=30)})
    task = asyncio.create_task(judge(evaluator(standins), 3, judges=members("a", "b")))
    for _ in range(1000):
        if len(standins.calls) == 2:
            break
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert all(call.ended for call in standins.calls)


def test_the_models_of_named_panels_and_calibrated_judges_become_metric_labels(tmp_path: Path) -> None:
    from verdict.config.keys import Config
    from verdict.judges import build_judges
    from verdict.runner import Runner

    path = tmp_path / "panels.yaml"
    path.write_text("panels:\n  p:\n    judges: [{host: claude, model: opus}, {host: codex, model: gpt-5}]\n")
    metrics = Metrics(CollectorRegistry(), model_labels=("sonnet",))
    config = Config(judge_host="claude-code", judge_panels_file=str(path), calibration_judges=("claude/haiku",))
    build_judges(config, Runner(metrics), metrics, {"PATH": ""})
    assert [metrics.model_labels.fold(m) for m in ("sonnet", "opus", "gpt-5", "haiku", "other-model")] == [
        "sonnet",
        "opus",
        "gpt-5",
        "haiku",
        "other",
    ]


async def test_samples_after_the_first_ask_an_http_judge_for_a_temperature(
    judge_service: Any, chat_server: Any
) -> None:
    import json

    from tests.judges.support import chat_body

    answer = {"verdict": "yes", "confidence": 0.9, "reason": "the result line", "evidence": "RESULT: yes"}
    chat_server.replies = [(200, chat_body(json.dumps(answer)))]
    evaluator = LlmStructured(judge_service(chat_server.url))
    result = await evaluator(config(model="qwen", samples=3), EvaluationInput({}, output=case_output(3, "yes")), None)
    assert result.verdict == "yes"
    assert sorted(body["temperature"] for _, body in chat_server.requests) == [0, 0.7, 0.7]
