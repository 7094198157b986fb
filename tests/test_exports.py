"""The curated package surfaces, pinned: a name added to or dropped from a public surface is a decision, made here.

Each surface's `__all__` is exactly the intended names, every one of them importable, and nothing the rest of the
code imports from a package's top level is missing from its `__all__`.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
from pathlib import Path

import pytest

SURFACES = {
    "verdict": {"__version__"},
    "verdict.evaluators": {
        "CATALOGUE",
        "DEFAULT_CONTRACT",
        "EvaluationInput",
        "EvaluationResult",
        "Evaluations",
        "Evaluator",
        "EvaluatorSpec",
        "FieldSpec",
        "GraderMalfunction",
        "InterpolationError",
        "JudgedEvaluator",
        "Judgement",
        "ModelGrader",
        "Namespaces",
        "Outside",
        "Pure",
        "Registry",
        "ResponseFacts",
        "Step",
        "ToolCall",
        "ToolDefinition",
        "interpolate",
        "jsonable",
        "load_evaluate_block",
        "validate",
        "whole_numbers",
    },
    "verdict.errors": {
        "ERROR_DOMAIN",
        "ConfigError",
        "DeadlineTooShort",
        "FailedPrecondition",
        "Internal",
        "InvalidArgument",
        "InvalidConfig",
        "PermissionDenied",
        "ResourceExhausted",
        "Unauthenticated",
        "Unavailable",
        "VerdictError",
        "resource_exhausted",
    },
    "verdict.security": {
        "ANONYMOUS",
        "OPEN",
        "Caller",
        "Certificates",
        "Gate",
        "Grant",
        "Policy",
        "bearer_token",
        "current_caller",
        "load_policy",
        "peer_identities",
        "require_judges",
        "server_credentials",
        "ssl_peer_identities",
    },
    "verdict.security.gate": {"ANONYMOUS", "Caller", "Gate", "bearer_token", "current_caller", "require_judges"},
    "verdict.security.policy": {
        "ALL_RPCS",
        "ANONYMOUS",
        "OPEN",
        "PRINCIPAL",
        "Grant",
        "Policy",
        "WatchedPolicy",
        "load_policy",
    },
    "verdict.security.tokens": {"MIN_TOKEN_BYTES", "TokenDirectory", "bearer_token"},
    "verdict.security.tls": {
        "Certificates",
        "material_follower",
        "peer_identities",
        "server_credentials",
        "ssl_peer_identities",
    },
    "verdict.server.interceptors.access_control": {
        "HEALTH_WATCHES_PER_CONNECTION",
        "AccessInterceptor",
        "InFlight",
        "publish",
        "unpublish",
    },
    "verdict.server.scrape": {"MetricsHttpServer"},
    "verdict.workspace": {
        "NAME_MAX",
        "PATH_MAX",
        "Repository",
        "UncheckedConfig",
        "find_repository",
        "have_openat2",
        "inside",
        "open_beneath",
        "open_root",
        "read_bounded",
    },
    "verdict.rpc.decoding": {
        "DIAGNOSE_DEPTH",
        "DIAGNOSE_STEPS",
        "Undecodable",
        "diagnose",
        "lenient_decoder",
        "undecodable",
        "varint",
    },
    "verdict.rpc.stepwise": {
        "MAX_DESCENT",
        "STEPWISE_BYTES",
        "STEP_BYTES",
        "VALUES_PER_STEP",
        "context_in_steps",
        "decode_in_steps",
        "message_class_of",
        "remember_wire",
        "wire_bytes",
        "wire_size",
    },
    "verdict.server.connect": {"ConnectServer", "connect_application", "method_infos"},
    "verdict.rpc.decisions": {
        "DecisionLog",
        "FileSink",
        "HttpSink",
        "Sink",
        "StreamSink",
        "build_decision_log",
        "failure",
        "record_call",
        "record_refusal",
    },
    "verdict.server.logs": {
        "HEADER_LOGGERS",
        "REDACTED",
        "AccessLines",
        "CallContextFilter",
        "JsonFormatter",
        "TextFormatter",
        "access_lines",
        "configure_logging",
        "redact_secrets",
    },
    "verdict.config.effective": {"MASK", "is_secret", "render"},
    "verdict.verify": {
        "LANGUAGES",
        "BlockCheck",
        "LanguageRecord",
        "Languages",
        "Runs",
        "Verdict",
        "Verification",
        "verify_offline",
    },
}

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", sorted(SURFACES))
def test_the_surface_is_exactly_the_intended_names(name: str) -> None:
    module = importlib.import_module(name)
    assert set(module.__all__) == SURFACES[name]
    assert len(module.__all__) == len(set(module.__all__)), "a name listed twice"
    missing = [export for export in module.__all__ if not hasattr(module, export)]
    assert missing == []


def _top_level_imports(package: str) -> dict[str, set[str]]:
    """Names imported as `from <package> import X` in the tracked Python of service/, bench/ and tests/, by file."""
    found: dict[str, set[str]] = {}
    listed = subprocess.run(
        ["git", "ls-files", "--", "service/*.py", "bench/*.py", "tests/*.py"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for name in listed:
        path = REPO / name
        if "/v1/" in name or "/corpus/" in name:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == package and node.level == 0:
                found.setdefault(name, set()).update(alias.name for alias in node.names)
    return found


@pytest.mark.parametrize("name", sorted(SURFACES))
def test_what_other_code_imports_from_a_package_top_level_is_on_its_surface(name: str) -> None:
    module = importlib.import_module(name)
    here = Path(module.__file__ or "").parent
    submodules = {path.stem for path in here.glob("*.py")} | {path.parent.name for path in here.glob("*/__init__.py")}
    strays = {
        path: names - set(module.__all__) - submodules
        for path, names in _top_level_imports(name).items()
        if names - set(module.__all__) - submodules
    }
    assert strays == {}
