"""docs/configuration.md's key table is generated from the keys' docs (scripts/gen_config_docs.py) and must match them.

This test is how the check runs in `make test`: a key added, removed, reworded or given a new default without
`python scripts/gen_config_docs.py` fails here, and so does a hand edit of the table.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.support import load_script
from verdict.config.keys import Config, config_keys

ROOT = Path(__file__).resolve().parent.parent.parent
DOC = ROOT / "docs" / "configuration.md"


GEN = load_script("gen_config_docs.py")


def _table_rows(text: str) -> dict[str, str]:
    """The doc's key rows between the markers, by key."""
    table = text.split(GEN.BEGIN, 1)[1].split(GEN.END, 1)[0]
    return {line.split("`", 2)[1]: line for line in table.splitlines() if line.startswith("| `")}


def test_the_configuration_doc_matches_the_keys() -> None:
    assert GEN.main(["--check"], doc=DOC) == 0, "run `python scripts/gen_config_docs.py` and commit the doc"


def test_every_key_has_one_row_with_its_default_and_doc_in_declaration_order() -> None:
    rows = _table_rows(DOC.read_text())
    assert tuple(rows) == config_keys()
    for key in dataclasses.fields(Config):
        assert f"| `{key.name}` | `{key.default!r}` |" in rows[key.name]
        assert " ".join(key.metadata["doc"].split()) in rows[key.name]


def _copy(tmp_path: Path) -> Path:
    doc = tmp_path / "configuration.md"
    doc.write_text(DOC.read_text())
    return doc


def test_the_check_fails_on_a_hand_edited_row_and_the_rewrite_restores_it(tmp_path: Path) -> None:
    doc = _copy(tmp_path)
    original = doc.read_text()
    row = _table_rows(original)["judge_host"]
    doc.write_text(original.replace(row, row.replace("OpenAI-compatible", "OpenAI compatible")))
    assert GEN.main(["--check"], doc=doc) == 1
    assert GEN.main([], doc=doc) == 0
    assert doc.read_text() == original
    assert GEN.main(["--check"], doc=doc) == 0


def test_the_check_fails_on_a_missing_row(tmp_path: Path) -> None:
    doc = _copy(tmp_path)
    text = doc.read_text()
    doc.write_text(text.replace(_table_rows(text)["workers"] + "\n", ""))
    assert GEN.main(["--check"], doc=doc) == 1


def test_the_rewrite_keeps_the_prose_around_the_table(tmp_path: Path) -> None:
    doc = _copy(tmp_path)
    head, rest = doc.read_text().split(GEN.BEGIN, 1)
    tail = rest.split(GEN.END, 1)[1]
    doc.write_text(f"{head}Added prose.\n\n{GEN.BEGIN}\nstale\n{GEN.END}{tail}\nMore prose.\n")
    assert GEN.main([], doc=doc) == 0
    text = doc.read_text()
    assert text.startswith(f"{head}Added prose.\n\n{GEN.BEGIN}\n\n{GEN.table()}\n{GEN.END}")
    assert text.endswith(f"{tail}\nMore prose.\n")


@pytest.mark.parametrize("broken", ["no markers at all\n", f"{GEN.END}\n{GEN.BEGIN}\n", f"{GEN.BEGIN}{GEN.END}\n"])
def test_a_doc_without_a_well_formed_marker_pair_is_refused(tmp_path: Path, broken: str) -> None:
    doc = tmp_path / "configuration.md"
    doc.write_text(broken)
    assert GEN.main(["--check"], doc=doc) == 1
    assert GEN.main([], doc=doc) == 1
    assert doc.read_text() == broken


def test_a_pipe_in_a_doc_does_not_split_its_cell() -> None:
    assert GEN._cell("a | b\n  c") == "a \\| b c"
