"""Known-answer calibration with stand-in judges of known error rates: the statistics, the drift rule, the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from tests.judges.standins import Profile, StandIns, StandInService, case_output, wrong
from verdict.evaluators.catalogue import validate
from verdict.judges import HOSTS
from verdict.judges.calibration import Calibrator, JudgeUnderTest, drift, judges_to_calibrate, publish
from verdict.judges.calibration_cases import CalibrationCase, load_cases
from verdict.judges.calibration_report import baseline_kappas, report_document
from verdict.judges.kappa import agreement, cohen_kappa
from verdict.metrics import Metrics

REPO_SET = Path(__file__).resolve().parents[2] / "deploy" / "calibration"
CLAUDE = HOSTS.by_name["claude-code"]


def labelled(count: int) -> list[CalibrationCase]:
    """`count` balanced yes/no llm_structured cases whose truth the stand-ins read from the output."""
    return [
        CalibrationCase(
            f"case-{i}",
            "llm_structured",
            "yes" if i % 2 else "no",
            case_output(i, "yes" if i % 2 else "no"),
            validate({"type": "llm_structured", "prompt": "Did it succeed?"}),
        )
        for i in range(count)
    ]


def comparisons(count: int) -> list[CalibrationCase]:
    """Comparator cases: the higher SCORE wins; the output wins on odd cases."""
    cases = []
    for i in range(count):
        output, baseline = (f"case {i}\nSCORE: 9", f"case {i}\nSCORE: 1")
        if i % 2 == 0:
            output, baseline = baseline, output
        settings = validate({"type": "comparator", "baseline": baseline})
        cases.append(CalibrationCase(f"cmp-{i}", "comparator", "yes" if i % 2 else "no", output, settings))
    return cases


# --- the statistics --------------------------------------------------------------------------------------------------


def test_kappa_is_one_for_agreement_zero_for_chance_and_one_minus_twice_the_error_rate() -> None:
    assert cohen_kappa([("yes", "yes"), ("no", "no")]) == 1.0
    assert cohen_kappa([("yes", "yes"), ("no", "yes")]) == 0.0  # always yes: no better than chance
    pairs = [("yes", "yes")] * 40 + [("yes", "no")] * 10 + [("no", "no")] * 40 + [("no", "yes")] * 10
    assert cohen_kappa(pairs) == pytest.approx(0.6)
    assert cohen_kappa([]) == 0.0
    stats = agreement([("yes", "yes"), ("no", "yes"), ("no", None)])
    assert (stats.answered, stats.malfunctions, stats.accuracy) == (2, 1, 0.5)
    assert stats.confusion == {"yes": {"yes": 1}, "no": {"yes": 1}}


# --- the target: a 30 %-wrong judge on 200 cases ---------------------------------------------------------------------


async def test_calibrating_a_30_percent_wrong_judge_measures_it_within_005_and_the_alert_fires() -> None:
    metrics = Metrics(CollectorRegistry(), model_labels=("weak",))
    standins = StandIns({"weak": Profile(rate=0.3, seed=1)})
    calibrator = Calibrator(StandInService(standins, metrics))
    cases = labelled(200)
    report = await calibrator.run(JudgeUnderTest(CLAUDE, "weak"), cases)
    stats = report.by_evaluator()["llm_structured"]
    # the truth, from the stand-in's own error pattern
    wrong_cases = [case for case in range(200) if wrong(case, 1, 0.3)]
    true_accuracy = 1 - len(wrong_cases) / 200
    pairs = [(c.expected, c.expected if i not in wrong_cases else ("no" if c.expected == "yes" else "yes"))
             for i, c in enumerate(cases)]  # fmt: skip
    true_kappa = cohen_kappa(pairs)
    print(f"accuracy {stats.accuracy} (truth {true_accuracy:.3f}), kappa {stats.kappa} (truth {true_kappa:.3f})")
    assert abs(stats.accuracy - true_accuracy) <= 0.05
    assert abs(stats.kappa - true_kappa) <= 0.05
    # and the stand-in is the judge it stands for: its pattern is wrong 30 % of the time up to sampling noise (the
    # standard error over 200 cases is 0.032; seeds 1-7 give 0.23-0.38)
    assert abs(len(wrong_cases) / 200 - 0.3) <= 0.1
    assert abs(stats.kappa - (1 - 2 * 0.3)) <= 0.2
    verdicts = drift(report, None, floor=0.6, drop=0.1)
    assert verdicts["llm_structured"]["drifting"] is True
    assert verdicts["llm_structured"]["below_floor"] is True
    publish(metrics, report, verdicts)
    labels = {"judge": "claude-code/weak", "evaluator": "llm_structured"}
    assert metrics.registry.get_sample_value("verdict_judge_calibration_drift", labels) == 1
    assert metrics.registry.get_sample_value("verdict_judge_calibration_kappa", labels) == stats.kappa
    assert metrics.registry.get_sample_value(
        "verdict_judge_calibration_cases_total", {"judge": "claude-code/weak", "result": "wrong"}
    ) == len(wrong_cases)
    assert report.cost_usd == pytest.approx(200 * 0.01)
    confusion = {
        (expected, judged): metrics.registry.get_sample_value(
            "verdict_judge_calibration_confusion_cases", {**labels, "expected": expected, "judged": judged}
        )
        for expected in ("yes", "no")
        for judged in ("yes", "no")
    }
    assert confusion[("yes", "no")] + confusion[("no", "yes")] == len(wrong_cases)  # type: ignore[operator]
    assert confusion[("yes", "yes")] + confusion[("no", "no")] == 200 - len(wrong_cases)  # type: ignore[operator]


async def test_a_good_judge_does_not_drift_and_a_fall_from_its_baseline_does() -> None:
    standins = StandIns({"good": Profile(rate=0.0), "worse": Profile(rate=0.15, seed=3)})
    calibrator = Calibrator(StandInService(standins))
    cases = labelled(100)
    good = await calibrator.run(JudgeUnderTest(CLAUDE, "good"), cases)
    assert good.overall.kappa == 1.0
    assert drift(good, None, floor=0.6, drop=0.1)["llm_structured"]["drifting"] is False
    worse = await calibrator.run(JudgeUnderTest(CLAUDE, "worse"), cases)
    assert worse.overall.kappa > 0.6  # above the floor ...
    verdict = drift(worse, {"llm_structured": 1.0}, floor=0.6, drop=0.1)["llm_structured"]
    assert verdict["dropped"] is True  # ... but more than 0.1 under its baseline
    assert verdict["below_floor"] is False


async def test_comparator_position_bias_of_a_judge_that_always_picks_the_first_is_reported_as_a_rate() -> None:
    standins = StandIns({"first": Profile(mode="first"), "fair": Profile()})
    calibrator = Calibrator(StandInService(standins))
    cases = comparisons(40)
    biased = await calibrator.run(JudgeUnderTest(CLAUDE, "first"), cases)
    fair = await calibrator.run(JudgeUnderTest(CLAUDE, "fair"), cases)
    assert biased.position_bias == 1.0
    assert fair.position_bias == 0.0
    assert fair.overall.accuracy == 1.0
    assert {result.judged for result in biased.results} == {"tie"}  # both orders asked: never a false winner


async def test_a_malfunctioning_judge_is_counted_apart_and_drifts() -> None:
    calibrator = Calibrator(StandInService(StandIns({"dead": Profile(mode="crash")})))
    report = await calibrator.run(JudgeUnderTest(CLAUDE, "dead"), labelled(6))
    assert report.overall.malfunctions == 6
    assert report.overall.answered == 0
    assert drift(report, None, floor=0.6, drop=0.1)["llm_structured"]["drifting"] is True
    assert all(result.error for result in report.results)


def test_the_json_report_and_its_baseline_round_trip() -> None:
    from verdict.judges.calibration import CaseResult, JudgeReport

    report = JudgeReport(
        "claude-code/sonnet",
        (
            CaseResult("a", "llm_structured", "yes", "yes", 10, 0.01),
            CaseResult("b", "llm_structured", "no", "yes", 12, 0.01),
            CaseResult("c", "comparator", "yes", "tie", 30, 0.02, flipped=True),
        ),
    )
    document = report_document([report], {report.judge: drift(report, None, floor=0.6, drop=0.1)}, floor=0.6, drop=0.1)
    text = json.dumps(document)
    judge = json.loads(text)["judges"][0]
    assert judge["evaluators"]["llm_structured"]["accuracy"] == 0.5
    assert judge["position_bias"] == 1.0
    assert judge["results"][1]["right"] is False
    assert baseline_kappas(json.loads(text)) == {
        "claude-code/sonnet": {"llm_structured": report.by_evaluator()["llm_structured"].kappa, "comparator": 0.0}
    }


# --- the labelled set in the repo and case files ---------------------------------------------------------------------


def test_the_repo_set_loads_and_is_balanced() -> None:
    cases = load_cases(REPO_SET)
    assert len(cases) >= 20
    by_label = {label: sum(case.expected == label for case in cases) for label in ("yes", "no")}
    assert min(by_label.values()) >= len(cases) // 3
    assert {case.evaluator for case in cases} == {"llm_structured", "comparator"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("cases:\n  - {id: a, expected: yes, output: x, colour: red}\n", "unknown keys"),
        ("cases:\n  - {id: a, expected: yes}\n  - {id: a, expected: no}\n", "used twice"),
        ("cases:\n  - {id: a, expected: yes, evaluator: exit_code}\n", "evaluator must be one of"),
        ("cases:\n  - {id: a, expected: yes, config: {judges: [{host: claude}]}}\n", "names no judge"),
        ("cases:\n  - {id: a, expected: yes, config: {min_confidence: 7}}\n", "min_confidence"),
        ("cases:\n  - {id: a}\n", "needs `expected`"),
        ("cases: []\n", "no calibration cases"),
        ("nothing: here\n", "must hold a list"),
    ],
)
def test_a_broken_case_file_is_refused_naming_the_case(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text(body)
    with pytest.raises(ValueError, match=message):
        load_cases(path)


def test_judges_to_calibrate_default_to_the_judge_host_and_the_panel_members(tmp_path: Path) -> None:
    from verdict.judges.panels import load_panel_book

    service = StandInService(StandIns())
    panels_file = tmp_path / "panels.yaml"
    panels_file.write_text("panels:\n  p:\n    judges: [{host: claude, model: a}, {host: codex}, {host: claude}]\n")
    book = load_panel_book(str(panels_file), HOSTS)
    judges = judges_to_calibrate((), service, book)
    assert [judge.label("sonnet") for judge in judges] == [
        "claude-code/sonnet",
        "claude-code/a",
        "codex/sonnet",
        "panel/p",
    ]
    named = judges_to_calibrate(("claude/haiku", "codex", "p"), service, book)
    assert [judge.label("sonnet") for judge in named] == ["claude-code/haiku", "codex/sonnet", "panel/p"]


async def test_a_named_panel_is_calibrated_as_a_unit_and_beats_its_members(tmp_path: Path) -> None:
    from verdict.judges.panels import load_panel_book

    panels_file = tmp_path / "panels.yaml"
    panels_file.write_text("panels:\n  trio:\n    judges: [{host: claude, model: a}, {host: claude, model: b}, "
                           "{host: claude, model: c}]\n")  # fmt: skip
    standins = StandIns({model: Profile(rate=0.2, seed=seed) for seed, model in enumerate("abc", start=1)})
    metrics = Metrics(CollectorRegistry())
    calibrator = Calibrator(StandInService(standins, metrics), load_panel_book(str(panels_file), HOSTS))
    cases = labelled(200)
    panel = await calibrator.run(JudgeUnderTest(panel="trio"), cases)
    members = [await calibrator.run(JudgeUnderTest(CLAUDE, model), cases) for model in "abc"]
    print("panel", panel.overall.accuracy, "members", [member.overall.accuracy for member in members])
    assert panel.judge == "panel/trio"
    assert panel.overall.accuracy > max(member.overall.accuracy for member in members)
    publish(metrics, panel, drift(panel, None, floor=0.6, drop=0.1))
    kappa = metrics.registry.get_sample_value(
        "verdict_judge_calibration_kappa", {"judge": "panel/trio", "evaluator": "llm_structured"}
    )
    assert kappa == panel.overall.kappa
