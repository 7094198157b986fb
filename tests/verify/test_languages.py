"""Language records: aliases, labels, and a completeness test that every record is whole and reachable."""

from __future__ import annotations

import dataclasses

import pytest

from verdict.verify.languages import (
    LANGUAGES,
    MAX_NAME_CHARS,
    SUBPROCESS_TOOLS,
    LanguageRecord,
    Languages,
    Runs,
    metric_label,
    record_problems,
    resolve_language,
)
from verdict.verify.model import CodeCheck, Verdict
from verdict.verify.offline import verify_offline
from verdict.verify.verifier import Verifier


@pytest.mark.parametrize(
    ("word", "name", "runs", "label"),
    [
        ("python", "python", Runs.IN_PROCESS, "python"),
        ("Python3", "python", Runs.IN_PROCESS, "python"),
        ("pycon", "python", Runs.IN_PROCESS, "python"),
        ("{.python", "python", Runs.IN_PROCESS, "python"),
        ("{python}", "python", Runs.IN_PROCESS, "python"),
        ("jsonl", "json", Runs.IN_PROCESS, "json"),
        ("jsonc", "jsonc", Runs.NOT_CHECKED, "json"),
        ("json5", "json5", Runs.NOT_CHECKED, "json"),
        ("YML", "yaml", Runs.IN_PROCESS, "yaml"),
        ("zsh", "shell", Runs.SUBPROCESS, "shell"),
        ("console", "console", Runs.NOT_CHECKED, "shell"),
        ("terminal", "terminal", Runs.NOT_CHECKED, "shell"),
        ("diff", "diff", Runs.NOT_CHECKED, "other"),
        ("js", "javascript", Runs.IN_PROCESS, "javascript"),
        ("node", "javascript", Runs.IN_PROCESS, "javascript"),
        ("mjs", "javascript", Runs.IN_PROCESS, "javascript"),
        ("jsx", "javascript", Runs.IN_PROCESS, "javascript"),
        ("tsx", "typescript", Runs.IN_PROCESS, "typescript"),
        ("C++", "cpp", Runs.IN_PROCESS, "cpp"),
        ("c#", "csharp", Runs.IN_PROCESS, "csharp"),
        ("golang", "go", Runs.IN_PROCESS, "go"),
        ("rs", "rust", Runs.IN_PROCESS, "rust"),
        ("svg", "xml", Runs.IN_PROCESS, "xml"),
        ("toml", "toml", Runs.IN_PROCESS, "toml"),
        ("html", "html", Runs.IN_PROCESS, "html"),
        ("sql", "sql", Runs.IN_PROCESS, "sql"),
        ("PostgreSQL", "postgresql", Runs.IN_PROCESS, "sql"),
        ("psql", "postgresql", Runs.IN_PROCESS, "sql"),
        ("mssql", "tsql", Runs.IN_PROCESS, "sql"),
        ("sqlite3", "sqlite", Runs.IN_PROCESS, "sql"),
        ("dockerfile", "dockerfile", Runs.NOT_CHECKED, "dockerfile"),
        ("python2", "python2", Runs.NOT_CHECKED, "other"),
        ("", "?", Runs.NOT_CHECKED, "none"),
    ],
)
def test_aliases(word: str, name: str, runs: Runs, label: str) -> None:
    language = resolve_language(word)
    assert (language.name, language.runs, language.label) == (name, runs, label)


def test_labels_are_bounded_by_the_records() -> None:
    words = ["python", "json", "js", "bash", "console", "jsonc", "diff", "", "x" * 1000, "∂", "?", "sql"]
    assert {resolve_language(word).label for word in words} <= set(LANGUAGES.metric_labels)
    assert set(LANGUAGES.metric_labels) == {record.label for record in LANGUAGES.records} | {"other", "none"}


def test_a_block_check_language_maps_back_to_its_label() -> None:
    names = ("python", "shell", "console", "jsonc", "javascript", "rust", "?", "klingon")
    assert [metric_label(name) for name in names] == [
        "python",
        "shell",
        "shell",
        "json",
        "javascript",
        "rust",
        "none",
        "other",
    ]


