"""The shell commands the docs mark as runnable (an HTML comment `<!-- runnable -->` right above a ```sh block) run
as written, from the repository root with the project's virtualenv first on PATH, and succeed.

Commands that need a cluster, a Docker engine or a running server are left unmarked; their pieces are tested where
they can be (tests/deploy renders every overlay, tests/clients installs both clients).

The server's code the docs point at exists: every `service/verdict/...` path, and the room (top-level package or
module) of every `verdict.<room>...` name in backticks, so a module that moves cannot leave a doc behind.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.doc_blocks import run_block

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKED = re.compile(r"<!-- runnable -->\n```sh\n(.*?)```", re.DOTALL)
SERVICE_PATH = re.compile(r"service/verdict/[A-Za-z0-9_/.]*[A-Za-z0-9_/]")
MODULE_NAME = re.compile(r"`(verdict\.(?!v[0-9])[a-z_][a-z0-9_]*)")
"""A `verdict.<room>` name; proto packages (`verdict.v1`, a future `verdict.v2`) are not Python rooms."""
LOGGERS = {"verdict.access"}
"""Logger names the docs quote, which look like modules but are not."""
SPAN_ATTRIBUTES = {"verdict.verdict"}
"""Trace span attribute names the docs quote (server/interceptors/tracing.py), which look like modules but are not."""


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
    done = run_block(command, ROOT, venv_on_path=True)
    assert done.returncode == 0, f"{doc}: {command}\n{done.stdout}\n{done.stderr}"


def test_the_service_paths_the_docs_name_exist() -> None:
    missing = [
        f"{doc.name}: {path}"
        for doc in DOCS
        for path in sorted(set(SERVICE_PATH.findall(doc.read_text())))
        if not (ROOT / path).exists()
    ]
    assert missing == []


def test_the_modules_the_docs_name_are_rooms_of_the_service() -> None:
    package = ROOT / "service" / "verdict"
    rooms = {f"verdict.{path.stem}" for path in package.glob("*.py")} | {
        f"verdict.{path.name}" for path in package.iterdir() if (path / "__init__.py").exists()
    }
    named = {(doc.name, name) for doc in DOCS for name in MODULE_NAME.findall(doc.read_text())}
    unknown = sorted(f"{doc}: {name}" for doc, name in named if name not in rooms | LOGGERS | SPAN_ATTRIBUTES)
    assert unknown == []
