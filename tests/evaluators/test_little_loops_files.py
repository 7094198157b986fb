"""little-loops files as written: every `evaluate:` block of its loop files is accepted, and a key little-loops knows
but the type ignores is named in `ignored_keys` instead of refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from verdict.errors import InvalidConfig
from verdict.evaluators import EvaluationInput, Evaluations, load_evaluate_block, validate
from verdict.evaluators.validation import LITTLE_LOOPS_KEYS

BLOCKS: list[dict[str, str]] = yaml.safe_load((Path(__file__).parent / "data" / "little_loops_blocks.yaml").read_text())
RUNNABLE = [entry for entry in BLOCKS if "refused" not in entry]
NOT_RUNNABLE = [entry for entry in BLOCKS if "refused" in entry]

MEASURED_BLOCKS = 230
"""Distinct `evaluate:` blocks collected from little-loops' loop files (docs/evaluators.md states the figure)."""


@pytest.mark.parametrize("entry", RUNNABLE, ids=[entry["from"] for entry in RUNNABLE])
def test_every_block_of_the_loop_files_is_accepted(entry: dict[str, str]) -> None:
    config = load_evaluate_block(entry["block"])
    settings = validate(config)
    assert settings["type"] == config["type"]


@pytest.mark.parametrize("entry", NOT_RUNNABLE, ids=[entry["from"] for entry in NOT_RUNNABLE])
def test_a_block_little_loops_cannot_run_either_is_refused(entry: dict[str, str]) -> None:
    assert entry["refused"].strip()
    with pytest.raises(InvalidConfig):
        validate(load_evaluate_block(entry["block"]))


def test_the_measured_figure() -> None:
    """The figure docs/evaluators.md states: every runnable block accepted, each distinct block counted once."""
    refused = []
    for entry in RUNNABLE:
        try:
            validate(load_evaluate_block(entry["block"]))
        except InvalidConfig as error:
            refused.append((entry["from"], error.field, error.message))
    print(f"{len(RUNNABLE) - len(refused)} of {len(RUNNABLE)} real blocks accepted; {len(NOT_RUNNABLE)} not runnable")
    assert refused == []
    assert len(BLOCKS) >= MEASURED_BLOCKS
    assert len({entry["block"] for entry in BLOCKS}) == len(BLOCKS)


def test_the_docs_state_the_measured_figure() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "evaluators.md").read_text()
    assert f"{len(RUNNABLE)} of {len(RUNNABLE)} real blocks accepted" in " ".join(docs.split())
    assert f"the {len(NOT_RUNNABLE)} more it holds are fragment" in " ".join(docs.split())


def test_the_reference_table_keys_are_the_little_loops_keys() -> None:
    table = Path(__file__).parent / "data" / "little_loops_blocks.yaml"
    assert table.exists()
    assert {"path", "key", "pattern", "target", "pairs", "history_file"} <= LITTLE_LOOPS_KEYS
    assert "expected" not in LITTLE_LOOPS_KEYS  # trajectory's, not little-loops'


async def test_a_key_the_type_ignores_is_named_in_the_details(evaluations: Evaluations) -> None:
    block = "type: output_numeric\npath: .total\noperator: eq\ntarget: 0\n"
    result = await evaluations.evaluate(EvaluationInput(config=load_evaluate_block(block), output="0"))
    assert result.verdict == "yes"
    assert result.details["ignored_keys"] == ["path"]


async def test_no_ignored_keys_no_detail(evaluations: Evaluations) -> None:
    result = await evaluations.evaluate(EvaluationInput(config={"type": "exit_code"}))
    assert "ignored_keys" not in result.details


async def test_ignored_keys_are_sorted_and_accepted_for_new_families_too(evaluations: Evaluations) -> None:
    config: dict[str, Any] = {
        "type": "trajectory",
        "expected": [{"name": "a"}],
        "pattern": "x",
        "max_stall": 3,
    }
    result = await evaluations.evaluate(EvaluationInput(config=config))
    assert result.details["ignored_keys"] == ["max_stall", "pattern"]


@pytest.mark.parametrize(
    ("config", "field", "fragment"),
    [
        ({"type": "output_numeric", "operator": "eq", "target": 0, "pth": ".a"}, "config.pth", "did you mean 'path'"),
        ({"type": "exit_code", "kye": "n"}, "config.kye", "did you mean 'key'"),
        ({"type": "output_numeric", "operator": "eq", "target": 0, "expected": []}, "config.expected", "trajectory"),
    ],
)
def test_a_key_little_loops_does_not_know_is_still_refused(config: dict[str, Any], field: str, fragment: str) -> None:
    with pytest.raises(InvalidConfig) as refused:
        validate(config)
    assert refused.value.field == field
    assert fragment in refused.value.message
