"""The README's tour, walked as a newcomer would on a fresh clone: every shell block of "A short tour" runs as written
(ports made concrete, paths made absolute) against a real server with its HTTP port on, in an empty directory, and
shows what its comments promise. The grpcurl block is the documented alternative and runs only where grpcurl is
installed (the project does not install it); the other blocks need only curl, buf (`make node-deps`) and the CLI."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import ServerProcess, start_server_process, stop_server_process

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
TOUR = README.split("## A short tour", 1)[1].split("\n## ", 1)[0]
BLOCKS = re.findall(r"````sh\n(.*?)````", TOUR, re.DOTALL)

PROMISES = {
    "localhost:8080/verdict.v1.VerdictService/VerifyResponse": [
        "VERIFY_VERDICT_MALFORMED",
        '"target": 3',
        '"debug"',
        '"status": "SERVING"',
        '"openapi"',
    ],
    "$BUF curl": ["VERIFY_VERDICT_MALFORMED", "verdict.v1.VerdictService/BatchEvaluate", '"verdict": "no"'],
    "verdict verify": ['"malformed"', '"verdict": "no"', '"ok"', "exit status 1"],
    "local-judge": ['"verdict": "yes"', '"llm_model": "verdict-local-judge"'],
    "grpcurl": ["VERIFY_VERDICT_MALFORMED", "verdict.v1.VerdictService"],
}
"""What each block (found by a text it holds) must print: the outcomes its comments promise."""


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[ServerProcess, int]]:
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


def _concrete(block: str, grpc_port: int, http_port: int) -> str:
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


def test_the_tour_has_its_blocks() -> None:
    assert len(BLOCKS) == len(PROMISES)
    for key in PROMISES:
        assert any(key in block for block in BLOCKS), key
    assert "grpcurl" not in BLOCKS[0], "the tour starts with the project's own tools, grpcurl is the alternative"


@pytest.mark.parametrize("key", list(PROMISES))
def test_each_tour_block_runs_as_written(server: tuple[ServerProcess, int], key: str, tmp_path: Path) -> None:
    [block] = [block for block in BLOCKS if key in block]
    if key == "grpcurl" and shutil.which("grpcurl") is None:
        pytest.skip("grpcurl is the documented alternative and is not installed here")
    process, http_port = server
    script = _concrete(block, process.grpc_port, http_port)
    env = {
        key: value for key, value in os.environ.items() if not key.startswith(("VERDICT_", "MAKEFLAGS", "MAKELEVEL"))
    }
    done = subprocess.run(
        # not -e: a tour line may show a failing exit status on purpose (`verdict verify` of a malformed answer); each
        # line's outcome is checked through what it prints, and the block's last command must succeed
        ["bash", "-o", "pipefail", "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"
    for promise in PROMISES[key]:
        assert promise in done.stdout, f"{key}: {promise!r} not in\n{done.stdout}\n{done.stderr}"
