"""Which checker a fenced block gets, from the first word of its info string.

The table follows docs/verification.md and reference §6.2. Unknown languages are unverifiable, never guessed at: a
checker applied to the wrong language is a false alarm, and "we could not check this" is not a failure.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["MAX_NAME_CHARS", "METRIC_LABELS", "Checker", "Language", "metric_label", "resolve_language"]


class Checker(StrEnum):
    """What happens to a block of a language."""

    PYTHON = "python"
    JSON = "json"
    YAML = "yaml"
    SHELL = "shell"
    TRANSCRIPT = "transcript"
    """A console session: commands mixed with their output (console, shell-session, terminal)."""
    NOT_STRICT_JSON = "not_strict_json"
    """jsonc / json5: comments and trailing commas are legal there, so strict JSON would be a false alarm."""
    SKIP = "skip"
    """diff / text: nothing structural to check."""
    UNKNOWN = "unknown"
    NONE = "none"
    """The fence had no info string."""


MAX_NAME_CHARS = 40
"""Longer info-string words are cut: a response should not echo a megabyte-long "language" back."""

METRIC_LABELS = ("python", "json", "yaml", "shell", "other", "none")
"""Every value the `lang` label of verdict_block_checks_total can take."""


@dataclass(frozen=True)
class Language:
    """A resolved info-string word: the name a BlockCheck reports, the checker, and the bounded metric label."""

    name: str
    checker: Checker
    label: str


_ALIASES: dict[str, tuple[str, Checker]] = {
    **dict.fromkeys(("python", "py", "python3", "py3", "ipython"), ("python", Checker.PYTHON)),
    # A doctest or REPL session: the prompts are stripped and the input lines checked as Python.
    **dict.fromkeys(("pycon", "python-repl"), ("python", Checker.PYTHON)),
    **dict.fromkeys(("json", "jsonl", "ndjson", "jsonlines"), ("json", Checker.JSON)),
    **dict.fromkeys(("yaml", "yml"), ("yaml", Checker.YAML)),
    **dict.fromkeys(("bash", "sh", "shell", "zsh"), ("shell", Checker.SHELL)),
}
_FAMILIES: dict[str, tuple[Checker, str]] = {
    **dict.fromkeys(("console", "shell-session", "terminal"), (Checker.TRANSCRIPT, "shell")),
    **dict.fromkeys(("jsonc", "json5"), (Checker.NOT_STRICT_JSON, "json")),
    **dict.fromkeys(("diff", "text"), (Checker.SKIP, "other")),
}


def resolve_language(word: str) -> Language:
    """The language of an info-string word (`Python`, `py3`, `{.python}`, `{python}` all resolve to python)."""
    name = word.strip().strip("{}").lstrip(".").lower()
    if not name:
        return Language("?", Checker.NONE, "none")
    if name in _ALIASES:
        canonical, checker = _ALIASES[name]
        return Language(canonical, checker, canonical)
    if name in _FAMILIES:
        checker, label = _FAMILIES[name]
        return Language(name, checker, label)
    if len(name) > MAX_NAME_CHARS:
        name = name[: MAX_NAME_CHARS - 1] + "…"
    return Language(name, Checker.UNKNOWN, "other")


def metric_label(name: str) -> str:
    """The bounded `lang` label for a BlockCheck's language name ("?" is a fence without an info string)."""
    return "none" if name == "?" else resolve_language(name).label
