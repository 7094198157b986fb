"""The calibration report: JSON, written whole, and read back as the baseline drift is measured from."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from verdict.judges.calibration import JudgeReport

__all__ = ["baseline_kappas", "read_report", "report_document", "write_report"]


def report_document(
    reports: Sequence[JudgeReport], drifts: Mapping[str, Mapping[str, Mapping[str, Any]]], *, floor: float, drop: float
) -> dict[str, Any]:
    """The JSON report: every judge's statistics and drift, and the rule it was judged by."""
    return {
        "format": 1,
        "kappa_floor": floor,
        "kappa_drop": drop,
        "judges": [{**report.to_json(), "drift": drifts.get(report.judge, {})} for report in reports],
    }


def baseline_kappas(document: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """{judge: {evaluator: kappa}} from an earlier report, the baseline drift is measured from."""
    found: dict[str, dict[str, float]] = {}
    for judge in document.get("judges", []):
        evaluators = judge.get("evaluators", {})
        found[str(judge.get("judge"))] = {
            name: float(stats["kappa"]) for name, stats in evaluators.items() if stats.get("answered")
        }
    return found


def read_report(path: str | Path) -> dict[str, Any] | None:
    """An earlier report, or None when there is none yet; raises ValueError for one that is not a report."""
    file = Path(path)
    if not file.exists():
        return None
    try:
        document = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{file}: not a calibration report: {exc}") from None
    if not isinstance(document, dict) or "judges" not in document:
        raise ValueError(f"{file}: not a calibration report")
    return document


def write_report(path: str | Path, document: Mapping[str, Any]) -> None:
    """Written whole or not at all: a reader (the next run, an operator) never sees half a report."""
    file = Path(path)
    partial = file.with_name(f".{file.name}.partial")
    partial.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    partial.replace(file)
