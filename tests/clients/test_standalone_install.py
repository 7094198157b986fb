"""The Python client is its own distribution: `pip install ./clients/python` into a clean virtualenv brings grpcio,
protobuf and googleapis-common-protos and nothing of the server, and the installed client calls a real server.

The venv is made with the interpreter running the tests and resolves dependencies normally (from the warm pip cache
or the index); only the client's own source is copied, so nothing of the repository's checkout leaks onto the path.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import venv
from pathlib import Path

import pytest

from tests.support import ServerProcess

CLIENT_SOURCE = Path(__file__).resolve().parents[2] / "clients" / "python"

ALLOWED_DISTRIBUTIONS = {"verdict-client", "grpcio", "protobuf", "googleapis-common-protos", "pip", "typing-extensions"}
"""Everything the clean venv may hold afterwards (grpcio pulls in typing-extensions on some versions)."""

PROBE = r"""
import importlib.util, json, sys
from verdict_client import VerdictClient, VerdictRpcError

server_side = ("verdict", "yaml", "prometheus_client", "grpc_status")
found = {name: importlib.util.find_spec(name) is not None for name in server_side}
with VerdictClient(sys.argv[1]) as client:
    verification = client.verify_response("```python\ndef f(:\n```", finish_reason="stop")
    evaluation = client.evaluate({"type": "exit_code"}, exit_code=1)
    catalogue = client.list_evaluators()
    try:
        client.evaluate({"type": "no_such_evaluator"})
        error = None
    except VerdictRpcError as failure:
        error = {"code": failure.code.name, "reason": failure.reason, "field": failure.field}
print(json.dumps({
    "found": found,
    "verdict": str(verification.verdict),
    "evaluation": evaluation.verdict,
    "has_exit_code": "exit_code" in catalogue.types,
    "error": error,
}))
"""


@pytest.fixture(scope="module")
def client_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("client-venv")
    source = root / "source"
    shutil.copytree(CLIENT_SOURCE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    env_dir = root / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(source)],
        check=True,
        timeout=600,
    )
    return python


def test_the_clean_venv_holds_the_client_and_its_three_dependencies_only(client_venv: Path) -> None:
    listed = subprocess.run(
        [client_venv, "-m", "pip", "list", "--format", "json", "--disable-pip-version-check"],
        check=True,
        capture_output=True,
        text=True,
    )
    names = {entry["name"].lower().replace("_", "-") for entry in json.loads(listed.stdout)}
    assert {"verdict-client", "grpcio", "protobuf", "googleapis-common-protos"} <= names
    assert names <= ALLOWED_DISTRIBUTIONS, names - ALLOWED_DISTRIBUTIONS
    assert "verdict" not in names


def test_the_installed_client_calls_a_real_server(client_venv: Path, server: ServerProcess) -> None:
    result = subprocess.run(
        [client_venv, "-c", PROBE, server.target],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=client_venv.parent,  # not the repository: the checkout must not be importable
    )
    probe = json.loads(result.stdout)
    assert probe["found"] == {"verdict": False, "yaml": False, "prometheus_client": False, "grpc_status": False}
    assert probe["verdict"] == "malformed"
    assert probe["evaluation"] == "no"
    assert probe["has_exit_code"] is True
    assert probe["error"]["code"] == "INVALID_ARGUMENT"
    assert probe["error"]["reason"]
    assert probe["error"]["field"]
