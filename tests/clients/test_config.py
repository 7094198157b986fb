"""ClientConfig renders the channel arguments and service config gRPC reads, and rejects impossible values."""

from __future__ import annotations

import json

import pytest

from verdict_client import ClientConfig, Keepalive, RetryPolicy, TlsConfig


def _options(config: ClientConfig) -> dict[str, str | int]:
    return dict(config.channel_options())


def test_default_service_config_balances_round_robin_and_retries_unavailable() -> None:
    service_config = json.loads(str(_options(ClientConfig())["grpc.service_config"]))
    assert service_config == {
        "loadBalancingConfig": [{"round_robin": {}}],
        "methodConfig": [
            {
                "name": [{"service": "verdict.v1.VerdictService"}],
                "retryPolicy": {
                    "maxAttempts": 4,
                    "initialBackoff": "0.2s",
                    "maxBackoff": "5s",
                    "backoffMultiplier": 2.0,
                    "retryableStatusCodes": ["UNAVAILABLE"],
                },
            }
        ],
    }


def test_no_retry_policy_when_retries_are_off() -> None:
    options = _options(ClientConfig(retry=RetryPolicy(max_attempts=1)))
    assert "methodConfig" not in json.loads(str(options["grpc.service_config"]))
    assert options["grpc.enable_retries"] == 0


def test_default_keepalive_stays_inside_server_defaults() -> None:
    options = _options(ClientConfig())
    assert options["grpc.keepalive_time_ms"] == 300_000
    assert options["grpc.keepalive_timeout_ms"] == 20_000
    assert options["grpc.keepalive_permit_without_calls"] == 0


def test_message_limits_both_ways() -> None:
    options = _options(ClientConfig(max_message_bytes=8 * 1024 * 1024))
    assert options["grpc.max_send_message_length"] == options["grpc.max_receive_message_length"] == 8 * 1024 * 1024


def test_extra_options_come_last_and_win() -> None:
    options = ClientConfig(options=(("grpc.keepalive_time_ms", 600_000),)).channel_options()
    assert options[-1] == ("grpc.keepalive_time_ms", 600_000)
    assert dict(options)["grpc.keepalive_time_ms"] == 600_000


def test_server_name_override_only_with_tls() -> None:
    assert "grpc.ssl_target_name_override" not in _options(ClientConfig())
    tls = TlsConfig(server_name_override="verdict.internal")
    assert _options(ClientConfig(tls=tls))["grpc.ssl_target_name_override"] == "verdict.internal"


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: RetryPolicy(max_attempts=6), "max_attempts"),
        (lambda: RetryPolicy(max_attempts=0), "max_attempts"),
        (lambda: RetryPolicy(initial_backoff_seconds=0), "back-off"),
        (lambda: RetryPolicy(backoff_multiplier=0), "backoff_multiplier"),
        (lambda: RetryPolicy(retryable_status_codes=()), "retryable_status_codes"),
        (lambda: Keepalive(time_seconds=1), "time_seconds"),
        (lambda: Keepalive(timeout_seconds=0), "timeout_seconds"),
        (lambda: TlsConfig(private_key=b"key"), "certificate_chain"),
        (lambda: ClientConfig(timeout_seconds=0), "deadlines"),
        (lambda: ClientConfig(max_message_bytes=10), "max_message_bytes"),
        (lambda: ClientConfig(load_balancing="least_request"), "load_balancing"),
    ],
)
def test_impossible_values_fail_at_construction(build, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()


def test_tls_repr_never_shows_the_private_key() -> None:
    tls = TlsConfig(private_key=b"-----BEGIN PRIVATE KEY-----secret", certificate_chain=b"chain")
    assert "secret" not in repr(tls)
    assert "<redacted>" in repr(tls)


def test_configs_compare_by_value() -> None:
    assert ClientConfig(retry=RetryPolicy(max_attempts=2)) == ClientConfig(retry=RetryPolicy(max_attempts=2))
    assert ClientConfig() != ClientConfig(load_balancing="pick_first")


def test_a_bearer_token_is_never_printed_and_is_one_line() -> None:
    config = ClientConfig(bearer_token="secret-token-0123456789")
    assert "secret-token" not in repr(config)
    with pytest.raises(ValueError, match="one non-empty line"):
        ClientConfig(bearer_token="a\nb")
    with pytest.raises(ValueError, match="not both"):
        ClientConfig(bearer_token="x" * 20, bearer_token_file="/dev/null")


def test_the_token_is_added_to_the_call_metadata_and_a_rotated_file_is_re_read(tmp_path) -> None:
    from verdict_client._calls import call_metadata

    assert call_metadata(ClientConfig(), (("x-request-id", "1"),)) == (("x-request-id", "1"),)
    assert call_metadata(ClientConfig(bearer_token="abc"), None) == (("authorization", "Bearer abc"),)
    own = (("authorization", "Bearer mine"),)
    assert call_metadata(ClientConfig(bearer_token="abc"), own) == own
    token_file = tmp_path / "token"
    token_file.write_text("first-token\n")
    config = ClientConfig(bearer_token_file=str(token_file))
    assert call_metadata(config, None) == (("authorization", "Bearer first-token"),)
    replacement = tmp_path / "token.new"
    replacement.write_text("second-token-longer\n")
    replacement.replace(token_file)  # a rotation: a new file renamed over the old one
    assert call_metadata(config, None) == (("authorization", "Bearer second-token-longer"),)
