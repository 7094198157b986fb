"""`verdict calibrate` on the labelled set in the repo, through real judge processes (the stand-in CLI as claude)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.judges.standins import answer_key, install_cli

REPO_SET = Path(__file__).resolve().parents[2] / "deploy" / "calibration"


def _calibrate(path: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("VERDICT_")}
    env.update({"PATH": path, "VERDICT_JUDGE_HOST": "claude-code", "VERDICT_JUDGE_TIMEOUT_SECONDS": "20"})
    return subprocess.run(
        [sys.executable, "-m", "verdict", "calibrate", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def test_calibrate_reports_a_trustworthy_judge_and_flags_a_biased_one(tmp_path: Path) -> None:
    path = install_cli(
        tmp_path / "bin",
        {"good": {}, "first": {"mode": "first", "rate": 0.5, "seed": 4}},
        answer_key(REPO_SET),
    )
    report = tmp_path / "report.json"
    done = _calibrate(
        path, "--cases", str(REPO_SET), "--judge", "claude/good", "--judge", "claude/first", "--report", str(report)
    )
    print(done.stdout)
    assert done.returncode == 1, done.stderr  # the biased judge drifts
    document = json.loads(report.read_text())
    good, biased = document["judges"]
    assert good["judge"] == "claude-code/good"
    assert good["accuracy"] == 1.0
    assert good["kappa"] == 1.0
    assert good["position_bias"] == 0.0
    assert good["cost_usd"] > 0
    assert not any(verdict["drifting"] for verdict in good["drift"].values())
    assert biased["position_bias"] == 1.0  # always picks the output shown first
    assert biased["drift"]["comparator"]["drifting"] is True
    assert biased["evaluators"]["comparator"]["confusion"] == {"yes": {"tie": 3}, "no": {"tie": 3}}
    assert "claude-code/first" in done.stdout
    assert "DRIFT" in done.stdout
    assert "claude-code/good" in done.stdout


def test_calibrate_against_a_baseline_and_its_usage_errors(tmp_path: Path) -> None:
    path = install_cli(tmp_path / "bin", {"good": {}}, answer_key(REPO_SET))
    report = tmp_path / "report.json"
    first = _calibrate(
        path, "--cases", str(REPO_SET / "comparator.yaml"), "--judge", "claude/good", "--report", str(report)
    )
    assert first.returncode == 0, first.stdout + first.stderr
    again = _calibrate(
        path,
        "--cases",
        str(REPO_SET / "comparator.yaml"),
        "--judge",
        "claude/good",
        "--baseline",
        str(report),
        "--json",
    )
    assert again.returncode == 0
    assert json.loads(again.stdout)["judges"][0]["drift"]["comparator"]["baseline"] == 1.0
    missing = _calibrate(path, "--judge", "claude/good")
    assert missing.returncode == 2
    assert "calibration_path" in missing.stderr
    unknown = _calibrate(path, "--cases", str(REPO_SET), "--judge", "nosuch/x")
    assert unknown.returncode == 2
    assert "unknown judge host" in unknown.stderr
