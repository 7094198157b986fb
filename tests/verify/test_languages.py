"""The alias table: every info-string word routes to one checker and one bounded metric label."""

from __future__ import annotations

import pytest

from verdict.verify.languages import MAX_NAME_CHARS, METRIC_LABELS, Checker, metric_label, resolve_language


@pytest.mark.parametrize(
    ("word", "name", "checker", "label"),
    [
        ("python", "python", Checker.PYTHON, "python"),
        ("py", "python", Checker.PYTHON, "python"),
        ("Python3", "python", Checker.PYTHON, "python"),
        ("py3", "python", Checker.PYTHON, "python"),
        ("ipython", "python", Checker.PYTHON, "python"),
        ("pycon", "python", Checker.PYTHON, "python"),
        ("python-repl", "python", Checker.PYTHON, "python"),
        ("{.python", "python", Checker.PYTHON, "python"),
        ("{python}", "python", Checker.PYTHON, "python"),
        ("json", "json", Checker.JSON, "json"),
        ("jsonl", "json", Checker.JSON, "json"),
        ("jsonc", "jsonc", Checker.NOT_STRICT_JSON, "json"),
        ("json5", "json5", Checker.NOT_STRICT_JSON, "json"),
        ("yaml", "yaml", Checker.YAML, "yaml"),
        ("YML", "yaml", Checker.YAML, "yaml"),
        ("bash", "shell", Checker.SHELL, "shell"),
        ("sh", "shell", Checker.SHELL, "shell"),
        ("shell", "shell", Checker.SHELL, "shell"),
        ("zsh", "shell", Checker.SHELL, "shell"),
        ("console", "console", Checker.TRANSCRIPT, "shell"),
        ("shell-session", "shell-session", Checker.TRANSCRIPT, "shell"),
        ("terminal", "terminal", Checker.TRANSCRIPT, "shell"),
        ("diff", "diff", Checker.SKIP, "other"),
        ("text", "text", Checker.SKIP, "other"),
        ("rust", "rust", Checker.UNKNOWN, "other"),
        ("python2", "python2", Checker.UNKNOWN, "other"),
        ("", "?", Checker.NONE, "none"),
    ],
)
def test_aliases(word: str, name: str, checker: Checker, label: str) -> None:
    language = resolve_language(word)
    assert (language.name, language.checker, language.label) == (name, checker, label)


def test_labels_are_bounded() -> None:
    words = ["python", "json", "yaml", "bash", "console", "jsonc", "diff", "", "x" * 1000, "∂", "?"]
    assert {resolve_language(word).label for word in words} <= set(METRIC_LABELS)
    assert {metric_label(resolve_language(word).name) for word in words} == set(METRIC_LABELS)


def test_a_block_check_language_maps_back_to_its_label() -> None:
    assert [metric_label(name) for name in ("python", "shell", "console", "jsonc", "rust", "?")] == [
        "python",
        "shell",
        "shell",
        "json",
        "other",
        "none",
    ]


def test_long_names_are_cut() -> None:
    name = resolve_language("a" * 10_000).name
    assert len(name) == MAX_NAME_CHARS
    assert name.endswith("…")
