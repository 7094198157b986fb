"""The `verdict` command as a shell user runs it: real processes, JSON on stdout, documented exit statuses."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

from tests.support import ServerProcess
from verdict.cli.main import build_parser
from verdict.config.keys import Config, config_keys
from verdict.config.sources import load_config


def _verdict(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "verdict", *args], input=stdin, capture_output=True, timeout=60, check=False
    )


def test_verify_ok_from_stdin_exits_zero() -> None:
    done = _verdict("verify", stdin=b'```json\n{"a": 1}\n```\n')
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["verdict"] == "ok"
    assert result["failed"] is False
    assert result["checks"][0]["language"] == "json"


def test_verify_failed_exits_one(tmp_path: Path) -> None:
    answer = tmp_path / "answer.md"
    answer.write_text("```python\ndef f(:\n```\n")
    done = _verdict("verify", str(answer))
    assert done.returncode == 1
    assert json.loads(done.stdout)["verdict"] == "malformed"


def test_verify_finish_reason_and_invalid_utf8() -> None:
    done = _verdict("verify", "--finish-reason", "length", stdin=b"cut \xff\xfe off")
    assert done.returncode == 1
    assert json.loads(done.stdout)["verdict"] == "truncated"


def test_verify_missing_file_exits_two() -> None:
    done = _verdict("verify", "/nonexistent/answer.md")
    assert done.returncode == 2
    assert b"answer.md" in done.stderr


def test_evaluate_prints_the_verdict() -> None:
    done = _verdict("evaluate", "--evaluator", "{type: exit_code}", "--exit-code", "1", stdin=b"")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["verdict"] == "no"


def test_evaluate_state_token_round_trips_as_base64() -> None:
    """The state token is printed in base64 (as grpcurl and curl show it) and read back in the same spelling."""
    stall = "{type: action_stall, max_repeat: 1}"
    context = json.dumps({"context": {"action": "ls"}})
    first = _verdict("evaluate", "--evaluator", stall, "--context", context, stdin=b"")
    assert first.returncode == 0, first.stderr
    token = json.loads(first.stdout)["state"]
    assert base64.b64encode(base64.b64decode(token, validate=True)).decode() == token
    second = _verdict("evaluate", "--evaluator", stall, "--context", context, "--state", token, stdin=b"")
    assert second.returncode == 0, second.stderr
    assert (json.loads(first.stdout)["verdict"], json.loads(second.stdout)["verdict"]) == ("yes", "no")
    garbled = _verdict("evaluate", "--evaluator", stall, "--state", "not base64!", stdin=b"")
    assert garbled.returncode == 2
    assert b"--state" in garbled.stderr


def test_evaluate_bad_config_exits_two_naming_the_field() -> None:
    done = _verdict("evaluate", "--evaluator", "{type: output_numeric, operator: eq}", stdin=b"5")
    assert done.returncode == 2
    assert b"target" in done.stderr


def test_verify_against_a_running_server(server_process: ServerProcess) -> None:
    done = _verdict("verify", "--target", server_process.target, stdin=b"```yaml\na: [1, 2\n```\n")
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["verdict"] == "malformed"


def _sample_value(key: str) -> str:
    """A valid non-default value for `key`, as text."""
    samples = {
        "grpc_address": "127.0.0.1:1",
        "metrics_address": "127.0.0.1:2",
        "health_address": "127.0.0.1:3",
        "http_address": "127.0.0.1:4",
        "log_level": "DEBUG",
        "tls_client_auth": "require",
        "judge_cache": "off",
        "judge_cache_url": "redis://cache:6379/0",
        "judge_api_key_file": "/run/secrets/judge/api-key",
        "judge_api_key_env": "OPENAI_API_KEY",
        "log_format": "json",
        "access_log_level": "DEBUG",
        "decision_log": "stderr",
        "decision_log_url": "http://collector:8080/logs",
        "calibration_kappa_floor": "0.8",
        "otlp_endpoint": "http://collector:4318",
        "otlp_sample_ratio": "0.5",
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


_COMPANIONS = {
    "tls_cert_file": {"tls_key_file": "/k.pem"},
    "tls_key_file": {"tls_cert_file": "/c.pem"},
    "tls_client_ca_file": {"tls_cert_file": "/c.pem", "tls_key_file": "/k.pem", "tls_client_auth": "require"},
    "tls_client_auth": {"tls_cert_file": "/c.pem", "tls_key_file": "/k.pem", "tls_client_ca_file": "/ca.pem"},
    "auth_tokens_dir": {"auth_policy_file": "/policy.yaml"},
}
"""Keys that are only valid together with others (TLS and auth settings are checked as a set)."""


def test_every_key_is_a_serve_flag_and_an_environment_variable() -> None:
    for key in config_keys():
        values = {key: _sample_value(key), **_COMPANIONS.get(key, {})}
        argv = ["serve"]
        for name, value in values.items():
            argv += [f"--{name.replace('_', '-')}", value]
        args = build_parser().parse_args(argv)
        from_flag = load_config(flags={k: getattr(args, k) for k in config_keys()})
        from_env = load_config(env={f"VERDICT_{name.upper()}": value for name, value in values.items()})
        assert getattr(from_flag, key) == getattr(from_env, key) != getattr(Config(), key), key


def test_verify_against_a_server_with_tls_and_auth(tmp_path: Path) -> None:
    from tests.certs import CertificateAuthority
    from tests.support import start_server_process, stop_server_process

    ca = CertificateAuthority(tmp_path / "ca")
    server_cert = ca.server()
    (tmp_path / "tokens").mkdir()
    (tmp_path / "tokens" / "cli").write_text("cli-token-0123456789abcdef\n")
    (tmp_path / "token").write_text("cli-token-0123456789abcdef\n")
    (tmp_path / "policy.yaml").write_text("principals: {cli: {rpcs: [VerifyResponse]}}\n")
    server = start_server_process(
        "--tls-cert-file", str(server_cert.cert_file), "--tls-key-file", str(server_cert.key_file),
        "--auth-policy-file", str(tmp_path / "policy.yaml"), "--auth-tokens-dir", str(tmp_path / "tokens"),
    )  # fmt: skip
    try:
        common = ["verify", "--target", server.target, "--ca-file", str(ca.cert_file), "--server-name", "localhost"]
        done = _verdict(*common, "--token-file", str(tmp_path / "token"), stdin=b"```json\n{}\n```\n")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["verdict"] == "ok"
        refused = _verdict(*common, stdin=b"```json\n{}\n```\n")
        assert refused.returncode == 2
        assert b"needs a bearer token" in refused.stderr
    finally:
        stop_server_process(server)
