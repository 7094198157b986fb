"""Fenced code blocks, found the way a CommonMark renderer finds them, in one linear pass.

Why not a regular expression: the reference's non-greedy ```` ```(.*?)``` ```` misreads `~~~` fences, longer closing
fences, indented fences and a 4-backtick fence holding ```` ``` ```` (guardrails-ai/guardrails#1549), and a
line-anchored fence regex is quadratic on an unclosed fence whose body holds opener-like lines (200 KB took 23 s). This
scanner looks at each line once: a C-speed search finds the lines that start (after up to three columns of indent)
with three backticks or tildes, and only those lines are examined in Python.

The rules, as markdown-it-py (the oracle the tests compare against) applies them at the top level of a document:

- an opening fence is at least three backticks or three tildes, indented at most three columns (a tab counts to the
  next multiple of four, so a tab-indented line is never a fence); the rest of its line is the info string, and a
  backtick fence's info string may not contain a backtick (that line is inline code, not a fence);
- the closing fence uses the same character, is at least as long, is indented at most three columns and is followed
  by nothing but spaces or tabs; anything else inside the block is content;
- an unclosed fence runs to the end of the document (that is the truncation signal);
- each content line loses up to as many columns of indent as the opening fence had.

Lines end at LF, CRLF or a lone CR; no other character ends a line. Containers are not modelled: a fence inside a
blockquote (`> ```) is not seen at all, and a fence inside a list item is seen only when its lines are indented at most
three columns. docs/verification.md explains that choice and tests pin what happens.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["FenceScan", "FencedBlock", "scan_fences", "scan_fences_bounded"]

_CANDIDATE = re.compile(r"^([ \t]*+)(`{3,}|~{3,})([^\n]*)", re.MULTILINE)
_TAB_STOP = 4
_MAX_FENCE_INDENT = 3


@dataclass(frozen=True, slots=True)
class FencedBlock:
    """One fenced code block.

    `body` holds the content lines, each ending in a line feed except a last line at the very end of an unclosed
    document; it is empty when the fence holds no lines. `line` is the one-based line of the opening fence, so body
    line k is response line `line + k`.
    """

    info: str
    language: str
    body: str
    closed: bool
    line: int
    fence: str
    indent: int

    @property
    def body_lines(self) -> int:
        """How many lines the body has."""
        if not self.body:
            return 0
        return self.body.count("\n") + (0 if self.body.endswith("\n") else 1)


@dataclass(frozen=True, slots=True)
class FenceScan:
    """The blocks of a text, with at most `limit` of them built: a 4 MB text can hold half a million fences.

    `blocks` are the first blocks (all of them without a limit); `total` counts every block; `skipped_line` is the
    opening line of the first block past the limit (0 when none was skipped); `unclosed_tail` is the last block when
    it lies past the limit and is unterminated, because that one still decides the verdict.
    """

    blocks: tuple[FencedBlock, ...]
    total: int
    skipped_line: int = 0
    unclosed_tail: FencedBlock | None = None


def scan_fences(text: str) -> list[FencedBlock]:
    """Every fenced block of `text`, in document order. Linear in the length of the text whatever it holds."""
    return list(scan_fences_bounded(text, None).blocks)


def scan_fences_bounded(text: str, limit: int | None) -> FenceScan:
    """Like `scan_fences`, but builds only the first `limit` blocks (and an unterminated last one); still linear."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = _LineCounter(text)
    blocks: list[FencedBlock] = []
    total = 0
    skipped_line = 0
    marker = ""  # the open fence's character; "" when no fence is open
    length = indent = opened_at = body_start = 0
    info = ""
    for match in _CANDIDATE.finditer(text):
        leading, run, rest = match.groups()
        columns = _columns(leading) if leading else 0
        if columns > _MAX_FENCE_INDENT:
            continue
        char = run[0]
        if not marker:
            if char == "`" and "`" in rest:
                continue
            marker, length, indent, opened_at, info = char, len(run), columns, match.start(), rest
            body_start = min(match.end() + 1, len(text))
        elif char == marker and len(run) >= length and not rest.strip(" \t"):
            if limit is None or total < limit:
                body = text[body_start : match.start()]
                blocks.append(_block(info, body, True, lines.line_of(opened_at), marker * length, indent))
            elif not skipped_line:
                skipped_line = lines.line_of(opened_at)
            total += 1
            marker = ""
    tail = None
    if marker:
        tail = _block(info, text[body_start:], False, lines.line_of(opened_at), marker * length, indent)
        if limit is None or total < limit:
            blocks.append(tail)
            tail = None
        elif not skipped_line:
            skipped_line = tail.line
        total += 1
    return FenceScan(tuple(blocks), total, skipped_line, tail)


class _LineCounter:
    """One-based line numbers of increasing positions, counting each newline once in total."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._position = 0
        self._line = 1

    def line_of(self, position: int) -> int:
        self._line += self._text.count("\n", self._position, position)
        self._position = position
        return self._line


def _block(info: str, body: str, closed: bool, line: int, fence: str, indent: int) -> FencedBlock:
    if indent and body:
        body = "\n".join(_strip_indent(part, indent) for part in body.split("\n"))
    info = info.strip()
    language = info.split(maxsplit=1)[0] if info else ""
    return FencedBlock(info, language, body, closed, line, fence, indent)


def _columns(leading: str) -> int:
    """The width of leading spaces and tabs, a tab advancing to the next multiple of four."""
    column = 0
    for char in leading:
        column = column + _TAB_STOP - column % _TAB_STOP if char == "\t" else column + 1
    return column


def _strip_indent(line: str, indent: int) -> str:
    """Remove up to `indent` columns of leading spaces and tabs; a tab that overshoots leaves its extra columns."""
    column = 0
    position = 0
    while position < len(line) and column < indent and line[position] in " \t":
        column = column + _TAB_STOP - column % _TAB_STOP if line[position] == "\t" else column + 1
        position += 1
    return " " * (column - indent) + line[position:] if column > indent else line[position:]
