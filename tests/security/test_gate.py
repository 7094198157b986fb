"""The policy loader, the token directory and the Gate's decisions, without a server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.certs import SecretVolume
from tests.support import make_config
from verdict.errors import ConfigError, PermissionDenied, Unauthenticated
from verdict.security.gate import ANONYMOUS, Gate
from verdict.security.policy import load_policy
from verdict.security.tokens import bearer_token

RPCS = ("VerifyResponse", "Evaluate", "ListEvaluators")
TOKEN = "runner-token-0123456789abcdef"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("who: x", "one key, `principals`"),
        ("principals: {a: {rpcs: [Verify]}}", "unknown RPCs ['Verify']"),
        ("principals: {a: {rpc: ['*']}}", "unknown keys ['rpc']"),
        ("principals: {a: {judges: 'yes'}}", "judges must be true or false"),
        ("principals: {'../etc': {}}", "must match"),
        ("principals: {a: {certificates: [x]}, b: {certificates: [x]}}", "listed for a and b"),
        ("principals: {anonymous: {certificates: [x]}}", "cannot have certificates"),
        ("principals: {a: {rpcs: Evaluate}}", "must be a list of strings"),
    ],
)
def test_a_bad_policy_names_what_is_wrong(text: str, fragment: str) -> None:
    with pytest.raises(ValueError, match="policy") as caught:
        load_policy(text, RPCS)
    assert fragment in str(caught.value)


def test_the_policy_grants() -> None:
    policy = load_policy("principals: {a: {rpcs: ['*'], judges: true}, b: {rpcs: [Evaluate]}, c: }", RPCS)
    assert policy.principals["a"].allows_rpc("ListEvaluators")
    assert policy.principals["a"].judges
    assert policy.principals["b"].allows_rpc("Evaluate")
    assert not policy.principals["b"].allows_rpc("VerifyResponse")
    assert not policy.principals["c"].allows_rpc("Evaluate")


@pytest.mark.parametrize(
    ("header", "token"),
    [(None, None), ("Bearer abc", "abc"), ("bearer  abc ", "abc"), ("Basic abc", None), ("Bearer ", None)],
)
def test_bearer_token_parsing(header: str | None, token: str | None) -> None:
    assert bearer_token(header) == token


def _gate(tmp_path: Path, policy: str, tokens: dict[str, bytes]) -> tuple[Gate, SecretVolume]:
    (tmp_path / "policy.yaml").write_text(policy)
    volume = SecretVolume(tmp_path / "tokens", tokens)
    config = make_config(auth_policy_file=str(tmp_path / "policy.yaml"), auth_tokens_dir=str(volume.directory))
    return Gate(config, RPCS), volume


def test_tokens_short_or_misnamed_are_ignored(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    gate, _ = _gate(
        tmp_path,
        "principals: {runner: {rpcs: ['*']}, short: {rpcs: ['*']}}",
        {"runner": TOKEN.encode(), "short": b"tiny", "anonymous": b"x" * 32},
    )
    assert gate.authenticate(TOKEN, ()).principal == "runner"
    with pytest.raises(Unauthenticated):
        gate.authenticate("tiny", ())
    with pytest.raises(Unauthenticated):
        gate.authenticate("x" * 32, ())
    assert "shorter than" in caplog.text
    assert "tiny" not in caplog.text


def test_anonymous_callers_get_what_the_policy_grants_anonymous(tmp_path: Path) -> None:
    gate, _ = _gate(tmp_path, "principals: {anonymous: {rpcs: [ListEvaluators]}}", {})
    caller = gate.authenticate(None, ())
    assert caller.principal == ANONYMOUS
    gate.authorize_rpc(caller, "ListEvaluators")
    with pytest.raises(PermissionDenied) as caught:
        gate.authorize_rpc(caller, "Evaluate")
    assert caught.value.reason == "RPC_NOT_ALLOWED"


def test_a_policy_change_applies_and_a_broken_one_keeps_the_last_good(tmp_path: Path) -> None:
    gate, _ = _gate(tmp_path, "principals: {runner: {rpcs: ['*']}}", {"runner": TOKEN.encode()})
    caller = gate.authenticate(TOKEN, ())
    gate.authorize_rpc(caller, "Evaluate")
    (tmp_path / "policy.yaml").write_text("principals: {runner: {rpcs: [ListEvaluators]}}\n")
    caller = gate.authenticate(TOKEN, ())
    with pytest.raises(PermissionDenied):
        gate.authorize_rpc(caller, "Evaluate")
    (tmp_path / "policy.yaml").write_text("principals: [not, a, mapping]\n")
    assert gate.authenticate(TOKEN, ()).grant.allows_rpc("ListEvaluators")


def test_auth_off_lets_everyone_do_everything() -> None:
    gate = Gate(make_config(), RPCS)
    caller = gate.authenticate(None, ())
    gate.authorize_rpc(caller, "Evaluate")
    assert caller.grant.judges
    assert gate.metrics_allowed(None, ()) == (200, ANONYMOUS)


def test_a_missing_policy_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        Gate(make_config(auth_policy_file=str(tmp_path / "missing.yaml")), RPCS)
    assert caught.value.key == "auth_policy_file"
