"""Shared fixtures: an `Evaluations` on a fresh registry, with a small regex bound so timeouts are quick."""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from verdict.config.keys import Config
from verdict.evaluators import Evaluations
from verdict.metrics import Metrics
from verdict.runner import Runner


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def metrics(registry: CollectorRegistry) -> Metrics:
    return Metrics(registry)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace_root = tmp_path / "root"
    workspace_root.mkdir()
    return workspace_root


@pytest.fixture
def evaluations(metrics: Metrics, root: Path) -> Evaluations:
    config = Config(workspace_root=str(root), regex_timeout_seconds=0.2, git_timeout_seconds=20)
    return Evaluations(config, Runner(metrics), metrics)
