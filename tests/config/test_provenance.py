"""`verdict config --check` lists every error in a file, not the first; `verdict config --explain` names each value's
source (default, file, environment, flag), in the order `load_config` applies them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from verdict.config.keys import Config
from verdict.config.provenance import check_all, explained, provenance
from verdict.config.sources import load_config

BAD = "grpc_address: nope\nworkers: -3\nmax_message_bytes: 5\nlog_levle: INFO\nlog_level: LOUD\n"


def test_every_error_of_a_file_is_listed(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(BAD)
    errors = check_all(path)
    assert sorted(error.key for error in errors) == [
        "grpc_address",
        "log_level",
        "log_levle",
        "max_message_bytes",
        "workers",
    ]
    assert any("did you mean 'log_level'" in str(error) for error in errors)
    assert all(str(path) in str(error) for error in errors)


def test_a_valid_file_has_no_errors_and_the_same_config_as_load_config(tmp_path: Path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text("workers: 2\nlog_level: DEBUG\n")
    found = provenance(path, env={"VERDICT_WORKERS": "3"}, flags={"log_level": "WARNING", "grpc_address": None})
    assert found.errors == ()
    assert found.config == load_config(path, env={"VERDICT_WORKERS": "3"}, flags={"log_level": "WARNING"})
    assert found.sources["workers"] == "environment VERDICT_WORKERS"
    assert found.sources["log_level"] == "flag --log-level"
    assert found.sources["grpc_address"] == "default"
    rows = {row["key"]: row for row in explained(found)}
    assert rows["workers"] == {"key": "workers", "value": 3, "source": "environment VERDICT_WORKERS"}
    assert set(rows) == set(Config.__dataclass_fields__)


def test_secrets_are_masked_in_the_explanation() -> None:
    found = provenance(env={"VERDICT_DECISION_LOG_HTTP_TOKEN": "s3cret", "VERDICT_DECISION_LOG": "stdout"})
    rows = {row["key"]: row for row in explained(found)}
    assert rows["decision_log_http_token"]["value"] == "<masked>"


def test_the_cli_lists_every_error_and_explains(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(BAD)
    env = {k: v for k, v in os.environ.items() if not k.startswith("VERDICT_")}
    done = subprocess.run(
        [sys.executable, "-m", "verdict", "config", "--check", str(path)], capture_output=True, text=True, env=env
    )
    assert done.returncode == 2
    assert done.stderr.count("invalid configuration:") == 5
    assert "5 error(s)" in done.stderr
    ok = tmp_path / "ok.yaml"
    ok.write_text("workers: 2\n")
    done = subprocess.run(
        [sys.executable, "-m", "verdict", "config", "--explain", "--config", str(ok)],
        capture_output=True,
        text=True,
        env={**env, "VERDICT_LOG_LEVEL": "DEBUG"},
    )
    assert done.returncode == 0, done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines()}
    assert lines["workers"].endswith(f"(file {ok})")
    assert lines["log_level"].endswith("(environment VERDICT_LOG_LEVEL)")
    assert lines["grpc_address"].endswith("(default)")
