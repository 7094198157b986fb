"""Calibration cases: the labelled known-answer questions an operator supplies, loaded and checked.

A case file (YAML or JSON; a directory is every *.yaml, *.yml, *.json in it, sorted) holds `cases:`, each

```yaml
- id: tests-pass                 # unique in the set
  evaluator: llm_structured      # or comparator, contract (default llm_structured)
  prompt: Did every test pass?   # the question, as the evaluator takes it
  output: "...142 passed..."     # the judged output
  expected: "yes"                # the verdict a trustworthy judge gives
- id: shorter-summary
  evaluator: comparator
  prompt: Which summary is faithful to the source?
  output: "..."                  # comparator: the output ...
  baseline: "..."                # ... against the baseline
  expected: "no"                 # yes: the output wins, no: the baseline wins, tie
```

Any other key of the evaluator's configuration goes under `config:` (contract's `pairs`, a custom `schema`). Each
case is checked against the evaluator catalogue when loaded, so a broken set fails before any judge is paid.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from verdict.errors import InvalidConfig
from verdict.evaluators.catalogue import validate

__all__ = ["EVALUATORS", "MAX_CASES", "CalibrationCase", "load_cases"]

EVALUATORS = ("llm_structured", "comparator", "contract")
_CASE_KEYS = {"id", "evaluator", "expected", "output", "prompt", "baseline", "config"}
MAX_CASES = 10_000
"""A calibration set larger than this is refused: every case is a paid judge call per judge."""


@dataclass(frozen=True)
class CalibrationCase:
    """One labelled question: the evaluator's validated settings (without any judge), the output, the label."""

    id: str
    evaluator: str
    expected: str
    output: str
    settings: Mapping[str, Any]


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.suffix in (".yaml", ".yml", ".json") and p.is_file())
    return [path]


def load_cases(path: str | Path) -> list[CalibrationCase]:
    """Every case of a file or directory. Raises ValueError naming the file and case for anything malformed."""
    cases: list[CalibrationCase] = []
    seen: set[str] = set()
    root = Path(path)
    if not root.exists():
        raise ValueError(f"{root}: no such calibration file or directory")
    for file in _files(root):
        try:
            document = yaml.safe_load(file.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise ValueError(f"{file}: cannot read: {exc}") from None
        raw_cases = document.get("cases") if isinstance(document, Mapping) else None
        if not isinstance(raw_cases, list):
            raise ValueError(f"{file}: must hold a list `cases:`")
        for index, raw in enumerate(raw_cases):
            case = _case(raw, f"{file}: cases[{index}]")
            if case.id in seen:
                raise ValueError(f"{file}: cases[{index}]: the id {case.id!r} is used twice")
            seen.add(case.id)
            cases.append(case)
    if not cases:
        raise ValueError(f"{root}: holds no calibration cases")
    if len(cases) > MAX_CASES:
        raise ValueError(f"{root}: {len(cases)} cases; at most {MAX_CASES} are accepted")
    return cases


def _case(raw: Any, where: str) -> CalibrationCase:
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where}: must be a mapping")
    unknown = set(raw) - _CASE_KEYS
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)} (put evaluator settings under `config:`)")
    for key in ("id", "expected"):
        if not isinstance(raw.get(key), str | bool) or raw.get(key) == "":
            raise ValueError(f"{where}: needs `{key}`")
    evaluator = str(raw.get("evaluator", "llm_structured"))
    if evaluator not in EVALUATORS:
        raise ValueError(f"{where}: evaluator must be one of {', '.join(EVALUATORS)}, got {evaluator!r}")
    expected = raw["expected"]
    if isinstance(expected, bool):  # YAML 1.1 reads a bare yes/no as a boolean
        expected = "yes" if expected else "no"
    settings: dict[str, Any] = {"type": evaluator, **dict(raw.get("config") or {})}
    for key in ("prompt", "baseline"):
        if raw.get(key) is not None:
            settings[key] = str(raw[key])
    try:
        checked = validate(settings)
    except InvalidConfig as exc:
        raise ValueError(f"{where}: {exc}") from None
    for key in ("judges", "judge", "quorum", "samples", "tie"):
        if settings.get(key) is not None:
            raise ValueError(f"{where}: a case names no judge (calibration chooses them), got `{key}`")
    return CalibrationCase(str(raw["id"]), evaluator, str(expected), str(raw.get("output", "")), checked)
