"""The `verdict` command as a shell user runs it: real processes, JSON on stdout, documented exit statuses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support import ServerProcess
from verdict.cli import build_parser
from verdict.config import Config, config_keys, load_config


def _verdict(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "verdict", *args], input=stdin, capture_output=True, timeout=60, check=False
    )


def test_verify_ok_from_stdin_exits_zero() -> None:
    done = _verdict("verify", stdin=b'```json\n{"a": 1}\n```\n')
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["verdict"] == "VERIFY_VERDICT_OK"
    assert result["failed"] is False
    assert result["checks"][0]["language"] == "json"


def test_verify_failed_exits_one(tmp_path: Path) -> None:
    answer = tmp_path / "answer.md"
    answer.write_text("```python\ndef f(:\n```\n")
    done = _verdict("verify", str(answer))
    assert done.returncode == 1
    assert json.loads(done.stdout)["verdict"] == "VERIFY_VERDICT_MALFORMED"


def test_verify_finish_reason_and_invalid_utf8() -> None:
    done = _verdict("verify", "--finish-reason", "length", stdin=b"cut \xff\xfe off")
    assert done.returncode == 1
    assert json.loads(done.stdout)["verdict"] == "VERIFY_VERDICT_TRUNCATED"


def test_verify_missing_file_exits_two() -> None:
    done = _verdict("verify", "/nonexistent/answer.md")
    assert done.returncode == 2
    assert b"answer.md" in done.stderr


def test_evaluate_prints_the_verdict() -> None:
    done = _verdict("evaluate", "--evaluator", "{type: exit_code}", "--exit-code", "1", stdin=b"")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["verdict"] == "no"


def test_evaluate_bad_config_exits_two_naming_the_field() -> None:
    done = _verdict("evaluate", "--evaluator", "{type: output_numeric, operator: eq}", stdin=b"5")
    assert done.returncode == 2
    assert b"target" in done.stderr


def test_verify_against_a_running_server(server_process: ServerProcess) -> None:
    done = _verdict("verify", "--target", server_process.target, stdin=b"```yaml\na: [1, 2\n```\n")
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["verdict"] == "VERIFY_VERDICT_MALFORMED"


def _sample_value(key: str) -> str:
    """A valid non-default value for `key`, as text."""
    samples = {
        "grpc_address": "127.0.0.1:1",
        "metrics_address": "127.0.0.1:2",
        "log_level": "DEBUG",
        "judge_cache": "off",
        "judge_cache_url": "redis://cache:6379/0",
    }
    if key in samples:
        return samples[key]
    default = getattr(Config(), key)
    if isinstance(default, bool):
        return "false" if default else "true"
    if isinstance(default, tuple):
        return "a,b"
    if isinstance(default, int | float):
        return str(default + 1)
    return "/srv/x" if key == "workspace_root" else "some-value"


def test_every_key_is_a_serve_flag_and_an_environment_variable() -> None:
    for key in config_keys():
        value = _sample_value(key)
        args = build_parser().parse_args(["serve", f"--{key.replace('_', '-')}", value])
        from_flag = load_config(flags={k: getattr(args, k) for k in config_keys()})
        from_env = load_config(env={f"VERDICT_{key.upper()}": value})
        assert getattr(from_flag, key) == getattr(from_env, key) != getattr(Config(), key), key
