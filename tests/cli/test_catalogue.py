"""`verdict evaluators`: the catalogue offline, as a table and as JSON, the same as ListEvaluators answers."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support import ServerProcess
from verdict.evaluators import CATALOGUE


def _evaluators(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "verdict", "evaluators", *args], capture_output=True, text=True, timeout=60
    )


def test_json_lists_every_type_with_its_fields_and_verdicts() -> None:
    done = _evaluators("--format", "json")
    assert done.returncode == 0, done.stderr
    listed = {info["type"]: info for info in json.loads(done.stdout)["evaluators"]}
    assert set(listed) == set(CATALOGUE.specs)
    numeric = listed["output_numeric"]
    assert {field["name"] for field in numeric["fields"]} >= {"operator", "target"}
    assert numeric["verdicts"] == ["yes", "no", "error"]


def test_the_table_shows_each_type_its_flags_and_fields() -> None:
    done = _evaluators()
    assert done.returncode == 0
    for spec in CATALOGUE.specs.values():
        assert f"\n{spec.type}" in f"\n{done.stdout}"
    assert "llm_structured  [uses_judge" in done.stdout
    assert "    operator  string (required)" in done.stdout


def test_one_type_and_an_unknown_one() -> None:
    done = _evaluators("exit_code", "--format", "json")
    assert [info["type"] for info in json.loads(done.stdout)["evaluators"]] == ["exit_code"]
    done = _evaluators("exit_cod")
    assert done.returncode == 2
    assert "exit_code" in done.stderr


def test_offline_is_what_a_server_answers(server_process: ServerProcess) -> None:
    offline = json.loads(_evaluators("--format", "json").stdout)
    remote = json.loads(_evaluators("--format", "json", "--target", server_process.target).stdout)
    assert offline == remote
