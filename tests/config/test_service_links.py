"""Kubernetes service links: a pod in a namespace with a Service named `verdict` gets `VERDICT_PORT=tcp://...` and
friends from kubelet, and the server must start anyway, while every other unknown `VERDICT_*` stays an error.

The variable set is computed here the way kubelet computes it (pkg/kubelet/envvars: `<NAME>_SERVICE_HOST`,
`<NAME>_SERVICE_PORT`, `<NAME>_SERVICE_PORT_<PORTNAME>`, and the Docker-link `<NAME>_PORT`,
`<NAME>_PORT_<port>_<PROTO>[_PROTO|_PORT|_ADDR]`) from the repository's own Service manifests, so a port added to
the Service is covered without editing this file.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support import start_server_process
from verdict.config.keys import config_keys
from verdict.config.sources import is_service_link, load_config
from verdict.errors import ConfigError

SERVICES = Path(__file__).resolve().parents[2] / "deploy" / "base" / "service.yaml"


def _env_name(name: str) -> str:
    return name.upper().replace("-", "_")


def kubelet_service_env(service: dict[str, Any], cluster_ip: str) -> dict[str, str]:
    """The variables kubelet injects for one Service (none for a headless one: it has no cluster IP)."""
    spec = service["spec"]
    if spec.get("clusterIP") in ("None", ""):
        return {}
    prefix = _env_name(service["metadata"]["name"])
    ports = spec["ports"]
    env = {f"{prefix}_SERVICE_HOST": cluster_ip, f"{prefix}_SERVICE_PORT": str(ports[0]["port"])}
    for port in ports:
        if port.get("name"):
            env[f"{prefix}_SERVICE_PORT_{_env_name(port['name'])}"] = str(port["port"])
    host = f"[{cluster_ip}]" if ":" in cluster_ip else cluster_ip
    for index, port in enumerate(ports):
        protocol = port.get("protocol", "TCP")
        url = f"{protocol.lower()}://{host}:{port['port']}"
        if index == 0:
            env[f"{prefix}_PORT"] = url
        link = f"{prefix}_PORT_{port['port']}_{protocol.upper()}"
        env |= {
            link: url,
            f"{link}_PROTO": protocol.lower(),
            f"{link}_PORT": str(port["port"]),
            f"{link}_ADDR": cluster_ip,
        }
    return env


def repository_service_env(cluster_ip: str = "10.96.12.34") -> dict[str, str]:
    env: dict[str, str] = {}
    for service in yaml.safe_load_all(SERVICES.read_text(encoding="utf-8")):
        if service and service["kind"] == "Service":
            env |= kubelet_service_env(service, cluster_ip)
    return env


def test_the_manifests_produce_the_variables_this_test_is_about() -> None:
    """Guards the generator: if it produced nothing (or something else), every test below would pass vacuously."""
    assert repository_service_env() == {
        "VERDICT_SERVICE_HOST": "10.96.12.34",
        "VERDICT_SERVICE_PORT": "50051",
        "VERDICT_SERVICE_PORT_GRPC": "50051",
        "VERDICT_SERVICE_PORT_METRICS": "9464",
        "VERDICT_PORT": "tcp://10.96.12.34:50051",
        "VERDICT_PORT_50051_TCP": "tcp://10.96.12.34:50051",
        "VERDICT_PORT_50051_TCP_PROTO": "tcp",
        "VERDICT_PORT_50051_TCP_PORT": "50051",
        "VERDICT_PORT_50051_TCP_ADDR": "10.96.12.34",
        "VERDICT_PORT_9464_TCP": "tcp://10.96.12.34:9464",
        "VERDICT_PORT_9464_TCP_PROTO": "tcp",
        "VERDICT_PORT_9464_TCP_PORT": "9464",
        "VERDICT_PORT_9464_TCP_ADDR": "10.96.12.34",
    }


@pytest.mark.parametrize("cluster_ip", ["10.96.12.34", "fd00:10:96::1a2b"])
def test_service_links_are_ignored_and_settings_beside_them_still_apply(
    cluster_ip: str, caplog: pytest.LogCaptureFixture
) -> None:
    env = {**repository_service_env(cluster_ip), "VERDICT_LOG_LEVEL": "DEBUG", "VERDICT_GRACE_PERIOD_SECONDS": "7"}
    with caplog.at_level(logging.DEBUG, logger="verdict.config"):
        config = load_config(env=env)
    assert (config.log_level, config.grace_period_seconds) == ("DEBUG", 7.0)
    ignored = {record.args[0] for record in caplog.records if "service-link" in record.getMessage()}  # type: ignore[index]
    assert ignored == set(repository_service_env(cluster_ip))


def test_a_service_with_other_ports_and_protocols_is_ignored_too() -> None:
    service = {
        "metadata": {"name": "verdict"},
        "spec": {
            "clusterIP": "172.20.0.9",
            "ports": [
                {"port": 8443},
                {"name": "dns-udp", "port": 53, "protocol": "UDP"},
                {"name": "assoc", "port": 9, "protocol": "SCTP"},
            ],
        },
    }
    env = kubelet_service_env(service, "172.20.0.9")
    assert "VERDICT_SERVICE_PORT_DNS_UDP" in env
    assert "VERDICT_PORT_9_SCTP_ADDR" in env
    assert load_config(env=env) == load_config()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("VERDICT_GRPC_ADRESS", "[::]:50051"),  # a typo of a real key
        ("VERDICT_PORT", "50051"),  # someone guessing a key name: not the shape kubelet writes
        ("VERDICT_SERVICE_PORT", "grpc"),
        ("VERDICT_SERVICE_HOST", "verdict.example.com"),
        ("VERDICT_PORT_50051_TCP_PROTO", "http"),
        ("VERDICT_PORT_50051_HTTP", "tcp://10.0.0.1:50051"),
        ("VERDICT_PORTS", "tcp://10.0.0.1:50051"),
        ("VERDICT_SERVICE_HOSTNAME", "10.0.0.1"),
        ("VERDICT_METRICS_SERVICE_HOST", "10.0.0.1"),  # a Service named verdict-metrics is not this one
    ],
)
def test_every_other_unknown_variable_is_still_an_error_naming_it(name: str, value: str) -> None:
    with pytest.raises(ConfigError) as raised:
        load_config(env={**repository_service_env(), name: value})
    assert name in str(raised.value)
    assert not is_service_link(name, value)


def test_no_configuration_key_could_be_mistaken_for_a_service_link() -> None:
    """A future key such as `service_port` would be read from the environment as kubelet's variable, or vice versa."""
    for key in config_keys():
        name = f"VERDICT_{key.upper()}"
        for value in ("10.0.0.1", "50051", "tcp://10.0.0.1:50051", "tcp"):
            assert not is_service_link(name, value), name


def test_a_real_verdict_serve_starts_with_them_and_says_so_at_debug() -> None:
    links = repository_service_env()
    env = {**os.environ, **links, "VERDICT_LOG_LEVEL": "DEBUG"}
    server = start_server_process(env=env)
    stderr = server.stop_and_read_logs()
    assert server.process.returncode == 0, stderr
    for name in links:
        assert f"ignoring {name}: a Kubernetes service-link variable" in stderr


def test_at_info_the_skipped_variables_are_not_logged() -> None:
    env = {**os.environ, **repository_service_env(), "VERDICT_LOG_LEVEL": "INFO"}
    server = start_server_process(env=env)
    stderr = server.stop_and_read_logs()
    assert server.process.returncode == 0, stderr
    assert "service-link" not in stderr


def test_a_real_verdict_serve_still_refuses_an_unknown_variable() -> None:
    env = {**os.environ, **repository_service_env(), "VERDICT_GRPC_ADRESS": "127.0.0.1:0"}
    done = subprocess.run(
        [sys.executable, "-m", "verdict", "serve"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2, done.stderr
    assert "VERDICT_GRPC_ADRESS" in done.stderr
    assert "did you mean 'grpc_address'" in done.stderr
