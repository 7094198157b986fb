"""Running the docs' shell blocks as a newcomer would: one server, one way to make a block concrete, one way to run it.

The README tour (tests/test_readme_tour.py) and every other docs block (tests/test_docs_blocks.py) share these, so a
block means the same thing, and runs the same way, wherever it is written.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support import ServerProcess, start_server_process, stop_server_process

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def http_server() -> Iterator[tuple[ServerProcess, int]]:
    """A real server process with its HTTP port on; yields it and the HTTP port it bound."""
    process = start_server_process("--http-address", "127.0.0.1:0")
    try:
        ready = next(record for record in process.records() if record.get("event") == "serving")
        yield process, int(ready["http_port"])
    finally:
        stop_server_process(process)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def concrete(block: str, grpc_port: int, http_port: int) -> str:
    """The block with the docs' default ports made the server's, and repository paths made absolute."""
    venv = Path(sys.executable).parent.parent
    return (
        block.replace("localhost:8080", f"127.0.0.1:{http_port}")
        .replace("localhost:50051", f"127.0.0.1:{grpc_port}")
        .replace("127.0.0.1:8089", f"127.0.0.1:{_free_port()}")
        .replace(".venv/bin/", f"{venv}/bin/")
        .replace("make node-deps", f"make -C {ROOT} node-deps")
        .replace("BUF=clients/", f"BUF={ROOT}/clients/")
        .replace("--schema protos", f"--schema {ROOT}/protos")
        .replace(" README.md", f" {ROOT}/README.md")
    )


def run_block(script: str, cwd: Path, *, venv_on_path: bool = False) -> subprocess.CompletedProcess[str]:
    """Run a block in bash, in `cwd`, without the test run's VERDICT_ and make variables.

    Not -e: a block may show a failing exit status on purpose (`verdict verify` of a malformed answer); each line's
    outcome is checked through what it prints, and the block's last command decides the status. `venv_on_path` puts
    the venv's bin first on PATH, for operator commands written as `verdict ...` (docs' `<!-- runnable -->` blocks)."""
    env = {
        name: value for name, value in os.environ.items() if not name.startswith(("VERDICT_", "MAKEFLAGS", "MAKELEVEL"))
    }
    if venv_on_path:
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        ["bash", "-o", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
