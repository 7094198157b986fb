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
        "HOSTS",
        "Host",
        "HostRegistry",
        "HttpHost",
        "JudgeAnswer",
        "JudgeOutcome",
        "JudgeReply",
        "JudgeRequest",
        "JudgeService",
        "Judges",
        "LlmStructured",
        "ModelGraders",
        "RulingCache",
        "SecondOpinion",
        "build_judges",
        "calibrate_judges",
        "host_named",
        "select_host",
    ]
    for name in verdict.judges.__all__:
        assert hasattr(verdict.judges, name)


def _judges_imports_outside(root: Path) -> list[tuple[Path, str, str]]:
    """(file, module, name) for every `from verdict.judges[...] import name` in files outside the package."""
    found: list[tuple[Path, str, str]] = []
    for path in root.rglob("*.py"):
        if PACKAGE in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("verdict.judges"):
                found.extend((path, node.module or "", alias.name) for alias in node.names)
    return found


def test_other_packages_use_only_the_curated_surface():
    """The server and everything else outside judges/ import from `verdict.judges` itself, and only names in
    `__all__`: the submodules are free to move."""
    service_root = PACKAGE.parent.parent
    imports = _judges_imports_outside(service_root)
    assert imports, "the server imports the judges somewhere"
    for path, module, name in imports:
        assert module == "verdict.judges", f"{path} imports the private module {module}"
        assert name in verdict.judges.__all__, f"{path} imports {name!r}, which the package does not export"


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


def test_every_module_stays_small_enough_to_have_one_job():
    """A module past ~400 lines has usually grown a second job (the service once held the judge model, the reading
    of replies, the clipping of details and the I/O in one file); split it by job rather than raise the bound."""
    sizes = {module.name: len(module.read_text().splitlines()) for module in PACKAGE.glob("*.py")}
    assert {name: size for name, size in sizes.items() if size > 400} == {}
