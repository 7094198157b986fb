"""The pure checkers behind one door, so a block can be checked on the event loop or in a pool worker alike.

`check_code` is a module-level function of plain strings, so a process pool can pickle it by name and a worker finds
the checker in its own copy of `LANGUAGES`; tree-sitter grammars load on first use, so a fresh worker starts quickly.
"""

from __future__ import annotations

from verdict.verify.languages import LANGUAGES, LanguageRecord, Runs
from verdict.verify.model import CodeCheck, Verdict

__all__ = ["check_code", "run_checker"]


def check_code(language: str, code: str) -> CodeCheck:
    """The verdict of the in-process checker of `language` (a record name) on `code`.

    Never raises: a checker bug is unverifiable, never the model's fault.
    """
    try:
        record = LANGUAGES.record(language)
    except KeyError:
        return CodeCheck(Verdict.UNVERIFIABLE, f"no in-process checker for {language}")
    return run_checker(record, code)


def run_checker(record: LanguageRecord, code: str) -> CodeCheck:
    """The verdict of `record`'s in-process checker on `code`; unverifiable for a record without one, or a bug."""
    if record.runs is not Runs.IN_PROCESS or record.checker is None:
        return CodeCheck(Verdict.UNVERIFIABLE, f"no in-process checker for {record.name}")
    try:
        return record.checker(code)
    except Exception as error:  # a checker bug must not charge the model
        return CodeCheck(Verdict.UNVERIFIABLE, f"the {record.name} checker failed: {type(error).__name__}: {error}")
