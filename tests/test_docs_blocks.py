"""Every shell block in the README and docs/ is run by a test, or says in the docs why it is not.

A block is one of:
- the README's opening `make run` / `make test` (tests/test_readme.py and the clean-clone CI run hold it);
- a ````sh block of the README's "A short tour" (tests/test_readme_tour.py walks them);
- `<!-- runnable -->` above it: run from the repository root (tests/test_docs_commands.py);
- `<!-- runnable against a server -->` above it (optionally "(where grpcurl is installed)"): run here against a real
  server with its HTTP port on, ports made concrete, and each must show what `PROMISES` says it shows;
- `<!-- not run: why -->` (or `not run here:`) above it, the reason naming what covers it instead.

So a block added to the docs without a marker fails here: nobody can paste an example that nothing ever ran.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.doc_blocks import ROOT, concrete, http_server, run_block
from tests.support import ServerProcess

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(?P<fence>`{3,})(?:sh|bash|shell|console)[ \t]*\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S)
MARKER = re.compile(r"<!-- (?P<kind>runnable against a server|runnable|not run(?: here)?)(?P<rest>[^>]*)-->\s*$")


@dataclass(frozen=True)
class Block:
    doc: str
    line: int
    body: str
    marker: str
    """The marker's kind ("" for none), as MARKER reads it."""
    note: str
    """What follows the kind: a reason for `not run`, "(where grpcurl is installed)" for a server block."""


def _tour_span(text: str) -> tuple[int, int]:
    start = text.find("## A short tour")
    end = text.find("\n## ", start + 1)
    return start, (len(text) if end < 0 else end)


def shell_blocks() -> list[Block]:
    blocks = []
    for doc in DOCS:
        text = doc.read_text()
        tour = _tour_span(text) if doc.name == "README.md" else (-1, -1)
        for found in FENCE.finditer(text):
            line = text.count("\n", 0, found.start()) + 1
            in_tour = tour[0] <= found.start() < tour[1] and found["fence"] == "````"
            if doc.name == "README.md" and (line <= 5 or in_tour):
                continue  # the two commands, and the tour's ````sh blocks: each has its own test (module docstring)
            before = text[: found.start()].rstrip("\n").rsplit("\n", 1)[-1]
            marker = MARKER.search(before)
            kind, note = (marker["kind"], marker["rest"].strip()) if marker else ("", "")
            blocks.append(Block(doc.name, line, found["body"], kind, note))
    return blocks


BLOCKS = shell_blocks()
SERVER_BLOCKS = [block for block in BLOCKS if block.marker == "runnable against a server"]

PROMISES = {
    '"toolCalls"': ["VERIFY_VERDICT_MALFORMED", "python_literal"],
    '"message_json"': ["VERIFY_VERDICT_MALFORMED", "get_time"],
    "describe verdict.v1.EvaluatorConfig": ["verdict.v1.VerdictService", "VERIFY_VERDICT_MALFORMED", "SERVING"],
    '"operator": "about"': ["INVALID_EVALUATOR_CONFIG"],
    "$BUF curl": ["verdict.v1.VerdictService/Evaluate", '"verdict": "no"', "VERIFY_VERDICT_UNVERIFIABLE"],
    "x-request-id": ['"verdict": "no"', '"exit_code"'],
}
"""What each server block (found by a text it holds) must print."""
EXPECTED_FAILURE = {'"operator": "about"'}
"""Blocks that show an error on purpose: their last command exits non-zero, and the error is what is checked."""


def test_every_shell_block_is_run_or_says_why() -> None:
    unmarked = [f"{block.doc}:{block.line}" for block in BLOCKS if not block.marker]
    assert not unmarked, f"shell blocks with no <!-- runnable --> or <!-- not run: why --> marker: {unmarked}"
    for block in BLOCKS:
        if block.marker.startswith("not run"):
            assert block.note.lstrip(":").strip(), f"{block.doc}:{block.line}: `not run` must say why"


def test_the_finder_sees_the_docs_blocks() -> None:
    """The block finder is not blind: it finds the known markers of each kind (a regex that found nothing would make
    the first test pass on anything)."""
    kinds = {block.marker for block in BLOCKS}
    assert {"runnable", "runnable against a server", "not run"} <= kinds
    assert len(BLOCKS) >= 20


def test_each_server_block_has_its_promise() -> None:
    for block in SERVER_BLOCKS:
        keys = [key for key in PROMISES if key in block.body]
        assert len(keys) == 1, f"{block.doc}:{block.line}: {keys}"
    assert len(SERVER_BLOCKS) == len(PROMISES)


def test_a_block_without_a_marker_is_found(tmp_path: Path) -> None:
    text = "intro\n\n```sh\nls\n```\n\n<!-- not run: a cluster -->\n```sh\nkubectl apply\n```\n"
    found = list(FENCE.finditer(text))
    assert len(found) == 2
    assert MARKER.search(text[: found[0].start()].rstrip("\n").rsplit("\n", 1)[-1]) is None
    second = MARKER.search(text[: found[1].start()].rstrip("\n").rsplit("\n", 1)[-1])
    assert second is not None
    assert second["kind"] == "not run"


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[ServerProcess, int]]:
    with http_server() as running:
        yield running


@pytest.mark.parametrize("block", SERVER_BLOCKS, ids=[f"{block.doc}:{block.line}" for block in SERVER_BLOCKS])
def test_server_block_runs_as_written(server: tuple[ServerProcess, int], block: Block, tmp_path: Path) -> None:
    [key] = [key for key in PROMISES if key in block.body]
    if "grpcurl" in block.note and shutil.which("grpcurl") is None:
        pytest.skip("grpcurl is the documented alternative and is not installed here")
    if "$BUF" in block.body:
        subprocess.run(["make", "-C", str(ROOT), "node-deps"], capture_output=True, timeout=600, check=True)
    process, http_port = server
    script = concrete(block.body, process.grpc_port, http_port)
    done = run_block(script, tmp_path)
    output = done.stdout + done.stderr
    if key in EXPECTED_FAILURE:
        assert done.returncode != 0, output
    else:
        assert done.returncode == 0, f"{script}\n{output}"
    for promise in PROMISES[key]:
        assert promise in output, f"{block.doc}:{block.line}: {promise!r} not in\n{output}"
