"""`verdict config` prints the effective configuration (secrets masked) and `verdict config --check` validates a file;
/metrics carries the standard process_* and python_* series."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import yaml

from tests.support import ServerProcess
from verdict.config.effective import MASK, is_secret, render
from verdict.config.keys import Config, config_keys
from verdict.config.sources import load_config

ROOT = Path(__file__).resolve().parents[2]


def _verdict(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "verdict", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, **(env or {})},
    )


def test_config_prints_every_key_once_in_order_and_loads_back(tmp_path: Path) -> None:
    env = {"VERDICT_LOG_LEVEL": "DEBUG", "VERDICT_JUDGE_MODEL_LABELS": "sonnet,opus"}
    done = _verdict("config", env=env)
    assert done.returncode == 0, done.stderr
    printed = yaml.safe_load(done.stdout)
    assert tuple(printed) == config_keys()
    assert printed["log_level"] == "DEBUG"
    saved = tmp_path / "effective.yaml"
    saved.write_text(done.stdout)
    assert load_config(saved) == load_config(
        env={"VERDICT_LOG_LEVEL": "DEBUG", "VERDICT_JUDGE_MODEL_LABELS": "sonnet,opus"}
    )


def test_config_reads_the_file_then_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("grace_period_seconds: 7\nlog_level: WARNING\n")
    done = _verdict("config", "--config", str(path), env={"VERDICT_LOG_LEVEL": "ERROR"})
    printed = yaml.safe_load(done.stdout)
    assert (printed["grace_period_seconds"], printed["log_level"]) == (7.0, "ERROR")


def test_secret_values_are_masked_and_secret_locations_shown() -> None:
    assert is_secret("auth_token")
    assert is_secret("decision_log_http_token")
    assert is_secret("client_password")
    assert not is_secret("tls_key_file")
    assert not is_secret("auth_token_file")
    assert not is_secret("judge_api_key_file")
    assert not is_secret("judge_api_key_env")
    assert not is_secret("judge_model")
    assert not is_secret("max_message_bytes")
    secret_keys = [key for key in config_keys() if is_secret(key)]
    assert secret_keys, "some configuration key holds a secret"
    config = Config(**dict.fromkeys(secret_keys, "s3cr3t-value"))  # type: ignore[arg-type]
    text = render(config)
    assert "s3cr3t-value" not in text
    assert all(yaml.safe_load(text)[key] == MASK for key in secret_keys)
    assert all(yaml.safe_load(render(Config()))[key] == "" for key in secret_keys), "an unset secret is shown empty"


def test_check_accepts_the_shipped_config() -> None:
    done = _verdict("config", "--check", str(ROOT / "deploy" / "base" / "config.yaml"))
    assert done.returncode == 0, done.stderr
    assert "valid" in done.stdout


def test_check_names_the_bad_key_and_exits_two(tmp_path: Path) -> None:
    for text, key in (
        ("grpc_adress: '[::]:1'\n", "grpc_adress"),
        ("max_message_bytes: 3\n", "max_message_bytes"),
        ("log_format: xml\n", "log_format"),
    ):
        path = tmp_path / "bad.yaml"
        path.write_text(text)
        done = _verdict("config", "--check", str(path), env={"VERDICT_LOG_LEVEL": "NOPE"})
        assert done.returncode == 2, (text, done.stdout)
        assert f"{key}:" in done.stderr, done.stderr


def test_metrics_carry_process_and_python_series(server_process: ServerProcess) -> None:
    with urllib.request.urlopen(f"http://127.0.0.1:{server_process.metrics_port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    names = {line.split("{")[0].split(" ")[0] for line in text.splitlines() if line and not line.startswith("#")}
    for name in ("process_cpu_seconds_total", "process_resident_memory_bytes", "process_start_time_seconds"):
        assert name in names
    assert "python_info" in names
    assert "python_gc_collections_total" in names
