"""The public surface of verdict_client is exactly what is intended: nothing private leaks, nothing is missing."""

from __future__ import annotations

import verdict_client

INTENDED = {
    "AsyncVerdictClient",
    "BlockCheck",
    "ClientConfig",
    "Evaluation",
    "EvaluatorCatalogue",
    "FieldViolation",
    "Keepalive",
    "RetryPolicy",
    "SecondOpinion",
    "ToolCallCheck",
    "TlsConfig",
    "VerdictClient",
    "VerdictRpcError",
    "Verification",
    "VerifyVerdict",
}


def test_all_is_exactly_the_intended_names() -> None:
    assert set(verdict_client.__all__) == INTENDED
    assert len(verdict_client.__all__) == len(INTENDED)


def test_every_exported_name_resolves() -> None:
    for name in verdict_client.__all__:
        assert getattr(verdict_client, name).__name__ == name


def test_star_import_gives_exactly_all() -> None:
    namespace: dict[str, object] = {}
    exec("from verdict_client import *", namespace)  # noqa: S102
    assert set(namespace) - {"__builtins__"} == INTENDED
