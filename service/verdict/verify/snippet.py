"""Code as a parser sees it once prompts are stripped or lines dropped, still able to name the line it came from.

Checkers only ever remove lines or cut a prefix off a line, never join or split lines, so each line of a snippet has
exactly one line of the block body it came from, and a parser's "line 7" can be reported as the response's line.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Snippet"]


@dataclass(frozen=True)
class Snippet:
    """`text` for the parser; `origin[i]` is the one-based body line of the snippet's line i + 1 (None: identity)."""

    text: str
    origin: tuple[int, ...] | None = None
    note: str = ""
    """What was done to the body, for details: "doctest prompts removed", "" when nothing was."""
    stubs: tuple[int, ...] = ()
    """Snippet lines (one-based) of headers whose comment-only body was filled in so the parser could go on."""

    @classmethod
    def from_lines(cls, lines: Iterable[tuple[int, str]], note: str) -> Snippet:
        """A snippet of (body line, text) pairs, in order."""
        kept = list(lines)
        return cls("".join(text + "\n" for _, text in kept), tuple(line for line, _ in kept), note)

    @property
    def line_count(self) -> int:
        if self.origin is not None:
            return len(self.origin)
        return self.text.count("\n") + (0 if self.text.endswith("\n") or not self.text else 1)

    def body_line(self, line: int | None) -> int:
        """The body line a parser's one-based `line` came from; past the end means the last line; 0 stays 0."""
        if not line or line < 1:
            return 0
        count = self.line_count
        if count == 0:
            return 0
        line = min(line, count)
        return self.origin[line - 1] if self.origin is not None else line

    def line_text(self, line: int | None) -> str:
        """The text of the snippet's one-based `line`, or "" when there is no such line."""
        if not line or line < 1:
            return ""
        start = 0
        for _ in range(line - 1):
            start = self.text.find("\n", start) + 1
            if start == 0:
                return ""
        end = self.text.find("\n", start)
        return self.text[start:] if end == -1 else self.text[start:end]
