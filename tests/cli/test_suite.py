"""`verdict test SUITE`: cases of inputs and expected verdicts, in process or against `--target`; one line per case,
a summary, JUnit XML, and exit status 1 on any mismatch (2 for a suite that cannot be read)."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.support import ServerProcess

SUITE = """
evaluators:
  tests_pass: {type: output_contains, pattern: "passed"}
cases:
  - name: a green pytest run routes on
    evaluator: tests_pass
    output: "12 passed in 0.4s"
    expect: yes
  - name: a red run does not
    evaluator: tests_pass
    output: "3 failed"
    expect: "no"
  - name: the same action three times stalls
    evaluator: {type: action_stall, max_repeat: 2}
    steps:
      - {output: same, expect: "yes"}
      - {output: same, expect: {verdict: "yes", details: {stall_count: 1}}}
      - {output: same, expect: "no"}
  - name: a numeric target from YAML text
    evaluator: "type: output_numeric\\noperator: ge\\ntarget: 3"
    output: "5"
    expect: {verdict: "yes", details: {value: 5}}
"""

FAILING = """
cases:
  - name: pinned verdict that changed
    evaluator: {type: exit_code}
    exit_code: 1
    expect: "yes"
  - name: details that changed
    evaluator: {type: output_numeric, operator: ge, target: 3}
    output: "5"
    expect: {verdict: "yes", details: {value: 6}}
  - name: a configuration the server refuses
    evaluator: {type: nope}
    expect: "yes"
  - name: still fine
    evaluator: {type: exit_code}
    expect: "yes"
"""


def _test(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "verdict", "test", *args], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_a_passing_suite_exits_0_with_a_summary_and_junit(tmp_path: Path) -> None:
    suite = _write(tmp_path, "loop.yaml", SUITE)
    done = _test(tmp_path, suite, "--junit", "report.xml")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(None, 1)[0] for line in lines[:-1]] == ["ok"] * 4
    assert json.loads(lines[-1])["summary"] | {"seconds": 0} == {"cases": 4, "passed": 4, "failed": 0, "seconds": 0}
    report = ET.parse(tmp_path / "report.xml").getroot()  # noqa: S314 - written by the run above
    assert (report.get("tests"), report.get("failures"), report.get("errors")) == ("4", "0", "0")
    assert next(case.get("name") for case in report.iter("testcase")) == "a green pytest run routes on"


def test_mismatches_exit_1_and_say_what_came(tmp_path: Path) -> None:
    suite = _write(tmp_path, "pinned.yaml", FAILING)
    done = _test(tmp_path, suite, "--junit", "report.xml")
    assert done.returncode == 1
    assert "FAIL  pinned verdict that changed\n        expected 'yes', got 'no'" in done.stdout
    assert "details.value: expected 6, got 5" in done.stdout
    assert "unknown evaluator type 'nope'" in done.stdout
    assert "ok    still fine" in done.stdout
    assert json.loads(done.stdout.splitlines()[-1])["summary"]["failed"] == 3
    report = ET.parse(tmp_path / "report.xml").getroot()  # noqa: S314 - written by the run above
    assert (report.get("tests"), report.get("failures"), report.get("errors")) == ("4", "2", "1")
    cases = {case.get("name"): case for case in report.iter("testcase")}
    assert cases["pinned verdict that changed"].find("failure") is not None
    assert cases["a configuration the server refuses"].find("error") is not None
    assert list(cases["still fine"]) == []


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("cases: []", "non-empty list `cases`"),
        ("cases:\n  - {evaluator: {type: exit_code}}", "no `expect`"),
        ("cases:\n  - {evaluator: 7, expect: 'yes'}", "is a name from `evaluators`"),
        ("cases:\n  - {evaluator: {type: exit_code}, expect: 'yes', outptu: x}", "unknown keys ['outptu']"),
        ("cases: [", "not valid YAML"),
    ],
)
def test_a_suite_that_cannot_be_read_exits_2_naming_the_problem(tmp_path: Path, text: str, said: str) -> None:
    done = _test(tmp_path, _write(tmp_path, "bad.yaml", text))
    assert done.returncode == 2
    assert said in done.stderr


def test_the_same_suite_against_a_running_server(server_process: ServerProcess, tmp_path: Path) -> None:
    passing = _write(tmp_path, "loop.yaml", SUITE)
    failing = _write(tmp_path, "pinned.yaml", FAILING)
    done = _test(tmp_path, passing, "--target", server_process.target)
    assert done.returncode == 0, done.stdout + done.stderr
    done = _test(tmp_path, passing, failing, "--target", server_process.target, "--junit", "both.xml")
    assert done.returncode == 1
    assert "unknown evaluator type 'nope'" in done.stdout
    report = ET.parse(tmp_path / "both.xml").getroot()  # noqa: S314 - written by the run above
    assert len(report.findall("testsuite")) == 2


def test_the_documented_suite_passes_as_written(tmp_path: Path) -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "evaluators.md").read_text()
    section = doc.split("## Pinning a loop's evaluators in CI", 1)[1]
    example = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    done = _test(tmp_path, _write(tmp_path, "evaluators.test.yaml", example))
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["summary"]["passed"] == 3
