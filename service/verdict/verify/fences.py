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

Lines end at LF, CRLF or a lone CR; no other character ends a line.

Containers (list items at any depth, block quotes) are read by markdown-it-py's block parser, the same oracle the tests
compare against, but only when the text needs it: some line opens a container and some fence line is not at column 0
(indented, or after a `>` or a list marker). Every other text gets the linear scanner above, which reads it exactly as
markdown-it-py would. markdown-it-py's block parser is linear too (measured in bench/bench_verify.py, also on deeply
nested quotes and lists: it stops descending at 20 levels), but it builds a token per container line, up to ~200
bytes of memory per byte of hostile input, so a text over `CONTAINER_SCAN_MAX_CHARS` falls back to the top-level
scanner (fences in containers then read as before: indented ones are not seen, never a false failure).

A fence markdown-it-py closes because its list item or block quote ended (`- ```python` ... then an unindented line)
is not closed and not cut either: `FencedBlock.container_end` says so, and the rules call it sloppy Markdown.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock

from verdict.records import record

__all__ = [
    "CONTAINER_SCAN_MAX_CHARS",
    "FenceScan",
    "FencedBlock",
    "needs_containers",
    "scan_fences",
    "scan_fences_bounded",
]

CONTAINER_SCAN_MAX_CHARS = 256 * 1024
"""Texts up to this size that hold containers are read by markdown-it-py; larger ones by the top-level scanner alone.
markdown-it-py builds a token per list item and quote (measured: 300,000 tokens and 114 MB for 600 KB of `- ``` `
lines), so this bounds its memory at a few tens of megabytes; real answers are far smaller."""

_CANDIDATE = re.compile(r"^([ \t]*+)(`{3,}|~{3,})([^\n]*)", re.MULTILINE)
_CONTAINER_START = re.compile(r"^ {0,3}(?:>|(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$))", re.MULTILINE)
"""A line that opens a block quote or a list item at the top level (where every container starts)."""
_NESTED_FENCE = re.compile(r"^(?:[ \t>]|[-+*][ \t]|\d{1,9}[.)][ \t])++(?:`{3}|~{3})", re.MULTILINE)
"""A fence-like line not at column 0: indented, or after a quote marker or list markers. A fence at column 0 ends any
open list item or quote, so without such a line the top-level scanner and markdown-it-py read a text the same way."""
_MARKDOWN = MarkdownIt("commonmark", {"html": False})
"""CommonMark block rules; HTML blocks off, as in the top-level scanner (a fence between `<div>` lines is seen)."""
_TAB_STOP = 4
_MAX_FENCE_INDENT = 3


@record
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
    container_end: bool = False
    """Not closed, yet not running to the end of the text either: the list item or block quote holding the fence ended
    first (CommonMark closes the fence there), which is what a closer indented less than its opener does."""

    @property
    def body_lines(self) -> int:
        """How many lines the body has."""
        if not self.body:
            return 0
        return self.body.count("\n") + (0 if self.body.endswith("\n") else 1)


@record
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


def needs_containers(text: str) -> bool:
    """Whether a list item or block quote may change which fences `text` has (then markdown-it-py reads it)."""
    return _NESTED_FENCE.search(text) is not None and _CONTAINER_START.search(text) is not None


def scan_fences_bounded(text: str, limit: int | None) -> FenceScan:
    """Like `scan_fences`, but builds only the first `limit` blocks (and an unterminated last one); still linear."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if len(text) <= CONTAINER_SCAN_MAX_CHARS and needs_containers(text):
        return _bounded(_container_blocks(text), limit)
    return _top_level_scan(text, limit)


def _container_blocks(text: str) -> list[FencedBlock]:
    """Every fence markdown-it-py's CommonMark block parser finds, containers included, as FencedBlocks.

    Only the block rules run (no inline parsing). A fence token's `map` spans its lines: a closed fence's span is its
    content plus both fence lines; an unclosed one ran to the end of the text or to the end of its container.
    """
    state = StateBlock(text, _MARKDOWN, {}, [])
    _MARKDOWN.block.tokenize(state, 0, state.lineMax)
    blocks = []
    for token in state.tokens:
        if token.type != "fence" or token.map is None:
            continue
        start, end = token.map
        content = token.content
        content_lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
        closed = content_lines == end - start - 2
        info = token.info.strip()
        blocks.append(
            FencedBlock(
                info,
                info.split(maxsplit=1)[0] if info else "",
                content,
                closed,
                start + 1,
                token.markup,
                0,
                container_end=not closed and end < state.lineMax,
            )
        )
    return blocks


def _bounded(blocks: list[FencedBlock], limit: int | None) -> FenceScan:
    if limit is None or len(blocks) <= limit:
        return FenceScan(tuple(blocks), len(blocks))
    last = blocks[-1]
    tail = last if not last.closed and not last.container_end else None
    return FenceScan(tuple(blocks[:limit]), len(blocks), blocks[limit].line, tail)


def _top_level_scan(text: str, limit: int | None) -> FenceScan:
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
