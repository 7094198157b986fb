"""`verdict evaluate --state-file`: a shell loop carries the state token in a file, with no parsing; and the printed
`details` keep one key order, so two runs diff clean."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def _evaluate(*args: str, output: str = "same output\n") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "verdict", "evaluate", *args], input=output, capture_output=True, text=True, timeout=60
    )


def test_a_shell_loop_carries_the_state_in_a_file(tmp_path: Path) -> None:
    token = tmp_path / "state.token"
    evaluator = "{type: action_stall, max_repeat: 2}"
    verdicts, counts = [], []
    for _ in range(3):
        done = _evaluate("--evaluator", evaluator, "--state-file", str(token))
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)
        verdicts.append(answer["verdict"])
        counts.append(answer["details"]["stall_count"])
        assert token.read_text().strip() == answer["state"]
    assert counts == [0, 1, 2]
    assert verdicts == ["yes", "yes", "no"]
    assert not list(tmp_path.glob(".*partial"))


def test_state_and_state_file_are_alternatives(tmp_path: Path) -> None:
    done = _evaluate("--evaluator", "{type: action_stall}", "--state", "AA==", "--state-file", str(tmp_path / "t"))
    assert done.returncode == 2
    assert "--state-file" in done.stderr


@pytest.mark.parametrize("run", range(3))
def test_printed_details_keys_are_sorted(run: int) -> None:
    done = _evaluate("--evaluator", "{type: action_stall, max_repeat: 2}")
    details = json.loads(done.stdout)["details"]
    assert list(details) == sorted(details)
