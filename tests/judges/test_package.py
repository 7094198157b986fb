"""The judges package's public surface, and the rule that nothing under judges/ talks gRPC."""

from __future__ import annotations

import ast
from pathlib import Path

import verdict.judges

PACKAGE = Path(verdict.judges.__file__).parent


def test_the_exported_names_are_exactly_the_intended_ones():
    assert sorted(verdict.judges.__all__) == [
        "CliHost",
        "Comparator",
        "Contract",
        "Host",
        "HttpHost",
        "JudgeAnswer",
        "JudgeOutcome",
        "JudgeReply",
        "JudgeRequest",
        "JudgeService",
        "Judges",
        "LlmStructured",
        "RulingCache",
        "SecondOpinion",
        "build_judges",
        "host_named",
        "select_host",
    ]
    for name in verdict.judges.__all__:
        assert hasattr(verdict.judges, name)


def test_no_module_imports_grpc():
    for module in PACKAGE.glob("*.py"):
        tree = ast.parse(module.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            assert not any(name == "grpc" or name.startswith(("grpc.", "verdict.v1")) for name in names), module
