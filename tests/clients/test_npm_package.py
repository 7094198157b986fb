"""The TypeScript client as a Node user gets it: `npm pack` makes a tarball that installs into a clean project (not
`private`, no path install) and calls a real server from there."""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.support import ServerProcess

PACKAGE = Path(__file__).resolve().parents[2] / "clients" / "typescript"

PROBE = """
const { VerdictClient, VerdictRpcError } = require("@verdict/client");
(async () => {
  const client = new VerdictClient(process.argv[2]);
  const verification = await client.verifyResponse({ text: "```python\\ndef f(:\\n```", finishReason: "stop" });
  const evaluation = await client.evaluate({ config: { exitCode: {} }, exitCode: 1 });
  let error = null;
  try {
    await client.evaluate({ config: { type: "no_such_evaluator" } });
  } catch (failure) {
    error = { isVerdictError: failure instanceof VerdictRpcError, reason: failure.reason };
  }
  client.close();
  console.log(JSON.stringify({ verdict: verification.verdict, check: verification.checks[0].verdict,
                               evaluation: evaluation.verdict, error }));
})().catch((failure) => { console.error(failure); process.exit(1); });
"""


def _npm(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["npm", *args], cwd=cwd, check=True, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def tarball(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert shutil.which("npm"), "npm is needed (make node-deps)"
    assert (PACKAGE / "node_modules").is_dir(), "run `make node-deps` first"
    out = tmp_path_factory.mktemp("npm-pack")
    packed = _npm("pack", "--json", "--pack-destination", str(out), cwd=PACKAGE)
    return out / json.loads(packed.stdout)[0]["filename"]


def test_the_tarball_is_publishable_and_ships_the_built_client(tarball: Path) -> None:
    with tarfile.open(tarball) as archive:
        names = set(archive.getnames())
        manifest = json.loads(archive.extractfile("package/package.json").read())  # type: ignore[union-attr]
    assert "private" not in manifest
    assert manifest["name"] == "@verdict/client"
    assert "package/dist/src/index.js" in names
    assert "package/dist/src/index.d.ts" in names
    assert any(name.startswith("package/dist/proto/") and name.endswith(".proto") for name in names)
    assert not any("/test/" in name for name in names)


def test_a_clean_project_installs_the_tarball_and_calls_a_real_server(
    tarball: Path, server: ServerProcess, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "package.json").write_text(json.dumps({"name": "verdict-consumer", "version": "1.0.0"}))
    _npm("install", "--no-audit", "--no-fund", str(tarball), cwd=project)
    installed = json.loads((project / "package.json").read_text())
    assert "@verdict/client" in installed["dependencies"]
    (project / "probe.js").write_text(PROBE)
    done = subprocess.run(
        ["node", "probe.js", server.target], cwd=project, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result == {
        "verdict": "malformed",
        "check": "malformed",
        "evaluation": "no",
        "error": {"isVerdictError": True, "reason": "INVALID_EVALUATOR_CONFIG"},
    }
