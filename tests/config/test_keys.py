"""Configuration: precedence file < env < flags, typed coercion, and errors that name the key."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from verdict.config.keys import DEFAULT_JUDGE_MODEL, Config, config_keys
from verdict.config.sources import load_config
from verdict.errors import ConfigError
from verdict.evaluators.catalogue import validate


def test_defaults_are_the_documented_ones() -> None:
    config = load_config()
    assert config.grpc_address == "[::]:50051"
    assert config.metrics_address == "[::]:9464"
    assert config.max_message_bytes == 4 * 1024 * 1024
    assert config.shell_check_timeout_seconds == 5.0


def test_every_key_has_a_docstring() -> None:
    docs = Config().describe()
    assert set(docs) == set(config_keys())
    assert all(len(doc) > 10 for doc in docs.values())


def test_config_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Config().grpc_address = "x"  # type: ignore[misc]


def test_flag_beats_env_beats_file(tmp_path: Path) -> None:
    file = tmp_path / "verdict.yaml"
    file.write_text("max_message_bytes: 2048\nshell_check_timeout_seconds: 1.5\nreflection: false\n")
    env = {"VERDICT_MAX_MESSAGE_BYTES": "4096", "UNRELATED": "x"}
    config = load_config(file, env=env, flags={"max_message_bytes": "8192", "grpc_address": None})
    assert config.max_message_bytes == 8192
    assert config.shell_check_timeout_seconds == 1.5
    assert config.reflection is False
    assert load_config(file, env=env).max_message_bytes == 4096


def test_list_values_from_env_and_file(tmp_path: Path) -> None:
    assert load_config(env={"VERDICT_JUDGE_MODEL_LABELS": "sonnet, haiku"}).judge_model_labels == ("sonnet", "haiku")
    file = tmp_path / "c.yaml"
    file.write_text("judge_model_labels: [opus]\n")
    assert load_config(file).judge_model_labels == ("opus",)


@pytest.mark.parametrize(
    ("source", "key", "fragment"),
    [
        ({"VERDICT_MAX_MESAGE_BYTES": "1"}, "max_mesage_bytes", "did you mean 'max_message_bytes'"),
        ({"VERDICT_MAX_MESSAGE_BYTES": "lots"}, "max_message_bytes", "must be an integer"),
        ({"VERDICT_MAX_MESSAGE_BYTES": "10"}, "max_message_bytes", "at least 1024"),
        ({"VERDICT_REFLECTION": "maybe"}, "reflection", "boolean"),
        ({"VERDICT_GRPC_ADDRESS": "50051"}, "grpc_address", "host:port"),
        ({"VERDICT_LOG_LEVEL": "LOUD"}, "log_level", "one of"),
        ({"VERDICT_JUDGE_TIMEOUT_SECONDS": "3600"}, "judge_timeout_seconds", "at most 1800"),
        ({"VERDICT_SECOND_OPINION_TIMEOUT_SECONDS": "18000"}, "second_opinion_timeout_seconds", "at most 1800"),
        ({"VERDICT_WORKSPACE_ROOT": "relative/dir"}, "workspace_root", "absolute"),
        # Values that passed validation and then crashed the server as it was built (or broke it silently):
        ({"VERDICT_GRACE_PERIOD_SECONDS": "nan"}, "grace_period_seconds", "finite"),
        ({"VERDICT_SHELL_CHECK_TIMEOUT_SECONDS": "nan"}, "shell_check_timeout_seconds", "finite"),
        ({"VERDICT_MAX_CONNECTION_AGE_SECONDS": "inf"}, "max_connection_age_seconds", "finite"),
        ({"VERDICT_MAX_CONNECTION_AGE_SECONDS": "3000000"}, "max_connection_age_seconds", "at most"),
        ({"VERDICT_MAX_MESSAGE_BYTES": "2147483648"}, "max_message_bytes", "at most 2147483647"),
        ({"VERDICT_MAX_CONCURRENT_RPCS": "2147483648"}, "max_concurrent_rpcs", "at most 2147483647"),
    ],
)
def test_bad_values_name_the_key(source: dict[str, str], key: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(env=source)
    assert caught.value.key == key
    assert fragment in str(caught.value)


def test_unknown_key_in_file_is_rejected(tmp_path: Path) -> None:
    file = tmp_path / "c.yaml"
    file.write_text("grpc_adress: '[::]:1'\n")
    with pytest.raises(ConfigError, match=r"grpc_adress: unknown key .*did you mean 'grpc_address'"):
        load_config(file)


def test_file_must_be_a_mapping(tmp_path: Path) -> None:
    file = tmp_path / "c.yaml"
    file.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(file)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")


def test_empty_metrics_address_disables_metrics() -> None:
    assert load_config(flags={"metrics_address": ""}).metrics_address == ""


def test_every_key_is_documented_in_docs() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text()
    missing = [key for key in config_keys() if f"`{key}`" not in text]
    assert missing == []


async def test_the_largest_accepted_values_build_a_server() -> None:
    """The maxima are the largest values gRPC itself accepts, so every value validation lets through can serve."""
    from prometheus_client import CollectorRegistry

    from verdict.server.assembly import build_server

    config = load_config(
        flags={
            "grpc_address": "127.0.0.1:0",
            "metrics_address": "",
            "max_message_bytes": "2147483647",
            "max_concurrent_rpcs": "2147483647",
            "max_connection_age_seconds": "2147483.647",
            "max_connection_age_grace_seconds": "2147483.647",
        }
    )
    app, port = await build_server(config, registry=CollectorRegistry())
    assert port > 0
    await app.start()
    await app.stop(grace=0)
    assert app.runner.live_process_groups == frozenset()


def test_judge_cache_redis_needs_a_redis_url() -> None:
    with pytest.raises(ConfigError, match="judge_cache_url"):
        load_config(flags={"judge_cache": "redis"})
    with pytest.raises(ConfigError, match="judge_cache_url"):
        load_config(flags={"judge_cache": "redis", "judge_cache_url": "http://cache:6379"})
    config = load_config(env={"VERDICT_JUDGE_CACHE": "redis", "VERDICT_JUDGE_CACHE_URL": "redis://cache:6379/0"})
    assert (config.judge_cache, config.judge_cache_url) == ("redis", "redis://cache:6379/0")
    with pytest.raises(ConfigError, match="judge_cache"):
        load_config(flags={"judge_cache": "disk"})


def test_the_default_judge_model_has_one_owner() -> None:
    """The server default and the evaluator validation read the same constant, so they cannot drift apart."""
    assert Config().judge_model == DEFAULT_JUDGE_MODEL
    assert validate({"type": "llm_structured"})["model"] == DEFAULT_JUDGE_MODEL
    assert validate({"type": "llm_structured"}, judge_model="haiku")["model"] == "haiku"
