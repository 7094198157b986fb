"""The docs say what the code does, checked per class of statement so a new RPC, metric or flag cannot leave them
stale: RPC counts against the proto, the metrics table against the registry a server builds, and every CLI flag an
error message tells people to set against the `verdict` parser."""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from verdict.cli.main import build_parser
from verdict.config.keys import Config
from verdict.metrics import Metrics
from verdict.rpc import SERVICE_DESCRIPTOR
from verdict.rpc.decisions import build_decision_log

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
RPC_COUNT = re.compile(r"\b(one|two|three|four|five|six|seven|eight|nine|\d+) (?:unary )?RPCs\b", re.IGNORECASE)


def test_every_count_of_the_rpcs_matches_the_proto() -> None:
    methods = len(SERVICE_DESCRIPTOR.methods)
    found = []
    for doc in DOCS:
        for match in RPC_COUNT.finditer(doc.read_text()):
            word = match.group(1).lower()
            found.append((doc.name, match.group(0), NUMBERS.get(word) or int(word)))
    assert found, "no doc counts the RPCs any more: drop this test or the count"
    wrong = [(name, text) for name, text, count in found if count != methods]
    assert wrong == [], f"the proto has {methods} RPCs"


def test_the_clients_guide_lists_every_rpc() -> None:
    text = (ROOT / "docs" / "clients.md").read_text()
    table = text.split("| RPC |", 1)[1].split("\n\n", 1)[0]
    listed = set(re.findall(r"^\| `(\w+)` \|", table, re.MULTILINE))
    assert listed == {method.name for method in SERVICE_DESCRIPTOR.methods}


def _exported() -> set[str]:
    """The metric names a server exports (decision log on), as scraped: counters with `_total`."""
    registry = CollectorRegistry()
    Metrics(registry)
    log = build_decision_log(Config(decision_log="stdout"), registry)
    assert log is not None
    log.close()
    return {f"{family.name}_total" if family.type == "counter" else family.name for family in registry.collect()}


def test_the_metrics_table_lists_exactly_the_metrics_the_server_exports() -> None:
    text = (ROOT / "docs" / "monitoring.md").read_text()
    section = text.split("## Metrics", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    documented = {name for row in rows for name in re.findall(r"`([a-z_:]+)`", row.split("|")[1])}
    exported = _exported()
    assert exported - documented == set(), "exported but not in docs/monitoring.md's table"
    assert documented - exported == set(), "in docs/monitoring.md's table but not exported"


def _options(parser: argparse.ArgumentParser) -> set[str]:
    found = {option for action in parser._actions for option in action.option_strings}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _options(sub)
    return found


def _raised_texts(tree: ast.AST) -> list[str]:
    texts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            for inner in ast.walk(node.exc):
                if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                    texts.append(inner.value)
    return texts


def test_every_flag_an_error_names_exists() -> None:
    options = _options(build_parser())
    named: dict[str, set[str]] = {}
    for path in sorted((ROOT / "service" / "verdict").rglob("*.py")):
        if "v1" in path.parts:
            continue
        for text in _raised_texts(ast.parse(path.read_text())):
            # a flag a person is told to set (`set --x`, `or --x on verdict serve`), not another program's (`git diff
            # --stat`)
            for flag in re.findall(r"\b(?:set|use|pass|add|give|with|try|or)\s+(--[a-z][a-z0-9-]+)", text):
                named.setdefault(flag, set()).add(str(path.relative_to(ROOT)))
    assert "--workspace-root" in named  # the messages this test was written for are still looked at
    missing = {flag: sorted(paths) for flag, paths in named.items() if flag not in options}
    assert missing == {}, "error messages name flags no `verdict` command has"


def test_verdict_evaluate_takes_the_workspace_root_the_error_names() -> None:
    args = build_parser().parse_args(["evaluate", "--evaluator", "{type: diff_stall}", "--workspace-root", "/tmp"])
    assert args.workspace_root == "/tmp"


BROKEN_BLOCKS = {
    "python": "x = 1\ndef f(:\n",
    "json": '{\n"a": 1,\n}\n',
    "yaml": "a: [\n",
    "javascript": "let x = ;\n",
    "shell": "if then\n",
}


@pytest.mark.parametrize("language", list(BROKEN_BLOCKS))
def test_one_line_numbering_convention_lines_of_the_whole_response(language: str) -> None:
    """docs/verification.md: every line number in a detail, and `error_line`, is a line of the whole response;
    `line` is the block's opening fence. A message that counted inside the block disagreed with both."""
    text = f"intro\n\nmore intro\n```{language}\n{BROKEN_BLOCKS[language]}```\n"
    done = subprocess.run(
        [sys.executable, "-m", "verdict", "verify"], input=text, capture_output=True, text=True, timeout=60, check=False
    )
    [check] = json.loads(done.stdout)["checks"]
    lines = text.splitlines()
    assert lines[check["line"] - 1].startswith("```")
    assert check["error_line"] > check["line"]
    mentioned = {int(n) for n in re.findall(r"\bline (\d+)\b", check["detail"])}
    assert mentioned == {check["error_line"]}, check["detail"]
