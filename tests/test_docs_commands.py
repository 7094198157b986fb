"""The shell commands the docs mark as runnable (an HTML comment `<!-- runnable -->` right above a ```sh block) run
as written, from the repository root with the project's virtualenv first on PATH, and succeed.

Commands that need a cluster, a Docker engine or a running server are left unmarked; their pieces are tested where
they can be (tests/deploy renders every overlay, tests/clients installs both clients).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKED = re.compile(r"<!-- runnable -->\n```sh\n(.*?)```", re.DOTALL)


def runnable_commands() -> list[tuple[str, str]]:
    commands = []
    for doc in DOCS:
        for block in MARKED.findall(doc.read_text()):
            for line in block.splitlines():
                command = line.split("  #", 1)[0].strip()
                if command and not command.startswith("#"):
                    commands.append((doc.name, command))
    return commands


COMMANDS = runnable_commands()


def test_the_docs_mark_the_operator_commands() -> None:
    marked = {command.split()[0] + " " + command.split()[1] for _, command in COMMANDS}
    assert {"make monitoring-test", "make monitoring-rules", "make manifests", "kubectl kustomize"} <= marked
    assert any(command.startswith("verdict config --check") for _, command in COMMANDS)


@pytest.mark.parametrize(("doc", "command"), COMMANDS, ids=[f"{doc}: {command}" for doc, command in COMMANDS])
def test_runnable_command_succeeds(doc: str, command: str) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env = {key: value for key, value in env.items() if not key.startswith(("VERDICT_", "MAKEFLAGS", "MAKELEVEL"))}
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{doc}: {command}\n{done.stdout}\n{done.stderr}"
