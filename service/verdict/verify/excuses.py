"""Where an excuse may apply: the helpers that keep every leniency on the error it excuses. Pure.

A checker turns a parser failure into "unverifiable" only for a reason it can point at: a placeholder, a template
marker, a prompt, grammar a newer interpreter accepts, a line in another language. Applied to the whole block, such an
excuse hides real errors elsewhere (a `<NULL>` inside a string literal excused an unclosed bracket ten lines down;
measured on a labelled corpus, that cost 6.5 points of Python recall and 13 of YAML). So every excuse here looks only
at the text the parser blamed, with string literals and comments blanked out, and, when the parser gave a column, only
at what lies on or next to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "NEAR_COLUMNS",
    "OtherLanguage",
    "blank_python_strings",
    "blank_quoted",
    "near",
    "other_language",
]

NEAR_COLUMNS = 2
"""How far (in columns) from the parser's error position the thing that excuses it may start or end."""

_PYTHON_STRING = re.compile(r"""'(?:[^'\\\n]|\\.)*'?|"(?:[^"\\\n]|\\.)*"?|#[^\n]*""")
_QUOTED = re.compile(r"""'(?:[^'\n]|'')*'?|"(?:[^"\\\n]|\\.)*"?""")


def _blank(match: re.Match[str]) -> str:
    text = match.group(0)
    if text.startswith("#"):
        return " " * len(text)
    return text[0] + " " * (len(text) - 2) + text[-1] if len(text) >= 2 else text


def blank_python_strings(line: str) -> str:
    """The line with the contents of its string literals and its comment replaced by spaces (quotes and prefixes
    kept), so columns still line up. One line at a time: a line inside a triple-quoted string is not recognised as
    such, but the parser never blames a line in the middle of a string."""
    return _PYTHON_STRING.sub(_blank, line) if ("'" in line or '"' in line or "#" in line) else line


def _blank_strings_keep_comment(line: str) -> tuple[str, int]:
    """The line with string contents blanked (its comment kept), and where its comment starts (its length: none)."""
    comment = len(line)
    pieces = []
    position = 0
    for match in _PYTHON_STRING.finditer(line):
        pieces.append(line[position : match.start()])
        if match.group(0).startswith("#"):
            comment = min(comment, match.start())
            pieces.append(match.group(0))
        else:
            pieces.append(_blank(match))
        position = match.end()
    pieces.append(line[position:])
    return "".join(pieces), comment


def blank_quoted(line: str) -> str:
    """The line with the contents of its quoted scalars or words (YAML `'...'` / `"..."`, shell quotes) blanked."""
    return _QUOTED.sub(_blank, line) if ("'" in line or '"' in line) else line


def near(start: int, end: int, column: int) -> bool:
    """Whether a span [start, end) of a line is on or next to a zero-based error `column` (-1: no column known)."""
    return column < 0 or start - NEAR_COLUMNS <= column <= end + NEAR_COLUMNS


@dataclass(frozen=True)
class OtherLanguage:
    """An unmistakable marker of another language on the line the parser blamed."""

    language: str
    marker: str


_PYTHON_HOSTED: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("Cython", re.compile(r"^\s*(?:cdef|cpdef|ctypedef)\s+\w|^\s*(?:from\s+[\w.]+\s+)?cimport\s+\w")),
    (
        "JavaScript",
        re.compile(
            r"^\s*(?:export\s+)?(?:const|let|var)\s+[\w$]+\s*(?::\s*[\w$<>\[\]| ]+)?=(?!=)"
            r"|^\s*(?:export\s+)?(?:async\s+)?function\s*\*?\s*[\w$]*\s*\([^)]*\)\s*\{"
            r"|\)\s*=>|[\w$]\s*=>\s*[{(\w]|\bconsole\.(?:log|error|warn)\s*\("
            r"|^\s*import\s+(?:[\w$]+|\{[^}]*\}|\*\s+as\s+\w+)\s+from\s+['\"]"
        ),
    ),
    (
        "C-family",
        re.compile(
            r"^\s*#\s*include\s*[<\"]|^\s*(?:public|private|protected)\s+(?:static\s+)?[\w<>\[\]]+\s+\w+\s*[({=;]"
            r"|^\s*(?:unsigned\s+)?(?:int|void|char|float|double|bool|long)\s+\**\w+\s*(?:\(|=|;|\[)"
            r"|^\s*(?:fn|func)\s+\w+\s*[(<]|^\s*let\s+mut\s+\w|^\s*using\s+(?:namespace\s+)?[\w.:]+\s*;"
            r"|^\s*package\s+[\w.]+\s*;"
        ),
    ),
    (
        "shell",
        re.compile(
            r"^\s*(?:sudo\s+)?(?:pip3?|apt|apt-get|npm|yarn|brew|conda|git|docker|cd|export|curl|wget|mkdir|chmod)"
            r"\s+[-\w./~$]"
        ),
    ),
)

_SHELL_HOSTED: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "Python",
        re.compile(
            r"^\s*(?:async\s+)?def\s+\w+\s*\(.*\)\s*(?:->\s*[^:]+)?:\s*(?:#.*)?$|^\s*class\s+\w+\s*(?:\(.*\))?:\s*$"
            r"|^\s*from\s+[\w.]+\s+import\s+\w|^\s*print\((?:f?['\"]|\w)|^\s*(?:if|elif|while|for)\s[^;]*:\s*$"
        ),
    ),
    (
        "PowerShell",
        re.compile(
            r"\b(?:Get|Set|New|Remove|Write|Invoke|Start|Stop|Test|Add|Out|Select|Where|ForEach)-[A-Z][A-Za-z]+"
            r"|\$env:\w|^\s*foreach\s*\(\s*\$|^\s*param\s*\(\s*(?:\[|\$)"
        ),
    ),
    ("JavaScript", re.compile(r"^\s*(?:const|let|var)\s+[\w$]+\s*=.*;\s*$|\)\s*=>\s*\{|\bconsole\.log\s*\(")),
)


def other_language(line: str, hosted_in: str) -> OtherLanguage | None:
    """The other language `line` is unmistakably written in, for a block tagged `hosted_in` ("python" or "shell")."""
    table = _PYTHON_HOSTED if hosted_in == "python" else _SHELL_HOSTED
    if hosted_in == "python":
        masked, comment = _blank_strings_keep_comment(line)
    else:
        masked, comment = blank_quoted(line), len(line)
    indent = len(masked) - len(masked.lstrip())
    for language, pattern in table:
        match = pattern.search(masked)
        if match is not None and (match.start() < comment or match.start() <= indent):
            return OtherLanguage(language, line[match.start() : match.end()].strip()[:40])
    return None