def test_long_names_are_cut() -> None:
    name = resolve_language("a" * 10_000).name
    assert len(name) == MAX_NAME_CHARS
    assert name.endswith("…")


class TestRecordCompleteness:
    """Every record is whole, and every one is reachable through the verifier by each of its names."""

    @pytest.mark.parametrize("record", LANGUAGES.records, ids=lambda record: record.name)
    def test_every_record_is_complete(self, record: LanguageRecord) -> None:
        assert record_problems(record) == []

    @pytest.mark.parametrize("record", LANGUAGES.records, ids=lambda record: record.name)
    def test_every_alias_reaches_its_record(self, record: LanguageRecord) -> None:
        for word in (record.name, *record.aliases):
            assert resolve_language(word).record is record

    @pytest.mark.parametrize("record", list(LANGUAGES.checked()), ids=lambda record: record.name)
    def test_every_checked_record_is_reached_by_a_verification(self, record: LanguageRecord) -> None:
        checks = verify_offline(f"```{record.name}\nx\n```\n").checks
        assert checks[0].language == record.name
        assert "no structural check" not in checks[0].detail
        if record.runs is Runs.SUBPROCESS:
            assert record.tool in Verifier.SUBPROCESS_CHECKS
        else:
            assert "no in-process checker" not in checks[0].detail

    def test_every_subprocess_tool_has_a_check_in_the_verifier(self) -> None:
        assert set(Verifier.SUBPROCESS_CHECKS) == SUBPROCESS_TOOLS

    def test_an_incomplete_record_is_refused(self) -> None:
        """The failure this test exists for: a record missing its checker, its description and a good label."""
        toy = LanguageRecord("toy", ("toys",), "Toy", Runs.IN_PROCESS)
        assert record_problems(toy) == [
            "label must be a non-empty lower-case word",
            "an in-process language needs a checker",
            "a checked language must say what its check sees and is blind to",
        ]
        with pytest.raises(ValueError, match="language 'toy' is incomplete"):
            Languages((*LANGUAGES.records, toy))

    def test_unchecked_and_subprocess_records_need_their_pieces(self) -> None:
        assert record_problems(LanguageRecord("a", (), "a", Runs.NOT_CHECKED)) == [
            "an unchecked language must say why (unchecked)"
        ]
        assert "a subprocess language needs a tool" in record_problems(LanguageRecord("a", (), "a", Runs.SUBPROCESS))[0]

    def test_an_alias_cannot_belong_to_two_records(self) -> None:
        thief = dataclasses.replace(LANGUAGES.record("go"), name="gopher", aliases=("golang",))
        with pytest.raises(ValueError, match="alias 'golang' belongs to 'go' and 'gopher'"):
            Languages((*LANGUAGES.records, thief))


def _check_toy(code: str) -> CodeCheck:
    """A toy language: every line must end with `!`."""
    for number, line in enumerate(code.splitlines(), 1):
        if line and not line.endswith("!"):
            return CodeCheck(Verdict.MALFORMED, "a toy line must end with '!'", number)
    return CodeCheck(Verdict.OK)


def test_adding_a_language_is_one_record() -> None:
    """What docs/architecture.md "A language" (under "How to add") says: one record, and the verifier checks it."""
    toy = LanguageRecord(
        "toy",
        ("toys",),
        "toy",
        Runs.IN_PROCESS,
        _check_toy,
        sees="lines that do not end with '!'",
        blind_to="everything else",
    )
    languages = Languages((*LANGUAGES.records, toy))
    assert "toy" in languages.metric_labels
    assert verify_offline("```toys\nhello!\n```\n", languages=languages).verdict is Verdict.OK
    broken = verify_offline("Look:\n```toy\nhello!\nworld\n```\n", languages=languages)
    assert broken.verdict is Verdict.MALFORMED
    assert broken.checks[0].detail == "line 4: a toy line must end with '!'"
    assert verify_offline("```toy\nworld\n```\n").verdict is Verdict.UNVERIFIABLE  # not in the server's records
