"""The README's promises: its first lines are the two commands, and its Python tour snippet runs as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.support import ServerProcess

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def test_readme_opens_with_make_run_and_make_test() -> None:
    first_block = README.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    assert first_block[0].startswith("make run ")
    assert first_block[1].startswith("make test ")


def test_python_tour_snippet_runs_against_a_server(server_process: ServerProcess) -> None:
    snippet = re.search(r"````python\n(from verdict_client.*?)````", README, re.DOTALL)
    assert snippet is not None
    code = snippet.group(1).replace("localhost:50051", server_process.target)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "MALFORMED" in done.stdout.upper()


def test_the_readme_passes_its_own_verifier() -> None:
    """Every fence in the README is closed and every checkable block parses: Verdict on its own front page."""
    readme = Path(__file__).resolve().parent.parent / "README.md"
    done = subprocess.run(
        [sys.executable, "-m", "verdict", "verify", str(readme)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout
    assert '"ok"' in done.stdout
