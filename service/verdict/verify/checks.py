"""The pure checkers behind one door, so a block can be checked on the event loop or in a pool worker alike.

`check_code` is a module-level function of plain strings, so a process pool can pickle it by name; this module imports
nothing heavier than PyYAML, so a fresh worker starts quickly.
"""

from __future__ import annotations

from collections.abc import Callable

from verdict.verify.json_syntax import check_json
from verdict.verify.languages import Checker
from verdict.verify.model import CodeCheck, Verdict
from verdict.verify.python_syntax import check_python
from verdict.verify.yaml_syntax import check_yaml

__all__ = ["IN_PROCESS_CHECKERS", "check_code"]

IN_PROCESS_CHECKERS: dict[str, Callable[[str], CodeCheck]] = {
    Checker.PYTHON: check_python,
    Checker.JSON: check_json,
    Checker.YAML: check_yaml,
}
"""The languages Python itself can parse; shell needs `bash -n`, which the Verifier runs."""


def check_code(checker: str, code: str) -> CodeCheck:
    """The verdict of `checker` ("python", "json" or "yaml") on `code`. Never raises: a checker bug is unverifiable."""
    check = IN_PROCESS_CHECKERS.get(checker)
    if check is None:
        return CodeCheck(Verdict.UNVERIFIABLE, f"no in-process checker for {checker}")
    try:
        return check(code)
    except Exception as error:  # a checker bug must not charge the model
        return CodeCheck(Verdict.UNVERIFIABLE, f"the {checker} checker failed: {type(error).__name__}: {error}")
