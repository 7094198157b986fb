"""`verdict.records.record`: compared and hashed by value, slotted, copied by `dataclasses.replace` and pickled (the
parse pool's results cross processes), and frozen to the type checker: an assignment to a field fails mypy."""

from __future__ import annotations

import dataclasses
import pickle
import subprocess
import sys
from pathlib import Path

from verdict.records import record
from verdict.verify.model import BlockCheck, CodeCheck, Verdict, Verification

ROOT = Path(__file__).resolve().parents[1]


@record
class Pair:
    left: int
    right: str = "r"


def test_a_record_is_compared_and_hashed_by_value() -> None:
    assert Pair(1) == Pair(1, "r")
    assert Pair(1) != Pair(2)
    assert hash(Pair(1)) == hash(Pair(1, "r"))
    assert len({Pair(1), Pair(1), Pair(2)}) == 2


def test_a_record_has_slots_and_no_dict() -> None:
    assert vars(Pair)["__slots__"] == ("left", "right")
    assert not hasattr(Pair(1), "__dict__")


def test_records_are_replaced_and_pickled_whole() -> None:
    verification = Verification(Verdict.OK, "1/1 blocks parsed", (BlockCheck(0, "json", Verdict.OK, line=1),))
    assert dataclasses.replace(verification, detail="changed").checks == verification.checks
    assert dataclasses.replace(verification, detail="changed").detail == "changed"
    assert pickle.loads(pickle.dumps(verification)) == verification  # noqa: S301 (our own bytes)
    parsed = CodeCheck(Verdict.MALFORMED, "bad", 3)
    assert pickle.loads(pickle.dumps(parsed)) == parsed  # noqa: S301 (our own bytes)


def test_assigning_to_a_field_of_a_record_fails_the_type_check(tmp_path: Path) -> None:
    snippet = tmp_path / "assigns.py"
    snippet.write_text(
        "from verdict.verify.model import BlockCheck, Verdict\n"
        "check = BlockCheck(0, 'json', Verdict.OK)\n"
        "check.detail = 'changed'\n"
        "same = BlockCheck(0, 'json', Verdict.OK)\n"
    )
    # in its own process: mypy raises the interpreter's recursion limit, which other tests' bounds depend on
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--config-file", str(ROOT / "pyproject.toml"), str(snippet)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    out, err, status = checked.stdout, checked.stderr, checked.returncode
    assert status == 1, out + err
    assert f"{snippet.name}:3: error" in out
    assert "read-only" in out
    # building a record type-checks; only the assignment fails
    assert ":2:" not in out
    assert ":4:" not in out
